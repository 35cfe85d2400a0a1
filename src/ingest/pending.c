/* pending.c — the words outside the vocabulary an ingest window met, with exact counts: an
 * open-addressing table (linear probing, load <= 1/2) over an arena of word bytes. */
#include "pending.h"

#include <stdlib.h>
#include <string.h>

#include "jsmf.h"
#include "core/hash.h"

#define PENDING_MIN_SLOTS 1024u

static uint64_t word_hash(const char *w, uint32_t len)
{
    return hash_fmix64(hash_fnv1a(14695981039346656037ull, w, len));
}

uint64_t pending_word_hash(const char *w, uint32_t len)
{
    return word_hash(w, len);
}

int pending_init(pending_table *p, uint64_t limit)
{
    memset(p, 0, sizeof *p);
    p->limit = limit;
    return JSMF_OK;
}

void pending_free(pending_table *p)
{
    free(p->slots), free(p->arena), free(p->list);
    memset(p, 0, sizeof *p);
}

void pending_clear(pending_table *p)
{
    if (p->slots)
        memset(p->slots, 0, (size_t)p->cap * sizeof *p->slots);
    p->n = 0, p->used = 0;
    free(p->list);
    p->list = NULL;
}

/* Slots needed for n types at load <= 1/2. */
static uint64_t slots_for(uint64_t n)
{
    uint64_t c = PENDING_MIN_SLOTS;
    while (c < 2 * n)
        c *= 2;
    return c;
}

int pending_fits(const pending_table *p, uint64_t types, uint64_t bytes)
{
    if (p->n == 0)
        return 1;
    uint64_t n = p->n + types;
    uint64_t need = slots_for(n) * sizeof(pending_slot) + 2 * (p->used + bytes) +
                    n * sizeof(jsmf_pending_word);
    return need <= p->limit;
}

static int grow_slots(pending_table *p, uint32_t cap)
{
    pending_slot *ns = calloc(cap, sizeof *ns);
    if (!ns)
        return jsmf_error(JSMF_ENOMEM, "out of memory for the words outside the vocabulary");
    for (uint32_t i = 0; i < p->cap; i++) {
        if (!p->slots[i].len)
            continue;
        uint64_t h = word_hash(p->arena + p->slots[i].off, p->slots[i].len);
        uint32_t j = (uint32_t)h & (cap - 1);
        while (ns[j].len)
            j = (j + 1) & (cap - 1);
        ns[j] = p->slots[i];
    }
    free(p->slots);
    p->slots = ns, p->cap = cap;
    return JSMF_OK;
}

static int arena_put(pending_table *p, const char *w, uint32_t len, uint32_t *off)
{
    if (p->used + len > p->arena_cap) {
        uint64_t c = p->arena_cap ? p->arena_cap : 4096;
        while (c < p->used + len)
            c *= 2;
        char *a = realloc(p->arena, c);
        if (!a || c > UINT32_MAX)
            return jsmf_error(JSMF_ENOMEM, "out of memory for the words outside the vocabulary");
        p->arena = a, p->arena_cap = c;
    }
    memcpy(p->arena + p->used, w, len);
    *off = (uint32_t)p->used;
    p->used += len;
    return JSMF_OK;
}

/* The slot of a word, made (counts 0) when new. */
static int find_slot(pending_table *p, const char *w, uint32_t len, pending_slot **out)
{
    if (2 * ((uint64_t)p->n + 1) > p->cap) {
        int rc = grow_slots(p, p->cap ? 2 * p->cap : PENDING_MIN_SLOTS);
        if (rc)
            return rc;
    }
    uint32_t j = (uint32_t)word_hash(w, len) & (p->cap - 1);
    for (;; j = (j + 1) & (p->cap - 1)) {
        pending_slot *s = &p->slots[j];
        if (!s->len) {
            int rc = arena_put(p, w, len, &s->off);
            if (rc)
                return rc;
            s->len = len, s->stamp = 0, s->df = 0, s->tf = 0;
            p->n++;
            *out = s;
            return JSMF_OK;
        }
        if (s->len == len && !memcmp(p->arena + s->off, w, len)) {
            *out = s;
            return JSMF_OK;
        }
    }
}

int pending_add(pending_table *p, const char *w, uint32_t len, uint64_t count, uint32_t stamp)
{
    pending_slot *s;
    int rc = len ? find_slot(p, w, len, &s) : JSMF_OK;
    if (rc || !len)
        return rc;
    s->df += s->stamp != stamp;
    s->stamp = stamp, s->tf += count;
    return JSMF_OK;
}

int pending_add_counts(pending_table *p, const char *w, uint32_t len, uint64_t df, uint64_t tf)
{
    pending_slot *s;
    int rc = len ? find_slot(p, w, len, &s) : JSMF_OK;
    if (rc || !len)
        return rc;
    s->df += df, s->tf += tf;
    return JSMF_OK;
}

static int word_cmp(const void *a, const void *b)
{
    const jsmf_pending_word *x = a, *y = b;
    uint32_t l = x->len < y->len ? x->len : y->len;
    int c = memcmp(x->word, y->word, l);
    return c ? c : (x->len > y->len) - (x->len < y->len);
}

int pending_list(pending_table *p, const jsmf_pending_word **out, uint32_t *n)
{
    free(p->list);
    p->list = NULL;
    *out = NULL, *n = 0;
    if (!p->n)
        return JSMF_OK;
    if (!(p->list = malloc((size_t)p->n * sizeof *p->list)))
        return jsmf_error(JSMF_ENOMEM, "out of memory for the words outside the vocabulary");
    uint32_t k = 0;
    for (uint32_t i = 0; i < p->cap; i++)
        if (p->slots[i].len)
            p->list[k++] = (jsmf_pending_word){p->arena + p->slots[i].off, p->slots[i].len,
                                               p->slots[i].df, p->slots[i].tf};
    qsort(p->list, k, sizeof *p->list, word_cmp); /* keys in order: LMDB's pages fill in order */
    *out = p->list, *n = k;
    return JSMF_OK;
}
