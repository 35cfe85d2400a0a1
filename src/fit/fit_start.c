/* fit_start.c — the first eigendecomposition of C kept beside the model while a fit runs
 * (MODEL.ckpt/, formats/fit.md), so that a fit killed after it resumes from there with the same
 * numbers; and the release of what a fit start holds. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fit_internal.h"
#include "core/durable.h"
#include "model/lineage.h"
#include "model/model.h"
#include "model/npy.h"

void fit_start_clear(fit_start *st)
{
    free(st->c_prev), free(st->c_out);
    st->c_prev = st->c_out = NULL;
}

/* PREV/c_factor.npy (N x kp) into *out, or NULL when the file is absent. */
static int read_factor(const char *dir, const jsmf_model *prev, uint32_t *kp, double **out)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, FIT_C_FACTOR);
    *out = NULL;
    uint32_t r, c;
    int rc = model_read_array(dir, FIT_C_FACTOR, out, &r, &c); /* checked as B and A were */
    if (rc == JSMF_ENOTFOUND) {
        jsmf_error_clear();
        return JSMF_OK;
    }
    if (rc)
        return rc;
    if (r != prev->n || !c) {
        free(*out), *out = NULL;
        return jsmf_error(JSMF_EFORMAT, "%s: shape (%u, %u), but the model has %u words", path,
                          r, c, prev->n);
    }
    for (size_t e = 0; e < (size_t)r * c; e++)
        if (!isfinite((*out)[e])) {
            free(*out), *out = NULL;
            return jsmf_error(JSMF_EFORMAT, "%s: a value that is not finite at row %zu", path,
                              e / c);
        }
    *kp = c;
    return JSMF_OK;
}

/* A model without c_factor.npy (older, or of another kind): B A^(1/2), whose outer product is
 * the model's B A B^T ~ C, columns by decreasing eigenvalue of A; B itself when A was not
 * given (topics of another tool: the uniform A is of rank 1). */
static int model_factor(const char *path, const jsmf_model *prev, uint32_t *kp, double **out)
{
    uint32_t k = prev->k, n = prev->n;
    if (prev->a_uniform) {
        *kp = k;
        if (!(*out = malloc(sizeof(double) * n * k)))
            return jsmf_error(JSMF_ENOMEM, "%s: out of memory", path);
        memcpy(*out, prev->B, sizeof(double) * n * k);
        return JSMF_OK;
    }
    double *V = malloc(sizeof(double) * k * k), *w = malloc(sizeof(double) * k);
    *out = malloc(sizeof(double) * n * k);
    int rc = !V || !w || !*out ? jsmf_error(JSMF_ENOMEM, "%s: out of memory", path) : JSMF_OK;
    for (uint32_t r = 0; !rc && r < k; r++)
        for (uint32_t c = 0; c < k; c++)
            V[r * k + c] = 0.5 * (prev->A[r * k + c] + prev->A[c * k + r]);
    if (!rc && fit_syev(k, V, w))
        rc = jsmf_error(JSMF_ENUMERIC, "%s: the eigenproblem of A failed", path);
    for (uint32_t i = 0; !rc && i < n; i++)
        for (uint32_t c = 0; c < k; c++) {
            uint32_t e = k - 1 - c; /* descending */
            double f = w[e] > 0 ? sqrt(w[e]) : 0, x = 0;
            for (uint32_t t = 0; t < k; t++)
                x += prev->B[(size_t)i * k + t] * V[t * k + e];
            (*out)[(size_t)i * k + c] = x * f;
        }
    free(V), free(w);
    if (rc)
        free(*out), *out = NULL;
    *kp = k;
    return rc;
}

/* Row i of X (n x kp) is row j of P (prev->n x kp) when v's word i is PREV's word j, else 0. */
static void map_rows(const jsmf_model *prev, const uint32_t *to, uint32_t n, uint32_t kp,
                     const double *P, double *X)
{
    memset(X, 0, sizeof(double) * n * kp);
    for (uint32_t j = 0; j < prev->n; j++) {
        uint32_t i = to ? to[j] : j;
        if (i < n)
            memcpy(X + (size_t)i * kp, P + (size_t)j * kp, sizeof(double) * kp);
    }
}

