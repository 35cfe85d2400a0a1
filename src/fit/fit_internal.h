/* fit_internal.h — what the fit files share: the rectified matrix as an interface over its
 * representations, deterministic blocked reductions, and the small dense helpers. */
#ifndef JSMF_FIT_INTERNAL_H
#define JSMF_FIT_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "jsmf.h"
#include "mpi/comm.h"
#include "jsmf_fit.h"
#include "core/clock.h"
#include "core/hot.h"

/* Rows per chunk of every reduction over words: fixed, so sums never depend on thread count. */
#define FIT_CHUNK 2048

/* The products' hot loops (fit_docs.c) are bound by how many loads are in flight (a 20M-row
 * gather measured 1.5x faster in AVX2): core/hot.h. */
#define FIT_HOT JSMF_HOT

/* What a fit may start from and what it leaves for the next one (fit_start.c; formats/fit.md).
 *  - warm start (jsmf fit --previous): c_prev (owned), the previous model's rank-kp factor of
 *    its C (Y0 Y0^T ~ C: c_factor.npy, or B A^(1/2) for a model without it), its rows mapped
 *    onto this C's words (zero rows for words it lacked);
 *  - ckpt: a directory keeping the first eigendecomposition of C (NULL: none), so that a killed
 *    fit resumes after it; key: what it must have been computed with;
 *  - c_out: this fit's factor of C (n x k, malloc'ed, whole), for the model directory.
 * Only the compressed rectification reads or fills it. */
typedef struct fit_start {
    double *c_prev;
    uint32_t kp;
    const char *ckpt;
    char key[256];
    int resumed;   /* out: the eigendecomposition came from ckpt */
    int no_c_metrics; /* JSMF_FIT_NO_C_METRICS */
    double *c_out; /* out */
    int ckpt_saved;      /* out: ckpt holds this fit's U and lam */
    int c_out_from_ckpt; /* out: c_out not kept (the plan needed its memory): made from ckpt */
} fit_start;
/* c_out made from the checkpoint's U and lam (n x k), for c_factor.npy: NULL where it does
 * not read back. */
double *fit_ckpt_factor(const fit_start *st, uint32_t n, uint32_t k);
/* Y = U diag(sqrt(max(lam, 0))) (n x k; Y may be U). */
void fit_psd_factor(uint32_t n, uint32_t k, const double *U, const double *lam, double *Y);
void fit_start_clear(fit_start *st);
/* The factor of the previous model at `path` (loaded as `prev`) mapped onto the n words of
 * `v` by string (NULL v: by row, when the previous N is n): st->c_prev and kp. Errors:
 * JSMF_EFORMAT naming a c_factor.npy that does not read or has another row count than N. */
int fit_start_previous(fit_start *st, const char *path, const jsmf_model *prev,
                       const jsmf_vocab *v, uint32_t n);
/* The names of the factor files in a MODEL directory (formats/fit.md). */
#define FIT_C_FACTOR "c_factor.npy"
/* jsmf_fit with a start (NULL: jsmf_fit itself). */
int fit_run(const jsmf_source *C, const jsmf_vocab *vocab, const jsmf_fit_opts *opts,
            fit_start *st, jsmf_model **out, jsmf_fit_report *rep);
/* The checkpoint of the eigendecomposition: U (n x k) and lam (k) with the applies it took,
 * written into st->ckpt (created; key.txt last) and read back when its key matches. */
int fit_ckpt_save(const fit_start *st, uint32_t n, uint32_t k, const double *U,
                  const double *lam, uint32_t applies);
int fit_ckpt_load(const fit_start *st, uint32_t n, uint32_t k, double *U, double *lam,
                  uint32_t *applies);
/* Deterministic reductions over the long dimension n (fixed chunks, summed in order). */
void fit_gemm_tn(uint32_t n, uint32_t p, uint32_t q, const double *A, const double *B, double *C);

/* The rows of an n-row array (a block of vectors, the factor) this rank holds in an MPI job:
 * [r0, r1), every rank's range starting at starts[rank] (starts[size] = n), each start a
 * multiple of FIT_CHUNK, so a rank holds whole chunks of the reductions above and a reduction
 * over ranks adds the same chunk partials in the same order as one process: results are equal
 * bit for bit for any number of ranks. comm NULL: one process (or a replicated array), all n. */
typedef struct fit_part {
    uint32_t n, r0, r1;
    const uint32_t *starts;
    jsmf_comm *comm;
} fit_part;
fit_part fit_part_whole(uint32_t n);
/* 1 when the rows are split over several ranks. */
int fit_part_split(const fit_part *L);
/* rc agreed by every rank of L (the worst of them; rc itself on one process). */
int fit_part_agree(const fit_part *L, int rc);
/* The rank whose range holds row i. */
int fit_part_owner(const fit_part *L, uint32_t i);
/* The chunks [*c0, *c1) this rank's rows cover. */
void fit_part_chunks(const fit_part *L, uint32_t *c0, uint32_t *c1);
/* part: one row of `width` partials per chunk of all n rows, this rank's chunks filled. Every
 * rank's chunks to every rank, then all added in chunk order into sum. */
