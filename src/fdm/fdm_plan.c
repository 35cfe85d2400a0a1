/* fdm_plan.c — the FDM run's host memory, computed from N, K, the batch and the pair sampler's
 * source before anything large is allocated: the sampler gets what --mem leaves (a sampler of
 * C's rows is thinned to it), or the run refuses naming the --mem it needs (formats/fdm.md,
 * "Memory").
 *
 * Phases: the sampler's build (its tables and scratch), training (the sampler, the iterate and
 * its Adam moments, the best of the random starts beside it while they compete, the CPU back
 * end's scratch, the held-out pairs) and the finish (the iterate, the result's B and A and the
 * softmax's scratch that makes them; the sampler and the back end freed before). A warm
 * start's B and A stay through them all when the caller holds them, or only until the iterate
 * is made from them (jsmf_fdm_to_dir frees them then). The program, its libraries and the
 * allocator's slack are the allowance beside --mem (JSMF_MEM_ALLOWANCE). */
#include <string.h>

#include "core/error.h"
#include "fdm_internal.h"

#define MIB (1024.0 * 1024.0)

static double nk_doubles(uint64_t n, uint64_t k)
{
    return (double)n * (double)k * sizeof(double);
}

static double max2(double a, double b)
{
    return a > b ? a : b;
}

int fdm_plan_make(const jsmf_source *src, const jsmf_fdm_opts *p, int start, fdm_plan *pl)
{
    memset(pl, 0, sizeof *pl);
    uint64_t n = src->n, k = p->k, kk = k * k;
    uint64_t least_tables, scratch;
    pl->sampler = (double)fdm_sampler_plan(src, &least_tables, &scratch);
    pl->build = (double)scratch;
    int with_start = start != FDM_START_NONE;
    pl->start = with_start ? nk_doubles(n, k) + nk_doubles(k, k) : 0;
    double kept = start == FDM_START_HELD ? pl->start : 0; /* through training and finish */
    double state = 3 * (nk_doubles(n, k) + nk_doubles(k, k)); /* w, a and their moments */
    int compete = !with_start && p->starts > 1;
    pl->params = state * (compete ? 2 : 1);
    pl->backend = (double)fdm_cpu_bytes(src->n, p->k, p->batch) + 8.0 * ((double)p->heldout + 1);
    pl->finish = (double)fdm_cpu_bytes(src->n, p->k, 1) + nk_doubles(n, k) + 8.0 * (double)kk;
    /* besides the sampler's tables: its build, the iterate made from the start (the held-out
     * pairs drawn), and training; the finish holds neither the sampler nor the back end, only
     * one state and the result */
    double made = pl->start + state + 8.0 * ((double)p->heldout + 1);
    double train = kept + pl->params + pl->backend;
    double finish = kept + state + pl->finish;
    double beside = max2(max2(pl->start + pl->build, made), train);
    pl->least = max2(beside + (double)least_tables, finish);
    uint64_t mem = p->mem_budget;
    if (!mem) { /* no budget: plan the whole sampler, never refuse */
        pl->peak = max2(beside + pl->sampler, finish);
        return JSMF_OK;
    }
    if (pl->least > (double)mem) {
        double need = pl->least / MIB;
        return jsmf_error(JSMF_ENOMEM,
                          "fdm: needs %.0f MiB at the least (N=%u words, K=%u: the parameters, "
                          "their Adam moments and the back end's arrays of N x K doubles, and "
                          "the pair sampler%s, %.0f MiB), more than --mem %.0fM: give --mem "
                          "%.0fM or more, fewer topics (-k), or fewer words (jsmf vocab "
                          "--max-words, then a new store)",
                          need, src->n, p->k, src->docs ? "'s documents" : " at one entry a row",
                          (double)least_tables / MIB, (double)mem / MIB, need + 1);
    }
    pl->sampler_budget = mem - (uint64_t)beside;
    pl->thinned = pl->sampler > (double)pl->sampler_budget;
    pl->peak = max2(beside + (pl->thinned ? (double)pl->sampler_budget : pl->sampler), finish);
    return JSMF_OK;
}