int fit_start_previous(fit_start *st, const char *path, const jsmf_model *prev,
                       const jsmf_vocab *v, uint32_t n)
{
    double *F = NULL;
    uint32_t kp = 0, *to = NULL;
    int rc = read_factor(path, prev, &kp, &F);
    if (!rc && !F)
        rc = model_factor(path, prev, &kp, &F);
    if (rc || (!v && prev->n != n))
        goto out;
    if (v && !(to = malloc(sizeof *to * (prev->n ? prev->n : 1))))
        rc = jsmf_error(JSMF_ENOMEM, "%s: out of memory for the warm start", path);
    if (rc || (v && (rc = model_map_to_vocab(prev, v, to, NULL, NULL))))
        goto out;
    if (!(st->c_prev = malloc(sizeof(double) * n * kp))) {
        rc = jsmf_error(JSMF_ENOMEM, "%s: out of memory for the warm start", path);
        goto out;
    }
    map_rows(prev, to, n, kp, F, st->c_prev);
    st->kp = kp;
out:
    free(to);
    free(F);
    return rc;
}

static void ckpt_path(char *buf, size_t cap, const char *dir, const char *name)
{
    snprintf(buf, cap, "%s/%s", dir, name);
}

/* key.txt: the key line, then the eigensolver's products; written last, by a rename, so that a
 * checkpoint with a key is complete. */
static int write_key(const char *dir, const char *key, uint32_t applies)
{
    char path[4096], tmp[4200];
    ckpt_path(path, sizeof path, dir, "key.txt");
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = fopen(tmp, "w");
    if (!f)
        return jsmf_error(durable_errcode(errno), "%s: cannot create: %s", tmp, strerror(errno));
    int err = fprintf(f, "%s\napplies %u\n", key, applies) < 0 ? errno : 0;
    return durable_publish(f, err, tmp, path, "the fit's checkpoint");
}

int fit_ckpt_save(const fit_start *st, uint32_t n, uint32_t k, const double *U,
                  const double *lam, uint32_t applies)
{
    char path[4096];
    if (mkdir(st->ckpt, 0777) && errno != EEXIST)
        return jsmf_error(durable_errcode(errno), "%s: cannot create: %s", st->ckpt,
                          strerror(errno));
    ckpt_path(path, sizeof path, st->ckpt, "key.txt"); /* stale until the new one is whole */
    if (unlink(path) && errno != ENOENT)
        return jsmf_error(durable_errcode(errno), "%s: cannot remove: %s", path, strerror(errno));
    int rc;
    ckpt_path(path, sizeof path, st->ckpt, "U.npy");
    if ((rc = npy_write_f64(path, U, n, k)) || (rc = durable_sync_path(path)))
        return rc;
    ckpt_path(path, sizeof path, st->ckpt, "lam.npy");
    if ((rc = npy_write_f64(path, lam, k, 0)) || (rc = durable_sync_path(path)))
        return rc;
    return write_key(st->ckpt, st->key, applies);
}

/* 1 when key.txt holds st->key (and *applies is read), 0 when it is absent or another key. */
static int key_matches(const char *dir, const char *key, uint32_t *applies)
{
    char path[4096], line[512];
    ckpt_path(path, sizeof path, dir, "key.txt");
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    size_t len = strlen(key);
    int ok = fgets(line, sizeof line, f) && strlen(line) == len + 1 && !strncmp(line, key, len) &&
             line[len] == '\n' && fscanf(f, "applies %u", applies) == 1;
    fclose(f);
    return ok;
}

/* An array of the expected shape, or NULL (a checkpoint that does not read is recomputed). */
static double *read_array(const char *dir, const char *name, uint32_t rows, uint32_t cols)
{
    char path[4096];
    ckpt_path(path, sizeof path, dir, name);
    double *d = NULL;
    uint32_t r, c;
    if (npy_read_f64(path, &d, &r, &c)) {
        jsmf_error_clear();
        return NULL;
    }
    if (r != rows || c != cols) {
        free(d);
        return NULL;
    }
    return d;
}

/* Tests: JSMF_TEST_EXIT_AFTER_CYCLE=n ends the process once cycle n is kept (a kill there). */
static uint32_t test_exit_cycle(void)
{
    const char *v = getenv("JSMF_TEST_EXIT_AFTER_CYCLE");
    long n = v ? atol(v) : 0;
    return n > 0 && n < 1000000 ? (uint32_t)n : 0;
}

/* cycle.bin: "jsmf-fit-cycle 1\n", the key line, then (native) u32 it, applies, nl, p, k,
 * n_within, n_between, u64 rng, f64 early, k prev, the record's 2 x FIT_EIG_CHANGES changes,
 * nl x p of V0; written by a rename, so that one that reads is whole. */
#define CYCLE_MAGIC "jsmf-fit-cycle 1\n"

