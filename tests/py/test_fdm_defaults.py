"""test_fdm_defaults.py — 'jsmf fdm' with no tuning flags on a planted corpus (tools/synth: N=500,
K=6, 10k documents): it warm-starts from the spectral fit of the same store, follows its
learning-rate schedule until the held-out loss stops improving, and ends with topics at least as
close to the truth as the fit's (l1 after Hungarian matching, 'jsmf eval --truth'), and from a
random start (--init none) within 0.65 of it by itself; a run killed
midway (after learning-rate halvings, or by SIGKILL after a checkpoint by wall time) and resumed
equals the uninterrupted one byte for byte;
--time stops a run cleanly and says so; held-out likelihood scores a fit, an fdm and bare topics
(B.npy + vocab.txt) alike."""
import json
import os
import subprocess
import sys
import tempfile
import time

ROOT = os.environ.get("ROOT", os.getcwd())
JSMF = os.environ.get("JSMF", os.path.join(ROOT, "build", "jsmf"))
PY = os.environ.get("PYTHON", sys.executable)


def jsmf(*args, ok=0, env=None):
    p = subprocess.run([JSMF, *map(str, args)], capture_output=True, text=True,
                       env=dict(os.environ, **(env or {})))
    assert p.returncode == ok, "jsmf %s: exit %d\n%s" % (" ".join(map(str, args)), p.returncode,
                                                         p.stderr)
    return p


def l1(model, truth):
    out = jsmf("eval", model, "--truth", truth, "--json").stdout
    return json.loads(out)["l1_error"]


def main():
    with tempfile.TemporaryDirectory() as d:
        corpus, truth = os.path.join(d, "p.txt"), os.path.join(d, "truth")
        subprocess.run([PY, os.path.join(ROOT, "tools", "synth", "synth.py"), "-o", corpus,
                        "--truth", truth, "--vocab", "500", "--topics", "6", "--docs", "10000",
                        "--seed", "3"], check=True, capture_output=True)
        vocab, store = os.path.join(d, "v.txt"), os.path.join(d, "s")
        jsmf("vocab", corpus, "-o", vocab, "--min-df", "1", "--max-df-frac", "1", "-q")
        jsmf("ingest", store, corpus, "--vocab", vocab, "-q")
        jsmf("fit", store, "-k", "6", "-o", os.path.join(d, "fit"), "--refine", "0", "-q")
        fit_l1 = l1(os.path.join(d, "fit"), truth)

        common = ["--device", "cpu", "--threads", "2"]
        m = os.path.join(d, "m")
        p = jsmf("fdm", store, "-k", "6", "-o", m, *common)
        assert "warm start: spectral fit of 6 topics" in p.stderr, p.stderr
        assert "(converged)" in p.stderr, p.stderr
        s = json.load(open(os.path.join(m, "summary.json")))
        assert s["parameters"]["init"] == "auto" and s["parameters"]["init_from"] == "model", s
        fdm_l1 = l1(m, truth)
        print("l1 to the truth: fit %.3f, fdm (defaults) %.3f after %d steps"
              % (fit_l1, fdm_l1, s["fdm"]["steps_done"]))
        assert fdm_l1 <= 0.36, fdm_l1
        assert fdm_l1 <= fit_l1, (fdm_l1, fit_l1)

        # a random start converges by itself: the best of the default starts goes on
        c = os.path.join(d, "c")
        jsmf("fdm", store, "-k", "6", "-o", c, *common, "--init", "none")
        s_c = json.load(open(os.path.join(c, "summary.json")))
        assert s_c["parameters"]["init_from"] == "words" and s_c["parameters"]["starts"] == 4
        cold_l1 = l1(c, truth)
        print("l1 to the truth from a random start: %.3f after %d steps"
              % (cold_l1, s_c["fdm"]["steps_done"]))
        assert cold_l1 <= 0.65, cold_l1

        # held-out likelihood (jsmf eval --corpus) scores a fit, an fdm and bare topics (B.npy
        # and vocab.txt only, as another tool would export them) by the same code
        bare = os.path.join(d, "bare")
        os.makedirs(bare)
        for f in ("B.npy", "vocab.txt"):
            with open(os.path.join(d, "fit", f), "rb") as src, open(os.path.join(bare, f), "wb") as dst:
                dst.write(src.read())
        ll = {}
        for name in ("fit", "m", "bare"):
            out = jsmf("eval", os.path.join(d, name), "--corpus", corpus, "--json").stdout
            ll[name] = json.loads(out)["heldout_loglik_per_token"]
        print("held-out log-likelihood per token: fit %.4f, fdm %.4f, bare fit topics %.4f"
              % (ll["fit"], ll["m"], ll["bare"]))
        assert ll["bare"] == ll["fit"], ll
        os.remove(os.path.join(d, "fit", "A.npy"))  # a model with summary.json needs its A
        jsmf("eval", os.path.join(d, "fit"), "--corpus", corpus, ok=1)

        # killed after a few halvings (checkpoint at the kill), resumed: the same model
        r = os.path.join(d, "r")
        half = s["fdm"]["steps_done"] * 2 // 3
        jsmf("fdm", store, "-k", "6", "-o", r, *common, ok=130,
             env={"JSMF_TEST_FDM_STOP_AFTER": str(half)})
        jsmf("fdm", store, "-k", "6", "-o", r, *common)
        for f in ("B.npy", "A.npy"):
            assert open(os.path.join(m, f), "rb").read() == open(os.path.join(r, f), "rb").read(), \
                "resumed run differs in " + f

        # checkpoints by wall time: killed (SIGKILL) after one, the rerun resumes from it and
        # ends with the same model as the uninterrupted run
        k = os.path.join(d, "k")
        proc = subprocess.Popen([JSMF, "fdm", store, "-k", "6", "-o", k, *common,
                                 "--checkpoint-every", "0.05s", "-q"],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        while proc.poll() is None and not os.path.exists(k + ".ckpt"):
            time.sleep(0.002)
        proc.kill()
        assert proc.wait() == -9, "the run ended before its first timed checkpoint"
        p = jsmf("fdm", store, "-k", "6", "-o", k, *common)
        sk = json.load(open(os.path.join(k, "summary.json")))
        print("killed after a timed checkpoint, resumed from step %d" % sk["fdm"]["resumed_from"])
        assert sk["fdm"]["resumed_from"] > 0 and "(resumed)" in p.stderr, p.stderr
        assert sk["parameters"]["checkpoint_seconds"] == 60, sk["parameters"]
        for f in ("B.npy", "A.npy"):
            assert open(os.path.join(m, f), "rb").read() == open(os.path.join(k, f), "rb").read(), \
                "run resumed from a timed checkpoint differs in " + f

        # --time: a clean stop, said as such
        t = os.path.join(d, "t")
        p = jsmf("fdm", store, "-k", "6", "-o", t, *common, "--init", "none", "--time", "0.3s")
        assert "(--time reached)" in p.stderr, p.stderr
        jsmf("fdm", store, "-k", "6", "-o", os.path.join(d, "x"), "--time", "soon", ok=2)
    print("ok: fdm defaults warm-start, converge, resume exactly and honour --time")


if __name__ == "__main__":
    main()
