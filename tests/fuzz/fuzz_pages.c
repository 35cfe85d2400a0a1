/* fuzz_pages.c — libFuzzer target: a whole store's data.mdb as bytes (formats/store.md,
 * "Checksums"). info --check's walk of the file (src/store/pages.c) must survive any file;
 * where it finds LMDB's structure whole, LMDB is let at the file: the damage scan (every value
 * against its checksum), opening the store, its vocabulary and the full check of C and the
 * documents must then neither crash nor read outside the file. A crash there is a walk that
 * called a file whole that LMDB cannot read. */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz_util.h"
#include "jsmf_store.h"
#include "../../src/store/pages.h"

static void write_file(const char *path, const uint8_t *data, size_t size)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    FUZZ_CHECK(fd >= 0);
    FUZZ_CHECK(size == 0 || write(fd, data, size) == (ssize_t)size);
    close(fd);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static char dir[64], path[96];
    if (!*dir) {
        snprintf(dir, sizeof dir, "/tmp/jsmf-fuzz-pages-%d", (int)getpid());
        FUZZ_CHECK(mkdir(dir, 0755) == 0 || errno == EEXIST);
        snprintf(path, sizeof path, "%s/data.mdb", dir);
    }
    write_file(path, data, size);
    page_walk_result w;
    if (store_pages_walk(path, NULL, NULL, &w) == 0 && w.damage == 0) {
        uint64_t found = 0;
        int checked;
        if (jsmf_store_damage_scan(dir, NULL, NULL, &found, &checked) == JSMF_OK && !found) {
            jsmf_store *s;
            if (jsmf_store_open(dir, JSMF_STORE_RDONLY, &s) == JSMF_OK) {
                jsmf_vocab *v;
                jsmf_store_check_result r;
                if (jsmf_store_vocab_get(s, &v) == JSMF_OK)
                    jsmf_vocab_free(v);
                (void)jsmf_store_check(s, &r);
                jsmf_store_close(s);
            }
        }
    }
    jsmf_error_clear();
    return 0;
}
