/* ingest_dist.c — one ingest run by the P ranks of an MPI job (formats/store.md, "Distributed
 * ingest"): rank 0 plans pieces of the inputs (whole files, and line-aligned byte ranges of large
 * plain text and LDA-C files); each rank ingests its pieces into a shard store of its own,
 * checkpointed and resumable like any ingest; then the shards' exact sums are added by row
 * ranges (all-to-all) and rank 0 commits the total, with counters, word statistics and one
 * complete record per input, into the store as one checkpoint. Integer sums make the result the
 * store a single process writes from the same inputs, for any P. */
#include "jsmf_comm.h"
#include "jsmf_ingest.h"
#include "jsmf_io.h"
#include "core/clock.h"
#include "core/durable.h"
#include "core/hash.h"
#include "core/zstd_sniff.h"
#include "io/docs.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "ingest_internal.h"
#include "io/docs.h"
#include "io/hash.h"
#include "io/vocab_build.h"
#include "mpi/comm.h"
#include "store/commit.h"
#include "store/flush.h"
#include "store/rows.h"
#include "store/codec.h" /* row encoding */
#include "store/runs.h"
#include "store/store.h"
#include "store/growth.h"
#include "pending.h"

#define PLAN_MAGIC "jsmf-mpi-plan 1"
#define ENTRY_BYTES 24                     /* u32 row, u32 column, 16-byte sum on the wire */
#define TAG_ASK 11
#define TAG_LEN 12
#define TAG_DATA 13
#define NO_MORE UINT64_MAX

typedef struct plan_input {
    uint64_t fingerprint, size;
    uint32_t occurrence, format;
    char path[1024];
} plan_input;

typedef struct plan_piece {
    uint32_t input, rank;
    uint64_t key, start_offset, start_line, start_doc, end_offset, bytes;
} plan_piece;

typedef struct plan_head {
    char magic[16];
    uint32_t ranks, n_words, n_inputs, n_pieces;
    uint32_t skipped;   /* inputs of the command already complete in the store */
    uint32_t fresh;     /* 1: shards left by an earlier plan are stale and removed */
    uint32_t replaced;  /* 1: an earlier job's plan (another one) was found */
} plan_head;

typedef struct plan {
    plan_head h;
    plan_input *in;
    plan_piece *pc;
} plan;

typedef struct job {
    jsmf_comm *c;
    int rank, size;
    jsmf_store *main;         /* rank 0 */
    const char *store_path;
    char dir[4096];           /* the shards' directory */
    int given_dir;            /* --shard-dir: the user's directory, kept when empty */
    char shard[4200], sums[4200], plan_path[4200];
    const jsmf_ingest_opts *o;
    plan p;
    uint32_t n_words;
    jsmf_store *sh;           /* this rank's shard */
    uint64_t *df;             /* the vocabulary's document frequencies, to plan accumulators */
    /* the reduction */
    FILE *sf;                 /* this rank's reduced rows, one segment per round */
    uint64_t *seg_off, *seg_len;
    uint32_t rounds;
    uint64_t bytes_received;
    int grow;                 /* the store's rule grows: shards count pending words too */
} job;

/* An earlier job with other inputs or ranks left shards here: they cannot resume this one
 * (with more ranks than this job has, nobody else would remove theirs). */
static void remove_stale_shards(const job *j)
{
    DIR *d = opendir(j->dir);
    if (!d)
        return;
    char path[8192];
    for (struct dirent *e; (e = readdir(d));) {
        if (strncmp(e->d_name, "rank-", 5))
            continue;
        snprintf(path, sizeof path, "%s/%s", j->dir, e->d_name);
        if (strstr(e->d_name, ".sums"))
            unlink(path);
        else
            store_files_remove(path, NULL, 1);
    }
    closedir(d);
}

/* ---- planning (rank 0) -------------------------------------------------------------------- */

static int sniff_format(const char *path, const jsmf_ingest_opts *o, uint32_t *fmt)
{
    jsmf_read_opts ro = JSMF_READ_OPTS_DEFAULT;
    ro.format = (jsmf_format)o->format;
    ro.uci_vocab = o->uci_vocab;
    jsmf_docs *d;
    int rc = docs_open(path, &ro, &d);
    if (rc)
        return rc;
    *fmt = (uint32_t)docs_format(d);
    docs_close(d);
    return JSMF_OK;
}

static int add_piece(plan *p, uint32_t input, uint64_t start, uint64_t line, uint64_t end,
                     uint64_t bytes)
{
    plan_piece *a = realloc(p->pc, (p->h.n_pieces + 1) * sizeof *a);
    if (!a)
        return jsmf_error(JSMF_ENOMEM, "out of memory");
    p->pc = a;
    const plan_input *in = &p->in[input];
    plan_piece *x = &a[p->h.n_pieces++];
    memset(x, 0, sizeof *x);
    x->input = input;
    x->start_offset = start, x->start_line = line, x->start_doc = line - 1; /* a line a doc */
    x->end_offset = end, x->bytes = bytes;
    x->key = hash_mix64(in->fingerprint ^ hash_mix64(in->occurrence ^ hash_mix64(start + 1))) | 1;
    return JSMF_OK;
}

/* Cut a plain file of one document per line into about `want` pieces at line starts, counting
 * lines so that each piece's messages name file lines. */
static int split_file(plan *p, uint32_t input, uint64_t want)
{
    const plan_input *in = &p->in[input];
    int fd = open(in->path, O_RDONLY);
    if (fd < 0)
        return jsmf_error(JSMF_EIO, "%s: %s", in->path, strerror(errno));
    uint64_t size = in->size;
    const char *m = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (m == MAP_FAILED)
        return jsmf_error(JSMF_EIO, "%s: mmap: %s", in->path, strerror(errno));
    uint64_t start = 0, line = 1;
    int rc = JSMF_OK;
    for (uint64_t k = 1; k <= want && !rc; k++) {
        uint64_t end = k == want ? size : size / want * k;
        if (end < size) { /* to just after the next newline at or after end - 1 */
            const char *nl = memchr(m + end - 1, '\n', size - (end - 1));
            end = nl ? (uint64_t)(nl - m) + 1 : size;
        }
        if (end <= start)
            continue;
        rc = add_piece(p, input, start, line, end >= size ? 0 : end, end - start);
        for (const char *q = m + start; (q = memchr(q, '\n', (size_t)(m + end - q))); q++)
            line++;
        start = end;
        if (start >= size)
            break;
    }
    munmap((void *)m, size);
    return rc;
}

