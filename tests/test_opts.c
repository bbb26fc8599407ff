/* tests/test_opts.c — the stages' command lines (pipeline/opts.h): values, flags, read functions,
 * positional arguments, --help / -h, and the words and results of every mistake, in each syntax. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pipeline/kc.h"
#include "pipeline/opts.h"
#include "tests/test.h"

/* ---- helpers ------------------------------------------------------------------------------------ */

/* Parses the words of line (space-separated; argv[0] "kc-test") by cli. */
static int parse_line(const opts_cli *cli, const char *line)
{
    static char buf[512];
    static char *argv[32];
    snprintf(buf, sizeof buf, "kc-test %s", line);
    int argc = 0;
    for (char *save = NULL, *w = strtok_r(buf, " ", &save); w && argc < 31; w = strtok_r(NULL, " ", &save))
        argv[argc++] = w;
    argv[argc] = NULL;
    kc_fail("%s", ""); /* no message left from an earlier case */
    return opts_parse(cli, argc, argv);
}

/* What a file descriptor (1 or 2) receives between capture_begin and capture_end. */
static FILE *capture_file;
static int capture_saved = -1, capture_fd;
static void capture_begin(int fd)
{
    fflush(stdout);
    fflush(stderr);
    capture_file = tmpfile();
    capture_fd = fd;
    capture_saved = dup(fd);
    dup2(fileno(capture_file), fd);
}
static const char *capture_end(void)
{
    static char text[8192];
    fflush(stdout);
    fflush(stderr);
    dup2(capture_saved, capture_fd);
    close(capture_saved);
    rewind(capture_file);
    size_t n = fread(text, 1, sizeof text - 1, capture_file);
    text[n] = 0;
    fclose(capture_file);
    return text;
}

/* a read function: the value must be "good"; stored at target */
static int read_good(const opts_option *opt, const char *value)
{
    if (strcmp(value, "good")) return kc_fail("%s: '%s' is not good", opt->name, value);
    *(const char **)opt->target = value;
    return 0;
}

/* a flag's read function: counts its calls (and sees no value) */
static int count_calls(const opts_option *opt, const char *value)
{
    (*(int *)opt->target) += value == NULL;
    return 0;
}

static int unknown_seen;
static int unknown_tell(const char *name, const char *value)
{
    unknown_seen = 1;
    return kc_fail("no %s (given %s)", name, value);
}

/* ---- the stages' syntaxes ---------------------------------------------------------------------- */

static const char *out, *mode;
static int force, force_reads;
static const opts_option pair_options[] = {{"--out", .value = &out},
                                           {"--mode", .read = read_good, .target = &mode},
                                           {"--force", .flag = &force, .read = count_calls, .target = &force_reads},
                                           {0}};

static void reset(void)
{
    out = mode = NULL;
    force = force_reads = 0;
    unknown_seen = 0;
}

static void test_pairs(void)
{
    opts_cli cli = {.usage = "usage: kc-test\n", .options = pair_options};
    reset();
    CHECK(parse_line(&cli, "--out a --force --mode good --out b") == OPTS_OK, "pairs: %s", kc_error());
    CHECK(out && !strcmp(out, "b"), "the last --out wins: %s", out ? out : "(null)");
    CHECK(mode && !strcmp(mode, "good") && force == 1 && force_reads == 1, "mode, flag and its read");
    CHECK(parse_line(&cli, "") == OPTS_OK, "no arguments");
    CHECK(parse_line(&cli, "--out a --help --bogus") == OPTS_HELP, "--help before a mistake");
    CHECK(parse_line(&cli, "-h") == OPTS_HELP, "-h");
    reset();
    CHECK(parse_line(&cli, "--out --help") == OPTS_OK && out && !strcmp(out, "--help"), "--help as a value is a value");
    CHECK(parse_line(&cli, "--bogus x --help") == -1, "a mistake before --help");
    CHECK(!strcmp(kc_error(), "unknown option --bogus (see --help)"), "unknown: '%s'", kc_error());
    CHECK(parse_line(&cli, "--out") == -1 && !strcmp(kc_error(), "--out needs a value (see --help)"), "missing: '%s'",
          kc_error());
    CHECK(parse_line(&cli, "--bogus") == -1 && !strcmp(kc_error(), "--bogus needs a value (see --help)"),
          "an unknown name at the end needs a value first: '%s'", kc_error());
    CHECK(parse_line(&cli, "foo") == -1 && !strcmp(kc_error(), "foo needs a value (see --help)"),
          "a word is a name: '%s'", kc_error());
    CHECK(parse_line(&cli, "--mode bad --bogus x") == -1 && !strcmp(kc_error(), "--mode: 'bad' is not good"),
          "a read function's message, in order: '%s'", kc_error());

    cli.unknown_first = 1; /* kc-decode */
    CHECK(parse_line(&cli, "--bogus") == -1 && !strcmp(kc_error(), "unknown option '--bogus' (see --help)"),
          "unknown first: '%s'", kc_error());
    CHECK(parse_line(&cli, "--out") == -1 && !strcmp(kc_error(), "--out needs a value"), "its missing value: '%s'",
          kc_error());
    cli.unknown_first = 0;

    cli.unknown = unknown_tell; /* kc-refine */
    CHECK(parse_line(&cli, "--bogus 5") == -1 && unknown_seen && !strcmp(kc_error(), "no --bogus (given 5)"),
          "the unknown handler: '%s'", kc_error());
}

