/* datasets/davis_gt.h — the DAVIS-2017 folder layout: split lists, frame lists, label PNGs.
 *
 *   ROOT/ImageSets/2017/<split>.txt          one sequence name a line (blank lines skipped)
 *   ROOT/Annotations/480p/<seq>/<frame>.png  palette PNGs; the index is the object id (255 = void)
 *   ROOT/JPEGImages/480p/<seq>/<frame>.jpg   the frames
 *   results: DIR/<seq>/<frame>.png           palette (or gray) PNGs, the index is the object id
 *
 * Frame names are the file names without extension, sorted by strcmp (as the official tool's
 * np.sort(glob(...)) does).  An empty split list, a missing list, a sequence without frames are
 * errors naming the file or folder.
 *
 *     char **seqs; int n_seq;
 *     if (davis_read_split(root, "val", &seqs, &n_seq) < 0) kc_die();
 *     char **frames; int n;
 *     char *dir = davis_annotation_dir(root, seqs[0]);
 *     if (davis_list_frames(dir, ".png", &frames, &n) < 0) kc_die();
 *     davis_free_names(frames, n); free(dir);
 *     davis_free_names(seqs, n_seq);
 */
#ifndef KC_DAVIS_GT_H
#define KC_DAVIS_GT_H
#include <stdint.h>

/* Sequence names of ROOT/ImageSets/2017/<split>.txt (or of <split> itself when it names an
 * existing file).  Errors: missing file, no sequence in it. */
int davis_read_split(const char *root, const char *split, char ***seqs, int *n_seq);
/* Sorted names (extension stripped) of the files in dir ending with ext (".png", ".jpg").
 * Errors: dir missing or holding no such file. */
int davis_list_frames(const char *dir, const char *ext, char ***names, int *n);
void davis_free_names(char **names, int n);
/* New strings: ROOT/Annotations/480p/<seq>, ROOT/JPEGImages/480p/<seq>. */
char *davis_annotation_dir(const char *root, const char *seq);
char *davis_image_dir(const char *root, const char *seq);
/* A label PNG's indices (h, w) uint8, read by image_read_png_index. */
int davis_read_labels(const char *path, int *w, int *h, uint8_t **labels);
#endif