int fit_part_add_chunks(const fit_part *L, double *part, size_t width, double *sum);
/* C (p x q) = A^T B over all n rows, from this rank's rows of A and B (nl x p, nl x q): the
 * chunk partials of every rank, added in chunk order (fit_gemm_tn on one process). */
int fit_gemm_tn_part(const fit_part *L, uint32_t p, uint32_t q, const double *A, const double *B,
                     double *C);
/* Every rank's rows of X (nl x width) into full (n x width) on every rank (X may be full's
 * own rows of this rank). */
int fit_part_gather(const fit_part *L, uint32_t width, const double *X, double *full);
int fit_part_gather_bytes(const fit_part *L, size_t row_bytes, const void *X, void *full);
/* Rows ids[0..m) (any order) of X (this rank's rows, w columns) into out (m x w) on every
 * rank, each from the rank that holds it. */
int fit_part_pick(const fit_part *L, const uint32_t *ids, uint32_t m, const double *X,
                  uint32_t w, double *out);
/* C (n x q) = A (n x p) * S (p x q), rows in parallel. */
void fit_gemm_nn(uint32_t n, uint32_t p, uint32_t q, const double *A, const double *S, double *C);
/* C (n x q) += alpha A (n x p) * S (p x q), rows in parallel (one dgemm a chunk, beta = 1). */
void fit_gemm_nn_acc(uint32_t n, uint32_t p, uint32_t q, double alpha, const double *A,
                     const double *S, double *C);
/* A (n x p) = A * S (S p x p) in place, bit for bit fit_gemm_nn's product. */
int fit_gemm_nn_inplace(uint32_t n, uint32_t p, double *A, const double *S);
double fit_sum_ordered(const double *x, uint64_t n);

/* A value and its row, ordered by value descending, then row ascending (a total order: the
 * same rows win whatever the sort). */
typedef struct {
    double v;
    uint32_t i;
} fit_ranked;
int fit_ranked_desc(const void *a, const void *b);

/* *delta = ||W1 G1 W1^T - W2 G2 W2^T||_F / ||W1 G1 W1^T||_F from (r x r) Gram matrices; W1,
 * W2 are this rank's rows of L (r columns), G1, G2 diagonal (NULL: the identity). */
int fit_factor_delta(const fit_part *L, uint32_t r, const double *W1, const double *g1,
                     const double *W2, const double *g2, double *delta);

/* ---- the rectified matrix R: an interface, one file per representation -------------------- */

/* R (N x N) is what the rectification hands on and all that the later steps read. It comes in
 * one of several representations, each its own file and table of operations:
 *  - dense (fit_rect_dense.c): R in memory, the dense path's (or a factored R that fits);
 *  - factor (fit_rect_factor.c): AP's streamed iterate scale * max(W diag(g) W^T, 0);
 *  - sparse (fit_rect_sparse.c): C's own rows, the unrectified C of --rectify none;
 *  - low rank (fit_compress.c): the compressed iterate, never generated as a whole.
 * The steps read R only through its operations (the fit_mat_* calls below), never by asking
 * which representation it is: where one does a step its own way, that is an operation or a
 * capability of its table, and an operation a table leaves NULL takes fit_mat.c's default. */
typedef struct fit_mat fit_mat;
typedef struct fit_plan fit_plan;

/* The rows the anchor methods read (fit.c's find_anchors): P_i = R_i / c_i for the rows of
 * part, either explicit (M, d columns, the rows of part from part.r0) or, M NULL, generated by
 * fit_mat_rows (d = n); unit: M's rows are already P_i (factor space, where the norms are the
 * rows' own). owned: what M points to when it was made for the anchors (the caller frees it). */
typedef struct fit_anchor_space {
    const double *M;
    double *owned;
    uint32_t d;
    fit_part part;
    int unit;
} fit_anchor_space;

typedef struct fit_mat_ops {
    /* Rows r0 .. r0+nb-1, dense, into out (nb x n); where they are generated through a clip,
     * the entries it clipped and their mass (else 0). Any row: after fit_mat_gather. */
    void (*rows)(const fit_mat *R, uint32_t r0, uint32_t nb, double *out, uint64_t *nneg,
                 double *negmass);
    /* The rows from r0 where they lie in memory (n each; passes read them in place), or NULL. */
    const double *(*rows_at)(const fit_mat *R, uint32_t r0);
    /* Z = R V on the rows of fit_mat_part (NULL: one pass over whole rows). */
    int (*apply)(const fit_mat *R, const double *V, uint32_t p, double *Z, uint64_t *nneg,
                 double *negmass);
    /* The end of the rectification, once: R as the later steps read it, summing to 1, and its
     * row sums c and sums of squares q2 (n each, on every rank); the clip that made it counted
     * in rep where it is generated through one. */
    int (*finish)(fit_mat *R, double *c, double *q2, jsmf_fit_report *rep);
    /* The anchors' rows (fit_anchor_space): exact, R's own (else a factor space may serve),
     * for a method that reads a row at a time (which may read rows lazily, each rank its
     * own). NULL: R's rows, in place where rows_at has them. */
    int (*anchor_space)(fit_mat *R, const double *c, int exact, int row_at_a_time,
                        fit_anchor_space *sp);
    /* The anchors S (k) repaired as R's other rows are, c and q2 after; S NULL: R as the
     * anchors were found in (NULL: nothing to repair). */
    int (*repair_anchors)(fit_mat *R, const uint32_t *S, uint32_t k, double *c, double *q2);
    /* RS (the rows of L x k) = R's columns S, and Css (k x k) = R_SS on every rank (NULL: from
     * the rows S, whole). */
    int (*anchor_cols)(const fit_mat *R, const fit_part *L, const uint32_t *S, uint32_t k,
                       double *RS, double *Css);
    /* The rows of every n-row block (apply's V and Z) this rank holds (NULL: all), and the
     * call that gives each rank all of them (NULL: nothing to do). */
    fit_part (*part)(const fit_mat *R);
    int (*gather)(fit_mat *R);
    void (*free)(void *state);
    /* R V costs far less than a pass over R's rows (C's nonzeros, the compressed iterate's
     * O(N l K)): a step that needs only the product takes it. */
    int cheap_product;
    /* The passes over C or generated rows a product counts in the report (0: C's rows in
     * memory). */
    int product_passes;
    /* --anchor-space auto takes the factor space (the compressed iterate: on debdesc the same
     * anchors at a fiftieth of the time, K = 50: 0.03 s against 1.7 s). */
    int factor_space_anchors;
} fit_mat_ops;

