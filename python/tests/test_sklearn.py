"""test_sklearn.py — the estimator in a Pipeline after CountVectorizer, its sklearn manners."""
import gc
import json
import math
import os
import pickle
import warnings

import joblib
import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import clone
from sklearn.exceptions import NotFittedError
from sklearn.feature_extraction.text import CountVectorizer
from sklearn.pipeline import Pipeline
from sklearn.utils.estimator_checks import check_estimator

import jsmf
from jsmf.sklearn import XFAIL_CHECKS


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


# ---- sklearn's conventions (issue 57) ---------------------------------------------------------


@pytest.fixture(scope="module")
def toy():
    """Documents drawn from 4 known topics over 30 words: quick to fit."""
    rng = np.random.RandomState(0)
    B = rng.dirichlet(np.full(30, 0.1), size=4)
    theta = rng.dirichlet(np.full(4, 0.3), size=200)
    return np.vstack([rng.multinomial(40, t @ B) for t in theta])


def small(**kw):
    kw.setdefault("n_components", 4)
    kw.setdefault("threads", 1)
    kw.setdefault("refine_iters", 5)
    return jsmf.JSMF(**kw)


def test_check_estimator_passes_but_the_listed_checks():
    """sklearn's own checks: every one passes but the fixed list XFAIL_CHECKS, skipped with its
    reason. rectify="none" and min_doc_len=1 because the checks' data are a few short documents
    over 3 to 5 words, whose C the default rectification leaves with one independent anchor."""
    assert sorted(XFAIL_CHECKS) == sorted([
        "check_estimators_fit_returns_self", "check_estimators_overwrite_params",
        "check_fit_idempotent", "check_fit_check_is_fitted", "check_n_features_in",
        "check_methods_sample_order_invariance", "check_methods_subset_invariance",
        "check_dict_unchanged", "check_dont_overwrite_parameters", "check_fit2d_predict1d"])
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        check_estimator(jsmf.JSMF(n_components=2, refine_iters=2, threads=1, min_doc_len=1,
                                  rectify="none"))
    skipped = {str(x.message).split()[1] for x in w
               if x.category.__name__ == "SkipTestWarning"}
    assert skipped == set(XFAIL_CHECKS)
    assert all(reason for reason in XFAIL_CHECKS.values())


def test_what_the_skipped_checks_check(toy):
    """The skipped checks' points on data the fit takes: fit returns self and is idempotent,
    check_is_fitted, n_features_in_, transform row by row (order and subsets), no parameter or
    __dict__ changed by fit's and transform's callers, 1-D input refused."""
    est = small()
    for method in ("transform", "score", "perplexity"):
        with pytest.raises(NotFittedError):
            getattr(est, method)(toy)
    params = est.get_params()
    assert est.fit(toy) is est and est.get_params() == params
    assert est.n_features_in_ == 30 and not hasattr(est, "feature_names_in_")
    assert all(not k.endswith("_") or k in ("model_", "components_", "n_features_in_", "n_iter_")
               for k in vars(est) if not k.startswith("_"))
    theta = est.transform(toy)
    np.testing.assert_array_equal(small().fit(toy).transform(toy), theta)
    before = dict(vars(est))
    perm = np.random.RandomState(1).permutation(len(toy))
    np.testing.assert_allclose(est.transform(toy[perm]), theta[perm], atol=1e-9)
    np.testing.assert_allclose(est.transform(toy[10:20]), theta[10:20], atol=1e-9)
    est.score(toy[:20])
    assert vars(est).keys() == before.keys() and all(vars(est)[k] is before[k] for k in before)
    with pytest.raises(ValueError):
        est.transform(toy[0])
    with pytest.raises(ValueError, match="n_features|features"):
        est.transform(toy[:, :10])
    with pytest.raises(ValueError, match="n_features = 4"):
        small().fit(toy[:, :4])
    with pytest.raises(ValueError, match="n_samples = 1"):
        small().fit(toy[:1])


