/* upgrade.h — an older store written again with a checksum on every value (version 7). */
#ifndef JSMF_STORE_UPGRADE_H
#define JSMF_STORE_UPGRADE_H

#include "env.h"

/* Write every database of `src` (an open store of a version without checksums) into a new
 * LMDB environment in the existing, empty directory `dir`, each value with its checksum and
 * meta's version 7: the same store by content (formats/store.md), now checked. One read
 * transaction of src; the copy is written in transactions of a bounded size and synced at the
 * end. */
int store_upgrade_copy(jsmf_store *src, const char *dir);

#endif
