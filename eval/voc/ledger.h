/* eval/voc/ledger.h — the ledger: one line per scoring run that opened labels (kc-score, kc-probe eval,
 * kc-saliency).
 *
 * A tab-separated text file (default ./ledger.tsv).  A new ledger starts with the header line
 *     #keycut-ledger 1<TAB>time<TAB>split<TAB>split_sha256<TAB>networks<TAB>settings<TAB>summary_sha256
 * and every run appends one line:
 *     2026-11-30T03:15:41Z  datasets/splits/select1000.txt  <sha256 of the split file>  dino  144  <sha256 of summary.csv>
 * (networks joined with ','; tabs and newlines in fields are replaced by blanks).  The line is
 * written with one append-mode write(), then fsynced, so concurrent runs never interleave; a run
 * that fails calls nothing here, so it appends nothing.
 *
 *     ledger_entry e = {.split = path, .networks = "dino", .n_settings = 144};
 *     strcpy(e.split_sha256, hex); strcpy(e.summary_sha256, hex2);
 *     if (ledger_append("ledger.tsv", &e) < 0) kc_die();          // fills e.time
 *     ledger_entry *all; int n; ledger_read("ledger.tsv", &all, &n); ledger_free(all, n);
 */
#ifndef KC_LEDGER_H
#define KC_LEDGER_H

#define LEDGER_MAGIC "#keycut-ledger 1"

typedef struct ledger_entry {
    char time[32];          /* UTC, YYYY-MM-DDTHH:MM:SSZ */
    char *split;            /* the split file as given */
    char split_sha256[65];  /* of the split file's bytes */
    char *networks;
    int n_settings;
    char summary_sha256[65];
} ledger_entry;

/* Appends e (e->time is set to now when empty). */
int ledger_append(const char *path, ledger_entry *e);
/* Reads every line; a missing file is an error (callers check kc_exists first). */
int ledger_read(const char *path, ledger_entry **entries, int *n);
void ledger_free(ledger_entry *entries, int n);

/* Per distinct split hash: how many runs opened it.  Arrays are new; *split[i] is the path of its
 * latest entry. */
int ledger_count(const ledger_entry *entries, int n, char ***split, char ***split_sha256, int **runs,
                 int *n_splits);
/* Prints to stdout how many runs opened labels and, per split, how many times (kc-table's last
 * lines); an absent ledger is said so, not an error. */
int ledger_print(const char *path);
#endif
