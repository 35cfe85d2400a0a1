/* durable.c — whole-or-nothing files: write errors named (a full disk or quota), fsync, and a
 * temporary renamed over its target only once all of it is on disk. */
#include "core/durable.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "jsmf.h"

int durable_errcode(int err)
{
    return err == ENOSPC || err == EDQUOT ? JSMF_ENOSPC : JSMF_EIO;
}

int durable_sync_path(const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return jsmf_error(JSMF_EIO, "%s: cannot open to sync: %s", path, strerror(errno));
    int rc = fsync(fd);
    int err = errno;
    close(fd);
    /* Some file systems cannot fsync a directory; that is not a failure of ours. */
    if (rc && err != EINVAL && err != EROFS)
        return jsmf_error(durable_errcode(err), "%s: fsync: %s", path, strerror(err));
    return JSMF_OK;
}

void durable_sync_parent(const char *path)
{
    char dir[4096];
    const char *slash = strrchr(path, '/');
    if (!slash)
        snprintf(dir, sizeof dir, ".");
    else if (slash == path)
        snprintf(dir, sizeof dir, "/");
    else
        snprintf(dir, sizeof dir, "%.*s", (int)(slash - path), path);
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return;
    (void)fsync(fd);
    close(fd);
}

int durable_publish(FILE *f, int err, const char *tmp, const char *path, const char *what)
{
    errno = 0;
    if (!err && fflush(f))
        err = errno ? errno : EIO;
    if (!err && fsync(fileno(f)))
        err = errno;
    if (fclose(f) && !err)
        err = errno ? errno : EIO;
    if (!err && rename(tmp, path))
        err = errno;
    if (err) {
        unlink(tmp);
        return jsmf_error(durable_errcode(err), "writing %s %s: %s", what, path, strerror(err));
    }
    durable_sync_parent(path);
    return JSMF_OK;
}
