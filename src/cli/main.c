/* main.c — the jsmf program: global options, then dispatch to one command through the table
 * below (one source file per command, as git does). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "jsmf_comm.h"

static const cli_command commands[] = {
    {"vocab", cmd_vocab, "count words and write a curated vocabulary", 0},
    {"ingest", cmd_ingest, "accumulate word co-occurrence of inputs into a store", 1},
    {"info", cmd_info, "describe a store", 0},
    {"merge", cmd_merge, "combine stores built with the same vocabulary", 0},
    {"copy", cmd_copy, "back up a store at one checkpoint, also while an ingest writes it", 0},
    {"export", cmd_export, "write the normalised co-occurrence matrix as npy or MatrixMarket", 0},
    {"fit", cmd_fit, "fit topics with the rectified anchor word algorithm", 1},
    {"refine", cmd_refine, "refine a model's topics over the documents (EM for LDA)", 0},
    {"fdm", cmd_fdm, "fit the full dependence mixture model (CPU or CUDA)", 0},
    {"topics", cmd_topics, "print the topics of a model", 0},
    {"infer", cmd_infer, "topic mixtures of documents", 0},
    {"eval", cmd_eval, "quality metrics of a model", 0},
    {"report", cmd_report, "write a self-contained HTML report of a model", 0},
    {"diff", cmd_diff, "what changed between two models: topics, sizes, words", 0},
};
#define NCOMMANDS (sizeof commands / sizeof commands[0])

static void usage(FILE *f)
{
    fprintf(f, "usage: jsmf [--version] [--help] COMMAND [ARGS...]\n\n"
               "Topics and topic correlations from corpora larger than memory.\n\ncommands:\n");
    for (size_t i = 0; i < NCOMMANDS; i++)
        fprintf(f, "  %-8s %s\n", commands[i].name, commands[i].summary);
    fprintf(f, "\n'jsmf COMMAND --help' describes a command; 'man jsmf' the whole program.\n"
               "exit status: 0 success, 1 failure (bad input, I/O, numerics), 2 usage error.\n");
}

/* OpenMP's threads, between the parallel loops, wait without spinning unless the environment
 * says otherwise. libgomp reads OMP_WAIT_POLICY once, as it is loaded, so the program sets it
 * and starts itself again (same pid, same arguments; on failure it goes on as it is). Spinning
 * took the CPUs from the serial parts and from every other job: kjv's fit (K=50) on the 2-core
 * machine beside other jobs 11-13 s wall, 7-9 CPU s; passive 3.7-4.1 s, 2.4 CPU s. */
static void wait_passively(char **argv)
{
    if (getenv("OMP_WAIT_POLICY") || setenv("OMP_WAIT_POLICY", "passive", 0))
        return;
    execv("/proc/self/exe", argv);
}

int main(int argc, char **argv)
{
    wait_passively(argv);
    if (argc < 2) {
        usage(stderr);
        return EXIT_USAGE;
    }
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
        usage(stdout);
        return cli_finish_stdout();
    }
    if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V")) {
        printf("jsmf %s\n", jsmf_version());
        return cli_finish_stdout();
    }
    for (size_t i = 0; i < NCOMMANDS; i++) {
        if (strcmp(argv[1], commands[i].name))
            continue;
        static char prog[64];
        snprintf(prog, sizeof prog, "jsmf %s", commands[i].name);
        cli_prog = prog;
        int rank, ranks = jsmf_comm_launched(&rank);
        if (ranks > 1 && !commands[i].ranks) { /* every rank would write the same outputs */
            if (rank == 0)
                fprintf(stderr, "%s: runs on one process: run it without mpirun (ingest and "
                        "fit share their work among MPI ranks)\n", prog);
            return EXIT_USAGE;
        }
        int rc = commands[i].run(argc - 1, argv + 1);
        cli_comm_close(); /* MPI ranks finalise together */
        return rc;
    }
    fprintf(stderr, "jsmf: '%s' is not a command. See 'jsmf --help'.\n", argv[1]);
    return EXIT_USAGE;
}