struct fit_mat {
    const fit_mat_ops *ops;
    void *state;      /* the representation's, freed by ops->free */
    uint32_t n;
    uint32_t block;   /* rows per generated block */
    int threads;
    /* what the rectification kept of C, whatever R is: */
    struct fit_csrc *src; /* C, in memory (for the metrics) */
    double *c_unigram;    /* C's row sums, where R's may leave a word without mass (owned) */
    int c_streamed;       /* C is read from its source on every pass: the metrics against C are
                           * left to 'jsmf eval' (the compressed iterate) */
    int c_metrics_out;    /* the plan left them out: their arrays exceed --mem */
};

void fit_mat_free(fit_mat *m);
/* The operations of the table, or their defaults. */
void fit_mat_rows(const fit_mat *m, uint32_t r0, uint32_t nb, double *out, uint64_t *nneg,
                  double *negmass);
int fit_mat_apply(const fit_mat *m, const double *V, uint32_t p, double *Z, uint64_t *nneg,
                  double *negmass);
int fit_mat_finish(fit_mat *m, double *c, double *q2, jsmf_fit_report *rep);
int fit_mat_anchor_space(fit_mat *m, const double *c, int exact, int row_at_a_time,
                         fit_anchor_space *sp);
int fit_mat_repair_anchors(fit_mat *m, const uint32_t *S, uint32_t k, double *c, double *q2);
int fit_mat_anchor_cols(const fit_mat *m, const fit_part *L, const uint32_t *S, uint32_t k,
                        double *RS, double *Css);
fit_part fit_mat_part(const fit_mat *m);
int fit_mat_gather(fit_mat *m);

/* What the representations share (fit_mat.c). A pass over R in row blocks, blocks in
 * parallel; fn gets the dense rows of one block and the thread's scratch. Per-block outputs
 * must go to disjoint places (per-row arrays). */
typedef void (*fit_block_fn)(void *arg, uint32_t r0, uint32_t nb, const double *rows, int tid);
int fit_mat_pass(const fit_mat *m, fit_block_fn fn, void *arg, uint64_t *nneg, double *negmass);
/* Z = R V by one pass over whole rows (the default product). */
int fit_mat_apply_rows(const fit_mat *m, const double *V, uint32_t p, double *Z, uint64_t *nneg,
                       double *negmass);
/* c and q2 of whole rows, by one pass (the clip's count and mass as fit_mat_pass gives them). */
int fit_mat_sums_rows(const fit_mat *m, double *c, double *q2, uint64_t *nneg, double *negmass);
/* Factor space of a factored R ~ scale * W diag(g) W^T (WG = W diag(g); W, WG this rank's rows
 * of L, r columns): v_i with <v_i, v_j> = <R_i, R_j> / (c_i c_j) exactly where nothing is
 * clipped (this rank's rows, malloc'ed; NULL when out of memory or a collective failed). */
double *fit_factor_space(const fit_part *L, uint32_t r, const double *W, const double *WG,
                         double scale, const double *c);

/* The representations' constructors. Dense: R takes X (n x n, freed with R). */
void fit_rect_dense(fit_mat *R, uint32_t n, double *X);
/* R made dense in memory by one pass over its rows (the clip's count and mass in *nneg,
 * *negmass), its former representation freed; JSMF_ENOMEM leaves R as it was. */
int fit_rect_dense_adopt(fit_mat *R, uint64_t *nneg, double *negmass);
/* Every entry of R, made dense by fit_rect_dense_adopt, divided by tot (Alg. 1 line 9). */
void fit_rect_dense_divide(fit_mat *R, double tot);
/* Factor: AP's iterate (fit_rectify.c's steps write W, WG and g in place), made dense by its
 * finish when N x N takes at most half of mem. */
typedef struct fit_factor {
    uint32_t r;        /* W = [U, 1] (n x r), WG = W diag(g) */
    double *W, *WG, *g;
    double scale;
    uint64_t mem;
} fit_factor;
/* R as a factor of n x r (W, WG and g allocated, scale 1); *f: its factor. */
int fit_rect_factor(fit_mat *R, uint32_t n, uint32_t r, uint64_t mem, fit_factor **f);
/* Sparse: C's own rows (CSR) as R. */
int fit_rect_sparse_load(const jsmf_source *C, fit_mat *R);

