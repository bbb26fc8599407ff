/* pipeline/ini.h — a small INI reader for keycut's configs (sweep grid, nets, slurm).
 *
 *   [section]
 *   key = value        ; or # comments on their own line
 *
 * Keys before any section belong to section "".  Duplicate keys in one section are an error.
 *
 *     ini_file f;
 *     if (ini_load(&f, "configs/sweep.ini") < 0) kc_die();
 *     const char *v = ini_get(&f, "grid", "tau");   // NULL when absent
 *     ini_free(&f);
 */
#ifndef KC_INI_H
#define KC_INI_H
typedef struct ini_entry {
    char *section, *key, *value;
    int line;
} ini_entry;
typedef struct ini_file {
    char *path;
    ini_entry *e;
    int n;
} ini_file;
int ini_load(ini_file *f, const char *path);
/* Parses text already in memory; path is only used in messages. */
int ini_parse(ini_file *f, const char *path, const char *text);
const char *ini_get(const ini_file *f, const char *section, const char *key);
void ini_free(ini_file *f);
/* Splits a comma- or space-separated list; returns the count, items in *out (free each and out). */
int ini_split_list(const char *value, char ***out);
#endif