/* Largest piece first to the rank with the least bytes so far: deterministic. */
static void assign_ranks(plan *p, int size)
{
    uint32_t n = p->h.n_pieces;
    uint32_t *order = malloc(sizeof *order * (n ? n : 1));
    uint64_t *load = calloc((size_t)size, sizeof *load);
    if (!order || !load) { /* round robin needs no memory */
        for (uint32_t i = 0; i < n; i++)
            p->pc[i].rank = i % (uint32_t)size;
        free(order), free(load);
        return;
    }
    for (uint32_t i = 0; i < n; i++)
        order[i] = i;
    for (uint32_t i = 1; i < n; i++) /* insertion sort by bytes, descending, stable */
        for (uint32_t j = i; j > 0 && p->pc[order[j]].bytes > p->pc[order[j - 1]].bytes; j--) {
            uint32_t t = order[j];
            order[j] = order[j - 1], order[j - 1] = t;
        }
    for (uint32_t i = 0; i < n; i++) {
        int best = 0;
        for (int r = 1; r < size; r++)
            if (load[r] < load[best])
                best = r;
        p->pc[order[i]].rank = (uint32_t)best;
        load[best] += p->pc[order[i]].bytes + 1;
    }
    free(order), free(load);
}

/* A partial record that holds nothing yet. */
static int no_progress(const jsmf_store_input *r)
{
    return !r->docs && !r->docs_dropped && !r->next_doc && !r->next_offset;
}

/* 1 when the plan holds the input (fp, occurrence) already. */
static int planned(const plan *p, uint64_t fp, uint32_t occurrence)
{
    for (uint32_t k = 0; k < p->h.n_inputs; k++)
        if (p->in[k].fingerprint == fp && p->in[k].occurrence == occurrence)
            return 1;
    return 0;
}

/* Which inputs to read and under what record key, as jsmf_ingest_files decides: a complete
 * input is skipped unless forced, a forced one gets the next occurrence, one marked by the
 * command's admission (a record without progress) is read under the mark's key. */
static int plan_inputs(job *j, const char *const *paths, uint32_t n)
{
    plan *p = &j->p;
    jsmf_store_input *recs = NULL;
    uint32_t nrecs = 0;
    int rc = jsmf_store_inputs_get(j->main, &recs, &nrecs);
    if (rc)
        return rc;
    if (!(p->in = calloc(n ? n : 1, sizeof *p->in))) {
        free(recs);
        return jsmf_error(JSMF_ENOMEM, "out of memory");
    }
    for (uint32_t i = 0; i < n && !rc; i++) {
        if (!strcmp(paths[i], "-")) {
            rc = jsmf_error(JSMF_EINVAL, "stdin ('-') cannot be shared by %d MPI ranks: give "
                            "files, or ingest stdin without mpirun", j->size);
            break;
        }
        uint64_t fp, size;
        if ((rc = fingerprint_file(paths[i], &fp, &size)))
            break;
        uint32_t next_occ = 0, mark = UINT32_MAX;
        int complete = 0;
        for (uint32_t r = 0; r < nrecs; r++) {
            if (recs[r].fingerprint != fp)
                continue;
            if (recs[r].occurrence >= next_occ)
                next_occ = recs[r].occurrence + 1;
            complete |= recs[r].state == JSMF_INPUT_COMPLETE;
            /* a record without progress is the mark of this command's admission (or of an
             * ingest killed before it read anything): the input is planned under its key */
            if (recs[r].state == JSMF_INPUT_PARTIAL && no_progress(&recs[r]) &&
                !planned(p, fp, recs[r].occurrence) && recs[r].occurrence < mark)
                mark = recs[r].occurrence;
            else if (recs[r].state == JSMF_INPUT_PARTIAL && !no_progress(&recs[r]))
                rc = jsmf_error(JSMF_EINVAL, "%s: %s holds a partial record of it from an "
                                "interrupted ingest without mpirun: finish that with 'jsmf "
                                "ingest' first", paths[i], j->store_path);
        }
        for (uint32_t k = 0; k < p->h.n_inputs; k++) /* the same file twice in one command */
            if (p->in[k].fingerprint == fp) {
                complete = 1;
                if (p->in[k].occurrence >= next_occ)
                    next_occ = p->in[k].occurrence + 1;
            }
        if (rc)
            break;
        if (mark != UINT32_MAX) {
            complete = 0, next_occ = mark;
        } else if (complete && !j->o->force) {
            p->h.skipped++;
            continue;
        }
        plan_input *in = &p->in[p->h.n_inputs++];
        in->fingerprint = fp, in->size = size, in->occurrence = next_occ;
        snprintf(in->path, sizeof in->path, "%s", paths[i]);
        rc = sniff_format(paths[i], j->o, &in->format);
    }
    free(recs);
    return rc;
}

static int plan_pieces(job *j, uint64_t piece_bytes)
{
    plan *p = &j->p;
    uint64_t total = 0;
    for (uint32_t i = 0; i < p->h.n_inputs; i++)
        total += p->in[i].size;
    /* four pieces a rank balances uneven documents; a piece below 1 MiB costs more to start
     * than it saves */
    uint64_t target = piece_bytes ? piece_bytes : total / (4 * (uint64_t)j->size);
    if (!piece_bytes && target < (1u << 20))
        target = 1u << 20;
    int rc = JSMF_OK;
    for (uint32_t i = 0; i < p->h.n_inputs && !rc; i++) {
        const plan_input *in = &p->in[i];
        /* a format of one document a line, stored plain: cut at line starts */
        const io_format *f = io_format_get((jsmf_format)in->format);
        int splittable = f && f->line_per_doc && !zstd_sniff_file(in->path) && in->size > target;
        if (splittable)
            rc = split_file(p, i, (in->size + target - 1) / target);
        else
            rc = add_piece(p, i, 0, 1, 0, in->size);
    }
    if (!rc)
        assign_ranks(p, j->size);
    return rc;
}

/* ---- the plan file: what makes a rerun resume the same shards -------------------------------- */

static int plan_write(const job *j)
{
    char tmp[4300];
    snprintf(tmp, sizeof tmp, "%s.tmp", j->plan_path);
    FILE *f = fopen(tmp, "wb");
    if (!f)
        return jsmf_error(durable_errcode(errno), "%s: %s", tmp, strerror(errno));
    const plan *p = &j->p;
    errno = 0;
    int ok = fwrite(&p->h, sizeof p->h, 1, f) == 1 &&
             fwrite(p->in, sizeof *p->in, p->h.n_inputs, f) == p->h.n_inputs &&
             fwrite(p->pc, sizeof *p->pc, p->h.n_pieces, f) == p->h.n_pieces;
    return durable_publish(f, ok ? 0 : errno ? errno : EIO, tmp, j->plan_path, "MPI ingest plan");
}

/* 1 when the plan file there equals the one just made (fresh flag aside). */
static int plan_same(const job *j)
{
    FILE *f = fopen(j->plan_path, "rb");
    if (!f)
        return 0;
    const plan *p = &j->p;
    plan_head h;
    int same = fread(&h, sizeof h, 1, f) == 1;
    h.fresh = p->h.fresh, h.replaced = p->h.replaced;
    same = same && !memcmp(&h, &p->h, sizeof h);
    for (uint32_t i = 0; same && i < p->h.n_inputs; i++) {
        plan_input x;
        same = fread(&x, sizeof x, 1, f) == 1 && !memcmp(&x, &p->in[i], sizeof x);
    }
    for (uint32_t i = 0; same && i < p->h.n_pieces; i++) {
        plan_piece x;
        same = fread(&x, sizeof x, 1, f) == 1 && !memcmp(&x, &p->pc[i], sizeof x);
    }
    fclose(f);
    return same;
}

