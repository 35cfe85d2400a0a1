/* jsmf_model.h — the MODEL directory (formats/model.md), the one thing fit and fdm write and
 * topics, infer, eval and report read: vocab.txt, B.npy, A.npy, anchors.txt, alpha.npy,
 * summary.json, and one sub-directory per further level of a hierarchy (level1/, level2/ ...).
 *
 * CAVEATS
 *  - B is N x K (column k = p(word | topic k), columns sum to 1), A is K x K (entries sum to 1),
 *    both float64 row-major in memory and C-order in the .npy files.
 *  - Saving writes into a temporary sibling directory and renames it into place, so a reader
 *    never sees half a model; an existing MODEL is replaced only when `overwrite` is set.
 *  - Saving writes a MANIFEST of every file's size and XXH3-64 last; loading checks each file
 *    against it, so a damaged model is refused, never read as another model.
 *  - summary.json is the text m->summary_json (jsmf_fit_summarize makes a fit's), or a minimal
 *    one when that is NULL.
 *  - Topics have no identity but their index: a refit after a previous model keeps the index of
 *    each topic that continues one of its topics (jsmf_model_lineage_get, jsmf_model_renumber;
 *    'jsmf fit --previous'), and jsmf_model_diff says what changed between two models.
 */
#ifndef JSMF_MODEL_H
#define JSMF_MODEL_H

#include <stdio.h>

#include "jsmf.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct jsmf_model {
    uint32_t n;            /**< vocabulary size N */
    uint32_t k;            /**< number of topics K */
    jsmf_vocab *vocab;     /**< words in row order of B (owned) */
    double *B;             /**< N x K, row-major (owned) */
    double *A;             /**< K x K, row-major (owned) */
    int a_uniform;         /**< A.npy was absent (topics of another tool): A is 1/K^2 */
    uint32_t *anchors;     /**< K anchor word ids, or NULL (FDM models have none) */
    double *alpha;         /**< K Dirichlet parameters, or NULL when not recovered */
    char *summary_json;    /**< the summary.json text (owned), or NULL */
    struct jsmf_model *sub; /**< next hierarchy level (super-topics over this level's topics), or NULL */
    uint64_t reserved[8]; /**< room to grow (zero; jsmf.h, "Structs that grow") */
} jsmf_model;

/** Version of the MODEL directory format written by this library (summary.json "version").
 *  Readers refuse a larger version with JSMF_EVERSION; additions that old readers can ignore
 *  (new keys, new files) do not change it. */
#define JSMF_MODEL_VERSION 1

/** A model in memory with zeroed B (N x K) and A (K x K), vocab, anchors, alpha and sub NULL,
 *  into *out (free with jsmf_model_free). The fields are the caller's to fill: whatever it sets
 *  must be malloc'ed, since jsmf_model_free frees it. Errors: JSMF_EINVAL (N or K 0),
 *  JSMF_ENOMEM. */
JSMF_API int jsmf_model_new(uint32_t n, uint32_t k, jsmf_model **out);
/** Free a model, everything it owns and its levels (NULL is fine). */
JSMF_API void jsmf_model_free(jsmf_model *m);

/** Write `m` (and its sub-levels as level1/, level2/, ...) to directory `dir`.
 *  A sub-level with vocab NULL gets labels for the topics below it ("t3:anchorword" or "t3").
 *  summary_json NULL writes a minimal summary (format, version, kind, k, n_words).
 *  Errors: JSMF_EEXIST (dir exists and !overwrite, or exists and is not a model),
 *  JSMF_ENOSPC / JSMF_EIO (naming the file), JSMF_EINVAL (inconsistent model). On error the
 *  previous content of `dir`, if any, is untouched. `m` is only read. */
JSMF_API int jsmf_model_save(const char *dir, const jsmf_model *m, int overwrite);

/** Read a model directory, including its levels, validating shapes (B rows = vocabulary size,
 *  A K x K, anchors in range and matching their words), column sums of B and the total of A
 *  (within 1e-6), into *out (free with jsmf_model_free). Every file is first checked against
 *  the directory's MANIFEST when it has one (jsmf_model_has_manifest). Errors name the file:
 *  JSMF_ENOTFOUND, JSMF_EFORMAT (malformed or damaged), JSMF_EVERSION. */
