#!/usr/bin/env python3
"""test_eval_heldout_floor.py — `jsmf eval --corpus` scores a held-out token of probability 0 at
the floor instead of leaving it out (issue 38 item 3), by the rule of formats/outputs.md:
log((1 - lambda) p(w|d) + lambda / N), lambda = 1e-6, checked against numpy on a case small
enough to do by hand.

One topic (theta = 1, so p(w|d) is the row of B itself) over three words; the documents put
"golf", last by row, at an odd (scored) position. The sparse model S gives golf probability 0, the
dense model D gives it 0.01. Leaving golf out (the former rule) ranks S above D, the flattery this
fixes; scored at the floor, S falls below D. The former number stays in
heldout_loglik_per_token_nonzero."""
import json, os, subprocess, sys, tempfile
import numpy as np

JSMF = os.environ.get("JSMF", "build/jsmf")
LAMBDA = 1e-6
WORDS = ["alpha", "bravo", "golf"]           # rows 0, 1, 2
# Tokens by increasing row: even positions fit theta, odd ones are scored.
DOCS = ["alpha bravo",                      # scores bravo
        "golf bravo alpha bravo"]           # alpha bravo bravo golf: scores bravo, golf


def save_model(d, column):
    os.makedirs(d)
    np.save(os.path.join(d, "B.npy"), np.array(column, dtype="<f8").reshape(-1, 1))
    with open(os.path.join(d, "vocab.txt"), "w") as f:
        f.write("".join(w + "\n" for w in WORDS))


def reference(column):
    """Held-out numbers of a one-topic model: scored tokens bravo, bravo, golf."""
    p = np.array(column)[[1, 1, 2]]
    N = len(WORDS)
    smoothed = np.log((1 - LAMBDA) * p + LAMBDA / N)
    return dict(ll=smoothed.mean(), nonzero=np.log(p[p > 0]).mean(), tokens=3,
                zero=int((p == 0).sum()), floor=int(((1 - LAMBDA) * p < LAMBDA / N).sum()))


def run_eval(model, corpus):
    out = subprocess.run([JSMF, "eval", model, "--corpus", corpus, "--json", "-q"],
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def main():
    sparse, dense = [0.5, 0.5, 0.0], [0.495, 0.495, 0.01]
    with tempfile.TemporaryDirectory() as tmp:
        corpus = os.path.join(tmp, "heldout.txt")
        with open(corpus, "w") as f:
            f.write("\n".join(DOCS) + "\n")
        got = {}
        for name, column in (("sparse", sparse), ("dense", dense)):
            save_model(os.path.join(tmp, name), column)
            g = got[name] = run_eval(os.path.join(tmp, name), corpus)
            r = reference(column)
            print("%s: jsmf %.17g numpy %.17g; former rule %.17g; %d tokens, %d zero, %d floor"
                  % (name, g["heldout_loglik_per_token"], r["ll"],
                     g.get("heldout_loglik_per_token_nonzero", float("nan")), g["heldout_tokens"],
                     g["heldout_zero_prob_tokens"], g.get("heldout_floor_tokens", -1)),
                  file=sys.stderr)
            assert g["heldout_docs"] == 2, g["heldout_docs"]
            assert g["heldout_tokens"] == r["tokens"], (name, g["heldout_tokens"])  # golf counts
            assert g["heldout_zero_prob_tokens"] == r["zero"], (name, g)
            assert g["heldout_floor_tokens"] == r["floor"], (name, g)
            assert abs(g["heldout_loglik_per_token"] - r["ll"]) <= 1e-12 * abs(r["ll"]), (name, g)
            assert abs(g["heldout_loglik_per_token_nonzero"] - r["nonzero"]) \
                <= 1e-12 * abs(r["nonzero"]), (name, g)
        s, d = got["sparse"], got["dense"]
        assert s["heldout_zero_prob_tokens"] == 1 and s["heldout_floor_tokens"] == 1
        # golf costs log(lambda/3) = -15.0 now: the sparse model ranks below the dense one ...
        assert s["heldout_loglik_per_token"] < d["heldout_loglik_per_token"], (s, d)
        # ... where the former rule, golf left out, ranked it above.
        assert s["heldout_loglik_per_token_nonzero"] > d["heldout_loglik_per_token_nonzero"]
        assert abs(s["heldout_loglik_per_token_nonzero"] - np.log(0.5)) <= 1e-12
        # The text output names the floor and the former number.
        text = subprocess.run([JSMF, "eval", os.path.join(tmp, "sparse"), "--corpus", corpus,
                               "-q"], capture_output=True, text=True, check=True).stdout
        for key in ("heldout_floor_tokens", "heldout_zero_prob_tokens 1",
                    "heldout_loglik_nonzero", "-0.693147"):
            assert key in " ".join(text.split()), (key, text)
    print("ok: a token of probability 0 is scored at log(lambda/N); sparse %.6g < dense %.6g "
          "(former rule: %.6g > %.6g)" % (s["heldout_loglik_per_token"],
                                           d["heldout_loglik_per_token"],
                                           s["heldout_loglik_per_token_nonzero"],
                                           d["heldout_loglik_per_token_nonzero"]))


if __name__ == "__main__":
    main()
