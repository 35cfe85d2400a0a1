/* store.c — the LMDB environment of a store: opening (writer lock, version check, map size),
 * creation with a fixed vocabulary, counters, the vocabulary and the input records. */
#include "codec.h"
#include "env.h"
#include "files.h"
#include "growth.h"
#include "registry.h"
#include "runs.h"

#include "core/bigmem.h"
#include "core/durable.h"
#include "core/hash.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "store.h"

#define DEFAULT_MAPSIZE (1ULL << 40) /* 1 TiB: only address space */
#define DEFAULT_TXN_BYTES (32ULL << 20)

/* ---- opening ---------------------------------------------------------------------------- */

/* meta "version": not checked, so that an older jsmf reads it and refuses a newer store. */
static int load_version(jsmf_store *s, MDB_txn *t, uint64_t *ver)
{
    MDB_val k = store_key("version"), v;
    int rc = mdb_get(t, s->meta, &k, &v);
    *ver = 0;
    if (rc && rc != MDB_NOTFOUND)
        return store_lmdb_error(s, rc, "reading meta");
    if (rc == 0 && v.mv_size != 8)
        return jsmf_error(JSMF_ESTORE, "%s: meta 'version' has %zu bytes, expected 8", s->path,
                          v.mv_size);
    if (rc == 0)
        *ver = get_u64(v.mv_data);
    if (*ver > JSMF_STORE_FORMAT_VERSION || *ver == 0)
        return jsmf_error(JSMF_EVERSION,
                          "%s: store format version %" PRIu64 " is not supported by this jsmf "
                          "(reads versions 1 to %d); use a newer jsmf",
                          s->path, *ver, JSMF_STORE_FORMAT_VERSION);
    return JSMF_OK;
}

/* Every meta record of a checked store against its checksum, at open: readers look meta up by
 * name and take an absent counter for 0, so a damaged name would otherwise read as a counter
 * never written. */
static int check_all_meta(jsmf_store *s, MDB_txn *t)
{
    MDB_cursor *c;
    int rc = mdb_cursor_open(t, s->meta, &c);
    if (rc)
        return store_lmdb_error(s, rc, "reading meta");
    MDB_val k, v;
    uint64_t seen = 0;
    for (rc = mdb_cursor_get(c, &k, &v, MDB_FIRST); rc == 0;
         seen++, rc = mdb_cursor_get(c, &k, &v, MDB_NEXT)) {
        if (!store_meta_key_raw(&k) && (rc = store_value_check(s, s->meta, &k, &v)))
            break;
    }
    rc = store_scan_end(s, c, seen, rc, "reading meta");
    mdb_cursor_close(c);
    return rc;
}

/* A checked store (version 7) repeats its version in the checked meta "check": a damaged
 * "version" that still reads as a version is caught here. */
static int check_version(jsmf_store *s, MDB_txn *t, uint64_t ver)
{
    s->checked = ver >= 7;
    if (!s->checked)
        return JSMF_OK;
    uint64_t again;
    int rc = check_all_meta(s, t);
    if (!rc)
        rc = store_meta_get_u64(s, t, "check", &again);
    if (!rc && again != ver)
        rc = jsmf_error(JSMF_ESTORE, "%s: damaged: meta 'version' says %" PRIu64 ", its checked "
                        "copy 'check' %" PRIu64, s->path, ver, again);
    return rc;
}