static void cycle_save(void *ctx, const fit_eig_state *e, uint32_t nl, uint32_t p, uint32_t k)
{
    const fit_start *st = ctx;
    char path[4096], tmp[4200];
    if (mkdir(st->ckpt, 0777) && errno != EEXIST)
        return;
    ckpt_path(path, sizeof path, st->ckpt, "cycle.bin");
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = fopen(tmp, "wb");
    if (!f)
        return;
    uint32_t h[7] = {e->it, e->applies, nl, p, k, e->rec.n_within, e->rec.n_between};
    int ok = fprintf(f, "%s%s\n", CYCLE_MAGIC, st->key) > 0 && fwrite(h, sizeof h, 1, f) == 1 &&
             fwrite(&e->rng, sizeof e->rng, 1, f) == 1 &&
             fwrite(&e->early, sizeof e->early, 1, f) == 1 &&
             fwrite(e->prev, sizeof(double), k, f) == k &&
             fwrite(e->rec.within, sizeof e->rec.within, 1, f) == 1 &&
             fwrite(e->rec.between, sizeof e->rec.between, 1, f) == 1 &&
             fwrite(e->V0, sizeof(double) * p, nl, f) == nl;
    /* a cycle that cannot be kept only costs its resume */
    if (durable_publish(f, ok ? 0 : EIO, tmp, path, "the fit's checkpoint"))
        jsmf_error_clear();
    if (test_exit_cycle() == e->it)
        _exit(99);
}

static int cycle_load(void *ctx, fit_eig_state *e, uint32_t nl, uint32_t p, uint32_t k)
{
    const fit_start *st = ctx;
    char path[4096], line[512];
    ckpt_path(path, sizeof path, st->ckpt, "cycle.bin");
    FILE *f = fopen(path, "rb");
    if (!f)
        return 0;
    size_t len = strlen(st->key);
    uint32_t h[7];
    int ok = fgets(line, sizeof line, f) && !strcmp(line, CYCLE_MAGIC) &&
             fgets(line, sizeof line, f) && strlen(line) == len + 1 &&
             !strncmp(line, st->key, len) && fread(h, sizeof h, 1, f) == 1 && h[2] == nl &&
             h[3] == p && h[4] == k && h[5] <= FIT_EIG_CHANGES && h[6] <= FIT_EIG_CHANGES &&
             fread(&e->rng, sizeof e->rng, 1, f) == 1 &&
             fread(&e->early, sizeof e->early, 1, f) == 1 &&
             fread(e->prev, sizeof(double), k, f) == k &&
             fread(e->rec.within, sizeof e->rec.within, 1, f) == 1 &&
             fread(e->rec.between, sizeof e->rec.between, 1, f) == 1 &&
             fread(e->V0, sizeof(double) * p, nl, f) == nl && fgetc(f) == EOF;
    fclose(f);
    if (!ok)
        return 0;
    e->it = h[0], e->applies = h[1], e->rec.n_within = h[5], e->rec.n_between = h[6];
    return 1;
}

void fit_ckpt_cycles(fit_start *st, fit_eig_ckpt *out)
{
    const char *t = getenv("JSMF_TEST_FIT_CKPT_CYCLES");
    *out = (fit_eig_ckpt){st, cycle_save, cycle_load,
                          t && *t == '1' ? 0.0 : FIT_CKPT_CYCLE_SECS};
}

/* Y = U diag(sqrt(max(lam, 0))). */
void fit_psd_factor(uint32_t n, uint32_t k, const double *U, const double *lam, double *Y)
{
    double *f = malloc(sizeof(double) * k);
    for (uint32_t c = 0; c < k && f; c++)
        f[c] = lam[c] > 0 ? sqrt(lam[c]) : 0;
    for (uint32_t i = 0; i < n && f; i++)
        for (uint32_t c = 0; c < k; c++)
            Y[(size_t)i * k + c] = U[(size_t)i * k + c] * f[c];
    free(f);
}

double *fit_ckpt_factor(const fit_start *st, uint32_t n, uint32_t k)
{
    uint32_t applies;
    double *u = malloc(sizeof(double) * n * k + 1), *l = malloc(sizeof(double) * k + 1);
    int ok = u && l && st->ckpt && fit_ckpt_load(st, n, k, u, l, &applies);
    if (ok)
        fit_psd_factor(n, k, u, l, u);
    free(l);
    if (!ok) {
        free(u);
        return NULL;
    }
    return u;
}

int fit_ckpt_load(const fit_start *st, uint32_t n, uint32_t k, double *U, double *lam,
                  uint32_t *applies)
{
    if (!key_matches(st->ckpt, st->key, applies))
        return 0;
    double *u = read_array(st->ckpt, "U.npy", n, k), *l = read_array(st->ckpt, "lam.npy", k, 1);
    int got = u && l;
    if (got) {
        memcpy(U, u, sizeof(double) * n * k);
        memcpy(lam, l, sizeof(double) * k);
    }
    free(u), free(l);
    return got;
}
