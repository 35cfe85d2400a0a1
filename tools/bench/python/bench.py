#!/usr/bin/env python3
"""bench.py — the sklearn path of the jsmf package against sklearn's LatentDirichletAllocation
and the CLI, on the same documents in one run: debdesc (or --corpus) through CountVectorizer
into a scipy sparse matrix X; then jsmf.JSMF(K).fit(X) and transform(X) (refined by
--refine-iters passes, the estimator's default 80; 0: the spectral fit alone); LDA fit and
transform on X; and the CLI (ingest of X written as LDA-C with its vocabulary, fit with the same
--refine) on the same X. Prints seconds and ratios, never asserts (tools/bench/README.md).
    build/venv/bin/python tools/bench/python/bench.py [--docs N] [-k K] [--lda-iter I]
                                                      [--refine-iters N]"""
import argparse
import os
import subprocess
import sys
import tempfile
import time

import numpy as np
from sklearn.decomposition import LatentDirichletAllocation
from sklearn.feature_extraction.text import CountVectorizer

import jsmf

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))


def timed(f):
    t = time.perf_counter()
    r = f()
    return r, time.perf_counter() - t


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpus", default="/work/shared/corpora/debdesc/debdesc.txt.zst")
    ap.add_argument("--docs", type=int, default=0, help="first N documents (0: all)")
    ap.add_argument("-k", type=int, default=50)
    ap.add_argument("--lda-iter", type=int, default=10)
    ap.add_argument("--cli", default=os.path.join(ROOT, "build", "jsmf"))
    ap.add_argument("--refine-iters", type=int, default=80)
    a = ap.parse_args()
    text = subprocess.run(["zstd", "-dc", a.corpus], capture_output=True, check=True).stdout
    docs = text.decode("utf-8", "replace").splitlines()
    if a.docs:
        docs = docs[:a.docs]
    cv = CountVectorizer(min_df=5, max_df=0.5, stop_words="english", dtype=np.int64)
    X, t_cv = timed(lambda: cv.fit_transform(docs))
    words = cv.get_feature_names_out()
    print("corpus: %d documents, %d words, %d tokens, %d non-zeros (CountVectorizer %.1f s)"
          % (X.shape[0], X.shape[1], X.sum(), X.nnz, t_cv))
    w = tempfile.mkdtemp(prefix="jsmf-bench-py-")
    est = jsmf.JSMF(n_components=a.k, vocabulary=words, store=os.path.join(w, "pystore"),
                    refine_iters=a.refine_iters)
    _, t_fit = timed(lambda: est.fit(X))
    _, t_tr = timed(lambda: est.transform(X))
    print("jsmf.JSMF  fit %.2f s  transform %.2f s  (refine_iters %d)" % (t_fit, t_tr,
                                                                      a.refine_iters))
    # the CLI on the same documents: X as LDA-C, the vocabulary as a file
    with open(os.path.join(w, "x.ldac"), "w") as f:
        for i in range(X.shape[0]):
            a0, a1 = X.indptr[i], X.indptr[i + 1]
            f.write("%d %s\n" % (a1 - a0, " ".join("%d:%d" % (j, c) for j, c in
                                                   zip(X.indices[a0:a1], X.data[a0:a1]))))
    with open(os.path.join(w, "vocab.txt"), "w") as f:
        f.write("\n".join(words) + "\n")
    _, t_ci = timed(lambda: subprocess.run([a.cli, "ingest", os.path.join(w, "store"),
                                            os.path.join(w, "x.ldac"), "--format", "ldac",
                                            "--vocab", os.path.join(w, "vocab.txt"), "--quiet"],
                                           check=True))
    _, t_cf = timed(lambda: subprocess.run([a.cli, "fit", os.path.join(w, "store"), "-k",
                                            str(a.k), "-o", os.path.join(w, "model"),
                                            "--quiet"] + (["--refine", str(a.refine_iters)]
                                                          if a.refine_iters else []),
                                           check=True))
    same = np.array_equal(np.load(os.path.join(w, "model", "B.npy")), est.model_.B)
    # LDA-C ids are rows of the model's vocabulary (vocab.txt is the model's, row for row)
    _, t_cinf = timed(lambda: subprocess.run([a.cli, "infer", os.path.join(w, "model"),
                                              os.path.join(w, "x.ldac"), "--format", "ldac",
                                              "--uci-vocab", os.path.join(w, "vocab.txt"),
                                              "--quiet"], check=True, stdout=subprocess.DEVNULL))
    print("CLI        ingest %.2f s  fit %.2f s  infer %.2f s  (B equal to jsmf.JSMF's: %s)"
          % (t_ci, t_cf, t_cinf, same))
    lda = LatentDirichletAllocation(n_components=a.k, max_iter=a.lda_iter,
                                    learning_method="online", random_state=1)
    _, t_lf = timed(lambda: lda.fit(X))
    _, t_lt = timed(lambda: lda.transform(X))
    print("sklearn LDA (online, max_iter %d)  fit %.2f s  transform %.2f s"
          % (a.lda_iter, t_lf, t_lt))
    print("ratios: LDA fit / jsmf fit %.1fx, LDA transform / jsmf transform %.1fx, "
          "jsmf fit / CLI ingest+fit %.2f" % (t_lf / t_fit, t_lt / t_tr, t_fit / (t_ci + t_cf)))


if __name__ == "__main__":
    sys.exit(main())
