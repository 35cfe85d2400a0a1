"""test_store_v1.py — a store of format version 1 (C in one database keyed by row and column,
no runs) stays readable, and ingesting into it upgrades it to version 2 with its old C as the
base under the new runs: the exports equal those of a store built by the current format. The
version 1 store is made from a current one with mdb_dump/mdb_load (lmdb-utils)."""
import json
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ingest_corpus import export_bytes, make_corpus, run, write_text  # noqa: E402

HEX = lambda s: s.encode().hex()  # noqa: E731


def dump(store, db):
    return subprocess.run(["mdb_dump", "-s", db, store], check=True, capture_output=True,
                          text=True).stdout


def load(store, db, text):
    """Load a dump into database db (the dump's own database= line names its source)."""
    text = "\n".join("database=" + db if l.startswith("database=") else l
                     for l in text.split("\n"))
    p = subprocess.run(["mdb_load", "-s", db, store], input=text, capture_output=True, text=True)
    assert p.returncode == 0, p.stderr


def as_version1(src, dst):
    """The version 1 layout of a store whose C is one run: C holds that run's chunks, meta has
    no run registry and says version 1."""
    os.makedirs(dst)
    head, _, body = dump(src, "meta").partition("HEADER=END\n")
    lines = body.split("\n")
    out, i = [], 0
    while i < len(lines) and lines[i].startswith(" "):
        key, val = lines[i].strip(), lines[i + 1].strip()
        i += 2
        if key in (HEX("runs"), HEX("next_run")):
            continue
        if key == HEX("version"):
            val = (1).to_bytes(8, "little").hex()
        out += [" " + key, " " + val]
    load(dst, "meta", head + "HEADER=END\n" + "\n".join(out) + "\nDATA=END\n")
    for db in ("vocab", "wordstats", "inputs"):
        load(dst, db, dump(src, db))
    load(dst, "C", dump(src, "run.00000001"))


def main():
    if not shutil.which("mdb_dump") or not shutil.which("mdb_load"):
        print("skip: lmdb-utils (mdb_dump, mdb_load) not installed")
        sys.exit(77)
    tmp = tempfile.mkdtemp(prefix="jsmf-store-v1-")
    vocab, lines = make_corpus(seed=5, n_vocab=300, n_oov=20, n_docs=400, max_len=50)
    vpath, a, b = (os.path.join(tmp, n) for n in ("vocab.txt", "a.txt", "b.txt"))
    write_text(vpath, vocab)
    write_text(a, lines[:250])
    write_text(b, lines[250:])

    cur = os.path.join(tmp, "cur.store")
    run("ingest", cur, a, "--vocab", vpath)
    info = json.loads(run("info", cur, "--json").stdout)
    assert info["format_version"] == 2 and info["runs"] == 1, info
    old = os.path.join(tmp, "v1.store")
    as_version1(cur, old)

    # read: the same counters and the same C
    v1 = json.loads(run("info", old, "--json").stdout)
    assert v1["format_version"] == 1 and v1["runs"] == 0, v1
    assert v1["nnz"] == info["nnz"] and v1["docs"] == info["docs"], (v1, info)
    assert export_bytes(old, tmp) == export_bytes(cur, tmp), "version 1 store reads another C"

    # merge reads it too
    merged = os.path.join(tmp, "merged.store")
    run("merge", merged, old, cur)
    both = os.path.join(tmp, "both.store")
    run("ingest", both, a, "--vocab", vpath)
    run("ingest", both, a, "--force")
    assert export_bytes(merged, tmp) == export_bytes(both, tmp), "merge of a version 1 store"

    # write: appending upgrades it; its old C stays the base under the new run
    run("ingest", old, b)
    up = json.loads(run("info", old, "--json").stdout)
    ref = os.path.join(tmp, "ref.store")
    run("ingest", ref, a, b, "--vocab", vpath)
    want = json.loads(run("info", ref, "--json").stdout)
    assert up["format_version"] == 2 and up["runs"] == 1, up
    for k in ("docs", "tokens", "nnz", "oov_tokens"):
        assert up[k] == want[k], (k, up[k], want[k])
    assert export_bytes(old, tmp) == export_bytes(ref, tmp), "upgraded store holds another C"

    shutil.rmtree(tmp)
    print("ok: a version 1 store reads, merges and upgrades to the same C as version 2")


if __name__ == "__main__":
    main()
