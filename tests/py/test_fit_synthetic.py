#!/usr/bin/python3
"""Semi-synthetic recovery (Arora et al. 2013 Sec. 5.1): documents from known separable topics
(tools/synth), C from the first M documents, jsmf fit; the l1 error of B after optimal topic
matching falls as M grows. Also the exact C = B A B^T of the truth gives back its anchors and B."""
import itertools
import os
import subprocess
import sys
import tempfile

import numpy as np

JSMF = os.environ.get("JSMF", "build/jsmf")
ROOT = os.environ.get("ROOT", ".")
PY = os.environ.get("PYTHON", "/usr/bin/python3")


def cooccurrence_prefixes(path, N, sizes):
    """C of the first M documents for each M in sizes (Lee, Bindel & Mimno 2015 Eq. 5)."""
    C = np.zeros((N, N))
    df = np.zeros(N, dtype=np.int64)
    out, m, used = {}, 0, 0
    for line in open(path):
        parts = line.split()
        if not parts:
            continue
        m += 1
        ids = np.array([int(p.split(":")[0]) for p in parts[1:]], dtype=int)
        cnt = np.array([float(p.split(":")[1]) for p in parts[1:]])
        n = cnt.sum()
        if n >= 2:
            used += 1
            C[np.ix_(ids, ids)] += np.outer(cnt, cnt) / (n * (n - 1))
            C[ids, ids] -= cnt / (n * (n - 1))
            df[ids] += 1
        if m in sizes:
            out[m] = (C / used, df.copy())
    return out


def l1_matched(Bhat, B):
    """Mean over topics of |bhat_k - b_pi(k)|_1 for the best matching pi (brute force)."""
    K = B.shape[1]
    D = np.abs(Bhat[:, :, None] - B[:, None, :]).sum(0)   # K x K
    best = min(sum(D[k, p[k]] for k in range(K)) for p in itertools.permutations(range(K)))
    return best / K


def fit(d, C, name, K, df=None, min_df=0):
    """Fit C (with the document frequencies in FILE.vocab.txt, as 'jsmf export' writes it)."""
    path = os.path.join(d, name + ".npy")
    np.save(path, C)
    with open(path + ".vocab.txt", "w") as f:
        for i in range(C.shape[0]):
            f.write("w%d\t%d\t%d\n" % (i, df[i], df[i]) if df is not None else "w%d\n" % i)
    out = os.path.join(d, name)
    subprocess.run([JSMF, "fit", path, "-k", str(K), "-o", out, "-q",
                    "--min-anchor-df", str(min_df)], check=True)
    S = [int(l.split("\t")[1]) for l in open(os.path.join(out, "anchors.txt"))]
    return np.load(os.path.join(out, "B.npy")), S


def main():
    N, K = 200, 5
    sizes = [500, 4000, 30000]
    fails = []
    with tempfile.TemporaryDirectory() as d:
        corpus, truth = os.path.join(d, "syn.ldac"), os.path.join(d, "truth")
        subprocess.run([PY, os.path.join(ROOT, "tools/synth/synth.py"), "-o", corpus, "--format",
                        "ldac", "--truth", truth, "--vocab", str(N), "--topics", str(K),
                        "--docs", str(sizes[-1]), "--mean-len", "60", "--seed", "5"],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        B = np.load(os.path.join(truth, "B.npy"))
        A = np.load(os.path.join(truth, "A.npy"))
        S_true = sorted(int(l.split("\t")[1]) for l in open(os.path.join(truth, "anchors.txt")))
        Cs = cooccurrence_prefixes(corpus, N, set(sizes))
        errs = []
        for M in sizes:
            # rare words have the noisiest rows; like the papers' vocabulary curation, keep
            # words in under 1% of the documents out of anchor candidacy
            C, df = Cs[M]
            Bhat, _ = fit(d, C, "m%d" % M, K, df, M // 100)
            errs.append(l1_matched(Bhat, B))
            print("M=%6d  l1 error after matching %.4f" % (M, errs[-1]))
        if not all(errs[i + 1] < errs[i] for i in range(len(errs) - 1)):
            fails.append("l1 error does not fall with M: %s" % errs)
        # the model's own C: anchors and B exactly
        Bhat, S = fit(d, B @ A @ B.T, "exact", K)
        e = l1_matched(Bhat, B)
        print("exact C = B A B^T: anchors %s (truth %s), l1 error %.2e" % (sorted(S), S_true, e))
        if sorted(S) != S_true or e > 1e-5:
            fails.append("exact C: anchors or B not recovered")
    for f in fails:
        print("FAIL " + f)
    sys.exit(1 if fails else 0)


if __name__ == "__main__":
    main()
