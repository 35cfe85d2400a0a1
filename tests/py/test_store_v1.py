"""test_store_v1.py — stores of older format versions stay readable, and ingesting into them
upgrades them to the current version, their old chunks staying as they are: version 1 (C in
one database keyed by row and column, no runs) and version 2 (runs of plain chunks). The
exports equal those of a store built by the current format. The old stores are made from a
current one with mdb_dump/mdb_load (lmdb-utils), its packed chunks rewritten as plain ones by
a decoder written from formats/store.md."""
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


def packed_to_plain(chunk):
    """A packed chunk (version 3) as the plain chunk of versions 1 and 2: u16 count, count u32
    columns, count 16-byte signed sums."""
    count = int.from_bytes(chunk[:2], "little")
    assert count & 0x8000, "not a packed chunk"
    count &= 0x7FFF
    p, cols, sums = 2, [], []
    for i in range(count):
        x, shift = 0, 0
        while True:
            b = chunk[p]
            p += 1
            x |= (b & 0x7F) << shift
            shift += 7
            if not b & 0x80:
                break
        cols.append(x if i == 0 else cols[-1] + x + 1)
    for _ in range(count):
        tz, n = chunk[p] & 0x7F, chunk[p + 1]
        m = int.from_bytes(chunk[p + 2:p + 2 + n], "little") << tz
        sums.append(-m if chunk[p] & 0x80 else m)
        p += 2 + n
    assert p == len(chunk), "trailing bytes in a packed chunk"
    return (count.to_bytes(2, "little") + b"".join(c.to_bytes(4, "little") for c in cols)
            + b"".join(v.to_bytes(16, "little", signed=True) for v in sums))


def plain_dump(text):
    """A dump of C chunks with every value rewritten as a plain chunk."""
    head, _, body = text.partition("HEADER=END\n")
    lines = body.split("\n")
    out, i = [], 0
    while i < len(lines) and lines[i].startswith(" "):
        key, val = lines[i].strip(), lines[i + 1].strip()
        out += [" " + key, " " + packed_to_plain(bytes.fromhex(val)).hex()]
        i += 2
    return head + "HEADER=END\n" + "\n".join(out) + "\nDATA=END\n"


def as_version(version, src, dst):
    """The layout of version 1 or 2 of a store whose C is one run of packed chunks: plain
    chunks, in the C database without a run registry (1) or in the same run (2)."""
    os.makedirs(dst)
    head, _, body = dump(src, "meta").partition("HEADER=END\n")
    lines = body.split("\n")
    out, i = [], 0
    while i < len(lines) and lines[i].startswith(" "):
        key, val = lines[i].strip(), lines[i + 1].strip()
        i += 2
        if version == 1 and key in (HEX("runs"), HEX("next_run")):
            continue
        if key == HEX("version"):
            val = version.to_bytes(8, "little").hex()
        out += [" " + key, " " + val]
    load(dst, "meta", head + "HEADER=END\n" + "\n".join(out) + "\nDATA=END\n")
    for db in ("vocab", "wordstats", "inputs"):
        load(dst, db, dump(src, db))
    load(dst, "C" if version == 1 else "run.00000001", plain_dump(dump(src, "run.00000001")))
    if version == 2:
        load(dst, "C", dump(src, "C"))  # empty: the base of a store made by version 2


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
    assert info["format_version"] == 3 and info["runs"] == 1, info
    ref = os.path.join(tmp, "ref.store")
    run("ingest", ref, a, b, "--vocab", vpath)
    want = json.loads(run("info", ref, "--json").stdout)
    both = os.path.join(tmp, "both.store")
    run("ingest", both, a, "--vocab", vpath)
    run("ingest", both, a, "--force")

    for version in (1, 2):
        old = os.path.join(tmp, "v%d.store" % version)
        as_version(version, cur, old)

        # read: the same counters and the same C
        v = json.loads(run("info", old, "--json").stdout)
        assert v["format_version"] == version and v["runs"] == version - 1, v
        assert v["nnz"] == info["nnz"] and v["docs"] == info["docs"], (v, info)
        assert export_bytes(old, tmp) == export_bytes(cur, tmp), \
            "version %d store reads another C" % version

        # merge reads it too
        merged = os.path.join(tmp, "merged%d.store" % version)
        run("merge", merged, old, cur)
        assert export_bytes(merged, tmp) == export_bytes(both, tmp), \
            "merge of a version %d store" % version

        # write: appending upgrades it; its old chunks stay under the new run
        run("ingest", old, b)
        up = json.loads(run("info", old, "--json").stdout)
        assert up["format_version"] == 3 and up["runs"] in (1, 2), up
        for k in ("docs", "tokens", "nnz", "oov_tokens"):
            assert up[k] == want[k], (k, up[k], want[k])
        assert export_bytes(old, tmp) == export_bytes(ref, tmp), \
            "upgraded version %d store holds another C" % version

    shutil.rmtree(tmp)
    print("ok: version 1 and 2 stores read, merge and upgrade to the same C as version 3")


if __name__ == "__main__":
    main()
