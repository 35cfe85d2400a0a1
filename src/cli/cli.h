/* cli.h — what the command files share: the command table entry, exit codes, option helpers,
 * error reporting and the stderr progress line. The CLI is a thin layer over the library. */
#ifndef JSMF_CLI_H
#define JSMF_CLI_H
#include <stdint.h>
#include <stdio.h>

#include "jsmf.h"
#include "core/clock.h"

/* Exit codes (documented in jsmf.1). */
enum { EXIT_OK = 0, EXIT_FAIL = 1, EXIT_USAGE = 2, EXIT_INTERRUPTED = 130 };

typedef struct cli_command {
    const char *name;
    int (*run)(int argc, char **argv); /* argv[0] is the command name */
    const char *summary;
    int ranks; /* 1: runs on the ranks of an MPI job (the others refuse to run under mpirun) */
} cli_command;

/* Global switches shared by every command (set by cli_parse). */
extern int cli_quiet;    /* --quiet / -q: no progress, no informational messages */
extern int cli_progress; /* 1 when progress may be drawn (stderr is a terminal, not quiet) */
extern const char *cli_prog; /* "jsmf COMMAND" for messages */

/* The MPI job's communicator (cli_mpi.c): opened by cli_comm on first use (a failure is
 * printed; returns EXIT_FAIL), closed by main after the command. NULL until then. */
struct jsmf_comm;
extern struct jsmf_comm *cli_world;
int cli_comm(struct jsmf_comm **out);
void cli_comm_close(void);
uint64_t cli_test_piece_bytes(void);

/* Print "jsmf CMD: <library message or strerror>" to stderr and return EXIT_FAIL (nothing is
 * printed on an MPI rank whose job failed because of another rank, which says why). */
int cli_fail(int rc);
/* Print "jsmf CMD: <formatted>" and "Try 'jsmf CMD --help'." to stderr, return EXIT_USAGE. */
int cli_usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Informational line to stderr unless --quiet. */
void cli_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* "jsmf CMD: warning: MSG" to stderr, with --quiet too (a jsmf_warn_fn; arg unused). */
void cli_warn(void *arg, const char *msg);
/* Tell once a command that a store it reads or writes is of a version without checksums
 * (nothing for a path that is not a store). */
void cli_note_unchecked_store(const char *path);

/* Unless --quiet, once per directory: "note: MODEL has no MANIFEST ...: its files are read
 * without checksums", for a model directory that lacks one (formats/model.md, "Manifest"). */
void cli_note_unchecked_model(const char *model);

/* S as an integer in [MIN, MAX] for option OPT ("--top"), or a number in RANGE (NULL: any
 * finite one; else an interval "[0, 1)", "(0, inf)" with closed or open ends). 0, or EXIT_USAGE
 * after a usage message naming OPT. */
int cli_parse_uint(const char *opt, const char *s, uint64_t min, uint64_t max, uint64_t *out);
int cli_parse_double(const char *opt, const char *s, const char *range, double *out);
/* 1 when X lies in RANGE (as above), 0 when not, -1 when RANGE is malformed. */
int cli_in_range(const char *range, double x);
/* 1 when the environment sets JSMF_TEST_SMALL_MEM (tests: budgets below JSMF_MEM_MIN, for
 * small checkpoint windows on small inputs; they are not kept to). */
int cli_mem_below_min(void);

/* The option table of a command: one entry per option and per positional argument, ended by
 * {0}, read by cli_parse. Its --help text, value name included, is the command's section of
 * man/jsmf.1 (cli_docs), whose usage line names the positional arguments as the table does. */
typedef enum cli_kind {
    CLI_FLAG,   /* int, set to 1; the only kind that takes no value */
    CLI_U32,    /* uint32_t, at least .min and at most .max (0: the type's largest) */
    CLI_U64,    /* uint64_t, the same */
    CLI_INT,    /* int (a thread count), the same between .min and INT_MAX */
    CLI_DOUBLE, /* double, finite and in .range if set ("[0, 1)", "(0, inf)") */
    CLI_MEM,    /* uint64_t bytes: a size like 512M, 2G, 1.5g, 4096 (jsmf_mem_parse) */
    CLI_STRING, /* const char *, the argument itself */
    CLI_CHOICE, /* int: the index of the value in .choices "a|b|c" (or .choice_name's list) */
    CLI_LIST,   /* cli_list: the value and every following argument that is not an option */
    CLI_CALL,   /* .call(option, value) parses it */
    CLI_ARG,    /* the next positional argument (required), named .name ("STORE"): const char * */
    CLI_ARGS    /* the other positional arguments, at least one: const char ** into argv, their
                 * number in *.count; the last positional entry of a table */
} cli_kind;

