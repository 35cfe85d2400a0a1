"""fdm_synth.py — helpers of the FDM tests: a semi-synthetic C = B A B^T with planted anchor
words written as 'jsmf export' would (C.npy + C.npy.vocab.txt), a ground-truth model directory,
and a small Hungarian algorithm for the l1 matching error (Fisher et al. 2020, Eq. 14)."""
import json
import os

import numpy as np


def planted(n=60, k=4, anchors=3, overlap=0.2, seed=0):
    """Topics over mostly separate word blocks (each word has a home topic, and with probability
    `overlap` a second one), `anchors` anchor words per topic, correlated topics in A."""
    rng = np.random.default_rng(seed)
    B = np.zeros((n, k))
    for w in range(n):
        home = w % k
        B[w, home] = rng.gamma(1.0, 1.0)
        if w >= anchors * k and rng.random() < overlap:
            B[w, (home + 1 + rng.integers(k - 1)) % k] = rng.gamma(1.0, 0.5)
    B /= B.sum(axis=0, keepdims=True)
    L = rng.normal(size=(k, k)) * 0.3
    A = np.exp(L + L.T) + np.diag(rng.random(k) * 2 + 1)
    A /= A.sum()
    C = B @ A @ B.T
    C /= C.sum()
    return B, A, C


def write_input(d, C):
    path = os.path.join(d, "C.npy")
    np.save(path, C)
    with open(path + ".vocab.txt", "w") as f:
        for i in range(C.shape[0]):
            f.write("w%03d\n" % i)
    return path


def write_model(d, B, A):
    os.makedirs(d, exist_ok=True)
    np.save(os.path.join(d, "B.npy"), B)
    np.save(os.path.join(d, "A.npy"), A)
    with open(os.path.join(d, "vocab.txt"), "w") as f:
        for i in range(B.shape[0]):
            f.write("w%03d\n" % i)
    with open(os.path.join(d, "summary.json"), "w") as f:
        json.dump({"format": "jsmf-model", "version": 1, "kind": "truth", "k": B.shape[1],
                   "n_words": B.shape[0]}, f)


def hungarian(cost):
    """Minimum-cost perfect matching of a square matrix (Kuhn-Munkres with potentials, O(n^3)).
    Returns match[row] = column."""
    n = cost.shape[0]
    INF = float("inf")
    u = [0.0] * (n + 1)
    v = [0.0] * (n + 1)
    p = [0] * (n + 1)  # p[col] = row matched to col (1-based; 0 = none)
    way = [0] * (n + 1)
    for i in range(1, n + 1):
        p[0] = i
        j0 = 0
        minv = [INF] * (n + 1)
        used = [False] * (n + 1)
        while True:
            used[j0] = True
            i0, delta, j1 = p[j0], INF, 0
            for j in range(1, n + 1):
                if not used[j]:
                    cur = cost[i0 - 1][j - 1] - u[i0] - v[j]
                    if cur < minv[j]:
                        minv[j], way[j] = cur, j0
                    if minv[j] < delta:
                        delta, j1 = minv[j], j
            for j in range(n + 1):
                if used[j]:
                    u[p[j]] += delta
                    v[j] -= delta
                else:
                    minv[j] -= delta
            j0 = j1
            if p[j0] == 0:
                break
        while True:
            j1 = way[j0]
            p[j0] = p[j1]
            j0 = j1
            if j0 == 0:
                break
    match = [0] * n
    for j in range(1, n + 1):
        match[p[j] - 1] = j - 1
    return match


def l1_error(Btrue, Best):
    """(1/K) min over matchings of sum_t |mu_t - nu_tau(t)|_1 (Fisher et al. 2020, Eq. 14)."""
    cost = np.abs(Btrue[:, :, None] - Best[:, None, :]).sum(axis=0)
    match = hungarian(cost)
    return float(np.mean([cost[t, match[t]] for t in range(len(match))])), match


def self_test():
    """The Hungarian solver against brute force on small random matrices."""
    import itertools
    rng = np.random.default_rng(1)
    for n in (1, 2, 3, 5, 6):
        for _ in range(5):
            c = rng.random((n, n))
            m = hungarian(c)
            best = min(sum(c[i, q[i]] for i in range(n)) for q in itertools.permutations(range(n)))
            assert sorted(m) == list(range(n))
            assert abs(sum(c[i, m[i]] for i in range(n)) - best) < 1e-12, (n, c)