/* Read format name, version and the creation parameters; refuses newer versions. */
static int load_meta(jsmf_store *s, MDB_txn *t)
{
    MDB_val k = store_key("format"), v;
    int rc = mdb_get(t, s->meta, &k, &v); /* not checked, as "version" */
    if (rc == MDB_NOTFOUND) {
        s->has_vocab = 0;
        s->checked = 1; /* a store this process creates */
        return JSMF_OK;
    }
    if (rc)
        return store_lmdb_error(s, rc, "reading meta");
    if (v.mv_size != 10 || memcmp(v.mv_data, "jsmf-store", 10))
        return jsmf_error(JSMF_ESTORE, "%s: not a jsmf store (meta 'format' is '%.*s')", s->path,
                          (int)(v.mv_size > 64 ? 64 : v.mv_size), (const char *)v.mv_data);
    uint64_t ver, n, mdl, tmin, tmax;
    if ((rc = load_version(s, t, &ver)) || (rc = check_version(s, t, ver)))
        return rc;
    if ((rc = store_meta_get_u64(s, t, "n_words", &n)) ||
        (rc = store_meta_get_u64(s, t, "min_doc_len", &mdl)) ||
        (rc = store_meta_get_u64(s, t, "tok_min_len", &tmin)) ||
        (rc = store_meta_get_u64(s, t, "tok_max_len", &tmax)))
        return rc;
    s->version = (uint32_t)ver;
    s->n_words = (uint32_t)n;
    uint64_t hold = 0;
    if ((rc = store_meta_get_u64(s, t, "hold", &hold)))
        return rc;
    if (hold == 0) /* written before version 6 */
        hold = JSMF_HOLD_ROWS;
    if (hold > JSMF_HOLD_BOTH)
        return jsmf_error(JSMF_ESTORE, "%s: meta 'hold' is %" PRIu64 " (1 rows, 2 documents, 3 "
                          "both)", s->path, hold);
    s->hold = (uint32_t)hold;
    s->params = (jsmf_store_params){.min_doc_len = (uint32_t)mdl, .tok_min_len = (uint32_t)tmin,
                                    .tok_max_len = (uint32_t)tmax, .hold = s->hold};
    s->has_vocab = 1;
    return JSMF_OK;
}

/* ---- open / close ----------------------------------------------------------------------- */

/* A data.mdb shorter than its last checkpoint's pages (a torn copy, a truncated file): LMDB
 * would fault (SIGBUS) on the first page past the end, so refuse it before any is read. LMDB
 * read the meta pages with read(2), not through the map. */
static int refuse_truncated(jsmf_store *s, const MDB_envinfo *info)
{
    MDB_stat st;
    struct stat fs;
    char data[4096];
    store_file_path(data, sizeof data, s->path, STORE_FILE_DATA);
    if (mdb_env_stat(s->env, &st) || stat(data, &fs))
        return JSMF_OK;
    uint64_t need = ((uint64_t)info->me_last_pgno + 1) * st.ms_psize;
    if ((uint64_t)fs.st_size >= need)
        return JSMF_OK;
    return jsmf_error(JSMF_ESTORE, "%s: damaged: data.mdb has %" PRIu64 " bytes, its last "
                      "checkpoint needs %" PRIu64 " (a truncated file or a torn copy)", s->path,
                      (uint64_t)fs.st_size, need);
}

static long env_long(const char *name)
{
    const char *v = getenv(name);
    return v && *v ? strtol(v, NULL, 10) : 0;
}

static int take_writer_lock(jsmf_store *s)
{
    char lock[4096];
    store_file_path(lock, sizeof lock, s->path, STORE_FILE_WRITER_LOCK);
    s->lockfd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (s->lockfd < 0)
        return jsmf_error(JSMF_EIO, "%s: cannot open lock file: %s", s->path, strerror(errno));
    if (flock(s->lockfd, LOCK_EX | LOCK_NB) != 0) {
        if (errno == EWOULDBLOCK)
            return jsmf_error(JSMF_EBUSY, "%s: another jsmf process is writing to this store",
                              s->path);
        return jsmf_error(JSMF_EIO, "%s: cannot lock: %s", s->path, strerror(errno));
    }
    return JSMF_OK;
}

