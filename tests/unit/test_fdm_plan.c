/* test_fdm_plan.c — the FDM run's memory plan (fdm_plan.c) on sources described by their sizes
 * only (nothing is read): a planned run keeps within --mem with the sampler in what the rest
 * leaves, a sampler of C's rows is thinned to its share while documents never are, a budget
 * below the least is refused naming the --mem to give (and that budget is planned), and the
 * million-word corpus of the out-of-core issue (N=799,169, K=200, 10M documents, nnz(H)=937M)
 * gets the figures formats/fdm.md quotes, a start released once used counted until then only (printed with JSMF_TEST_VERBOSE). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "fdm/fdm_internal.h"
#include "jsmf.h"
#include "jsmf_fdm.h"

#define MIB (1024.0 * 1024.0)

static void docs_source(jsmf_source *C, jsmf_doc_source *D, uint32_t n, uint64_t m, uint64_t nnz)
{
    memset(C, 0, sizeof *C), memset(D, 0, sizeof *D);
    *D = (jsmf_doc_source){.n = n, .n_docs = m, .nnz = nnz, .tokens = nnz, .total = 1};
    C->n = n, C->docs = D;
}

static void rows_source(jsmf_source *C, uint32_t n, uint64_t nnz)
{
    memset(C, 0, sizeof *C);
    C->n = n, C->nnz = nnz;
}

static int plan(const jsmf_source *C, uint32_t k, uint64_t mem, int start, fdm_plan *pl)
{
    jsmf_fdm_opts o;
    jsmf_fdm_opts_init(&o);
    o.k = k, o.mem_budget = mem;
    int rc = fdm_plan_make(C, &o, start, pl);
    if (getenv("JSMF_TEST_VERBOSE"))
        printf("N=%u K=%u %s %s --mem %6.0fM: %s peak %7.0f MiB least %7.0f MiB sampler %7.0f "
               "MiB (share %7.0f MiB) thinned %d\n", C->n, k, C->docs ? "docs" : "rows",
               start == FDM_START_HELD ? "start held" : start ? "start released" : "cold",
               mem / MIB, rc ? "refused" : "planned", pl->peak / MIB, pl->least / MIB, pl->sampler / MIB, pl->sampler_budget / MIB, pl->thinned);
    return rc;
}

/* As the budget shrinks: within it whenever planned, the sampler's share what the rest leaves,
 * thinned only from rows, refused below the least with what to give, the least planned. */
static void check_budgets(const jsmf_source *C, uint32_t k, int start)
{
    fdm_plan pl;
    int refused = 0;
    double least = 0;
    for (uint64_t mem = (uint64_t)64 << 30; mem >= (4u << 20); mem = mem * 7 / 8) {
        int rc = plan(C, k, mem, start, &pl);
        if (rc) {
            CHECK(rc == JSMF_ENOMEM);
            CHECK(pl.least > (double)mem);
            CHECK(strstr(jsmf_errmsg(), "give --mem") != NULL);
            jsmf_error_clear();
            least = least > 0 ? least : pl.least;
            refused = 1;
            continue;
        }
        CHECK(!refused);
        CHECK(pl.peak <= (double)mem && pl.least <= pl.peak);
        CHECK(pl.sampler_budget > 0 && pl.sampler_budget <= mem);
        CHECK(pl.thinned == (pl.sampler > (double)pl.sampler_budget));
        CHECK(!pl.thinned || !C->docs);
    }
    CHECK(refused);
    CHECK(plan(C, k, (uint64_t)least + (1u << 20), start, &pl) == JSMF_OK);
}

int main(void)
{
    jsmf_source C;
    jsmf_doc_source D;
    docs_source(&C, &D, 20000, 20000, 1900000);
    check_budgets(&C, 20, FDM_START_HELD);
    check_budgets(&C, 20, FDM_START_RELEASED);
    check_budgets(&C, 120, FDM_START_NONE);
    rows_source(&C, 20000, 124902153);
    check_budgets(&C, 20, 0);
    /* a cold start's random starts hold a second state while they compete */
    fdm_plan cold, warm;
    docs_source(&C, &D, 100000, 200000, 19000000);
    fdm_plan released;
    CHECK(plan(&C, 100, 0, FDM_START_NONE, &cold) == JSMF_OK);
    CHECK(plan(&C, 100, 0, FDM_START_HELD, &warm) == JSMF_OK);
    CHECK(plan(&C, 100, 0, FDM_START_RELEASED, &released) == JSMF_OK);
    CHECK(cold.params == 2 * warm.params && warm.start > 0 && cold.start == 0);
    /* a start released once the iterate is made from it is not held through training */
    CHECK(released.peak < warm.peak && released.peak >= warm.peak - warm.start);
    /* the million-word corpus through its documents: the sampler alone holds 7.1 GiB, so the
     * run needs 13.1 GiB with a spectral start held through it (a library caller's) and 11.9 GiB
     * with the start released as jsmf_fdm_to_dir does: refused at 8 GiB, planned at the default
     * of a 24 GB machine (12 GiB) only with the start released */
    docs_source(&C, &D, 799169, 10000000, 937000000);
    CHECK(plan(&C, 200, (uint64_t)8 << 30, FDM_START_RELEASED, &warm) == JSMF_ENOMEM);
    jsmf_error_clear();
    CHECK(plan(&C, 200, (uint64_t)12 << 30, FDM_START_HELD, &warm) == JSMF_ENOMEM);
    jsmf_error_clear();
    CHECK(warm.least > 13.0 * 1024 * MIB && warm.least < 13.5 * 1024 * MIB);
    CHECK(plan(&C, 200, (uint64_t)12 << 30, FDM_START_RELEASED, &released) == JSMF_OK);
    CHECK(released.least > 11.5 * 1024 * MIB && released.least < 12.0 * 1024 * MIB);
    CHECK(plan(&C, 200, (uint64_t)16 << 30, FDM_START_HELD, &warm) == JSMF_OK);
    /* no budget: planned, never refused */
    CHECK(plan(&C, 200, 0, FDM_START_HELD, &warm) == JSMF_OK && warm.peak > 0 &&
          warm.sampler_budget == 0);
    CHECK_DONE();
}
