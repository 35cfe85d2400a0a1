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
