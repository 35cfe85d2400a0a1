/* env.c — the store's LMDB environment as every part of the store uses it: errors that name the
 * store, meta values, read transactions that adopt a grown map, growing the map, and keeping
 * the pages of the map a process reads out of its resident set. */
#include "env.h"

#include "codec.h"
#include "files.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/statvfs.h>
#include <unistd.h>
#include <xxhash.h>

int store_lmdb_error(jsmf_store *s, int rc, const char *what)
{
    if (rc == STORE_DAMAGED) { /* the message names the value already: raised again as it is */
        char named[1024];
        snprintf(named, sizeof named, "%s", jsmf_errmsg());
        return jsmf_error(JSMF_ESTORE, "%s", named);
    }
    if (rc == MDB_MAP_FULL)
        s->map_full = 1;
    if (rc == ENOSPC)
        return jsmf_error(JSMF_ENOSPC, "%s: %s: no space left on device; the store is at its "
                          "last checkpoint", s->path, what);
    if (rc == EACCES || rc == EROFS)
        return jsmf_error(JSMF_EIO, "%s: %s: %s", s->path, what, mdb_strerror(rc));
    if (rc > 0)
        return jsmf_error(JSMF_EIO, "%s: %s: %s", s->path, what, mdb_strerror(rc));
    return jsmf_error(JSMF_ESTORE, "%s: %s: %s", s->path, what, mdb_strerror(rc));
}

int store_read_begin(jsmf_store *s, MDB_txn **t)
{
    int rc = mdb_txn_begin(s->env, NULL, MDB_RDONLY, t);
    if (rc == MDB_MAP_RESIZED) {
        /* a writer grew the map: adopt its size and retry */
        s->map_seen_size = 0; /* LMDB maps anew */
        if ((rc = mdb_env_set_mapsize(s->env, 0)) == 0)
            rc = mdb_txn_begin(s->env, NULL, MDB_RDONLY, t);
    }
    return rc ? store_lmdb_error(s, rc, "cannot begin read transaction") : JSMF_OK;
}

int store_write_begin(jsmf_store *s, MDB_txn **t)
{
    int rc = mdb_txn_begin(s->env, NULL, 0, t);
    if (rc)
        return store_lmdb_error(s, rc, "cannot begin write transaction");
    s->map_full = 0;
    return JSMF_OK;
}

/* Find where data.mdb is mapped. LMDB does not say where its map is, so read /proc/self/maps
 * (Linux); the answer holds until the map size changes, which is when LMDB maps anew. */
static void find_map(jsmf_store *s, uint64_t mapsize)
{
    char want[4096], real[PATH_MAX], line[4352];
    s->map_parts = 0, s->map_seen_size = mapsize;
    store_file_path(want, sizeof want, s->path, STORE_FILE_DATA);
    if (!realpath(want, real))
        return;
    FILE *f = fopen("/proc/self/maps", "r");
    if (!f)
        return;
    size_t rl = strlen(real);
    while (fgets(line, sizeof line, f) && s->map_parts < 4) {
        size_t ll = strlen(line);
        if (ll > 0 && line[ll - 1] == '\n')
            line[--ll] = 0;
        if (ll < rl || strcmp(line + ll - rl, real))
            continue;
        unsigned long lo, hi;
        if (sscanf(line, "%lx-%lx", &lo, &hi) == 2)
            s->map_lo[s->map_parts] = lo, s->map_hi[s->map_parts++] = hi;
    }
    fclose(f);
}

void store_drop_mapped(jsmf_store *s)
{
    /* Clean file pages of the map, read while merging rows, stay in the page cache; dropping
     * them from this process keeps its resident size to what it allocates. */
    MDB_envinfo info;
    s->mapped_bytes = 0;
    if (mdb_env_info(s->env, &info))
        return;
    if (s->map_seen_size != info.me_mapsize)
        find_map(s, info.me_mapsize);
    for (int i = 0; i < s->map_parts; i++)
        madvise((void *)s->map_lo[i], s->map_hi[i] - s->map_lo[i], MADV_DONTNEED);
}

void store_mapped_read(jsmf_store *s, uint64_t bytes)
{
    /* on a fault the kernel maps up to 16 pages around the one read (fault-around), pages of
     * other runs stored nearby among them: measured, the map's resident pages stay within
     * MAP_FAULT_AROUND times the bytes read. Dropping pages costs more than reading them back
     * (the next touch refaults them and, on recent kernels, rebuilds their page tables), so
     * this budget is a compromise, counted in store_write_memory. */
    s->mapped_bytes += bytes;
    if (s->mapped_bytes > s->txn_bytes / MAP_FAULT_AROUND)
        store_drop_mapped(s);
}

