/* copy.c — jsmf copy: a store as of one committed checkpoint, compacted by LMDB inside one read
 * transaction (an ingest writing the store goes on), into a new directory that is renamed into
 * place only once it is synced and has passed the store's check; or as a stream on stdout. */
#include "env.h"
#include "files.h"
#include "upgrade.h"

#include "core/durable.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define COPY_PATH_MAX 4096

/* ---- the destination -------------------------------------------------------------------- */

/* DEST without trailing slashes ("backup/" and "backup" are one directory, and the temporary
 * goes beside it, not inside). */
static int dest_name(char *buf, size_t cap, const char *dest)
{
    size_t n = strlen(dest);
    while (n > 1 && dest[n - 1] == '/')
        n--;
    if (n == 0 || n + 16 >= cap)
        return jsmf_error(JSMF_EINVAL, "copy: '%s' is no destination path", dest);
    memcpy(buf, dest, n);
    buf[n] = 0;
    return JSMF_OK;
}

static int dir_is_empty(const char *path)
{
    DIR *d = opendir(path);
    if (!d)
        return 0;
    struct dirent *e;
    int empty = 1;
    while (empty && (e = readdir(d)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
            empty = 0;
    closedir(d);
    return empty;
}

/* A copy never overwrites: DEST must be absent or an empty directory (the rename replaces it). */
static int dest_free(const char *dest)
{
    struct stat st;
    if (lstat(dest, &st) != 0)
        return errno == ENOENT ? JSMF_OK
                               : jsmf_error(JSMF_EIO, "%s: %s", dest, strerror(errno));
    if (S_ISDIR(st.st_mode) && dir_is_empty(dest))
        return JSMF_OK;
    return jsmf_error(JSMF_EEXIST, "%s: already exists; a copy goes to a new path or an empty "
                      "directory, nothing was written", dest);
}

/* DEST.tmp-XXXXXX, made with mkdir so that the umask applies as to any store directory
 * (mkdtemp's 0700 would make the copy private where the store was not). */
static int make_temp_dir(char *tmp, size_t cap, const char *dest)
{
    static const char digits[] = "abcdefghijklmnopqrstuvwxyz0123456789";
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    uint64_t x = (uint64_t)ts.tv_nsec * 0x9E3779B97F4A7C15ull ^ (uint64_t)getpid() << 20;
    for (int attempt = 0; attempt < 100; attempt++) {
        char suffix[7];
        for (int i = 0; i < 6; i++, x /= 36)
            suffix[i] = digits[x % 36];
        suffix[6] = 0;
        x = x * 6364136223846793005ull + 1442695040888963407ull + (uint64_t)attempt;
        snprintf(tmp, cap, "%s.tmp-%s", dest, suffix);
        if (mkdir(tmp, 0755) == 0)
            return JSMF_OK;
        if (errno != EEXIST)
            return jsmf_error(durable_errcode(errno), "%s: cannot create a directory beside it: "
                              "%s", dest, strerror(errno));
    }
    return jsmf_error(JSMF_EIO, "%s: no free temporary name beside it", dest);
}

/* ---- LMDB's copy -------------------------------------------------------------------------- */

/* LMDB's compacting copy of the newest committed checkpoint onto `fd`: it runs in one read
 * transaction, so it takes no lock a writer waits for (the plain copy would hold the writer
 * mutex while it reads the meta pages). A map that a writer grew since the store was opened
 * is refused at the transaction's start, before anything is written: adopt it and go again. */
static int copy_env(jsmf_store *s, int fd, const char *dest)
{
    int rc = mdb_env_copyfd2(s->env, fd, MDB_CP_COMPACT);
    if (rc == MDB_MAP_RESIZED && mdb_env_set_mapsize(s->env, 0) == 0)
        rc = mdb_env_copyfd2(s->env, fd, MDB_CP_COMPACT);
    if (rc > 0) /* an errno: writing the copy */
        return jsmf_error(durable_errcode(rc), "%s: copying to %s: %s", s->path, dest,
                          strerror(rc));
    return rc ? store_lmdb_error(s, rc, "copy") : JSMF_OK;
}

/* The copy in `dir` opened as any reader opens a store, and read whole by jsmf_store_check:
 * what 'jsmf info --check' verifies of a store is what a copy must pass before it is kept. */
static int check_copy(const char *dir, const char *dest, jsmf_store_stats *copied,
                      jsmf_store_check_result *check)
{
    jsmf_store *c = NULL;
    jsmf_store_check_result r;
    memset(&r, 0, sizeof r);
    uint64_t damage;
    int checked;
    int rc = jsmf_store_damage_scan(dir, NULL, NULL, &damage, &checked);
    if (!rc && damage)
        rc = jsmf_error(JSMF_ESTORE, "%s: %llu piece%s of damage (jsmf info --check names them)",
                        dir, (unsigned long long)damage, damage == 1 ? "" : "s");
    if (!rc && !checked)
        rc = jsmf_error(JSMF_ESTORE, "%s: the copy carries no checksums", dir);
    if (!rc)
        rc = jsmf_store_open(dir, JSMF_STORE_RDONLY, &c);
    if (!rc && !(rc = jsmf_store_check(c, &r)) && copied)
        rc = jsmf_store_stats_get(c, copied);
    jsmf_store_close(c);
    if (rc) {
        char why[1024];
        snprintf(why, sizeof why, "%s", jsmf_errmsg_for(rc));
        return jsmf_error(rc, "%s: the copy failed its check and was removed: %s", dest, why);
    }
    if (check)
        *check = r;
    return JSMF_OK;
}

/* Tests (formats/store.md, "Failure injection"): end the process as a kill would, with the
 * copy written and synced but neither checked nor renamed. */
static void test_exit_in_copy(void)
{
    const char *v = getenv("JSMF_TEST_EXIT_IN_COPY");
    if (v && *v && strcmp(v, "0"))
        _exit(95);
}

/* data.mdb of the temporary directory `tmp`: written by LMDB, then fsynced with its directory
 * (LMDB's copy does not sync what it writes). A store of a version without checksums is
 * written again value by value instead, each with its checksum: its copy is a checked store. */
static int write_data_file(jsmf_store *s, const char *tmp, const char *dest)
{
    if (!s->checked) {
        int rc = store_upgrade_copy(s, tmp);
        return rc ? rc : durable_sync_path(tmp);
    }
    char data[COPY_PATH_MAX];
    store_file_path(data, sizeof data, tmp, STORE_FILE_DATA);
    int fd = open(data, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0)
        return jsmf_error(durable_errcode(errno), "%s: cannot create: %s", data, strerror(errno));
    int rc = copy_env(s, fd, dest);
    if (!rc && fsync(fd))
        rc = jsmf_error(durable_errcode(errno), "%s: fsync: %s", data, strerror(errno));
    if (close(fd) && !rc)
        rc = jsmf_error(durable_errcode(errno), "%s: close: %s", data, strerror(errno));
    return rc ? rc : durable_sync_path(tmp);
}

static int copy_to_dir(jsmf_store *s, const char *dest_arg, jsmf_store_stats *copied,
                       jsmf_store_check_result *check)
{
    char dest[COPY_PATH_MAX], tmp[COPY_PATH_MAX + 16]; /* DEST.tmp-XXXXXX */
    int rc = dest_name(dest, sizeof dest, dest_arg);
    if (rc || (rc = dest_free(dest)) || (rc = make_temp_dir(tmp, sizeof tmp, dest)))
        return rc;
    if (!(rc = write_data_file(s, tmp, dest))) {
        test_exit_in_copy();
        rc = check_copy(tmp, dest, copied, check);
    }
    /* rename replaces an empty directory and refuses anything else that appeared meanwhile */
    if (!rc && rename(tmp, dest))
        rc = jsmf_error(errno == ENOTEMPTY || errno == EEXIST || errno == ENOTDIR ? JSMF_EEXIST
                        : durable_errcode(errno), "%s: cannot rename the copy into place: %s",
                        dest, strerror(errno));
    if (rc) {
        store_files_remove(tmp, NULL, 1);
        return rc;
    }
    durable_sync_parent(dest);
    return JSMF_OK;
}

/* The compacted data.mdb on standard output, for a pipe (compression, another machine). Its
 * counters are read just before the copy starts: the stream holds that checkpoint or, when an
 * ingest committed in between, a later one. Only a regular file tells how much was written. */
static int copy_to_stdout(jsmf_store *s, jsmf_store_stats *copied)
{
    jsmf_store_stats st;
    int rc = jsmf_store_stats_get(s, &st);
    if (rc)
        return rc;
    off_t start = lseek(STDOUT_FILENO, 0, SEEK_CUR);
    if ((rc = copy_env(s, STDOUT_FILENO, "standard output")))
        return rc;
    off_t end = lseek(STDOUT_FILENO, 0, SEEK_CUR);
    st.bytes = start >= 0 && end >= start ? (uint64_t)(end - start) : 0;
    if (copied)
        *copied = st;
    return JSMF_OK;
}

int jsmf_store_copy(const char *src, const char *dest, jsmf_store_stats *copied,
                    jsmf_store_check_result *check)
{
    if (copied)
        memset(copied, 0, sizeof *copied);
    if (check)
        memset(check, 0, sizeof *check);
    int to_stdout = !strcmp(dest, "-");
    if (to_stdout && isatty(STDOUT_FILENO))
        return jsmf_error(JSMF_EINVAL, "copy: standard output is a terminal; a store is binary: "
                          "redirect it (jsmf copy %s - > FILE) or give a directory", src);
    jsmf_store *s;
    int rc = jsmf_store_open(src, JSMF_STORE_RDONLY, &s);
    if (rc)
        return rc;
    rc = to_stdout ? copy_to_stdout(s, copied) : copy_to_dir(s, dest, copied, check);
    jsmf_store_close(s);
    return rc;
}