static int prepare_dir(const char *path, int flags)
{
    struct stat st;
    char data[4096];
    store_file_path(data, sizeof data, path, STORE_FILE_DATA);
    if (stat(path, &st) != 0) {
        if (!(flags & JSMF_STORE_CREATE))
            return jsmf_error(JSMF_ENOTFOUND, "%s: no such store", path);
        if (mkdir(path, 0755) != 0)
            return jsmf_error(durable_errcode(errno),
                              "%s: cannot create store directory: %s", path, strerror(errno));
        return JSMF_OK;
    }
    if (!S_ISDIR(st.st_mode))
        return jsmf_error(JSMF_EINVAL, "%s: exists and is not a store directory", path);
    if (!(flags & JSMF_STORE_CREATE) && stat(data, &st) != 0)
        return jsmf_error(JSMF_ENOTFOUND, "%s: not a jsmf store (no data.mdb)", path);
    if ((flags & JSMF_STORE_WRITE) && access(path, W_OK) != 0)
        return jsmf_error(JSMF_EIO, "%s: store directory is not writable: %s", path,
                          strerror(errno));
    return JSMF_OK;
}

/* A name of the main database a jsmf store may hold: its databases and runs. */
static int store_db_name(const MDB_val *k)
{
    static const char *names[] = {"meta", "vocab", "wordstats", "C", "inputs", "pending",
                                  "admitted", "docs"};
    for (int i = 0; i < 8; i++)
        if (k->mv_size == strlen(names[i]) && !memcmp(k->mv_data, names[i], k->mv_size))
            return 1;
    return k->mv_size == 12 && !memcmp(k->mv_data, "run.", 4);
}

/* Before a writer creates anything: an LMDB environment holding keys of its own is not a
 * store, and writing into it would change someone else's data. Read only. */
static int refuse_foreign(jsmf_store *s)
{
    MDB_txn *t;
    MDB_dbi main_db, meta;
    MDB_cursor *c;
    MDB_val k, v;
    int rc = mdb_txn_begin(s->env, NULL, MDB_RDONLY, &t);
    if (rc)
        return store_lmdb_error(s, rc, "cannot begin transaction");
    if ((rc = mdb_dbi_open(t, NULL, 0, &main_db)) || (rc = mdb_cursor_open(t, main_db, &c))) {
        mdb_txn_abort(t);
        return store_lmdb_error(s, rc, "cannot read the environment");
    }
    int foreign = 0;
    while (!foreign && (rc = mdb_cursor_get(c, &k, &v, MDB_NEXT)) == 0)
        if (!store_db_name(&k))
            foreign = 1;
    mdb_cursor_close(c);
    if (!foreign && mdb_dbi_open(t, "meta", 0, &meta) == 0) { /* ours: meta names the format */
        MDB_stat st;
        MDB_val fk = {6, "format"}, fv;
        if (mdb_stat(t, meta, &st) == 0 && st.ms_entries > 0 &&
            (mdb_get(t, meta, &fk, &fv) || fv.mv_size != 10 || memcmp(fv.mv_data, "jsmf-store", 10)))
            foreign = 2;
    }
    mdb_txn_abort(t);
    if (foreign)
        return jsmf_error(JSMF_ESTORE, "%s: an LMDB environment that is not a jsmf store (%s); "
                          "nothing was written to it", s->path,
                          foreign == 1 ? "it holds keys of its own" : "its 'meta' is not a store's");
    return rc == MDB_NOTFOUND ? JSMF_OK : store_lmdb_error(s, rc, "cannot read the environment");
}