/* The representations a rectified R can be re-expressed in, by name (fit_methods.c): tests
 * run the steps after the rectification through one (JSMF_TEST_FIT_REPR). Unknown name:
 * JSMF_EINVAL listing the table. */
typedef struct fit_repr {
    const char *name;
    int (*adopt)(fit_mat *R);
} fit_repr;
int fit_repr_adopt(fit_mat *R, const char *name);
int fit_rect_dense_as(fit_mat *R);

/* Orthonormalise the columns of Q (this rank's rows of L, p columns) in place (SVQB twice, the
 * Gram matrices reduced over ranks); *rank gets the rank kept (the columns beyond it are
 * zeroed). Scratch is a row chunk a thread, never n rows. */
int fit_orth_part(const fit_part *L, uint32_t p, double *Q, uint32_t *rank);

/* Symmetric eigendecomposition of a small p x p matrix: ascending values w, vectors in A's
 * columns (row-major). Returns LAPACK info. */
int fit_syev(uint32_t p, double *A, double *w);

/* Top-K algebraic eigenpairs of the symmetric operator apply(ctx, V, p, Z) (Z = A V), by block
 * Krylov (depth blocks of p columns) with Rayleigh-Ritz and restarts from a power step, warm-
 * started from Q0 (n x p0 columns, may be NULL). Stops when every wanted Ritz pair has a residual
 * below tol times the largest |Ritz value| of the block (tol_kth: times the K-th Ritz value, the
 * scale an eigendecomposition of C needs, whose top eigenvalue dwarfs the K-th), or, with
 * ritz_change, when no wanted Ritz value moved by more than that since the previous cycle; or
 * after maxit cycles. U (n x k), lam (k, descending); next (n x p, may be NULL) gets A applied
 * to the last Ritz vectors: the warm start that advances the subspace by one power step. Every
 * n-row block (Q0, U, next, and V and Z of apply) holds the rows of L this rank holds.
 * ws (may be NULL): the solver's n-row blocks kept from one call to the next, for a caller that
 * calls it once per step (the rectification): blocks allocated and freed on every call were
 * faulted in page by page each time, which cost more than the arithmetic of a step
 * (tools/bench/fit-results.md, "Rectification steps"). Results never depend on it. */
typedef int (*fit_apply_fn)(void *ctx, const double *V, uint32_t p, double *Z);
typedef struct fit_eig_ws fit_eig_ws;
fit_eig_ws *fit_eig_ws_new(void);
void fit_eig_ws_free(fit_eig_ws *ws);
/* The n-row blocks ws holds (depth + 1 after a solve of that depth). */
uint32_t fit_eig_ws_blocks(const fit_eig_ws *ws);
typedef struct fit_eig_opts {
    uint32_t k, p, depth, maxit;
    const double *Q0;
    uint32_t p0;
    double tol;
    int tol_kth;
    uint64_t seed;
    int ritz_change;
    fit_eig_ws *ws;
    double within_tol; /* > 0: also stop inside a cycle once no wanted Ritz value moves by more
                        * than this (of the K-th) between depths: where a product is a pass */
    const struct fit_eig_ckpt *ckpt; /* a checkpoint between cycles (NULL: none) */
} fit_eig_opts;
#define FIT_EIG_CHANGES 32
typedef struct fit_eig_result {
    uint32_t applies; /* products with the operator */
    uint32_t cycles_resumed; /* cycles read back from a checkpoint (0: none) */
    double resid;     /* the largest relative residual of the wanted pairs, as the test reads it */
    /* the first FIT_EIG_CHANGES products' within-cycle changes (within_tol > 0; NaN after a
     * cycle's first product: nothing to compare) and each cycle's change from the one before
     * (ritz_change; NaN for the first), both of the K-th Ritz value */
    uint32_t n_within, n_between;
    double within[FIT_EIG_CHANGES], between[FIT_EIG_CHANGES];
} fit_eig_result;
/* The solver between two cycles: what a checkpoint keeps for a resumed solve to go on with
 * the same bits (fit_eig.c); prev (k) and V0 (nl x p, the next cycle's first block) are the
 * solver's own arrays. */
typedef struct fit_eig_state {
    uint32_t it, applies; /* cycles done, products made */
    uint64_t rng;
    double early;
    double *prev;
    fit_eig_result rec;
    double *V0;
} fit_eig_state;
/* save keeps the state after a cycle of at least min_secs (a failure only costs the resume);
 * load fills it (1) from a checkpoint of this very solve, or leaves it (0). */
typedef struct fit_eig_ckpt {
    void *ctx;
    void (*save)(void *ctx, const fit_eig_state *s, uint32_t nl, uint32_t p, uint32_t k);
    int (*load)(void *ctx, fit_eig_state *s, uint32_t nl, uint32_t p, uint32_t k);
    double min_secs;
} fit_eig_ckpt;
/* The first eigendecomposition's state between two of its cycles kept in st->ckpt (cycle.bin,
 * keyed as key.txt is): a kill within the decomposition resumes from the last cycle kept
 * (fit_start.c). Cycles of at least FIT_CKPT_CYCLE_SECS are kept (JSMF_TEST_FIT_CKPT_CYCLES=1:
 * every one). */
