/* datasets/splits.h — split lists and the selection split.
 *
 * A split file lists one image id per line (surrounding blanks and a trailing CR are removed,
 * empty lines skipped).  An id that appears twice, or one holding '/' or blanks inside, is an
 * error naming the file and line.
 *
 * The selection split (docs/design.md, "Splits and the ledger"): from the user's VOC2012 segmentation
 * `train` list, the first `count` (1,000) ids in sha256 order — ids sorted by the lowercase hex
 * SHA-256 of the id's bytes (no newline), ties impossible in practice and broken by the id —
 * written in that order, one per line, to OUT_DIR/select<count>.txt, with its hash in
 * OUT_DIR/select<count>.txt.sha256 (`sha256sum` format).  Both are written atomically.  The rule
 * depends only on the ids, so every user with the same train list gets the same split.
 *
 *     char **ids; int n;
 *     if (split_read("datasets/splits/select1000.txt", &ids, &n) < 0) kc_die();
 *     split_free(ids, n);
 *     split_make_selection("VOC2012/ImageSets/Segmentation/train.txt", "datasets/splits", 1000, path);
 */
#ifndef KC_SPLITS_H
#define KC_SPLITS_H

#define SPLIT_SELECTION_COUNT 1000

int split_read(const char *path, char ***ids, int *n);
void split_free(char **ids, int n);
/* Writes the selection split; out_path (may be NULL) receives a new string with the file's path. */
int split_make_selection(const char *train_list, const char *out_dir, int count, char **out_path);
#endif
