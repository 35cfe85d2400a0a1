#!/usr/bin/python3
"""test_tools_synth.py — tools/synth: document count and Poisson lengths, tokens the tokenizer
keeps, empirical word and topic frequencies against the ground truth, E[theta theta^T] for the
correlated mixture, identical bags of words in text / UCI / LDA-C / items (.zst too; item ids
escaped in vocab.txt where a line needs it), the exact C, --from-model with planted anchors,
determinism by seed, and truth models jsmf can read."""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

import numpy as np

ROOT = os.environ.get("ROOT", os.getcwd())
SYNTH = os.path.join(ROOT, "tools", "synth", "synth.py")
JSMF = os.environ.get("JSMF", os.path.join(ROOT, "build", "jsmf"))
PY = os.environ.get("PYTHON", sys.executable)
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def synth(*args):
    r = subprocess.run([PY, SYNTH, *args], capture_output=True, text=True)
    if r.returncode:
        print(r.stderr)
    assert r.returncode == 0, args
    return r


def read_text(path):
    with open(path) as f:
        return [line.split() for line in f.read().split("\n")[:-1]]


def bag(doc_tokens, index):
    c = {}
    for w in doc_tokens:
        c[index[w]] = c.get(index[w], 0) + 1
    return c


def main():
    tmp = tempfile.mkdtemp()
    try:
        run(tmp)
    finally:
        shutil.rmtree(tmp)
    if failures:
        print(len(failures), "failures")
        return 1
    print("ok")
    return 0