void fit_ckpt_cycles(fit_start *st, fit_eig_ckpt *out);
#define FIT_CKPT_CYCLE_SECS 30.0
int fit_eig_topk(fit_apply_fn apply, void *ctx, const fit_part *L, const fit_eig_opts *e,
                 double *U, double *lam, fit_eig_result *res, double *next);

/* Random numbers that do not depend on threads. */
uint64_t fit_rng_next(uint64_t *s);
double fit_rng_gauss(uint64_t *s);

/* Euclidean projection onto the probability simplex (sort-based). */
void fit_simplex_project(uint32_t k, const double *v, double *out, double *scratch);

/* Per-word solvers of min 1/2 y^T H y - r^T y over the simplex. */
typedef struct fit_snls {
    uint32_t k;
    const double *H;     /* k x k Gram of the anchor rows */
    const double *Hinv;  /* pseudo-inverse of H (ADMM start) */
    const double *F;     /* (gamma H + I)^-1 (ADMM) */
    double lambda, gamma, tol;
    uint32_t maxit;
} fit_snls;
uint32_t fit_snls_admm(const fit_snls *s, const double *r, double *y, double *work);
/* ADMM for m words r[0..m) -> y[0..m), iters[0..m) (as fit_snls_admm returns), several at a
 * time; each word's y depends on its own r only. work: fit_snls_admm_many_work(k) doubles. */
void fit_snls_admm_many(const fit_snls *s, uint32_t m, const double *const *r, double *const *y,
                        uint32_t *iters, double *work);
size_t fit_snls_admm_many_work(uint32_t k);
uint32_t fit_snls_expgrad(const fit_snls *s, const double *r, double *y, double *work);
uint32_t fit_snls_activeset(const fit_snls *s, const double *r, double *y, double *work);
/* KL: min KL(v || T^T y) with T (k x n) the row-normalised anchor rows. */
uint32_t fit_snls_kl(const fit_snls *s, const double *T, uint32_t n, const double *v, double *y,
                     double *work);

/* Anchors: Alg. 2 on the rows P_i (dim d) given by row(i). */
typedef struct fit_rows_ops {
    void *ctx;
    uint32_t n, d;
    void (*row)(void *ctx, uint32_t i, double *out);     /* P_i, length d */
    const double *norms2;                                /* ||P_i||^2 */
    const unsigned char *cand;                           /* candidate flags */
    const fit_part *part; /* NULL: row() gives any row; else only this rank's rows of part (the
                             pivot's row travels from its rank; the same anchors for any P) */
} fit_rows_ops;
int fit_anchors_qr(const fit_rows_ops *ops, uint32_t k, uint32_t *S);
/* FastAnchorWords (Arora et al. 2013 Alg. 4) on explicit points Y (n x d). */
int fit_anchors_fast(uint32_t n, uint32_t d, const double *Y, const unsigned char *cand,
                     uint32_t k, uint32_t *S);


/* Products C V with the original C (fit_source.c): cached in memory when it fits half of `mem`,
 * streamed from the source otherwise; float32 arithmetic when `single` and C does not fit in
 * double (fit_csrc_exact tells). fit_csrc_apply is a
 * fit_apply_fn. Row sums and sums of squares of C are known after the first read. */
typedef struct fit_csrc fit_csrc;
int fit_csrc_open(const jsmf_source *C, uint64_t mem, int nt, int single, int products,
                  jsmf_comm *comm, jsmf_step_progress_fn progress, void *parg,
                  fit_csrc **out);
void fit_csrc_close(fit_csrc *s);
/* Rows `ids` (m of them) of C, dense, into out (m x n); read from memory or in one streamed
 * scan, which also gives the row statistics (ids NULL: only that). */
int fit_csrc_rows(fit_csrc *s, const uint32_t *ids, uint32_t m, double *out);
/* How many reads of C the caller expects (for the progress line's total). */
void fit_csrc_plan(fit_csrc *s, uint32_t passes);
int fit_csrc_apply(void *ctx, const double *V, uint32_t p, double *Z);
/* The rows of C each rank holds in an MPI job (whole chunks, about equal entries). */
fit_part fit_csrc_part(const fit_csrc *s);
/* The same product on the rows of fit_csrc_part: V and Z hold this rank's rows only (V is
 * gathered from all ranks for the product; no rows of Z travel). A fit_apply_fn. */
int fit_csrc_apply_part(void *ctx, const double *V, uint32_t p, double *Z);
const double *fit_csrc_rowsums(const fit_csrc *s);
const double *fit_csrc_rowsq(const fit_csrc *s);
uint64_t fit_csrc_passes(const fit_csrc *s);
/* Scans of the source so far and their seconds. */
void fit_csrc_scans(const fit_csrc *s, uint64_t *scans, double *secs);
/* What the report says of reading C: the source's scans so far, their time and bytes. */
void fit_note_scans(jsmf_fit_report *rep, const fit_csrc *src, const jsmf_source *C);
/* 1 when C is in memory: its rows, or, through the documents, when C's rows would be (the fit
 * plans its passes and metrics alike either way). */
