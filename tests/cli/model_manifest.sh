#!/bin/sh
# model_manifest.sh — a model directory's MANIFEST (formats/model.md, "Manifest"): a fitted model
# (with a level) has one, top and level, that verifies with libxxhash's own XXH3_64bits; hundreds
# of damaged copies (a bit flipped, a byte overwritten, a truncation, in a random file, seeded)
# are read by topics, infer, eval, diff and report, each of which gives the undamaged model's
# output or exit 1 naming the damaged file, never a signal and never another output; a model
# without MANIFEST reads, with one note (none under --quiet); a file MANIFEST does not list is
# refused.
. "$(dirname "$0")/common.inc"
ROOT=${ROOT:-.}
"$PYTHON" -c 'import numpy' 2>/dev/null || { echo "numpy not available"; exit 77; }
T=$(mktemp -d /tmp/jsmf-model-manifest-XXXXXX)
trap 'rm -rf "$T"' EXIT
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 # startup dominates: the models are tiny
TRIES=${MANIFEST_TRIES:-240}

# a small refined model with a level of 3 super-topics, from 600 passages of the example corpus
zstd -dc "$ROOT/examples/kjv-passages.txt.zst" | head -600 >"$T/c.txt" || { echo "FAIL: corpus"; exit 1; }
head -40 "$T/c.txt" >"$T/docs.txt"
"$J" vocab "$T/c.txt" -o "$T/v.txt" --stopwords en --min-df 5 --max-df-frac 0.5 -q &&
    "$J" ingest "$T/st" "$T/c.txt" --vocab "$T/v.txt" -q &&
    "$J" fit "$T/st" -k 6 --levels 3 -o "$T/m" -q || { echo "FAIL: fit"; exit 1; }
[ -f "$T/m/MANIFEST" ] && [ -f "$T/m/level1/MANIFEST" ] || fail "the fit wrote no MANIFEST"

# the writer's MANIFEST, checked with libxxhash itself: every file but MANIFEST listed, sorted,
# sizes and hashes right, the last line the checksum of the lines above it
"$PYTHON" - "$T/m" <<'PY' || fail "MANIFEST does not verify"
import ctypes, ctypes.util, os, sys
lib = ctypes.CDLL(ctypes.util.find_library("xxhash") or "libxxhash.so.0")
lib.XXH3_64bits.restype = ctypes.c_uint64
lib.XXH3_64bits.argtypes = [ctypes.c_char_p, ctypes.c_size_t]
h = lambda b: "%016x" % lib.XXH3_64bits(b, len(b))
def verify(top):
    text = open(os.path.join(top, "MANIFEST"), "rb").read()
    lines = text.split(b"\n")
    assert lines[-1] == b"", "no final newline"
    lines = [l.decode() for l in lines[:-1]]
    above = text[: len(text) - len(lines[-1]) - 1]
    assert lines[-1] == "xxh3-64 %s %d MANIFEST" % (h(above), len(above)), lines[-1]
    files = sorted(os.path.relpath(os.path.join(d, f), top) for d, _, fs in os.walk(top)
                   for f in fs if os.path.relpath(os.path.join(d, f), top) != "MANIFEST")
    paths = [l.split(" ", 3)[3] for l in lines[:-1]]
    assert paths == files, (paths, files)
    for l in lines[:-1]:
        algo, hx, size, path = l.split(" ", 3)
        data = open(os.path.join(top, path), "rb").read()
        assert algo == "xxh3-64" and hx == h(data) and int(size) == len(data), l
verify(sys.argv[1])
verify(os.path.join(sys.argv[1], "level1"))
PY

# checked models read without a note; a level read alone is checked by its own MANIFEST
expect 0 "" "$J" topics "$T/m"
grep -q "MANIFEST" "$T/err" && fail "a note on a checked model: $(cat "$T/err")"
expect 0 "" "$J" topics "$T/m/level1"
grep -q "MANIFEST" "$T/err" && fail "a note on a checked level: $(cat "$T/err")"

# a model of an earlier jsmf (no MANIFEST): read, the same topics, one note per directory
"$J" topics "$T/m" >"$T/topics.good"
cp -r "$T/m" "$T/old" && rm "$T/old/MANIFEST"
expect 0 "old has no MANIFEST" "$J" topics "$T/old"
sed 1d "$T/out" >"$T/a" && sed 1d "$T/topics.good" >"$T/b" && cmp -s "$T/a" "$T/b" ||
    fail "the model without MANIFEST reads other topics"
expect 0 "" "$J" diff "$T/old" "$T/old"
[ "$(grep -c "no MANIFEST" "$T/err")" -eq 1 ] || fail "diff M M: not one note: $(cat "$T/err")"
expect 0 "" "$J" topics -q "$T/old"
[ -s "$T/err" ] && fail "--quiet still notes: $(cat "$T/err")"

