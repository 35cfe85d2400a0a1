/* fdm_plugin.c — finds and loads a device's back-end plugin (libjsmf_cuda.so) the first time the
 * device is asked for, so that programs built with it start without loading its libraries
 * (cuBLAS: ~1 s and 600 MB). */
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>

#include "core/plugin.h"
#include "fdm_internal.h"

/* One slot per plugin asked for (a handful: one per plugin device of the table). */
#define MAX_PLUGINS 8

typedef struct loaded_plugin {
    const fdm_plugin *spec;
    int ok;
    fdm_plugin_api api;
    char why[512];
} loaded_plugin;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static loaded_plugin slots[MAX_PLUGINS];
static int used;

static int try_path(void *arg, const char *path)
{
    loaded_plugin *p = arg;
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        snprintf(p->why, sizeof p->why, "%s", dlerror());
        return 0;
    }
    fdm_plugin_fn init = (fdm_plugin_fn)(uintptr_t)dlsym(h, p->spec->symbol);
    if (!init) {
        snprintf(p->why, sizeof p->why, "%s: no %s (plugin of another version?)", path,
                 p->spec->symbol);
        dlclose(h);
        return 0;
    }
    fdm_host_api host = {jsmf_error, fdm_sampler_info_get, fdm_sampler_tables_get,
                         fdm_sampler_draw_default};
    return init(&host, &p->api) == 0;
}

/* The slot of `pl`, loaded on first use; NULL when every slot is taken. */
static loaded_plugin *slot_of(const fdm_plugin *pl)
{
    loaded_plugin *p = NULL;
    pthread_mutex_lock(&lock);
    for (int i = 0; i < used && !p; i++)
        if (slots[i].spec == pl)
            p = &slots[i];
    if (!p && used < MAX_PLUGINS) {
        p = &slots[used++];
        p->spec = pl;
        p->ok = plugin_find(pl->env, pl->file, pl->build, pl->install, try_path, p);
    }
    pthread_mutex_unlock(&lock);
    return p;
}

int fdm_plugin_load(const fdm_plugin *pl, const fdm_plugin_api **api)
{
    *api = NULL;
    if (pl->missing)
        return jsmf_error(JSMF_ENOTSUP, "%s", pl->missing);
    loaded_plugin *p = slot_of(pl);
    if (!p)
        return jsmf_error(JSMF_ENOTSUP, "cannot load %s: too many plugins", pl->file);
    if (!p->ok)
        return jsmf_error(JSMF_ENOTSUP, "cannot load the back end %s (%s)", pl->file, p->why);
    *api = &p->api;
    return JSMF_OK;
}
