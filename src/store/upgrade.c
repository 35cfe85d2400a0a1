/* upgrade.c — a store of a version without checksums written again as a checked one (version
 * 7): every database's values in key order, each with its checksum, into a new environment;
 * what jsmf copy does with an older store, so that a user's store of years gains them. */
#include "env.h"

#include "files.h"
#include "upgrade.h"

#include <stdlib.h>

/* The write transaction's budget: committed and begun again at about this many bytes. */
#define UPGRADE_TXN_BYTES ((size_t)64 << 20)

typedef struct rewriter {
    jsmf_store *src, *dst;
    MDB_txn *rt, *wt;
    size_t txn_bytes;
} rewriter;

/* A value as the checked store holds it. meta's format and version stay without a checksum
 * (an older jsmf reads them to refuse the store); the version becomes 7 and gains "check". */
static int put_value(rewriter *r, MDB_dbi dbi, int is_meta, MDB_val *k, MDB_val *v)
{
    if (is_meta && k->mv_size == 7 && !memcmp(k->mv_data, "version", 7))
        return store_version_put(r->dst, r->wt, JSMF_STORE_FORMAT_VERSION);
    if (is_meta && k->mv_size == 5 && !memcmp(k->mv_data, "check", 5))
        return JSMF_OK; /* written with the version */
    unsigned flags = is_meta ? 0 : MDB_APPEND; /* meta's "check" goes in out of order */
    int rc = is_meta && store_meta_key_raw(k) /* "format": "version" is written above */
                 ? mdb_put(r->wt, dbi, k, v, flags)
                 : store_put(r->dst, r->wt, dbi, k, v, flags);
    return rc ? store_lmdb_error(r->dst, rc, "writing the checked copy") : JSMF_OK;
}

/* Commit what is written and go on in a new transaction: an upgrade of a large store keeps
 * to the budget's dirty pages. */
static int next_txn(rewriter *r)
{
    int rc = mdb_txn_commit(r->wt);
    r->wt = NULL, r->txn_bytes = 0;
    if (rc)
        return store_commit_error(r->dst, rc);
    return store_write_begin(r->dst, &r->wt);
}

static int rewrite_db(rewriter *r, const char *name)
{
    MDB_dbi from, to;
    MDB_cursor *c;
    int rc = store_dbi_open(r->src, r->rt, name, 0, &from);
    if (rc || (rc = mdb_cursor_open(r->rt, from, &c)))
        return store_lmdb_error(r->src, rc, "reading a database");
    int is_meta = !strcmp(name, "meta");
    MDB_val k, v;
    int g;
    for (g = mdb_cursor_get(c, &k, &v, MDB_FIRST); g == 0 && !rc;
         g = mdb_cursor_get(c, &k, &v, MDB_NEXT)) {
        /* the handle is the environment's: opened again in each new transaction is free */
        if ((rc = store_dbi_open(r->dst, r->wt, name, MDB_CREATE, &to))) {
            rc = store_lmdb_error(r->dst, rc, "creating a database");
            break;
        }
        if (is_meta)
            r->dst->meta = to; /* store_version_put writes through it */
        if ((rc = put_value(r, to, is_meta, &k, &v)))
            break;
        if ((r->txn_bytes += k.mv_size + v.mv_size + 24) >= UPGRADE_TXN_BYTES)
            rc = next_txn(r);
    }
    mdb_cursor_close(c);
    if (!rc && g != MDB_NOTFOUND)
        rc = store_lmdb_error(r->src, g, "reading a database");
    /* an empty database is kept: the store's readers expect its databases to exist */
    if (!rc && (rc = store_dbi_open(r->dst, r->wt, name, MDB_CREATE, &to)))
        rc = store_lmdb_error(r->dst, rc, "creating a database");
    return rc;
}

int store_upgrade_copy(jsmf_store *src, const char *dir)
{
    jsmf_store *dst = calloc(1, sizeof *dst);
    if (!dst || !(dst->path = strdup(dir))) {
        free(dst);
        return jsmf_error(JSMF_ENOMEM, "out of memory");
    }
    dst->checked = 1, dst->lockfd = -1, dst->writable = 1;
    rewriter r = {src, dst, NULL, NULL, 0};
    int rc = mdb_env_create(&dst->env);
    if (rc) {
        free(dst->path), free(dst);
        return store_lmdb_error(src, rc, "cannot create environment");
    }
    mdb_env_set_maxdbs(dst->env, STORE_MAX_DBS);
    mdb_env_set_mapsize(dst->env, src->mapsize > ((uint64_t)1 << 40) ? src->mapsize
                                                                     : (uint64_t)1 << 40);
    /* synced once at the end: a killed upgrade leaves only a temporary directory */
    if ((rc = mdb_env_open(dst->env, dir, MDB_NOSYNC | MDB_NOTLS, 0644)))
        rc = store_lmdb_error(dst, rc, "cannot open the copy");
    if (!rc)
        rc = store_read_begin(src, &r.rt);
    if (!rc && (rc = store_write_begin(dst, &r.wt)))
        r.wt = NULL;
    char names[STORE_MAX_DBS][16];
    int n = 0;
    if (!rc)
        rc = store_db_names(src, r.rt, names, STORE_MAX_DBS, &n);
    for (int i = 0; i < n && !rc; i++)
        rc = rewrite_db(&r, names[i]);
    if (r.wt && rc)
        mdb_txn_abort(r.wt);
    else if (r.wt && (rc = mdb_txn_commit(r.wt)))
        rc = store_commit_error(dst, rc);
    if (r.rt)
        mdb_txn_abort(r.rt);
    if (!rc && (rc = mdb_env_sync(dst->env, 1)))
        rc = store_lmdb_error(dst, rc, "syncing the copy");
    mdb_env_close(dst->env);
    free(dst->path), free(dst);
    return rc;
}
