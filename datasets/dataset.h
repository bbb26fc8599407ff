/* datasets/dataset.h — image lists from dataset specs.
 *
 *   voc:ROOT:SPLIT     ROOT/ImageSets/Segmentation/SPLIT.txt, or when no segmentation split of that
 *                      name exists the detection split ROOT/ImageSets/Main/SPLIT.txt (VOC07/VOC12
 *                      trainval), ROOT/ImageSets/SPLIT.txt for SPLIT = Main/<name> or
 *                      Segmentation/<name> (VOC07 and VOC12 also have a *segmentation* trainval:
 *                      the detection trainval is voc:ROOT:Main/trainval), or SPLIT itself when it
 *                      is a path to a file; images
 *                      ROOT/JPEGImages/<id>.jpg; id = the split's line (first column)
 *   coco:ROOT:LIST     LIST names images one per line relative to ROOT (LOST/TokenCut's
 *                      coco_20k_filenames.txt: train2014/COCO_train2014_000000560992.jpg);
 *                      id = file name without extension; boxes: datasets/coco.h
 *   davis:ROOT:SPLIT   ROOT/ImageSets/2017/SPLIT.txt lists sequences; frames are
 *                      ROOT/JPEGImages/480p/<seq>/ (all .jpg, sorted); id = <seq>/<frame>
 *   dir:DIR            every .jpg .jpeg .png in DIR (not recursive), sorted by name; id = name
 *                      without extension
 *   list:FILE          one path per line (relative paths are relative to FILE's folder);
 *                      id = file name without extension, as written (links not resolved)
 *   saliency:ROOT      a saliency benchmark as its release lays it out, the layout found from
 *                      ROOT's folders (exactly one must be there):
 *                        ECSSD      images/<name>.jpg      ground_truth_mask/<stem>.png
 *                        DUTS-TE    DUTS-TE-Image/<name>.jpg DUTS-TE-Mask/<stem>.png
 *                        DUT-OMRON  DUT-OMRON-image/<name>.jpg pixelwiseGT-new-PNG/<stem>.png
 *                        TokenCut's re-packaging  img/<name>.jpg  gt/<stem>.png  (named after ROOT's folder)
 *                      every .jpg .jpeg .png of the image folder, sorted by file name as bytes
 *                      (TokenCut's sorted(os.listdir(img_dir))); id = file name without extension;
 *                      the ground truth of an image is <stem>.png in the mask folder
 *                      (dataset_saliency_gt; TokenCut replaces '.jpg' by '.png')
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
    char kind[12]; /* "voc", "davis", "coco", "dir", "list", "saliency" */
    char *root;    /* voc/davis/saliency root, dir folder, list file */
    char *split;   /* voc/davis split name or file, coco list file; saliency: the layout's name */
    char *gt_dir;  /* saliency: the ground-truth folder */
    int n;
    char **ids;
    char **paths;
} kc_dataset;
int dataset_open(kc_dataset *d, const char *spec);
void dataset_free(kc_dataset *d);
/* For davis: the sequence names in split order (n_seq), and each id's sequence index. */
/* The split file voc:ROOT:NAME reads: Segmentation/NAME.txt, else Main/NAME.txt when only that
 * exists (the Segmentation path when neither does). */
char *dataset_voc_split_path(const char *root, const char *split);
/* The split file voc:ROOT:SPLIT reads, by the rules above: SPLIT itself when it is a file, else
 * ROOT/ImageSets/SPLIT.txt for Main/<name> or Segmentation/<name>, else (a bare name)
 * dataset_voc_split_path.  A new string. */
char *dataset_voc_split_file(const char *root, const char *split);
/* The list: rules, for the --help of the stages that take a dataset. */
#define DATASET_LIST_RULES "list:FILE: one image path a line, relative to FILE's folder unless absolute;\n"
#define DATASET_LIST_RULES2 "an image's id is its file name without the extension\n"
/* saliency: the ground truth of image i, gt_dir/<stem of its file>.png (a new string). */
char *dataset_saliency_gt(const kc_dataset *d, int i);
int dataset_davis_sequences(const char *root, const char *split, char ***seqs, int *n_seq);
/* The lines of a text file (a list or split), blanks trimmed, empty lines and '#' comments
 * skipped; only the first token of each when first_token is set.  A file with a NUL byte is an
 * error naming it.  *lines: n strings, each and the array to be freed. */
int dataset_read_lines(const char *path, int first_token, char ***lines, int *n);
#endif
