"""test_ingest_flush_tail.py — a checkpoint right after a document too big for the budget, at the
end of an input, followed only by documents too short to count (or by nothing): the final
checkpoint has no new pairs, and must add none — neither the stale dense block of the last flush
again (hybrid accumulator) nor the stale hash runs (which crashed the mirroring pass)."""
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ingest_corpus import export_bytes, make_corpus, run, write_text  # noqa: E402


def main():
    tmp = tempfile.mkdtemp(prefix="jsmf-flush-tail-")
    vocab, lines = make_corpus(seed=11, n_vocab=1500, n_oov=100, n_docs=300, max_len=60)
    vpath = os.path.join(tmp, "vocab.txt")
    write_text(vpath, vocab)
    a, b = os.path.join(tmp, "a.txt"), os.path.join(tmp, "b.txt")
    write_text(a, lines + [" ".join(vocab[:400])])  # the oversize document comes last
    write_text(b, ["%s %s" % (vocab[i], vocab[i + 1]) for i in range(50)])  # all dropped
    ref = os.path.join(tmp, "ref.store")
    run("ingest", ref, a, b, "--vocab", vpath, "--mem", "64M")
    want = export_bytes(ref, tmp)
    for mem in (["1M", "--accumulator=hash"], ["2M"], ["4M"]):
        for inputs in ([a, b], [a]):
            s = os.path.join(tmp, "s.store")
            subprocess.run(["rm", "-rf", s])
            p = run("ingest", s, *inputs, "--vocab", vpath, "--mem", *mem, ok=False)
            assert p.returncode == 0, (mem, inputs, p.returncode, p.stderr)
            if len(inputs) == 2:
                assert export_bytes(s, tmp) == want, "--mem %s: C differs" % mem
    subprocess.run(["rm", "-rf", tmp])
    print("ok: a flush after a trailing oversize document adds nothing twice")


if __name__ == "__main__":
    main()