JSMF_API int jsmf_model_load(const char *dir, jsmf_model **out);

/** 1 when directory `dir` has a MANIFEST (formats/model.md, "Manifest"): jsmf_model_load then
 *  checks the size and XXH3-64 of every file it decodes against it, and a damaged file is
 *  JSMF_EFORMAT "DIR/FILE: damaged: ...". 0 when it has none (a model of an earlier jsmf, or of
 *  another tool), which jsmf_model_load reads unchecked: the caller may tell its user so. */
JSMF_API int jsmf_model_has_manifest(const char *dir);

/** p(z) = A 1: the topic sizes, K values into `pz` (the caller's array). Never fails. */
JSMF_API void jsmf_model_topic_sizes(const jsmf_model *m, double *pz);

/** The ids of the `top` most probable words of `topic` (by B column, decreasing; ties by lower
 *  id), into `ids` (the caller's, room for `top`): their words are m->vocab->words[ids[i]].
 *  Returns how many were written (min(top, N)). Never fails. */
JSMF_API uint32_t jsmf_model_top_words(const jsmf_model *m, uint32_t topic, uint32_t top,
                                       uint32_t *ids);

/** p(w) = sum_z B_wz p(z): the model's own unigram, N values into `pw` (the caller's). */
JSMF_API void jsmf_model_word_marginal(const jsmf_model *m, double *pw);

/** The `top` words of `topic` ranked by relevance (Sievert & Shirley 2014):
 *  lambda log p(w|z) + (1 - lambda) log(p(w|z) / p(w)), with pw from jsmf_model_word_marginal.
 *  lambda >= 1 (or pw NULL) ranks by p(w|z) alone, as jsmf_model_top_words. Smaller lambda
 *  favours words distinctive of the topic over words frequent everywhere. As
 *  jsmf_model_top_words: the caller's `ids`, the count returned, never fails. */
JSMF_API uint32_t jsmf_model_top_words_rank(const jsmf_model *m, uint32_t topic, uint32_t top,
                                            double lambda, const double *pw, uint32_t *ids);

/** The relevance of every word for every topic into `out` (the caller's N x K, as B), for
 *  ranking them. Never fails. */
JSMF_API void jsmf_model_relevance(const jsmf_model *m, double lambda, const double *pw,
                                   double *out);

/** The display default of jsmf topics: relevance with this lambda (tools/bench/e2e measures it). */
#define JSMF_TOPWORDS_LAMBDA 0.7

/** How jsmf_model_topics_write prints. */
typedef enum jsmf_topics_format {
    JSMF_TOPICS_TEXT, /**< aligned for reading: topic, size, anchor, top words */
    JSMF_TOPICS_TSV,  /**< topic, size, alpha, anchor, top words separated by spaces */
    JSMF_TOPICS_JSON  /**< topics with word probabilities, the A matrix and alpha */
} jsmf_topics_format;

/** How jsmf_model_topics_write prints (fill with jsmf_topics_opts_init). */
typedef struct jsmf_topics_opts {
    const char *name; /**< the model's name in the output (its path) */
    uint32_t top;     /**< words per topic (at most N are shown) */
    double lambda;    /**< ranking of the words (jsmf_model_top_words_rank); 1: by p(w|z) */
    uint32_t level;   /**< 0: the model itself; L: its L-th level below */
    int format;       /**< jsmf_topics_format */
    int matrix;       /**< text and TSV: the topic-topic matrix A instead (K rows of K) */
    uint64_t reserved[8]; /**< room to grow (zero; jsmf.h, "Structs that grow") */
} jsmf_topics_opts;

/** Fill `o` with the defaults of 'jsmf topics': 10 words ranked with JSMF_TOPWORDS_LAMBDA, text,
 *  the model itself (level 0), name NULL. */
JSMF_API void jsmf_topics_opts_init(jsmf_topics_opts *o);

/** Print the topics of `m` (its level o->level) on `f` (formats/outputs.md). JSMF_ENOTFOUND
 *  when the model has no such level, JSMF_ENOMEM. The caller checks f for write errors. */