static int make_plan(job *j, const char *const *paths, uint32_t n, uint64_t piece_bytes)
{
    plan *p = &j->p;
    memset(&p->h, 0, sizeof p->h);
    memcpy(p->h.magic, PLAN_MAGIC, sizeof PLAN_MAGIC);
    p->h.ranks = (uint32_t)j->size;
    p->h.n_words = j->n_words;
    int rc = plan_inputs(j, paths, n);
    if (!rc)
        rc = plan_pieces(j, piece_bytes);
    if (rc)
        return rc;
    if (mkdir(j->dir, 0777) && errno != EEXIST)
        return jsmf_error(JSMF_EIO, "%s: %s", j->dir, strerror(errno));
    struct stat st;
    int had = stat(j->plan_path, &st) == 0;
    if (had && plan_same(j))
        return JSMF_OK; /* a rerun of an interrupted job: its shards resume */
    p->h.fresh = 1, p->h.replaced = (uint32_t)had;
    if (had)
        remove_stale_shards(j);
    return p->h.n_inputs ? plan_write(j) : JSMF_OK;
}

/* Every rank gets the plan (rank 0 made it). */
static int share_plan(job *j)
{
    plan *p = &j->p;
    int rc = comm_bcast(j->c, &p->h, sizeof p->h, 0);
    if (rc)
        return rc;
    if (j->rank) {
        p->in = calloc(p->h.n_inputs ? p->h.n_inputs : 1, sizeof *p->in);
        p->pc = calloc(p->h.n_pieces ? p->h.n_pieces : 1, sizeof *p->pc);
        if (!p->in || !p->pc)
            return jsmf_error(JSMF_ENOMEM, "out of memory");
    }
    if (!(rc = comm_bcast(j->c, p->in, sizeof *p->in * p->h.n_inputs, 0)))
        rc = comm_bcast(j->c, p->pc, sizeof *p->pc * p->h.n_pieces, 0);
    return rc;
}


/* The vocabulary travels as its words joined by newlines (a word holds none). */
static int share_vocab(job *j, jsmf_vocab **out, uint64_t **df)
{
    jsmf_vocab *v = NULL;
    uint64_t len = 0;
    char *buf = NULL;
    int rc = j->rank == 0 ? jsmf_store_vocab_get(j->main, &v) : JSMF_OK;
    if (!rc && j->rank == 0)
        for (uint32_t i = 0; i < v->n; i++)
            len += strlen(v->words[i]) + 1;
    if ((rc = comm_agree(j->c, rc)) || (rc = comm_bcast(j->c, &len, 8, 0)))
        goto done;
    if (!(buf = malloc(len + 1)) || !(*df = calloc(j->n_words ? j->n_words : 1, 8))) {
        rc = jsmf_error(JSMF_ENOMEM, "out of memory");
        goto done;
    }
    if (j->rank == 0) {
        char *q = buf;
        for (uint32_t i = 0; i < v->n; i++) {
            size_t n = strlen(v->words[i]);
            memcpy(q, v->words[i], n), q += n, *q++ = '\n';
        }
        if (v->df) /* the vocabulary's counts plan the accumulator (jsmf_ingest_opts.df) */
            memcpy(*df, v->df, sizeof **df * j->n_words);
    }
    if ((rc = comm_bcast(j->c, buf, len, 0)) ||
        (rc = comm_bcast(j->c, *df, 8ull * j->n_words, 0)))
        goto done;
    jsmf_vocab *w = calloc(1, sizeof *w);
    if (!w || !(w->words = calloc(j->n_words ? j->n_words : 1, sizeof *w->words))) {
        free(w);
        rc = jsmf_error(JSMF_ENOMEM, "out of memory");
        goto done;
    }
    char *q = buf;
    for (uint32_t i = 0; i < j->n_words; i++) {
        char *nl = memchr(q, '\n', len - (uint64_t)(q - buf));
        *nl = 0;
        w->words[i] = strdup(q);
        w->n = i + 1;
        q = nl + 1;
        if (!w->words[i]) {
            rc = jsmf_error(JSMF_ENOMEM, "out of memory");
            break;
        }
    }
    if (rc)
        jsmf_vocab_free(w);
    else
        *out = w;
done:
    free(buf);
    jsmf_vocab_free(v);
    return rc;
}

/* The store's growth rule (and its stopword list), given to every shard so that the pieces
 * count the words outside the vocabulary as one process would. */
static int share_rule(job *j)
{
    jsmf_store_rule r = {0};
    jsmf_vocab *stop = NULL;
    char *buf = NULL;
    uint64_t len = 0;
    int rc = JSMF_OK;
    if (j->rank == 0 && !(rc = jsmf_store_rule_get(j->main, &r)) &&
        r.state == JSMF_RULE_GROW && !strcmp(r.stopwords, "list") &&
        !(rc = jsmf_store_rule_stopwords_get(j->main, &stop)) && stop) {
        for (uint32_t i = 0; i < stop->n; i++)
            len += strlen(stop->words[i]) + 1;
    }
    if (!(rc = comm_agree(j->c, rc)) && !(rc = comm_bcast(j->c, &r, sizeof r, 0)))
        rc = comm_bcast(j->c, &len, 8, 0);
    if (!rc && !(buf = malloc(len + 1)))
        rc = jsmf_error(JSMF_ENOMEM, "out of memory");
    if (!rc && j->rank == 0 && stop)
        for (uint32_t i = 0, at = 0; i < stop->n; i++) {
            size_t l = strlen(stop->words[i]);
            memcpy(buf + at, stop->words[i], l + 1); /* NUL-separated */
            at += (uint32_t)l + 1;
        }
    if (!(rc = comm_agree(j->c, rc)) && len)
        rc = comm_bcast(j->c, buf, len, 0);
    j->grow = r.state == JSMF_RULE_GROW;
    if (!rc && j->grow && j->rank != 0 && len) { /* the list, rebuilt from the buffer */
        jsmf_vocab_free(stop);
        stop = calloc(1, sizeof *stop);
        uint32_t n = 0;
        for (uint64_t x = 0; x < len; x++)
            n += buf[x] == 0;
        if (stop && (stop->words = calloc(n ? n : 1, sizeof *stop->words)))
            for (uint64_t x = 0; x < len; x += strlen(buf + x) + 1)
                stop->words[stop->n++] = strdup(buf + x);
        else
            rc = jsmf_error(JSMF_ENOMEM, "out of memory");
    }
    if (!rc && j->grow)
        rc = jsmf_store_rule_set(j->sh, &r, stop);
    free(buf);
    jsmf_vocab_free(stop);
    return rc;
}

