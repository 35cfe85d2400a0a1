/* plugin.c — the search order of back-end plugins (plugin.h). */
#include "plugin.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int plugin_find(const char *env, const char *name, const char *build, const char *install,
                int (*try_path)(void *arg, const char *path), void *arg)
{
    const char *given = getenv(env);
    if (given && *given)
        return try_path(arg, given);
    char exe[PATH_MAX], path[PATH_MAX + 64];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    int got = 0;
    if (n > 0) {
        exe[n] = 0;
        char *slash = strrchr(exe, '/');
        if (slash) {
            *slash = 0;
            snprintf(path, sizeof path, "%s/%s", exe, name);
            if ((got = try_path(arg, path)))
                return got;
            snprintf(path, sizeof path, "%s/../%s", exe, name);
            if ((got = try_path(arg, path)))
                return got;
        }
    }
    if (build && (got = try_path(arg, build)))
        return got;
    if (install && (got = try_path(arg, install)))
        return got;
    return try_path(arg, name);
}
