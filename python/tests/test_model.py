"""test_model.py — fit and fdm from Python against the CLI; the model's arrays, top words,
theta, metrics, save/load, refit after a previous model and diff; pyLDAvis's arguments."""
import filecmp
import os

import numpy as np
import pytest

import jsmf
from conftest import cli

K = 12


@pytest.fixture(scope="module")
def fitted(tmp_path_factory, kjv_store):
    d = tmp_path_factory.mktemp("fit")
    cli("fit", kjv_store, "-k", K, "-o", d / "cli", "--quiet")
    m = jsmf.fit(kjv_store, K, out=d / "py", progress=False)
    return d, m


def test_fit_writes_what_the_cli_writes(fitted):
    d, m = fitted
    for f in ("B.npy", "A.npy", "alpha.npy", "anchors.txt", "vocab.txt"):
        assert filecmp.cmp(d / "cli" / f, d / "py" / f, shallow=False), f
    assert np.array_equal(np.load(d / "cli" / "B.npy"), m.B)


def test_model_arrays_are_views(fitted):
    _d, m = fitted
    assert m.B.shape == (m.n, K) and m.A.shape == (K, K) and m.alpha.shape == (K,)
    assert not m.B.flags.owndata and not m.B.flags.writeable
    assert np.allclose(m.B.sum(axis=0), 1) and abs(m.A.sum() - 1) < 1e-9
    assert len(set(m.vocabulary[m.anchors])) == K
    top = m.top_words(5)
    assert len(top) == K and all(len(t) == 5 for t in top)
    B = m.B
    del m  # the array keeps the model alive
    assert np.isfinite(B.sum())


def test_infer_eval_save_load(fitted, tmp_path, kjv_store):
    d, m = fitted
    theta = m.infer(["And God said, Let there be light: and there was light.",
                     ["moses", "aaron", "pharaoh", "egypt", "nosuchword"], ""])
    assert theta.shape == (3, K) and np.allclose(theta.sum(axis=1), 1)
    assert np.allclose(theta[2], 1.0 / K)  # no word of the vocabulary: uniform
    ev = m.eval(store=kjv_store, docs=["in the beginning god created the heaven and the earth"] * 3)
    assert np.isfinite(ev["dominancy"]) and ev["heldout_tokens"] > 0
    m.save(tmp_path / "again")
    m2 = jsmf.load(tmp_path / "again")
    assert np.array_equal(m2.B, m.B) and list(m2.vocabulary) == list(m.vocabulary)
    m.report(tmp_path / "r.html")
    assert (tmp_path / "r.html").read_text().startswith("<!DOCTYPE html")


def test_refit_after_previous_and_diff(fitted, tmp_path, kjv_store):
    d, m = fitted
    m2 = jsmf.fit(kjv_store, K, out=tmp_path / "next", previous=d / "py", progress=False)
    lin = m2.lineage()
    assert lin["k_prev"] == K and lin["prev"] == list(range(K))  # same C: every topic kept
    df = jsmf.diff(d / "py", m2)
    assert df["continuing"] == K and df["new"] == 0 and df["recorded"]


def test_interrupted_fit_then_again(tmp_path, kjv_store):
    def stop(what, done, total, unit):
        if what == "rectify":  # the first step starts: stop there
            raise KeyboardInterrupt
    with pytest.raises(jsmf.Interrupted):
        jsmf.fit(kjv_store, K, out=tmp_path / "m", progress=stop)
    assert not os.path.exists(tmp_path / "m")  # nothing written
    m = jsmf.fit(kjv_store, K, out=tmp_path / "m", progress=False)
    assert m.k == K


def test_fit_errors_carry_the_library_message(tmp_path, kjv_store):
    with pytest.raises(jsmf.InvalidError) as e:
        jsmf.fit(kjv_store, 1, progress=False)
    assert e.value.code == -1 and e.value.message
    with pytest.raises(jsmf.NotFoundError) as e:
        jsmf.fit(tmp_path / "none", 5, progress=False)
    assert "none" in str(e.value)


def test_fdm_small_and_interrupt(tmp_path, kjv_store):
    m = jsmf.fdm(kjv_store, 6, out=tmp_path / "f", device="cpu", init="none", steps=120, starts=1,
                 progress=False)
    assert m.B.shape[1] == 6 and m.anchors is None and m.report_["steps"] == 120
    n = []

    def stop(what, done, total, unit):
        n.append(done)
        if len(n) == 35:
            raise KeyboardInterrupt
    with pytest.raises(jsmf.Interrupted):
        jsmf.fdm(kjv_store, 6, out=tmp_path / "g", device="cpu", init="none", steps=120, starts=1,
                 checkpoint_every=10, progress=stop)
    assert os.path.exists(str(tmp_path / "g") + ".ckpt")
    m = jsmf.fdm(kjv_store, 6, out=tmp_path / "g", device="cpu", init="none", steps=120, starts=1,
                 checkpoint_every=10, progress=False)
    assert m.report_["resumed_from"] >= 30
    ref = jsmf.load(tmp_path / "f")
    assert np.array_equal(ref.B, m.B)  # a resumed CPU run equals the uninterrupted one


def test_pyldavis_arguments(fitted, kjv_store):
    """pyLDAvis.prepare's documented contract: topic_term_dists K x V and doc_topic_dists
    D x K with rows summing to 1, doc_lengths D, vocab V, term_frequency V."""
    _d, m = fitted
    a = m.to_pyldavis(kjv_store)
    ttd, dtd = a["topic_term_dists"], a["doc_topic_dists"]
    V = len(a["vocab"])
    assert ttd.shape == (K, V) and np.allclose(ttd.sum(axis=1), 1) and (ttd >= 0).all()
    assert dtd.shape == (1, K) and np.allclose(dtd.sum(axis=1), 1)
    assert a["doc_lengths"].shape == (1,) and a["doc_lengths"][0] == jsmf.Store(kjv_store).info()["tokens"]
    assert a["term_frequency"].shape == (V,) and a["term_frequency"].sum() == a["doc_lengths"][0]
    assert all(isinstance(w, str) for w in a["vocab"])
    # topic sizes as pyLDAvis computes them (theta^T doc_lengths, normalised) are p(z)
    sizes = (dtd * a["doc_lengths"][:, None]).sum(axis=0)
    assert np.allclose(sizes / sizes.sum(), m.topic_sizes / m.topic_sizes.sum())