static int open_shard(job *j)
{
    if (j->p.h.fresh)
        store_files_remove(j->shard, NULL, 1);
    jsmf_vocab *v = NULL;
    int rc = share_vocab(j, &v, &j->df);
    if (rc)
        return rc;
    jsmf_store_params params = {0};
    if (j->rank == 0)
        rc = jsmf_store_params_get(j->main, &params);
    if (!(rc = comm_agree(j->c, rc)))
        rc = comm_bcast(j->c, &params, sizeof params, 0);
    if (!rc && (params.hold & JSMF_HOLD_DOCS)) /* the same answer on every rank */
        rc = jsmf_error(JSMF_EINVAL, "%s: the store holds its documents (--hold %s), which one "
                        "process ingests: run jsmf ingest without mpirun, or make the store with "
                        "--hold rows", j->store_path,
                        jsmf_store_hold_name(params.hold));
    if (!rc && (rc = jsmf_store_open(j->shard, JSMF_STORE_WRITE, &j->sh)) == JSMF_ENOTFOUND)
        rc = jsmf_store_create(j->shard, v, &params, &j->sh);
    else if (!rc && !store_has_vocab(j->sh)) {
        jsmf_store_close(j->sh), j->sh = NULL;
        store_files_remove(j->shard, NULL, 1);
        rc = jsmf_store_create(j->shard, v, &params, &j->sh);
    }
    jsmf_vocab_free(v);
    if (!(rc = comm_agree(j->c, rc)))
        rc = share_rule(j);
    return rc;
}

static int ingest_my_pieces(job *j, jsmf_ingest_summary *sum)
{
    uint32_t k = 0;
    jsmf_ingest_piece *mine = calloc(j->p.h.n_pieces ? j->p.h.n_pieces : 1, sizeof *mine);
    if (!mine)
        return jsmf_error(JSMF_ENOMEM, "out of memory");
    for (uint32_t i = 0; i < j->p.h.n_pieces; i++) {
        const plan_piece *x = &j->p.pc[i];
        if (x->rank != (uint32_t)j->rank)
            continue;
        mine[k++] = (jsmf_ingest_piece){j->p.in[x->input].path, x->key, x->start_offset,
                                        x->start_line, x->start_doc, x->end_offset};
    }
    jsmf_ingest_opts o = *j->o;
    o.df = j->df;
    if (j->rank) /* one progress line: rank 0's */
        o.progress = NULL;
    int rc = ingest_pieces(j->sh, mine, k, &o, sum);
    free(mine);
    return rc;
}

/* ---- adding the shards by row ranges ------------------------------------------------------- */

typedef struct outbuf {
    unsigned char *b;
    uint64_t n, cap;
} outbuf;

static int out_room(outbuf *o, uint64_t add)
{
    if (o->n + add <= o->cap)
        return JSMF_OK;
    uint64_t cap = o->cap ? o->cap : 1u << 16;
    while (cap < o->n + add)
        cap *= 2;
    unsigned char *b = realloc(o->b, cap);
    if (!b)
        return jsmf_error(JSMF_ENOMEM, "out of memory for the exchange buffer");
    o->b = b, o->cap = cap;
    return JSMF_OK;
}

static int pack_row(void *arg, uint32_t row, const uint32_t *cols, const jsmf_sum *sums,
                    uint32_t n)
{
    outbuf *o = arg;
    int rc = out_room(o, (uint64_t)n * ENTRY_BYTES);
    if (rc)
        return rc;
    unsigned char *q = o->b + o->n;
    for (uint32_t i = 0; i < n; i++, q += ENTRY_BYTES) {
        memcpy(q, &row, 4), memcpy(q + 4, &cols[i], 4), memcpy(q + 8, &sums[i], 16);
    }
    o->n += (uint64_t)n * ENTRY_BYTES;
    return JSMF_OK;
}

/* Rounds: global row blocks of about P x budget bytes of entries, each cut among the P ranks by
 * weight, so that every rank receives about one budget a round. bounds[r * (P+1) + o] is the
 * first row of owner o in round r. */
static int plan_rounds(job *j, const uint64_t *w, uint64_t budget, uint32_t **bounds)
{
    uint32_t n = j->n_words, P = (uint32_t)j->size, rounds = 0, cap = 0;
    uint32_t *b = NULL;
    for (uint32_t r0 = 0; r0 < n || rounds == 0;) {
        uint32_t r1 = r0;
        uint64_t acc = 0;
        while (r1 < n && (r1 == r0 || (acc + w[r1]) * ENTRY_BYTES <= budget * P))
            acc += w[r1++];
        if (rounds == cap) {
            cap = cap ? 2 * cap : 16;
            uint32_t *nb = realloc(b, sizeof *b * cap * (P + 1));
            if (!nb) {
                free(b);
                return jsmf_error(JSMF_ENOMEM, "out of memory");
            }
            b = nb;
        }
        for (uint32_t o = 0; o < P; o++) {
            uint32_t a, e;
            comm_split(r1 - r0, w + r0, (int)P, (int)o, &a, &e);
            b[rounds * (P + 1) + o] = r0 + a;
        }
        b[rounds * (P + 1) + P] = r1;
        rounds++;
        r0 = r1;
        if (r0 >= n)
            break;
    }
    *bounds = b;
    j->rounds = rounds;
    return JSMF_OK;
}

typedef struct entry {
    uint32_t col;
    jsmf_sum sum;
} entry;

static int by_col(const void *a, const void *b)
{
    uint32_t x = ((const entry *)a)->col, y = ((const entry *)b)->col;
    return x < y ? -1 : x > y;
}

/* Add the P sorted blocks received for rows [a, b) and append the rows, encoded as the store
 * encodes them, to this rank's segment file. */
static int reduce_rows(job *j, const unsigned char *recv, const uint64_t *rcounts, uint32_t a,
                       uint32_t b, outbuf *tmpbuf, uint32_t *cols, jsmf_sum *sums,
                       unsigned char *enc)
{
    uint32_t P = (uint32_t)j->size;
    uint64_t pos[P], end[P];
    uint64_t at = 0;
    for (uint32_t r = 0; r < P; r++)
        pos[r] = at, at += rcounts[r], end[r] = at;
    for (uint32_t row = a; row < b; row++) {
        uint64_t here = 0; /* entries of this row over the senders: room for them */
        for (uint32_t r = 0; r < P; r++)
            for (uint64_t q = pos[r]; q < end[r] && !memcmp(recv + q, &row, 4); q += ENTRY_BYTES)
                here++;
        if (!here)
            continue;
        tmpbuf->n = 0;
        int rc = out_room(tmpbuf, here * sizeof(entry));
        if (rc)
            return rc;
        entry *tmp = (entry *)(void *)tmpbuf->b;
        uint32_t k = 0;
        for (uint32_t r = 0; r < P; r++)
            for (; pos[r] < end[r]; pos[r] += ENTRY_BYTES) {
                uint32_t rr;
                memcpy(&rr, recv + pos[r], 4);
                if (rr != row)
                    break;
                memcpy(&tmp[k].col, recv + pos[r] + 4, 4);
                memcpy(&tmp[k].sum, recv + pos[r] + 8, 16);
                k++;
            }
        qsort(tmp, k, sizeof *tmp, by_col);
        uint32_t m = 0;
        for (uint32_t i = 0; i < k; i++) {
            if (m && cols[m - 1] == tmp[i].col)
                sums[m - 1] += tmp[i].sum;
            else
                cols[m] = tmp[i].col, sums[m++] = tmp[i].sum;
        }
        size_t len = store_encode_row(enc, row, cols, sums, m);
        uint32_t head[3] = {row, m, (uint32_t)len};
        if (fwrite(head, sizeof head, 1, j->sf) != 1 || fwrite(enc, 1, len, j->sf) != len)
            return jsmf_error(JSMF_EIO, "%s: %s", j->sums, strerror(errno));
    }
    for (uint32_t r = 0; r < P; r++)
        if (pos[r] != end[r])
            return jsmf_error(JSMF_EIO, "rank %d: entries from rank %u outside its rows",
                              j->rank, r);
    return JSMF_OK;
}

