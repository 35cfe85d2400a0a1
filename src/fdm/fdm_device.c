/* fdm_device.c — the devices FDM trains on, as a table (name, rules, back end): --device's
 * choices, what auto resolves to, and the one place each device is probed. A new device is one
 * entry here and its back end. */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "fdm_internal.h"
#include "core/error.h"

#ifdef JSMF_CUDA_SO_BUILD
#define CUDA_SO_BUILD JSMF_CUDA_SO_BUILD
#else
#define CUDA_SO_BUILD NULL
#endif
#ifdef JSMF_CUDA_SO_INSTALL
#define CUDA_SO_INSTALL JSMF_CUDA_SO_INSTALL
#else
#define CUDA_SO_INSTALL NULL
#endif

/* The CUDA back end (fdm_cuda.cu), a plugin: linking cuBLAS into the program would cost every
 * start ~1 s. */
static const char *const cuda_nodes[] = {"/dev/nvidiactl", "/dev/dxg", NULL};

static const fdm_plugin cuda_plugin = {
    .nodes = cuda_nodes,
    .env = "JSMF_CUDA_LIB",
    .file = "libjsmf_cuda.so",
    .build = CUDA_SO_BUILD,
    .install = CUDA_SO_INSTALL,
    .symbol = "jsmf_fdm_cuda_plugin_v1",
#ifndef JSMF_WITH_CUDA
    .missing = "the CUDA back end is not compiled in (build with nvcc present, or make CUDA=yes)",
#endif
};

/* Indexed by JSMF_FDM_DEVICE_*; a device without an enum value is simply appended. */
static const fdm_device devices[] = {
    [JSMF_FDM_DEVICE_AUTO] = {.name = "auto"},
    [JSMF_FDM_DEVICE_CPU] = {.name = "cpu", .title = "the CPU", .threads_in_name = 1,
                             .create = fdm_cpu_backend_create},
    [JSMF_FDM_DEVICE_CUDA] = {.name = "cuda", .title = "the GPU", .accelerator = 1,
                              .plugin = &cuda_plugin},
};

#define N_DEVICES ((int)(sizeof devices / sizeof devices[0]))

const fdm_device *fdm_device_get(int id)
{
    return id >= 0 && id < N_DEVICES ? &devices[id] : NULL;
}

const char *jsmf_fdm_device_name(int device)
{
    const fdm_device *d = fdm_device_get(device);
    return d ? d->name : NULL;
}

static int is_auto(const fdm_device *d)
{
    return !d->create && !d->plugin;
}

/* ---- probing, once per device ---- */

typedef struct probe_result {
    int done, rc;
    char what[128], why[256];
} probe_result;

static pthread_mutex_t probe_lock = PTHREAD_MUTEX_INITIALIZER;
static probe_result probed[N_DEVICES];

/* 0 when device `id` answers (its hardware's name in what), else the error of its probe, its
 * message set again each time. A built-in device always answers. */
static int probe(int id, char *what, size_t len)
{
    const fdm_device *d = &devices[id];
    if (what && len)
        what[0] = 0;
    if (!d->plugin)
        return JSMF_OK;
    pthread_mutex_lock(&probe_lock);
    probe_result *p = &probed[id];
    if (!p->done) {
        const fdm_plugin_api *api;
        p->rc = fdm_plugin_load(d->plugin, &api);
        if (!p->rc)
            p->rc = api->probe(p->what, sizeof p->what);
        if (p->rc)
            snprintf(p->why, sizeof p->why, "%s", jsmf_errmsg());
        p->done = 1;
    }
    probe_result r = *p;
    pthread_mutex_unlock(&probe_lock);
    if (what && len)
        snprintf(what, len, "%s", r.what);
    return r.rc ? jsmf_error(r.rc, "%s", r.why) : JSMF_OK;
}

static int create(int id, const fdm_setup *s, fdm_state *st, fdm_backend *be)
{
    const fdm_device *d = &devices[id];
    if (d->create)
        return d->create(s, st, be);
    const fdm_plugin_api *api;
    int rc = fdm_plugin_load(d->plugin, &api);
    return rc ? rc : api->backend_create(s, st, be);
}

