/* refine_internal.h — what the files of src/refine share: the state of one refinement, the
 * per-document joint steps, and the table of methods (refine_methods.c). */
#ifndef JSMF_REFINE_INTERNAL_H
#define JSMF_REFINE_INTERNAL_H

#include "jsmf_refine.h"

/* The state of one refinement. */
typedef struct refine_state {
    uint32_t n, k, nt;
    const jsmf_refine_opts *o;
    const struct refine_method *method; /* o->method's entry of the table */
    const double *B;           /* N x K, this iteration's topics */
    double *theta;             /* M x K: in memory, or a scratch file's map (theta.c) */
    int theta_fd;              /* the scratch file (-1: theta is malloc'ed) */
    uint64_t theta_released;   /* bytes of the map given back in this sweep of the documents */
    double *nwk;               /* nt x N x K: each thread's expected word-topic counts */
    double *work;              /* nt x 4K scratch: ndk, the old counts, g, the theta before
                                  the joint step */
    double *ll;                /* nt x 2: each thread's sum h log p and sum_dk a_k log theta_dk */
    double *nprev;             /* N x K + K: the last pass's counts n_wk and n_k (exclude mode
                                  or over-relaxed; NULL otherwise) */
    int have_prev;             /* nprev holds a pass's counts */
    uint32_t theta_steps;      /* theta-only steps of each document this pass */
    uint64_t docs, tokens;
    double *nbatch;            /* batches x N x K: each batch's counts at its last visit (NULL
                                  with one batch) */
    double *B_live;            /* the topics the next batch sees (batches > 1) */
    double *alpha;             /* K: the documents' Dirichlet pseudo-counts a_k this pass */
    double alpha_sum;          /* sum_k a_k */
    double *alpha_was;         /* K: the a_k the stored thetas were made with (differs from
                                  alpha in the pass after alpha was learned) */
    double alpha_was_sum;
    int alpha_moved;           /* alpha differs from alpha_was */
    double omega;              /* over-relaxation factor of this pass's updates (1: none) */
    double lik_prev;           /* the last pass's log-likelihood per token */
    double *lik;               /* iters: each pass's log-likelihood per token (the stopping
                                  rule's measure when alpha is learned) */
    int lik_prev_set;
    int learn_alpha;           /* alpha is learned (opts.learn_alpha, auto resolved) */
    double *dg;                /* nt x (K + 1): each thread's sums for Minka's update (used
                                  when alpha is learned) */
    double *prior_now;         /* K: the prior's pseudo-counts of the last M-step, each topic's
                                  prior_counts scaled by its share on the prior's words (with
                                  opts.prior) */
} refine_state;

/** A document's joint step: from its theta (K) and the topics s->B, adds the expected counts of
 *  its tokens to nwk (N x K, this thread's) and its own to ndk (4K of scratch), moves theta,
 *  and returns sum h log p at the theta it started from. */
typedef double (*refine_joint_fn)(const refine_state *s, const uint32_t *ids,
                                  const uint32_t *counts, uint64_t len, double *theta,
                                  double *ndk, double *nwk);

/** n_d: a document's tokens. */
double refine_doc_tokens(const uint32_t *counts, uint64_t len);

/** One EM step of a document with B fixed (MAP-EM's joint step; with nwk NULL a theta-only
 *  step, which returns 0). */
double refine_step_em(const refine_state *s, const uint32_t *ids, const uint32_t *counts,
                      uint64_t len, double *theta, double *ndk, double *nwk);
/** Synchronous CVB0's joint step: each token's share left out of its document's and word's
 *  counts (it reads the last pass's counts, s->nprev). */
double refine_step_cvb0(const refine_state *s, const uint32_t *ids, const uint32_t *counts,
                        uint64_t len, double *theta, double *ndk, double *nwk);

/** A refinement method (jsmf_refine_opts.method, 'jsmf refine --method'). */
typedef struct refine_method {
    const char *name;       /* --method, summary.json */
    const char *title;      /* summary.json's refine.method_title */
    refine_joint_fn joint;  /* the joint step of every document */
    int needs_totals;       /* the joint step reads the last pass's counts (s->nprev) */
} refine_method;

/** The options' own checks (JSMF_EINVAL naming the one out of range), before any work. */
int refine_opts_check(const jsmf_refine_opts *o);

/* The bytes a refinement over `docs` documents of `n` words at `k` topics on `threads` threads
 * holds: the documents' theta and the per-thread (and kept) N x K counts (its result's bytes). */
uint64_t refine_memory(uint64_t docs, uint32_t n, uint32_t k, uint32_t threads,
                       const jsmf_refine_opts *o);

/** The method of value v, or NULL. */
const refine_method *refine_method_get(int v);

/** A night started from yesterday's model (refine_warm.c): yesterday's model, the start (its
 *  topics on tonight's words, which the store's documents carry), the prior that holds them
 *  (NULL when weight is 0) and its K pseudo-counts, the words admitted since. */
typedef struct refine_warm {
    jsmf_model *prev, *start;
    double *prior, *counts;
    uint32_t admitted;
} refine_warm;

/** refine_warm_start's answer where tonight cannot start from yesterday (another K, words the
 *  store lacks): a cold night. */
#define REFINE_WARM_COLD 1

/** Yesterday's model at `previous` carried onto the store `in` (opened from `input`) for K
 *  topics, held with weight `weight` (0: no prior). REFINE_WARM_COLD, or an error of loading it
 *  (JSMF_ENOMEM, jsmf_model_load's); on any non-zero return *w is empty. */
int refine_warm_start(const char *previous, const char *input, const struct jsmf_source_input *in,
                      uint32_t k, double weight, refine_warm *w);
/** Free what refine_warm_start made and zero it. */
void refine_warm_free(refine_warm *w);

/* The thetas (theta.c): M x K doubles, in memory where `held` (the rest of the refinement)
 * plus them keeps within o->mem_bytes, else in a scratch file; the file's pages are given back
 * as a sweep over the documents passes them (refine_theta_sweep: the first document not yet
 * done; 0 starts a sweep). */
int refine_theta_open(refine_state *s, uint64_t held);
void refine_theta_sweep(refine_state *s, uint64_t doc);
void refine_theta_close(refine_state *s);
/* Bytes of thetas a sweep over a scratch file holds at once (a block's and the kernel's
 * read-ahead, at most), and what a refinement with its thetas in one holds of theta_bytes. */
#define REFINE_THETA_WINDOW ((uint64_t)32 << 20)
uint64_t refine_theta_window(uint64_t theta_bytes);

#endif
