"""test_ingest_reference.py — jsmf ingest + export against a dense numpy reference computed from
the raw text; the three input formats, file / stdin / zstd, thread counts, memory budgets and
both accumulators give byte-identical exports; counters in `info --json` match the corpus."""
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ingest_corpus import (counts, export_bytes, make_corpus, read_mm, reference_c, run,  # noqa: E402
                           write_ldac, write_text, write_uci)


def main():
    tmp = tempfile.mkdtemp(prefix="jsmf-ingest-ref-")
    vocab, lines = make_corpus()
    docs = counts(vocab, lines)
    N = len(vocab)
    vpath = os.path.join(tmp, "vocab.txt")
    write_text(vpath, vocab)
    text = os.path.join(tmp, "corpus.txt")
    write_text(text, lines)

    # 1. the estimator against the dense reference, entry by entry
    store = os.path.join(tmp, "text.store")
    run("ingest", store, text, "--vocab", vpath, "-q")
    C_ref, M = reference_c(N, docs)
    mm = os.path.join(tmp, "c.mm")
    run("export", store, "-o", mm)
    C = read_mm(mm, N)
    err = np.abs(C - C_ref).max()
    assert err <= 1e-15 + 1e-12 * np.abs(C_ref).max(), "max |C - C_ref| = %g" % err
    assert np.array_equal(C != 0, C_ref != 0), "different sparsity pattern"
    assert abs(C.sum() - 1.0) < 1e-12, C.sum()
    with open(mm + ".vocab.txt") as f:
        assert f.read().split("\n")[:-1] == vocab, "vocab.txt is not the store's row order"
    npy = os.path.join(tmp, "c.npy")
    run("export", store, "-o", npy, "--format", "npy")
    assert np.array_equal(np.load(npy), C), "npy and mm exports differ"

    info = json.loads(run("info", store, "--json").stdout)
    n_tok = [sum(h.values()) for h, _ in docs]
    assert info["docs"] == M, (info["docs"], M)
    assert info["n_words"] == N
    assert info["docs_dropped"] == sum(1 for n in n_tok if n < 5)
    assert info["tokens"] == sum(n for n in n_tok if n >= 5)
    assert info["tokens_dropped"] == sum(n for n in n_tok if n < 5)
    assert info["oov_tokens"] == sum(o for _, o in docs)
    assert info["nnz"] == int((C != 0).sum())
    assert info["inputs"][0]["state"] == "complete" and info["inputs"][0]["docs"] == M
    ref_bytes = export_bytes(store, tmp)

    # 2. UCI (own vocabulary with extra words, in another order) and LDA-C give the same C
    uci = write_uci(tmp, "corpus", vocab, docs, extra_words=["zzzextra", "qqqextra"])
    s = os.path.join(tmp, "uci.store")
    run("ingest", s, uci, "--vocab", vpath, "-q")
    assert export_bytes(s, tmp) == ref_bytes, "UCI input gives another C"
    ldac = os.path.join(tmp, "corpus.ldac")
    write_ldac(ldac, docs)
    s = os.path.join(tmp, "ldac.store")
    run("ingest", s, ldac, "--vocab", vpath, "--format", "ldac", "-q")
    assert export_bytes(s, tmp) == ref_bytes, "LDA-C input gives another C"

    # 3. stdin and zstd give the same store
    s = os.path.join(tmp, "stdin.store")
    with open(text, "rb") as f:
        run("ingest", s, "-", "--vocab", vpath, "-q", stdin=f)
    assert export_bytes(s, tmp) == ref_bytes, "stdin gives another C"
    subprocess.run(["zstd", "-q", "-f", text, "-o", text + ".zst"], check=True)
    s = os.path.join(tmp, "zst.store")
    run("ingest", s, text + ".zst", "--vocab", vpath, "-q")
    assert export_bytes(s, tmp) == ref_bytes, "zstd input gives another C"
    info_z = json.loads(run("info", s, "--json").stdout)
    for k in ("docs", "docs_dropped", "tokens", "tokens_dropped", "oov_tokens", "nnz"):
        assert info_z[k] == info[k], k

    # 4. threads, memory budgets (many checkpoints) and both accumulators: the same bytes
    for i, extra in enumerate([["--threads", "1"], ["--threads", "3", "--mem", "1M"],
                               ["--threads", "2", "--mem", "1M", "--accumulator=hash"],
                               ["--threads", "2", "--accumulator=dense"],
                               ["--threads", "1", "--mem", "1M", "--accumulator=hash"]]):
        s = os.path.join(tmp, "var%d.store" % i)
        p = run("ingest", s, text, "--vocab", vpath, *extra)
        assert export_bytes(s, tmp) == ref_bytes, "ingest %s gives another C" % " ".join(extra)
        info_v = json.loads(run("info", s, "--json").stdout)
        for k in ("docs", "docs_dropped", "tokens", "tokens_dropped", "oov_tokens", "nnz"):
            assert info_v[k] == info[k], (extra, k)
        if "1M" in extra:
            assert b"checkpoint" in p.stderr
    # 5. long documents over a wider vocabulary: documents of more than 64 distinct words
    # (sorted by radix, two passes for ids above 255) against the reference, by both
    # accumulators
    lvocab, llines = make_corpus(seed=11, n_vocab=700, n_oov=20, n_docs=40, max_len=900)
    ldocs = counts(lvocab, llines)
    assert max(len(h) for h, _ in ldocs) > 200, "no long document"
    lv = os.path.join(tmp, "long.vocab.txt")
    write_text(lv, lvocab)
    ltext = os.path.join(tmp, "long.txt")
    write_text(ltext, llines)
    C_ref, _ = reference_c(len(lvocab), ldocs)
    long_bytes = None
    for i, extra in enumerate([[], ["--threads", "3", "--mem", "1M", "--accumulator=hash"]]):
        s = os.path.join(tmp, "long%d.store" % i)
        run("ingest", s, ltext, "--vocab", lv, "-q", *extra)
        run("export", s, "-o", mm)
        C = read_mm(mm, len(lvocab))
        lerr = np.abs(C - C_ref).max()
        assert lerr <= 1e-15 + 1e-12 * np.abs(C_ref).max(), "long documents: %g" % lerr
        assert np.array_equal(C != 0, C_ref != 0), "long documents: sparsity pattern"
        b = export_bytes(s, tmp)
        assert long_bytes is None or b == long_bytes, "long documents %s" % " ".join(extra)
        long_bytes = b
    subprocess.run(["rm", "-rf", tmp])
    print("ok: C matches the numpy reference (max err %.3g); formats, stdin, zstd, threads, "
          "budgets and accumulators agree byte for byte; long documents too" % err)


if __name__ == "__main__":
    main()
