#!/usr/bin/python3
"""heldout_peers.py — the peers of tools/bench/heldout: gensim's LdaMulticore and tomotopy's LDA
trained on the documents jsmf ingests, each written as a MODEL directory `jsmf eval` scores, with
the trace of its own training objective against training time.

  heldout_peers.py gensim TRAIN VOCAB K PASSES THREADS OUTDIR
  heldout_peers.py tomotopy TRAIN VOCAB K ITERS THREADS OUTDIR [--every N] [--lib DIR] [--seed S]

Documents: TRAIN's lines restricted to VOCAB (jsmf vocab's file), those left with fewer than 5
tokens dropped, as `jsmf ingest` does (e2e_gensim.read_docs). The model's rows are VOCAB's words in
VOCAB's order, a word the peer never saw getting probability 0 in every topic (scored at the floor
like any zero), so that every model is scored on the same held-out tokens.

Prints one JSON object: wall_s (reading + building + training, the traces' own evaluations left
out), train_s, docs, trace: [[seconds since the start, objective per word, pass or iteration]].
The objective is each method's own: gensim's variational bound per word on the first 2,000
training documents after each pass (LdaMulticore calls no callbacks, so the pass boundary is the
moment the next pass starts reading the corpus, or the end of training); tomotopy's ll_per_word
(the collapsed Gibbs sampler's log-likelihood of the training tokens) every N iterations (10).
"""
import json
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from e2e_gensim import read_docs  # noqa: E402  (the same documents as tools/bench/e2e)


class Clock:
    """Seconds since the start, with the time spent measuring the trace left out."""

    def __init__(self):
        self.t0, self.paused = time.monotonic(), 0.0

    def now(self):
        return time.monotonic() - self.t0 - self.paused

    def measure(self, fn):
        t = time.monotonic()
        value = fn()
        self.paused += time.monotonic() - t
        return value


def write_model(outdir, kind, words, topic_word, k):
    """topic_word: {word: K probabilities}; rows of B in the order of `words`."""
    B = np.zeros((len(words), k))
    for i, w in enumerate(words):
        if w in topic_word:
            B[i] = topic_word[w]
    B /= B.sum(0, keepdims=True)
    os.makedirs(outdir, exist_ok=True)
    np.save(os.path.join(outdir, "B.npy"), np.ascontiguousarray(B, dtype="<f8"))
    np.save(os.path.join(outdir, "A.npy"), np.full((k, k), 1.0 / (k * k)))
    with open(os.path.join(outdir, "summary.json"), "w") as f:
        json.dump({"format": "jsmf-model", "version": 1, "kind": kind, "k": k,
                   "n_words": len(words)}, f)
    with open(os.path.join(outdir, "vocab.txt"), "w", encoding="utf-8") as f:
        f.write("".join(w + "\n" for w in words))


class PassTracker:
    """The corpus for LdaMulticore: each pass iterates it once; the start of a pass after the
    first marks the end of the previous one, when the bound of the model so far is measured."""

    def __init__(self, bow, sample, tokens, clock):
        self.bow, self.sample, self.tokens, self.clock = bow, sample, tokens, clock
        self.lda, self.passes, self.trace = None, 0, []

    def __len__(self):
        return len(self.bow)

    def record(self):
        t = self.clock.now()
        bound = self.clock.measure(lambda: self.lda.bound(self.sample) / self.tokens)
        self.trace.append([t, bound, self.passes])

    def __iter__(self):
        if self.lda is not None and self.passes > 0:
            self.record()
        self.passes += 1
        return iter(self.bow)


def gensim(train, vocab_path, k, passes, threads, outdir):
    from gensim.corpora import Dictionary
    from gensim.models import LdaMulticore
    clock = Clock()
    words, docs = read_docs(train, vocab_path)
    dic = Dictionary(docs)
    bow = [dic.doc2bow(d) for d in docs]
    sample = bow[:2000]
    corpus = PassTracker(bow, sample, sum(c for d in sample for _, c in d), clock)
    t_train = clock.now()
    # LdaMulticore trains in its constructor; the tracker needs the model from the first pass
    # on, so construct it empty and call update (what the constructor does).
    lda = LdaMulticore(id2word=dic, num_topics=k, workers=threads, passes=passes, random_state=1)
    corpus.lda = lda
    lda.update(corpus)
    corpus.record()
    t_train = clock.now() - t_train
    topics = lda.get_topics().astype("<f8")        # K x V
    write_model(outdir, "gensim-lda", words,
                {dic[i]: topics[:, i] for i in range(len(dic))}, k)
    print(json.dumps({"wall_s": clock.now(), "train_s": t_train, "docs": len(docs),
                      "trace": corpus.trace}))


def tomotopy(train, vocab_path, k, iters, threads, outdir, every, lib, seed):
    sys.path.insert(0, lib)
    import tomotopy as tp
    clock = Clock()
    words, docs = read_docs(train, vocab_path)
    m = tp.LDAModel(k=k, seed=seed)
    for d in docs:
        m.add_doc(d)
    trace = []

    def callback(model, done, total):
        if done > 0:
            t = clock.now()
            trace.append([t, clock.measure(lambda: model.ll_per_word), done])
    t_train = clock.now()
    m.train(iters, workers=threads, callback_interval=every, callback=callback)
    t_train = clock.now() - t_train
    if not trace or trace[-1][2] != iters:
        trace.append([clock.now(), clock.measure(lambda: m.ll_per_word), iters])
    used = list(m.used_vocabs)
    dist = np.array([m.get_topic_word_dist(t) for t in range(k)])  # K x used
    write_model(outdir, "tomotopy-lda", words, {w: dist[:, i] for i, w in enumerate(used)}, k)
    print(json.dumps({"wall_s": clock.now(), "train_s": t_train, "docs": len(docs),
                      "isa": tp.isa, "trace": trace}))


def main(argv):
    if len(argv) >= 8 and argv[1] == "gensim":
        gensim(argv[2], argv[3], int(argv[4]), int(argv[5]), int(argv[6]), argv[7])
    elif len(argv) >= 8 and argv[1] == "tomotopy":
        rest = argv[8:]
        every = int(rest[rest.index("--every") + 1]) if "--every" in rest else 10
        lib = rest[rest.index("--lib") + 1] if "--lib" in rest else "../shared/peers/tomotopy"
        seed = int(rest[rest.index("--seed") + 1]) if "--seed" in rest else 1
        tomotopy(argv[2], argv[3], int(argv[4]), int(argv[5]), int(argv[6]), argv[7], every, lib,
                 seed)
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv)
