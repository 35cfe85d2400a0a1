#!/usr/bin/python3
"""e2e_gensim.py — the gensim half of tools/bench/e2e, and the scorer of both halves.

  e2e_gensim.py train CORPUS VOCAB K PASSES OUTDIR   LdaMulticore (1 worker) on CORPUS's documents
                                                     restricted to VOCAB (what jsmf ingests);
                                                     writes OUTDIR as a MODEL directory `jsmf
                                                     eval` reads (B.npy, vocab.txt, a flat A),
                                                     prints seconds
  e2e_gensim.py score CORPUS VOCAB MODEL[:RANK]...   u_mass and c_v (top 10, gensim's
                                                     CoherenceModel) and distinct top-10 words of
                                                     each model directory (B.npy + vocab.txt).
                                                     RANK: prob (by p(w|z), the default) or
                                                     relevance (lambda 0.7, p(w) the corpus
                                                     unigram); MODEL:jsmf scores the words that
                                                     `jsmf topics MODEL` prints (env JSMF)

Documents are the corpus lines (already tokenised: lowercase words separated by spaces, as jsmf's
tokenizer sees them) with out-of-vocabulary tokens removed; documents left with fewer than 5
tokens are dropped, as `jsmf ingest` drops them (--min-doc-len 5). Both models are scored on the
same documents with the same dictionary.
"""
import json
import os
import subprocess
import sys
import time

import numpy as np


def read_docs(corpus, vocab_path, min_len=5):
    vocab = [l.split("\t")[0].rstrip("\n") for l in open(vocab_path, encoding="utf-8")
             if not l.startswith("#") and l.strip()]
    keep = set(vocab)
    text = subprocess.run(["zstd", "-dcq", corpus] if corpus.endswith(".zst") else ["cat", corpus],
                          check=True, capture_output=True).stdout.decode("utf-8", "replace")
    docs = []
    for line in text.split("\n"):
        toks = [t for t in line.split() if t in keep]
        if len(toks) >= min_len:
            docs.append(toks)
    return vocab, docs


def read_words(path):
    return [l.split("\t")[0].rstrip("\n") for l in open(path, encoding="utf-8")
            if not l.startswith("#") and l.strip()]


def top_words(model_dir, rank, unigram, n=10):
    """Top n words of every topic: by p(w|z), by relevance 0.7 with the corpus unigram, or as
    `jsmf topics` prints them."""
    if rank == "jsmf":
        out = subprocess.run([os.environ.get("JSMF", "build/jsmf"), "topics", model_dir,
                              "--format", "tsv", "--top", str(n)], check=True,
                             capture_output=True, text=True).stdout
        return [line.split("\t")[4].split() for line in out.splitlines()[1:]]
    B = np.load(os.path.join(model_dir, "B.npy"))
    words = read_words(os.path.join(model_dir, "vocab.txt"))
    if rank == "relevance":
        pw = np.array([unigram.get(w, 0.0) for w in words])
        with np.errstate(divide="ignore", invalid="ignore"):
            R = np.where((B > 0) & (pw[:, None] > 0), np.log(B) - 0.3 * np.log(pw[:, None]),
                         -np.inf)
    else:
        R = B
    return [[words[i] for i in np.argsort(-R[:, k], kind="stable")[:n]] for k in range(B.shape[1])]


def train(corpus, vocab_path, k, passes, outdir):
    from gensim.corpora import Dictionary
    from gensim.models import LdaMulticore
    t0 = time.time()
    vocab, docs = read_docs(corpus, vocab_path)
    t_read = time.time() - t0
    t1 = time.time()
    dic = Dictionary(docs)
    bow = [dic.doc2bow(d) for d in docs]
    workers = int(os.environ.get("GENSIM_WORKERS", "1"))  # tools/bench/heldout: all cores
    lda = LdaMulticore(bow, id2word=dic, num_topics=k, workers=workers, passes=passes,
                       random_state=1)
    t_train = time.time() - t1
    topics = lda.get_topics().astype("<f8")         # K x V, rows sum to 1
    topics /= topics.sum(1, keepdims=True)
    os.makedirs(outdir, exist_ok=True)
    # a MODEL directory `jsmf eval` reads (formats/model.md): B, vocab, a flat A, summary
    np.save(os.path.join(outdir, "B.npy"), np.ascontiguousarray(topics.T))
    np.save(os.path.join(outdir, "A.npy"), np.full((k, k), 1.0 / (k * k)))
    with open(os.path.join(outdir, "summary.json"), "w") as f:
        json.dump({"format": "jsmf-model", "version": 1, "kind": "gensim-lda", "k": k,
                   "n_words": len(dic)}, f)
    with open(os.path.join(outdir, "vocab.txt"), "w", encoding="utf-8") as f:
        for i in range(len(dic)):
            f.write(dic[i] + "\n")
    print(json.dumps({"read_s": t_read, "train_s": t_train, "docs": len(docs)}))


def score(corpus, vocab_path, models):
    from gensim.corpora import Dictionary
    from gensim.models import CoherenceModel
    _, docs = read_docs(corpus, vocab_path)
    dic = Dictionary(docs)
    bow = [dic.doc2bow(d) for d in docs]
    total = sum(len(d) for d in docs)
    unigram = {dic[i]: c / total for i, c in dic.cfs.items()}
    out = {}
    for spec in models:
        m, _, rank = spec.partition(":")
        tops = [[w for w in t if w in dic.token2id] for t in top_words(m, rank or "prob", unigram)]
        cv = CoherenceModel(topics=tops, texts=docs, dictionary=dic, coherence="c_v", topn=10,
                            processes=1).get_coherence()
        um = CoherenceModel(topics=tops, corpus=bow, dictionary=dic, coherence="u_mass",
                            topn=10).get_coherence()
        distinct = len({w for t in tops for w in t})
        out[spec] = {"c_v": cv, "u_mass": um, "distinct_top10": distinct,
                     "top10_words": sum(len(t) for t in tops)}
    print(json.dumps(out))


if __name__ == "__main__":
    if len(sys.argv) >= 7 and sys.argv[1] == "train":
        train(sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5]), sys.argv[6])
    elif len(sys.argv) >= 5 and sys.argv[1] == "score":
        score(sys.argv[2], sys.argv[3], sys.argv[4:])
    else:
        sys.exit(__doc__)
