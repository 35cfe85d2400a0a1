"""test_mpi_ingest.py — `mpirun -np P jsmf ingest` writes the store one process writes from the
same inputs, for P = 1, 2, 3: C exported byte for byte, the word statistics, input records, vocabulary
and counters equal (LMDB dumps). Inputs: plain text cut into line-aligned pieces, a zstd file and a
UCI file read whole, the shared kjv corpus when present. A rank killed with SIGKILL mid-ingest
leaves the store as it was; the job run again resumes its shards and ends with the same store.
Appending with mpirun equals appending without; a new store's vocabulary counted by the ranks
equals one process's count. Skips without mpirun or the MPI plugin."""
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ingest_corpus import JSMF, make_corpus, run, write_text  # noqa: E402

BUILD = os.environ.get("BUILD", "build")
CORPORA = os.environ.get("JSMF_CORPORA", "")
SEED = int(os.environ.get("JSMF_TEST_SEED", "5"))
ENV = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
       "OMPI_MCA_btl_vader_single_copy_mechanism": "none", "OMPI_MCA_rmaps_base_oversubscribe": "1",
       "JSMF_STORE_NOSYNC": "1"}


def mpirun_args(np_, *args):
    # the rows' machinery is under test: a store ingested here holds rows (as run() asks), also
    # under -np 1, which is one process and would take the default (documents)
    if args and args[0] == "ingest" and "--hold" not in args:
        args = args + ("--hold", "rows")
    return ["mpirun", "--oversubscribe", "-np", str(np_), JSMF] + [str(a) for a in args]


def mpi(np_, *args, ok=True, env=None):
    e = dict(os.environ)
    e.update(ENV)
    e.setdefault("JSMF_TEST_SMALL_MEM", "1")
    if env:
        e.update(env)
    p = subprocess.run(mpirun_args(np_, *args), capture_output=True, env=e, timeout=300)
    if ok and p.returncode != 0:
        raise AssertionError("mpirun -np %d jsmf %s: exit %d\n%s%s" % (
            np_, " ".join(map(str, args)), p.returncode, p.stdout.decode(errors="replace"),
            p.stderr.decode(errors="replace")))
    return p


def dump(store, db):
    return subprocess.run(["mdb_dump", "-s", db, store], capture_output=True, check=True).stdout


def content(store, tmp):
    """What two equal stores share: C's export, the word statistics, the input records, the
    vocabulary and the counters (not how C is cut into runs, nor the path)."""
    out = os.path.join(tmp, "c.mtx")
    run("export", store, "-o", out)
    with open(out, "rb") as f:
        c = f.read()
    info = json.loads(run("info", store, "--json").stdout)
    for k in ("store", "path", "runs", "bytes"):
        info.pop(k, None)
    return {"C": c, "wordstats": dump(store, "wordstats"), "inputs": dump(store, "inputs"),
            "vocab": dump(store, "vocab"), "info": info}


def assert_same(want, got, what):
    for k in want:
        assert want[k] == got[k], "%s: %s differs from the single-process store%s" % (
            what, k, "" if k != "info" else ": %s" % sorted(
                (i, want[k].get(i), got[k].get(i)) for i in set(want[k]) | set(got[k])
                if want[k].get(i) != got[k].get(i)))


def rank_pids(store):
    """PIDs of the jsmf processes of a job on `store` (not mpirun's)."""
    pids = []
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open("/proc/%s/cmdline" % d, "rb") as f:
                argv = f.read().split(b"\0")
        except OSError:
            continue
        if argv and argv[0].endswith(b"jsmf") and store.encode() in argv:
            pids.append(int(d))
    return pids