JSMF_API int jsmf_model_topics_write(FILE *f, const jsmf_model *m, const jsmf_topics_opts *o);

/* ---------------------------------------------------------------------------------------------
 * Lineage: which topics of a refit continue which topics of a previous model (formats/model.md,
 * "Lineage"). Topics are matched by a minimum-cost assignment on the l1 distance between their
 * columns of B over the words of both vocabularies, matched by string: a word one model lacks
 * counts 0 there, and columns are not renormalised: mass a topic moved to words the previous
 * model lacks is a change, counted beyond an allowance of JSMF_LINEAGE_NEW_WORDS (new words are
 * admitted every night; eval's l1 error against a truth counts all of it).
 * A topic matched to a previous topic at l1 <= threshold continues it; the others are new; the
 * previous topics no topic continues are retired.
 * ------------------------------------------------------------------------------------------- */

/** The threshold of 'jsmf fit --previous' and 'jsmf diff': l1 <= 0.5 (of at most 2) continues. */
#define JSMF_LINEAGE_L1 0.5
/** The mass a topic may put on words the previous model lacks before it counts in the lineage's
 *  distance (since 3.2.0): an old topic that takes up new words (a planted topic moving 20% of
 *  its mass onto them) continues, and one made of new words (1 - 0.25 counted) is new. */
#define JSMF_LINEAGE_NEW_WORDS 0.25
/** A topic index that does not exist: the predecessor of a new topic. */
#define JSMF_TOPIC_NONE UINT32_MAX

/** The lineage of a model's topics (free what it holds with jsmf_lineage_free). */
typedef struct jsmf_lineage {
    uint32_t k;         /**< topics of the model */
    uint32_t k_prev;    /**< topics of the previous model */
    double threshold;   /**< the l1 at or below which a matched topic continues */
    uint32_t *prev;     /**< k entries: the previous topic topic t continues, or JSMF_TOPIC_NONE */
    double *l1;         /**< k entries: l1 distance to the previous topic t was matched with
                             (continued or not); NaN when the assignment left it unmatched
                             (more topics than before) */
    uint32_t n_retired; /**< previous topics no topic continues, increasing, in `retired` */
    uint32_t *retired;
    char *prev_path;    /**< the previous model's path as given, or NULL */
    char prev_fingerprint[17]; /**< jsmf_model_fingerprint of the previous model */
    uint64_t reserved[8]; /**< room to grow (zero; jsmf.h, "Structs that grow") */
} jsmf_lineage;

/** Match the topics of `m` to those of `prev` (either may have more topics) and fill `out`
 *  (free with jsmf_lineage_free; `prev_path` may be NULL and is copied). Errors:
 *  JSMF_EINVAL (a model without vocabulary), JSMF_EMISMATCH (no word in common, naming
 *  `prev_path`), JSMF_ENOMEM. The models are only read. */
JSMF_API int jsmf_model_lineage_get(const jsmf_model *prev, const jsmf_model *m,
                                    const char *prev_path, double threshold, jsmf_lineage *out);

/** Renumber the topics of `m` after its lineage `l` (from jsmf_model_lineage_get(prev, m)):
 *  a continuing topic takes its predecessor's index when `m` has that index, the other topics
 *  take the free indices in their present order. B's columns, A's rows and columns, alpha,
 *  anchors and the rows of the first hierarchy level are permuted alike, and `l` is rewritten in
 *  the new numbering. JSMF_EINVAL (l is not of m), JSMF_ENOMEM (m and l unchanged). */
JSMF_API int jsmf_model_renumber(jsmf_model *m, jsmf_lineage *l);

/** Free what `l` holds (not `l`); NULL is fine. */
JSMF_API void jsmf_lineage_free(jsmf_lineage *l);

/** A fingerprint of a model's topics: FNV-1a 64 of its words and B, as 16 hex digits and a NUL
 *  into `out`. What a lineage records to know its previous model again. Never fails. */
JSMF_API void jsmf_model_fingerprint(const jsmf_model *m, char out[17]);

/** The lineage a summary.json records (formats/model.md, key "lineage") into `out` (free with
 *  jsmf_lineage_free). JSMF_ENOTFOUND (m records none), JSMF_EFORMAT, JSMF_ENOMEM. */
