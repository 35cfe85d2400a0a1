#!/usr/bin/python3
"""Anchor candidates and the fits that cannot give a valid model. Rare words with noisy rows are
picked as anchors when nothing filters them, and are not with a document-frequency threshold; the
automatic threshold of a store is printed and recorded. A fit fails (exit 1), says why and what
to change, and writes no model when there are fewer anchor candidates than K, when the store is
empty, when K is out of range (empty topics and an A without mass: tests/unit/test_fit_checks.c)."""
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_fit_reference import corpus_cooccurrence  # noqa: E402

JSMF = os.environ.get("JSMF", "build/jsmf")
fails = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        fails.append(what)


def fit(*args):
    return subprocess.run([JSMF, "fit"] + list(args) + ["--refine", "0"], capture_output=True,
                          text=True)


def main():
    rng = np.random.default_rng(3)
    N, K, extra = 80, 5, 8
    C = corpus_cooccurrence(rng, N, K, 3000, 40)
    # eight words seen in a document or two, next to one frequent word each: their normalised
    # rows point at that word alone, farther from the others than any real row
    Cx = np.zeros((N + extra, N + extra))
    Cx[:N, :N] = C * (1 - 2 * extra * 2e-6)
    for i in range(N, N + extra):
        j = int(rng.integers(0, N))
        Cx[i, j] = Cx[j, i] = 2e-6
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "C.npy")
        np.save(path, Cx)
        with open(path + ".vocab.txt", "w") as f:
            for i in range(N + extra):
                df = 1 if i >= N else 50
                f.write("w%d\t%d\t%d\n" % (i, df, df))
        out = os.path.join(d, "m")

        def anchors(model):
            return [int(l.split("\t")[1]) for l in open(os.path.join(model, "anchors.txt"))]
        for rect in ("compressed", "ap"):
            r = fit(path, "-k", str(K), "-o", out + rect, "--rectify", rect, "--min-anchor-df", "0")
            noise = [a for a in anchors(out + rect) if a >= N] if r.returncode == 0 else []
            check(r.returncode == 0 and len(noise) >= 2,
                  "%s without a threshold: rare words become anchors (%s)" % (rect, noise))
            r = fit(path, "-k", str(K), "-o", out + rect + "2", "--rectify", rect,
                    "--min-anchor-df", "2")
            noise = [a for a in anchors(out + rect + "2") if a >= N] if r.returncode == 0 else [-1]
            check(r.returncode == 0 and not noise, "%s with --min-anchor-df 2: none does (%s)"
                  % (rect, r.stderr.strip()[-120:]))
        r = fit(path, "-k", str(K), "-o", out + "3", "--min-anchor-df", "51")
        check(r.returncode == 1 and "fewer than K=5" in r.stderr and "lower -k" in r.stderr
              and not os.path.exists(out + "3"),
              "fewer candidates than K: %s" % r.stderr.strip()[:160])
        r = fit(path, "-k", str(N + extra), "-o", out + "3")
        check(r.returncode == 1 and "K=" in r.stderr and not os.path.exists(out + "3"),
              "K >= N: %s" % r.stderr.strip()[:120])
        # an empty store, and a store from a corpus: the automatic threshold is printed
        vocab = os.path.join(d, "vocab.txt")
        names = ["word" + a + b for a in "abcde" for b in "abcd"]   # 20 words the tokenizer keeps
        open(vocab, "w").write("".join(w + "\n" for w in names))
        # a failed first ingest leaves no store; one killed before its first checkpoint leaves
        # its vocabulary and no documents
        p = subprocess.Popen([JSMF, "ingest", os.path.join(d, "empty"), "-", "--vocab", vocab, "-q"],
                             stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL)
        for _ in range(100):
            if subprocess.run([JSMF, "info", os.path.join(d, "empty")],
                              capture_output=True).returncode == 0:
                break
            time.sleep(0.05)
        p.kill()
        p.wait()
        r = fit(os.path.join(d, "empty"), "-k", "3", "-o", out + "4")
        check(r.returncode == 1 and "no documents" in r.stderr and not os.path.exists(out + "4"),
              "empty store: %s" % r.stderr.strip()[:120])
        docs = []
        for _ in range(400):
            topic = rng.integers(0, 4)
            words = rng.choice(np.arange(topic * 5, topic * 5 + 5), size=8)
            docs.append(" ".join(names[w] for w in words))
        txt = os.path.join(d, "c.txt")
        open(txt, "w").write("\n".join(docs) + "\n")
        subprocess.run([JSMF, "ingest", os.path.join(d, "st"), txt, "--vocab", vocab, "-q"],
                       check=True)
        r = fit(os.path.join(d, "st"), "-k", "4", "-o", out + "5", "--json")
        check(r.returncode == 0 and "candidates (in at least 3 documents)" in r.stderr,
              "the automatic threshold ceil(sqrt(400)/8) = 3 is printed: %s"
              % r.stderr.strip().splitlines()[-1:])
        if r.returncode == 0:
            sj = json.loads(r.stdout)
            check(sj["anchor_df"] == 3 and sj["parameters"]["min_anchor_df"] == "auto",
                  "summary.json records it: %s, %s" % (sj["anchor_df"], sj["parameters"]["min_anchor_df"]))
    if fails:
        print("%d failed" % len(fails))
        sys.exit(1)


if __name__ == "__main__":
    main()
