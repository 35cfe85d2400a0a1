#!/usr/bin/env python3
"""test_eval_infer.py — `jsmf infer` recovers theta on synthetic documents drawn from a known B
and theta (text and LDA-C input, .zst and stdin), agrees with a numpy reference fit, keeps the
input order for any thread count, and gives empty documents the uniform row."""
import json, os, shutil, subprocess, sys, tempfile
import numpy as np

from eval_reference import fit_theta

JSMF = os.environ.get("JSMF", "build/jsmf")


def run(args, **kw):
    return subprocess.run([JSMF] + args, capture_output=True, text=True, **kw)


def parse_tsv(text, K):
    rows = [l.split("\t") for l in text.splitlines()]
    assert all(len(r) == K + 1 for r in rows)
    return [int(r[0]) for r in rows], np.array([[float(x) for x in r[1:]] for r in rows])


def main():
    p = run(["infer", "--help"])
    assert p.returncode == 0 and "usage" in p.stdout
    rng = np.random.default_rng(3)
    N, K, D, L = 300, 6, 120, 1500
    vocab = ["tok" + "".join("abcdefghij"[int(c)] for c in "%03d" % i) for i in range(N)]
    B = np.zeros((N, K))
    for k in range(K):                       # 15 words each topic owns, plus shared words
        B[15 * k:15 * (k + 1), k] = rng.random(15) + 0.5
        B[15 * K:, k] = rng.random(N - 15 * K) ** 5
    B /= B.sum(0)
    theta = rng.dirichlet(np.full(K, 0.4), size=D)
    counts = np.array([rng.multinomial(L, B @ th) for th in theta])
    with tempfile.TemporaryDirectory() as tmp:
        m = os.path.join(tmp, "m")
        os.makedirs(m)
        np.save(os.path.join(m, "B.npy"), B)
        np.save(os.path.join(m, "A.npy"), np.full((K, K), 1.0 / K / K))
        open(os.path.join(m, "vocab.txt"), "w").write("".join(w + "\n" for w in vocab))
        text = os.path.join(tmp, "docs.txt")
        with open(text, "w") as f:
            for d in range(D):
                toks = np.repeat(np.arange(N), counts[d])
                rng.shuffle(toks)
                words = [vocab[w] for w in toks]
                if d == 5:
                    words += ["unknownword"] * 3
                f.write(" ".join(words) + "\n")
            f.write("nothing known here\n")    # document D: no in-vocabulary word
        out = run(["infer", m, text, "--tol", "1e-10", "--iters", "20000"])
        assert out.returncode == 0, out.stderr
        idx, est = parse_tsv(out.stdout, K)
        assert idx == list(range(D + 1))
        assert np.allclose(est[D], 1.0 / K)
        assert "1 without in-vocabulary words" in out.stderr, out.stderr
        l1 = np.abs(est[:D] - theta).sum(1)
        print("theta recovery: mean l1 %.4f, max %.4f (%d docs of %d tokens, K=%d)" % (l1.mean(), l1.max(), D, L, K))
        assert l1.mean() < 0.06 and l1.max() < 0.2
        ref = np.array([fit_theta(B[counts[d] > 0], counts[d][counts[d] > 0].astype(float)) for d in range(D)])
        dev = np.abs(est[:D] - ref).max()
        print("max deviation from the numpy reference fit: %.2e" % dev)
        assert dev < 1e-4

        # LDA-C input, compressed, read from stdin, one thread: same rows.
        ldac = os.path.join(tmp, "docs.ldac")
        with open(ldac, "w") as f:
            for d in range(D):
                ids = np.nonzero(counts[d])[0]
                f.write("%d%s\n" % (len(ids), "".join(" %d:%d" % (i, counts[d][i]) for i in ids)))
        if shutil.which("zstd"):
            subprocess.run(["zstd", "-q", "-f", ldac, "-o", ldac + ".zst"], check=True)
            src = ldac + ".zst"
        else:
            src = ldac
        with open(src, "rb") as f:
            out2 = subprocess.run([JSMF, "infer", m, "-", "--format", "ldac", "--threads", "1",
                                   "--tol", "1e-10", "--iters", "20000", "--batch", "7"],
                                  stdin=f, capture_output=True, text=True)
        assert out2.returncode == 0, out2.stderr
        idx2, est2 = parse_tsv(out2.stdout, K)
        assert idx2 == list(range(D))
        assert np.abs(est2 - est[:D]).max() < 1e-5

        # Thread count and batch size do not change a byte.
        a = run(["infer", m, text, "--threads", "1", "--batch", "5", "-q"]).stdout
        b = run(["infer", m, text, "--threads", "4", "-q"]).stdout
        assert a == b and len(a) > 0

        # JSON lines.
        out3 = run(["infer", m, text, "--output", "jsonl", "-q"])
        rows = [json.loads(l) for l in out3.stdout.splitlines()]
        assert [r["doc"] for r in rows] == list(range(D + 1))
        assert rows[5]["oov"] == 3 and rows[5]["tokens"] == L
        assert abs(sum(rows[0]["theta"]) - 1) < 1e-5

        assert run(["infer", m]).returncode == 2
        assert run(["infer", m, text, "--output", "xml"]).returncode == 2
        assert run(["infer", os.path.join(tmp, "nomodel"), text]).returncode == 1
    print("ok")


if __name__ == "__main__":
    main()