JSMF_API int jsmf_model_lineage_read(const jsmf_model *m, jsmf_lineage *out);

/* ---------------------------------------------------------------------------------------------
 * What changed between two models ('jsmf diff OLD NEW', formats/outputs.md).
 * ------------------------------------------------------------------------------------------- */

/** A word and its probabilities before and after (p(w|z) in a topic; p(w) for a new word). */
typedef struct jsmf_diff_word {
    char *word;
    double before, after;
    uint32_t topic;     /**< new words: the topic of NEW it went to (argmax_z p(z|w)) */
    uint64_t reserved[2]; /**< room to grow (zero; jsmf.h, "Structs that grow") */
} jsmf_diff_word;

/** One topic: continuing (both indices), new (prev JSMF_TOPIC_NONE) or retired (topic
 *  JSMF_TOPIC_NONE). */
typedef struct jsmf_diff_topic {
    uint32_t topic, prev;
    double l1;                  /**< distance to the matched topic (NaN: none) */
    double size, size_prev;     /**< p(z) in NEW and OLD (NaN where it does not exist) */
    uint32_t n_rising, n_falling;
    jsmf_diff_word *rising;     /**< continuing topics: largest increases of p(w|z), decreasing */
    jsmf_diff_word *falling;    /**< ... largest decreases */
    uint64_t reserved[2]; /**< room to grow (zero; jsmf.h, "Structs that grow") */
} jsmf_diff_topic;

/** The difference of two models (free with jsmf_diff_free). */
typedef struct jsmf_diff {
    jsmf_lineage lineage;       /**< of NEW's topics after OLD's */
    int recorded;               /**< 1: NEW's summary.json recorded OLD as its previous model
                                     and the lineage is that record; 0: computed */
    uint32_t n_topics;          /**< NEW's topics in order, then the retired ones */
    jsmf_diff_topic *topics;
    uint32_t n_continuing, n_new, n_retired;
    uint32_t n_new_words;       /**< words of NEW's vocabulary absent from OLD's, by p(w) */
    jsmf_diff_word *new_words;
    uint64_t reserved[8]; /**< room to grow (zero; jsmf.h, "Structs that grow") */
} jsmf_diff;

/** How jsmf_model_diff compares and jsmf_diff_write prints (fill with jsmf_diff_opts_init). */
typedef struct jsmf_diff_opts {
    uint32_t top;         /**< rising and falling words per topic, new words listed (default 10) */
    double threshold;     /**< lineage threshold (default JSMF_LINEAGE_L1) */
    int format;           /**< jsmf_topics_format: text, TSV or JSON (default text) */
    const char *old_name; /**< the models' names in the output and the lineage (their paths) */
    const char *new_name;
    uint64_t reserved[8]; /**< room to grow (zero; jsmf.h, "Structs that grow") */
} jsmf_diff_opts;

/** Fill `o` with the defaults of 'jsmf diff'. */
JSMF_API void jsmf_diff_opts_init(jsmf_diff_opts *o);

/** Compare `old` and `new` into *out (free with jsmf_diff_free): the lineage NEW records when
 *  it names OLD (same fingerprint), else jsmf_model_lineage_get's; topic sizes p(z) = A 1; the
 *  words rising and falling within each continuing topic (p(w|z) by string, 0 where a model
 *  lacks the word); the words of NEW absent from OLD with the topic each went to. Errors those
 *  of jsmf_model_lineage_get, JSMF_ENOMEM. The models are only read. */
JSMF_API int jsmf_model_diff(const jsmf_model *old, const jsmf_model *new_, const jsmf_diff_opts *o,
                             jsmf_diff **out);

/** Print `d` on `f` as text, TSV or JSON (o->format; formats/outputs.md). The caller checks f
 *  for write errors. Never fails otherwise. */
JSMF_API void jsmf_diff_write(FILE *f, const jsmf_diff *d, const jsmf_diff_opts *o);

/** Free a diff and everything it holds (NULL is fine). */
JSMF_API void jsmf_diff_free(jsmf_diff *d);

#ifdef __cplusplus
}
#endif
#endif /* JSMF_MODEL_H */
