/* fit_plan.c — the fit's memory, computed from N, K, C's size and --mem before anything large
 * is allocated, and the choices that keep it within --mem, or the refusal that names what it
 * needs (formats/fit.md, "Memory").
 *
 * The plan counts the arrays of N rows (a block of the eigensolver, the factor, B: each
 * N x columns doubles) and what the source holds (C's rows or the documents, kept in memory
 * only within half the budget, and their streaming buffers, sized from the budget). Small
 * arrays (K x K, a few N-vectors, a thread's chunk of rows) are counted too; the program, its
 * libraries and the allocator's slack are the allowance beside --mem (JSMF_MEM_ALLOWANCE). */
#include <string.h>

#include "core/error.h"
#include "fit_internal.h"

#define MIB (1024.0 * 1024.0)

static double blk(uint64_t rows, uint64_t cols)
{
    return (double)rows * (double)cols * sizeof(double);
}

/* A product's buffers: through the documents, held or not, their vectors (every document's,
 * at most mem / 16: fit_docs.c's HELD_SHARE) and the sums' chunk; streamed rows, row blocks of
 * C read from the store (mem / 32 of rows, twice). */
static double source_stream(const jsmf_source *C, uint32_t k, uint64_t mem, int docs,
                            double held)
{
    if (docs) {
        double vectors = (double)C->docs->n_docs * fit_first_cols(k) * sizeof(double);
        double most = (double)mem / 16;
        return (vectors < most ? vectors : most) + (double)fit_docs_chunk_bytes(mem);
    }
    return held > 0 ? 0 : (double)mem / 16;
}

/* The compressed rectification (the default): phases of the first eigendecomposition, the
 * steps, and the topics, each with what stays from before. */
static void plan_compressed(const jsmf_source *C, const jsmf_fit_opts *o, int nt, uint32_t ranks,
                            int warm, fit_plan *pl)
{
    uint64_t n = C->n, k = o->k, nl = (n + ranks - 1) / ranks;
    uint64_t p1 = fit_first_cols(o->k), p2 = fit_step_cols(o->k);
    uint64_t l = o->compress_rows ? o->compress_rows : fit_compress_rows_default(o->k);
    l = l < n ? l : n;
    double vec = 16.0 * (double)n * sizeof(double); /* c, q2, row sums, repair sums, ... */
    double model = blk(n, k) + blk(n, 1) * 2 + blk(k, k) * 4;
    double prev = warm ? blk(n, k + 1) : 0; /* the previous model's factor (c_prev) */
    uint64_t chunk = nl < FIT_CHUNK ? nl : FIT_CHUNK; /* rows of a thread's chunks touched */
    double scratch1 = blk((uint64_t)nt * 2 * chunk, p1);
    double scratch2 = blk((uint64_t)nt * 2 * chunk, p2);
    double small1 = 4 * blk(4 * p1, 4 * p1), small2 = 4 * blk(p2, p2);
    double base = vec + model + prev + pl->held;
    /* the first eigendecomposition: its vectors U (in the steps' Qn, nl x p2) and blocks */
    for (uint32_t d = 4; d >= 1; d--)
        pl->eig[d] = base + blk(nl, p2) + (d + 1) * blk(nl, p1) + scratch1 + small1 + pl->stream;
    /* the steps: the iterate Y, the next Yn, the next start Qn and the solver's two blocks;
     * P (nl x l) and the factor for c_factor.npy (n x k) when kept */
    pl->steps = base + 2 * blk(nl, k) + 3 * blk(nl, p2) + scratch2 + small2;
    pl->p_bytes = blk(nl, l);
    /* the topics: Y whole on every rank, B's right-hand sides, T and Yb */
    pl->topics = base + blk(n, k) + 3 * blk(nl, k) + blk(l + k, k) +
                 blk((uint64_t)nt, 8 * k + 2 * k * k);
    /* the metrics against C: the iterate's Y still held, and their own arrays */
    pl->metrics = base + blk(nl, k) + (double)fit_metrics_c_bytes(C->n, o->k, 1);
}

/* AP, DR and none through C's rows: the factor, its copies, depth 6 (formats/fit.md). */
static void plan_stream(const jsmf_source *C, const jsmf_fit_opts *o, int nt, fit_plan *pl)
{
    uint64_t n = C->n, k = o->k, r = k + 1, p1 = fit_first_cols(o->k), p2 = fit_step_cols(o->k);
    double base = 16.0 * (double)n * sizeof(double) + blk(n, k) * 2 + pl->held;
    uint64_t chunk = n < FIT_CHUNK ? n : FIT_CHUNK;
    double eig = 7 * blk(n, p1) + blk((uint64_t)nt * 2 * chunk, p1) + pl->stream;
    double steps = 3 * blk(n, p2);
    double rows = 2.0 * fit_block_rows(C->n, o->mem_bytes, nt) * (double)n * sizeof(double);
    double iter = blk(n, k) + 3 * blk(n, r) + blk(n, p2);
    double top = base + iter + rows + (eig > steps ? eig : steps);
    for (uint32_t d = 1; d <= 4; d++)
        pl->eig[d] = top;
    pl->steps = pl->topics = top;
    pl->metrics = base + blk(n, k) + (double)fit_metrics_c_bytes(C->n, o->k, 1);
}

static void phases(const jsmf_source *C, const jsmf_fit_opts *o, int nt, uint32_t ranks,
                   int warm, fit_plan *pl)
{
    if (pl->method_compressed)
        plan_compressed(C, o, nt, ranks, warm, pl);
    else
        plan_stream(C, o, nt, pl);
}