static int open_dbs(jsmf_store *s)
{
    MDB_txn *t;
    unsigned tflags = s->writable ? 0 : MDB_RDONLY;
    unsigned dflags = s->writable ? MDB_CREATE : 0;
    int rc = mdb_txn_begin(s->env, NULL, tflags, &t);
    if (rc)
        return store_lmdb_error(s, rc, "cannot begin transaction");
    const char *names[] = {"meta", "vocab", "wordstats", "C", "inputs"};
    MDB_dbi *dbis[] = {&s->meta, &s->vocab, &s->wordstats, &s->C, &s->inputs};
    for (int i = 0; i < 5; i++) {
        rc = store_dbi_open(s, t, names[i], dflags, dbis[i]);
        if (rc == MDB_NOTFOUND) {
            mdb_txn_abort(t);
            return jsmf_error(JSMF_ENOTFOUND, "%s: not a jsmf store (no '%s' database)", s->path,
                              names[i]);
        }
        if (rc) {
            mdb_txn_abort(t);
            return store_lmdb_error(s, rc, "cannot open database");
        }
    }
    /* growth's databases (version 5): a writer makes them, a reader of an older store has none */
    const char *gnames[] = {"pending", "admitted", "docs"};
    MDB_dbi *gdbis[] = {&s->pending, &s->admitted, &s->docs};
    s->has_growth_dbs = 1, s->has_docs_db = 1;
    for (int i = 0; i < 3; i++) {
        rc = store_dbi_open(s, t, gnames[i], dflags, gdbis[i]);
        if (rc == MDB_NOTFOUND && !s->writable) { /* version 6 made docs */
            *(i < 2 ? &s->has_growth_dbs : &s->has_docs_db) = 0;
            continue;
        }
        if (rc) {
            mdb_txn_abort(t);
            return store_lmdb_error(s, rc, "cannot open database");
        }
    }
    if ((rc = load_meta(s, t))) {
        mdb_txn_abort(t);
        return rc;
    }
    rc = mdb_txn_commit(t); /* also for read-only: keeps the database handles open */
    return rc ? store_lmdb_error(s, rc, "cannot commit") : JSMF_OK;
}

int jsmf_store_open(const char *path, int flags, jsmf_store **out)
{
    *out = NULL;
    if (flags & JSMF_STORE_CREATE)
        flags |= JSMF_STORE_WRITE;
    int rc = prepare_dir(path, flags);
    if (rc)
        return rc;
    jsmf_store *s = calloc(1, sizeof *s);
    if (!s || !(s->path = strdup(path))) {
        free(s);
        return jsmf_error(JSMF_ENOMEM, "out of memory");
    }
    s->lockfd = -1;
    s->writable = (flags & JSMF_STORE_WRITE) != 0;
    s->hook_exit_after = env_long("JSMF_TEST_EXIT_AFTER_COMMIT");
    s->hook_exit_inside = env_long("JSMF_TEST_EXIT_IN_COMMIT");
    s->hook_enospc = env_long("JSMF_TEST_ENOSPC_AT_COMMIT");
    s->hook_exit_stage = env_long("JSMF_TEST_EXIT_IN_STAGE");
    s->hook_exit_create = env_long("JSMF_TEST_EXIT_IN_CREATE");
    if (s->hook_exit_create == 1 && (flags & JSMF_STORE_CREATE))
        _exit(94); /* test hook: die with the store's directory made, nothing in it */
    long tb = env_long("JSMF_STORE_TXN_BYTES"); /* tests: tiny staged transactions */
    s->txn_bytes = tb > 0 ? (uint64_t)tb : DEFAULT_TXN_BYTES;
    s->txn_fixed = tb > 0;
    if (s->writable && (rc = take_writer_lock(s)))
        goto fail;
    if ((rc = mdb_env_create(&s->env))) {
        rc = store_lmdb_error(s, rc, "cannot create environment");
        goto fail;
    }
    mdb_env_set_maxdbs(s->env, RUNS_MAX + 16);
    mdb_env_set_maxreaders(s->env, 254);
    if (s->writable) {
        long m = env_long("JSMF_STORE_MAPSIZE"); /* tests: a tiny map exercises growth */
        s->mapsize = m > 0 ? (uint64_t)m : DEFAULT_MAPSIZE;
        /* an existing map larger than ours is kept by LMDB */
        mdb_env_set_mapsize(s->env, s->mapsize);
    }
    unsigned eflags = MDB_NOTLS | (s->writable ? 0 : MDB_RDONLY);
    if (s->writable && env_long("JSMF_STORE_NOSYNC") > 0)
        eflags |= MDB_NOSYNC; /* tests only: survives kill -9, not a power cut */
    if ((rc = mdb_env_open(s->env, path, eflags, 0644))) {
        rc = rc == EACCES ? jsmf_error(JSMF_EIO, "%s: permission denied", path)
                          : store_lmdb_error(s, rc, "cannot open");
        goto fail;
    }
    MDB_envinfo info;
    mdb_env_info(s->env, &info);
    s->mapsize = info.me_mapsize;
    if ((rc = refuse_truncated(s, &info)))
        goto fail;
    if ((s->writable && (rc = refuse_foreign(s))) || (rc = open_dbs(s)))
        goto fail;
    if (s->hook_exit_create == 2 && (flags & JSMF_STORE_CREATE) && !s->has_vocab)
        _exit(94); /* test hook: die with the environment and its empty databases made */
    if (s->writable && s->has_vocab && (rc = runs_writer_open(s)))
        goto fail;
    if (!s->writable && !s->has_vocab) {
        rc = jsmf_error(JSMF_ENOTFOUND, "%s: store has no vocabulary yet (never ingested)", path);
        goto fail;
    }
    *out = s;
    return JSMF_OK;
fail:
    jsmf_store_close(s);
    return rc;
}

