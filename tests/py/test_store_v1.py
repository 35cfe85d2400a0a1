"""test_store_v1.py — stores of older format versions stay readable, and ingesting into them
upgrades them to the last version without checksums (6), what the older version wrote being read alongside
what the new checkpoint adds: version 1 (C in one database keyed by row and column, no runs,
plain chunks), version 2 (runs of plain chunks) and version 3 (runs of packed chunks, no palette
chunks). Each reads the same counters and C as the current store it was made from, merges, and
after an append exports the C of a store that ingested everything in one go. The old stores are
made from a current one with mdb_dump/mdb_load (lmdb-utils), its packed and palette chunks
decoded and written again as plain (versions 1 and 2) or packed (version 3) chunks by a codec
written from formats/store.md. The current store must hold palette chunks, so that their decoder
is exercised too. Every value of the current store (version 7) ends in its checksum
(formats/store.md, "Checksums"), recomputed here with python3-xxhash and stripped to make the old
versions."""
import json
import os
import shutil
import subprocess
import sys
import tempfile

import xxhash

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ingest_corpus import export_bytes, make_corpus, run, write_text  # noqa: E402

CURRENT = 7  # JSMF_STORE_FORMAT_VERSION: what a fresh store is written as
UNCHECKED = 6  # the last version without checksums: what a write into an older store leaves
RAW_META = (b"format", b"version")  # meta records without a checksum (an old jsmf reads them)
CHUNK_BYTES_MAX = 1922  # a packed chunk's size limit (formats/store.md)
PLAIN_MAX = 96  # entries of a plain chunk at most
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


def dump_items(text):
    """The header and the (key, value) byte pairs of a dump."""
    head, _, body = text.partition("HEADER=END\n")
    lines = body.split("\n")
    items, i = [], 0
    while i < len(lines) and lines[i].startswith(" "):
        items.append((bytes.fromhex(lines[i].strip()), bytes.fromhex(lines[i + 1].strip())))
        i += 2
    assert lines[i] == "DATA=END", "unexpected dump line %r" % lines[i]
    return head + "HEADER=END\n", items


def make_dump(head, items):
    return head + "".join(" %s\n %s\n" % (k.hex(), v.hex()) for k, v in items) + "DATA=END\n"


def value_sum(db, key, val):
    """A value's checksum as formats/store.md defines it: XXH3-64 of the value, seeded with XXH3-64
    of the key seeded with XXH3-64 of the database's name."""
    seed = xxhash.xxh3_64_intdigest(key, seed=xxhash.xxh3_64_intdigest(db.encode()))
    return xxhash.xxh3_64_intdigest(val, seed=seed)


def stripped(db, items):
    """The items of a database of a checked store with each value's checksum checked and taken
    off (meta's format and version carry none; its check record goes, as older stores lack it)."""
    out = []
    for key, val in items:
        if db == "meta" and key in RAW_META:
            out.append((key, val))
            continue
        if db == "meta" and key == b"check":
            continue
        body, tail = val[:-8], val[-8:]
        assert len(val) >= 8 and int.from_bytes(tail, "little") == value_sum(db, key, body), \
            "checksum of key %s in database %s" % (key.hex(), db)
        out.append((key, body))
    return out


def stripped_dump(db, text):
    head, items = dump_items(text)
    return make_dump(head, stripped(db, items))


# ---- the chunk codec (formats/store.md, "C runs") -------------------------------------------

def chunk_kind(chunk):
    head = int.from_bytes(chunk[:2], "little")
    return "palette" if head & 0xC000 == 0xC000 else "packed" if head & 0x8000 else "plain"


def get_varint(chunk, p):
    x, shift = 0, 0
    while True:
        b = chunk[p]
        p += 1
        x |= (b & 0x7F) << shift
        shift += 7
        if not b & 0x80:
            return x, p


def get_sum(chunk, p):
    """A sum field (u8 tz | sign << 7, u8 L, L bytes of m): m << tz, negated when sign."""
    tz, n = chunk[p] & 0x7F, chunk[p + 1]
    assert n <= 16 and p + 2 + n <= len(chunk), "bad sum field"
    m = int.from_bytes(chunk[p + 2:p + 2 + n], "little") << tz
    return (-m if chunk[p] & 0x80 else m), p + 2 + n


