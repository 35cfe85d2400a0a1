/* model_util.h — helpers shared by the model directory files (npy, json, model): mapping errno
 * to jsmf codes and making written files durable before they are renamed into place. */
#ifndef JSMF_MODEL_UTIL_H
#define JSMF_MODEL_UTIL_H

#include <errno.h>

#include "jsmf.h"

/* A write-side errno as a jsmf code: a full disk or quota is JSMF_ENOSPC, the rest JSMF_EIO. */
static inline int model_write_errcode(int err)
{
    return (err == ENOSPC || err == EDQUOT) ? JSMF_ENOSPC : JSMF_EIO;
}

/* fsync a file or directory by path (durability before the rename that publishes it). */
int model_fsync_path(const char *path);

#endif
