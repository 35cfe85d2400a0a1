/* test_store_create.c — the library's one way to make a store (jsmf_store_create) and to compare,
 * copy and label vocabularies: the messages name both sides, a failed creation leaves nothing,
 * an existing store is refused untouched; a check of its C and the lines that report it. */
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "jsmf_store.h"
#include "core/vocab.h"
#include "store/store.h"

static jsmf_vocab *words(uint32_t n, const char *const *w)
{
    jsmf_vocab *v = calloc(1, sizeof *v);
    v->n = n;
    v->words = calloc(n, sizeof *v->words);
    for (uint32_t i = 0; i < n; i++)
        v->words[i] = strdup(w[i]);
    return v;
}

static void test_vocab(void)
{
    static const char *const abc[] = {"alpha", "beta", "gamma"}, *const abd[] = {"alpha", "beta",
                                                                                 "delta"};
    jsmf_vocab *a = words(3, abc), *b = words(3, abd), *ab = words(2, abc), *c = NULL;
    CHECK_OK(vocab_compare(a, "A", a, "A2"));
    CHECK(vocab_compare(a, "A", b, "B") == JSMF_EMISMATCH);
    CHECK(strstr(jsmf_errmsg(), "A and B differ at word 3: 'gamma' in A, 'delta' in B") != NULL);
    CHECK(vocab_compare(a, "A", ab, "AB") == JSMF_EMISMATCH);
    CHECK(strstr(jsmf_errmsg(), "A has 3 words but AB has 2") != NULL);
    a->df = calloc(3, sizeof *a->df);
    a->df[2] = 7;
    CHECK_OK(vocab_copy(a, 1, &c));
    CHECK(c && c->n == 3 && !strcmp(c->words[2], "gamma") && c->df && c->df[2] == 7 && !c->tf);
    CHECK(c && c->words[0] != a->words[0]);
    jsmf_vocab_free(c);
    CHECK_OK(vocab_copy(a, 0, &c));
    CHECK(c && !c->df);
    jsmf_vocab_free(c);
    CHECK_OK(vocab_labels(12, "t", &c));
    CHECK(c && c->n == 12 && !strcmp(c->words[0], "t0") && !strcmp(c->words[11], "t11"));
    jsmf_vocab_free(c);
    jsmf_vocab_free(a), jsmf_vocab_free(b), jsmf_vocab_free(ab);
}

static void test_create(const char *dir)
{
    static const char *const w[] = {"one", "two", "three"};
    jsmf_vocab *v = words(3, w), empty = {0};
    jsmf_store_params p = {.min_doc_len = 2, .tok_min_len = 2, .tok_max_len = 40, .hold = JSMF_HOLD_DEFAULT};
    char path[4096];
    struct stat st;
    jsmf_store *s = NULL;
    /* a refused creation (an empty vocabulary) leaves no directory behind */
    snprintf(path, sizeof path, "%s/refused", dir);
    CHECK(jsmf_store_create(path, &empty, &p, &s) == JSMF_EINVAL && !s);
    CHECK(stat(path, &st) != 0);
    /* created, initialised, open for writing */
    snprintf(path, sizeof path, "%s/new", dir);
    CHECK_OK(jsmf_store_create(path, v, &p, &s));
    CHECK(s && store_has_vocab(s));
    jsmf_store_close(s);
    s = NULL;
    /* a second creation is refused and the store stays */
    CHECK(jsmf_store_create(path, v, &p, &s) == JSMF_EEXIST && !s);
    CHECK(strstr(jsmf_errmsg(), "a store already exists") != NULL);
    CHECK_OK(jsmf_store_open(path, JSMF_STORE_RDONLY, &s));
    jsmf_vocab *back = NULL;
    CHECK_OK(jsmf_store_vocab_get(s, &back));
    CHECK(back && vocab_compare(back, "store", v, "given") == JSMF_OK);
    jsmf_vocab_free(back);
    /* a store without documents checks as empty, and the check is timed */
    jsmf_store_check_result r;
    CHECK_OK(jsmf_store_check(s, &r));
    CHECK(r.entries == 0 && r.sum == 0 && r.seconds >= 0);
    jsmf_store_close(s);
    jsmf_vocab_free(v);
}

/* jsmf info --check's two lines, byte for byte */
static void test_check_write(void)
{
    jsmf_store_check_result r = {.entries = 12, .bytes = 2000000000, .sum = 1.0, .digest = 0xabc, .seconds = 4.0};
    char buf[512] = "";
    FILE *f = fmemopen(buf, sizeof buf - 1, "w");
    jsmf_store_check_write(f, "p", "S", &r);
    fclose(f);
    CHECK(!strcmp(buf, "p: S: C read and checked: 12 entries summing to 1.000000,\n"
                       "p:   content digest 0000000000000abc, 2.00 GB of store in 4.00 s "
                       "(0.50 GB/s)\n"));
}

int main(void)
{
    char dir[] = "/tmp/jsmf-test-store-create-XXXXXX";
    if (!mkdtemp(dir))
        return 1;
    setenv("JSMF_STORE_NOSYNC", "1", 1);
    test_vocab();
    test_create(dir);
    test_check_write();
    char cmd[4200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd))
        fprintf(stderr, "could not remove %s\n", dir);
    CHECK_DONE();
}
