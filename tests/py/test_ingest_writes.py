"""test_ingest_writes.py — the bytes an ingest writes (the kernel's count for the process: its
block outputs, getrusage), against the bounds of formats/store.md ("What an ingest writes"):
- one window (the documents fit --mem): at most 2x the store file, in fact about 1x;
- W windows (a tiny --mem): each window's run holds at most the entries of the final C, and
  size-tiered compaction rewrites an entry at most once per tier, so the bytes stay within
  (1 + ceil(log_8 W)) * W * the one-window store;
- appends of a tenth of the documents: amortised over several appends (compaction included),
  at most 2x a tenth of the one-shot ingest's bytes.
Also that every layout gives the same C. Skipped where the kernel does not count block
outputs (tmpfs)."""
import math
import os
import random
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ingest_corpus import JSMF, export_bytes, make_corpus, write_text  # noqa: E402


def ingest(*args, env=None):
    """Run jsmf ingest; its bytes written (block outputs x 512) and stderr."""
    e = dict(os.environ, JSMF_STORE_NOSYNC="1", JSMF_TEST_SMALL_MEM="1")  # --mem 1M: windows
    e.update(env or {})
    if "--hold" not in args:  # the rows' checkpoint windows are measured here
        args = args + ("--hold", "rows")
    p = subprocess.Popen([JSMF, "ingest"] + [str(a) for a in args], stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE, env=e)
    err = p.stderr.read()
    _, status, ru = os.wait4(p.pid, 0)
    p.returncode = os.waitstatus_to_exitcode(status)
    assert p.returncode == 0, err.decode(errors="replace")
    return ru.ru_oublock * 512, err


def checkpoints(err):
    return int(err.split(b" checkpoint")[0].split()[-1])


def file_size(store):
    return os.path.getsize(os.path.join(store, "data.mdb"))


def sparse_corpus(n_words=20000, n_docs=4000, length=60, seed=21):
    """The shape of the issue's news corpus at a small scale: words spread over the whole
    vocabulary, so that few pairs repeat and C is sparse (the regime where a tenth of the
    documents makes about a tenth of the store)."""
    rnd = random.Random(seed)
    letters = "abcdefghijklmnopqrstuvwxyz"
    vocab = ["".join(letters[(i // 26 ** k) % 26] for k in range(4)) + "x" for i in range(n_words)]
    lines = [" ".join(rnd.choice(vocab) for _ in range(rnd.randint(length // 2, 3 * length // 2)))
             for _ in range(n_docs)]
    return vocab, lines


def main():
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    tmp = tempfile.mkdtemp(prefix="jsmf-writes-", dir=os.path.join(root, "build"))
    vocab, lines = sparse_corpus()
    vpath, full, base, tenth = (os.path.join(tmp, n) for n in
                                ("vocab.txt", "full.txt", "base.txt", "tenth.txt"))
    write_text(vpath, vocab)
    cut = len(lines) * 10 // 11
    write_text(full, lines)
    write_text(base, lines[:cut])
    write_text(tenth, lines[cut:])

    one = os.path.join(tmp, "one.store")
    w_one, err = ingest(one, full, "--vocab", vpath, "--accumulator=docs")
    if w_one == 0:
        print("skip: the kernel counts no block outputs here (tmpfs?)")
        shutil.rmtree(tmp)
        sys.exit(77)
    size_one = file_size(one)
    assert checkpoints(err) == 1, err
    assert w_one <= 2 * size_one, ("one window wrote %d bytes for a %d-byte store" %
                                   (w_one, size_one))

    # a tiny budget: many windows, compaction; the same C (a denser corpus: windows repeat
    # pairs, so the runs together hold more entries than C, up to W times)
    zvocab, zlines = make_corpus(seed=21, n_vocab=3000, n_oov=50, n_docs=2200, max_len=120)
    zv, zfull = os.path.join(tmp, "zvocab.txt"), os.path.join(tmp, "zfull.txt")
    write_text(zv, zvocab)
    write_text(zfull, zlines * 8)
    zone = os.path.join(tmp, "zone.store")
    ingest(zone, zfull, "--vocab", zv, "--accumulator=docs")
    tiny = os.path.join(tmp, "tiny.store")
    w_tiny, err = ingest(tiny, zfull, "--vocab", zv, "--mem", "1M", "--accumulator=docs")
    windows = checkpoints(err)
    assert windows >= 9, "want many windows, got %d" % windows
    assert export_bytes(tiny, tmp) == export_bytes(zone, tmp), "windows change C"
    levels = math.ceil(math.log(windows, 8))
    bound = (1 + levels) * windows * file_size(zone)
    assert w_tiny <= bound, ("%d windows wrote %d bytes, bound %d" % (windows, w_tiny, bound))
    print("one window: %.2fx the store; %d windows: %.2f of the bound"
          % (w_one / size_one, windows, w_tiny / bound))

    # appends: base, then the last tenth several times over (--force)
    app = os.path.join(tmp, "append.store")
    ingest(app, base, "--vocab", vpath, "--accumulator=docs")
    total, n = 0, 9
    for _ in range(n):
        w, err = ingest(app, tenth, "--force")
        total += w
    ratio = total / n / (w_one / 10)
    assert ratio <= 2, "an append wrote %.2fx a tenth of the one-shot ingest" % ratio
    print("appends: %.2fx a tenth of the one-shot ingest (amortised over %d)" % (ratio, n))
    shutil.rmtree(tmp)
    print("ok: ingest writes within the bounds of formats/store.md")


if __name__ == "__main__":
    main()
