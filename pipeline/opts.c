/* pipeline/opts.c — see opts.h. */
#include "pipeline/opts.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline/kc.h"

int opts_is_help(const char *arg) { return !strcmp(arg, "--help") || !strcmp(arg, "-h"); }

static const opts_option *find_option(const opts_option *options, const char *name)
{
    for (const opts_option *opt = options; opt->name; opt++)
        if (!strcmp(opt->name, name)) return opt;
    return NULL;
}

/* Stores what an option was given (a flag's value: NULL) and lets its read function check it. */
static int take(const opts_option *opt, const char *value)
{
    if (opt->value) *opt->value = value;
    if (opt->flag) *opt->flag = 1;
    return opt->read ? opt->read(opt, value) : 0;
}

/* One more positional argument: kept, or refused when there are too many. */
static int keep_arg(const opts_cli *cli, const char *arg, int *n_args)
{
    if (cli->max_args != OPTS_ANY && *n_args >= cli->max_args)
        return cli->max_args == 0 ? kc_fail("unexpected argument '%s' (see --help)", arg) : OPTS_USAGE;
    if (cli->args) cli->args[*n_args] = arg;
    (*n_args)++;
    return OPTS_OK;
}

static int parse_pairs(const opts_cli *cli, int argc, char **argv, int *n_args)
{
    for (int i = 1; i < argc; i++) {
        const char *name = argv[i];
        if (opts_is_help(name)) return OPTS_HELP;
        if (cli->syntax == OPTS_PAIRS_ARGS && strncmp(name, "--", 2) != 0) {
            int rc = keep_arg(cli, name, n_args);
            if (rc != OPTS_OK) return rc;
            continue;
        }
        const opts_option *opt = find_option(cli->options, name);
        if (opt && opt->flag) {
            KC_TRY(take(opt, NULL));
            continue;
        }
        if (cli->unknown_first) {
            if (!opt) return kc_fail("unknown option '%s' (see --help)", name);
            if (i + 1 >= argc) return kc_fail("%s needs a value", name);
        } else if (i + 1 >= argc) {
            return kc_fail("%s needs a value (see --help)", name);
        }
        const char *value = argv[++i];
        if (opt) {
            KC_TRY(take(opt, value));
        } else if (cli->unknown) {
            KC_TRY(cli->unknown(name, value));
        } else {
            return kc_fail("unknown option %s (see --help)", name);
        }
    }
    return *n_args < cli->min_args ? OPTS_USAGE : OPTS_OK;
}

static int parse_args(const opts_cli *cli, int argc, char **argv, int *n_args)
{
    for (int i = 1; i < argc; i++)
        if (opts_is_help(argv[i])) return OPTS_HELP;
    const char *first_dashed = NULL; /* the first positional that looks like an option */
    int options_open = 1;
    for (int i = 1; i < argc; i++) {
        const opts_option *opt = options_open ? find_option(cli->options, argv[i]) : NULL;
        if (opt && opt->flag) {
            KC_TRY(take(opt, NULL));
        } else if (opt && i + 1 < argc) {
            KC_TRY(take(opt, argv[++i]));
        } else {
            int rc = keep_arg(cli, argv[i], n_args);
            if (rc != OPTS_OK) return rc;
            if (!first_dashed && argv[i][0] == '-') first_dashed = argv[i];
            if (cli->options_first) options_open = 0;
        }
    }
    if (*n_args < cli->min_args) return OPTS_USAGE;
    if (first_dashed) return kc_fail("unknown option %s (see --help)", first_dashed);
    return OPTS_OK;
}

/* getopt_long over the table (plus "help" and "-h").  Every option gets its own val, so that
 * getopt calls an abbreviation of two of them ambiguous, as it does in a hand-written table. */
enum { FIRST_VAL = 256 };

static int parse_getopt(const opts_cli *cli, int argc, char **argv, int *n_args)
{
    int n_options = 0;
    while (cli->options[n_options].name) n_options++;
    struct option *longs = kc_calloc((size_t)n_options + 2, sizeof *longs);
    for (int k = 0; k < n_options; k++) {
        const opts_option *opt = &cli->options[k];
        longs[k] = (struct option){opt->name + 2, opt->flag ? no_argument : required_argument, NULL, FIRST_VAL + k};
    }
    longs[n_options] = (struct option){"help", no_argument, NULL, 'h'};
    int rc = OPTS_OK, c;
    optind = 0; /* (a fresh scan, as at the start of a process) */
    while (rc == OPTS_OK && (c = getopt_long(argc, argv, "h", longs, NULL)) != -1) {
        if (c == 'h') rc = OPTS_HELP;
        else if (c < FIRST_VAL) rc = OPTS_USAGE; /* getopt said why */
        else if (take(&cli->options[c - FIRST_VAL], optarg) < 0) rc = -1;
    }
    free(longs);
    for (int i = optind; rc == OPTS_OK && i < argc; i++) rc = keep_arg(cli, argv[i], n_args);
    if (rc == OPTS_OK && *n_args < cli->min_args) rc = OPTS_USAGE;
    return rc;
}

int opts_parse(const opts_cli *cli, int argc, char **argv)
{
    int n_args = 0, rc;
    switch (cli->syntax) {
    case OPTS_ARGS: rc = parse_args(cli, argc, argv, &n_args); break;
    case OPTS_GETOPT: rc = parse_getopt(cli, argc, argv, &n_args); break;
    default: rc = parse_pairs(cli, argc, argv, &n_args); break;
    }
    if (cli->n_args) *cli->n_args = n_args;
    return rc;
}

int opts_usage(const opts_cli *cli, int result)
{
    FILE *out = result == OPTS_HELP ? stdout : stderr;
    if (cli->print_usage) cli->print_usage(out);
    else fputs(cli->usage, out);
    return result == OPTS_HELP ? 0 : 2;
}

void opts_store_number(const opts_option *opt, double x)
{
    switch (opt->number) {
    case OPTS_INT: *(int *)opt->target = (int)x; break;
    case OPTS_LONG_LONG: *(long long *)opt->target = (long long)x; break;
    case OPTS_FLOAT: *(float *)opt->target = (float)x; break;
    case OPTS_DOUBLE: *(double *)opt->target = x; break;
    }
}

int opts_read_atoi(const opts_option *opt, const char *value)
{
    opts_store_number(opt, atoi(value));
    return 0;
}

int opts_read_atof(const opts_option *opt, const char *value)
{
    opts_store_number(opt, atof(value));
    return 0;
}

int opts_split_pair(const char *value, char **name, char **path)
{
    const char *eq = strchr(value, '=');
    if (!eq || eq == value || !eq[1]) return -1;
    *name = kc_strfmt("%.*s", (int)(eq - value), value);
    *path = kc_strdup(eq + 1);
    return 0;
}