void jsmf_store_close(jsmf_store *s)
{
    if (!s)
        return;
    jsmf_store_source_release(s);
    for (int i = 0; i < 2; i++)
        big_free(s->stage_buf[i], s->stage_buf_cap[i]);
    if (s->env)
        mdb_env_close(s->env);
    if (s->lockfd >= 0)
        close(s->lockfd); /* releases the flock */
    free(s->path);
    free(s);
}

const char *jsmf_store_hold_name(uint32_t hold)
{
    return hold == JSMF_HOLD_ROWS ? "rows" : hold == JSMF_HOLD_DOCS ? "docs"
           : hold == JSMF_HOLD_BOTH ? "both" : "?";
}

const char *jsmf_store_path(const jsmf_store *s)
{
    return s->path;
}

uint32_t jsmf_store_format_version(const jsmf_store *s)
{
    return s->version;
}

int store_has_vocab(jsmf_store *s)
{
    return s->has_vocab;
}

int jsmf_store_params_get(jsmf_store *s, jsmf_store_params *out)
{
    *out = s->params;
    return JSMF_OK;
}

/* ---- creation --------------------------------------------------------------------------- */

int store_init(jsmf_store *s, const jsmf_vocab *v, const jsmf_store_params *p,
               const jsmf_store_rule *rule, const jsmf_vocab *stop)
{
    if (!s->writable)
        return jsmf_error(JSMF_EINVAL, "%s: store opened read-only", s->path);
    if (s->has_vocab)
        return jsmf_error(JSMF_EEXIST, "%s: store already has a vocabulary", s->path);
    if (!v || v->n == 0)
        return jsmf_error(JSMF_EINVAL, "%s: empty vocabulary", s->path);
    for (;;) {
        MDB_txn *t;
        int rc = store_write_begin(s, &t);
        if (rc)
            return rc;
        MDB_val k = store_key("format"), val = {10, "jsmf-store"};
        if ((rc = mdb_put(t, s->meta, &k, &val, 0)))
            rc = store_lmdb_error(s, rc, "writing meta");
        uint32_t hold = p->hold ? p->hold : JSMF_HOLD_CHOSEN;
        const char *names[] = {"n_words", "min_doc_len", "tok_min_len", "tok_max_len", "hold"};
        uint64_t vals[] = {v->n, p->min_doc_len, p->tok_min_len, p->tok_max_len, hold};
        if (hold > JSMF_HOLD_BOTH)
            rc = jsmf_error(JSMF_EINVAL, "%s: hold %u is not rows, docs or both", s->path, hold);
        s->checked = 1;
        if (!rc)
            rc = store_version_put(s, t, JSMF_STORE_FORMAT_VERSION);
        for (int i = 0; i < 5 && !rc; i++)
            rc = store_meta_put_u64(s, t, names[i], vals[i]);
        for (uint32_t i = 0; i < v->n && !rc; i++) {
            unsigned char kb[4];
            put_be32(kb, i);
            MDB_val wk = {4, kb}, wv = {strlen(v->words[i]), v->words[i]};
            if ((rc = store_put(s, t, s->vocab, &wk, &wv, MDB_APPEND)))
                rc = store_lmdb_error(s, rc, "writing vocabulary");
        }
        if (!rc && rule)
            rc = store_rule_put(s, t, rule, stop);
        if (!rc && (rc = mdb_txn_commit(t)))
            rc = store_lmdb_error(s, rc, "committing vocabulary");
        else if (!rc && s->hook_exit_create == 3)
            _exit(94); /* test hook: die with the vocabulary and rule, before any checkpoint */
        else if (rc)
            mdb_txn_abort(t);
        if (rc && s->map_full) {
            if ((rc = store_grow_map(s)))
                return rc;
            continue;
        }
        if (rc)
            return rc;
        s->has_vocab = 1;
        s->n_words = v->n;
        s->version = JSMF_STORE_FORMAT_VERSION;
        s->params = *p;
        s->params.hold = s->hold = hold;
        return JSMF_OK;
    }
}

