#!/usr/bin/env python3
"""test_eval_docmetrics.py — `jsmf eval --corpus` agrees with a dense numpy reference on a small
corpus: coherence (Arora et al. 2013 Eq. 3: top 20 words, epsilon 0.01, ordered pairs) and held-out
log-likelihood per token (even/odd token split, theta fitted on the even half); `--truth` gives
the l1 error of the best topic permutation (brute force over all permutations)."""
import itertools, json, os, subprocess, sys, tempfile
import numpy as np

from eval_reference import fit_theta

JSMF = os.environ.get("JSMF", "build/jsmf")
LAMBDA = 1e-6                               # JSMF_HELDOUT_SMOOTHING


def save_model(d, B, A, vocab, anchors=None):
    os.makedirs(d)
    np.save(os.path.join(d, "B.npy"), B)
    np.save(os.path.join(d, "A.npy"), A)
    with open(os.path.join(d, "vocab.txt"), "w") as f:
        f.write("".join(w + "\n" for w in vocab))
    if anchors is not None:
        with open(os.path.join(d, "anchors.txt"), "w") as f:
            f.write("".join("%d\t%d\t%s\n" % (k, a, vocab[a]) for k, a in enumerate(anchors)))
    with open(os.path.join(d, "summary.json"), "w") as f:
        json.dump({"format": "jsmf-model", "version": 1, "kind": "truth", "k": B.shape[1],
                   "n_words": B.shape[0]}, f)


def reference(B, vocab, docs, top=20, eps=0.01):
    N, K = B.shape
    index = {w: i for i, w in enumerate(vocab)}
    X = np.zeros((len(docs), N))            # dense document-word counts
    for d, toks in enumerate(docs):
        for t in toks:
            if t in index:
                X[d, index[t]] += 1
    P = (X > 0).astype(float)
    D1 = P.sum(0)
    D2 = P.T @ P
    coh = []
    for k in range(K):
        order = sorted(range(N), key=lambda w: (-B[w, k], w))[:top]
        c = 0.0
        for x1 in order:
            for x2 in order:
                if x1 != x2 and D1[x2] > 0:
                    c += np.log((D2[x1, x2] + eps) / D1[x2])
        coh.append(c)
    ll, ntok = 0.0, 0
    for d in range(len(docs)):
        ids = np.nonzero(X[d])[0]
        cnt = X[d, ids].astype(int)
        if cnt.sum() < 2:
            continue
        seq = np.repeat(ids, cnt)           # tokens by increasing word id
        fit, held = seq[0::2], seq[1::2]
        fi, fc = np.unique(fit, return_counts=True)
        th = fit_theta(B[fi], fc.astype(float))
        p = (1 - LAMBDA) * (B[held] @ th) + LAMBDA / N   # smoothed (formats/outputs.md)
        ll += np.log(p).sum()
        ntok += len(held)
    return np.mean(coh), np.array(coh), ll / ntok, ntok


def main():
    rng = np.random.default_rng(11)
    N, K = 70, 4
    vocab = ["word" + "".join("abcdefghij"[int(c)] for c in "%02d" % i) for i in range(N)]
    B = rng.random((N, K)) ** 4 + 1e-3
    B /= B.sum(0)
    A = rng.random((K, K)); A = A + A.T; A /= A.sum()
    docs = []
    for d in range(160):
        th = rng.dirichlet(np.full(K, 0.3))
        L = int(rng.integers(15, 60))
        ws = rng.choice(N, size=L, p=B @ th)
        toks = [vocab[w] for w in ws]
        if d % 7 == 0:
            toks.insert(3, "oovword")
        docs.append(toks)
    docs.insert(10, [])                      # empty document
    docs.insert(20, [vocab[5]])             # one token: no held-out half
    with tempfile.TemporaryDirectory() as tmp:
        save_model(os.path.join(tmp, "m"), B, A, vocab)
        corpus = os.path.join(tmp, "corpus.txt")
        with open(corpus, "w") as f:
            f.write("".join(" ".join(t) + "\n" for t in docs))
        out = subprocess.run([JSMF, "eval", os.path.join(tmp, "m"), "--corpus", corpus, "--json",
                              "--tol", "1e-13", "--iters", "200000", "-q"],
                             capture_output=True, text=True)
        assert out.returncode == 0, out.stderr
        got = json.loads(out.stdout)
        coh, coh_t, ll, ntok = reference(B, vocab, docs)
        print("coherence jsmf %.10g numpy %.10g; heldout jsmf %.10g numpy %.10g (%d tokens)"
              % (got["coherence"], coh, got["heldout_loglik_per_token"], ll, ntok))
        assert got["corpus_docs"] == len(docs)
        assert got["corpus_oov_tokens"] == sum(t.count("oovword") for t in docs)
        assert abs(got["coherence"] - coh) <= 1e-9 * abs(coh)
        assert np.allclose(got["coherence_per_topic"], coh_t, rtol=1e-9)
        assert got["heldout_tokens"] == ntok
        assert abs(got["heldout_loglik_per_token"] - ll) <= 1e-7 * abs(ll)

        # Same corpus as LDA-C (ids = model rows): identical numbers.
        ldac = os.path.join(tmp, "corpus.ldac")
        index = {w: i for i, w in enumerate(vocab)}
        with open(ldac, "w") as f:
            for toks in docs:
                ids, cnt = np.unique([index[t] for t in toks if t in index], return_counts=True)
                f.write("%d%s\n" % (len(ids), "".join(" %d:%d" % (i, c) for i, c in zip(ids, cnt))))
        out2 = subprocess.run([JSMF, "eval", os.path.join(tmp, "m"), "--corpus", ldac, "--format",
                               "ldac", "--json", "--tol", "1e-13", "--iters", "200000", "-q"],
                              capture_output=True, text=True)
        assert out2.returncode == 0, out2.stderr
        got2 = json.loads(out2.stdout)
        assert abs(got2["coherence"] - got["coherence"]) <= 1e-12 * abs(coh)
        assert abs(got2["heldout_loglik_per_token"] - got["heldout_loglik_per_token"]) <= 1e-9

        # --truth: permuted, perturbed topics; optimum by brute force over all K! matchings.
        perm = rng.permutation(K)
        E = B[:, perm] * (1 + 0.3 * rng.random((N, K)))
        E /= E.sum(0)
        save_model(os.path.join(tmp, "est"), E, A, vocab)
        out3 = subprocess.run([JSMF, "eval", os.path.join(tmp, "est"), "--truth",
                               os.path.join(tmp, "m"), "--json"], capture_output=True, text=True)
        assert out3.returncode == 0, out3.stderr
        got3 = json.loads(out3.stdout)
        cost = np.abs(B[:, :, None] - E[:, None, :]).sum(0)
        best = min(itertools.permutations(range(K)), key=lambda p: sum(cost[t, p[t]] for t in range(K)))
        assert list(got3["l1_match"]) == list(best), (got3["l1_match"], best)
        assert abs(got3["l1_error"] - sum(cost[t, best[t]] for t in range(K)) / K) < 1e-12
        assert [list(perm).index(t) for t in range(K)] == list(best)  # the permutation undone
        print("l1 error %.6g, matching %s" % (got3["l1_error"], got3["l1_match"]))

        # Usage errors exit 2.
        bad = subprocess.run([JSMF, "eval", os.path.join(tmp, "m")], capture_output=True)
        assert bad.returncode == 2
        bad = subprocess.run([JSMF, "eval", os.path.join(tmp, "m"), "--bogus"], capture_output=True)
        assert bad.returncode == 2
    print("ok")


if __name__ == "__main__":
    main()
