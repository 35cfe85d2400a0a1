/* cmd_vocab.c — 'jsmf vocab': one counting pass over the inputs, curation, and the vocabulary
 * file (formats/vocab.md) written to a file or stdout. */
#include <inttypes.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "jsmf_io.h"

static void usage(FILE *f)
{
    fprintf(f,
        "usage: jsmf vocab INPUT... -o VOCAB [options]\n"
        "\n"
        "Count words in one streaming pass and write a curated vocabulary: one line per\n"
        "word, word<TAB>df<TAB>tf, by document frequency descending (ties by word).\n"
        "INPUT is a file or '-' (stdin), plain or zstd-compressed (detected from\n"
        "content). VOCAB '-' is stdout.\n"
        "\n"
        "options:\n"
        "  -o, --output VOCAB  where to write the vocabulary (required)\n"
        "  --format F          text|uci|ldac|auto (default auto: sniffed from content)\n"
        "  --uci-vocab FILE    UCI: the vocabulary of the docword file (default\n"
        "                      vocab.X.txt beside docword.X.txt); LDA-C: names of ids\n"
        "  --stopwords S       en (built-in English list, default), none, or a FILE\n"
        "  --min-df N          keep words in at least N counted documents (default 5)\n"
        "  --max-df-frac F     drop words in more than F of the counted documents\n"
        "                      (default 0.5)\n"
        "  --max-words N       keep the N words of highest document frequency\n"
        "                      (default: all)\n"
        "  --min-doc-len N     count only documents with >= N tokens after stopwords\n"
        "                      (default 5)\n"
        "  --min-word-len N    text: shortest token in bytes (default 3)\n"
        "  --max-word-len N    text: longest token in bytes (default 64)\n"
        "  --threads N         threads (default: OpenMP's): 2 or more decode zstd files\n"
        "                      on a thread of their own; 3 or more also tokenise and\n"
        "                      count text on N threads. The result does not depend on N\n"
        "  -q, --quiet         no progress or summary\n"
        "  --progress, --no-progress   force the progress line on or off\n"
        "\n"
        "Why --max-words ranks by document frequency: a word's row of the co-occurrence\n"
        "matrix is estimated from the documents it occurs in, so its df, not a tf-idf\n"
        "score, bounds the noise of that row; the rarest rows are the noisiest and are\n"
        "the ones dropped.\n");
}

typedef struct vocab_args {
    const char **inputs;
    int ninputs;
    const char *output, *stopwords, *input_vocab;
    jsmf_read_opts ro;
    jsmf_vocab_opts vo;
} vocab_args;

/* Returns -1 to go on, or an exit status. */
static int parse_args(int argc, char **argv, vocab_args *a)
{
    jsmf_read_opts ro = JSMF_READ_OPTS_DEFAULT;
    jsmf_vocab_opts vo = JSMF_VOCAB_OPTS_DEFAULT;
    a->ro = ro, a->vo = vo;
    a->stopwords = "en";
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i], *v;
        int err = 0;
        uint32_t u32;
        if (!strcmp(arg, "--help") || !strcmp(arg, "-h")) {
            usage(stdout);
            return cli_finish_stdout();
        }
        if (cli_common_option(arg))
            continue;
        if ((v = cli_opt_value(argc, argv, &i, "--output", "-o", &err))) {
            a->output = v;
        } else if (!err && (v = cli_opt_value(argc, argv, &i, "--format", NULL, &err))) {
            int f = jsmf_format_parse(v);
            if (f < 0)
                return cli_usage_error("--format must be text, uci, ldac or auto, not '%s'", v);
            a->ro.format = (jsmf_format)f;
        } else if (!err &&
                   (v = cli_opt_value(argc, argv, &i, "--uci-vocab", "--input-vocab", &err))) {
            a->input_vocab = v;
        } else if (!err && (v = cli_opt_value(argc, argv, &i, "--stopwords", NULL, &err))) {
            a->stopwords = v;
        } else if (!err && (v = cli_opt_value(argc, argv, &i, "--min-df", NULL, &err))) {
            if ((err = cli_parse_u64(arg, v, &a->vo.min_df)))
                return err;
        } else if (!err && (v = cli_opt_value(argc, argv, &i, "--max-df-frac", NULL, &err))) {
            if ((err = cli_parse_double(arg, v, &a->vo.max_df_frac)))
                return err;
            if (a->vo.max_df_frac <= 0)
                return cli_usage_error("--max-df-frac must be > 0 (1 keeps every word)");
        } else if (!err && (v = cli_opt_value(argc, argv, &i, "--max-words", NULL, &err))) {
            if ((err = cli_parse_u32(arg, v, &a->vo.max_words)))
                return err;
        } else if (!err && (v = cli_opt_value(argc, argv, &i, "--min-doc-len", NULL, &err))) {
            if ((err = cli_parse_u32(arg, v, &a->vo.min_doc_len)))
                return err;
        } else if (!err && (v = cli_opt_value(argc, argv, &i, "--min-word-len", NULL, &err))) {
            if ((err = cli_parse_u32(arg, v, &u32)))
                return err;
            if (u32 == 0)
                return cli_usage_error("--min-word-len must be at least 1");
            a->ro.tok.min_len = u32;
        } else if (!err && (v = cli_opt_value(argc, argv, &i, "--max-word-len", NULL, &err))) {
            if ((err = cli_parse_u32(arg, v, &u32)))
                return err;
            a->ro.tok.max_len = u32;
        } else if (!err && (v = cli_opt_value(argc, argv, &i, "--threads", NULL, &err))) {
            if ((err = cli_parse_u32(arg, v, &u32)))
                return err;
            if (u32 == 0)
                return cli_usage_error("--threads must be at least 1");
            omp_set_num_threads((int)u32);
        } else if (err) {
            return err;
        } else if (arg[0] == '-' && arg[1]) {
            return cli_usage_error("unknown option '%s'", arg);
        } else {
            a->inputs[a->ninputs++] = arg;
        }
    }
    if (a->ninputs == 0)
        return cli_usage_error("no INPUT given");
    if (!a->output)
        return cli_usage_error("no output given (-o VOCAB, or -o - for stdout)");
    if (a->ro.tok.max_len < a->ro.tok.min_len)
        return cli_usage_error("--max-word-len is below --min-word-len");
    int stdin_uses = 0;
    for (int i = 0; i < a->ninputs; i++)
        stdin_uses += !strcmp(a->inputs[i], "-");
    if (stdin_uses > 1)
        return cli_usage_error("'-' (stdin) can be given only once");
    a->ro.uci_vocab = a->input_vocab;
    return -1;
}