def run(tmp):
    j = lambda *p: os.path.join(tmp, *p)
    M, L, N, K = 3000, 60, 400, 8
    base = ["--vocab", str(N), "--topics", str(K), "--docs", str(M), "--mean-len", str(L),
            "--seed", "11", "--mix", "lda-asym", "--alpha", "0.2"]
    synth("-o", j("c.txt"), "--truth", j("t"), "--theta", j("theta.npy"),
          "--exact-c", j("C.npy"), *base)
    docs = read_text(j("c.txt"))
    B, A = np.load(j("t", "B.npy")), np.load(j("t", "A.npy"))
    vocab = [w.strip() for w in open(j("t", "vocab.txt"))]
    index = {w: i for i, w in enumerate(vocab)}
    anchors = [l.rstrip("\n").split("\t") for l in open(j("t", "anchors.txt"))]
    summary = json.load(open(j("t", "summary.json")))

    # shapes and invariants of the truth
    check(B.shape == (N, K) and A.shape == (K, K), "truth shapes")
    check(np.allclose(B.sum(0), 1, atol=1e-12) and abs(A.sum() - 1) < 1e-12, "truth sums")
    check(np.allclose(A, A.T), "A symmetric")
    check(summary["kind"] == "truth" and summary["format"] == "jsmf-model", "summary keys")
    check(len(anchors) == K, "one anchor per topic")
    for t, (k, w, word) in enumerate(anchors):
        w = int(w)
        check(int(k) == t and vocab[w] == word, "anchors.txt line")
        check(B[w, t] > 0 and np.count_nonzero(B[w]) == 1, f"anchor {word} only in topic {t}")
    check(sorted(int(a[1]) for a in anchors) != list(range(K)), "anchors are spread over rows")

    # documents: count, Poisson lengths, tokens the tokenizer keeps
    n = np.array([len(d) for d in docs])
    check(len(docs) == M, f"document count {len(docs)}")
    check(abs(n.mean() - L) < 4 * np.sqrt(L / M), f"mean length {n.mean()}")
    check(abs(n.var() / L - 1) < 0.15, f"Poisson dispersion {n.var() / L}")
    check(sum(n) == summary["corpus"]["tokens"], "token count in summary")
    check(all(re.fullmatch(r"[a-z]{3,}", w) for d in docs[:200] for w in d), "letters only, >= 3")

    # empirical frequencies: words against B p(z), anchors against their topic's share
    T = n.sum()
    counts = np.zeros(N)
    for d in docs:
        for w in d:
            counts[index[w]] += 1
    theta = np.load(j("theta.npy"))
    check(theta.shape == (M, K) and np.allclose(theta.sum(1), 1), "theta shape")
    pz = A.sum(1)
    # the documents' mean theta estimates p(z) (its sd per topic is below 0.01 here)
    check(np.abs(theta.mean(0) - pz).max() < 0.03, f"mean theta vs p(z): {theta.mean(0)} {pz}")
    expect = B @ theta.T @ n / T  # word distribution given the drawn mixtures
    check(0.5 * np.abs(counts / T - expect).sum() < 0.05, "word frequencies vs B theta")
    for t, (_, w, _) in enumerate(anchors):
        w = int(w)
        share = counts[w] / T / B[w, t]  # estimated topic share from its anchor
        check(abs(share - pz[t]) < 0.25 * pz[t] + 0.01, f"topic {t} share {share} vs {pz[t]}")
    # E[theta theta^T] (closed form) against the sample second moment
    check(np.abs(theta.T @ theta / M - A).max() < 0.02, "A vs sample E[theta theta^T]")

    # exact C
    C = np.load(j("C.npy"))
    check(C.shape == (N, N) and np.allclose(C, B @ A @ B.T, atol=1e-15), "exact C = B A B^T")
    check(abs(C.sum() - 1) < 1e-12 and np.array_equal(C, C.T), "exact C sums to 1, symmetric")
    check([w.strip() for w in open(j("C.vocab.txt"))] == vocab, "C.vocab.txt")

    # same seed, other formats: identical bags of words; .zst decompresses to the plain file
    synth("-o", j("c.ldac"), "--format", "ldac", "--truth", j("t2"), *base)
    synth("-o", j("docword.c.txt.zst"), "--format", "uci", "--truth", j("t3"), *base)
    synth("-o", j("c2.txt.zst"), "--truth", j("t4"), *base)
    plain = open(j("c.txt"), "rb").read()
    unz = subprocess.run(["zstd", "-dc", j("c2.txt.zst")], capture_output=True).stdout
    check(unz == plain, "zstd text equals plain text for the same seed")
    check(open(j("t2", "B.npy"), "rb").read() == open(j("t", "B.npy"), "rb").read(),
          "same seed, same truth")
    bags = [bag(d, index) for d in docs]
    ldac = []
    for line in open(j("c.ldac")):
        f = line.split()
        pairs = dict((int(a), int(b)) for a, b in (p.split(":") for p in f[1:]))
        check(int(f[0]) == len(pairs), "ldac: count of pairs")
        ldac.append(pairs)
    check(ldac == bags, "ldac bags equal text bags")
    uci = subprocess.run(["zstd", "-dc", j("docword.c.txt.zst")], capture_output=True,
                         text=True).stdout.split("\n")
    D, W, NNZ = int(uci[0]), int(uci[1]), int(uci[2])
    check((D, W) == (M, N) and NNZ == sum(len(b) for b in bags), "uci header")
    ubags = [dict() for _ in range(M)]
    for line in uci[3:]:
        if line:
            d, w, c = map(int, line.split())
            ubags[d - 1][w - 1] = c
    check(ubags == bags, "uci bags equal text bags")
    check([w.strip() for w in open(j("vocab.c.txt"))] == vocab, "uci vocab beside docword")

    # item baskets: the same bags under item ids; ids that need the vocabulary escape are
    # escaped in the truth's vocab.txt, and jsmf reads them back as the same words
    synth("-o", j("items.txt"), "--format", "items", "--item-ids", "mixed", "--truth", j("ti"),
          *base)
    ilines = open(j("items.txt"), encoding="utf-8").read().split("\n")[:-1]
    iwords = [line.rstrip("\n") for line in open(j("ti", "vocab.txt"), encoding="utf-8")]
    ids = [w[1:] if w[:2] in ("\\#", "\\\\") else w for w in iwords]
    check(len(set(ids)) == N and "SKU-0" in ids and "sku-0" in ids and "#tag0" in ids and
          "\\item0" in ids and "café-0" in ids, f"mixed item ids: {ids[:8]}")
    check("\\#tag0" in iwords and "\\\\item0" in iwords, "truth vocab.txt escapes # and backslash")
    iindex = {w: i for i, w in enumerate(ids)}
    check([bag(line.split(), iindex) for line in ilines] == bags, "items bags equal text bags")
    synth("-o", j("sku.txt"), "--format", "items", "--truth", j("ts"), *base)
    check(open(j("sku.txt")).readline().split()[0].startswith("sku"), "items default to sku ids")
    if os.path.exists(JSMF):
        r = subprocess.run([JSMF, "topics", j("ti"), "--format", "tsv", "--top", "3"],
                           capture_output=True, text=True)
        check(r.returncode == 0, f"jsmf topics of the items truth: {r.stderr}")
        top = {w for line in r.stdout.split("\n")[1:] if line for w in line.split("\t")[4].split()}
        check(top <= set(ids), f"jsmf reads the escaped ids back: {sorted(top - set(ids))[:4]}")

    # correlated mixture: Monte Carlo A against the sample, correlations present, jsmf reads it
    synth("-o", j("ctm.txt"), "--truth", j("tc"), "--theta", j("thc.npy"), "--mix", "ctm",
          "--vocab", "200", "--topics", "6", "--docs", "4000", "--mean-len", "20", "--seed", "5",
          "--a-samples", "50000")
    Ac, thc = np.load(j("tc", "A.npy")), np.load(j("thc.npy"))
    check(abs(Ac.sum() - 1) < 1e-12 and np.allclose(Ac, Ac.T), "ctm A normalised, symmetric")
    check(np.abs(thc.T @ thc / len(thc) - Ac).max() < 0.01, "ctm A vs sample second moment")
    corr = Ac / np.sqrt(np.outer(np.diag(Ac), np.diag(Ac)))
    off = corr[~np.eye(6, dtype=bool)]
    check(off.max() - off.min() > 0.05, "ctm: topic pairs differ in co-occurrence")
    check(not os.path.exists(j("tc", "alpha.npy")), "ctm truth has no alpha")
    r = subprocess.run([JSMF, "topics", j("tc"), "--format", "json"], capture_output=True,
                       text=True)
    check(r.returncode == 0 and json.loads(r.stdout)["k"] == 6, "jsmf topics reads a ctm truth")

    # --from-model with planted anchors, refusing to overwrite
    synth("-o", j("fm.txt"), "--truth", j("tf"), "--from-model", j("tc"), "--add-anchors",
          "--docs", "50", "--seed", "3")
    Bf = np.load(j("tf", "B.npy"))
    vf = [w.strip() for w in open(j("tf", "vocab.txt"))]
    check(Bf.shape == (206, 6) and np.allclose(Bf.sum(0), 1), "from-model: 6 anchors added")
    check(vf[:200] == [w.strip() for w in open(j("tc", "vocab.txt"))] and len(set(vf)) == 206,
          "from-model: vocabulary kept, new words distinct")
    for t in range(6):
        check(np.count_nonzero(Bf[200 + t]) == 1 and Bf[200 + t, t] > 0, "planted anchor")
    check(subprocess.run([JSMF, "topics", j("tf")], capture_output=True).returncode == 0,
          "jsmf reads the from-model truth")
    r = subprocess.run([PY, SYNTH, "-o", j("fm.txt"), "--truth", j("tf"), "--docs", "5"],
                       capture_output=True, text=True)
    check(r.returncode != 0 and "already exists" in r.stderr, "refuses an existing truth")
    check(np.array_equal(np.load(j("tf", "B.npy")), Bf), "existing truth untouched")


if __name__ == "__main__":
    sys.exit(main())
