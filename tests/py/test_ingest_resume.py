"""test_ingest_resume.py — an ingest interrupted at many points (right after a checkpoint, inside
a checkpoint's transaction, kill -9 at random times), each time resumed by the same command,
ends with exactly the store of an uninterrupted run: exports compared byte for byte, counters
and input records equal. Two inputs in one command, a tiny budget (many checkpoints), and
stdin, which resumes when the same stream is piped again."""
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ingest_corpus import JSMF, export_bytes, make_corpus, run, write_text  # noqa: E402

SEED = int(os.environ.get("JSMF_TEST_SEED", "2024"))
KEYS = ("docs", "docs_dropped", "tokens", "tokens_dropped", "oov_tokens", "nnz")


def summary(store):
    info = json.loads(run("info", store, "--json").stdout)
    ins = [(i["path"], i["state"], i["docs"], i["tokens"], i["next_offset"]) for i in info["inputs"]]
    return {k: info[k] for k in KEYS}, sorted(ins)


def run_databases(store):
    """Names of the run databases in the store's LMDB file (live and dead)."""
    out = subprocess.run(["mdb_stat", "-a", store], capture_output=True, check=True).stdout
    return [l.split()[2].rstrip(b":").decode() for l in out.splitlines()
            if l.startswith(b"Status of run.")]


def assert_no_dead_runs(store):
    info = json.loads(run("info", store, "--json").stdout)
    names = run_databases(store)
    assert len(names) == info["runs"], "dead runs left behind: %s, %d live" % (names, info["runs"])


