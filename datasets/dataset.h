/* datasets/dataset.h — image lists from dataset specs.
 *
 *   voc:ROOT:SPLIT     ROOT/ImageSets/Segmentation/SPLIT.txt (or SPLIT itself when it is a path to a
 *                      file), images ROOT/JPEGImages/<id>.jpg; id = the split's line
 *   davis:ROOT:SPLIT   ROOT/ImageSets/2017/SPLIT.txt lists sequences; frames are
 *                      ROOT/JPEGImages/480p/<seq>/ (all .jpg, sorted); id = <seq>/<frame>
 *   dir:DIR            every .jpg .jpeg .png in DIR (not recursive), sorted by name; id = name
 *                      without extension
 *   list:FILE          one path per line (relative paths are relative to FILE's folder);
 *                      id = file name without extension, as written (links not resolved)
 * Two images with the same id are an error naming both; an empty dataset is an error.
 *
 *     kc_dataset d;
 *     if (dataset_open(&d, "voc:/data/VOC2012:val") < 0) kc_die();
 *     for (int i = 0; i < d.n; i++) use(d.ids[i], d.paths[i]);
 *     dataset_free(&d);
 */
#ifndef KC_DATASET_H
#define KC_DATASET_H
typedef struct kc_dataset {
    char *spec;
    char kind[8];  /* "voc", "davis", "dir", "list" */
    char *root;    /* voc/davis root, dir folder, list file */
    char *split;   /* voc/davis split name or file */
    int n;
    char **ids;
    char **paths;
} kc_dataset;
int dataset_open(kc_dataset *d, const char *spec);
void dataset_free(kc_dataset *d);
/* For davis: the sequence names in split order (n_seq), and each id's sequence index. */
int dataset_davis_sequences(const char *root, const char *split, char ***seqs, int *n_seq);
#endif
