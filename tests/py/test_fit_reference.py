#!/usr/bin/python3
"""Each fit step against a plain numpy reference on a small corpus generated here (Lee et al. JSMF
Alg. 1-4): AP rectification with numpy.linalg.eigh, cyclic Douglas-Rachford, anchors by explicit
Gram-Schmidt column-pivoted QR, B by brute-force exact simplex least squares (every support) and
Bayes' rule, A = D^-1 C_SS D^-1 and the pseudo-inverse baseline. Also: the streaming path agrees
with the dense one, and 1 and 2 threads give byte-identical output."""
import itertools
import os
import subprocess
import sys
import tempfile

import numpy as np

JSMF = os.environ.get("JSMF", "build/jsmf")


def corpus_cooccurrence(rng, N, K, M, mean_len):
    B = rng.dirichlet(np.full(N, 0.3), K).T
    B[:K, :] = 0
    B[np.arange(K), np.arange(K)] = 0.03          # planted anchors: word k only in topic k
    B /= B.sum(0)
    C = np.zeros((N, N))
    for _ in range(M):
        n = max(2, rng.poisson(mean_len))
        h = rng.multinomial(n, B @ rng.dirichlet(np.full(K, 0.3))).astype(float)
        C += (np.outer(h, h) - np.diag(h)) / (n * (n - 1))   # Lee, Bindel & Mimno 2015 Eq. 5
    return C / M


def ap(C, K, iters):
    N = C.shape[0]
    X = C.copy()
    for _ in range(iters):
        w, V = np.linalg.eigh(X)
        top = np.argsort(w)[::-1][:K]
        X = (V[:, top] * np.maximum(w[top], 0)) @ V[:, top].T
        X = X + (1 - X.sum()) / N**2
        X = np.maximum(X, 0)
    return X / X.sum()


def psd(X, K):
    w, V = np.linalg.eigh(X)
    top = np.argsort(w)[::-1][:K]
    return (V[:, top] * np.maximum(w[top], 0)) @ V[:, top].T


def dr(C, K, iters):
    N = C.shape[0]
    nor = lambda X: X + (1 - X.sum()) / N**2
    nn = lambda X: np.maximum(X, 0)
    x = C.copy()
    for _ in range(iters):
        for PA, PB in ((lambda X: psd(X, K), nor), (nor, nn), (nn, lambda X: psd(X, K))):
            a = PA(x)
            x = x + PB(2 * a - x) - a
    X = nn(nor(psd(x, K)))
    return X / X.sum()


def anchors_gs(X, K):
    P = X / X.sum(1, keepdims=True)
    R = P.copy()
    S = []
    for _ in range(K):
        norms = (R**2).sum(1)
        norms[S] = -np.inf
        n = int(np.argmax(norms))
        S.append(n)
        q = R[n] / np.linalg.norm(R[n])
        R = R - np.outer(R @ q, q)
    return S


def snls_exact(H, r):
    """min 1/2 y'Hy - r'y on the simplex: the best feasible KKT point over all supports."""
    K = len(r)
    best, by = np.inf, None
    for size in range(1, K + 1):
        for sup in itertools.combinations(range(K), size):
            s = list(sup)
            M = np.zeros((size + 1, size + 1))
            M[:size, :size] = H[np.ix_(s, s)]
            M[:size, size] = 1
            M[size, :size] = 1
            try:
                sol = np.linalg.solve(M, np.append(r[s], 1.0))
            except np.linalg.LinAlgError:
                continue
            if np.any(sol[:size] < -1e-12):
                continue
            y = np.zeros(K)
            y[s] = np.maximum(sol[:size], 0)
            f = 0.5 * y @ H @ y - r @ y
            if f < best - 1e-15:
                best, by = f, y
    return by


def recover(X, S, pinv=False):
    N, K = X.shape[0], len(S)
    c = X.sum(1)
    P = X / c[:, None]
    U = P[S]                      # K x N anchor rows
    H = U @ U.T
    Y = np.zeros((N, K))
    for i in range(N):
        Y[i] = np.eye(K)[S.index(i)] if i in S else snls_exact(H, U @ P[i])
    B = Y * c[:, None]
    B /= B.sum(0)
    if pinv:
        Bp = np.linalg.pinv(B)
        A = Bp @ X @ Bp.T
    else:
        d = B[S, np.arange(K)]
        A = X[np.ix_(S, S)] / np.outer(d, d)
    return B, A / A.sum()


def run_fit(d, name, *args):
    out = os.path.join(d, name)
    cmd = [JSMF, "fit", os.path.join(d, "C.npy"), "-o", out, "-q"] + list(args)
    subprocess.run(cmd, check=True)
    B = np.load(os.path.join(out, "B.npy"))
    A = np.load(os.path.join(out, "A.npy"))
    S = [int(l.split("\t")[1]) for l in open(os.path.join(out, "anchors.txt"))
         if not l.startswith("#")]
    return out, B, A, S