def killed_run(np_, store, args, rnd, env):
    """Start the job, SIGKILL one rank once its shard has started, and wait for the job's end.
    Returns True when the kill landed before the job finished."""
    e = dict(os.environ)
    e.update(ENV)
    e["JSMF_TEST_SMALL_MEM"] = "1"
    e.update(env)
    p = subprocess.Popen(mpirun_args(np_, "ingest", store, *args), env=e,
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    shard = os.path.join(store, "mpi-ingest", "rank-1", "data.mdb")
    t0 = time.monotonic()
    while not os.path.exists(shard) and p.poll() is None and time.monotonic() - t0 < 60:
        time.sleep(0.005)
    time.sleep(rnd.uniform(0.0, 0.05))
    pids = rank_pids(store)
    landed = False
    if p.poll() is None and pids:
        os.kill(rnd.choice(pids), signal.SIGKILL)
        landed = True
    err = p.communicate(timeout=120)[1]
    return landed and p.returncode != 0, err


def main():
    if not shutil.which("mpirun") or not os.path.exists(os.path.join(BUILD, "libjsmf_mpi.so")):
        print("no mpirun or no MPI plugin (libopenmpi-dev): MPI ingest not tested")
        sys.exit(77)
    rnd = random.Random(SEED)
    tmp = tempfile.mkdtemp(prefix="jsmf-mpi-ingest-")
    vocab, lines = make_corpus(seed=3, n_vocab=800, n_oov=60, n_docs=1400, max_len=60)
    kv = os.path.join(CORPORA, "kjv", "vocab.kjv.txt")
    if os.path.exists(kv):  # the real corpus's words too
        with open(kv, encoding="utf-8") as f:
            seen = set(vocab)
            vocab = vocab + [w for w in (l.split("\t")[0].strip() for l in f) if w and w not in seen]
    vpath = os.path.join(tmp, "vocab.txt")
    write_text(vpath, vocab)
    a, b = os.path.join(tmp, "a.txt"), os.path.join(tmp, "b.txt")
    write_text(a, lines[:1000])
    write_text(b, lines[1000:])
    bz = b + ".zst"
    subprocess.run(["zstd", "-q", "-f", b, "-o", bz], check=True)
    inputs = [a, bz]
    kjv = os.path.join(CORPORA, "kjv", "kjv.txt.zst")
    if os.path.exists(kjv):  # a real corpus: plain, cut into pieces
        k = os.path.join(tmp, "kjv.txt")
        with open(k, "wb") as f:
            subprocess.run(["zstd", "-dqc", kjv], stdout=f, check=True)
        inputs.append(k)
    args = inputs + ["--vocab", vpath, "--mem", "1M", "--accumulator=hash"]
    piece = {"JSMF_TEST_PIECE_BYTES": "20000"}  # several pieces a file, several files a rank

    ref = os.path.join(tmp, "ref")
    run("ingest", ref, *args)
    want = content(ref, tmp)

    shards = os.path.join(tmp, "shards")  # --shard-dir: a directory of the user's, kept
    os.mkdir(shards)
    for np_ in (1, 2, 3):
        st = os.path.join(tmp, "p%d" % np_)
        extra = ["--shard-dir", shards] if np_ == 2 else []
        p = mpi(np_, "ingest", st, *(args + extra), env=piece)
        assert_same(want, content(st, tmp), "mpirun -np %d" % np_)
        assert not os.path.exists(os.path.join(st, "mpi-ingest")), "shards left behind"
        assert os.path.isdir(shards) and not os.listdir(shards), "--shard-dir not emptied/kept"
        if np_ > 1:
            assert b"ranks" in p.stderr and b"pieces" in p.stderr, p.stderr
    print("P = 1, 2, 3: the store of one process")

    # a new store without --vocab: the counting pass is shared by the ranks, same vocabulary
    nv = [a, bz] + inputs[2:]
    refnv = os.path.join(tmp, "refnv")
    p1 = run("ingest", refnv, *nv, env={"JSMF_TEST_SMALL_MEM": "0"})
    want_nv = content(refnv, tmp)
    stnv = os.path.join(tmp, "p3nv")
    p3 = mpi(3, "ingest", stnv, *nv, env=dict(piece, JSMF_TEST_SMALL_MEM="0"))
    assert_same(want_nv, content(stnv, tmp), "mpirun -np 3, vocabulary counted by the ranks")
    line = [l for l in p1.stderr.splitlines() if b"vocabulary:" in l]
    assert line and line[0] in p3.stderr, (p1.stderr, p3.stderr)
    print("new store without --vocab, -np 3: the vocabulary and store of one process")

    # a second run with the same inputs: all complete, refused as without mpirun
    p = mpi(3, "ingest", os.path.join(tmp, "p3"), *args, ok=False)
    assert p.returncode != 0 and b"already ingested" in p.stderr, p.stderr
    assert p.stderr.count(b"already ingested") == 1, "one message, from rank 0: %r" % p.stderr

    # a UCI input (read whole by one rank) appended to an existing store
    uci = os.path.join(CORPORA, "kjv", "docword.kjv.txt.zst")
    if os.path.exists(uci):
        run("ingest", ref, uci, "--uci-vocab", kv)
        mpi(2, "ingest", os.path.join(tmp, "p2"), uci, "--uci-vocab", kv)
        want = content(ref, tmp)
        assert_same(want, content(os.path.join(tmp, "p2"), tmp), "appended UCI")
        print("append: the store of one process")

    # stdin cannot be shared: a clear error, the store unchanged
    before = content(os.path.join(tmp, "p2"), tmp)
    with open(a, "rb") as f:
        e = dict(os.environ)
        e.update(ENV)
        p = subprocess.run(mpirun_args(2, "ingest", os.path.join(tmp, "p2"), "-"), stdin=f,
                           capture_output=True, env=e, timeout=120)
    assert p.returncode != 0 and b"stdin ('-') cannot be shared" in p.stderr, p.stderr
    assert p.stderr.count(b"cannot be shared") == 1, "only the failing rank explains: %r" % p.stderr
    assert_same(before, content(os.path.join(tmp, "p2"), tmp), "after the refused stdin")

    # kill -9 of a rank mid-ingest, then the same job again: the same store (the synthetic
    # inputs only: many checkpoints in a short job)
    args = [a, bz] + args[len(inputs):]
    ref1 = os.path.join(tmp, "ref1")
    run("ingest", ref1, *args)
    want = content(ref1, tmp)
    landed = 0
    for trial in range(3):
        st = os.path.join(tmp, "k%d" % trial)
        ok, err = killed_run(3, st, args, rnd, piece)
        if ok:
            landed += 1
            info = json.loads(run("info", st, "--json").stdout) if os.path.exists(
                os.path.join(st, "data.mdb")) else {"docs": 0, "inputs": []}
            assert info["docs"] == 0 and not info["inputs"], \
                "a killed job changed the store: %r" % info
        p = mpi(3, "ingest", st, *args, env=piece, ok=False)
        if ok:  # killed before its commit: the rerun resumes the shards
            assert p.returncode == 0, p.stderr
            assert b"were dropped" not in p.stderr, "the rerun did not resume: %r" % p.stderr
        else:  # the kill came after the commit, or never: the rerun has nothing to do
            assert p.returncode == 0 or b"already ingested" in p.stderr, p.stderr
        assert_same(want, content(st, tmp), "killed and rerun (trial %d)" % trial)
        assert not os.path.exists(os.path.join(st, "mpi-ingest")), "shards left behind"
    assert landed >= 1, "no kill landed mid-ingest: the resume was not tested"
    print("kill -9 of a rank, rerun: the store of one process (%d kills landed)" % landed)
    shutil.rmtree(tmp)


if __name__ == "__main__":
    main()