int jsmf_store_create(const char *path, const jsmf_vocab *v, const jsmf_store_params *p,
                      jsmf_store **out)
{
    return store_create_ruled(path, v, p, NULL, NULL, out);
}

int store_create_ruled(const char *path, const jsmf_vocab *v, const jsmf_store_params *p,
                       const jsmf_store_rule *rule, const jsmf_vocab *stop, jsmf_store **out)
{
    *out = NULL;
    char data[4096];
    struct stat st;
    store_file_path(data, sizeof data, path, STORE_FILE_DATA);
    int made_dir = stat(path, &st) != 0, made_env = stat(data, &st) != 0;
    jsmf_store *s;
    int rc = jsmf_store_open(path, JSMF_STORE_CREATE, &s);
    if (rc)
        return rc; /* nothing made: a foreign or busy environment is left as it was */
    if (store_has_vocab(s))
        rc = jsmf_error(JSMF_EEXIST, "%s: a store already exists there", path);
    else
        rc = store_init(s, v, p, rule, stop);
    if (rc) {
        int ours = !store_has_vocab(s) && made_env;
        jsmf_store_close(s);
        if (ours)
            store_files_remove(path, NULL, made_dir);
        return rc;
    }
    *out = s;
    return JSMF_OK;
}

/* ---- reading ---------------------------------------------------------------------------- */

/* The store fingerprint's FNV-1a starts from FNV's offset basis short of its last digit: a slip
 * kept, since fingerprints users have recorded must stay what they were. */
#define STORE_FINGERPRINT_BASIS UINT64_C(1469598103934665603)

static const char *const counter_names[] = {"docs", "docs_dropped", "tokens", "tokens_dropped",
                                            "oov_tokens", "nnz"};

