"""test_mpi_fit.py — `mpirun -np P jsmf fit` makes the model one process makes, for P = 2, 3:
the same anchors, B, A and alpha within 1e-10 (the design makes them equal bit for bit: each rank
computes its rows of every product with C exactly as one process would, in the same blocks, and
holds the same rows of the compressed iterate's factor, whose products over all rows add the
same per-chunk partials in the same order),
with C held in memory (each rank its rows) and streamed from the store (float32 products,
--mem 6M with the tests' small-budget switch), and for the AP rectification and a hierarchy.
A bad option fails on every rank with one message. Skips without mpirun or the MPI plugin."""
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ingest_corpus import JSMF, make_corpus, run, write_text  # noqa: E402

BUILD = os.environ.get("BUILD", "build")
# one OpenMP thread a rank: ranks on one machine share its cores
ENV = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1", "OMP_NUM_THREADS": "1",
       "OMPI_MCA_btl_vader_single_copy_mechanism": "none"}  # containers may forbid ptrace (CMA)


def mpi(np_, *args, ok=True, env=None):
    e = dict(os.environ)
    e.update(ENV)
    if env:
        e.update(env)
    p = subprocess.run(["mpirun", "--oversubscribe", "-np", str(np_), JSMF] + [str(a) for a in args],
                       capture_output=True, env=e, timeout=300)
    if ok and p.returncode != 0:
        raise AssertionError("mpirun -np %d jsmf %s: exit %d\n%s" % (
            np_, " ".join(map(str, args)), p.returncode, p.stderr.decode(errors="replace")))
    return p


def model(d):
    with open(os.path.join(d, "anchors.txt"), encoding="utf-8") as f:
        anchors = f.read()
    return anchors, {a: np.load(os.path.join(d, a + ".npy")) for a in ("B", "A", "alpha")}


def assert_same(ref, got, what):
    ra, rm = model(ref)
    ga, gm = model(got)
    assert ra == ga, "%s: anchors differ" % what
    for k in rm:
        err = float(np.max(np.abs(rm[k] - gm[k])))
        assert err <= 1e-10, "%s: %s differs by %g" % (what, k, err)
    return max(float(np.max(np.abs(rm[k] - gm[k]))) for k in rm)


def main():
    if not shutil.which("mpirun") or not os.path.exists(os.path.join(BUILD, "libjsmf_mpi.so")):
        print("no mpirun or no MPI plugin (libopenmpi-dev): MPI fit not tested")
        sys.exit(77)
    tmp = tempfile.mkdtemp(prefix="jsmf-mpi-fit-")
    # N above two chunks of the fit's reductions (2048 rows): every rank of 3 holds rows of C
    # and of the factor, and the factor's products are added over ranks
    vocab, lines = make_corpus(seed=9, n_vocab=4700, n_oov=20, n_docs=3000, max_len=60)
    vpath, cpath = os.path.join(tmp, "vocab.txt"), os.path.join(tmp, "c.txt")
    write_text(vpath, vocab)
    write_text(cpath, lines)
    store = os.path.join(tmp, "store")
    run("ingest", store, cpath, "--vocab", vpath, env={"JSMF_TEST_SMALL_MEM": "0"})
    cases = [("in memory", ["-k", "12"], {}),
             ("streamed", ["-k", "12", "--mem", "6M"], {"JSMF_TEST_SMALL_MEM": "1"}),
             ("AP", ["-k", "8", "--rectify", "ap"], {}),
             ("hierarchy", ["-k", "12", "--levels", "4"], {})]
    for name, args, env in cases:
        ref = os.path.join(tmp, "ref")
        p = run("fit", store, "-o", ref, "--force", *args, env=dict(ENV, **env))
        if name == "streamed":  # C read from the store on every pass, not held
            assert b"read C: 8 scans" in p.stderr, p.stderr
        for np_ in (2, 3):
            out = os.path.join(tmp, "p%d" % np_)
            p = mpi(np_, "fit", store, "-o", out, "--force", *args, env=env)
            held = [l for l in p.stderr.decode().splitlines() if "ranks: each holds" in l]
            assert len(held) == 1, p.stderr
            lo = int(held[0].split("holds ")[1].split()[0])
            assert lo > 0, "%s, -np %d: a rank holds no rows: %s" % (name, np_, held[0])
            if name != "AP":  # AP keeps its factor whole on every rank
                assert held[0].endswith("rows of C and of the factor"), held[0]
            err = assert_same(ref, out, "%s, -np %d" % (name, np_))
            if "--levels" in args:
                assert_same(os.path.join(ref, "level1"), os.path.join(out, "level1"),
                            "%s level 1, -np %d" % (name, np_))
            print("%s, -np %d: the model of one process (largest difference %g)" % (name, np_, err))
    p = mpi(3, "fit", store, "-o", os.path.join(tmp, "bad"), "-k", "12", "--mode", "dense",
            ok=False)
    assert p.returncode != 0 and p.stderr.count(b"--mode dense needs") == 1, p.stderr
    shutil.rmtree(tmp)


if __name__ == "__main__":
    main()
