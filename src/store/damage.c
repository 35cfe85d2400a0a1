/* damage.c — jsmf info --check's search for damage: LMDB's structure walked from the file
 * (pages.c), then every value against its checksum, each piece of damage told with the inputs,
 * rows or records it takes. Above env, pages and store (it opens the store it scanned). */
#include "env.h"

#include "codec.h"
#include "files.h"
#include "pages.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* A piece of LMDB's structure found damaged, told once the inputs' names are known. */
typedef struct page_hurt {
    char db[64];
    page_bound lo, hi;
    char what[256];
} page_hurt;

typedef struct scan {
    page_hurt *hurt;
    size_t n_hurt, cap_hurt;
    jsmf_store_damage_fn fn;
    void *arg;
    uint64_t found;
    jsmf_store_input *inputs; /* the store's inputs, when they could be read: names for keys */
    uint32_t n_inputs;
    int sound_inputs;         /* the walk found no damage in the inputs or the main database */
} scan;

static void say(scan *sc, const char *fmt, ...)
{
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    sc->found++;
    if (sc->fn)
        sc->fn(sc->arg, line);
}

/* The input a documents key (u64 fingerprint, u32 occurrence, u64 position) belongs to. */
static void input_of(const scan *sc, const unsigned char *key, size_t n, char *out, size_t cap)
{
    if (n < 12) {
        snprintf(out, cap, "an input before the first");
        return;
    }
    uint64_t fp = get_be64(key);
    uint32_t occ = get_be32(key + 8);
    for (uint32_t i = 0; i < sc->n_inputs; i++)
        if (sc->inputs[i].fingerprint == fp && sc->inputs[i].occurrence == occ) {
            snprintf(out, cap, "%s (fingerprint %016" PRIx64 ")", sc->inputs[i].path, fp);
            return;
        }
    snprintf(out, cap, "the input of fingerprint %016" PRIx64 " (occurrence %u)", fp, occ);
}

/* What a database's damage takes, from the keys it may hide: [lo, hi), a NULL bound open. */
static void what_it_takes(const scan *sc, const char *db, const unsigned char *lo, size_t nlo,
                          const unsigned char *hi, size_t nhi, char *out, size_t cap)
{
    if (!strcmp(db, "docs")) {
        char a[1100], b[1100];
        input_of(sc, lo ? lo : (const unsigned char *)"", lo ? nlo : 0, a, sizeof a);
        input_of(sc, hi ? hi : (const unsigned char *)"", hi ? nhi : 0, b, sizeof b);
        if (lo && hi && nlo >= 12 && nhi >= 12 && !memcmp(lo, hi, 12))
            snprintf(out, cap, "documents of %s from position %" PRIu64 ": ingest it again into "
                     "a new store", a, get_be64(lo + 12));
        else
            snprintf(out, cap, "documents of the inputs from %s to %s%s: ingest them again "
                     "into a new store", lo ? a : "the first", hi ? b : "the last",
                     hi ? " (not included)" : "");
    } else if (!strncmp(db, "run.", 4) || !strcmp(db, "C")) {
        uint32_t r0 = lo && nlo >= 4 ? get_be32(lo) : 0, r1 = hi && nhi >= 4 ? get_be32(hi) : 0;
        if (hi)
            snprintf(out, cap, "rows %u to %u of C, which sum over every input: a store that "
                     "holds documents can be copied without its rows, else ingest all inputs "
                     "again", r0, r1);
        else
            snprintf(out, cap, "rows from %u of C, which sum over every input: ingest all "
                     "inputs again (or keep the documents)", r0);
    } else if (!strcmp(db, "inputs")) {
        snprintf(out, cap, "input records: which inputs were ingested, and how far");
    } else if (!strcmp(db, "vocab") || !strcmp(db, "admitted") || !strcmp(db, "pending") ||
               !strcmp(db, "wordstats")) {
        snprintf(out, cap, "the vocabulary's %s: every input depends on it", db);
    } else if (!strcmp(db, "meta")) {
        snprintf(out, cap, "the store's counters and settings");
    } else if (!strcmp(db, "(meta pages)")) {
        snprintf(out, cap, "where every database starts, so everything");
    } else if (!strcmp(db, "free")) {
        snprintf(out, cap, "LMDB's list of free pages: readers are unaffected, the next write "
                 "could overwrite data; jsmf copy writes a compact copy without it");
    } else {
        snprintf(out, cap, "LMDB's list of databases: everything");
    }
}

static void page_damage(void *arg, const char *db, const page_bound *lo, const page_bound *hi,
                        const char *what)
{
    scan *sc = arg;
    if (!strcmp(db, "inputs") || !strcmp(db, "") || !strcmp(db, "meta") || !strcmp(db, "free") ||
        !strcmp(db, "(meta pages)"))
        sc->sound_inputs = 0;
    if (sc->n_hurt == sc->cap_hurt) {
        size_t cap = sc->cap_hurt ? 2 * sc->cap_hurt : 16;
        page_hurt *h = realloc(sc->hurt, cap * sizeof *h);
        if (!h) { /* told at once, without the inputs' names */
            sc->found++;
            if (sc->fn)
                sc->fn(sc->arg, what);
            return;
        }
        sc->hurt = h, sc->cap_hurt = cap;
    }
    page_hurt *h = &sc->hurt[sc->n_hurt++];
    snprintf(h->db, sizeof h->db, "%s", db);
    h->lo = *lo, h->hi = *hi;
    snprintf(h->what, sizeof h->what, "%s", what);
}

