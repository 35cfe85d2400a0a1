"""test_store.py — ingest from Python equals ingest from the file; errors; interrupt and resume."""
import os

import numpy as np
import pytest

import jsmf
from conftest import cli


def _lines(path):
    with open(path, "rb") as f:
        for line in f:
            yield line.rstrip(b"\n")


def test_iterable_equals_file(tmp_path, kjv_text, kjv_store):
    txt, vocab = kjv_text
    st = jsmf.Store(tmp_path / "py")
    r = st.ingest((l.decode() for l in _lines(txt)), vocabulary=vocab, progress=False)
    assert r["docs"] > 1000
    a, b = jsmf.Store(kjv_store), st
    ia, ib = a.info(), b.info()
    for key in ("n_words", "docs", "docs_dropped", "tokens", "tokens_dropped", "oov_tokens",
                "nnz"):
        assert ia[key] == ib[key], key
    assert a.check()["digest"] == b.check()["digest"]
    wa, dfa, tfa = a.vocabulary()
    wb, dfb, tfb = b.vocabulary()
    assert list(wa) == list(wb) and (dfa == dfb).all() and (tfa == tfb).all()


def test_files_and_info(tmp_path, kjv_text):
    txt, vocab = kjv_text
    st = jsmf.Store(tmp_path / "s")
    r = st.ingest_files([txt], vocabulary=vocab, progress=False)
    assert r["inputs_done"] == 1
    info = st.info()
    assert info["inputs"][0]["complete"] and info["docs"] == r["docs"]
    with pytest.raises(jsmf.ExistsError):  # the same input again
        st.ingest_files([txt], progress=False)
    m = jsmf.Store.merge(tmp_path / "m", st, st)
    assert m.info()["docs"] == 2 * info["docs"]


def test_bad_input_names_file_and_line(tmp_path):
    bad = tmp_path / "bad.ldac"
    bad.write_text("2 0:1 1:2\n3 0:1 x:2\n")
    (tmp_path / "v.txt").write_text("a\nb\nc\n")
    with pytest.raises(jsmf.FormatError) as e:
        jsmf.Store(tmp_path / "s").ingest_files([bad], vocabulary=tmp_path / "v.txt",
                                                format="ldac", progress=False)
    assert "bad.ldac:2" in str(e.value) and e.value.code == -4
    with pytest.raises(jsmf.NotFoundError) as e:
        jsmf.Store.open(tmp_path / "nothing")
    assert "nothing" in e.value.message


def _interrupt_after(n):
    calls = []

    def progress(what, done, total, unit):
        calls.append(done)
        if len(calls) == n:
            raise KeyboardInterrupt
    return progress


def test_interrupted_iterable_resumes(tmp_path, kjv_text, kjv_store):
    txt, vocab = kjv_text
    st = jsmf.Store(tmp_path / "py")
    lines = [l.decode() for l in _lines(txt)]

    def docs():
        for i, l in enumerate(lines):
            if i == 700:
                raise KeyboardInterrupt
            yield l
    with pytest.raises(KeyboardInterrupt):
        st.ingest(docs(), vocabulary=vocab, progress=False)
    rec = st.info()["inputs"][0]
    assert not rec["complete"] and rec["next_doc"] == 700
    r = st.ingest(lines, progress=False)  # the same call, the same documents: resumes
    assert r["resumed_from"] == 700
    assert st.check()["digest"] == jsmf.Store(kjv_store).check()["digest"]


def test_interrupted_files_resume(tmp_path, kjv_text, kjv_store):
    txt, vocab = kjv_text
    st = jsmf.Store(tmp_path / "f")
    with pytest.raises(jsmf.Interrupted) as e:
        st.ingest_files([txt], vocabulary=vocab, progress=_interrupt_after(1))
    assert e.value.code == -14 and "resumes" in e.value.message
    rec = st.info()["inputs"][0]
    assert not rec["complete"] and rec["next_doc"] == 1024
    r = st.ingest_files([txt], progress=False)
    assert r["inputs_resumed"] == 1
    assert st.check()["digest"] == jsmf.Store(kjv_store).check()["digest"]


def test_count_vocabulary_is_jsmf_vocab(tmp_path, kjv_text):
    txt, _ = kjv_text
    cli("vocab", txt, "-o", tmp_path / "v.txt", "--quiet")
    want = [l.split("\t") for l in (tmp_path / "v.txt").read_text().splitlines()
            if l and not l.startswith("#")]
    words, df, tf = jsmf.count_vocabulary([l.decode() for l in _lines(txt)])
    assert words == [w[0] for w in want]
    if len(want[0]) == 3:
        assert [int(w[1]) for w in want] == df.tolist() and [int(w[2]) for w in want] == tf.tolist()


def test_iterable_grows_as_file(tmp_path, kjv_text):
    """A store whose rule grows (made from `jsmf vocab`'s file) counts and admits the words of
    documents fed from Python as it does stdin's (an input read once: its words join at the end
    of the command; a file's join at its start, after a pre-pass): same vocabulary, pending
    words and C."""
    import json
    txt, _ = kjv_text
    lines = open(txt, "rb").read().splitlines(True)
    d1, d2 = tmp_path / "d1.txt", tmp_path / "d2.txt"
    d1.write_bytes(b"".join(lines[:929]))   # the Old Testament, then the New
    d2.write_bytes(b"".join(lines[929:]))
    cli("vocab", d1, "-o", tmp_path / "v.txt", "--quiet")
    for name in ("cli", "py"):
        cli("ingest", tmp_path / name, d1, "--vocab", tmp_path / "v.txt", "--quiet")
    with open(d2, "rb") as f:
        cli("ingest", tmp_path / "cli", "-", "--quiet", stdin=f)
    r = jsmf.Store(tmp_path / "py").ingest((l.decode() for l in _lines(d2)), name="night2",
                                           progress=False)
    ia, ib = (json.loads(cli("info", tmp_path / n, "--json").stdout) for n in ("cli", "py"))
    assert ia["admitted_late"] > 100 and r["words_admitted"] == ia["admitted_late"], (ia, r)
    for key in ("n_words", "docs", "tokens", "oov_tokens", "nnz", "pending_words",
                "pending_digest", "admitted_late"):
        assert ia[key] == ib[key], key
    a, b = jsmf.Store(tmp_path / "cli"), jsmf.Store(tmp_path / "py")
    assert list(a.vocabulary()[0]) == list(b.vocabulary()[0])
    assert a.check()["digest"] == b.check()["digest"]
    # the same documents again: complete, nothing left to admit
    with pytest.raises(jsmf.ExistsError):
        b.ingest((l.decode() for l in _lines(d2)), name="night2", progress=False)