int jsmf_store_stats_get(jsmf_store *s, jsmf_store_stats *out)
{
    memset(out, 0, sizeof *out);
    MDB_txn *t;
    int rc = store_read_begin(s, &t);
    if (rc)
        return rc;
    uint64_t c[6];
    for (int i = 0; i < 6 && !rc; i++)
        rc = store_meta_get_u64(s, t, counter_names[i], &c[i]);
    if (rc) {
        mdb_txn_abort(t);
        return rc;
    }
    out->n_words = s->n_words;
    out->docs = c[0], out->docs_dropped = c[1], out->tokens = c[2];
    out->tokens_dropped = c[3], out->oov_tokens = c[4], out->nnz = c[5];
    out->min_doc_len = s->params.min_doc_len;
    out->format_version = s->version;
    /* fingerprint: the counters, the vocabulary and every input record */
    uint64_t h = hash_fnv1a(STORE_FINGERPRINT_BASIS, c, sizeof c);
    h = hash_fnv1a(h, &s->n_words, 4);
    MDB_cursor *cur;
    MDB_val k, v;
    const MDB_dbi dbs[2] = {s->vocab, s->inputs};
    for (int d = 0; d < 2 && !rc; d++) {
        if ((rc = mdb_cursor_open(t, dbs[d], &cur))) {
            rc = store_lmdb_error(s, rc, "cursor");
            break;
        }
        int r;
        uint64_t seen = 0;
        for (r = store_cursor_get(s, cur, &k, &v, MDB_FIRST); r == 0;
             seen++, r = store_cursor_get(s, cur, &k, &v, MDB_NEXT)) {
            h = hash_fnv1a(h, k.mv_data, k.mv_size);
            h = hash_fnv1a(h, v.mv_data, d == 0 ? v.mv_size : 8); /* an input's state, not its path */
            if (d == 1)
                out->n_inputs++;
        }
        rc = store_scan_end(s, cur, seen, r, "reading the vocabulary and inputs");
        mdb_cursor_close(cur);
    }
    run_list l;
    uint64_t exact = 1;
    if (!rc && !(rc = runs_get(s, t, &l)))
        out->runs = l.n;
    if (!rc && !(rc = store_nnz_exact(s, t, &exact)))
        out->nnz_exact = exact != 0;
    out->hold = s->hold;
    if (!rc)
        rc = store_meta_get_u64(s, t, "doc_nnz", &out->doc_nnz);
    if (!rc)
        rc = store_meta_get_u64(s, t, "doc_bytes", &out->doc_bytes);
    if (!rc && !(s->hold & JSMF_HOLD_ROWS)) { /* a bound: at most N^2 */
        double n2 = (double)s->n_words * (double)s->n_words;
        if ((double)out->nnz > n2)
            out->nnz = (uint64_t)n2;
    }
    mdb_txn_abort(t);
    out->fingerprint = h;
    char data[4096];
    struct stat st;
    store_file_path(data, sizeof data, s->path, STORE_FILE_DATA);
    if (stat(data, &st) == 0)
        out->bytes = (uint64_t)st.st_size;
    return rc;
}

