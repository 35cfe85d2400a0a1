"""test_refine.py — the refinement over documents from Python (Model.refine, jsmf.refine,
jsmf.fit(corpus=/refine=)) against the CLI's 'jsmf refine' and 'jsmf fit --corpus/--refine' on
the same model and documents, the three ways of giving documents against each other, the
documents left out, bad input, and save/load of a refined model."""
import numpy as np
import pytest
import scipy.sparse as sp

import jsmf
from conftest import cli

K = 8
THREADS = 1  # the result depends on the thread count only: the same on both sides


@pytest.fixture(scope="module")
def small(tmp_path_factory, kjv_text):
    """60 kjv chapters (lines) as a corpus file, a store of them and the CLI's fit of it."""
    txt, vocab = kjv_text
    d = tmp_path_factory.mktemp("refine")
    with open(txt) as f:
        lines = [next(f) for _ in range(60)]
    (d / "c.txt").write_text("".join(lines))
    cli("ingest", d / "store", d / "c.txt", "--vocab", vocab, "--quiet")
    cli("fit", d / "store", "-k", K, "-o", d / "fit", "--threads", THREADS, "--refine", 0,
        "--quiet")
    return d, [ln.rstrip("\n") for ln in lines]


def _matrix(model, lines):
    """The lines as a doc-term count matrix over the model's words (Python's tokenizer, the
    text reader's rules)."""
    indptr, ids, counts, _oov = model._batch_of(lines)
    return sp.csr_matrix((counts.astype(np.int64), ids, indptr.astype(np.int64)),
                         shape=(len(indptr) - 1, model.n))


def _same(d, m):
    """The model's B, A and alpha are those of MODEL directory `d`, bit for bit: the same
    library code on the same documents and thread count (another thread count moves them by
    ~1e-17, which this catches: the count is passed through)."""
    for f in ("B", "A", "alpha"):
        np.testing.assert_array_equal(getattr(m, f), np.load(d / ("%s.npy" % f)), err_msg=f)


def test_refine_equals_cli(small, tmp_path):
    d, _lines = small
    cli("refine", d / "fit", "--corpus", d / "c.txt", "-o", tmp_path / "cli", "--threads",
        THREADS, "--quiet")
    r = jsmf.refine(d / "fit", d / "c.txt", out=tmp_path / "py", threads=THREADS)
    _same(tmp_path / "cli", r)
    assert r.summary["kind"] == "refined" and r.summary["refine"]["start_kind"] == "anchor"
    assert r.alpha is not None  # chapters: >= 100 tokens a document on average, alpha learned
    assert r.report_["iters"] == 80 and r.report_["docs"] == 60 and r.report_["dropped"] == 0
    assert np.allclose(r.B.sum(axis=0), 1) and abs(r.A.sum() - 1) < 1e-9
    back = jsmf.load(tmp_path / "py")  # saved and loaded like any model
    assert back.summary["kind"] == "refined" and repr(back).startswith("<jsmf.Model refined")
    for f in ("B", "A", "alpha"):
        assert np.array_equal(getattr(back, f), getattr(r, f)), f


def test_matrix_file_and_store_give_the_same_model(small):
    d, lines = small
    m = jsmf.load(d / "fit")
    ref = m.refine(d / "c.txt", iters=15, threads=THREADS)
    X = _matrix(m, lines)
    for docs in (X, X.toarray(), X.tocoo(), jsmf.Store(d / "store")):
        r = m.refine(docs, iters=15, threads=THREADS)
        for f in ("B", "A", "alpha"):
            assert np.array_equal(getattr(r, f), getattr(ref, f)), (type(docs), f)


def test_short_documents_are_left_out_as_the_cli_does(small):
    d, lines = small
    m = jsmf.load(d / "fit")
    X = _matrix(m, lines[:30]).tolil()
    short = sp.lil_matrix((3, m.n), dtype=np.int64)
    short[0, 5], short[1, 7], short[1, 9], short[2, 11] = 4, 2, 2, 1  # 4, 4 and 1 tokens
    Y = sp.vstack([short[:2], X, short[2:]]).tocsr()
    r = m.refine(Y, iters=5, threads=THREADS)
    assert r.report_["dropped"] == 3 and r.report_["docs"] == 30
    assert np.array_equal(r.B, m.refine(X.tocsr(), iters=5, threads=THREADS).B)
    assert m.refine(Y, iters=5, min_doc_len=4, threads=THREADS).report_["dropped"] == 1