/* The metrics' phase where they run: C held (streamed, the fit leaves them to jsmf eval), not
 * asked away (no_metrics: a refinement replaces the model), not left out by the plan. */
static double metrics_phase(const fit_plan *pl, int no_metrics)
{
    return no_metrics || pl->held <= 0 || pl->c_metrics_out ? 0 : pl->metrics;
}

static double peak_of(const fit_plan *pl, uint32_t depth, int keep_p)
{
    double later = (keep_p ? pl->p_bytes : 0) + (pl->factor_from_ckpt ? 0 : pl->factor_bytes);
    double e = pl->eig[depth], s = pl->steps + later, t = pl->topics + later;
    double m = e > s ? e : s, x = metrics_phase(pl, pl->no_metrics);
    m = m > t ? m : t;
    return m > x ? m : x;
}

/* The most Krylov blocks, from 4 down to `least`, within mem with P not kept (0: none). */
static uint32_t deepest_within(const fit_plan *pl, uint32_t least, uint64_t mem)
{
    for (uint32_t d = 4; d >= least; d--)
        if (peak_of(pl, d, 0) <= (double)mem)
            return d;
    return 0;
}

/* The choices, cheapest in time first: the factor for c_factor.npy read back from the
 * checkpoint when the model is written rather than held (one read of N x K), P made again by
 * each product rather than kept (the same bits), then fewer Krylov blocks in C's
 * eigendecomposition (down to 2, then 1: more products for the same accuracy), then C's rows
 * or documents read from the store on every product rather than held. */
static void choose(const jsmf_source *C, const jsmf_fit_opts *o, int nt, uint32_t ranks,
                   int warm, int ckpt, fit_plan *pl)
{
    uint64_t mem = o->mem_bytes;
    int docs = 0;
    pl->held = fit_source_held(C, mem, o->products, &docs);
    pl->stream = source_stream(C, o->k, mem, docs, pl->held);
    pl->docs = docs;
    phases(C, o, nt, ranks, warm, pl);
    pl->eig_depth = 4, pl->keep_p = pl->method_compressed;
    /* the metrics against C, diagnostics that 'jsmf eval --store' also computes, are left out
     * when their own phase exceeds the budget: no other choice makes them smaller */
    pl->c_metrics_out = metrics_phase(pl, pl->no_metrics) > (double)mem;
    if (peak_of(pl, 4, 1) <= (double)mem)
        goto done;
    pl->factor_from_ckpt = ckpt && pl->factor_bytes > 0;
    if (peak_of(pl, 4, 1) <= (double)mem)
        goto done;
    pl->keep_p = 0;
    if ((pl->eig_depth = deepest_within(pl, 2, mem)))
        goto done;
    if (pl->held > 0) { /* stream the source: its buffers instead of all of it */
        uint64_t m = mem;
        for (int i = 0; i < 3 && pl->held > 0; i++) { /* a budget whose half it exceeds */
            m = (uint64_t)(2 * pl->held) - 1;
            pl->held = fit_source_held(C, m, o->products, &docs);
        }
        pl->src_mem = m, pl->docs = docs;
        pl->stream = source_stream(C, o->k, m, docs, pl->held);
        phases(C, o, nt, ranks, warm, pl);
        if ((pl->eig_depth = deepest_within(pl, 1, mem)))
            goto done;
    }
    pl->eig_depth = 1;
done:
    pl->peak = peak_of(pl, pl->eig_depth, pl->keep_p);
    pl->least = peak_of(pl, 1, 0);
}

int fit_plan_make(const jsmf_source *C, const jsmf_fit_opts *o, int nt, const fit_start *st,
                  fit_plan *pl)
{
    memset(pl, 0, sizeof *pl);
    pl->mem = o->mem_bytes;
    if (!o->mem_bytes) /* no budget: plan the defaults, never refuse */
        return JSMF_OK;
    const fit_rectify_method *rm = fit_rectify_method_get(o->rectify);
    pl->method_compressed = rm->factored;
    uint32_t ranks = o->comm ? (uint32_t)jsmf_comm_size(o->comm) : 1;
    /* the factor of C kept for the model directory (st: a fit that writes one) */
    pl->factor_bytes = st && rm->factored ? blk(C->n, o->k) : 0;
    nt = nt > 0 ? nt : 1;
    int warm = st && st->c_prev;
    pl->no_metrics = st && st->no_c_metrics;
    /* the choices are one process's, so that every number of ranks makes its model; a rank's
     * peak is then its share of the N-row blocks */
    choose(C, o, nt, 1, warm, st && st->ckpt, pl);
    if (ranks > 1) {
        phases(C, o, nt, ranks, warm, pl);
        pl->peak = peak_of(pl, pl->eig_depth, pl->keep_p);
        pl->least = pl->least < pl->peak ? pl->least : pl->peak;
    }
    if (pl->peak <= (double)o->mem_bytes)
        return JSMF_OK;
    double need = pl->least / MIB;
    return jsmf_error(JSMF_ENOMEM,
                      "fit: needs %.0f MiB at the least (N=%u words, K=%u: blocks of N x %u "
                      "doubles for C's eigendecomposition and the iterate), more than --mem "
                      "%.0fM: give --mem %.0fM or more, fewer topics (-k), or fewer words "
                      "(jsmf vocab --max-words, then a new store)",
                      need, C->n, o->k, fit_first_cols(o->k), (double)o->mem_bytes / MIB,
                      need + 1);
}