int fit_csrc_cached(const fit_csrc *s);
/* 1 when products use C's values in double (the metrics can read them). */
int fit_csrc_exact(const fit_csrc *s);
/* The row sums of squares of C made available (fit_csrc_rowsq): from the first read of C's
 * rows, or, through the documents, gathered once. */
int fit_csrc_need_rowsq(fit_csrc *s);
/* 1 when this reader goes through C's documents. */
int fit_csrc_docs(const fit_csrc *s);
/* The cost rule: 1 when a reader of C with budget `mem` takes its documents (fit_source.c). */
int fit_source_use_docs(const jsmf_source *C, uint64_t mem, int products);
/* The bytes fit_csrc_open holds in memory under mem (0: streamed), *docs whether through the
 * documents: the plan's count of the source. */
double fit_source_held(const jsmf_source *C, uint64_t mem, int products, int *docs);
/* Rows r0 <= i < r1 of a source, from its rows, or gathered from its documents when it has
 * no rows. */
int fit_source_scan(const jsmf_source *C, uint32_t r0, uint32_t r1, jsmf_row_fn fn, void *arg);

/* C through its documents (fit_docs.c): never formed, applied as (1/T) sum_m w_m (h_m h_m^T -
 * diag h_m) with each pair scaled by 1 / (M - max(a_i, a_j)). Opening reads the documents once
 * (checked; kept in memory when they take at most half of `mem`, else every use scans them).
 * Results do not depend on the thread count. */
typedef struct fit_docs fit_docs;
int fit_docs_open(const jsmf_doc_source *D, uint32_t n, uint64_t mem, int nt,
                  jsmf_step_progress_fn progress, void *parg, fit_docs **out);
void fit_docs_close(fit_docs *fd);
/* Bytes the documents take in memory, with the index by word the products build. */
uint64_t fit_docs_bytes(const jsmf_doc_source *D);
int fit_docs_cached(const fit_docs *fd);
/* Products keep the documents' vectors in float32 (sums stay in double): as C's rows go to
 * float32 when they do not fit in double, half the memory traffic. */
void fit_docs_single(fit_docs *fd, int single);
/* The in-memory product's cache tiles, in bytes (0: the default; UINT64_MAX: untiled): documents'
 * vectors a tile of the gather, rows of V a tile of the documents' sums, sums held at once, and
 * documents' vectors held at once (a run; default a sixteenth of the budget). The bits do not
 * depend on them (tests). */
void fit_docs_tiles(fit_docs *fd, uint64_t gather, uint64_t sum, uint64_t chunk, uint64_t held);
void fit_docs_scans(const fit_docs *fd, uint64_t *scans, double *secs);
/* Z (n x p, all rows) = C V. */
int fit_docs_apply(fit_docs *fd, const double *V, uint32_t p, double *Z);
/* Rows ids (m, any order, repeats allowed) of C, dense, into out (m x n): one read. */
int fit_docs_rows(fit_docs *fd, const uint32_t *ids, uint32_t m, double *out);
/* Rows r0 <= i < r1 of C in order, each gathered from the documents holding word i, as a
 * source's scan gives them (empty rows skipped); needs the documents in memory. */
int fit_docs_scan_rows(fit_docs *fd, uint32_t r0, uint32_t r1, jsmf_row_fn fn, void *arg);
/* Every row's sum of squares (n): sum_m nnz_m^2 multiply-adds; needs the documents in memory. */
int fit_docs_rowsq(fit_docs *fd, double *q);

/* The compressed iterate R = clip_I(Y Y^T) + omega 1 1^T (fit_compress.c), R's low-rank
 * representation once the rectification hands it on. Rows of Y split as L (every n-row argument below holds this rank's rows) until
 * fit_lowrank_gather gives each rank the whole factor; fit_lowrank_rows needs it whole. */
typedef struct fit_lowrank fit_lowrank;
fit_lowrank *fit_lowrank_new(const fit_part *L, uint32_t k, uint32_t l, int nt);
int fit_lowrank_gather(fit_lowrank *lr);
void fit_lowrank_free(fit_lowrank *lr);
int fit_lowrank_set(fit_lowrank *lr, const double *Y, const uint32_t *extra, uint32_t nextra);
int fit_lowrank_finish(fit_lowrank *lr, const uint32_t *extra, uint32_t nextra);
int fit_lowrank_row_stats(const fit_lowrank *lr, double *c, double *q2);
void fit_lowrank_rows(const fit_lowrank *lr, uint32_t r0, uint32_t nb, double *out);
int fit_lowrank_apply(void *ctx, const double *V, uint32_t p, double *Z);
/* Whether fit_lowrank_set keeps P = max(-Y Y_I^T, 0) for the products (default 1, when it
 * fits; 0: each product makes it again, the same bits — tests). */