int store_meta_get_u64(jsmf_store *s, MDB_txn *t, const char *key, uint64_t *out)
{
    MDB_val k = store_key(key), v;
    int rc = store_get(s, t, s->meta, &k, &v);
    if (rc == MDB_NOTFOUND) {
        *out = 0;
        return JSMF_OK;
    }
    if (rc)
        return store_lmdb_error(s, rc, "reading meta");
    if (v.mv_size != 8)
        return jsmf_error(JSMF_ESTORE, "%s: meta '%s' has %zu bytes, expected 8", s->path, key,
                          v.mv_size);
    *out = get_u64(v.mv_data);
    return JSMF_OK;
}

int store_meta_put_u64(jsmf_store *s, MDB_txn *t, const char *key, uint64_t x)
{
    MDB_val k = store_key(key), v = {8, &x};
    int rc = store_put(s, t, s->meta, &k, &v, 0);
    return rc ? store_lmdb_error(s, rc, "writing meta") : JSMF_OK;
}

int store_nnz_exact(jsmf_store *s, MDB_txn *t, uint64_t *out)
{
    MDB_val k = store_key("nnz_exact"), v;
    int rc = store_get(s, t, s->meta, &k, &v);
    *out = 1;
    if (rc == MDB_NOTFOUND)
        return JSMF_OK;
    if (rc)
        return store_lmdb_error(s, rc, "reading meta");
    return store_meta_get_u64(s, t, "nnz_exact", out);
}

int store_meta_add_u64(jsmf_store *s, MDB_txn *t, const char *key, uint64_t add)
{
    uint64_t v;
    int rc = store_meta_get_u64(s, t, key, &v);
    return rc ? rc : store_meta_put_u64(s, t, key, v + add);
}

/* LMDB reports a short write as EIO: tell a full disk apart by the free space left. */
static int disk_full(jsmf_store *s)
{
    struct statvfs v;
    return statvfs(s->path, &v) == 0 && (uint64_t)v.f_bavail * v.f_frsize < (1u << 20);
}

int store_commit_error(jsmf_store *s, int rc)
{
    return store_lmdb_error(s, disk_full(s) ? ENOSPC : rc, "commit");
}

int store_grow_map(jsmf_store *s)
{
    MDB_envinfo info;
    mdb_env_info(s->env, &info);
    s->mapsize = (info.me_mapsize > s->mapsize ? info.me_mapsize : s->mapsize) * 2;
    s->map_seen_size = 0; /* LMDB maps anew */
    int rc = mdb_env_set_mapsize(s->env, s->mapsize);
    return rc ? store_lmdb_error(s, rc, "cannot grow the map") : JSMF_OK;
}

/* ---- checksums ----------------------------------------------------------------------------- */

int store_dbi_open(jsmf_store *s, MDB_txn *t, const char *name, unsigned flags, MDB_dbi *dbi)
{
    int rc = mdb_dbi_open(t, name, flags, dbi);
    if (rc == 0 && name && *dbi < STORE_MAX_DBS) {
        /* the handle's slot may have held another database in this process: set anew */
        snprintf(s->db_name[*dbi], sizeof s->db_name[*dbi], "%s", name);
        s->db_seed[*dbi] = XXH3_64bits(name, strlen(name));
    }
    return rc;
}

/* A value's checksum: its bytes hashed with a seed made of its database and key, so that a
 * damaged page pointer handing back another key's intact value fails too. */
static uint64_t value_sum(const jsmf_store *s, MDB_dbi dbi, const MDB_val *k, const void *v,
                          size_t n)
{
    uint64_t seed = XXH3_64bits_withSeed(k->mv_data, k->mv_size, s->db_seed[dbi]);
    return XXH3_64bits_withSeed(v, n, seed);
}

int store_meta_key_raw(const MDB_val *key)
{
    return (key->mv_size == 6 && !memcmp(key->mv_data, "format", 6)) ||
           (key->mv_size == 7 && !memcmp(key->mv_data, "version", 7));
}

int store_db_names(jsmf_store *s, MDB_txn *t, char names[][16], int cap, int *n)
{
    MDB_dbi main_db;
    MDB_cursor *c;
    *n = 0;
    int rc = mdb_dbi_open(t, NULL, 0, &main_db);
    if (rc || (rc = mdb_cursor_open(t, main_db, &c)))
        return store_lmdb_error(s, rc, "listing the databases");
    MDB_val k, v;
    while (*n < cap && mdb_cursor_get(c, &k, &v, MDB_NEXT) == 0)
        if (k.mv_size < 16)
            memcpy(names[*n], k.mv_data, k.mv_size), names[(*n)++][k.mv_size] = 0;
    mdb_cursor_close(c);
    return JSMF_OK;
}