typedef struct cli_list {
    const char **items; /* calloc'ed by cli_parse, freed by the command */
    uint32_t n;
} cli_list;

typedef struct cli_option cli_option;
struct cli_option {
    const char *name;    /* "--top"; for CLI_ARG(S) the name in the usage line: "INPUT" */
    char short_name;     /* 'n' for -n, or 0 */
    cli_kind kind;
    void *field;         /* where the value goes */
    uint64_t min, max;   /* CLI_U32, CLI_U64, CLI_INT: the smallest and largest value allowed */
    const char *range;   /* CLI_DOUBLE: the interval allowed, NULL for any finite number */
    int required;        /* 1: a usage error when not given ("missing -o MODEL") */
    int *given;          /* set to 1 when the option is given (its default may differ) */
    const char *hint;    /* what follows "missing NAME" when it is missing: "(a path, or '-')" */
    uint32_t *count;     /* CLI_ARGS: how many there are */
    int stdin_once;      /* CLI_ARGS: '-' (stdin) at most once */
    const char *choices; /* CLI_CHOICE: "text|tsv|json" */
    const char *(*choice_name)(int index); /* CLI_CHOICE instead of .choices: the library's
                                            * table of the choice (NULL past its last name) */
    int (*call)(const cli_option *o, const char *value); /* CLI_CALL: 0 or EXIT_USAGE */
    const char *alias;   /* another long name accepted, not documented */
};

/* An entry's common fields, by name (so that .min, .choices, ... may follow it):
 * {CLI_OPT("--top", 'n', CLI_U32, &top), .min = 1}, {CLI_OPT("STORE", 0, CLI_ARG, &store)}. */
#define CLI_OPT(long_, short_, kind_, field_)                                                  \
    .name = (long_), .short_name = (short_), .kind = (kind_), .field = (field_)

/* The manual as --help shows it, generated from man/jsmf.1 by tools/man2help.awk: per command
 * its usage line and description, then one entry per option tag; ended by {0}. */
typedef struct cli_doc {
    const char *command; /* "fit"; "" for the options every command takes */
    int usage;           /* 1: head is the usage line, text the description */
    const char *head;    /* the tag as printed: "-k, --topics K", "--iters N, --tol X" */
    const char *text;    /* the first sentence of the description */
} cli_doc;
extern const cli_doc cli_docs[];

/* Parse argv[1..argc) by TABLE, for the command argv[0]: options (--name VALUE, --name=VALUE,
 * -x VALUE), the common switches (--help, --quiet, --progress), "--" (all that follows are
 * arguments) and "-" (stdin, an argument); then the positional arguments, in order, by the
 * CLI_ARG(S) entries, and the required options. Returns 0, or EXIT_USAGE after a usage message
 * ("missing STORE", "unexpected argument 'X'", "missing -o MODEL", ...). --help prints the
 * manual's part on stdout and exits: 0, or EXIT_FAIL when the manual leaves an entry of TABLE
 * out. argv[1..] is reordered. */
int cli_parse(const cli_option *table, int argc, char **argv);
/* A CLI_CALL for --format of document inputs: field is a jsmf_format. */
int cli_format_option(const cli_option *o, const char *value);

/* Progress on stderr: redrawn at most ~5 times a second, only when cli_progress. */
void cli_progress_update(const char *what, double done, double total, const char *unit);
void cli_progress_done(void);
/* cli_progress_update as a library's progress callback (jsmf_step_progress_fn; arg unused). */
void cli_step_progress(void *arg, const char *what, double done, double total, const char *unit);

/* Close stdout and report a write error (full disk must not pass silently). */
int cli_finish_stdout(void);

/* One function per command (src/cli/cmd_*.c). */
int cmd_vocab(int argc, char **argv);
int cmd_ingest(int argc, char **argv);
int cmd_info(int argc, char **argv);
int cmd_merge(int argc, char **argv);
int cmd_copy(int argc, char **argv);
int cmd_export(int argc, char **argv);
int cmd_fit(int argc, char **argv);
int cmd_fdm(int argc, char **argv);
int cmd_topics(int argc, char **argv);
int cmd_diff(int argc, char **argv);
int cmd_infer(int argc, char **argv);
int cmd_eval(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_refine(int argc, char **argv);

/* What 'jsmf refine' and 'jsmf fit --refine / --corpus' share (cmd_refine.c): the refinement's
 * options at the CLI's defaults (its warnings and progress to stderr), and the lines that say
 * what a refinement did. */
#include "jsmf_refine.h"
void cli_refine_defaults(jsmf_refine_run_opts *r);
void cli_refine_said(const jsmf_refine_run_opts *r, const jsmf_refine_result *res);
#endif
