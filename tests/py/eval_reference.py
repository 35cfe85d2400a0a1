"""Shared by the eval tests: the jsmf runner and the plain numpy reference of a document's topic
mixture (Fisher et al. 2020 App. E), so infer and eval are checked against one independent definition."""
import os
import subprocess

import numpy as np

JSMF = os.environ.get("JSMF", "build/jsmf")


def jsmf(*args, rc=0):
    """Run jsmf with args, require exit status rc, return stdout."""
    p = subprocess.run([JSMF] + list(args), capture_output=True, text=True)
    assert p.returncode == rc, (args, p.returncode, p.stderr)
    return p.stdout


def fit_theta(Bd, c, iters=200000, tol=1e-13):
    """theta maximising sum_w c_w log (Bd theta)_w over the simplex (Bd: the document's rows of
    B): plain EM from the centre, run until the duality gap is tiny."""
    K = Bd.shape[1]
    th = np.full(K, 1.0 / K)
    frac = c / c.sum()
    for _ in range(iters):
        g = Bd.T @ (frac / (Bd @ th))
        if g.max() - th @ g < tol:
            break
        th = th * g
        th /= th.sum()
    return th