static int exchange_round(job *j, const uint32_t *bd, outbuf *send, uint64_t *scounts,
                          uint64_t *rcounts, outbuf *recv, outbuf *tmp, uint32_t *cols,
                          jsmf_sum *sums, unsigned char *enc)
{
    uint32_t P = (uint32_t)j->size;
    int rc = JSMF_OK;
    send->n = 0;
    for (uint32_t o = 0; o < P && !rc; o++) {
        uint64_t before = send->n;
        if (bd[o] < bd[o + 1])
            rc = store_scan_sums(j->sh, bd[o], bd[o + 1], pack_row, send);
        scounts[o] = send->n - before;
    }
    uint64_t *eight = malloc(sizeof *eight * P);
    if (!eight)
        return jsmf_error(JSMF_ENOMEM, "out of memory");
    for (uint32_t o = 0; o < P; o++)
        eight[o] = 8;
    rc = comm_agree(j->c, rc);
    if (!rc)
        rc = comm_alltoallv(j->c, scounts, eight, rcounts, eight);
    free(eight);
    uint64_t total = 0;
    for (uint32_t o = 0; o < P; o++)
        total += rcounts[o];
    recv->n = 0;
    if (!rc)
        rc = out_room(recv, total);
    if ((rc = comm_agree(j->c, rc)))
        return rc;
    if ((rc = comm_alltoallv(j->c, send->b, scounts, recv->b, rcounts)))
        return rc;
    j->bytes_received += total;
    return reduce_rows(j, recv->b, rcounts, bd[j->rank], bd[j->rank + 1], tmp, cols, sums, enc);
}

static int reduce_shards(job *j, uint64_t budget)
{
    uint32_t n = j->n_words, P = (uint32_t)j->size;
    uint64_t *w = malloc(sizeof *w * (n ? n : 1));
    uint32_t *bounds = NULL;
    if (!w)
        return jsmf_error(JSMF_ENOMEM, "out of memory");
    int rc = store_row_entries(j->sh, w);
    if (!(rc = comm_agree(j->c, rc)))
        rc = comm_allreduce(j->c, w, n, JSMF_COMM_U64, JSMF_COMM_SUM);
    if (!rc)
        rc = plan_rounds(j, w, budget, &bounds);
    free(w);
    if (rc)
        return rc;
    outbuf send = {0}, recv = {0}, tmp = {0};
    uint64_t *scounts = calloc(2 * (size_t)P, sizeof *scounts), *rcounts = scounts + P;
    uint32_t *cols = malloc(sizeof *cols * ((size_t)n + 1));
    jsmf_sum *sums = malloc(sizeof *sums * ((size_t)n + 1));
    unsigned char *enc = malloc(store_row_bytes(n ? n : 1));
    j->seg_off = calloc(j->rounds, sizeof *j->seg_off);
    j->seg_len = calloc(j->rounds, sizeof *j->seg_len);
    j->sf = fopen(j->sums, "w+b");
    if (!scounts || !cols || !sums || !enc || !j->seg_off || !j->seg_len)
        rc = jsmf_error(JSMF_ENOMEM, "out of memory");
    else if (!j->sf)
        rc = jsmf_error(JSMF_EIO, "%s: %s", j->sums, strerror(errno));
    rc = comm_agree(j->c, rc);
    for (uint32_t r = 0; r < j->rounds && !rc; r++) {
        j->seg_off[r] = (uint64_t)ftello(j->sf);
        rc = exchange_round(j, bounds + (size_t)r * (P + 1), &send, scounts, rcounts, &recv,
                            &tmp, cols, sums, enc);
        j->seg_len[r] = (uint64_t)ftello(j->sf) - j->seg_off[r];
        rc = comm_agree(j->c, rc);
    }
    if (!rc && fflush(j->sf))
        rc = jsmf_error(JSMF_EIO, "%s: %s", j->sums, strerror(errno));
    free(bounds), free(send.b), free(recv.b), free(scounts), free(tmp.b), free(cols), free(sums);
    free(enc);
    return comm_agree(j->c, rc);
}

/* ---- the commit: rank 0 pulls the reduced rows, segment by segment ------------------------ */

static int read_segment(job *j, uint32_t r, outbuf *o)
{
    o->n = 0;
    int rc = out_room(o, j->seg_len[r]);
    if (rc)
        return rc;
    if (fseeko(j->sf, (off_t)j->seg_off[r], SEEK_SET) ||
        fread(o->b, 1, j->seg_len[r], j->sf) != j->seg_len[r])
        return jsmf_error(JSMF_EIO, "%s: reading back: %s", j->sums, strerror(errno));
    o->n = j->seg_len[r];
    return JSMF_OK;
}

/* Ranks other than 0 answer rank 0's requests for their segments until it says it is done. */
static int serve_segments(job *j)
{
    outbuf o = {0};
    int rc = JSMF_OK;
    for (;;) {
        uint64_t ask;
        if ((rc = comm_recv(j->c, &ask, 8, 0, TAG_ASK)) || ask == NO_MORE)
            break;
        uint64_t len = 0;
        int bad = ask >= j->rounds || read_segment(j, (uint32_t)ask, &o);
        len = bad ? NO_MORE : o.n;
        if ((rc = comm_send(j->c, &len, 8, 0, TAG_LEN)))
            break;
        if (!bad && (rc = comm_send(j->c, o.b, len, 0, TAG_DATA)))
            break;
    }
    free(o.b);
    return rc;
}

static int emit_segment(const outbuf *o, jsmf_emit_encoded_fn emit, void *txnctx)
{
    uint64_t at = 0;
    int rc = JSMF_OK;
    while (!rc && at + 12 <= o->n) {
        uint32_t head[3];
        memcpy(head, o->b + at, sizeof head);
        at += sizeof head;
        if (at + head[2] > o->n)
            return jsmf_error(JSMF_EIO, "a reduced segment is truncated");
        rc = emit(txnctx, head[0], o->b + at, head[2], head[1]);
        at += head[2];
    }
    return rc;
}

