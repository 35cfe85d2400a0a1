#!/usr/bin/python3
"""ap_numpy.py — the AP fit as a plain dense numpy program, the baseline of tools/bench/ap.

  ap_numpy.py C.npy K [ITERS] [OUTDIR]

The same algorithm as `jsmf fit --rectify ap` (Lee et al. JSMF): ITERS (default 15) alternating
projections with numpy.linalg.eigh (rank-K PSD, normalise, clip), anchors by column-pivoted QR
(Gram-Schmidt on the row-normalised rectified C), B by ADMM Douglas-Rachford (lambda 1.9, gamma
3.0, the objective scaled as jsmf does, up to 1000 iterations or a change below 1e-7) vectorised
over all words, Bayes' rule, A = D^-1 C_SS D^-1. Prints the seconds of each step as JSON; writes
OUTDIR/B.npy and OUTDIR/anchors.npy when OUTDIR is given. No anchor threshold: give jsmf
--min-anchor-df 0 to compare.
"""
import json
import os
import sys
import time

import numpy as np


def rectify(C, K, iters):
    N = C.shape[0]
    X = C.copy()
    for _ in range(iters):
        w, V = np.linalg.eigh(X)
        top = np.argsort(w)[::-1][:K]
        X = (V[:, top] * np.maximum(w[top], 0)) @ V[:, top].T
        X += (1 - X.sum()) / N ** 2
        np.maximum(X, 0, out=X)
    return X / X.sum()


def anchors(P, K):
    """Alg. 2: pivoted QR by residual norms, rows never modified."""
    u = (P ** 2).sum(1)
    S, Q = [], []
    for _ in range(K):
        u[S] = -np.inf
        s = int(np.argmax(u))
        q = P[s].copy()
        for _sweep in range(2):
            for ql in Q:
                q -= (ql @ q) * ql
        q /= np.linalg.norm(q)
        t = P @ q
        u -= t * t
        S.append(s)
        Q.append(q)
    return S


def project_simplex(V):
    """Row-wise Euclidean projection onto the probability simplex (Duchi et al. 2008)."""
    U = -np.sort(-V, axis=1)
    css = np.cumsum(U, axis=1) - 1
    idx = np.arange(1, V.shape[1] + 1)
    cond = U - css / idx > 0
    rho = cond.shape[1] - 1 - np.argmax(cond[:, ::-1], axis=1)
    theta = css[np.arange(V.shape[0]), rho] / (rho + 1)
    return np.maximum(V - theta[:, None], 0)


def recover_b(X, S, lam=1.9, gamma=3.0, tol=1e-7, maxit=1000):
    c = X.sum(1)
    P = X / np.where(c > 0, c, 1)[:, None]
    U = P[S]                                  # K x N
    H = U @ U.T
    hs = len(S) / np.trace(H)
    H *= hs
    R = (P @ U.T) * hs                        # N x K right-hand sides
    F = np.linalg.inv(gamma * H + np.eye(len(S)))
    f = gamma * R
    y = project_simplex(R @ np.linalg.pinv(H).T)
    q = y.copy()
    active = np.ones(len(c), dtype=bool)
    for _ in range(maxit):
        p = (2 * y[active] - q[active] + f[active]) @ F.T
        q[active] += lam * (p - y[active])
        yn = project_simplex(q[active])
        change = np.abs(yn - y[active]).max(1)
        y[active] = yn
        idx = np.flatnonzero(active)
        active[idx[change <= tol]] = False
        if not active.any():
            break
    y[S] = np.eye(len(S))
    B = y * c[:, None]
    return B / B.sum(0)


def main():
    C = np.load(sys.argv[1])
    K = int(sys.argv[2])
    iters = int(sys.argv[3]) if len(sys.argv) > 3 else 15
    t = {}
    t0 = time.time()
    X = rectify(C, K, iters)
    t["rectify"] = time.time() - t0
    t1 = time.time()
    c = X.sum(1)
    P = X / np.where(c > 0, c, 1)[:, None]
    S = anchors(P, K)
    t["anchors"] = time.time() - t1
    t2 = time.time()
    B = recover_b(X, S)
    d = B[S, np.arange(K)]
    A = X[np.ix_(S, S)] / np.outer(d, d)
    A /= A.sum()
    t["recover"] = time.time() - t2
    t["total"] = time.time() - t0
    if len(sys.argv) > 4:
        os.makedirs(sys.argv[4], exist_ok=True)
        np.save(os.path.join(sys.argv[4], "B.npy"), B)
        np.save(os.path.join(sys.argv[4], "anchors.npy"), np.array(S))
    print(json.dumps(t))


if __name__ == "__main__":
    main()