def decode_chunk(chunk):
    """(columns, sums) of a packed (version 3) or palette (version 4) chunk; plain ones too."""
    head = int.from_bytes(chunk[:2], "little")
    kind = chunk_kind(chunk)
    if kind == "plain":
        count = head
        assert len(chunk) == 2 + 20 * count, "plain chunk of the wrong size"
        cols = [int.from_bytes(chunk[2 + 4 * i:6 + 4 * i], "little") for i in range(count)]
        base = 2 + 4 * count
        sums = [int.from_bytes(chunk[base + 16 * i:base + 16 * i + 16], "little", signed=True)
                for i in range(count)]
        return cols, sums
    count, p = (head & 0x3FFF, 3) if kind == "palette" else (head & 0x7FFF, 2)
    assert count > 0, "empty chunk"
    cols = []
    for i in range(count):
        x, p = get_varint(chunk, p)
        cols.append(x if i == 0 else cols[-1] + x + 1)
    n_sums = chunk[2] + 1 if kind == "palette" else count
    sums = []
    for _ in range(n_sums):
        v, p = get_sum(chunk, p)
        sums.append(v)
    if kind == "palette" and n_sums == 1:
        sums = sums * count
    elif kind == "palette":
        idx = chunk[p:p + count]
        assert len(idx) == count and all(i < n_sums for i in idx), "bad palette indices"
        sums, p = [sums[i] for i in idx], p + count
    assert p == len(chunk), "trailing bytes in a %s chunk" % kind
    return cols, sums


def put_varint(x):
    out = bytearray()
    while x >= 0x80:
        out.append(x & 0x7F | 0x80)
        x >>= 7
    out.append(x)
    return bytes(out)


def put_sum(v):
    """A sum field as writers make it: m odd, L as small as holds m; 0 is tz = 0, L = 0."""
    m, tz = abs(v), 0
    while m and not m & 1:
        m, tz = m >> 1, tz + 1
    n = (m.bit_length() + 7) // 8
    return bytes([tz | (0x80 if v < 0 else 0), n]) + m.to_bytes(n, "little")


def encode_plain(cols, sums):
    """Plain chunks (versions 1 and 2) of one row's entries, at most 96 each, as
    (first column, chunk): u16 count, count u32 columns, count 16-byte signed sums."""
    out = []
    for s in range(0, len(cols), PLAIN_MAX):
        c, v = cols[s:s + PLAIN_MAX], sums[s:s + PLAIN_MAX]
        out.append((c[0], len(c).to_bytes(2, "little")
                    + b"".join(x.to_bytes(4, "little") for x in c)
                    + b"".join(x.to_bytes(16, "little", signed=True) for x in v)))
    return out


def encode_packed(cols, sums):
    """Packed chunks (version 3) of one row's entries as (first column, chunk), each filled while
    it stays within 1,922 bytes, as a version 3 writer fills them."""
    out, s = [], 0
    while s < len(cols):
        fields_c, fields_s, size, e = [], [], 2, s
        while e < len(cols):
            fc = put_varint(cols[e] - (cols[e - 1] + 1 if e > s else 0))
            fs = put_sum(sums[e])
            if e > s and size + len(fc) + len(fs) > CHUNK_BYTES_MAX:
                break
            fields_c.append(fc), fields_s.append(fs)
            size, e = size + len(fc) + len(fs), e + 1
        out.append((cols[s], (0x8000 | (e - s)).to_bytes(2, "little")
                    + b"".join(fields_c) + b"".join(fields_s)))
        s = e
    return out


def rows_of(items):
    """{row: (columns, sums)} of a C database's chunks, in key order."""
    rows = {}
    for key, val in items:
        row, first = int.from_bytes(key[:4], "big"), int.from_bytes(key[4:], "big")
        cols, sums = decode_chunk(val)
        assert cols[0] == first, "chunk key %d, first column %d" % (first, cols[0])
        rc, rs = rows.setdefault(row, ([], []))
        assert not rc or rc[-1] < cols[0], "chunks of row %d out of order" % row
        rc += cols
        rs += sums
    return rows


