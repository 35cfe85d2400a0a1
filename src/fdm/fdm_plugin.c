/* fdm_cuda_load.c — finds and loads the CUDA back-end plugin (libjsmf_cuda.so) the first time a
 * GPU is asked for, so that programs built with CUDA start without loading cuBLAS. */
#include "fdm_internal.h"
#include "core/plugin.h"

#ifdef JSMF_WITH_CUDA
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PLUGIN "libjsmf_cuda.so"

static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static fdm_cuda_api api;
static int loaded;
static char why[512];

static int try_path(const char *path)
{
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        snprintf(why, sizeof why, "%s", dlerror());
        return 0;
    }
    fdm_cuda_plugin_fn init = (fdm_cuda_plugin_fn)(uintptr_t)dlsym(h, FDM_CUDA_PLUGIN_SYMBOL);
    if (!init) {
        snprintf(why, sizeof why, "%s: no %s (plugin of another version?)", path,
                 FDM_CUDA_PLUGIN_SYMBOL);
        dlclose(h);
        return 0;
    }
    fdm_host_api host = {jsmf_error, jsmf_fdm_sampler_info_get, jsmf_fdm_sampler_tables_get,
                         jsmf_fdm_sampler_draw};
    return init(&host, &api) == 0;
}

static int try_one(void *arg, const char *path)
{
    (void)arg;
    return try_path(path);
}

static void load(void)
{
#ifdef JSMF_CUDA_SO_BUILD
    const char *build = JSMF_CUDA_SO_BUILD;
#else
    const char *build = NULL;
#endif
#ifdef JSMF_CUDA_SO_INSTALL
    const char *install = JSMF_CUDA_SO_INSTALL;
#else
    const char *install = NULL;
#endif
    loaded = plugin_find("JSMF_CUDA_LIB", PLUGIN, build, install, try_one, NULL);
}

static int plugin(void)
{
    pthread_once(&load_once, load);
    if (!loaded)
        return jsmf_error(JSMF_ENOTSUP, "cannot load the CUDA back end " PLUGIN " (%s)", why);
    return 0;
}

int jsmf_fdm_cuda_probe(char *name, size_t len)
{
    if (name && len)
        name[0] = 0;
    int rc = plugin();
    return rc ? rc : api.probe(name, len);
}

int fdm_cuda_backend_create(const fdm_setup *setup, fdm_state *st, fdm_backend *out)
{
    int rc = plugin();
    return rc ? rc : api.backend_create(setup, st, out);
}

int jsmf_fdm_loss_grad_cuda(uint32_t n, uint32_t k, const double *wmu, const double *walpha,
                            const uint32_t *u, const uint32_t *v, uint32_t count, double *loss,
                            double *gmu, double *galpha)
{
    int rc = plugin();
    return rc ? rc : api.loss_grad(n, k, wmu, walpha, u, v, count, loss, gmu, galpha);
}
#endif