def main():
    rng = np.random.default_rng(7)
    N, K = 90, 5
    C = corpus_cooccurrence(rng, N, K, 3000, 40)
    w = np.linalg.eigvalsh(C)
    assert w.min() < -1e-6 * w.max(), "test corpus should give an indefinite C"
    fails = []

    def check(ok, what):
        print(("ok   " if ok else "FAIL ") + what)
        if not ok:
            fails.append(what)

    with tempfile.TemporaryDirectory() as d:
        np.save(os.path.join(d, "C.npy"), C)
        tight = ["-k", str(K), "--rectify", "ap", "--rectify-iters", "6"]
        # AP, dense path
        out, B, A, S = run_fit(d, "ap", *tight, "--mode", "dense", "--save-rectified")
        X = ap(C, K, 6)
        Xj = np.load(os.path.join(out, "rectified.npy"))
        check(np.abs(Xj - X).max() < 1e-12 * max(1.0, N * N * X.max()),
              "AP rectified C matches numpy eigh (max diff %.2e)" % np.abs(Xj - X).max())
        Sr = anchors_gs(X, K)
        check(S == Sr, "anchors identical to Gram-Schmidt CPQR: %s vs %s" % (S, Sr))
        Br, Ar = recover(X, Sr)
        check(np.abs(B - Br).max() < 1e-6, "B matches exact SNLS + Bayes (max diff %.2e)"
              % np.abs(B - Br).max())
        check(np.abs(A - Ar).max() < 1e-6 * Ar.max() * 10, "A = D^-1 C_SS D^-1 matches (max diff %.2e)"
              % np.abs(A - Ar).max())
        for method in ("activeset", "expgrad", "kl"):
            _, Bm, _, Sm = run_fit(d, "ap_" + method, *tight, "--mode", "dense", "--recover", method)
            tol = 1e-8 if method == "activeset" else 2e-3
            if method == "kl":   # a different loss: only close, not equal
                tol = 0.05
            check(Sm == Sr and np.abs(Bm - Br).max() < tol,
                  "--recover %s B near reference (max diff %.2e)" % (method, np.abs(Bm - Br).max()))
        # streaming path vs dense
        _, Bs, As, Ss = run_fit(d, "stream", *tight, "--mode", "stream")
        check(Ss == S, "stream anchors equal dense: %s vs %s" % (Ss, S))
        check(np.abs(Bs - B).max() < 1e-6, "stream B equals dense B (max diff %.2e)"
              % np.abs(Bs - B).max())
        check(np.abs(As - A).max() < 1e-6 * A.max() * 10, "stream A equals dense A (max diff %.2e)"
              % np.abs(As - A).max())
        # anchors in the factor space of the unclipped iterate (what large N uses): this C needs
        # no clip, so they are the exact ones
        _, Bf, _, Sf = run_fit(d, "factor", *tight, "--mode", "stream", "--anchor-space", "factor")
        check(Sf == S and np.abs(Bf - B).max() < 1e-6,
              "factor-space anchors equal dense: %s vs %s" % (Sf, S))
        # thread count does not change a byte
        o1, _, _, _ = run_fit(d, "t1", *tight, "--mode", "stream", "--threads", "1")
        o2, _, _, _ = run_fit(d, "t2", *tight, "--mode", "stream", "--threads", "2")
        for f in ("B.npy", "A.npy", "anchors.txt", "alpha.npy"):
            same = open(os.path.join(o1, f), "rb").read() == open(os.path.join(o2, f), "rb").read()
            check(same, "%s identical for 1 and 2 threads" % f)
        # Douglas-Rachford
        out, Bd, Ad, Sd = run_fit(d, "dr", *tight, "--rectify", "dr", "--save-rectified")
        Xd = dr(C, K, 6)
        Xdj = np.load(os.path.join(out, "rectified.npy"))
        check(np.abs(Xdj - Xd).max() < 1e-10 * Xd.max(),
              "DR rectified C matches numpy (max diff %.2e)" % np.abs(Xdj - Xd).max())
        # no rectification, pseudo-inverse A (the 2013 baseline)
        out, Bn, An, Sn = run_fit(d, "none", "-k", str(K), "--rectify", "none", "--mode", "stream")
        Snr = anchors_gs(C, K)
        check(Sn == Snr, "none: anchors on raw C identical: %s vs %s" % (Sn, Snr))
        Bnr, Anr = recover(C, Snr, pinv=True)
        check(np.abs(Bn - Bnr).max() < 1e-6, "none: B matches (max diff %.2e)" % np.abs(Bn - Bnr).max())
        check(np.abs(An - Anr).max() < 1e-6 * np.abs(Anr).max() * 10,
              "none: pinv A matches (max diff %.2e)" % np.abs(An - Anr).max())
    if fails:
        print("%d failed" % len(fails))
        sys.exit(1)


if __name__ == "__main__":
    main()