static int load_stopwords(const char *spec, jsmf_vocab **out)
{
    *out = NULL;
    if (!strcmp(spec, "none"))
        return JSMF_OK;
    if (!strcmp(spec, "en"))
        return jsmf_stopwords_en(out);
    return jsmf_vocab_read(spec, out);
}

static void on_progress(void *arg, uint64_t done, uint64_t total)
{
    const char *name = arg;
    if (total)
        cli_progress_update(name, (double)done / 1048576.0, (double)total / 1048576.0, "MB");
    else
        cli_progress_update(name, (double)done / 1048576.0, 0, "MB");
}

int cmd_vocab(int argc, char **argv)
{
    vocab_args a;
    memset(&a, 0, sizeof a);
    a.inputs = calloc((size_t)argc, sizeof *a.inputs);
    if (!a.inputs)
        return cli_fail(jsmf_error(JSMF_ENOMEM, "out of memory"));
    int rc = parse_args(argc, argv, &a);
    if (rc >= 0) {
        free(a.inputs);
        return rc;
    }
    jsmf_vocab *stop = NULL, *vocab = NULL;
    jsmf_vocab_counter *c = NULL;
    jsmf_vocab_stats st;
    int status = EXIT_OK;
    if ((rc = load_stopwords(a.stopwords, &stop)))
        goto fail;
    a.vo.stopwords = stop;
    a.vo.warn = cli_warn;
    if ((rc = jsmf_vocab_counter_new(&a.vo, &c)))
        goto fail;
    for (int i = 0; i < a.ninputs; i++) {
        const char *name = strcmp(a.inputs[i], "-") ? a.inputs[i] : "<stdin>";
        const char *base = strrchr(name, '/');
        if ((rc = jsmf_vocab_counter_add(c, a.inputs[i], &a.ro, on_progress,
                                         (void *)(base ? base + 1 : name))))
            goto fail;
    }
    cli_progress_done();
    if ((rc = jsmf_vocab_counter_finish(c, &vocab, &st)))
        goto fail;
    if (st.words_kept == 0) { /* ingest refuses an empty vocabulary: write none */
        rc = jsmf_error(JSMF_EFORMAT, "no words kept: %" PRIu64 " documents read, %" PRIu64
                        " counted, %" PRIu64 " distinct words, %" PRIu64 " below --min-df %" PRIu64
                        ", %" PRIu64 " above --max-df-frac %g; %s%s written", st.docs_read,
                        st.docs_counted, st.words_seen, st.dropped_min_df, a.vo.min_df,
                        st.dropped_max_df, a.vo.max_df_frac,
                        strcmp(a.output, "-") ? a.output : "nothing",
                        strcmp(a.output, "-") ? " not" : "");
        goto fail;
    }
    if ((rc = jsmf_vocab_write(a.output, vocab)))
        goto fail;
    if (!strcmp(a.output, "-"))
        status = cli_finish_stdout();
    cli_info("%" PRIu64 " documents read, %" PRIu64 " counted, %" PRIu64
             " too short; %" PRIu64 " tokens read, %" PRIu64 " counted",
             st.docs_read, st.docs_counted, st.docs_short, st.tokens_read, st.tokens_counted);
    cli_info("%" PRIu64 " distinct words; dropped %" PRIu64 " below min-df, %" PRIu64
             " above max-df-frac, %" PRIu64 " beyond max-words; kept %" PRIu64,
             st.words_seen, st.dropped_min_df, st.dropped_max_df, st.dropped_max_words,
             st.words_kept);
    goto done;
fail:
    cli_progress_done();
    status = cli_fail(rc);
done:
    jsmf_vocab_free(vocab);
    jsmf_vocab_free(stop);
    jsmf_vocab_counter_free(c);
    free(a.inputs);
    return status;
}