def test_fit_with_corpus_or_refine_equals_cli(small, tmp_path):
    d, _lines = small
    cli("fit", d / "store", "-k", K, "-o", tmp_path / "cli", "--corpus", d / "c.txt",
        "--threads", THREADS, "--quiet")
    m = jsmf.fit(d / "store", K, out=tmp_path / "py", corpus=[d / "c.txt"], threads=THREADS,
                 progress=False)
    _same(tmp_path / "cli", m)
    _same(tmp_path / "cli", jsmf.load(tmp_path / "py"))  # out= holds the refined model
    assert m.report_["fit"]["c_documents"] == 1  # multiplied through the documents, as the CLI
    # over the store's own documents (what the sklearn estimator does): the same documents
    # refine=True: the library's passes (80), as --corpus without --refine takes
    _same(tmp_path / "cli", jsmf.fit(d / "store", K, refine=True, threads=THREADS,
                                     progress=False))
    # the default, as the CLI's: refined where the store holds its documents (the budget's 80
    # passes here), the spectral fit with refine=0
    cli("fit", d / "store", "-k", K, "-o", tmp_path / "clidef", "--threads", THREADS, "--quiet")
    m = jsmf.fit(d / "store", K, threads=THREADS, progress=False)
    _same(tmp_path / "clidef", m)
    assert m.summary["kind"] == "refined" and m.report_["iters"] == 80
    m0 = jsmf.fit(d / "store", K, threads=THREADS, progress=False, refine=0)
    assert m0.summary["kind"] == "anchor" and "iters" not in m0.report_
    with pytest.raises(jsmf.InvalidError, match="give one of them"):
        jsmf.fit(d / "store", K, corpus=[d / "c.txt"], refine=0, progress=False)


def test_bad_input(small, tmp_path):
    d, lines = small
    m = jsmf.load(d / "fit")
    X = _matrix(m, lines[:5]).astype(np.float64)
    bad = X.copy()
    bad.data[3] = -1
    with pytest.raises(ValueError, match="non-negative integers"):
        m.refine(bad)
    bad.data[3] = 1.5
    with pytest.raises(ValueError, match="row 0, column .* holds 1.5"):
        m.refine(bad)
    with pytest.raises(ValueError, match="columns"):
        m.refine(X[:, :-1])
    with pytest.raises(ValueError, match="no row of the matrix has 10000 tokens"):
        m.refine(X, min_doc_len=10000)
    with pytest.raises(ValueError, match="at least 1"):  # 0 would be the library's budget
        m.refine(X, iters=0)
    with pytest.raises(ValueError, match="iters"):  # one ctypes would wrap round
        m.refine(X, iters=-1)
    with pytest.raises(TypeError):
        m.refine(X, nosuchoption=1)
    with pytest.raises(jsmf.InvalidError) as e:  # the library's own check, its message
        m.refine(X, alpha=-1.0)
    assert e.value.code == -1 and e.value.message
    with pytest.raises(jsmf.InvalidError, match="in-vocabulary tokens"):  # the reader's
        m.refine(d / "c.txt", min_doc_len=10 ** 9)
    with pytest.raises(jsmf.JsmfError, match="nosuchfile"):
        m.refine(tmp_path / "nosuchfile.txt")
    with pytest.raises(jsmf.NotFoundError, match="cannot read the corpus"):
        jsmf.fit(d / "store", K, out=tmp_path / "never", corpus=tmp_path / "nosuchfile.txt",
                 progress=False)
    assert not (tmp_path / "never").exists()  # refused before the fit: nothing written


def test_interrupted_between_passes_then_again(small):
    d, _lines = small
    m = jsmf.load(d / "fit")
    seen = []

    def stop(what, done, total, unit):
        seen.append((what, done, total))
        if done == 3:
            raise KeyboardInterrupt
    with pytest.raises(jsmf.Interrupted):
        m.refine(d / "c.txt", iters=10, threads=THREADS, progress=stop)
    assert seen == [("refine", i, 10) for i in (1, 2, 3)]  # stopped after the third pass
    assert m.refine(d / "c.txt", iters=10, threads=THREADS).report_["iters"] == 10


def test_method_names_and_exclude_alias_equal_cli(small, tmp_path):
    d, _lines = small
    cli("refine", d / "fit", "--corpus", d / "c.txt", "-o", tmp_path / "em", "--method", "em",
        "--iters", 10, "--threads", THREADS, "--quiet")
    em = jsmf.refine(d / "fit", d / "c.txt", method="em", iters=10, threads=THREADS)
    _same(tmp_path / "em", em)
    assert em.summary["refine"]["method_name"] == "em"
    m = jsmf.load(d / "fit")
    assert np.array_equal(m.refine(d / "c.txt", exclude=False, iters=10, threads=THREADS).B,
                          em.B)  # exclude=False: the first spelling of method="em"
    cvb0 = m.refine(d / "c.txt", iters=10, threads=THREADS)  # the library's default method
    assert cvb0.summary["refine"]["method_name"] == "cvb0"
    assert np.array_equal(m.refine(d / "c.txt", exclude=True, iters=10, threads=THREADS).B,
                          cvb0.B)
    with pytest.raises(ValueError, match="method must be em or cvb0, not 'x'"):
        m.refine(d / "c.txt", method="x")