def test_score_is_jsmf_eval_corpus_and_perplexity_its_exp(toy, tmp_path):
    """score = the heldout_ll of 'jsmf eval MODEL --corpus' over the same rows (an LDA-C file),
    bit for bit at one thread; perplexity = exp(-score); no row of 2 tokens: NaN."""
    from conftest import cli
    est = small().fit(toy[:150])
    held = toy[150:]
    s = est.score(held)
    assert s == est.model_.eval(docs=sp.csr_matrix(held))["heldout_ll"] and s < 0
    assert est.perplexity(held) == pytest.approx(math.exp(-s))
    est.model_.save(tmp_path / "m")
    with open(tmp_path / "c.ldac", "w") as f:
        for row in held:
            nz = np.nonzero(row)[0]
            f.write("%d %s\n" % (len(nz), " ".join("%d:%d" % (i, row[i]) for i in nz)))
    out = cli("eval", tmp_path / "m", "--corpus", tmp_path / "c.ldac", "--format", "ldac",
              "--json", "-j", 1).stdout
    assert json.loads(out)["heldout_loglik_per_token"] == s
    one = np.zeros((3, 30))
    one[:, 0] = 1
    assert math.isnan(est.score(one))


def test_random_state_none_int_randomstate_generator(toy, tmp_path):
    """None is the library's default seed, an int the seed itself (jsmf.fit(seed=...)), a
    RandomState or Generator gives one draw in [0, 2^32) as the seed."""
    ref = jsmf.fit(_store_of(toy, tmp_path / "s"), 4, seed=7, threads=1, refine=5, progress=False)
    np.testing.assert_array_equal(small(random_state=7).fit(toy).components_, ref.B.T)
    np.testing.assert_array_equal(small(random_state=np.int64(7)).fit(toy).components_,
                                  ref.B.T)
    draw = int(np.random.RandomState(3).randint(0, 2 ** 32, dtype=np.uint64))
    assert small(random_state=np.random.RandomState(3))._seed() == draw
    assert small(random_state=np.random.default_rng(3))._seed() == \
        int(np.random.default_rng(3).integers(0, 2 ** 32))
    assert small()._seed() is None and small(random_state=5)._seed() == 5
    for bad in (-1, 2 ** 32, "x", 1.5):
        with pytest.raises(ValueError):
            small(random_state=bad).fit(toy)


def _store_of(X, path, min_doc_len=5):
    st = jsmf.Store.create(path, ["w%d" % i for i in range(X.shape[1])],
                           min_doc_len=min_doc_len, hold="docs")
    st.ingest(sp.csr_matrix(X), name="sklearn", threads=1, progress=False)
    return st


def test_real_counts_rounded_half_to_even_negatives_refused(toy):
    """Reals are rounded half to even (numpy.rint) in fit, transform and score: the same as the
    rounded counts; 0.5 is no token. Negative, NaN or infinite entries: ValueError."""
    rng = np.random.RandomState(2)
    real = toy + rng.uniform(-0.49, 0.49, size=toy.shape) * (toy > 0)
    est = small().fit(real)
    np.testing.assert_array_equal(est.components_, small().fit(toy).components_)
    np.testing.assert_array_equal(est.transform(real[:5]), est.transform(toy[:5]))
    assert est.score(real) == est.score(toy)
    halves = np.array([[0.5, 1.5, 2.5, 3.5] + [0] * 26])
    X = est._validate(halves, reset=False)
    assert X.toarray()[0, :4].tolist() == [0, 2, 2, 4] and X.nnz == 3
    for bad in (-1.0, np.nan, np.inf):
        X = toy.astype(float)
        X[3, 3] = bad
        with pytest.raises(ValueError):
            small().fit(X)
        with pytest.raises(ValueError):
            est.transform(X)


