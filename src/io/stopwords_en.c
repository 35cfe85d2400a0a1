/* stopwords_en.c — the English stopword list compiled into jsmf (`--stopwords en`): function
 * words, auxiliaries, pronouns and a few archaic forms (thee, thou, unto) that carry no topic.
 * Written for jsmf; 341 words, lowercase ASCII, sorted. Also the list a --stopwords value names. */
#include "jsmf_io.h"

#include <stdlib.h>
#include <string.h>

#include "stopwords_en.h"

static const char *const english[] = {
    "a", "able", "about", "above", "according", "across", "actually", "after", "afterwards",
    "again", "against", "ago", "ahead", "all", "almost", "alone", "along", "already", "also",
    "although", "always", "am", "among", "amongst", "an", "and", "another", "any", "anyhow",
    "anyone", "anything", "anyway", "anywhere", "are", "aren", "around", "as", "at", "back", "be",
    "became", "because", "become", "becomes", "becoming", "been", "before", "beforehand", "began",
    "begin", "beginning", "behind", "being", "believe", "below", "beside", "besides", "best",
    "better", "between", "beyond", "big", "both", "but", "by", "came", "can", "cannot", "come",
    "comes", "coming", "considering", "could", "couldn", "did", "didn", "do", "does", "doesn",
    "doing", "don", "done", "doth", "down", "due", "during", "each", "either", "else", "elsewhere",
    "enough", "etc", "even", "ever", "every", "everyone", "everything", "everywhere", "except",
    "few", "first", "for", "former", "formerly", "from", "further", "furthermore", "get", "gets",
    "getting", "give", "given", "gives", "go", "goes", "going", "gone", "got", "had", "hadn",
    "has", "hasn", "hath", "have", "haven", "having", "he", "hence", "her", "here", "hereafter",
    "hereby", "herein", "hers", "herself", "him", "himself", "his", "how", "however", "i", "ie",
    "if", "in", "indeed", "instead", "into", "is", "isn", "it", "its", "itself", "just", "last",
    "later", "latter", "least", "less", "let", "like", "likely", "made", "make", "makes", "many",
    "may", "maybe", "me", "meanwhile", "might", "mine", "more", "moreover", "most", "mostly",
    "much", "must", "my", "myself", "namely", "near", "need", "neither", "never", "nevertheless",
    "new", "next", "no", "nobody", "none", "noone", "nor", "not", "nothing", "now", "nowhere",
    "of", "off", "often", "on", "once", "one", "only", "onto", "or", "other", "others",
    "otherwise", "our", "ours", "ourselves", "out", "over", "own", "per", "perhaps", "please",
    "put", "quite", "rather", "re", "really", "said", "same", "say", "says", "see", "seem",
    "seemed", "seeming", "seems", "several", "shall", "shalt", "she", "should", "shouldn", "show",
    "since", "so", "some", "somehow", "someone", "something", "sometime", "sometimes", "somewhere",
    "still", "such", "take", "than", "that", "the", "thee", "their", "theirs", "them",
    "themselves", "then", "thence", "there", "thereafter", "thereby", "therefore", "therein",
    "thereupon", "these", "they", "thine", "thing", "things", "this", "those", "thou", "though",
    "through", "throughout", "thru", "thus", "thy", "to", "together", "too", "toward", "towards",
    "under", "until", "unto", "up", "upon", "us", "use", "used", "uses", "using", "usually",
    "very", "via", "was", "wasn", "way", "we", "well", "were", "weren", "what", "whatever", "when",
    "whence", "whenever", "where", "whereafter", "whereas", "whereby", "wherein", "whereupon",
    "wherever", "whether", "which", "while", "whither", "who", "whoever", "whole", "whom", "whose",
    "why", "will", "with", "within", "without", "won", "would", "wouldn", "ye", "yet", "you",
    "your", "yours", "yourself", "yourselves",
};

int stopwords_en(jsmf_vocab **out)
{
    size_t n = sizeof english / sizeof english[0];
    jsmf_vocab *v = calloc(1, sizeof *v);
    if (v)
        v->words = calloc(n, sizeof *v->words);
    if (!v || !v->words) {
        free(v);
        return jsmf_error(JSMF_ENOMEM, "out of memory");
    }
    for (size_t i = 0; i < n; i++) {
        v->words[i] = strdup(english[i]);
        if (!v->words[i]) {
            jsmf_vocab_free(v);
            return jsmf_error(JSMF_ENOMEM, "out of memory");
        }
        v->n = (uint32_t)(i + 1);
    }
    *out = v;
    return JSMF_OK;
}

int jsmf_stopwords_load(const char *spec, jsmf_vocab **out)
{
    *out = NULL;
    if (!strcmp(spec, "none"))
        return JSMF_OK;
    if (!strcmp(spec, "en"))
        return stopwords_en(out);
    return jsmf_vocab_load(spec, out);
}