/* The commit's rows callback on rank 0: may be replayed (map growth), so it asks again. */
static int pull_rows(void *arg, jsmf_emit_encoded_fn emit, void *txnctx)
{
    job *j = arg;
    outbuf o = {0};
    int rc = JSMF_OK;
    for (uint32_t r = 0; r < j->rounds && !rc; r++)
        for (int owner = 0; owner < j->size && !rc; owner++) {
            if (owner == 0) {
                rc = read_segment(j, r, &o);
            } else {
                uint64_t ask = r, len;
                if (!(rc = comm_send(j->c, &ask, 8, owner, TAG_ASK)) &&
                    !(rc = comm_recv(j->c, &len, 8, owner, TAG_LEN))) {
                    if (len == NO_MORE)
                        rc = jsmf_error(JSMF_EIO, "rank %d could not read its reduced rows",
                                        owner);
                    else if (!(rc = out_room(&o, len)) &&
                             !(rc = comm_recv(j->c, o.b, len, owner, TAG_DATA)))
                        o.n = len;
                }
            }
            if (!rc)
                rc = emit_segment(&o, emit, txnctx);
        }
    free(o.b);
    return rc;
}

/* One complete record per input: the sums of its pieces' counters, and the resume point of
 * its last piece, which is where a single process would have stopped. */
static int build_records(job *j, const jsmf_store_input *all, uint32_t nall,
                         jsmf_store_input **out)
{
    const plan *p = &j->p;
    jsmf_store_input *recs = calloc(p->h.n_inputs ? p->h.n_inputs : 1, sizeof *recs);
    uint64_t *last = calloc(p->h.n_inputs ? p->h.n_inputs : 1, sizeof *last);
    if (!recs || !last) {
        free(recs), free(last);
        return jsmf_error(JSMF_ENOMEM, "out of memory");
    }
    for (uint32_t i = 0; i < p->h.n_inputs; i++) {
        const plan_input *in = &p->in[i];
        recs[i].fingerprint = in->fingerprint, recs[i].occurrence = in->occurrence;
        recs[i].state = JSMF_INPUT_COMPLETE, recs[i].format = in->format;
        recs[i].size = in->size, recs[i].next_line = 1;
        snprintf(recs[i].path, sizeof recs[i].path, "%s", in->path);
    }
    int rc = JSMF_OK;
    for (uint32_t k = 0; k < p->h.n_pieces && !rc; k++) {
        const plan_piece *x = &p->pc[k];
        const jsmf_store_input *r = NULL;
        for (uint32_t i = 0; i < nall && !r; i++)
            if (all[i].fingerprint == x->key && all[i].state == JSMF_INPUT_COMPLETE)
                r = &all[i];
        if (!r) {
            rc = jsmf_error(JSMF_ESTORE, "%s: piece at byte %" PRIu64 " is not complete in the "
                            "shard of rank %u", p->in[x->input].path, x->start_offset, x->rank);
            break;
        }
        jsmf_store_input *t = &recs[x->input];
        t->docs += r->docs, t->docs_dropped += r->docs_dropped, t->tokens += r->tokens;
        t->tokens_dropped += r->tokens_dropped, t->oov_tokens += r->oov_tokens;
        if (x->start_offset >= last[x->input]) {
            last[x->input] = x->start_offset;
            t->next_offset = r->next_offset, t->next_line = r->next_line;
            t->next_doc = r->next_doc, t->format = r->format;
        }
    }
    free(last);
    if (rc)
        free(recs);
    else
        *out = recs;
    return rc;
}

/* Counters, word statistics and records of every shard, added up on rank 0's side. */
static int gather_totals(job *j, jsmf_store_counts *counts, uint64_t *dftf,
                         jsmf_store_input **recs_out)
{
    jsmf_store_stats st;
    jsmf_vocab *v = NULL;
    int rc = jsmf_store_stats_get(j->sh, &st);
    if (!rc)
        rc = jsmf_store_vocab_get(j->sh, &v);
    if (!rc)
        for (uint32_t i = 0; i < j->n_words; i++)
            dftf[i] = v->df ? v->df[i] : 0, dftf[j->n_words + i] = v->tf ? v->tf[i] : 0;
    jsmf_vocab_free(v);
    uint64_t c[5] = {st.docs, st.docs_dropped, st.tokens, st.tokens_dropped, st.oov_tokens};
    if ((rc = comm_agree(j->c, rc)) ||
        (rc = comm_allreduce(j->c, c, 5, JSMF_COMM_U64, JSMF_COMM_SUM)) ||
        (rc = comm_allreduce(j->c, dftf, 2ull * j->n_words, JSMF_COMM_U64,
                                  JSMF_COMM_SUM)))
        return rc;
    *counts = (jsmf_store_counts){c[0], c[1], c[2], c[3], c[4]};
    /* the pieces' records: a few per rank */
    jsmf_store_input *mine = NULL, *all = NULL;
    uint32_t nmine = 0;
    rc = jsmf_store_inputs_get(j->sh, &mine, &nmine);
    uint64_t *counts_b = calloc((size_t)j->size, 8);
    uint64_t my = (uint64_t)nmine * sizeof *mine, total = 0;
    if (!rc && !counts_b)
        rc = jsmf_error(JSMF_ENOMEM, "out of memory");
    if (!(rc = comm_agree(j->c, rc))) {
        counts_b[j->rank] = my;
        rc = comm_allreduce(j->c, counts_b, (uint64_t)j->size, JSMF_COMM_U64,
                                 JSMF_COMM_SUM);
    }
    for (int r = 0; !rc && r < j->size; r++)
        total += counts_b[r];
    if (!rc && !(all = malloc(total ? total : 1)))
        rc = jsmf_error(JSMF_ENOMEM, "out of memory");
    if (!(rc = comm_agree(j->c, rc)))
        rc = comm_allgatherv(j->c, mine, my, all, counts_b);
    if (!rc)
        rc = build_records(j, all, (uint32_t)(total / sizeof *all), recs_out);
    free(mine), free(all), free(counts_b);
    return rc;
}

/* A shard's pending words as records: u32 length, the bytes, u64 df, u64 tf. */
typedef struct pend_buf {
    char *b;
    uint64_t len, cap;
} pend_buf;

static int pend_record(void *arg, const char *w, uint32_t len, uint64_t df, uint64_t tf)
{
    pend_buf *p = arg;
    if (p->len + len + 20 > p->cap) {
        uint64_t c = p->cap ? p->cap : 65536;
        while (c < p->len + len + 20)
            c *= 2;
        char *nb = realloc(p->b, c);
        if (!nb)
            return jsmf_error(JSMF_ENOMEM, "out of memory");
        p->b = nb, p->cap = c;
    }
    memcpy(p->b + p->len, &len, 4);
    memcpy(p->b + p->len + 4, w, len);
    memcpy(p->b + p->len + 4 + len, &df, 8);
    memcpy(p->b + p->len + 12 + len, &tf, 8);
    p->len += len + 20;
    return JSMF_OK;
}