void store_key_text(char *out, size_t cap, const MDB_val *k)
{
    const unsigned char *b = k->mv_data;
    int text = k->mv_size > 0 && k->mv_size < 64;
    for (size_t i = 0; i < k->mv_size && text; i++)
        text = isprint(b[i]) != 0;
    if (text) {
        snprintf(out, cap, "'%.*s'", (int)k->mv_size, (const char *)b);
        return;
    }
    size_t o = 0;
    for (size_t i = 0; i < k->mv_size && o + 3 < cap; i++)
        o += (size_t)snprintf(out + o, cap - o, "%02x", b[i]);
    out[o] = 0;
}

int store_value_check(jsmf_store *s, MDB_dbi dbi, const MDB_val *k, MDB_val *v)
{
    if (!s->checked)
        return JSMF_OK;
    uint64_t want = 0;
    int ok = dbi < STORE_MAX_DBS && v->mv_size >= STORE_SUM_BYTES;
    if (ok) {
        size_t n = v->mv_size - STORE_SUM_BYTES;
        memcpy(&want, (const unsigned char *)v->mv_data + n, STORE_SUM_BYTES);
        ok = value_sum(s, dbi, k, v->mv_data, n) == want;
        if (ok)
            v->mv_size = n;
    }
    if (ok)
        return JSMF_OK;
    char key[96];
    store_key_text(key, sizeof key, k);
    jsmf_error(JSMF_ESTORE, "%s: damaged: the value of key %s in database '%s' does not match "
               "its checksum; the store cannot vouch for it (jsmf info --check %s lists the "
               "damage)", s->path, key, dbi < STORE_MAX_DBS ? s->db_name[dbi] : "?", s->path);
    return STORE_DAMAGED;
}

int store_get(jsmf_store *s, MDB_txn *t, MDB_dbi dbi, MDB_val *k, MDB_val *v)
{
    int rc = mdb_get(t, dbi, k, v);
    return rc ? rc : store_value_check(s, dbi, k, v);
}

int store_cursor_get(jsmf_store *s, MDB_cursor *c, MDB_val *k, MDB_val *v, MDB_cursor_op op)
{
    int rc = mdb_cursor_get(c, k, v, op);
    return rc ? rc : store_value_check(s, mdb_cursor_dbi(c), k, v);
}

int store_put(jsmf_store *s, MDB_txn *t, MDB_dbi dbi, MDB_val *k, MDB_val *v, unsigned flags)
{
    if (!s->checked)
        return mdb_put(t, dbi, k, v, flags);
    MDB_val room = {v->mv_size + STORE_SUM_BYTES, NULL};
    int rc = mdb_put(t, dbi, k, &room, flags | MDB_RESERVE);
    if (rc)
        return rc;
    uint64_t sum = value_sum(s, dbi, k, v->mv_data, v->mv_size);
    if (v->mv_size)
        memcpy(room.mv_data, v->mv_data, v->mv_size);
    memcpy((unsigned char *)room.mv_data + v->mv_size, &sum, STORE_SUM_BYTES);
    return 0;
}

uint32_t store_written_version(const jsmf_store *s)
{
    uint32_t v = s->checked ? JSMF_STORE_FORMAT_VERSION : STORE_UNCHECKED_VERSION;
    return s->version > v ? s->version : v;
}

int store_version_put(jsmf_store *s, MDB_txn *t, uint32_t version)
{
    uint64_t x = version;
    MDB_val k = store_key("version"), v = {8, &x};
    int rc = mdb_put(t, s->meta, &k, &v, 0);
    if (rc)
        return store_lmdb_error(s, rc, "writing meta");
    return s->checked ? store_meta_put_u64(s, t, "check", version) : JSMF_OK;
}

int store_version_bump(jsmf_store *s, MDB_txn *t)
{
    uint32_t v = store_written_version(s);
    return s->version < v ? store_version_put(s, t, v) : JSMF_OK;
}

int store_scan_end(jsmf_store *s, MDB_cursor *c, uint64_t seen, int rc, const char *what)
{
    if (rc != MDB_NOTFOUND)
        return store_lmdb_error(s, rc, what);
    MDB_stat st;
    MDB_dbi dbi = mdb_cursor_dbi(c);
    if ((rc = mdb_stat(mdb_cursor_txn(c), dbi, &st)))
        return store_lmdb_error(s, rc, what);
    if (st.ms_entries == seen)
        return JSMF_OK;
    return jsmf_error(JSMF_ESTORE, "%s: damaged: database '%s' gave %llu values where its record "
                      "counts %llu; the store cannot vouch for it (jsmf info --check %s lists the "
                      "damage)", s->path, dbi < STORE_MAX_DBS ? s->db_name[dbi] : "?",
                      (unsigned long long)seen, (unsigned long long)st.ms_entries, s->path);
}
