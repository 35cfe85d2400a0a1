#!/usr/bin/env python3
"""test_eval_synth.py — infer and eval on a semi-synthetic corpus from tools/synth: `jsmf infer`
with the true topics recovers the documents' true mixtures; a model fitted (when `jsmf fit` is
built) on the population C = B A B^T matches the truth after Hungarian matching (l1 error ~ 0)
and scores the same held-out likelihood and coherence as the truth itself."""
import json, os, subprocess, tempfile
import numpy as np

from eval_reference import jsmf

ROOT = os.environ.get("ROOT", ".")
PY = os.environ.get("PYTHON", "/usr/bin/python3")


def main():
    with tempfile.TemporaryDirectory() as tmp:
        t = lambda name: os.path.join(tmp, name)
        subprocess.run([PY, os.path.join(ROOT, "tools/synth/synth.py"), "-o", t("corpus.txt"),
                        "--truth", t("truth"), "--vocab", "500", "--topics", "8", "--docs", "400",
                        "--mean-len", "300", "--seed", "5", "--theta", t("theta.npy"),
                        "--exact-c", t("C.npy")], check=True, capture_output=True)
        theta = np.load(t("theta.npy"))
        est = np.array([[float(x) for x in l.split("\t")[1:]]
                        for l in jsmf("infer", t("truth"), t("corpus.txt"), "-q").splitlines()])
        assert est.shape == theta.shape
        l1 = np.abs(est - theta).sum(1)
        print("infer with the true topics: theta l1 mean %.4f, 90th percentile %.4f" % (l1.mean(), np.percentile(l1, 90)))
        assert l1.mean() < 0.1 and np.percentile(l1, 90) < 0.2

        truth_m = json.loads(jsmf("eval", t("truth"), "--corpus", t("corpus.txt"), "--json", "-q"))
        assert truth_m["heldout_docs"] == 400 and truth_m["coherence_missing_words"] == 0
        jsmf("fit", t("C.npy"), "-k", "8", "-o", t("model"), "-q")
        m = json.loads(jsmf("eval", t("model"), "--truth", t("truth"), "--corpus", t("corpus.txt"), "--json", "-q"))
        print("fit on the population C: l1 error %.3g; heldout %.6f (truth %.6f); coherence %.4f (truth %.4f)"
              % (m["l1_error"], m["heldout_loglik_per_token"], truth_m["heldout_loglik_per_token"],
                 m["coherence"], truth_m["coherence"]))
        assert m["l1_error"] < 1e-3
        assert sorted(m["l1_match"]) == list(range(8))
        assert abs(m["heldout_loglik_per_token"] - truth_m["heldout_loglik_per_token"]) < 1e-3
        assert abs(m["coherence"] - truth_m["coherence"]) < 1e-6 * abs(truth_m["coherence"]) + 1e-9
    print("ok")


if __name__ == "__main__":
    main()
