"""test_ingest_stdin_dup.py — stdin is fingerprinted at its end (formats/store.md "inputs"): its
complete record carries the content's fingerprint and size, so the same content piped again or
given as a file (plain or .zst) is refused like a duplicate file, without adding anything —
also in the middle of a multi-input command; --force adds it as the next occurrence. A stream
that a checkpoint had partly stored before its end showed a repeat is completed as a repeat,
with a warning; kill/resume of a stdin ingest still ends in the identical store."""
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ingest_corpus import export_bytes, make_corpus, run, write_text  # noqa: E402

KEYS = ("docs", "docs_dropped", "tokens", "tokens_dropped", "oov_tokens", "nnz", "fingerprint")


def info(store):
    return json.loads(run("info", store, "--json").stdout)


def state(store):
    """Everything but the file size: counters, the store fingerprint, records by key."""
    i = info(store)
    recs = sorted((r["fingerprint"], r["occurrence"], r["state"], r["path"], r["size"], r["docs"],
                   r["tokens"], r["next_doc"]) for r in i["inputs"])
    return {k: i[k] for k in KEYS}, recs


def pipe(store, path, *args, ok=True, env=None):
    with open(path, "rb") as f:
        return run("ingest", store, "-", *args, ok=ok, stdin=f, env=env)


def main():
    tmp = tempfile.mkdtemp(prefix="jsmf-stdin-dup-")
    vocab, lines = make_corpus(seed=5, n_vocab=1500, n_oov=100, n_docs=600, max_len=60)
    vpath = os.path.join(tmp, "vocab.txt")
    write_text(vpath, vocab)
    a, b, c = (os.path.join(tmp, n + ".txt") for n in "abc")
    write_text(a, lines[:300])
    write_text(b, lines[300:450])
    write_text(c, lines[450:])
    subprocess.run(["zstd", "-q", "-f", a, "-o", a + ".zst"], check=True)
    V = ["--vocab", vpath]

    # the file's record is the reference for the fingerprint and size
    fa = os.path.join(tmp, "file-a.store")
    run("ingest", fa, a, *V)
    want = info(fa)["inputs"][0]
    assert want["fingerprint"] != "0" * 16 and want["size"] == os.path.getsize(a), want

    # 1. stdin read in one checkpoint window: its complete record has the content's key
    s = os.path.join(tmp, "s.store")
    pipe(s, a, *V)
    rec = info(s)["inputs"]
    assert len(rec) == 1, rec
    assert (rec[0]["fingerprint"], rec[0]["occurrence"], rec[0]["state"], rec[0]["size"]) == \
        (want["fingerprint"], 0, "complete", want["size"]), rec
    assert export_bytes(s, tmp) == export_bytes(fa, tmp)
    before, c_before = state(s), export_bytes(s, tmp)

    # 2. the same content again, from stdin, a file, or compressed: refused, nothing added
    for how in ("stdin", "file"):
        p = pipe(s, a, ok=1) if how == "stdin" else run("ingest", s, a, ok=1)
        err = p.stderr.decode()
        assert "already ingested" in err and "--force" in err, (how, err)
        assert state(s) == before and export_bytes(s, tmp) == c_before, how
    # compressed: the fingerprint of the bytes as stored, the same from stdin and the file
    z = os.path.join(tmp, "z.store")
    run("ingest", z, a + ".zst", *V)
    zs = os.path.join(tmp, "zs.store")
    pipe(zs, a + ".zst", *V)
    assert info(zs)["inputs"][0]["fingerprint"] == info(z)["inputs"][0]["fingerprint"]
    pipe(zs, a + ".zst", ok=1)
    run("ingest", zs, a + ".zst", ok=1)

    # 3. file first, stdin later: refused, and the message names the earlier input
    p = pipe(fa, a, ok=1)
    assert "already ingested" in p.stderr.decode() and a in p.stderr.decode(), p.stderr

    # 4. inside a multi-input command the repeat is skipped and dropped alone: the inputs
    #    before and after it count (their store equals a, b, c ingested without it)
    ref = os.path.join(tmp, "abc.store")
    run("ingest", ref, a, b, c, *V)
    m = os.path.join(tmp, "m.store")
    run("ingest", m, a, *V)
    with open(a, "rb") as f:
        p = run("ingest", m, b, "-", c, stdin=f)
    assert b"1 input already in" in p.stderr, p.stderr
    assert export_bytes(m, tmp) == export_bytes(ref, tmp), "the skipped stdin added something"
    got, want_abc = state(m), state(ref)
    assert got[0] == want_abc[0], (got[0], want_abc[0])

    # 5. --force adds it again as the next occurrence
    pipe(s, a, "--force")
    recs = sorted((r["fingerprint"], r["occurrence"]) for r in info(s)["inputs"])
    assert recs == [(want["fingerprint"], 0), (want["fingerprint"], 1)], recs
    assert info(s)["docs"] == 2 * before[0]["docs"]

    # 6. a stream longer than one checkpoint window (tiny --mem): part of it is stored before
    #    its end shows the repeat; it cannot be taken back, so it is completed as a repeat
    small = ["--mem", "1M", "--accumulator=hash"]
    r1 = os.path.join(tmp, "r1.store")
    run("ingest", r1, a, *V, *small)
    p = pipe(r1, a, *small)
    assert b"warning: stdin repeated content" in p.stderr, p.stderr
    twice = os.path.join(tmp, "twice.store")
    run("ingest", twice, a, *V)
    run("ingest", twice, a, "--force")
    assert export_bytes(r1, tmp) == export_bytes(twice, tmp)
    # the stored record is renamed from the stdin key to the content's (a removal and a write
    # in one commit), so the store says which content it holds
    recs = sorted((r["fingerprint"], r["occurrence"], r["state"]) for r in info(r1)["inputs"])
    assert recs == [(want["fingerprint"], 0, "complete"), (want["fingerprint"], 1, "complete")], recs

    # 7. kill after a checkpoint inside the stream, resume (also with another budget): the
    #    store of an uninterrupted run, records included
    sref = os.path.join(tmp, "stdin-ref.store")
    pipe(sref, a, *V, *small)
    for resume in (small, ["--mem", "64M"]):
        k = os.path.join(tmp, "killed%s.store" % resume[1])
        pipe(k, a, *V, *small, ok=97, env={"JSMF_TEST_EXIT_AFTER_COMMIT": "3"})
        part = info(k)["inputs"]
        assert len(part) == 1 and part[0]["state"] == "partial" and \
            part[0]["fingerprint"] == "0" * 16, part
        pipe(k, a, *resume)
        assert export_bytes(k, tmp) == export_bytes(sref, tmp), "resumed stdin differs"
        assert state(k) == state(sref), (state(k), state(sref))
        assert info(k)["inputs"][0]["fingerprint"] == want["fingerprint"]
        pipe(k, a, ok=1)  # complete now: a repeat is refused before anything is stored
    subprocess.run(["rm", "-rf", tmp])
    print("ok: stdin fingerprinted at its end; repeats refused (stdin, file, multi-input), "
          "forced, completed as repeats past a checkpoint; resume identical; stored records "
          "renamed to the content's key")


if __name__ == "__main__":
    main()
