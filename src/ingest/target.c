/* target.c — the store a first ingest creates: what existed before it, and removing what it
 * made when it fails before anything could be resumed (a failed first ingest leaves no trace). */
#include "jsmf_ingest.h"

#include <sys/stat.h>
#include <unistd.h>

#include "ingest_internal.h"
#include "store/store.h"

void ingest_target_note(const char *path, jsmf_ingest_target *t)
{
    struct stat st;
    t->existed[0] = stat(path, &st) == 0;
    store_files_exist(path, t->existed + 1);
}

int ingest_target_discard(const char *path, const jsmf_ingest_target *t, jsmf_store *s)
{
    jsmf_store_stats st;
    /* a data file that existed is a store (or something) of someone's: never touched; without
     * an open store (and its writer lock) the files may be another writer's: only an empty
     * directory of ours goes */
    int remove = s && !t->existed[1] &&
                 (!store_has_vocab(s) ||
                  (jsmf_store_stats_get(s, &st) == 0 && st.n_inputs == 0));
    if (remove) {
        /* unlinked while the writer lock is still held, so no other writer can be using them */
        store_files_remove(path, t->existed + 1, 0);
    }
    jsmf_store_close(s);
    if ((remove || !s) && !t->existed[0] && rmdir(path) == 0) /* only if empty */
        remove = 1;
    return remove;
}
