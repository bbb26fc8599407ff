/* pipeline/ini.c — see ini.h. */
#include "pipeline/ini.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline/kc.h"

static char *trim(char *s)
{
    while (*s && isspace((unsigned char)*s)) s++;
    char *e = s + strlen(s);
    while (e > s && isspace((unsigned char)e[-1])) *--e = 0;
    return s;
}

int ini_parse(ini_file *f, const char *path, const char *text)
{
    f->path = kc_strdup(path);
    f->e = NULL;
    f->n = 0;
    char *copy = kc_strdup(text), *save = NULL;
    char *section = kc_strdup("");
    int lineno = 0, cap = 0;
    for (char *line = copy; line; line = save) {
        save = strchr(line, '\n');
        if (save) *save++ = 0;
        lineno++;
        char *s = trim(line);
        if (!*s || *s == '#' || *s == ';') continue;
        if (*s == '[') {
            char *end = strchr(s, ']');
            if (!end || trim(end + 1)[0]) {
                kc_fail("%s:%d: malformed section header '%s'", path, lineno, s);
                goto fail;
            }
            *end = 0;
            free(section);
            section = kc_strdup(trim(s + 1));
            continue;
        }
        char *eq = strchr(s, '=');
        if (!eq) {
            kc_fail("%s:%d: expected 'key = value', got '%s'", path, lineno, s);
            goto fail;
        }
        *eq = 0;
        char *key = trim(s), *val = trim(eq + 1);
        if (!*key) {
            kc_fail("%s:%d: empty key", path, lineno);
            goto fail;
        }
        if (ini_get(f, section, key)) {
            kc_fail("%s:%d: duplicate key '%s' in [%s]", path, lineno, key, section);
            goto fail;
        }
        if (f->n == cap) {
            cap = cap ? 2 * cap : 16;
            f->e = kc_realloc(f->e, (size_t)cap * sizeof *f->e);
        }
        f->e[f->n++] = (ini_entry){kc_strdup(section), kc_strdup(key), kc_strdup(val), lineno};
    }
    free(section);
    free(copy);
    return 0;
fail:
    free(section);
    free(copy);
    ini_free(f);
    return -1;
}

int ini_load(ini_file *f, const char *path)
{
    uint8_t *data;
    size_t size;
    KC_TRY(kc_read_file(path, &data, &size));
    if (memchr(data, 0, size)) {
        free(data);
        return kc_fail("%s: not a text file (contains NUL bytes)", path);
    }
    int rc = ini_parse(f, path, (const char *)data);
    free(data);
    return rc;
}

const char *ini_get(const ini_file *f, const char *section, const char *key)
{
    for (int i = 0; i < f->n; i++)
        if (!strcmp(f->e[i].section, section) && !strcmp(f->e[i].key, key)) return f->e[i].value;
    return NULL;
}

void ini_free(ini_file *f)
{
    for (int i = 0; i < f->n; i++) {
        free(f->e[i].section);
        free(f->e[i].key);
        free(f->e[i].value);
    }
    free(f->e);
    free(f->path);
    f->e = NULL;
    f->path = NULL;
    f->n = 0;
}

int ini_split_list(const char *value, char ***out)
{
    char *copy = kc_strdup(value), *save = NULL;
    int n = 0, cap = 8;
    char **items = kc_malloc((size_t)cap * sizeof *items);
    for (char *tok = strtok_r(copy, ", \t", &save); tok; tok = strtok_r(NULL, ", \t", &save)) {
        if (n == cap) items = kc_realloc(items, (size_t)(cap *= 2) * sizeof *items);
        items[n++] = kc_strdup(tok);
    }
    free(copy);
    *out = items;
    return n;
}