/* Every shard's pending words, added up on rank 0 into `t` (other ranks: only sent). */
static int gather_pending(job *j, pending_table *t)
{
    pend_buf mine = {0};
    int rc = j->grow ? store_pending_each(j->sh, pend_record, &mine) : JSMF_OK;
    uint64_t *counts = calloc((size_t)j->size, 8), total = 0;
    char *all = NULL;
    if (!rc && !counts)
        rc = jsmf_error(JSMF_ENOMEM, "out of memory");
    if (!(rc = comm_agree(j->c, rc))) {
        counts[j->rank] = mine.len;
        rc = comm_allreduce(j->c, counts, (uint64_t)j->size, JSMF_COMM_U64, JSMF_COMM_SUM);
    }
    for (int r = 0; !rc && r < j->size; r++)
        total += counts[r];
    if (!rc && !(all = malloc(total ? total : 1)))
        rc = jsmf_error(JSMF_ENOMEM, "out of memory");
    if (!(rc = comm_agree(j->c, rc)) && total)
        rc = comm_allgatherv(j->c, mine.b, mine.len, all, counts);
    for (uint64_t x = 0; !rc && j->rank == 0 && x < total;) {
        uint32_t len;
        uint64_t df, tf;
        memcpy(&len, all + x, 4);
        memcpy(&df, all + x + 4 + len, 8);
        memcpy(&tf, all + x + 12 + len, 8);
        rc = pending_add_counts(t, all + x + 4, len, df, tf);
        x += len + 20;
    }
    free(mine.b), free(all), free(counts);
    return rc;
}

static int commit_total(job *j)
{
    uint64_t *dftf = calloc(2 * (size_t)j->n_words + 1, 8);
    jsmf_store_counts counts;
    jsmf_store_input *recs = NULL;
    int rc = dftf ? JSMF_OK : jsmf_error(JSMF_ENOMEM, "out of memory");
    pending_table pend;
    pending_init(&pend, UINT64_MAX);
    if (!(rc = comm_agree(j->c, rc)))
        rc = gather_totals(j, &counts, dftf, &recs);
    if (!(rc = comm_agree(j->c, rc)))
        rc = gather_pending(j, &pend);
    if ((rc = comm_agree(j->c, rc))) {
        free(dftf), free(recs);
        pending_free(&pend);
        return rc;
    }
    if (counts.docs == 0) /* as jsmf_ingest_files: nothing usable came of the inputs */
        rc = jsmf_error(JSMF_EFORMAT, "nothing to ingest: none of the %" PRIu64 " documents of "
                        "the inputs adds to C (%" PRIu64 " dropped as too short)",
                        counts.docs_dropped, counts.docs_dropped);
    else if (j->rank == 0) {
        jsmf_store_flush f = {.rows_encoded = pull_rows, .rows_arg = j, .counts = counts,
                              .df = dftf, .tf = dftf + j->n_words, .inputs = recs,
                              .n_inputs = j->p.h.n_inputs, .exact_nnz = 1,
                              .counting = j->grow};
        rc = pending_list(&pend, &f.pending, &f.n_pending);
        if (!rc)
            rc = store_commit(j->main, &f);
        uint64_t done = NO_MORE;
        for (int r = 1; r < j->size; r++)
            if (comm_send(j->c, &done, 8, r, TAG_ASK) && !rc)
                rc = jsmf_error(JSMF_EIO, "telling rank %d the commit ended", r);
    } else {
        rc = serve_segments(j);
    }
    free(dftf), free(recs);
    pending_free(&pend);
    return comm_agree(j->c, rc);
}

/* ---- the job ----------------------------------------------------------------------------- */

static void job_free(job *j)
{
    if (j->sf)
        fclose(j->sf);
    if (j->sums[0])
        unlink(j->sums);
    jsmf_store_close(j->sh);
    free(j->p.in), free(j->p.pc), free(j->seg_off), free(j->seg_len), free(j->df);
}

/* After the commit: the shards and the plan have served; a rerun starts afresh. */
static void cleanup(job *j)
{
    jsmf_store_close(j->sh), j->sh = NULL;
    store_files_remove(j->shard, NULL, 1);
    unlink(j->sums);
    comm_barrier(j->c);
    if (j->rank == 0) {
        unlink(j->plan_path);
        if (!j->given_dir)
            rmdir(j->dir);
    }
}

static void sum_summaries(job *j, jsmf_ingest_summary *s)
{
    uint64_t v[9] = {s->docs, s->docs_dropped, s->tokens, s->tokens_dropped, s->oov_tokens,
                     s->pairs, s->flushes, s->oversize_docs, s->inputs_resumed};
    if (comm_allreduce(j->c, v, 9, JSMF_COMM_U64, JSMF_COMM_SUM))
        return;
    s->docs = v[0], s->docs_dropped = v[1], s->tokens = v[2], s->tokens_dropped = v[3];
    s->oov_tokens = v[4], s->pairs = v[5], s->flushes = v[6], s->oversize_docs = v[7];
    s->inputs_resumed = (uint32_t)v[8];
}

int ingest_dist(jsmf_comm *c, jsmf_store *s, const char *store_path,
                     const char *const *paths, uint32_t n, const jsmf_ingest_opts *o,
                     const jsmf_ingest_dist_opts *d, jsmf_ingest_dist_summary *sum)
{
    job j = {.c = c, .rank = jsmf_comm_rank(c), .size = jsmf_comm_size(c), .main = s,
             .store_path = store_path, .o = o};
    memset(sum, 0, sizeof *sum);
    double t0 = clock_seconds();
    jsmf_comm_stats c0;
    comm_stats_get(c, &c0);
    snprintf(j.dir, sizeof j.dir, "%s/mpi-ingest", store_path);
    if (d && d->shard_dir && *d->shard_dir)
        snprintf(j.dir, sizeof j.dir, "%s", d->shard_dir), j.given_dir = 1;
    snprintf(j.plan_path, sizeof j.plan_path, "%s/plan", j.dir);
    int rc = JSMF_OK;
    if (j.rank == 0) {
        /* the admission at the start, by rank 0 alone before the plan: the shards are made
         * with the grown vocabulary; its marks make a rerun plan the same job */
        jsmf_ingest_ahead ahead;
        rc = ingest_admit_ahead(s, paths, n, o, &ahead);
        free(ahead.marks);
        jsmf_store_stats st;
        if (!rc && !(rc = jsmf_store_stats_get(s, &st)))
            j.n_words = st.n_words;
        if (!rc)
            rc = make_plan(&j, paths, n, d ? d->piece_bytes : 0);
    }
    if (!(rc = comm_agree(c, rc)) && !(rc = comm_bcast(c, &j.n_words, 4, 0)))
        rc = share_plan(&j);
    if (rc)
        goto out;
    sum->pieces = j.p.h.n_pieces;
    sum->restarted = j.p.h.replaced && j.p.h.n_inputs; /* the earlier shards are gone */
    sum->ingest.inputs_skipped = j.p.h.skipped;
    snprintf(j.shard, sizeof j.shard, "%s/rank-%d", j.dir, j.rank);
    snprintf(j.sums, sizeof j.sums, "%s/rank-%d.sums", j.dir, j.rank);
    if (j.p.h.n_inputs == 0) {
        if (j.p.h.fresh) /* shards left by a job whose commit landed */
            cleanup(&j);
        uint32_t admitted = 0; /* a job killed between its commit and its admission */
        if (n && j.rank == 0)
            rc = jsmf_ingest_admit(s, &admitted);
        if (n && j.rank == 0 && !rc && !admitted) /* one message, from rank 0 */
            rc = jsmf_error(JSMF_EEXIST, "all %u input%s already ingested into %s; use "
                            "--force to add them again", n, n == 1 ? " is" : "s are",
                            store_path);
        rc = comm_agree(c, rc);
        goto out;
    }
    if (j.rank && mkdir(j.dir, 0777) && errno != EEXIST)
        rc = jsmf_error(JSMF_EIO, "%s: %s", j.dir, strerror(errno));
    if (!(rc = comm_agree(c, rc)))
        rc = open_shard(&j);
    if (!(rc = comm_agree(c, rc)))
        rc = ingest_my_pieces(&j, &sum->ingest);
    uint32_t skipped = j.p.h.skipped;
    sum->seconds_ingest = clock_seconds() - t0;
    if ((rc = comm_agree(c, rc))) {
        j.sums[0] = 0;
        goto out;
    }
    sum_summaries(&j, &sum->ingest);
    sum->ingest.inputs_skipped = skipped;
    sum->ingest.inputs_done = j.p.h.n_inputs;
    double t1 = clock_seconds();
    uint64_t budget = o && o->mem ? o->mem / 8 : 64u << 20;
    rc = reduce_shards(&j, budget);
    sum->seconds_exchange = clock_seconds() - t1;
    sum->rounds = j.rounds;
    sum->bytes_received = j.bytes_received;
    if (rc)
        goto out;
    double t2 = clock_seconds();
    rc = commit_total(&j);
    sum->seconds_commit = clock_seconds() - t2;
    if (!rc) {
        fclose(j.sf), j.sf = NULL;
        unlink(j.sums), j.sums[0] = 0;
        cleanup(&j);
        uint32_t admitted; /* the words that pass the rule, once the inputs are complete */
        rc = comm_agree(c, j.rank == 0 ? jsmf_ingest_admit(s, &admitted) : JSMF_OK);
    }
out:
    comm_stats_get(c, &sum->comm);
    sum->comm.bytes_sent -= c0.bytes_sent, sum->comm.seconds -= c0.seconds;
    sum->comm.calls -= c0.calls;
    sum->ingest.seconds = clock_seconds() - t0;
    job_free(&j);
    return rc;
}

