"""test_fit_nights.py — a night started from yesterday's model (formats/model.md, "Nights"): kjv
shuffled into three nights, K=10, fitted night by night as examples/nightly.sh fits them. Checks:
`jsmf fit --previous` of a store that holds its documents starts from the previous model (no
spectral fit; summary.json says so: start_kind "previous", the prior's tokens = 0.3 x the
previous model's tokens, its fingerprint, the words admitted since, 10 to 40 passes, its anchors'
words kept) and holds its topics far better than a cold night (`--cold`: a new spectral fit) does; a
huge --prior-weight gives back yesterday's topics on the old words, new words ~0 (the words carried by
string); --prior-weight orders the drift; another K is a cold night with its lineage; --refine N passes;
the same command twice gives the same bytes; a killed night's rerun too."""
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ingest_corpus import JSMF  # noqa: E402

CORPORA = os.environ.get("JSMF_CORPORA", "/work/shared/corpora")
K = 10


def jsmf(*args, check=True, env=None):
    r = subprocess.run([JSMF, *args], capture_output=True, text=True,
                       env={**os.environ, **(env or {})})
    if check and r.returncode:
        sys.exit(f"FAIL: jsmf {' '.join(args)}: {r.returncode}\n{r.stderr}")
    return r


def summary(d):
    return json.load(open(f"{d}/summary.json"))


def model(d):
    words = [l.split("\t")[0].rstrip("\n") for l in open(f"{d}/vocab.txt") if not l.startswith("#")]
    return words, np.load(f"{d}/B.npy")


def anchor_words(d):
    return [l.split("\t")[-1].strip() for l in open(f"{d}/anchors.txt") if not l.startswith("#")]


def lineage(d):
    lin = summary(d)["lineage"]
    st = lin["topics"]
    new = sum(t["status"] == "new" for t in st)
    drift = np.mean([t["l1"] for t in st if t["l1"] is not None])
    return new, drift, lin


def on_old_words(prev, cur):
    """l1 of each topic to the same-numbered previous topic over the previous words, and the
    mass each puts on words the previous model lacks"""
    (wp, Bp), (wc, Bc) = prev, cur
    pos = {w: i for i, w in enumerate(wc)}
    rows = [pos[w] for w in wp]
    old = np.abs(Bc[rows] - Bp).sum(0)
    newmass = 1 - Bc[rows].sum(0)
    return old, newmass


