/* hash.h — content fingerprints of inputs, whole files or streamed (src/io/hash.c). */
#ifndef JSMF_IO_HASH_H
#define JSMF_IO_HASH_H

#include "jsmf_io.h"

/** Content fingerprint of a file: a 64-bit hash of its bytes as stored (compressed or not) and
 *  its size. For "-" returns JSMF_ENOTSUP (a stream can be hashed only while it is read). */
int fingerprint_file(const char *path, uint64_t *hash, uint64_t *size);

/** Streaming form of the same hash, for stdin: init, update with consecutive chunks, final. */
typedef struct jsmf_hash { uint64_t state[4]; uint64_t total; unsigned char buf[32]; uint32_t nbuf; } jsmf_hash;
void hash_init(jsmf_hash *h);
void hash_update(jsmf_hash *h, const void *data, size_t len);
uint64_t hash_final(const jsmf_hash *h);

#endif
