/* run.c — one ingest as `jsmf ingest` runs it: the store opened or created with its vocabulary,
 * the inputs ingested by one process or the ranks of an MPI job, a store the run created removed
 * again when it fails; and what the run did, as lines for people. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jsmf_comm.h"
#include "jsmf_ingest.h"
#include "core/tell.h"
#include "core/out.h"
#include "ingest_internal.h"

static jsmf_ingest_store_opts store_opts(const jsmf_ingest_run_opts *o)
{
    jsmf_ingest_store_opts so = {0};
    so.vocab = o->vocab;
    so.min_doc_len = o->min_doc_len;
    so.min_doc_len_given = o->min_doc_len_given;
    so.hold = o->hold;
    so.format = (jsmf_format)o->ingest.format;
    so.uci_vocab = o->ingest.uci_vocab;
    so.mem = o->ingest.mem ? o->ingest.mem : jsmf_mem_default();
    so.mem_below_need = o->ingest.mem_below_need;
    so.progress = o->ingest.progress;
    so.progress_arg = o->ingest.progress_arg;
    so.threads = o->ingest.threads;
    so.rule = o->rule;
    return so;
}

int jsmf_ingest_run(const char *path, const char *const *inputs, uint32_t n,
                    const jsmf_ingest_run_opts *o, struct jsmf_comm *c,
                    jsmf_ingest_run_summary *r)
{
    memset(r, 0, sizeof *r);
    r->ranks = c ? jsmf_comm_size(c) : 1;
    int job = r->ranks > 1, rank = c ? jsmf_comm_rank(c) : 0;
    jsmf_ingest_target target; /* a new store whose first ingest fails leaves nothing behind */
    if (rank == 0)
        ingest_target_note(path, &target);
    jsmf_ingest_store_opts so = store_opts(o);
    jsmf_store *s = NULL;
    uint64_t *df = NULL;
    int rc = job ? ingest_open_store_dist(c, path, inputs, n, &so, &s, &df, &r->vocab)
                 : ingest_open_store(path, inputs, n, &so, &s, &df, &r->vocab);
    jsmf_store_stats before = {0}, after = {0};
    if (!rc && s)
        rc = jsmf_store_stats_get(s, &before);
    if (!rc && r->vocab.words_kept && o->counted)
        o->counted(o->counted_arg, &r->vocab);
    jsmf_ingest_opts io = o->ingest;
    io.df = job ? NULL : df; /* a job plans by the store's vocabulary counts */
    if (!rc && job)
        rc = ingest_dist(c, s, path, inputs, n, &io, &o->dist, &r->dist);
    else if (!rc)
        rc = jsmf_ingest_files(s, inputs, n, &io, &r->ingest);
    if (job)
        r->ingest = r->dist.ingest;
    if (!rc && s && !jsmf_store_stats_get(s, &after))
        r->words_admitted = after.n_words - before.n_words;
    free(df);
    if (rank == 0 && rc)
        ingest_target_discard(path, &target, s);
    else if (rank == 0)
        jsmf_store_close(s);
    if (!rc && r->ingest.inputs_repeated) /* a checkpoint came before stdin's end showed it */
        tell_line(io.warn, io.warn_arg, "stdin repeated content that %s already held completely; "
                  "a checkpoint had stored part of it before its end showed that, so it was "
                  "completed again as a new occurrence (`jsmf info` lists both; ingest a file to "
                  "have a repeat refused up front)", path);
    return rc;
}

void jsmf_ingest_vocab_write(FILE *f, const char *prefix, const jsmf_vocab_stats *st)
{
    if (st->words_kept)
        report_line(f, prefix, "vocabulary: %" PRIu64 " words kept of %" PRIu64 " seen in "
                         "%" PRIu64 " documents", st->words_kept, st->words_seen,
                         st->docs_counted);
}

void jsmf_ingest_run_write(FILE *f, const char *p, const char *store, uint64_t mem,
                           const jsmf_ingest_run_summary *r)
{
    const jsmf_ingest_dist_summary *d = &r->dist;
    if (r->ranks > 1 && d->restarted)
        report_line(f, p, "shards of an earlier job with other inputs or ranks were dropped");
    ingest_summary_write(f, p, store, mem, &r->ingest);
    if (r->words_admitted)
        report_line(f, p, "%u new word%s admitted to the vocabulary (jsmf info shows the "
                         "rule)", r->words_admitted, r->words_admitted == 1 ? "" : "s");
    if (r->ranks < 2)
        return;
    report_line(f, p, "%d ranks, %u pieces: ingest %.2f s, exchange %.2f s in %u rounds,",
                     r->ranks, d->pieces, d->seconds_ingest, d->seconds_exchange, d->rounds);
    report_line(f, p, "  rank 0 sent %.1f MB, %.2f s in MPI; commit %.2f s",
                     d->comm.bytes_sent / 1e6, d->comm.seconds, d->seconds_commit);
}

void jsmf_ingest_dist_opts_init(jsmf_ingest_dist_opts *o)
{
    *o = (jsmf_ingest_dist_opts){0};
}

void jsmf_ingest_run_opts_init(jsmf_ingest_run_opts *o)
{
    *o = (jsmf_ingest_run_opts){.min_doc_len = 5};
    jsmf_ingest_opts_init(&o->ingest);
    jsmf_ingest_dist_opts_init(&o->dist);
}
