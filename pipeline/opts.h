/* pipeline/opts.h — the command line of a stage: its options, --help / -h, its positional
 * arguments, and the words and exit status of every mistake.
 *
 * A stage lists its options in a table (ended by {0}); opts_parse reads argv by it in order,
 * storing each value (or setting each flag) where its entry says, or handing it to the entry's
 * read function, which checks it at once.  opts_parse never prints nor exits: it returns
 * OPTS_OK to go on, OPTS_HELP for --help / -h, OPTS_USAGE for a usage error (the usage text
 * goes to stderr), or -1 with the message set (kc_fail) for a bad option; main() prints and
 * exits:
 *
 *     const char *out = NULL;
 *     int force = 0;
 *     kc_shard shard = KC_SHARD_NONE;
 *     const opts_option options[] = {{"--out", .value = &out},
 *                                    {"--force", .flag = &force},
 *                                    {"--shard", .read = read_shard, .target = &shard},
 *                                    {0}};
 *     const opts_cli cli = {.usage = usage, .options = options};  // usage: the --help text
 *     int rc = opts_parse(&cli, argc, argv);
 *     if (rc < 0) kc_die();                        // "kc-x: error: --out needs a value (see --help)", 1
 *     if (rc != OPTS_OK) exit(opts_usage(&cli, rc)); // --help: stdout, 0; usage error: stderr, 2
 *
 * with  static int read_shard(const opts_option *o, const char *v) { return shard_parse(v, o->target); }
 * (exit, not return: what main allocated before stays reachable for the leak checker, as it was
 * when the stages' usage() exited).
 *
 * The stages grew four ways of reading a command line, each kept word for word (opts_syntax):
 *   OPTS_PAIRS       every argument is an option: a flag, or a name and its value ("--out DIR").
 *                    In order, for each argument: --help / -h gives OPTS_HELP; a flag is set; a
 *                    name with nothing after it is "NAME needs a value (see --help)"; an unknown
 *                    name (its value read with it) is "unknown option NAME (see --help)".  With
 *                    .unknown_first (kc-decode): "unknown option 'NAME' (see --help)" comes
 *                    before "NAME needs a value".  .unknown, when given, takes the unknown NAME
 *                    and its value instead (kc-refine checks the value first).
 *   OPTS_PAIRS_ARGS  as OPTS_PAIRS, but an argument that does not start with "--" is positional.
 *   OPTS_ARGS        positional arguments with options among them (kc-center, kc-merge):
 *                    --help / -h anywhere, also where a value stands, wins before anything is
 *                    read; an argument that is not a known option (or is a value option's name
 *                    with nothing after it) is positional; with .options_first the first
 *                    positional ends the options.  After the last argument: fewer than
 *                    .min_args is a usage error, then a positional that starts with '-' is
 *                    "unknown option ARG (see --help)".
 *   OPTS_GETOPT      GNU getopt_long (kc-extract, kc-init, kc-inspect, kc-demo-data): "--name=VALUE",
 *                    unambiguous abbreviations, "-h", the positional arguments moved to the end,
 *                    its own messages (naming argv[0]); each of them is a usage error.
 * Positional arguments, in every syntax: more than .max_args is "unexpected argument 'ARG' (see
 * --help)" when the stage takes none (max_args 0), else a usage error; fewer than .min_args is a
 * usage error.  They are found as they come, but under OPTS_GETOPT after the options.
 */
#ifndef KC_OPTS_H
#define KC_OPTS_H
#include <stdio.h>

enum { OPTS_OK = 0, OPTS_HELP = 1, OPTS_USAGE = 2 }; /* opts_parse's results (or -1) */
#define OPTS_ANY (-1)                               /* .max_args: no limit */

/* How a read function that reads a number stores it at .target (opts_store_number). */
typedef enum opts_number { OPTS_INT, OPTS_LONG_LONG, OPTS_FLOAT, OPTS_DOUBLE } opts_number;

typedef struct opts_option {
    const char *name;    /* as typed: "--out" */
    const char **value;  /* a value option: its value is stored here (the last one given wins) */
    int *flag;           /* a flag (an option without a value): set to 1 */
    /* called after the above with the value (a flag's: NULL): checks and stores it where
     * .target says, 0, or -1 with the message set (kc_fail) */
    int (*read)(const struct opts_option *opt, const char *value);
    void *target;        /* for read */
    double lo, hi;       /* for read: a range, when it takes one */
    opts_number number;  /* for read: the type of a number at .target */
} opts_option;

typedef enum opts_syntax { OPTS_PAIRS, OPTS_PAIRS_ARGS, OPTS_ARGS, OPTS_GETOPT } opts_syntax;

typedef struct opts_cli {
    const char *usage;                   /* the text of --help (and of usage errors, on stderr) */
    void (*print_usage)(FILE *out);      /* or this prints it (a text known only at run time) */
    const opts_option *options;          /* ended by {0}; names start with "--" */
    opts_syntax syntax;                  /* see above; OPTS_PAIRS by default */
    const char **args;                   /* room for max_args positional arguments (NULL: not kept) */
    int *n_args;                         /* how many were given (NULL: not told) */
    int min_args, max_args;              /* max_args OPTS_ANY: no limit */
    int unknown_first;                   /* OPTS_PAIRS: kc-decode's words, see above */
    int options_first;                   /* OPTS_ARGS: the first positional ends the options */
    /* OPTS_PAIRS: takes an unknown name and its value: 0 (accepted), or -1 with kc_fail */
    int (*unknown)(const char *name, const char *value);
} opts_cli;

/* Reads argv[1..argc-1] (argv[0] is the program's, or a command's, name).  OPTS_OK, OPTS_HELP,
 * OPTS_USAGE, or -1 with the message set. */
int opts_parse(const opts_cli *cli, int argc, char **argv);
/* Prints the usage text, on stdout for OPTS_HELP, else on stderr; returns the exit status
 * (0 for OPTS_HELP, else 2). */
int opts_usage(const opts_cli *cli, int result);
/* 1 for "--help" and "-h". */
int opts_is_help(const char *arg);
/* Stores x at opt->target as opt->number says (converted as a C cast does). */
void opts_store_number(const opts_option *opt, double x);
/* Read functions for the options whose numbers were never checked: atoi / atof of the value (a
 * bad number reads as 0), stored as opt->number says. */
int opts_read_atoi(const opts_option *opt, const char *value);
int opts_read_atof(const opts_option *opt, const char *value);
/* A "NET=PATH" value split at its first '=': 0 with *name and *path allocated (free them), or -1
 * (no message: the caller words it) when there is no '=', or nothing before or after it. */
int opts_split_pair(const char *value, char **name, char **path);
#endif