def main():
    rnd = random.Random(SEED)
    tmp = tempfile.mkdtemp(prefix="jsmf-ingest-resume-")
    vocab, lines = make_corpus(seed=11, n_vocab=1500, n_oov=100, n_docs=900, max_len=80)
    vpath = os.path.join(tmp, "vocab.txt")
    write_text(vpath, vocab)
    a, b = os.path.join(tmp, "a.txt"), os.path.join(tmp, "b.txt")
    write_text(a, lines[:500])
    # one long document: more distinct pairs than the 1M budget's tables hold
    write_text(b, lines[500:700] + [" ".join(vocab[:400])] + lines[700:])
    args = [a, b, "--vocab", vpath, "--mem", "1M", "--accumulator=hash", "--threads", "2",
            "--hold", "rows"]  # the rows machinery: checkpoint windows, kills

    ref = os.path.join(tmp, "ref.store")
    t0 = time.monotonic()
    p = run("ingest", ref, *args)
    t_ref = time.monotonic() - t0  # kills are timed relative to it (sanitizer builds are slow)
    flushes = int(p.stderr.split(b" checkpoints")[0].split()[-1])
    assert b"1 document had more word pairs than --mem holds" in p.stderr, p.stderr
    assert flushes >= 30, "want many checkpoints, got %d" % flushes
    want_bytes, want_info = export_bytes(ref, tmp), summary(ref)

    # 0. the other accumulators: all dense; dense block for frequent words + hash tables
    for extra in (["--mem", "64M"], ["--mem", "8M"]):
        s = os.path.join(tmp, "acc%s.store" % extra[1])
        p = run("ingest", s, a, b, "--vocab", vpath, *extra)
        assert export_bytes(s, tmp) == want_bytes, "accumulator with %s differs" % extra
        assert summary(s) == want_info
    hybrid = [a, b, "--vocab", vpath, "--mem", "8M", "--threads", "2", "--accumulator=hash"]
    store = os.path.join(tmp, "hybrid.store")
    run("ingest", store, *hybrid, ok=97, env={"JSMF_TEST_EXIT_AFTER_COMMIT": "1"})
    run("ingest", store, *hybrid, ok=98, env={"JSMF_TEST_EXIT_IN_COMMIT": "2"})
    run("ingest", store, *hybrid)
    assert export_bytes(store, tmp) == want_bytes, "interrupted hybrid accumulator differs"

    # 0b. the kept documents (the default when C's triangle does not fit): several windows at
    # 1M on a larger input, killed after and inside checkpoints and while staging a run or a
    # compaction, each time resumed, equal to the dense accumulator's store
    big = os.path.join(tmp, "big.txt")
    write_text(big, lines * 10)
    dref = os.path.join(tmp, "docs-ref.store")
    run("ingest", dref, big, "--vocab", vpath, "--mem", "64M")
    docs = [big, "--vocab", vpath, "--mem", "1M", "--threads", "2", "--accumulator=docs"]
    store = os.path.join(tmp, "docs.store")
    windows = int(run("ingest", os.path.join(tmp, "docs-once.store"), *docs).stderr
                  .split(b" checkpoints")[0].split()[-1])
    assert windows >= 4, "want several document windows, got %d" % windows
    for env in ({"JSMF_TEST_EXIT_AFTER_COMMIT": "1"}, {"JSMF_TEST_EXIT_IN_COMMIT": "2"},
                {"JSMF_TEST_EXIT_IN_STAGE": "3", "JSMF_STORE_TXN_BYTES": "8192"},
                {"JSMF_TEST_EXIT_IN_STAGE": "7", "JSMF_STORE_TXN_BYTES": "8192"}):
        p = run("ingest", store, *docs, ok=False, env=env)
        assert p.returncode in (97, 98, 99), (env, p.returncode, p.stderr)
    run("ingest", store, *docs)
    assert export_bytes(store, tmp) == export_bytes(dref, tmp), "interrupted docs accumulator"
    assert summary(store) == summary(dref)
    assert_no_dead_runs(store)

    # 1. hooks: exit right after the K-th commit, inside the K-th checkpoint transaction, or
    # after the K-th staged part of a run (tiny transactions), chained
    store = os.path.join(tmp, "hooks.store")
    interruptions = inexact = 0
    for step in range(14):
        hook = rnd.choice(["JSMF_TEST_EXIT_AFTER_COMMIT", "JSMF_TEST_EXIT_IN_COMMIT",
                           "JSMF_TEST_EXIT_IN_STAGE"])
        k = rnd.randint(1, 6)
        p = run("ingest", store, *args, ok=False, env={hook: str(k), "JSMF_STORE_TXN_BYTES": "8192"})
        if p.returncode == 0:
            break
        assert p.returncode in (97, 98, 99), p.stderr
        interruptions += 1
        # the store at a checkpoint is readable at once; its nnz is exact, or an upper bound
        # (checkpoints before the last one do not recount) that says so
        info = json.loads(run("info", store, "--json").stdout)
        if info["docs"]:
            mm = [l for l in export_bytes(store, tmp).split(b"\n") if l.strip() and l[:1] != b"%"]
            body = [l.split() for l in mm[1:]]  # after the size line: lower triangle entries
            nnz = 2 * len(body) - sum(1 for l in body if l[0] == l[1])
            if info["nnz_exact"]:
                assert info["nnz"] == nnz, (info["nnz"], nnz)
            else:
                inexact += 1
                assert info["nnz"] >= nnz, (info["nnz"], nnz)
    else:
        run("ingest", store, *args)
    assert interruptions >= 5, interruptions
    assert export_bytes(store, tmp) == want_bytes, "hook-interrupted ingest gives another C"
    assert summary(store) == want_info, (summary(store), want_info)
    info = json.loads(run("info", store, "--json").stdout)
    # size-tiered compaction: fewer than 8 runs of each tier (formats/store.md)
    assert 1 <= info["runs"] <= 15, "compaction should leave < 8 runs a tier, found %d" % info["runs"]
    assert info["nnz_exact"] and inexact > 0, (info["nnz_exact"], inexact)
    assert_no_dead_runs(store)

    # 1b. a process killed while staging a new input's run leaves a dead run; the next writer
    # drops it at open, even one that then finds nothing to do
    c = os.path.join(tmp, "c.txt")
    write_text(c, lines[:300])
    run("ingest", store, c, "--vocab", vpath, "--mem", "1M", "--accumulator=hash", ok=99,
        env={"JSMF_TEST_EXIT_IN_STAGE": "1", "JSMF_STORE_TXN_BYTES": "8192"})
    info = json.loads(run("info", store, "--json").stdout)
    assert len(run_databases(store)) > info["runs"], "the hook should leave a dead run"
    p = run("ingest", store, *args, ok=1)
    assert b"already ingested" in p.stderr, p.stderr
    assert_no_dead_runs(store)
    assert export_bytes(store, tmp) == want_bytes, "dropping a dead run changed C"

    # 2. kill -9 at random moments; trials on fresh stores until enough kills landed
    kills, seen, trials = 0, set(), 0
    env = dict(os.environ, JSMF_STORE_NOSYNC="1", JSMF_STORE_TXN_BYTES="16384",
               JSMF_TEST_SMALL_MEM="1")
    while trials < 6 and (kills < 4 or len(seen) < 2):
        trials += 1
        store = os.path.join(tmp, "kill%d.store" % trials)
        for attempt in range(25):
            proc = subprocess.Popen([JSMF, "ingest", store] + args + ["-q"], env=env,
                                    stderr=subprocess.PIPE)
            time.sleep(rnd.uniform(0.03, 0.4) * t_ref)
            if proc.poll() is None:
                proc.send_signal(signal.SIGKILL)
                kills += 1
            proc.wait()
            proc.stderr.close()
            if proc.returncode == 0:
                break
            if proc.returncode not in (-signal.SIGKILL, 1):
                raise AssertionError("ingest exit %d" % proc.returncode)
            if os.path.exists(os.path.join(store, "data.mdb")):
                p = run("info", store, "--json", ok=False)
                if p.returncode == 0:
                    seen.add(json.loads(p.stdout)["docs"])
        # finish (or find everything complete)
        p = run("ingest", store, *args, ok=False)
        assert p.returncode in (0, 1), p.stderr
        if p.returncode == 1:
            assert b"already ingested" in p.stderr, p.stderr
        assert export_bytes(store, tmp) == want_bytes, "kill -9 interrupted ingest gives another C"
        assert summary(store) == want_info
        assert_no_dead_runs(store)
    assert kills >= 4 and len(seen) >= 2, "kills %d at checkpoints %s" % (kills, sorted(seen))

    # 3. stdin: interrupted, then the same stream piped again resumes it
    sref = os.path.join(tmp, "stdin-ref.store")
    with open(a, "rb") as f:
        run("ingest", sref, "-", "--vocab", vpath, "--mem", "1M", "--accumulator=hash", stdin=f)
    store = os.path.join(tmp, "stdin.store")
    with open(a, "rb") as f:
        p = run("ingest", store, "-", "--vocab", vpath, "--mem", "1M", "--accumulator=hash",
                ok=97, stdin=f, env={"JSMF_TEST_EXIT_AFTER_COMMIT": "4"})
    info = json.loads(run("info", store, "--json").stdout)
    assert info["inputs"][0]["state"] == "partial" and info["inputs"][0]["next_doc"] > 0, info
    with open(a, "rb") as f:
        run("ingest", store, "-", "--vocab", vpath, "--mem", "1M", "--accumulator=hash", stdin=f)
    assert export_bytes(store, tmp) == export_bytes(sref, tmp), "resumed stdin differs"

    subprocess.run(["rm", "-rf", tmp])
    print("ok: %d hook interruptions and %d kills (at %d distinct checkpoints) resumed to the "
          "identical store (%d checkpoints)" % (interruptions, kills, len(seen), flushes))


if __name__ == "__main__":
    main()