# a file MANIFEST does not list is refused, as a listed file that is missing
cp -r "$T/m" "$T/added" && cp "$T/m/A.npy" "$T/added/alpha.npy"
expect 1 "added/alpha.npy: not in .*added/MANIFEST" "$J" topics "$T/added"
cp -r "$T/m" "$T/gone" && rm "$T/gone/anchors.txt"
expect 1 "gone/anchors.txt: damaged: missing" "$J" topics "$T/gone"
cp -r "$T/m" "$T/nolevel" && rm -r "$T/nolevel/level1"
expect 1 "nolevel/level1/summary.json: damaged: missing" "$J" topics "$T/nolevel"

# damaged copies: 'topics --level 1' reads every one, and one more command in turn (each of the
# five then reads a fifth of them; MANIFEST_ALL=1: every command every copy, six times slower,
# they all load through jsmf_model_load); two workers, each with its own path (outputs name
# the model), its baseline taken at that path first
"$PYTHON" - "$J" "$T" "$TRIES" "${MANIFEST_ALL:-0}" <<'PY' || fail "damaged copies: see above"
import os, random, shutil, subprocess, sys, threading
J, T, tries, every = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4] == "1"
good = os.path.join(T, "m")
files = sorted(os.path.relpath(os.path.join(d, f), good) for d, _, fs in os.walk(good) for f in fs)

def commands(d, out):
    docs = os.path.join(T, "docs.txt")
    return {"topics": [J, "topics", d, "--level", "1"],
            "topics-json": [J, "topics", d, "--format", "json"],
            "infer": [J, "infer", d, docs, "-q"],
            "eval": [J, "eval", d, "--corpus", docs, "-q"],
            "diff": [J, "diff", good, d],
            "report": [J, "report", d, "-o", out, "-q"]}

def run(name, cmd, out):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    o = p.stdout
    if name == "report" and p.returncode == 0:
        o = open(out, "rb").read()
    if os.path.exists(out):
        os.unlink(out)
    return p.returncode, o, p.stderr.decode(errors="replace")

def damage(rng, path):
    data = bytearray(open(path, "rb").read())
    how = rng.choice(["flip", "byte", "truncate"]) if data else "truncate"
    if how == "flip":
        i = rng.randrange(len(data)); data[i] ^= 1 << rng.randrange(8)
    elif how == "byte":
        data[rng.randrange(len(data))] = rng.randrange(256)
    else:
        data = data[: rng.randrange(len(data))] if data else data
    open(path, "wb").write(bytes(data))
    return how

others = ["topics-json", "infer", "eval", "diff", "report"]
counts = {k: 0 for k in ("refused", "identical", "different", "crashed", "other")}
problems, lock = [], threading.Lock()
runs = {n: 0 for n in ["topics"] + others}

def worker(w, seeds):
    d = os.path.join(T, "w%d" % w, "m")
    out = os.path.join(T, "w%d" % w, "r.html")
    shutil.copytree(good, d)
    cmds = commands(d, out)
    base = {n: run(n, c, out) for n, c in cmds.items()}
    for n, (rc, _, err) in base.items():
        if rc:
            with lock:
                problems.append("undamaged %s: exit %d: %s" % (n, rc, err))
            return
    for seed in seeds:
        rng = random.Random(seed)
        shutil.rmtree(d); shutil.copytree(good, d)
        rel = rng.choice(files)
        how = damage(rng, os.path.join(d, rel))
        names = list(cmds) if every else ["topics", others[seed // 2 % len(others)]]
        for n in names:
            rc, o, err = run(n, cmds[n], out)
            if rc == 0 and o == base[n][1]:
                k = "identical"
            elif rc == 0:
                k = "different"
            elif rc < 0 or rc > 128:
                k = "crashed"
            elif rc == 1 and (d + "/") in err and "damaged" in err:
                k = "refused"
            else:
                k = "other"
            with lock:
                counts[k] += 1
                runs[n] += 1
                if k not in ("refused", "identical"):
                    problems.append("seed %d: %s of %s, %s: %s, exit %d: %s"
                                    % (seed, how, rel, n, k, rc, err.strip()[:300]))

threads = [threading.Thread(target=worker, args=(w, range(w, tries, 2))) for w in range(2)]
for t in threads: t.start()
for t in threads: t.join()
sys.stderr.write("model_manifest: %d damaged copies; runs: %s\n"
                 % (tries, ", ".join("%s %d" % kv for kv in runs.items())))
sys.stderr.write("  %-6s %-8s %-9s %-9s %-7s %s\n" % ("tries", "refused", "identical", "different", "crashed", "other"))
sys.stderr.write("  %-6d %-8d %-9d %-9d %-7d %d\n" % (tries, counts["refused"], counts["identical"],
                 counts["different"], counts["crashed"], counts["other"]))
for p in problems[:20]:
    print("FAIL:", p)
sys.exit(1 if problems or counts["refused"] < sum(runs.values()) * 3 // 4 else 0)
PY

exit $fails