static void test_pairs_args(void)
{
    const char *args[4];
    int n_args = -1;
    opts_cli cli = {.usage = "usage: kc-test\n", .options = pair_options, .syntax = OPTS_PAIRS_ARGS};
    CHECK(parse_line(&cli, "--out a foo") == -1 && !strcmp(kc_error(), "unexpected argument 'foo' (see --help)"),
          "none taken (kc-report): '%s'", kc_error());
    CHECK(parse_line(&cli, "foo --out") == -1 && !strcmp(kc_error(), "unexpected argument 'foo' (see --help)"),
          "as it comes: '%s'", kc_error());
    cli.args = args;
    cli.n_args = &n_args;
    cli.max_args = 4; /* kc-table takes any number */
    reset();
    CHECK(parse_line(&cli, "a --out o -b --force c") == OPTS_OK, "kc-table's: %s", kc_error());
    CHECK(n_args == 3 && !strcmp(args[0], "a") && !strcmp(args[1], "-b") && !strcmp(args[2], "c") && force,
          "positional arguments among options: %d", n_args);
    CHECK(parse_line(&cli, "a b c d e") == OPTS_USAGE, "too many, when some are taken: a usage error");
    cli.min_args = 1;
    CHECK(parse_line(&cli, "--out o") == OPTS_USAGE, "too few: a usage error");
}

static void test_args(void)
{
    const char *args[3];
    int n_args = -1;
    opts_cli cli = {.usage = "usage: kc-test\n", .options = pair_options, .syntax = OPTS_ARGS, .args = args,
                    .n_args = &n_args, .min_args = 2, .max_args = 2}; /* kc-center */
    reset();
    CHECK(parse_line(&cli, "in --out o out") == OPTS_OK && n_args == 2 && !strcmp(args[0], "in") &&
              !strcmp(args[1], "out") && out && !strcmp(out, "o"),
          "kc-center's: %s", kc_error());
    CHECK(parse_line(&cli, "--out --help a b") == OPTS_HELP, "--help anywhere, also as a value");
    CHECK(parse_line(&cli, "--mode bad a b --help") == OPTS_HELP, "--help before anything is read");
    CHECK(parse_line(&cli, "a b c --mode bad") == OPTS_USAGE, "a third argument stops the reading");
    CHECK(parse_line(&cli, "--mode bad a b c") == -1 && !strcmp(kc_error(), "--mode: 'bad' is not good"),
          "options in order: '%s'", kc_error());
    CHECK(parse_line(&cli, "--bogus") == OPTS_USAGE, "an unknown option is an argument: too few");
    CHECK(parse_line(&cli, "a --bogus") == -1 && !strcmp(kc_error(), "unknown option --bogus (see --help)"),
          "then it is refused: '%s'", kc_error());
    CHECK(parse_line(&cli, "a --out") == -1 && !strcmp(kc_error(), "unknown option --out (see --help)"),
          "a value option without its value is an argument: '%s'", kc_error());
    cli.options_first = 1; /* kc-merge */
    cli.max_args = OPTS_ANY;
    reset();
    CHECK(parse_line(&cli, "--force a --force b") == -1 && !strcmp(kc_error(), "unknown option --force (see --help)"),
          "the first argument ends the options: '%s'", kc_error());
    CHECK(force_reads == 1, "a flag's read function runs once per flag: %d", force_reads);
}