def main():
    fails = []

    def check(ok, what):
        print(("ok   " if ok else "FAIL ") + what)
        if not ok:
            fails.append(what)

    lines = subprocess.run(["zstd", "-dc", f"{CORPORA}/kjv/kjv.txt.zst"], check=True,
                           capture_output=True).stdout.splitlines(True)
    random.Random(3).shuffle(lines)
    with tempfile.TemporaryDirectory(prefix="jsmf-nights-") as tmp:
        nights = []
        for i in range(3):
            f = f"{tmp}/n{i + 1}.txt"
            open(f, "wb").writelines(lines[len(lines) * i // 3: len(lines) * (i + 1) // 3])
            nights.append(f)
        store = f"{tmp}/store"
        jsmf("vocab", nights[0], "-o", f"{tmp}/vocab.txt", "-q")
        jsmf("ingest", store, nights[0], "--vocab", f"{tmp}/vocab.txt", "-q")
        jsmf("fit", store, "-k", str(K), "-o", f"{tmp}/m1", "-q")
        s1 = summary(f"{tmp}/m1")
        check(s1["kind"] == "refined" and s1["refine"]["start_kind"] == "anchor",
              "night 1: a cold refined fit")
        n1 = s1["n_words"]
        jsmf("ingest", store, nights[1], "-q")
        r = jsmf("fit", store, "-k", str(K), "-o", f"{tmp}/w2", "--previous", f"{tmp}/m1")
        check("no spectral fit" in r.stderr and "recovery" not in r.stderr,
              "night 2 says it started from the previous model, with no fit report")
        jsmf("fit", store, "-k", str(K), "-o", f"{tmp}/c2", "--previous", f"{tmp}/m1", "--cold",
             "-q")
        w2, c2 = summary(f"{tmp}/w2"), summary(f"{tmp}/c2")
        n2 = w2["n_words"]
        check(n2 > n1, f"night 2 admitted words ({n1} -> {n2})")
        rf = w2["refine"]
        check(rf["start_kind"] == "previous" and c2["refine"]["start_kind"] == "anchor",
              "the night starts from the previous model; --cold from a spectral fit")
        check(abs(rf["prior_tokens"] - 0.3 * s1["refine"]["tokens"]) <=
              1e-9 * s1["refine"]["tokens"],
              f"prior tokens {rf['prior_tokens']:.1f} = 0.3 x yesterday's {s1['refine']['tokens']}")
        check("prior_tokens" not in c2["refine"], "a cold night has no prior")
        start = w2["start"]
        check(start["previous"]["fingerprint"] == c2["lineage"]["previous"]["fingerprint"] and
              start["previous"]["n_words"] == n1 and start["admitted"] == n2 - n1 and
              start["store"]["fingerprint"] == c2["store"]["fingerprint"],
              "start records yesterday's fingerprint, its words, the words admitted, the store")
        check(10 <= rf["iterations"] <= 40 and rf["max_iterations"] == 40 and
              rf["tol"] == 3e-5,
              f"at least 10 passes, at most 40, stopped by the rise rule ({rf['iterations']})")
        check(anchor_words(f"{tmp}/w2") == anchor_words(f"{tmp}/m1"),
              "yesterday's anchors kept, mapped to the store's ids")
        wn, wd, _ = lineage(f"{tmp}/w2")
        cn, cd, _ = lineage(f"{tmp}/c2")
        print(f"     night 2: warm {wn} new, mean l1 {wd:.3f}; cold {cn} new, mean l1 {cd:.3f}")
        check(wn <= 2 and wd < 0.5 * cd, "the warm night holds the topics a cold one moves")
        # a huge hold: yesterday's topics on the old words, new words next to nothing
        jsmf("fit", store, "-k", str(K), "-o", f"{tmp}/h2", "--previous", f"{tmp}/m1",
             "--prior-weight", "1e6", "-q")
        old, newmass = on_old_words(model(f"{tmp}/m1"), model(f"{tmp}/h2"))
        check(old.max() < 0.02 and newmass.max() < 0.01,
              f"--prior-weight 1e6: topics within l1 {old.max():.4f} of yesterday's, "
              f"{newmass.max():.4f} on new words")
        drifts = []
        for h in ("0.03", "0.3", "3"):
            jsmf("fit", store, "-k", str(K), "-o", f"{tmp}/d{h}", "--previous", f"{tmp}/m1",
                 "--prior-weight", h, "-q")
            drifts.append(on_old_words(model(f"{tmp}/m1"), model(f"{tmp}/d{h}"))[0].mean())
        check(drifts[0] > drifts[1] > drifts[2],
              "--prior-weight 0.03, 0.3, 3: drift " + ", ".join(f"{d:.3f}" for d in drifts))
        check(open(f"{tmp}/d0.3/B.npy", "rb").read() == open(f"{tmp}/w2/B.npy", "rb").read(),
              "--prior-weight 0.3 is the default, and the night is deterministic")
        # another K: a cold night, its lineage recorded
        jsmf("fit", store, "-k", str(K + 2), "-o", f"{tmp}/k2", "--previous", f"{tmp}/m1", "-q")
        k2 = summary(f"{tmp}/k2")
        check(k2["refine"]["start_kind"] == "anchor" and k2["lineage"]["previous"]["k"] == K and
              len(k2["lineage"]["topics"]) == K + 2, "another K: a cold night with its lineage")
        jsmf("fit", store, "-k", str(K), "-o", f"{tmp}/p2", "--previous", f"{tmp}/m1",
             "--refine", "3", "-q")
        check(summary(f"{tmp}/p2")["refine"]["iterations"] == 3, "--refine 3: three passes")
        # night 3 from night 2, killed in its refinement and rerun: the uninterrupted bytes
        jsmf("ingest", store, nights[2], "-q")
        jsmf("fit", store, "-k", str(K), "-o", f"{tmp}/w3", "--previous", f"{tmp}/w2", "-q")
        r = jsmf("fit", store, "-k", str(K), "-o", f"{tmp}/x3", "--previous", f"{tmp}/w2", "-q",
                 check=False, env={"JSMF_TEST_EXIT_IN_REFINE": "4"})
        check(r.returncode == 99 and not os.path.exists(f"{tmp}/x3/B.npy"),
              "a night killed in its refinement writes no model")
        jsmf("fit", store, "-k", str(K), "-o", f"{tmp}/x3", "--previous", f"{tmp}/w2", "-q")
        check(open(f"{tmp}/x3/B.npy", "rb").read() == open(f"{tmp}/w3/B.npy", "rb").read(),
              "its rerun writes the uninterrupted night's topics")
        w3n, w3d, _ = lineage(f"{tmp}/w3")
        check(w3n <= 1, f"night 3: {w3n} new, mean l1 {w3d:.3f}")
        # a store of rows: the spectral fit, renumbered (no documents to start a night over)
        rows = f"{tmp}/rows"
        jsmf("ingest", rows, nights[0], "--vocab", f"{tmp}/vocab.txt", "--hold", "rows", "-q")
        jsmf("fit", rows, "-k", str(K), "-o", f"{tmp}/r1", "-q")
        jsmf("fit", rows, "-k", str(K), "-o", f"{tmp}/r2", "--previous", f"{tmp}/r1", "-q")
        check(summary(f"{tmp}/r2")["kind"] == "anchor", "a store of rows: the spectral fit")
        shutil.rmtree(rows)
    if fails:
        sys.exit(f"test_fit_nights: {len(fails)} failed")
    print("test_fit_nights: ok")


if __name__ == "__main__":
    main()
