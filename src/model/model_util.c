/* model_util.c — making a written file or directory of a model durable (fsync) before the
 * rename that publishes it. */
#include "model_util.h"

#include <fcntl.h>
#include <string.h>
#include <unistd.h>

int model_fsync_path(const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return jsmf_error(JSMF_EIO, "%s: cannot open to sync: %s", path, strerror(errno));
    int rc = fsync(fd);
    int err = errno;
    close(fd);
    /* Some file systems cannot fsync a directory; that is not a failure of ours. */
    if (rc && err != EINVAL && err != EROFS)
        return jsmf_error(model_write_errcode(err), "%s: fsync: %s", path, strerror(err));
    return JSMF_OK;
}
