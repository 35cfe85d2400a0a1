"""test_store_damage.py — a damaged store is never read as data (issue 55, formats/store.md
"Checksums"): random bits flipped, random bytes overwritten and truncations at random points of
data.mdb of small stores of each kind (rows, documents, both, grown by its rule over two
ingests), then every reading command (info --json, info --check, export; fit in every third
case). Each either gives
exactly the undamaged result or exits 1 with a message naming the store; none gives another
result with exit status 0, and none dies of a signal but where the damage is to LMDB's own
structure, which info --check (never dying) then names. Prints the table of tries, refused,
identical, different and crashed per kind. JSMF_DAMAGE_CASES sets the cases per kind (default
60), JSMF_DAMAGE_SEED the seed."""
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ingest_corpus import make_corpus, run, write_text  # noqa: E402

JSMF = os.environ.get("JSMF", "build/jsmf")
CASES = int(os.environ.get("JSMF_DAMAGE_CASES", "60"))
SEED = int(os.environ.get("JSMF_DAMAGE_SEED", "55"))
TIMEOUT = 60
# info --check's stderr minus its timing: what it found
CHECK_LINES = re.compile(rb"(C read and checked: .*|content digest \w+|documents: .*)")


def make_stores(tmp):
    """The four kinds of store, each small (data.mdb of a few hundred KB)."""
    vocab, lines = make_corpus(seed=9, n_vocab=400, n_oov=40, n_docs=300, max_len=40)
    vpath, a, b = (os.path.join(tmp, n) for n in ("vocab.txt", "a.txt", "b.txt"))
    write_text(vpath, vocab)
    write_text(a, lines[:200])
    write_text(b, lines[200:])
    stores = {}
    for hold in ("rows", "docs", "both"):
        stores[hold] = os.path.join(tmp, hold + ".store")
        run("ingest", stores[hold], a, b, "--vocab", vpath, "--hold", hold)
    # grown: no vocabulary given, so the rule admits words over two ingests
    stores["grown"] = os.path.join(tmp, "grown.store")
    run("ingest", stores["grown"], a, "--min-df", "3", "--hold", "docs")
    run("ingest", stores["grown"], b)
    return stores


def call(args):
    """(exit status, stdout, stderr) of jsmf args; a signal shows as a negative status."""
    env = dict(os.environ, JSMF_STORE_NOSYNC="1")
    try:
        p = subprocess.run([JSMF] + args, capture_output=True, timeout=TIMEOUT, env=env)
    except subprocess.TimeoutExpired:
        return "timeout", b"", b""
    return p.returncode, p.stdout, p.stderr


def readings(store, tmp, fit=False):
    """What each reading command gives: (exit status, result, stderr) per command; with fit,
    also a small fit's topics (jsmf fit reads the store as fdm and eval --store do)."""
    out = os.path.join(tmp, "export.mtx")
    if os.path.exists(out):
        os.remove(out)
    got = {}
    rc, so, se = call(["info", "--json", store])
    got["info"] = (rc, so, se)
    rc, so, se = call(["info", "--check", store])
    got["check"] = (rc, so + b"\n".join(CHECK_LINES.findall(se)), se)
    rc, so, se = call(["export", store, "-o", out])
    data = open(out, "rb").read() if rc == 0 and os.path.exists(out) else b""
    got["export"] = (rc, data, se)
    if fit:
        model = os.path.join(tmp, "model")
        shutil.rmtree(model, ignore_errors=True)
        rc, so, se = call(["fit", store, "-k", "3", "--refine", "0", "-o", model, "-q"])
        b = os.path.join(model, "B.npy")
        got["fit"] = (rc, open(b, "rb").read() if rc == 0 and os.path.exists(b) else b"", se)
    return got


def damage(path, rng):
    """Flip a bit, overwrite a byte or truncate data.mdb at a random point; names what it did."""
    size = os.path.getsize(path)
    how = rng.choice(("flip", "byte", "truncate"))
    at = rng.randrange(size)
    if how == "truncate":
        os.truncate(path, at)
        return "truncate at %d" % at
    with open(path, "r+b") as f:
        f.seek(at)
        old = f.read(1)[0]
        new = old ^ (1 << rng.randrange(8)) if how == "flip" else rng.choice(
            [x for x in range(256) if x != old])
        f.seek(at)
        f.write(bytes([new]))
    return "%s at %d (%02x -> %02x)" % (how, at, old, new)


def classify(got, want, store):
    """identical, refused, different or crashed, over the commands of one case. A reader may
    die of a signal only where the damage is to LMDB's own structure, which info --check must
    then name without dying itself: that case counts as refused ("crashed" is a failure)."""
    kinds = set()
    rc, _, err = got["check"]
    lmdb_named = rc == 1 and b"LMDB structure" in err
    for cmd, (rc, result, err) in got.items():
        # under AddressSanitizer a fault is its report and exit status 1, not a signal
        if rc == "timeout" or (isinstance(rc, int) and (rc < 0 or rc >= 128)) or (
                b"AddressSanitizer" in err):
            kinds.add("refused" if lmdb_named and cmd != "check" else "crashed")
        elif rc == 0 and result == want[cmd][1]:
            kinds.add("identical")
        elif rc == 1 and store.encode() in err:
            kinds.add("refused")
        else:
            kinds.add("different")
    for k in ("crashed", "different", "refused"):
        if k in kinds:
            return k
    return "identical"


def main():
    tmp = tempfile.mkdtemp(prefix="jsmf-damage-")
    stores = make_stores(tmp)
    rng = random.Random(SEED)
    table, bad = {}, []
    copy = os.path.join(tmp, "case.store")  # every case at one path: outputs name it

    def fresh(store):
        shutil.rmtree(copy, ignore_errors=True)
        os.makedirs(copy)
        shutil.copyfile(os.path.join(store, "data.mdb"), os.path.join(copy, "data.mdb"))

    for kind, store in stores.items():
        fresh(store)
        want = readings(copy, tmp, fit=True)
        assert all(r[0] == 0 for r in want.values()), (kind, want)
        counts = dict.fromkeys(("tries", "refused", "identical", "different", "crashed"), 0)
        for case in range(CASES):
            fresh(store)
            what = damage(os.path.join(copy, "data.mdb"), rng)
            got = readings(copy, tmp, fit=case % 3 == 0)
            c = classify(got, want, copy)
            counts["tries"] += 1
            counts[c] += 1
            if c in ("different", "crashed"):
                bad.append("%s case %d, %s: %s: %s" % (kind, case, what, c, {
                    k: (v[0], v[2][-300:].decode(errors="replace")) for k, v in got.items()}))
        table[kind] = counts
    print("%-6s %6s %8s %10s %10s %8s" % ("store", "tries", "refused", "identical", "different",
                                          "crashed"), file=sys.stderr)
    for kind, c in table.items():
        print("%-6s %6d %8d %10d %10d %8d" % (kind, c["tries"], c["refused"], c["identical"],
                                              c["different"], c["crashed"]), file=sys.stderr)
    for line in bad:
        print("FAIL " + line, file=sys.stderr)
    shutil.rmtree(tmp)
    assert not bad, "%d damaged stores read as data or crashed a reader" % len(bad)
    print("ok: %d damaged stores, none read as another result" % sum(
        c["tries"] for c in table.values()))


if __name__ == "__main__":
    main()