static void test_getopt(void)
{
    const char *args[2];
    int n_args = -1;
    static const char *first, *firm;
    static int verbose;
    const opts_option options[] = {{"--first", .value = &first}, {"--firm", .value = &firm},
                                   {"--verbose", .flag = &verbose}, {0}};
    opts_cli cli = {.usage = "usage: kc-test\n", .options = options, .syntax = OPTS_GETOPT};
    capture_begin(2);
    int rc = parse_line(&cli, "--fir 2");
    const char *err = capture_end();
    CHECK(rc == OPTS_USAGE, "an ambiguous abbreviation: a usage error (%d)", rc);
    CHECK(strstr(err, "option '--fir' is ambiguous; possibilities: '--first' '--firm'") != NULL,
          "getopt's words, the table's order: '%s'", err);
    first = firm = NULL;
    CHECK(parse_line(&cli, "--first=1 --firm 3 --verb") == OPTS_OK && first && !strcmp(first, "1") && firm &&
              !strcmp(firm, "3") && verbose,
          "--name=VALUE, --name VALUE, an abbreviation: %s", kc_error());
    CHECK(parse_line(&cli, "--verbose --help") == OPTS_HELP && parse_line(&cli, "-h") == OPTS_HELP, "--help, -h");
    capture_begin(2);
    rc = parse_line(&cli, "--first");
    err = capture_end();
    CHECK(rc == OPTS_USAGE && strstr(err, "option '--first' requires an argument"), "missing value: %d '%s'", rc, err);
    capture_begin(2);
    rc = parse_line(&cli, "--bogus");
    err = capture_end();
    CHECK(rc == OPTS_USAGE && strstr(err, "unrecognized option '--bogus'"), "unknown: %d '%s'", rc, err);
    CHECK(parse_line(&cli, "foo --verbose") == -1 && !strcmp(kc_error(), "unexpected argument 'foo' (see --help)"),
          "none taken (kc-extract): '%s'", kc_error());
    cli.args = args;
    cli.n_args = &n_args;
    cli.min_args = cli.max_args = 1; /* kc-inspect */
    CHECK(parse_line(&cli, "c.h5 --first 1") == OPTS_OK && n_args == 1 && !strcmp(args[0], "c.h5"),
          "the argument moved after the options: %s", kc_error());
    CHECK(parse_line(&cli, "a b") == OPTS_USAGE && parse_line(&cli, "--verbose") == OPTS_USAGE,
          "one argument, or a usage error");
    cli.args = NULL;
    cli.max_args = OPTS_ANY;
    cli.min_args = 0; /* kc-demo-data */
    CHECK(parse_line(&cli, "a b --verbose") == OPTS_OK && n_args == 2, "arguments counted, not kept");
}

/* ---- the rest of the API ------------------------------------------------------------------------ */

static void test_usage(void)
{
    opts_cli cli = {.usage = "usage: kc-test [--out DIR]\n"};
    capture_begin(1);
    int rc = opts_usage(&cli, OPTS_HELP);
    const char *text = capture_end();
    CHECK(rc == 0 && !strcmp(text, cli.usage), "--help: stdout, 0: %d '%s'", rc, text);
    capture_begin(2);
    rc = opts_usage(&cli, OPTS_USAGE);
    text = capture_end();
    CHECK(rc == 2 && !strcmp(text, cli.usage), "a usage error: stderr, 2: %d '%s'", rc, text);
    CHECK(opts_is_help("--help") && opts_is_help("-h") && !opts_is_help("--he") && !opts_is_help("-help"), "is_help");
}

static void test_values(void)
{
    char *name = NULL, *path = NULL;
    CHECK(opts_split_pair("dino=a=b/", &name, &path) == 0 && !strcmp(name, "dino") && !strcmp(path, "a=b/"),
          "NET=PATH at the first '='");
    free(name);
    free(path);
    CHECK(opts_split_pair("dino", &name, &path) < 0 && opts_split_pair("=x", &name, &path) < 0 &&
              opts_split_pair("x=", &name, &path) < 0,
          "no '=', no NET, no PATH");
    int i = 0;
    long long ll = 0;
    float f = 0;
    double d = 0;
    opts_store_number(&(opts_option){"--i", .target = &i}, 2.9);
    opts_store_number(&(opts_option){"--ll", .target = &ll, .number = OPTS_LONG_LONG}, 9007199254740991.0);
    opts_store_number(&(opts_option){"--f", .target = &f, .number = OPTS_FLOAT}, 0.1);
    opts_store_number(&(opts_option){"--d", .target = &d, .number = OPTS_DOUBLE}, 0.1);
    CHECK(i == 2 && ll == 9007199254740991LL && f == 0.1f && d == 0.1, "stored as a cast does");
    opts_read_atoi(&(opts_option){"--i", .target = &i}, "x");
    opts_read_atof(&(opts_option){"--d", .target = &d, .number = OPTS_DOUBLE}, "2.5e1x");
    CHECK(i == 0 && d == 25, "atoi, atof: %d %g", i, d);
}

int main(void)
{
    test_pairs();
    test_pairs_args();
    test_args();
    test_getopt();
    test_usage();
    test_values();
    return test_done();
}
