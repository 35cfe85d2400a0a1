/* store.h — a store's vocabulary set once after its creation (src/store/store.c), for
 * ingest's store opening. */
#ifndef JSMF_STORE_STORE_H
#define JSMF_STORE_STORE_H

#include "jsmf_store.h"

/** Set the vocabulary and parameters of a store just created with JSMF_STORE_CREATE (the store
 *  must be empty; one transaction). JSMF_EEXIST if it already has a vocabulary. */
int store_init(jsmf_store *s, const jsmf_vocab *v, const jsmf_store_params *p);

/** 1 when the store has a vocabulary (was initialised), 0 when it was just created. */
int store_has_vocab(jsmf_store *s);

#endif