static void tell_page_damage(scan *sc)
{
    for (size_t i = 0; i < sc->n_hurt; i++) {
        const page_hurt *h = &sc->hurt[i];
        char takes[2600];
        what_it_takes(sc, h->db, h->lo.open ? NULL : h->lo.key, h->lo.len,
                      h->hi.open ? NULL : h->hi.key, h->hi.len, takes, sizeof takes);
        if (h->db[0] == '(') /* LMDB's meta pages: no database of their own */
            say(sc, "LMDB's meta pages: %s; they hold %s", h->what, takes);
        else
            say(sc, "LMDB structure of database '%s': %s; it holds %s",
                *h->db ? h->db : "(main)", h->what, takes);
    }
}

/* The inputs' records, to name the inputs whose documents damage takes; only when LMDB can
 * reach them through pages the walk found whole. */
static void load_input_names(scan *sc, const char *path)
{
    jsmf_store *s;
    if (!sc->sound_inputs || jsmf_store_open(path, JSMF_STORE_RDONLY, &s))
        return;
    if (jsmf_store_inputs_get(s, &sc->inputs, &sc->n_inputs))
        sc->inputs = NULL, sc->n_inputs = 0;
    jsmf_store_close(s);
}

/* Every value of one database against its checksum, each bad one told. */
static int scan_values(scan *sc, jsmf_store *s, MDB_txn *t, const char *name)
{
    MDB_dbi dbi;
    MDB_cursor *c;
    int rc = store_dbi_open(s, t, name, 0, &dbi);
    if (rc == MDB_NOTFOUND)
        return JSMF_OK;
    if (rc || (rc = mdb_cursor_open(t, dbi, &c)))
        return store_lmdb_error(s, rc, "reading a database");
    MDB_val k, v;
    int r;
    for (r = mdb_cursor_get(c, &k, &v, MDB_FIRST); r == 0; r = mdb_cursor_get(c, &k, &v, MDB_NEXT)) {
        if (!strcmp(name, "meta") && store_meta_key_raw(&k))
            continue; /* kept without a checksum: an older jsmf reads them */
        if (store_value_check(s, dbi, &k, &v) == JSMF_OK)
            continue;
        char takes[2600], key[96];
        store_key_text(key, sizeof key, &k);
        if (!strncmp(name, "run.", 4) || !strcmp(name, "C"))
            snprintf(takes, sizeof takes, "row %u of C (a sum over every input)",
                     k.mv_size >= 4 ? get_be32(k.mv_data) : 0);
        else /* one key: for documents, the block of one input that starts there */
            what_it_takes(sc, name, k.mv_data, k.mv_size, k.mv_data, k.mv_size, takes,
                          sizeof takes);
        say(sc, "database '%s', key %s: its value does not match its checksum; it holds %s",
            name, key, takes);
    }
    mdb_cursor_close(c);
    return r == MDB_NOTFOUND ? JSMF_OK : store_lmdb_error(s, r, "reading a database");
}

/* Every value of every database of the store (the names from LMDB's main database). */
static int scan_all_values(scan *sc, jsmf_store *s)
{
    MDB_txn *t;
    int rc = store_read_begin(s, &t);
    if (rc)
        return rc;
    char names[STORE_MAX_DBS][16];
    int n = 0;
    if ((rc = store_db_names(s, t, names, STORE_MAX_DBS, &n))) {
        mdb_txn_abort(t);
        return rc;
    }
    for (int i = 0; i < n && !rc; i++)
        rc = scan_values(sc, s, t, names[i]);
    mdb_txn_abort(t);
    return rc;
}

int jsmf_store_damage_scan(const char *path, jsmf_store_damage_fn fn, void *arg, uint64_t *found,
                           int *checked)
{
    *found = 0, *checked = 0;
    char data[4096];
    store_file_path(data, sizeof data, path, STORE_FILE_DATA);
    struct stat st;
    if (stat(data, &st) != 0)
        return jsmf_error(JSMF_ENOTFOUND, "%s: no such store (no data.mdb)", path);
    scan sc = {.fn = fn, .arg = arg, .sound_inputs = 1};
    page_walk_result w;
    if (store_pages_walk(data, page_damage, &sc, &w) != 0) {
        free(sc.hurt);
        return jsmf_error(JSMF_EIO, "%s: cannot read data.mdb: %s", path, strerror(errno));
    }
    int rc = JSMF_OK;
    if (sc.n_hurt) {
        load_input_names(&sc, path);
        tell_page_damage(&sc);
    } else { /* LMDB maps only what the walk found whole: the checksums need its reads */
        jsmf_store *s;
        if ((rc = jsmf_store_open(path, JSMF_STORE_RDONLY, &s)) == JSMF_OK) {
            *checked = s->checked;
            if (jsmf_store_inputs_get(s, &sc.inputs, &sc.n_inputs))
                sc.inputs = NULL, sc.n_inputs = 0;
            if (s->checked)
                rc = scan_all_values(&sc, s);
            jsmf_store_close(s);
        } else if (rc == JSMF_ESTORE) { /* a damaged meta value, say: damage, not a failure */
            say(&sc, "%s", jsmf_errmsg());
            rc = JSMF_OK;
        }
    }
    free(sc.inputs);
    free(sc.hurt);
    *found = sc.found;
    return rc;
}
