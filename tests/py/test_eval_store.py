#!/usr/bin/env python3
"""test_eval_store.py — `jsmf eval --store` end to end on a small synthetic corpus: ingest, fit,
then the store metrics of eval agree with the fit's own summary.json and with numpy on the
model's A and B (Dominancy, Sparsity, Entropy need only the model); a store of another
vocabulary is refused with exit 1. Skips until ingest and fit are built."""
import json, os, subprocess, tempfile
import numpy as np

from eval_reference import jsmf

ROOT = os.environ.get("ROOT", ".")
os.environ["JSMF_TEST_SMALL_MEM"] = "1"  # fit --mem of a few KiB: C of a tiny store streamed
PY = os.environ.get("PYTHON", "/usr/bin/python3")


def main():
    with tempfile.TemporaryDirectory() as tmp:
        t = lambda name: os.path.join(tmp, name)
        subprocess.run([PY, os.path.join(ROOT, "tools/synth/synth.py"), "-o", t("corpus.txt"),
                        "--truth", t("truth"), "--vocab", "300", "--topics", "6", "--docs", "1500",
                        "--mean-len", "60", "--seed", "2"], check=True, capture_output=True)
        jsmf("ingest", t("store"), t("corpus.txt"), "--vocab", t("truth/vocab.txt"), "-q")
        jsmf("fit", t("store"), "-k", "6", "-o", t("model"), "--refine", "0", "-q")
        m = json.loads(jsmf("eval", t("model"), "--store", t("store"), "--truth", t("truth"), "--json", "-q"))
        summary = json.load(open(t("model/summary.json")))
        print("eval --store:", {k: m[k] for k in ("recovery", "approximation", "dominancy", "specificity",
                                                 "dissimilarity", "sparsity", "entropy", "l1_error")})
        assert m["store_docs"] == 1500 - sum(1 for l in open(t("corpus.txt")) if len(l.split()) < 5)
        for k in ("recovery", "approximation", "dominancy", "specificity", "dissimilarity", "sparsity", "entropy"):
            assert m[k] is not None and np.isfinite(m[k]), k
            ref = summary.get("metrics", {}).get(k)
            if ref is not None:
                assert abs(m[k] - ref) <= 1e-9 * max(1, abs(ref)), (k, m[k], ref)
        B, A = np.load(t("model/B.npy")), np.load(t("model/A.npy"))
        K, N = A.shape[0], B.shape[0]
        assert abs(m["dominancy"] - np.mean(np.diag(A) / A.sum(1))) < 1e-9
        sp = np.mean((np.sqrt(N) - np.abs(B).sum(0) / np.sqrt((B ** 2).sum(0))) / (np.sqrt(N) - 1))
        assert abs(m["sparsity"] - sp) < 1e-9
        assert m["l1_error"] < 0.5, m["l1_error"]   # an empirical C of 1500 short documents
        # --mem where C fits half of it in float32 but not in double: the sketch and the fit's
        # metrics use the float32 copy, and recovery (a difference of squares) moves by ~2e-5
        # relative; smaller still, C is streamed and the two are left to eval
        info = json.loads(jsmf("info", t("store"), "--json"))
        f32 = info["nnz"] * 8 + (info["n_words"] + 1) * 12
        for mem, want in ((2 * (f32 + info["nnz"] * 2), "float32"), (f32, "streamed")):
            jsmf("fit", t("store"), "-k", "6", "-o", t("model-" + want), "--refine", "0", "-q",
                 "--mem", str(mem))
            sm = json.load(open(t("model-%s/summary.json" % want)))["metrics"]
            for k in ("recovery", "approximation"):
                if want == "streamed":
                    assert sm.get(k) is None, (want, k, sm.get(k))
                else:
                    assert abs(sm[k] - m[k]) <= 1e-4 * abs(m[k]), (want, k, sm[k], m[k])
        # A store over another vocabulary is refused.
        subprocess.run([PY, os.path.join(ROOT, "tools/synth/synth.py"), "-o", t("other.txt"),
                        "--truth", t("other"), "--vocab", "200", "--topics", "3", "--docs", "50",
                        "--seed", "9"], check=True, capture_output=True)
        jsmf("ingest", t("store2"), t("other.txt"), "--vocab", t("other/vocab.txt"), "-q")
        jsmf("eval", t("model"), "--store", t("store2"), rc=1)
    print("ok")


if __name__ == "__main__":
    main()