/* ---- the vocabulary of a new store, counted by the ranks --------------------------------- */

/* Rank 0's plan of the inputs for counting: every input, no store to ask. */
static int plan_count(job *j, const char *const *paths, uint32_t n, uint64_t piece_bytes)
{
    plan *p = &j->p;
    memcpy(p->h.magic, PLAN_MAGIC, sizeof PLAN_MAGIC);
    p->h.ranks = (uint32_t)j->size;
    if (!(p->in = calloc(n ? n : 1, sizeof *p->in)))
        return jsmf_error(JSMF_ENOMEM, "out of memory");
    int rc = JSMF_OK;
    for (uint32_t i = 0; i < n && !rc; i++) {
        if (!strcmp(paths[i], "-"))
            return jsmf_error(JSMF_EINVAL, "stdin ('-') cannot be shared by %d MPI ranks: give "
                              "files, or ingest stdin without mpirun", j->size);
        plan_input *in = &p->in[p->h.n_inputs++];
        struct stat st;
        if (stat(paths[i], &st))
            return jsmf_error(JSMF_EIO, "%s: %s", paths[i], strerror(errno));
        in->size = (uint64_t)st.st_size;
        snprintf(in->path, sizeof in->path, "%s", paths[i]);
        rc = sniff_format(paths[i], j->o, &in->format);
    }
    return rc ? rc : plan_pieces(j, piece_bytes);
}

/* Every rank's packed counts added into rank 0's counter, one rank at a time: a rank sends its
 * size, rank 0 says whether it has room, and only then do the counts travel. */
static int gather_counts(job *j, jsmf_vocab_counter *vc)
{
    unsigned char *buf = NULL;
    uint64_t len = 0, go = 0;
    int rc = JSMF_OK;
    if (j->rank) {
        rc = vocab_counter_pack(vc, &buf, &len);
        uint64_t head = rc ? NO_MORE : len;
        int rs = comm_send(j->c, &head, 8, 0, TAG_LEN);
        if (!rc && !(rc = rs) && !(rc = comm_recv(j->c, &go, 8, 0, TAG_ASK)) && go)
            rc = comm_send(j->c, buf, len, 0, TAG_DATA);
        free(buf);
        return rc;
    }
    for (int r = 1; r < j->size; r++) {
        int rr = comm_recv(j->c, &len, 8, r, TAG_LEN);
        if (rr || len == NO_MORE) {
            rc = rc ? rc : rr ? rr : jsmf_error(JSMF_ENOMEM, "rank %d could not pack its word "
                                                "counts", r);
            continue;
        }
        unsigned char *b = malloc(len ? len : 1);
        go = b != NULL;
        if ((rr = comm_send(j->c, &go, 8, r, TAG_ASK)) && !rc)
            rc = rr;
        if (!b && !rc)
            rc = jsmf_error(JSMF_ENOMEM, "out of memory for rank %d's word counts", r);
        if (b && !rr && !(rr = comm_recv(j->c, b, len, r, TAG_DATA)) && !rc)
            rc = vocab_counter_unpack(vc, b, len);
        if (rr && !rc)
            rc = rr;
        free(b);
    }
    return rc;
}

int vocab_count_dist(jsmf_comm *c, const char *const *paths, uint32_t n,
                          const jsmf_read_opts *ro, const jsmf_vocab_opts *vo,
                          uint64_t piece_bytes, jsmf_vocab **out, jsmf_vocab_stats *st)
{
    *out = NULL;
    memset(st, 0, sizeof *st);
    jsmf_ingest_opts io = {.format = ro->format, .uci_vocab = ro->uci_vocab};
    job j = {.c = c, .rank = jsmf_comm_rank(c), .size = jsmf_comm_size(c), .o = &io};
    int rc = j.rank == 0 ? plan_count(&j, paths, n, piece_bytes) : JSMF_OK;
    if (!(rc = comm_agree(c, rc)))
        rc = share_plan(&j);
    jsmf_vocab_counter *vc = NULL;
    if (!rc)
        rc = vocab_counter_new(vo, &vc);
    for (uint32_t i = 0; i < j.p.h.n_pieces && !rc; i++) {
        const plan_piece *x = &j.p.pc[i];
        if (x->rank != (uint32_t)j.rank)
            continue;
        jsmf_read_opts r = *ro;
        r.start_offset = x->start_offset, r.start_line = x->start_line;
        r.start_doc = x->start_doc, r.end_offset = x->end_offset;
        rc = vocab_counter_add(vc, j.p.in[x->input].path, &r, NULL, NULL);
    }
    if (!(rc = comm_agree(c, rc)))
        rc = gather_counts(&j, vc);
    if (!(rc = comm_agree(c, rc)) && j.rank == 0)
        rc = vocab_counter_finish(vc, out, st);
    vocab_counter_free(vc);
    free(j.p.in), free(j.p.pc);
    return comm_agree(c, rc);
}
