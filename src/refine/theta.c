/* theta.c — the documents' thetas (M x K doubles): in memory, or beyond the refinement's budget
 * in a scratch file, unlinked as soon as it is made and mapped shared, whose pages are given
 * back to the page cache as a sweep over the documents passes them; the kernel writes them out
 * only under memory pressure, and the next pass reads them back in order. The arithmetic is the
 * same either way, so are the bits. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "refine_internal.h"
#include "core/error.h"

static const char *scratch_dir(const jsmf_refine_opts *o)
{
    const char *t = getenv("TMPDIR");
    return o->scratch_dir && *o->scratch_dir ? o->scratch_dir : t && *t ? t : "/var/tmp";
}

/* An unlinked file of `bytes` in dir, its blocks reserved (a full disk fails here, not as a
 * SIGBUS in the middle of a pass), mapped. */
static int map_scratch(refine_state *s, const char *dir, uint64_t bytes)
{
    struct statvfs vs;
    if (!statvfs(dir, &vs) && (double)vs.f_bavail * vs.f_frsize < (double)bytes)
        return jsmf_error(JSMF_EIO, "refine: the thetas need %.0f MiB in %s (scratch), %.0f MiB "
                          "are free: give the refinement more --mem or free room there",
                          bytes / 1048576.0, dir, (double)vs.f_bavail * vs.f_frsize / 1048576.0);
    char path[4096];
    if ((size_t)snprintf(path, sizeof path, "%s/jsmf-theta-XXXXXX", dir) >= sizeof path)
        return jsmf_error(JSMF_EINVAL, "refine: scratch directory name too long: %s", dir);
    int fd = mkstemp(path);
    if (fd < 0)
        return jsmf_error(JSMF_EIO, "refine: cannot make the thetas' scratch file in %s: %s", dir,
                          strerror(errno));
    unlink(path);
    int e = posix_fallocate(fd, 0, (off_t)bytes);
    if (e) {
        close(fd);
        return jsmf_error(JSMF_EIO, "refine: cannot reserve %.0f MiB for the thetas in %s: %s",
                          bytes / 1048576.0, dir, strerror(e));
    }
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) {
        close(fd);
        return jsmf_error(JSMF_EIO, "refine: cannot map the thetas' scratch file in %s: %s", dir,
                          strerror(errno));
    }
    madvise(p, bytes, MADV_SEQUENTIAL);
    s->theta = p, s->theta_fd = fd, s->theta_released = 0;
    return JSMF_OK;
}

int refine_theta_open(refine_state *s, uint64_t held)
{
    uint64_t bytes = s->docs * s->k * sizeof(double);
    uint64_t mem = s->o->mem_bytes;
    s->theta_fd = -1;
    /* tests: the scratch file whatever the budget (the same bits as in memory) */
    const char *force = getenv("JSMF_TEST_THETA_FILE");
    if (force && *force == '1' && bytes)
        return map_scratch(s, scratch_dir(s->o), bytes);
    if (!mem || held + bytes <= mem) {
        s->theta = malloc(bytes ? bytes : 1);
        return s->theta ? JSMF_OK
                        : jsmf_error(JSMF_ENOMEM, "refine: out of memory for %llu documents x "
                                     "%u topics", (unsigned long long)s->docs, s->k);
    }
    if (held + refine_theta_window(bytes) > mem)
        return jsmf_error(JSMF_ENOMEM, "refine: needs %llu MiB besides the thetas (%u threads' "
                          "%u x %u counts), more than --mem %lluM: give --mem %lluM, or fewer "
                          "topics", (unsigned long long)((held + REFINE_THETA_WINDOW) >> 20),
                          s->nt, s->n, s->k, (unsigned long long)(mem >> 20),
                          (unsigned long long)((held + REFINE_THETA_WINDOW) >> 20) + 1);
    return map_scratch(s, scratch_dir(s->o), bytes);
}

uint64_t refine_theta_window(uint64_t theta_bytes)
{
    return theta_bytes < REFINE_THETA_WINDOW ? theta_bytes : REFINE_THETA_WINDOW;
}

void refine_theta_sweep(refine_state *s, uint64_t doc)
{
    if (s->theta_fd < 0)
        return;
    if (!doc) {
        s->theta_released = 0;
        return;
    }
    uint64_t at = doc * s->k * sizeof(double);
    if (at < s->theta_released + REFINE_THETA_WINDOW / 2) /* every document asks: cheap */
        return;
    const uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
    uint64_t upto = at / page * page;
    /* dirty pages of a shared map stay in the page cache: dropping them from the process
     * keeps its resident size to the window */
    madvise((char *)s->theta + s->theta_released, upto - s->theta_released, MADV_DONTNEED);
    s->theta_released = upto;
}

void refine_theta_close(refine_state *s)
{
    if (s->theta_fd >= 0) {
        munmap(s->theta, s->docs * s->k * sizeof(double));
        close(s->theta_fd);
    } else {
        free(s->theta);
    }
    s->theta = NULL, s->theta_fd = -1;
}