def test_vocabulary_a_list_or_a_fitted_countvectorizer(docs):
    cv = CountVectorizer(min_df=5, max_df=0.5, stop_words="english").fit(docs[:300])
    X = cv.transform(docs[:300])
    words = list(cv.get_feature_names_out())
    est = jsmf.JSMF(n_components=5, vocabulary=cv, threads=1, refine_iters=2).fit(X)
    assert list(est.model_.vocabulary) == words and list(est.feature_names_in_) == words
    by_list = jsmf.JSMF(n_components=5, vocabulary=words, threads=1, refine_iters=2).fit(X)
    np.testing.assert_array_equal(est.components_, by_list.components_)
    assert est.vocabulary is cv  # the parameter as given
    with pytest.raises(ValueError, match="fitted CountVectorizer"):
        clone(est).fit(X)  # clone clones the CountVectorizer, unfitted
    with pytest.raises(ValueError, match="vocabulary"):
        jsmf.JSMF(n_components=5, vocabulary=words[:-1]).fit(X)


def test_dataframe_feature_names_in(toy):
    pd = pytest.importorskip("pandas")
    cols = ["c%d" % i for i in range(toy.shape[1])]
    df = pd.DataFrame(toy, columns=cols)
    est = small().fit(df)
    assert list(est.feature_names_in_) == cols and list(est.model_.vocabulary) == cols
    np.testing.assert_array_equal(est.transform(df[:5]), est.transform(toy[:5]))
    with pytest.raises(ValueError):
        est.transform(df[cols[::-1]])


def test_pickle_and_joblib_round_trips(toy, tmp_path):
    """A fitted estimator and a jsmf.Model through pickle and joblib: the same arrays, report_,
    transform and score; a partial_fit estimator unpickled goes on as the original does."""
    est = small(levels=(2,)).fit(toy)
    for back in (pickle.loads(pickle.dumps(est)),
                 joblib.load(joblib.dump(est, tmp_path / "e.joblib")[0])):
        np.testing.assert_array_equal(back.components_, est.components_)
        np.testing.assert_array_equal(back.transform(toy[:10]), est.transform(toy[:10]))
        assert back.score(toy[:10]) == est.score(toy[:10])
    m = est.model_
    for m2 in (pickle.loads(pickle.dumps(m)), joblib.load(joblib.dump(m, tmp_path / "m")[0])):
        for a in ("B", "A", "alpha", "anchors", "vocabulary"):
            np.testing.assert_array_equal(getattr(m2, a), getattr(m, a))
        assert m2.summary == m.summary and m2.report_["iters"] == m.report_["iters"]
        np.testing.assert_array_equal(m2.report_["objective"], m.report_["objective"])
        assert len(m2.levels) == 1 and np.array_equal(m2.levels[0].B, m.levels[0].B)
        np.testing.assert_array_equal(m2.infer(sp.csr_matrix(toy[:5])),
                                      m.infer(sp.csr_matrix(toy[:5])))
    part = small()
    part.partial_fit(toy[:100])
    again = pickle.loads(pickle.dumps(part))
    assert again._partial_dir != part._partial_dir
    part.partial_fit(toy[100:])
    again.partial_fit(toy[100:])
    np.testing.assert_array_equal(again.components_, part.components_)
    assert again.model_.report_["from_previous"]
    work = again._partial_dir
    del again
    gc.collect()
    assert not os.path.exists(work)  # the unpickled estimator's store goes with it


def test_partial_fit_after_fit_and_fit_after_partial_fit(toy, tmp_path):
    """partial_fit after fit starts from fit's model (a night), onto fit's store where store=
    kept it; fit after partial_fit starts over, its store and models removed."""
    est = small().fit(toy[:100])
    first = est.components_
    est.partial_fit(toy[100:])
    assert est.model_.report_["from_previous"] and est.model_.lineage() is not None
    assert not np.array_equal(est.components_, first)
    work = est._partial_dir
    est.fit(toy[:100])
    assert not os.path.exists(work) and not hasattr(est, "_nights")
    np.testing.assert_array_equal(est.components_, first)
    assert est.n_iter_ == 5 and small(refine_iters=0).fit(toy).n_iter_ == 0
    kept = small(store=str(tmp_path / "s")).fit(toy[:100])
    kept.partial_fit(toy[100:])
    info = jsmf.Store(tmp_path / "s").info()
    assert [r["path"] for r in info["inputs"]] == ["python:sklearn", "python:sklearn-1"]
    assert info["docs"] == len(toy) and kept.model_.report_["from_previous"]
