/* pages.c — data.mdb checked as LMDB lays it out (data format 1 of LMDB 0.9, as its source
 * defines it), read page by page with pread: a damaged page pointer or page header makes LMDB
 * fault or read the wrong page, and no value's checksum can catch that, so info --check walks
 * the trees itself first. */
#include "pages.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* LMDB's layout: a page starts with its number (8), a pad (2), its flags (2) and either the
 * lower and upper bounds of its free space (2 + 2) or, for an overflow page, its page count
 * (4); then the node offsets (2 each). A node: data size or child page (lo, hi,
 * flags: 6 bytes), key size (2), key, data. A database record (MDB_db) is 48 bytes. */
#define PAGE_HEADER 16
#define P_BRANCH 0x01
#define P_LEAF 0x02
#define P_OVERFLOW 0x04
#define P_META 0x08
#define P_DIRTY 0x10
#define MDB_INTEGERKEY_FLAG 0x08
#define F_BIGDATA 0x01
#define F_SUBDATA 0x02
#define F_DUPDATA 0x04
#define NODE_HEADER 8
#define DB_RECORD 48
#define LMDB_MAGIC 0xBEEFC0DEu
#define LMDB_DATA_VERSION 1
#define MAX_DEPTH 32

typedef struct tree_record {
    uint32_t pad;
    uint16_t flags, depth;
    uint64_t branch, leaf, overflow, entries, root;
} tree_record;

typedef struct tree_count {
    uint64_t branch, leaf, overflow, entries;
    int leaf_depth; /* the depth of the first leaf met: every leaf must be at it */
} tree_count;

/* A named database found in the main database's leaves, walked after it (the walks share the
 * page buffers of each depth). */
#define MAX_NAMED 256
typedef struct named_db {
    char name[64];
    tree_record r;
} named_db;

typedef struct walker {
    named_db named[MAX_NAMED];
    int n_named;
    int fd;
    uint64_t psize, pages, file_pages;
    unsigned char *used, *freed; /* a bit a page */
    int integer_keys;            /* walking the free list, keyed by integers */
    unsigned char *buf[MAX_DEPTH + 2];
    page_damage_fn fn;
    void *arg;
    page_walk_result *out;
    char db[64];
} walker;

static uint16_t u16_at(const unsigned char *p)
{
    return (uint16_t)(p[0] | p[1] << 8);
}

static uint32_t u32_at(const unsigned char *p)
{
    return (uint32_t)u16_at(p) | (uint32_t)u16_at(p + 2) << 16;
}

static uint64_t u64_at(const unsigned char *p)
{
    return (uint64_t)u32_at(p) | (uint64_t)u32_at(p + 4) << 32;
}

static uint64_t pgno_of(const unsigned char *pg)
{
    return u64_at(pg);
}

