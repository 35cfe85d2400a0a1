/* test_fit_plan.c — the fit's memory plan (fit_plan.c) on sources described by their sizes only
 * (nothing is read): an accepted plan keeps within --mem, the choices come in their order as
 * the budget shrinks (P, Krylov blocks, the documents held), a budget below the least is
 * refused with a message naming what to give, and the million-word corpus of the out-of-core
 * issue (N=799,169, K=200, 10M documents, nnz(H)=937M) gets the figures formats/fit.md quotes
 * (printed with JSMF_TEST_VERBOSE). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "fit/fit_internal.h"
#include "jsmf.h"
#include "jsmf_fit.h"

#define MIB (1024.0 * 1024.0)

static int no_scan(void *ctx, jsmf_doc_fn fn, void *arg)
{
    (void)ctx, (void)fn, (void)arg;
    return JSMF_EINVAL;
}

static void source(jsmf_source *C, jsmf_doc_source *D, uint32_t n, uint64_t m, uint64_t nnz_h)
{
    memset(C, 0, sizeof *C), memset(D, 0, sizeof *D);
    *D = (jsmf_doc_source){.n = n, .n_docs = m, .nnz = nnz_h, .tokens = nnz_h, .total = 1,
                           .scan = no_scan, .bytes = nnz_h * 2};
    C->n = n, C->docs = D;
    C->nnz = (uint64_t)n * n / 5; /* a bound, as a store of documents gives */
}

static int plan(const jsmf_source *C, uint32_t k, uint64_t mem, fit_plan *pl)
{
    jsmf_fit_opts o;
    jsmf_fit_opts_init(&o, k);
    o.mem_bytes = mem;
    fit_start st = {0};
    st.ckpt = "unused.ckpt"; /* a fit that writes a model and its checkpoint */
    int rc = fit_plan_make(C, &o, 2, &st, pl);
    if (getenv("JSMF_TEST_VERBOSE"))
        printf("N=%u K=%u --mem %6.0fM: %s peak %7.0f MiB least %7.0f MiB depth %u P %d held "
               "%.0f MiB streamed %d\n", C->n, k, mem / MIB, rc ? "refused" : "planned",
               pl->peak / MIB, pl->least / MIB, pl->eig_depth, pl->keep_p, pl->held / MIB,
               pl->src_mem != 0);
    return rc;
}

/* As the budget shrinks: within it whenever planned, P let go before the blocks and before
 * the documents are streamed, refused below the least (and at every smaller budget) with what
 * to give, and the least itself planned. */
static void check_budgets(uint32_t n, uint64_t m, uint64_t nnz, uint32_t k)
{
    jsmf_source C;
    jsmf_doc_source D;
    source(&C, &D, n, m, nnz);
    fit_plan pl;
    int refused = 0;
    double least = 0;
    for (uint64_t mem = (uint64_t)64 << 30; mem >= (4u << 20); mem = mem * 7 / 8) {
        int rc = plan(&C, k, mem, &pl);
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
        CHECK(pl.eig_depth >= 1 && pl.eig_depth <= 4);
        CHECK(!pl.keep_p || pl.eig_depth == 4);
        CHECK(!pl.src_mem || !pl.keep_p);
    }
    CHECK(refused);
    CHECK(plan(&C, k, (uint64_t)least + (1u << 20), &pl) == JSMF_OK);
}

int main(void)
{
    check_budgets(20000, 40000, 4000000, 50);
    check_budgets(100000, 190000, 18981708, 100);
    check_budgets(799169, 10000000, 937000000, 200);
    /* the million-word corpus: 4 GiB (the old default) refused before any work, 8 GiB planned
     * (at the least, 8,176 MiB: one Krylov block, P made again, the factor from the
     * checkpoint, the documents streamed), 12 GiB with three blocks */
    jsmf_source C;
    jsmf_doc_source D;
    source(&C, &D, 799169, 10000000, 937000000);
    fit_plan pl;
    CHECK(plan(&C, 200, (uint64_t)4 << 30, &pl) == JSMF_ENOMEM);
    jsmf_error_clear();
    CHECK(plan(&C, 200, (uint64_t)8 << 30, &pl) == JSMF_OK && pl.eig_depth == 1);
    CHECK(plan(&C, 200, (uint64_t)12 << 30, &pl) == JSMF_OK && pl.eig_depth == 3);
    /* no budget: nothing planned, nothing refused */
    CHECK(plan(&C, 200, 0, &pl) == JSMF_OK && pl.peak == 0);
    CHECK_DONE();
}
