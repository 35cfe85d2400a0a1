/* registry.c — the registry of C's live runs: meta "runs" (id and entry count of each) and
 * "next_run", and the database of one run. */
#include "registry.h"

#include "codec.h"

#include <stdio.h>

/* ---- the registry ------------------------------------------------------------------------ */

#define RUN_RECORD 12 /* u32 id, u64 entries */

int runs_get(jsmf_store *s, MDB_txn *t, run_list *out)
{
    memset(out, 0, sizeof *out);
    uint64_t next;
    int rc = store_meta_get_u64(s, t, "next_run", &next);
    if (rc)
        return rc;
    out->next_id = next ? (uint32_t)next : 1;
    MDB_val k = {4, "runs"}, v;
    rc = store_get(s, t, s->meta, &k, &v);
    if (rc == MDB_NOTFOUND)
        return JSMF_OK;
    if (rc)
        return store_lmdb_error(s, rc, "reading the run registry");
    uint32_t n = v.mv_size >= 4 ? get_u32(v.mv_data) : UINT32_MAX;
    if (n > RUNS_MAX || v.mv_size != 4 + (size_t)n * RUN_RECORD)
        return jsmf_error(JSMF_ESTORE, "%s: corrupt run registry", s->path);
    const unsigned char *p = (const unsigned char *)v.mv_data + 4;
    for (uint32_t i = 0; i < n; i++, p += RUN_RECORD)
        out->r[i].id = get_u32(p), out->r[i].entries = get_u64(p + 4);
    out->n = n;
    return JSMF_OK;
}

int runs_put(jsmf_store *s, MDB_txn *t, const run_list *l)
{
    unsigned char buf[4 + RUNS_MAX * RUN_RECORD], *p = buf + 4;
    memcpy(buf, &l->n, 4);
    for (uint32_t i = 0; i < l->n; i++, p += RUN_RECORD)
        memcpy(p, &l->r[i].id, 4), memcpy(p + 4, &l->r[i].entries, 8);
    MDB_val k = {4, "runs"}, v = {(size_t)(p - buf), buf};
    int rc = store_put(s, t, s->meta, &k, &v, 0);
    if (rc)
        return store_lmdb_error(s, rc, "writing the run registry");
    return store_meta_put_u64(s, t, "next_run", l->next_id);
}

int run_dbi(jsmf_store *s, MDB_txn *t, uint32_t id, int create, MDB_dbi *out)
{
    char name[16];
    snprintf(name, sizeof name, "run.%08x", id);
    int rc = store_dbi_open(s, t, name, create ? MDB_CREATE : 0, out);
    if (rc == MDB_NOTFOUND)
        return jsmf_error(JSMF_ESTORE, "%s: database %s of a live run is missing", s->path, name);
    return rc ? store_lmdb_error(s, rc, "opening a run") : JSMF_OK;
}