void fit_lowrank_keep_p(fit_lowrank *lr, int keep);
int fit_lowrank_cols(const fit_lowrank *lr, const uint32_t *S, uint32_t m, double *RS);
uint32_t fit_lowrank_k(const fit_lowrank *lr);
uint32_t fit_lowrank_l(const fit_lowrank *lr);
double fit_lowrank_omega(const fit_lowrank *lr);
const double *fit_lowrank_y(const fit_lowrank *lr); /* this rank's rows of fit_lowrank_part */
fit_part fit_lowrank_part(const fit_lowrank *lr);
const uint32_t *fit_lowrank_rows_i(const fit_lowrank *lr);
uint32_t fit_compress_rows_default(uint32_t k);
int fit_rectify_compressed(const jsmf_source *C, const jsmf_fit_opts *o, int nt, fit_mat *F,
                           fit_start *st, const fit_plan *pl, jsmf_fit_report *rep);

/* The fit's memory plan (fit_plan.c; formats/fit.md, "Memory"): bytes of each phase, from N,
 * K, C's size and --mem, and the choices that keep the largest within --mem. */
struct fit_plan {
    uint64_t mem;          /* the budget planned for (0: none, nothing planned) */
    double peak, least;    /* the plan's largest phase; the least any choice gives */
    double eig[5];         /* C's first eigendecomposition with 1..4 Krylov blocks of depth */
    double steps, topics;  /* the rectification's steps, anchors and B (P not counted) */
    double metrics;        /* the metrics against C, when C is held (0: none computed) */
    int c_metrics_out;     /* they are left out: their phase alone exceeds the budget */
    int no_metrics;        /* none asked for (JSMF_FIT_NO_C_METRICS) */
    double p_bytes;        /* P of the compressed iterate (n x l), when kept */
    double factor_bytes;   /* the factor of C kept for c_factor.npy (n x k), unless from ckpt */
    double held, stream;   /* C's rows or the documents held; a streamed product's buffers */
    uint64_t src_mem;      /* the budget the source is opened with (0: mem) */
    uint32_t eig_depth;    /* Krylov depth of C's first eigendecomposition */
    int keep_p, docs, method_compressed;
    int factor_from_ckpt;  /* c_factor.npy's factor read back from the checkpoint, not held */
};
/* The plan for C and o with nt threads (st, may be NULL: a previous model's factor held, a
 * checkpoint that can stand in for the factor kept for c_factor.npy).
 * JSMF_ENOMEM, with a message naming what the fit needs and what to change, where no choice
 * fits o->mem_bytes. */
int fit_plan_make(const jsmf_source *C, const jsmf_fit_opts *o, int nt, const fit_start *st,
                  fit_plan *pl);
/* The budget the source is opened with, and the first eigendecomposition's depth (at most
 * `depth`), as the plan chose (pl NULL: mem and depth). */
static inline uint64_t fit_plan_source_mem(const fit_plan *pl, uint64_t mem)
{
    return pl && pl->src_mem && pl->src_mem < mem ? pl->src_mem : mem;
}
static inline uint32_t fit_plan_depth(const fit_plan *pl, uint32_t depth)
{
    return pl && pl->eig_depth && pl->eig_depth < depth ? pl->eig_depth : depth;
}
/* The blocks' columns: C's first eigendecomposition K + K/2 (at least K + 10), the steps'
 * K + K/5 (at least K + 8). */
uint32_t fit_first_cols(uint32_t k);
uint32_t fit_step_cols(uint32_t k);
/* The sums' chunk of a product through documents under budget mem (fit_docs.c). */
uint64_t fit_docs_chunk_bytes(uint64_t mem);

/* Step 1 (fit_rectify.c). */
int fit_load_dense(const jsmf_source *C, double **X);
uint32_t fit_block_rows(uint32_t n, uint64_t mem, int nt);
int fit_rectify_dense_ap(double *X, uint32_t n, const jsmf_fit_opts *o, jsmf_fit_report *rep);
int fit_rectify_dense_dr(double *X, uint32_t n, const jsmf_fit_opts *o, jsmf_fit_report *rep);
int fit_rectify_dense_none(double *X, uint32_t n, const jsmf_fit_opts *o, jsmf_fit_report *rep);
int fit_rectify_stream(const jsmf_source *C, const jsmf_fit_opts *o, int nt, fit_mat *F,
                       fit_start *st, const fit_plan *pl, jsmf_fit_report *rep);
/* C's own rows as R (CSR), the unrectified C of --rectify none, its load timed in rep. */
int fit_rectify_stream_none(const jsmf_source *C, const jsmf_fit_opts *o, int nt, fit_mat *F,
                            fit_start *st, const fit_plan *pl, jsmf_fit_report *rep);

/* ---- the choices: one descriptor per method (fit_methods.c), indexed by its enum ---------- */

/* A rectification method (--rectify). The dense path runs `dense` on the N x N C in memory, the
 * streaming path `stream`; a method without one of them never takes that path (--mode refuses
 * it, auto mode avoids it). */
typedef struct fit_rectify_method {
    const char *name;           /* --rectify, summary.json */
    const char *title;          /* in messages: "Douglas-Rachford" */
    uint32_t default_iters;     /* --rectify-iters 0 (fit_rectify_iters) */
    double anchor_df_divisor;   /* automatic --min-anchor-df: ceil(sqrt(M) / divisor) */
    int level_rectify;          /* the method of super-topic levels (dense K x K): an index */
    int a_auto;                 /* --recover-a auto: JSMF_A_DIAG or JSMF_A_PINV */
    int factored;               /* keeps R as a low-rank factor: the report gives its steps,
                                 * convergence, repaired rows, and the factor's rows per rank */
    int (*dense)(double *X, uint32_t n, const jsmf_fit_opts *o, jsmf_fit_report *rep);
    int (*stream)(const jsmf_source *C, const jsmf_fit_opts *o, int nt, fit_mat *F,
                  fit_start *st, const fit_plan *pl, jsmf_fit_report *rep);
} fit_rectify_method;