def recoded_dump(text, encode):
    """A dump of a C database with every row written again by encode (encode_plain or
    encode_packed); checks that the new chunks decode to the same entries."""
    head, items = dump_items(text)
    rows = rows_of(items)
    out = []
    for row, (cols, sums) in sorted(rows.items()):
        out += [(row.to_bytes(4, "big") + first.to_bytes(4, "big"), chunk)
                for first, chunk in encode(cols, sums)]
    assert rows_of(out) == rows, "re-encoded chunks read other entries"
    return make_dump(head, out)


# ---- old stores ----------------------------------------------------------------------------

def run_ids(store):
    """Ids of the live runs, from the meta record runs (u32 count, then u32 id, u64 entries)."""
    _, items = dump_items(dump(store, "meta"))
    val = dict(stripped("meta", items) if b"check" in dict(items) else items)[b"runs"]
    n = int.from_bytes(val[:4], "little")
    assert len(val) == 4 + 12 * n, "bad runs record"
    return [int.from_bytes(val[4 + 12 * i:8 + 12 * i], "little") for i in range(n)]


def as_version(version, src, dst):
    """The layout of version 1, 2 or 3 of a current store whose C is one run: plain chunks in
    the C database without a run registry (1), plain chunks in the same run (2), packed chunks
    in the same run (3)."""
    os.makedirs(dst)
    ids = run_ids(src)
    assert len(ids) == 1, ids
    name = "run.%08x" % ids[0]
    head, items = dump_items(dump(src, "meta"))
    out = []
    for key, val in stripped("meta", items):
        if version == 1 and key in (b"runs", b"next_run"):
            continue
        if key == b"version":
            val = version.to_bytes(8, "little")
        out.append((key, val))
    load(dst, "meta", make_dump(head, out))
    for db in ("vocab", "wordstats", "inputs"):
        load(dst, db, stripped_dump(db, dump(src, db)))
    encode = encode_packed if version == 3 else encode_plain
    load(dst, "C" if version == 1 else name,
         recoded_dump(stripped_dump(name, dump(src, name)), encode))
    if version > 1:
        load(dst, "C", dump(src, "C"))  # empty: the base of a store made by version 2 or 3


