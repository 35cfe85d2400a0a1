/* test_fit_dir.c — jsmf_fit_to_dir, 'jsmf fit' as one library call: it writes the model
 * directory (rank 0's summary.json, the report's MPI line), refuses an existing directory
 * without JSMF_FIT_FORCE leaving it byte for byte as it was, and fails on every rank when the
 * input fails on one. Runs as one process and under mpirun -np 2 (tests/cli/mpi_comm.sh). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "check.h"
#include "fit_testutil.h"
#include "jsmf_comm.h"
#include "jsmf_fit.h"
#include "model/npy.h"
#include "mpi/comm.h"

static char *slurp(const char *dir, const char *name, long *len)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    *len = ftell(f);
    rewind(f);
    char *b = malloc(*len + 1);
    if (b && fread(b, 1, *len, f) != (size_t)*len)
        b[0] = 0;
    fclose(f);
    return b;
}

static int exists(const char *dir, const char *name)
{
    char path[512];
    struct stat st;
    snprintf(path, sizeof path, "%s%s%s", dir, name ? "/" : "", name ? name : "");
    return stat(path, &st) == 0;
}

/* The report as text: the MPI line is its last. */
static int report_says(const jsmf_fit_report *rep, const char *what)
{
    char buf[4096] = "";
    FILE *f = fmemopen(buf, sizeof buf - 1, "w");
    jsmf_fit_report_write(f, "t", rep);
    fclose(f);
    return strstr(buf, what) != NULL;
}

int main(void)
{
    jsmf_comm *c;
    CHECK_OK(jsmf_comm_open(&c));
    int rank = jsmf_comm_rank(c), size = jsmf_comm_size(c);
    char dir[256] = "/tmp/test_fit_dir.XXXXXX";
    if (rank == 0) {
        CHECK(mkdtemp(dir) != NULL);
        enum { N = 40, K = 4 };
        double B[N * K], A[K * K], C[N * N];
        tu_planted(N, K, 0.0, B, A, C);
        char path[300];
        snprintf(path, sizeof path, "%s/C.npy", dir);
        CHECK_OK(npy_write_f64(path, C, N, N));
    }
    CHECK_OK(comm_bcast(c, dir, sizeof dir, 0));
    char input[300], model[300], model2[300], nope[300];
    snprintf(input, sizeof input, "%s/C.npy", dir);
    snprintf(model, sizeof model, "%s/m", dir);
    snprintf(model2, sizeof model2, "%s/m2", dir);
    snprintf(nope, sizeof nope, "%s/nope.npy", dir);
    jsmf_fit_opts o;
    jsmf_fit_opts_init(&o, 4);
    o.threads = 1;
    jsmf_fit_report rep;

    /* a new directory: every rank gets the model, rank 0 writes it with its summary.json */
    jsmf_model *m = NULL;
    CHECK_OK(jsmf_fit_to_dir(input, model, 0, &o, c, &m, &rep));
    CHECK(m != NULL && m->k == 4 && rep.k == 4 && rep.ranks == size);
    CHECK(m && (rank == 0) == (m->summary_json != NULL));
    CHECK(report_says(&rep, "ranks: rank 0 sent") == (size > 1));
    jsmf_model_free(m);
    CHECK(rank != 0 || exists(model, "B.npy"));

    /* an input that fails on the last rank alone fails on all, before the directory is made;
     * the message is that rank's, the others print none (jsmf_comm_failed_elsewhere, which
     * stays set: this is the first failure) */
    int rc = jsmf_fit_to_dir(rank == size - 1 ? nope : input, model2, 0, &o, c, NULL, NULL);
    CHECK(rc == JSMF_ENOTFOUND);
    CHECK(jsmf_comm_failed_elsewhere(c) == (rank != size - 1));
    CHECK(!exists(model2, NULL));

    /* without the force flag the directory is refused on every rank and left as it was */
    long l1 = 0, l2 = 0, b1 = 0, b2 = 0;
    char *s1 = rank ? NULL : slurp(model, "summary.json", &l1);
    char *n1 = rank ? NULL : slurp(model, "B.npy", &b1);
    m = (jsmf_model *)1;
    CHECK(jsmf_fit_to_dir(input, model, 0, &o, c, &m, &rep) == JSMF_EEXIST);
    CHECK(m == NULL);
    if (rank == 0) {
        char *s2 = slurp(model, "summary.json", &l2), *n2 = slurp(model, "B.npy", &b2);
        CHECK(s1 && s2 && l1 == l2 && !memcmp(s1, s2, l1));
        CHECK(n1 && n2 && b1 == b2 && !memcmp(n1, n2, b1));
        CHECK(!exists(model, "rectified.npy"));
        free(s2), free(n2);
    }
    free(s1), free(n1);

    /* with the flags: replaced, the rectified C beside it; report and model not wanted */
    o.rectify = JSMF_RECTIFY_AP; /* the compressed iterate has no dense rectified C */
    CHECK_OK(jsmf_fit_to_dir(input, model, JSMF_FIT_FORCE | JSMF_FIT_SAVE_RECTIFIED, &o, c, NULL,
                             NULL));
    CHECK(rank != 0 || exists(model, "rectified.npy"));

    CHECK_OK(comm_barrier(c));
    if (rank == 0) {
        char cmd[300];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
        CHECK(getenv("KEEP") || system(cmd) == 0);
    }
    jsmf_comm_close(c);
    CHECK_DONE();
}