/* What an anchor method is given (fit.c's find_anchors prepares it): the rows as a callback
 * (ops), and, for methods that need them whole, their explicit matrix M (n x ops->d; NULL when
 * R gives its rows only by fit_mat_rows, C's sparse ones: then by products with R) and the
 * per-row scale inv. */
typedef struct fit_anchor_job {
    const fit_rows_ops *ops;
    const fit_mat *R;
    const double *M, *inv;
    uint32_t k;
    const jsmf_fit_opts *o;
} fit_anchor_job;

/* An anchor method (--anchors). */
typedef struct fit_anchors_method {
    const char *name;
    int row_at_a_time; /* reads rows one at a time through ops->row: the exact rectified rows
                        * are generated lazily, and an MPI job's ranks keep their own rows */
    int (*find)(const fit_anchor_job *job, uint32_t *S);
} fit_anchors_method;
int fit_anchors_find_qr(const fit_anchor_job *job, uint32_t *S);
int fit_anchors_find_fast(const fit_anchor_job *job, uint32_t *S);

/* A recovery method of B (--recover): a per-word solver of the quadratic over the simplex
 * (solve), or one solved on each whole row of R as a pass reads it (solve_row; such a method
 * needs every row whole, never the product with C's sparse rows). */
typedef struct fit_recover_method {
    const char *name;
    uint32_t (*solve)(const fit_snls *s, const double *r, double *y, double *work);
    /* the same for many words at once, where it is faster (optional) */
    void (*solve_many)(const fit_snls *s, uint32_t m, const double *const *r, double *const *y,
                       uint32_t *iters, double *work);
    uint32_t (*solve_row)(const fit_snls *s, const double *T, uint32_t n, const double *v,
                          double *y, double *work);
} fit_recover_method;

/* The method of index v, or NULL when there is none. */
const fit_rectify_method *fit_rectify_method_get(int v);
const fit_anchors_method *fit_anchors_method_get(int v);
const fit_recover_method *fit_recover_method_get(int v);


/* A model whose A does not sum to a positive number, with a non-finite B, or with topics below
 * a thousandth of an even share is no model: the error says why and what to change (fit.c). */
int fit_check_model(const jsmf_model *m, const jsmf_vocab *v, uint64_t df_min, double asum);

/* Metrics that need no pass over C, only the model and the unigram p (fit_metrics.c):
 * dominancy, specificity, sparsity, entropy, dissimilarity. */
int fit_metrics_local(const jsmf_model *mdl, const double *p, jsmf_metrics *out);
/* All the metrics, against the C behind `src` (no pass when C is in memory). */
int fit_metrics_c(const jsmf_model *mdl, fit_csrc *src, jsmf_metrics *out);
/* What fit_metrics_c holds at its most for N words and K topics (with anchors or not), besides
 * the model and C's source. */
uint64_t fit_metrics_c_bytes(uint32_t n, uint32_t k, int anchors);

/* Steps 3-4 (fit_recover.c). Css receives R's entries between anchors, R[S[a]][S[b]] (k x k);
 * Ybreve (n x k) and B (n x k) are whole on every rank. */
int fit_recover_b(fit_mat *R, const double *c, const double *q2, const double *pw,
                  const uint32_t *S, const jsmf_fit_opts *o, int nt, double *B, double *Ybreve,
                  double *Css, double *recovery_rect, jsmf_fit_report *rep);
void fit_recover_a_diag(uint32_t k, const double *B, const double *Css, const uint32_t *S,
                        double *A);
int fit_recover_a_pinv(const fit_mat *R, uint32_t k, const double *B, double *A);
double fit_recover_alpha(uint32_t k, const double *A, double *alpha);

/** The rectified C of the dense path as an N x N array (tests compare it with a reference):
 *  runs only step 1 with the given options. Caller frees *X. */
int fit_rectify_dense(const jsmf_source *C, const jsmf_fit_opts *o, double **X);

/** fit_rectify_dense's C written as DIR/rectified.npy (for inspection and reference
 *  tests; N x N). */
int fit_save_rectified(const char *dir, const jsmf_source *C, const jsmf_fit_opts *o);

/** A store without documents has nothing to fit: JSMF_EINVAL naming `path`, before any work.
 *  Otherwise 0, and o->docs is the store's document count (the anchor threshold's M). */
int fit_input_check(const char *path, const struct jsmf_source_input *in, jsmf_fit_opts *o);

/** The rectification iterations `o` asks for, its 0 resolved: 15 for AP and DR, a cap of 100 for
 *  the compressed iterate (which stops earlier when it has converged). */
uint32_t fit_rectify_iters(const jsmf_fit_opts *o);

/** Name of a jsmf_fit_opts.mode value for messages and summary.json ("auto", "dense", ...).
 *  (The method names are public: jsmf_fit.h.) */
const char *fit_mode_name(int v);

#endif