/* 1 unless the plugin names device nodes and none of them exists. */
static int has_node(const fdm_plugin *pl)
{
    if (!pl || !pl->nodes)
        return 1;
    for (const char *const *n = pl->nodes; *n; n++)
        if (access(*n, F_OK) == 0)
            return 1;
    return 0;
}

/* The device auto falls back to: the first that is not an accelerator. */
static int fallback(void)
{
    for (int i = 0; i < N_DEVICES; i++)
        if (!is_auto(&devices[i]) && !devices[i].accelerator)
            return i;
    return JSMF_FDM_DEVICE_CPU;
}

int fdm_device_resolve(int asked, int *id, char *why, size_t len)
{
    const fdm_device *d = fdm_device_get(asked);
    if (why && len)
        why[0] = 0;
    *id = asked;
    if (!d)
        return jsmf_error(JSMF_EINVAL, "no FDM device %d", asked);
    if (!is_auto(d)) {
        int rc = probe(asked, NULL, 0);
        return rc ? error_context(rc, "--device %s", d->name) : JSMF_OK;
    }
    for (int i = 0; i < N_DEVICES; i++) {
        if (!devices[i].accelerator)
            continue;
        if (!has_node(devices[i].plugin)) {
            if (why && len)
                snprintf(why, len, "no %s device on this machine (no %s)", devices[i].name,
                         devices[i].plugin->nodes[0]);
            continue;
        }
        if (!probe(i, NULL, 0)) {
            *id = i;
            return JSMF_OK;
        }
        if (why && len)
            snprintf(why, len, "%s", jsmf_errmsg());
        jsmf_error_clear(); /* handled: auto goes on to the next device or the fallback */
    }
    *id = fallback();
    return JSMF_OK;
}

int fdm_device_open(int asked, const fdm_setup *s, fdm_state *st, fdm_backend *be, int *used)
{
    char why[256];
    int id, rc = fdm_device_resolve(asked, &id, why, sizeof why);
    *used = id;
    if (rc)
        return rc;
    if (why[0]) { /* auto, no accelerator answered */
        rc = create(id, s, st, be);
        snprintf(be->note, sizeof be->note, "%.130s; using %s", why, devices[id].title);
        return rc;
    }
    rc = create(id, s, st, be);
    if (rc != JSMF_ENOMEM || !is_auto(&devices[asked]) || !devices[id].accelerator)
        return rc;
    /* auto: an accelerator that cannot hold the model leaves it to the fallback */
    char full[200];
    snprintf(full, sizeof full, "%s", jsmf_errmsg_for(rc));
    jsmf_error_clear(); /* handled: the note carries it */
    *used = fallback();
    rc = create(*used, s, st, be);
    snprintf(be->note, sizeof be->note, "%s could not hold the model (%.100s); used %s",
             devices[id].title, full, devices[*used].title);
    return rc;
}

/* ---- the CUDA device's public entry points ---- */

int fdm_cuda_probe(char *name, size_t len)
{
    return probe(JSMF_FDM_DEVICE_CUDA, name, len);
}

int fdm_loss_grad_cuda(uint32_t n, uint32_t k, const double *wmu, const double *walpha,
                            const uint32_t *u, const uint32_t *v, uint32_t count, double *loss,
                            double *gmu, double *galpha)
{
    const fdm_plugin_api *api;
    int rc = fdm_plugin_load(devices[JSMF_FDM_DEVICE_CUDA].plugin, &api);
    return rc ? rc : api->loss_grad(n, k, wmu, walpha, u, v, count, loss, gmu, galpha);
}

int fdm_sample_cuda(const jsmf_fdm_sampler *s, uint64_t seed, uint64_t step, uint32_t count,
                         uint32_t *u, uint32_t *v)
{
    const fdm_plugin_api *api;
    int rc = fdm_plugin_load(devices[JSMF_FDM_DEVICE_CUDA].plugin, &api);
    if (!rc && !api->sample)
        rc = jsmf_error(JSMF_ENOTSUP, "the CUDA back end has no sampling hook (an older plugin)");
    return rc ? rc : api->sample(s, seed, step, count, u, v);
}
