/* stopwords_en.h — the English stopword list compiled in (src/io/stopwords_en.c). */
#ifndef JSMF_IO_STOPWORDS_EN_H
#define JSMF_IO_STOPWORDS_EN_H

#include "jsmf_io.h"

/** The English stopword list compiled into jsmf (`--stopwords en`, ~340 words). */
int stopwords_en(jsmf_vocab **out);

#endif