def chunk_kinds(store, dbs):
    """How many chunks of each kind databases dbs hold ("palette1": those palette chunks with
    one sum, no index bytes; counted under "palette" as well)."""
    kinds = {}
    for db in dbs:
        for _, val in dump_items(dump(store, db))[1]:
            kind = chunk_kind(val)
            for k in [kind] + (["palette1"] if kind == "palette" and val[2] == 0 else []):
                kinds[k] = kinds.get(k, 0) + 1
    return kinds


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
    assert info["format_version"] == CURRENT and info["runs"] == 1, info
    kinds = chunk_kinds(cur, ["run.%08x" % i for i in run_ids(cur)])
    print("current store's chunks:", kinds)
    assert kinds.get("palette", 0) > 0, "no palette chunk in the current store: %s" % kinds
    ref = os.path.join(tmp, "ref.store")
    run("ingest", ref, a, b, "--vocab", vpath)
    want = json.loads(run("info", ref, "--json").stdout)
    assert want["format_version"] == info["format_version"], (want, info)
    both = os.path.join(tmp, "both.store")
    run("ingest", both, a, "--vocab", vpath)
    run("ingest", both, a, "--force")

    for version in (1, 2, 3):
        assert version < info["format_version"]
        old = os.path.join(tmp, "v%d.store" % version)
        as_version(version, cur, old)
        runs = ["run.%08x" % i for i in run_ids(old)] if version > 1 else []
        k = chunk_kinds(old, ["C"] + runs)
        assert set(k) == {"plain" if version < 3 else "packed"}, (version, k)

        # read: the same counters and the same C; info --check decodes every chunk
        p = run("info", old, "--check")
        assert b"C read and checked: %d entries" % info["nnz"] in p.stderr, p.stderr
        v = json.loads(run("info", old, "--json").stdout)
        assert v["format_version"] == version and v["runs"] == (0 if version == 1 else 1), v
        assert v["nnz"] == info["nnz"] and v["docs"] == info["docs"], (v, info)
        assert export_bytes(old, tmp) == export_bytes(cur, tmp), \
            "version %d store reads another C" % version

        # merge reads it too
        merged = os.path.join(tmp, "merged%d.store" % version)
        run("merge", merged, old, cur)
        assert export_bytes(merged, tmp) == export_bytes(both, tmp), \
            "merge of a version %d store" % version

        # jsmf copy writes it again as a checked store of the current version: the same C, and
        # an append into the copy gives what an append into the old store gives
        copy = os.path.join(tmp, "copy%d.store" % version)
        run("copy", old, copy)
        cv = json.loads(run("info", copy, "--json").stdout)
        assert cv["format_version"] == CURRENT and cv["fingerprint"] == v["fingerprint"], cv
        assert export_bytes(copy, tmp) == export_bytes(old, tmp), "copy of version %d" % version
        run("info", copy, "--check")
        for db in ["meta", "vocab", "wordstats", "inputs"] + (["C"] if version == 1 else runs):
            stripped(db, dump_items(dump(copy, db))[1])  # every value checked, independently
        run("ingest", copy, b)
        assert export_bytes(copy, tmp) == export_bytes(ref, tmp), \
            "appended copy of a version %d store" % version

        # write: appending upgrades it to the last version without checksums
        run("ingest", old, b)
        up = json.loads(run("info", old, "--json").stdout)
        assert up["format_version"] == UNCHECKED and up["runs"] in (1, 2), up
        for key in ("docs", "tokens", "nnz", "oov_tokens"):
            assert up[key] == want[key], (key, up[key], want[key])
        assert export_bytes(old, tmp) == export_bytes(ref, tmp), \
            "upgraded version %d store holds another C" % version
        print("version %d: read, merged, upgraded to %d (%d runs)"
              % (version, up["format_version"], up["runs"]))

    # every value of the current store carries its checksum, as recomputed here
    for db in ["meta", "vocab", "wordstats", "inputs"] + ["run.%08x" % i for i in run_ids(cur)]:
        stripped(db, dump_items(dump(cur, db))[1])

    # a palette chunk with an index past its palette, its checksum made again (what a writer's
    # bug would leave): info --check names the row, exit 1
    bad = os.path.join(tmp, "bad.store")
    shutil.copytree(cur, bad)
    db = "run.%08x" % run_ids(bad)[0]
    head, items = dump_items(dump(bad, db))
    at = next(i for i, (_, v) in enumerate(items) if chunk_kind(v) == "palette"
              and v[2] > 0 and len(v) - 8 > 3 + (int.from_bytes(v[:2], "little") & 0x3FFF))
    key, val = items[at]
    body = val[:-8 - 1] + bytes([255])  # the last entry's index
    items[at] = (key, body + value_sum(db, key, body).to_bytes(8, "little"))
    load(bad, db, make_dump(head, items))
    p = run("info", bad, "--check", ok=1)
    row = int.from_bytes(key[:4], "big")
    assert b"corrupt row %d of C" % row in p.stderr, p.stderr

    # the same byte changed without its checksum (damage): named by database and key, exit 1
    items[at] = (key, val[:-8 - 1] + bytes([255]) + val[-8:])
    load(bad, db, make_dump(head, items))
    p = run("export", bad, "-o", os.path.join(tmp, "bad.mtx"), ok=1)
    assert (b"damaged: the value of key %s in database '%s'" % (key.hex().encode(), db.encode())
            in p.stderr), p.stderr
    p = run("info", bad, "--check", ok=1)  # names the row the value held
    assert (b"database '%s', key %s: its value does not match its checksum; it holds row %d"
            % (db.encode(), key.hex().encode(), row) in p.stderr), p.stderr

    shutil.rmtree(tmp)
    print("ok: version 1, 2 and 3 stores read, merge and upgrade to the same C as version %d"
          % info["format_version"])


if __name__ == "__main__":
    main()
