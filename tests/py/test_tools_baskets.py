#!/usr/bin/python3
"""test_tools_baskets.py — tools/synth/baskets.c (build/baskets), the streaming basket generator:
its truth is a model (B columns sum to 1, A = the closed form, anchors occur in one topic, at most
--item-topics topics an item), the baskets' item frequencies and pair statistics agree with the
planted B and A (per-basket z-scores: baskets are independent draws) and disagree with a wrong A
(the test can fail), lengths, determinism by seed, .zst = stdout, bad options, and that jsmf
reads the truth (eval --truth of itself is 0) and recovers it from the baskets."""
import os
import subprocess
import sys
import tempfile

import numpy as np

ROOT = os.environ.get("ROOT", os.getcwd())
BUILD = os.environ.get("BUILD", "build")
BASKETS = os.path.join(ROOT, BUILD, "baskets")
JSMF = os.environ.get("JSMF", os.path.join(ROOT, "build", "jsmf"))
failures = []


def check(cond, what):
    print(("ok:   " if cond else "FAIL: ") + what)
    if not cond:
        failures.append(what)


def gen(*args, check_rc=True):
    r = subprocess.run([BASKETS, *args], capture_output=True)
    if check_rc and r.returncode:
        print(r.stderr.decode())
        raise SystemExit("baskets failed: %s" % (args,))
    return r


def jsmf(*args):
    r = subprocess.run([JSMF, *args], capture_output=True, text=True)
    if r.returncode:
        print(r.stderr)
        raise SystemExit("jsmf failed: %s" % (args,))
    return r.stdout


def read_baskets(data, n):
    """Dense M x N counts of the baskets (rows of B are sku<row+1>)."""
    lines = data.decode().split("\n")[:-1]
    h = np.zeros((len(lines), n))
    for d, line in enumerate(lines):
        ids = np.array([int(t[3:]) - 1 for t in line.split()], dtype=np.int64)
        np.add.at(h[d], ids, 1)
    return h


def zscores(per_doc, expected):
    """Per-basket statistics (M x P) against their expectation: z of the mean over baskets."""
    dev = per_doc - expected
    return dev.sum(0) / np.sqrt((dev ** 2).sum(0))


def pair_stats(h, probes):
    """u^T C_d v for every pair of probe columns, per basket: C_d = (h h^T - diag h) / (n(n-1))."""
    n = h.sum(1)
    keep = n >= 2
    h, n = h[keep], n[keep]
    w = 1.0 / (n * (n - 1))
    hu = h @ probes
    p = probes.shape[1]
    iu = np.triu_indices(p)
    cross = (hu[:, :, None] * hu[:, None, :])[:, iu[0], iu[1]]
    diag = h @ (probes[:, iu[0]] * probes[:, iu[1]])
    return w[:, None] * (cross - diag), iu