int jsmf_store_vocab_get(jsmf_store *s, jsmf_vocab **out)
{
    *out = NULL;
    jsmf_vocab *v = calloc(1, sizeof *v);
    if (!v)
        return jsmf_error(JSMF_ENOMEM, "out of memory");
    v->n = s->n_words;
    v->words = calloc(v->n ? v->n : 1, sizeof *v->words);
    v->df = calloc(v->n ? v->n : 1, sizeof *v->df);
    v->tf = calloc(v->n ? v->n : 1, sizeof *v->tf);
    if (!v->words || !v->df || !v->tf) {
        jsmf_vocab_free(v);
        return jsmf_error(JSMF_ENOMEM, "out of memory");
    }
    MDB_txn *t;
    int rc = store_read_begin(s, &t);
    MDB_cursor *cur = NULL;
    MDB_val k, val;
    uint32_t got = 0;
    if (!rc && (rc = mdb_cursor_open(t, s->vocab, &cur)))
        rc = store_lmdb_error(s, rc, "cursor");
    int r;
    uint64_t seen = 0;
    for (r = rc ? 1 : store_cursor_get(s, cur, &k, &val, MDB_FIRST); r == 0 && !rc;
         seen++, r = store_cursor_get(s, cur, &k, &val, MDB_NEXT)) {
        uint32_t id = get_be32(k.mv_data);
        if (k.mv_size != 4 || id >= v->n || v->words[id]) {
            rc = jsmf_error(JSMF_ESTORE, "%s: corrupt vocabulary record", s->path);
            break;
        }
        if (!(v->words[id] = malloc(val.mv_size + 1))) {
            rc = jsmf_error(JSMF_ENOMEM, "out of memory");
            break;
        }
        memcpy(v->words[id], val.mv_data, val.mv_size);
        v->words[id][val.mv_size] = 0;
        got++;
    }
    if (!rc && r != 1)
        rc = store_scan_end(s, cur, seen, r, "reading the vocabulary");
    if (cur)
        mdb_cursor_close(cur), cur = NULL;
    if (!rc && got != v->n)
        rc = jsmf_error(JSMF_ESTORE, "%s: vocabulary has %u of %u words", s->path, got, v->n);
    if (!rc && (rc = mdb_cursor_open(t, s->wordstats, &cur)))
        rc = store_lmdb_error(s, rc, "cursor");
    seen = 0;
    for (r = rc ? 1 : store_cursor_get(s, cur, &k, &val, MDB_FIRST); r == 0 && !rc;
         seen++, r = store_cursor_get(s, cur, &k, &val, MDB_NEXT)) {
        uint32_t id = get_be32(k.mv_data);
        if (id < v->n && val.mv_size == 16) {
            v->df[id] = get_u64(val.mv_data);
            v->tf[id] = get_u64((char *)val.mv_data + 8);
        }
    }
    if (!rc && r != 1)
        rc = store_scan_end(s, cur, seen, r, "reading the word statistics");
    if (cur)
        mdb_cursor_close(cur);
    if (t)
        mdb_txn_abort(t);
    if (rc) {
        /* words not yet filled are NULL; jsmf_vocab_free frees only what exists */
        for (uint32_t i = 0; i < v->n; i++)
            if (!v->words[i])
                v->words[i] = NULL;
        jsmf_vocab_free(v);
        return rc;
    }
    *out = v;
    return JSMF_OK;
}

/* ---- input records ---------------------------------------------------------------------- */

int jsmf_store_inputs_get(jsmf_store *s, jsmf_store_input **out, uint32_t *n)
{
    *out = NULL, *n = 0;
    MDB_txn *t;
    int rc = store_read_begin(s, &t);
    if (rc)
        return rc;
    MDB_stat st;
    MDB_cursor *cur;
    if ((rc = mdb_stat(t, s->inputs, &st)) || (rc = mdb_cursor_open(t, s->inputs, &cur))) {
        mdb_txn_abort(t);
        return store_lmdb_error(s, rc, "reading inputs");
    }
    jsmf_store_input *a = calloc(st.ms_entries ? st.ms_entries : 1, sizeof *a);
    if (!a) {
        mdb_cursor_close(cur);
        mdb_txn_abort(t);
        return jsmf_error(JSMF_ENOMEM, "out of memory");
    }
    MDB_val k, v;
    uint32_t i = 0;
    int r;
    uint64_t seen = 0;
    for (r = store_cursor_get(s, cur, &k, &v, MDB_FIRST); r == 0 && seen < st.ms_entries;
         seen++, r = store_cursor_get(s, cur, &k, &v, MDB_NEXT))
        if (k.mv_size == 12)
            input_decode(&k, &v, &a[i++]);
    /* the records met must be the ones counted: a damaged page hides some without a checksum
     * failing (and one more after them is damage too) */
    if (r == 0 && seen == st.ms_entries)
        r = store_cursor_get(s, cur, &k, &v, MDB_NEXT);
    rc = store_scan_end(s, cur, seen, r, "reading inputs");
    mdb_cursor_close(cur);
    mdb_txn_abort(t);
    if (rc) {
        free(a);
        return rc;
    }
    *out = a, *n = i;
    return JSMF_OK;
}
