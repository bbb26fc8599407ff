/* eval/report/report_files.h — which files of the report folder are kc-report's (eval/report/report.h): the
 * record of a run, and the removal of what an earlier run wrote and this one does not.
 *
 * Incremental equals clean: after a successful run, OUT holds exactly what the same command writes
 * into an empty folder, however different the earlier runs' requests were (another setting, fewer
 * networks, no DAVIS, no figures).  A run records every file it writes or finds up to date (its
 * path under OUT); at its end it removes each file an earlier run wrote that this one did not, then
 * the folders that this left empty.  It removes no other file: it knows an earlier run's files from
 *
 *   OUT/.keycut-report-files          the files the last successful run wrote or kept, in byte
 *                                     order, written (atomically) at its end:
 *                                         keycut-report-files 1
 *                                         .pictures
 *                                         data/gt/0.js
 *                                         ...
 *   OUT/.keycut-report-files.journal  "keycut-report-files-journal 1", then each file this run
 *                                     writes, a line added before the file (or its .tmp) is made;
 *                                     removed at the end.  A run that stopped midway (killed,
 *                                     failed) leaves it, and the next run removes what it lists
 *                                     as it removes the list's files.
 *
 * A listed file's <name>.tmp (the temporary of a killed run) goes too.  A file of OUT that neither
 * lists (a user's notes, anything put there by hand) is never removed, nor a listed path that is
 * no longer a regular file or lies under a symbolic link.  A folder that holds files but neither
 * is refused (kc-report would overwrite them), unless it is a report of a kc-report from before
 * the list (its OUT/.pictures, no list): then the files of report.h's layout (index.html,
 * davis.html, report.js, report.css, .pictures, gallery-<name>.html, images/<id>.html,
 * photo/<name>.jpg, data/<dir>/<name>.js, davis/<net>/<seq>/<name>.jpg, figures/<name>.png and
 * .svg) are taken as an earlier run's.
 *
 * Includes report_types.h only: every module that writes a file (pictures, data, pages, DAVIS
 * frames) includes this one, never it them (eval/report/report_types.h).
 *
 *     KC_TRY(report_files_open(R));           // holding OUT/.keycut.lock, before any write
 *     char *path = report_out_path(R, rel);   // a file about to be written: journal, then record
 *     report_files_keep(R, rel);              // a file found up to date
 *     KC_TRY(report_files_close(R));          // the run succeeded: remove, write the list
 *     report_files_free(R);
 */
#ifndef KC_REPORT_FILES_H
#define KC_REPORT_FILES_H
#include "eval/report/report_types.h"

/* The list's and the journal's names in OUT. */
#define REPORT_FILES_LIST ".keycut-report-files"
#define REPORT_FILES_JOURNAL ".keycut-report-files.journal"

typedef struct report_files {
    char **done;           /* (n_done) this run's files, written or kept; sorted by close */
    int n_done, cap_done;
    char **owned;          /* (n_owned) earlier runs' files (the list, journals), sorted, unique */
    int n_owned, cap_owned;
    int journal;           /* the journal's descriptor, -1 until the first write */
    long removed;          /* files removed by close */
} report_files;

/* Reads what earlier runs wrote into R->out (above); -1 with a message when the folder holds files
 * of no kc-report run, or the list or journal is not one. */
int report_files_open(report *R);
/* Records rel (a path under OUT) as written by this run; the journal gets it first.  -1 with a
 * message when the journal cannot be written or rel is not a path under OUT. */
int report_files_write(report *R, const char *rel);
/* Records rel as found up to date. */
void report_files_keep(report *R, const char *rel);
/* At the end of a successful run (every file written): removes the files earlier runs wrote that
 * this one did not, then the folders left empty, and writes the list; removes the journal. */
int report_files_close(report *R);
void report_files_free(report *R);
/* A new string: OUT/rel, for a file about to be written: rel recorded as this run's
 * (report_files_write), its folder made; NULL with a message when either fails. */
char *report_out_path(report *R, const char *rel);
#endif