def main():
    if not os.access(BASKETS, os.X_OK):
        print("skip: %s not built" % BASKETS)
        return 77
    n, k, c, j = 150, 5, 2, 2
    tmp = tempfile.mkdtemp(prefix="jsmf-baskets-")
    truth = os.path.join(tmp, "truth")
    opts = ["--items", str(n), "--topics", str(k), "--item-topics", str(c), "--doc-topics", str(j),
            "--mean-len", "12", "--tokens", "600000", "--seed", "7"]
    data = gen(*opts, "-o", "-", "--truth", truth).stdout
    b = np.load(os.path.join(truth, "B.npy"))
    a = np.load(os.path.join(truth, "A.npy"))
    check(b.shape == (n, k) and a.shape == (k, k), "B is N x K, A is K x K")
    check(np.allclose(b.sum(0), 1, atol=1e-12) and abs(a.sum() - 1) < 1e-12,
          "B's columns and A sum to 1")
    beta, s = 1.0, j * 1.0
    a_diag = j / k * beta * (beta + 1) / (s * (s + 1))
    a_off = j * (j - 1) / (k * (k - 1)) * beta * beta / (s * (s + 1))
    ref = np.full((k, k), a_off) + np.eye(k) * (a_diag - a_off)
    check(np.allclose(a, ref, rtol=1e-12, atol=0), "A is E[theta theta^T] of the subset mixture")
    nz = (b > 0).sum(1)
    check(nz.max() <= c and nz.min() >= 1, "an item sits in 1..c topics")
    anchors = [int(line.split("\t")[1]) for line in open(os.path.join(truth, "anchors.txt"))]
    check(sorted(int(np.argmax(b[r])) for r in anchors) == list(range(k))
          and all(nz[r] == 1 for r in anchors), "each topic's anchor occurs in it alone")
    check(all(b[anchors[t], t] >= b[:, t][nz == c].max() - 1e-15 for t in range(k)),
          "an anchor is as probable as its topic's top member")

    h = read_baskets(data, n)
    lens = h.sum(1)
    check(abs(len(lens) - 50000) < 10 and lens.min() >= 2 and abs(lens.mean() - 12) < 0.1,
          "%d baskets (600,000 / 12) of mean length %.3f (12), none shorter than --min-len 2"
          % (len(lens), lens.mean()))

    # item frequencies: E[h_d] = n_d B p(z), p(z) = A 1
    pz = a.sum(1)
    zf = zscores(h, lens[:, None] * (b @ pz)[None, :])
    check(np.mean(zf ** 2) < 1.5 and np.abs(zf).max() < 5,
          "item frequencies match B p(z): mean z^2 %.2f, max |z| %.2f" % (np.mean(zf ** 2),
                                                                          np.abs(zf).max()))
    skew = np.linspace(0.5, 1.5, k)
    zw = zscores(h, lens[:, None] * (b @ (pz * skew / (pz * skew).sum()))[None, :])
    check(np.mean(zw ** 2) > 10, "a wrong p(z) is detected: mean z^2 %.1f" % np.mean(zw ** 2))

    # pairs: u^T C v for u, v among B's columns and the anchors' indicators (not two anchors:
    # that statistic rests on a few baskets, far from normal)
    probes = np.hstack([b, np.eye(n)[:, anchors]])
    per_doc, iu = pair_stats(h, probes)
    some_topic = iu[0] < k
    per_doc, iu = per_doc[:, some_topic], (iu[0][some_topic], iu[1][some_topic])
    c_true = b @ a @ b.T
    zp = zscores(per_doc, (probes.T @ c_true @ probes)[iu])
    check(np.mean(zp ** 2) < 2 and np.abs(zp).max() < 5,
          "pair statistics match B A B^T: %d probes, mean z^2 %.2f, max |z| %.2f"
          % (len(zp), np.mean(zp ** 2), np.abs(zp).max()))
    a_indep = np.outer(pz, pz)  # the same marginals, no topic structure in the pairs
    zi = zscores(per_doc, (probes.T @ (b @ a_indep @ b.T) @ probes)[iu])
    check(np.mean(zi ** 2) > 100, "pairs under a wrong A (p(z) p(z)^T) are detected: mean z^2 %.0f"
          % np.mean(zi ** 2))

    # determinism, seeds, .zst
    check(gen(*opts, "-o", "-").stdout == data, "the same seed gives the same bytes")
    other = gen(*(opts[:-1] + ["8"]), "-o", "-").stdout
    check(other != data, "another seed gives other baskets")
    zst = os.path.join(tmp, "c.items.zst")
    gen(*opts, "-o", zst, "--truth", truth, "--force")
    dec = subprocess.run(["zstd", "-dc", zst], capture_output=True).stdout
    check(dec == data, ".zst output decompresses to the stdout output")
    r = gen(*opts, "-o", "-", "--truth", truth, check_rc=False)
    check(r.returncode != 0 and b"already exists" in r.stderr, "an existing truth is not replaced")
    for bad in (["--items", "5", "--topics", "5"], ["--doc-topics", "9", "--topics", "5"],
                ["--tokens", "10", "--docs", "3"], ["--mean-len", "-1"], ["--items", "x"]):
        r = gen(*bad, "-o", "-", check_rc=False)
        check(r.returncode == 2 and r.stderr.startswith(b"baskets:"), "refused: %s" % bad)

    # jsmf reads the truth, and recovers it from the baskets (l1 well under a random model's)
    out = jsmf("eval", truth, "--truth", truth, "--json")
    check('"l1_error": 0' in out.replace(" ", "").replace('"l1_error":0', '"l1_error": 0'),
          "jsmf eval --truth reads the truth (l1 to itself 0)")
    vocab = os.path.join(tmp, "vocab.txt")
    jsmf("vocab", zst, "--format", "items", "-o", vocab, "-q")
    store = os.path.join(tmp, "store")
    jsmf("ingest", store, zst, "--format", "items", "--vocab", vocab, "-q")
    model = os.path.join(tmp, "model")
    jsmf("fit", store, "-k", str(k), "-o", model, "-q")
    l1 = float(jsmf("eval", model, "--truth", truth, "--json").split('"l1_error":')[1]
               .split(",")[0].split("}")[0])
    rng = np.random.default_rng(1)
    perm = np.array([rng.permutation(k) for _ in range(n)])
    rand = np.take_along_axis(b, perm, axis=1)
    rand /= rand.sum(0, keepdims=True)
    rdir = os.path.join(tmp, "random")
    os.mkdir(rdir)
    np.save(os.path.join(rdir, "B.npy"), rand)
    with open(os.path.join(tmp, "truth", "vocab.txt")) as f, \
            open(os.path.join(rdir, "vocab.txt"), "w") as g:
        g.write(f.read())
    l1r = float(jsmf("eval", rdir, "--truth", truth, "--json").split('"l1_error":')[1]
                .split(",")[0].split("}")[0])
    check(l1 < 0.5 * l1r, "the fit recovers the topics: l1 %.3f, random %.3f" % (l1, l1r))
    subprocess.run(["rm", "-rf", tmp])
    if failures:
        print("%d failures" % len(failures))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
