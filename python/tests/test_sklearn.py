"""test_sklearn.py — the estimator in a Pipeline after CountVectorizer, its sklearn manners."""
import numpy as np
import pytest
from sklearn.base import clone
from sklearn.feature_extraction.text import CountVectorizer
from sklearn.pipeline import Pipeline

import jsmf


@pytest.fixture(scope="module")
def docs(kjv_text):
    txt, _ = kjv_text
    return txt.read_text().splitlines()[:500]  # enough for 8 topics, quick


def test_pipeline_after_countvectorizer(docs):
    pipe = Pipeline([("counts", CountVectorizer(min_df=5, max_df=0.5, stop_words="english")),
                     ("topics", jsmf.JSMF(n_components=8, threads=1))])
    theta = pipe.fit_transform(docs)
    est = pipe.named_steps["topics"]
    n_words = len(pipe.named_steps["counts"].vocabulary_)
    assert theta.shape == (len(docs), 8) and np.allclose(theta.sum(axis=1), 1)
    assert est.components_.shape == (8, n_words)
    assert np.allclose(est.components_.sum(axis=1), 1)
    assert np.allclose(pipe.transform(docs[:5]), theta[:5])


def test_params_and_clone():
    est = jsmf.JSMF(n_components=7, min_doc_len=3)
    assert est.get_params()["n_components"] == 7
    est.set_params(n_components=9)
    assert clone(est).n_components == 9


def test_rows_are_the_documents(docs, tmp_path):
    cv = CountVectorizer(min_df=5, max_df=0.5, stop_words="english")
    X = cv.fit_transform(docs)
    words = cv.get_feature_names_out()
    est = jsmf.JSMF(n_components=6, vocabulary=words, store=str(tmp_path / "s")).fit(X)
    assert list(est.model_.vocabulary) == list(words)
    lengths = np.asarray(X.sum(axis=1)).ravel()
    info = jsmf.Store(tmp_path / "s").info()  # the store kept: every row a document
    assert info["docs"] + info["docs_dropped"] == X.shape[0]
    assert info["docs"] == (lengths >= 5).sum() and info["tokens"] == lengths[lengths >= 5].sum()


def test_refined_by_default_and_refine_iters_0_is_the_plain_fit(docs, tmp_path):
    from conftest import cli
    X = CountVectorizer(min_df=5, max_df=0.5, stop_words="english").fit_transform(docs[:200])
    est = jsmf.JSMF(n_components=6, store=str(tmp_path / "s"), threads=1).fit(X)
    assert est.refine_iters == "auto" and est.model_.summary["kind"] == "refined"
    # few documents: the budget's passes are the most, 80; the start's anchors are kept
    assert est.model_.anchors is not None and est.model_.report_["iters"] == 80
    # the default is 'jsmf fit STORE' on the store it kept (the same thread count)
    cli("fit", tmp_path / "s", "-k", 6, "-o", tmp_path / "cli", "--threads", 1, "--quiet")
    np.testing.assert_array_equal(est.components_, np.load(tmp_path / "cli" / "B.npy").T)
    assert np.allclose(est.components_.sum(axis=1), 1)
    plain = jsmf.JSMF(n_components=6, store=str(tmp_path / "p"), threads=1,
                      refine_iters=0).fit(X)
    assert plain.model_.summary["kind"] == "anchor"
    ref = jsmf.fit(tmp_path / "p", 6, threads=1, progress=False, refine=0)
    assert np.array_equal(plain.components_, ref.B.T)
    with pytest.raises(ValueError, match="refine_iters"):
        jsmf.JSMF(n_components=6, refine_iters=-1).fit(X)
    with pytest.raises(ValueError, match="refine_iters"):
        jsmf.JSMF(n_components=6, refine_iters="many").fit(X)


def test_partial_fit_is_the_nightly_loop(docs, tmp_path):
    """partial_fit appends the rows to the estimator's store and refits from the last model; the
    same loop by hand (Store.ingest + fit(previous=...)) gives the same topics."""
    cv = CountVectorizer(min_df=5, max_df=0.5, stop_words="english")
    X = cv.fit_transform(docs).tocsr()
    words = list(cv.get_feature_names_out())
    parts = [X[i * X.shape[0] // 3:(i + 1) * X.shape[0] // 3] for i in range(3)]
    est = jsmf.JSMF(n_components=6, vocabulary=words, threads=1)
    st = jsmf.Store.create(tmp_path / "s", words, min_doc_len=5, hold="docs")
    prev = None
    for i, part in enumerate(parts, 1):
        est.partial_fit(part)
        st.ingest(part, name="sklearn-%d" % i, threads=1, progress=False)  # its names
        out = tmp_path / ("m%d" % i)
        m = jsmf.fit(st, 6, out=out, previous=prev, threads=1, progress=False)
        np.testing.assert_array_equal(est.components_, m.B.T)
        kind = est.model_.summary["refine"]["start_kind"]
        assert kind == ("anchor" if i == 1 else "previous")
        assert est.model_.report_["from_previous"] == (i > 1)
        prev = out
    lin = est.model_.lineage()
    assert lin is not None and sum(p is None for p in lin["prev"]) <= 1  # topics held
    assert est.transform(parts[0]).shape == (parts[0].shape[0], 6)
    cold = jsmf.fit(st, 6, previous=prev, cold=True, threads=1, progress=False)
    assert cold.summary["refine"]["start_kind"] == "anchor"
    with pytest.raises(ValueError, match="columns"):
        est.partial_fit(X[:, :10])
