/* store.h — a store's vocabulary set once after its creation (src/store/store.c), for
 * ingest's store opening. */
#ifndef JSMF_STORE_STORE_H
#define JSMF_STORE_STORE_H

#include "jsmf_store.h"

/** Set the vocabulary and parameters of a store just created with JSMF_STORE_CREATE (the store
 *  must be empty; one transaction). JSMF_EEXIST if it already has a vocabulary. `rule` (NULL:
 *  none) and its stopwords go into the same transaction: a store killed at any point of its
 *  creation has either nothing or its vocabulary with its rule, so the same command again
 *  makes the store an uninterrupted run makes. */
int store_init(jsmf_store *s, const jsmf_vocab *v, const jsmf_store_params *p,
               const jsmf_store_rule *rule, const jsmf_vocab *stop);

/** jsmf_store_create with the growth rule written in the store's first transaction. */
int store_create_ruled(const char *path, const jsmf_vocab *v, const jsmf_store_params *p,
                       const jsmf_store_rule *rule, const jsmf_vocab *stop, jsmf_store **out);

/** 1 when the store has a vocabulary (was initialised), 0 when it was just created. */
int store_has_vocab(jsmf_store *s);

#endif