static void tell(walker *w, const page_bound *lo, const page_bound *hi, const char *fmt, ...)
{
    char what[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    w->out->damage++;
    if (w->fn)
        w->fn(w->arg, w->db, lo, hi, what);
}

static int bit_test_set(unsigned char *bits, uint64_t i)
{
    int was = bits[i >> 3] >> (i & 7) & 1;
    bits[i >> 3] |= (unsigned char)(1u << (i & 7));
    return was;
}

/* LMDB's default order: memcmp over the shorter length, then the shorter first; the free
 * list's keys (MDB_INTEGERKEY) are transaction ids compared as integers. */
static int key_cmp(const walker *w, const unsigned char *a, size_t la, const unsigned char *b,
                   size_t lb)
{
    if (w->integer_keys && la == 8 && lb == 8) {
        uint64_t x = u64_at(a), y = u64_at(b);
        return (x > y) - (x < y);
    }
    int c = memcmp(a, b, la < lb ? la : lb);
    return c ? c : (la > lb) - (la < lb);
}

static void bound_set(page_bound *b, const unsigned char *k, size_t n)
{
    b->open = 0;
    b->len = n < sizeof b->key ? n : sizeof b->key;
    memcpy(b->key, k, b->len);
}

static int within(const walker *w, const page_bound *lo, const page_bound *hi,
                  const unsigned char *k, size_t n)
{
    return (lo->open || key_cmp(w, lo->key, lo->len, k, n) <= 0) &&
           (hi->open || key_cmp(w, k, n, hi->key, hi->len) < 0);
}

static int read_page(walker *w, uint64_t pgno, unsigned char *buf)
{
    ssize_t got = pread(w->fd, buf, w->psize, (off_t)(pgno * w->psize));
    return got == (ssize_t)w->psize ? 0 : -1;
}

/* A page number a tree may point to: past the metas, within the checkpoint and the file. */
static int page_in_range(const walker *w, uint64_t pgno, uint64_t count)
{
    return pgno >= 2 && count >= 1 && pgno + count <= w->pages && pgno + count <= w->file_pages;
}

static void walk_free_list(walker *w, const unsigned char *v, size_t n, const page_bound *lo,
                           const page_bound *hi)
{
    uint64_t count = n >= 8 ? u64_at(v) : 0;
    if (n < 8 || count > (n - 8) / 8) {
        tell(w, lo, hi, "a free-list record of %zu bytes lists %llu pages", n,
             (unsigned long long)count);
        return;
    }
    for (uint64_t i = 0; i < count; i++) {
        uint64_t p = u64_at(v + 8 + 8 * i);
        if (!page_in_range(w, p, 1))
            tell(w, lo, hi, "the free list names page %llu, outside the file's %llu pages",
                 (unsigned long long)p, (unsigned long long)w->pages);
        else if (bit_test_set(w->freed, p))
            tell(w, lo, hi, "the free list names page %llu twice", (unsigned long long)p);
        else
            w->out->free++;
    }
}

static void walk_tree(walker *w, const tree_record *db, const page_bound *lo, const page_bound *hi);

static tree_record record_at(const unsigned char *p)
{
    return (tree_record){u32_at(p), u16_at(p + 4), u16_at(p + 6), u64_at(p + 8), u64_at(p + 16),
                         u64_at(p + 24), u64_at(p + 32), u64_at(p + 40)};
}

/* An overflow value: its pages in range, unshared, marked and long enough for its size. Hands
 * back its first bytes (into buf) for the free list's records, which may be long. */
static int walk_overflow(walker *w, uint64_t pgno, uint64_t size, tree_count *c,
                         unsigned char *buf, const page_bound *lo, const page_bound *hi)
{
    if (!page_in_range(w, pgno, 1) || read_page(w, pgno, buf)) {
        tell(w, lo, hi, "an overflow value at page %llu, outside the file's %llu pages",
             (unsigned long long)pgno, (unsigned long long)w->pages);
        return -1;
    }
    uint64_t n = u32_at(buf + 12);
    if (u64_at(buf) != pgno || !(u16_at(buf + 10) & P_OVERFLOW) || !page_in_range(w, pgno, n) ||
        size > n * w->psize - PAGE_HEADER) {
        tell(w, lo, hi, "overflow page %llu: a damaged header", (unsigned long long)pgno);
        return -1;
    }
    for (uint64_t i = 0; i < n; i++)
        if (bit_test_set(w->used, pgno + i)) {
            tell(w, lo, hi, "page %llu is reached twice", (unsigned long long)(pgno + i));
            return -1;
        }
    c->overflow += n;
    return 0;
}

static void walk_page(walker *w, uint64_t pgno, int depth, const page_bound *lo,
                      const page_bound *hi, tree_count *c);

/* The nodes of a leaf page: keys in order within the bounds, data within the page or its
 * overflow pages; a named database's record walked in turn (the main database); the free
 * list's records read. */
static void walk_leaf(walker *w, const unsigned char *page, unsigned n, int depth,
                      const page_bound *lo, const page_bound *hi, tree_count *c)
{
    const unsigned char *prev = NULL;
    size_t prev_len = 0;
    int is_main = !strcmp(w->db, ""), is_free = !strcmp(w->db, "free");
    const unsigned char *pg = page;
    if (c->leaf_depth < 0)
        c->leaf_depth = depth;
    else if (c->leaf_depth != depth)
        tell(w, lo, hi, "leaf page %llu at depth %d, others at %d", (unsigned long long)pgno_of(pg),
             depth, c->leaf_depth);
    for (unsigned i = 0; i < n; i++) {
        unsigned off = u16_at(pg + PAGE_HEADER + 2 * i);
        const unsigned char *node = pg + off;
        if (off + NODE_HEADER > w->psize) {
            tell(w, lo, hi, "leaf page %llu: node %u outside the page", (unsigned long long)pgno_of(pg), i);
            break;
        }
        uint64_t dsize = u16_at(node) | (uint64_t)u16_at(node + 2) << 16;
        unsigned flags = u16_at(node + 4), ksize = u16_at(node + 6);
        const unsigned char *key = node + NODE_HEADER, *data = key + ksize;
        uint64_t inpage = flags & F_BIGDATA ? 8 : dsize;
        if (off + NODE_HEADER + ksize + inpage > w->psize || (flags & F_DUPDATA)) {
            tell(w, lo, hi, "leaf page %llu: node %u damaged", (unsigned long long)pgno_of(pg), i);
            break;
        }
        if ((prev && key_cmp(w, prev, prev_len, key, ksize) >= 0) ||
            !within(w, lo, hi, key, ksize) || (is_free && ksize != 8)) {
            tell(w, lo, hi, "leaf page %llu: key %u out of order", (unsigned long long)pgno_of(pg), i);
            break;
        }
        prev = key, prev_len = ksize;
        c->entries++;
        unsigned char *spare = w->buf[MAX_DEPTH + 1];
        if (flags & F_BIGDATA) {
            if (walk_overflow(w, u64_at(data), dsize, c, spare, lo, hi))
                continue;
            if (is_free) { /* a long free list: read it whole */
                unsigned char *v = malloc(dsize ? dsize : 1);
                if (v && pread(w->fd, v, dsize, (off_t)(u64_at(data) * w->psize + PAGE_HEADER)) ==
                             (ssize_t)dsize)
                    walk_free_list(w, v, dsize, lo, hi);
                free(v);
            }
            continue;
        }
        if (is_free)
            walk_free_list(w, data, dsize, lo, hi);
        if (is_main && (flags & F_SUBDATA)) {
            if (dsize != DB_RECORD) {
                tell(w, lo, hi, "the record of a database has %llu bytes", (unsigned long long)dsize);
                continue;
            }
            named_db *d = w->n_named < MAX_NAMED ? &w->named[w->n_named++] : NULL;
            if (!d) {
                tell(w, lo, hi, "more than %d databases", MAX_NAMED);
                continue;
            }
            d->r = record_at(data);
            snprintf(d->name, sizeof d->name, "%.*s", (int)(ksize < 60 ? ksize : 60),
                     (const char *)key);
        }
    }
}

/* Node i of a branch page: its key (none for node 0, whose bound is the parent's) and child. */
static int branch_node(const walker *w, const unsigned char *pg, unsigned i, const unsigned char **key,
                       unsigned *ksize, uint64_t *child)
{
    unsigned off = u16_at(pg + PAGE_HEADER + 2 * i);
    if (off + NODE_HEADER > w->psize)
        return -1;
    const unsigned char *node = pg + off;
    *ksize = u16_at(node + 6), *key = node + NODE_HEADER;
    *child = u16_at(node) | (uint64_t)u16_at(node + 2) << 16 | (uint64_t)u16_at(node + 4) << 32;
    return off + NODE_HEADER + *ksize > w->psize ? -1 : 0;
}

static void walk_branch(walker *w, const unsigned char *pg, unsigned n, int depth,
                        const page_bound *lo, const page_bound *hi, tree_count *c)
{
    /* child i holds the keys from separator i (the parent's bound for i = 0) up to separator
     * i + 1 (the parent's bound for the last): the separators must be in order within them */
    const unsigned char *key, *prev = NULL;
    unsigned ksize, prev_len = 0;
    uint64_t child;
    for (unsigned i = 0; i < n; i++) {
        if (branch_node(w, pg, i, &key, &ksize, &child)) {
            tell(w, lo, hi, "branch page %llu: node %u outside the page",
                 (unsigned long long)pgno_of(pg), i);
            return;
        }
        if (i > 0 && (!within(w, lo, hi, key, ksize) ||
                      (prev && key_cmp(w, prev, prev_len, key, ksize) >= 0))) {
            tell(w, lo, hi, "branch page %llu: key %u out of order",
                 (unsigned long long)pgno_of(pg), i);
            return;
        }
        if (i > 0)
            prev = key, prev_len = ksize;
    }
    page_bound *b = malloc(2 * sizeof *b);
    if (!b)
        return;
    for (unsigned i = 0; i < n; i++) {
        branch_node(w, pg, i, &key, &ksize, &child);
        if (i == 0)
            b[0] = *lo;
        else
            bound_set(&b[0], key, ksize);
        b[1] = *hi;
        if (i + 1 < n) {
            const unsigned char *next;
            unsigned nsize;
            uint64_t unused;
            branch_node(w, pg, i + 1, &next, &nsize, &unused);
            bound_set(&b[1], next, nsize);
        }
        walk_page(w, child, depth + 1, &b[0], &b[1], c);
    }
    free(b);
}

static void walk_page(walker *w, uint64_t pgno, int depth, const page_bound *lo,
                      const page_bound *hi, tree_count *c)
{
    if (depth > MAX_DEPTH) {
        tell(w, lo, hi, "a tree deeper than %d pages (a loop)", MAX_DEPTH);
        return;
    }
    unsigned char *pg = w->buf[depth];
    if (!page_in_range(w, pgno, 1) || read_page(w, pgno, pg)) {
        tell(w, lo, hi, "page %llu is outside the file's %llu pages", (unsigned long long)pgno,
             (unsigned long long)w->pages);
        return;
    }
    if (bit_test_set(w->used, pgno)) {
        tell(w, lo, hi, "page %llu is reached twice", (unsigned long long)pgno);
        return;
    }
    unsigned flags = u16_at(pg + 10), lower = u16_at(pg + 12), upper = u16_at(pg + 14);
    /* exactly a branch or a plain leaf: LMDB reads a page by its flags (a LEAF2 page has no
     * nodes at all), and no store's database has another kind */
    int kind = flags & ~P_DIRTY;
    if (u64_at(pg) != pgno || (kind != P_BRANCH && kind != P_LEAF) || lower < PAGE_HEADER ||
        lower > upper || upper > w->psize || (lower - PAGE_HEADER) % 2) {
        tell(w, lo, hi, "page %llu: a damaged header", (unsigned long long)pgno);
        return;
    }
    unsigned n = (lower - PAGE_HEADER) / 2;
    for (unsigned i = 0; i < n; i++)
        if (u16_at(pg + PAGE_HEADER + 2 * i) < upper) {
            tell(w, lo, hi, "page %llu: node %u starts in the free space", (unsigned long long)pgno, i);
            return;
        }
    if (kind == P_BRANCH) {
        c->branch++;
        if (n < 2)
            tell(w, lo, hi, "branch page %llu has %u children", (unsigned long long)pgno, n);
        walk_branch(w, pg, n, depth, lo, hi, c);
    } else {
        c->leaf++;
        walk_leaf(w, pg, n, depth, lo, hi, c);
    }
}

static void walk_tree(walker *w, const tree_record *db, const page_bound *lo, const page_bound *hi)
{
    tree_count c = {.leaf_depth = -1};
    if (db->root == UINT64_MAX) { /* P_INVALID: an empty database */
        if (db->entries || db->branch || db->leaf || db->overflow)
            tell(w, lo, hi, "empty, yet its record counts %llu entries",
                 (unsigned long long)db->entries);
        return;
    }
    if (db->flags != (w->integer_keys ? MDB_INTEGERKEY_FLAG : 0)) {
        /* LMDB compares and lays out keys by these flags: the free list has integer keys,
         * every other database of a store none */
        tell(w, lo, hi, "its record has flags %#x, which no store's database has", db->flags);
        return;
    }
    walk_page(w, db->root, 1, lo, hi, &c);
    if (c.branch != db->branch || c.leaf != db->leaf || c.overflow != db->overflow ||
        c.entries != db->entries || (c.leaf_depth >= 0 && (unsigned)c.leaf_depth != db->depth))
        tell(w, lo, hi, "its record counts %llu entries in %llu+%llu+%llu pages of depth %u; its "
             "tree holds %llu in %llu+%llu+%llu of depth %d", (unsigned long long)db->entries,
             (unsigned long long)db->branch, (unsigned long long)db->leaf,
             (unsigned long long)db->overflow, db->depth, (unsigned long long)c.entries,
             (unsigned long long)c.branch, (unsigned long long)c.leaf,
             (unsigned long long)c.overflow, c.leaf_depth);
}

/* The meta page LMDB uses: both must carry the magic and version; the greater txnid wins. */
static int pick_meta(walker *w, unsigned char *m0, tree_record *free_db, tree_record *main_db)
{
    unsigned char head[2][256];
    uint64_t txn[2] = {0, 0};
    int ok[2];
    page_bound open = {.open = 1};
    for (int i = 0; i < 2; i++) {
        /* the page size is in the first meta; LMDB reads the second at that offset */
        uint64_t at = i == 0 ? 0 : u32_at(head[0] + PAGE_HEADER + 24);
        ok[i] = pread(w->fd, head[i], sizeof head[i], (off_t)at) == (ssize_t)sizeof head[i] &&
                (u16_at(head[i] + 10) & P_META) &&
                u32_at(head[i] + PAGE_HEADER) == LMDB_MAGIC &&
                u32_at(head[i] + PAGE_HEADER + 4) == LMDB_DATA_VERSION;
        if (i == 0 && !ok[0])
            break;
        txn[i] = u64_at(head[i] + PAGE_HEADER + 24 + 2 * DB_RECORD + 8);
    }
    snprintf(w->db, sizeof w->db, "(meta pages)");
    if (!ok[0] || !ok[1]) {
        tell(w, &open, &open, "meta page %d is damaged (LMDB refuses the file)", ok[0] ? 1 : 0);
        return -1;
    }
    /* LMDB takes the newest transaction id, then reads the meta page its parity names (a
     * reader's meta is me_metas[txnid & 1]): a damaged id sends it to the other page */
    uint64_t newest = txn[1] > txn[0] ? txn[1] : txn[0];
    int use = (int)(newest & 1);
    if (txn[use] != newest) {
        tell(w, &open, &open, "meta page %d: transaction id %llu, where meta page %d holds "
             "%llu (a damaged meta page)", 1 - use, (unsigned long long)txn[1 - use], use,
             (unsigned long long)txn[use]);
        return -1;
    }
    const unsigned char *m = head[use] + PAGE_HEADER;
    memcpy(m0, m, 24 + 2 * DB_RECORD + 16);
    *free_db = record_at(m + 24);
    *main_db = record_at(m + 24 + DB_RECORD);
    w->psize = free_db->pad; /* LMDB keeps the page size in the free database's pad */
    w->pages = u64_at(m + 24 + 2 * DB_RECORD) + 1;
    if (w->psize < 512 || w->psize > 65536 || (w->psize & (w->psize - 1))) {
        tell(w, &open, &open, "meta page %d: page size %llu", use, (unsigned long long)w->psize);
        return -1;
    }
    return 0;
}

int store_pages_walk(const char *data_path, page_damage_fn fn, void *arg, page_walk_result *out)
{
    memset(out, 0, sizeof *out);
    walker w = {.fd = open(data_path, O_RDONLY | O_CLOEXEC), .fn = fn, .arg = arg, .out = out};
    if (w.fd < 0)
        return -1;
    struct stat st;
    unsigned char meta[24 + 2 * DB_RECORD + 16];
    tree_record free_db, main_db;
    int rc = fstat(w.fd, &st) ? -1 : 0;
    page_bound open_b = {.open = 1};
    if (rc || pick_meta(&w, meta, &free_db, &main_db)) {
        close(w.fd);
        return rc;
    }
    w.file_pages = (uint64_t)st.st_size / w.psize;
    out->pages = w.pages, out->page_size = w.psize;
    if (w.file_pages < w.pages) {
        snprintf(w.db, sizeof w.db, "(meta pages)");
        tell(&w, &open_b, &open_b, "the file holds %llu pages of the %llu its last checkpoint "
             "needs (truncated)", (unsigned long long)w.file_pages, (unsigned long long)w.pages);
    }
    /* pages past the file's end are refused before any bit is set: a damaged last page
     * number does not size the bitmaps */
    uint64_t reach = w.pages < w.file_pages ? w.pages : w.file_pages;
    size_t bits = (size_t)(reach / 8 + 1);
    w.used = calloc(bits, 1), w.freed = calloc(bits, 1);
    int ok = w.used && w.freed;
    for (int i = 0; ok && i < MAX_DEPTH + 2; i++)
        ok = (w.buf[i] = malloc(w.psize)) != NULL;
    if (!ok) {
        errno = ENOMEM;
        rc = -1;
    } else {
        snprintf(w.db, sizeof w.db, "free");
        w.integer_keys = 1;
        walk_tree(&w, &free_db, &open_b, &open_b);
        w.integer_keys = 0;
        snprintf(w.db, sizeof w.db, "%s", "");
        walk_tree(&w, &main_db, &open_b, &open_b);
        for (int i = 0; i < w.n_named; i++) {
            snprintf(w.db, sizeof w.db, "%s", w.named[i].name);
            out->dbs++;
            walk_tree(&w, &w.named[i].r, &open_b, &open_b);
        }
        for (uint64_t p = 2; p < reach; p++) {
            int u = w.used[p >> 3] >> (p & 7) & 1, f = w.freed[p >> 3] >> (p & 7) & 1;
            out->used += (uint64_t)u;
            if (u && f) {
                snprintf(w.db, sizeof w.db, "free");
                tell(&w, &open_b, &open_b, "page %llu is both in use and free",
                     (unsigned long long)p);
            }
        }
        if (!out->damage && out->used + out->free + 2 != w.pages) {
            snprintf(w.db, sizeof w.db, "free");
            tell(&w, &open_b, &open_b, "%llu pages in use and %llu free of %llu: %lld pages lost",
                 (unsigned long long)out->used, (unsigned long long)out->free,
                 (unsigned long long)w.pages,
                 (long long)(w.pages - 2) - (long long)(out->used + out->free));
        }
    }
    for (int i = 0; i < MAX_DEPTH + 2; i++)
        free(w.buf[i]);
    free(w.used), free(w.freed);
    close(w.fd);
    return rc;
}
