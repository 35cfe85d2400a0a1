/* plugin.h — where jsmf looks for a back-end plugin it dlopen()s (libjsmf_cuda.so,
 * libjsmf_mpi.so): one search order for all of them. */
#ifndef JSMF_PLUGIN_H
#define JSMF_PLUGIN_H

/* Try `try_path` on: the path in environment variable `env` alone when it is set; else `name`
 * beside the program and one level up (build/tests -> build), then `build` and `install`
 * (either may be NULL), then `name` as the dynamic linker finds it. Returns the first non-zero
 * result of try_path, or 0. */
int plugin_find(const char *env, const char *name, const char *build, const char *install,
                int (*try_path)(void *arg, const char *path), void *arg);

#endif
