"""sklearn.py — JSMF, an sklearn-style estimator: a scipy sparse doc-term matrix (after
CountVectorizer) in, topics out (components_, K x N: the spectral fit refined over the rows)
and theta from transform, so it goes in a Pipeline where LatentDirichletAllocation would."""
from __future__ import annotations

import os
import shutil
import tempfile
import weakref
from typing import Any, Dict, Optional, Sequence, Union

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, TransformerMixin

from ._progress import ProgressArg
from .model import Model, fit as _fit
from .store import Store


REFINE_ITERS = "auto"  # the library's budget of passes (jsmf_refine_auto_iters)


class JSMF(TransformerMixin, BaseEstimator):
    """Topics of a doc-term count matrix by the Rectified Anchor Word fit, refined over the
    documents.

    fit(X) ingests the rows of X (documents; columns are words) into a store (`store`: a new
    directory that is kept, or a temporary one removed after the fit), fits n_components
    topics, then refines them by `refine_iters` passes over the rows (synchronous CVB0 for LDA
    started from the spectral topics: 'jsmf fit --refine N' on that store, jsmf.fit(refine=N));
    components_ is B^T (rows p(word | topic), each summing to 1; LatentDirichletAllocation's
    are unnormalised), transform(X) is theta per document (rows on the simplex). `vocabulary`
    names the columns (else "w0", "w1", ...; fit(X, vocabulary=...) too). min_doc_len: rows
    with fewer tokens add nothing to C or to the refinement (the CLI's default is 5).

    refine_iters defaults to "auto", the library's budget of passes (80 where nnz(H) x K is at
    most 2^25, fewer beyond: jsmf_refine_auto_iters), not 0 (the spectral fit alone),
    because the estimator holds the documents anyway and the refined topics are far better
    in held-out likelihood on every corpus measured (tools/bench/heldout-results.md, the idle
    run at ac30b9d, K=50, held-out LL per token, refined against the fit alone: kjv
    -6.581 against -6.732, debdesc -6.759 against -7.234, debdesc in 10-line documents -7.041
    against -7.304; each above tomotopy's LDA) for 1.3x (kjv: 2.8 s against 2.2) to 3x
    (10-line documents: 12.6 s against 4.1) the fit's wall time. refine_iters=0 gives the
    spectral fit alone, as before (faster); an integer asks for that many passes."""

    model_: Model
    components_: np.ndarray
    n_features_in_: int
    feature_names_in_: np.ndarray

    def __init__(self, n_components: int = 10, vocabulary: Optional[Sequence[str]] = None,
                 levels: Sequence[int] = (), min_doc_len: int = 5, store: Optional[str] = None,
                 rectify: Optional[str] = None, anchors: Optional[str] = None,
                 recover: Optional[str] = None, random_state: Optional[int] = None,
                 threads: int = 0, max_iter: int = 1000, tol: float = 1e-5,
                 progress: ProgressArg = False,
                 refine_iters: Union[int, str] = REFINE_ITERS) -> None:
        self.n_components = n_components
        self.vocabulary = vocabulary
        self.levels = levels
        self.min_doc_len = min_doc_len
        self.store = store
        self.rectify = rectify
        self.anchors = anchors
        self.recover = recover
        self.random_state = random_state
        self.threads = threads
        self.max_iter = max_iter
        self.tol = tol
        self.progress = progress
        self.refine_iters = refine_iters

    def fit(self, X: Any, y: Any = None, vocabulary: Optional[Sequence[str]] = None) -> JSMF:
        """Ingest the rows of X (a doc-term count matrix) into a store, fit n_components topics
        and refine them over the rows (`refine_iters` passes)."""
        X = _counts(X)
        words = self._words(X, vocabulary)
        tmp = None
        path = self.store
        if path is None:
            tmp = tempfile.mkdtemp(prefix="jsmf-sk-")
            path = os.path.join(tmp, "store")
        try:
            opts = self._fit_opts()
            # a refinement reads the documents the store holds (its default; said here since
            # the refinement needs them)
            st = Store.create(path, words, min_doc_len=self.min_doc_len,
                              hold="docs" if opts["refine"] else None)
            st.ingest(X, name="sklearn", threads=self.threads, progress=self.progress)
            self.model_ = _fit(st, self.n_components, progress=self.progress, **opts)
        finally:
            if tmp:
                shutil.rmtree(tmp, ignore_errors=True)
        return self._fitted(X, words, vocabulary)

    def _words(self, X: Any, vocabulary: Optional[Sequence[str]]) -> list:
        """The names of X's columns: `vocabulary`, else the estimator's, else w0, w1, ..."""
        words = vocabulary if vocabulary is not None else self.vocabulary
        words = list(words) if words is not None else ["w%d" % i for i in range(X.shape[1])]
        if len(words) != X.shape[1]:
            raise ValueError("vocabulary has %d words, X %d columns" % (len(words), X.shape[1]))
        return words

    def _fit_opts(self) -> Dict[str, Any]:
        """jsmf.fit's options from the estimator's parameters."""
        auto = self.refine_iters == "auto"
        ok = auto or (isinstance(self.refine_iters, (int, np.integer)) and
                      not isinstance(self.refine_iters, bool) and self.refine_iters >= 0)
        if not ok:
            raise ValueError("refine_iters must be \"auto\" or an integer >= 0, not %r" %
                             (self.refine_iters,))
        opts: Dict[str, Any] = {"levels": tuple(self.levels), "rectify": self.rectify,
                                "anchors": self.anchors, "recover": self.recover,
                                "threads": self.threads}
        if self.random_state is not None:
            opts["seed"] = int(self.random_state)
        # the estimator refines always ("auto": the budget's passes), 0 alone asks for none
        opts["refine"] = True if auto else int(self.refine_iters)
        return opts

    def _fitted(self, X: Any, words: list, vocabulary: Optional[Sequence[str]]) -> JSMF:
        """The fitted attributes, from model_."""
        self.components_ = np.ascontiguousarray(self.model_.B.T)
        self.n_features_in_ = X.shape[1]
        if self.vocabulary is not None or vocabulary is not None:
            self.feature_names_in_ = np.array(words, dtype=object)
        return self

    def partial_fit(self, X: Any, y: Any = None,
                    vocabulary: Optional[Sequence[str]] = None) -> JSMF:
        """The nightly loop in sklearn's form: the rows of X (over the same columns every call)
        are appended to the estimator's store, kept for its lifetime (`store`, or a temporary
        directory removed with the estimator), and the topics refit from the last model (a
        night started from yesterday's, formats/model.md "Nights": no spectral fit, the topics
        held where the data stays, their lineage in model_.lineage()). The first call fits as
        fit does (with refine_iters="auto"). Every call's rows are new documents, as every
        mini-batch of LatentDirichletAllocation.partial_fit is."""
        X = _counts(X)
        first = not hasattr(self, "_nights")
        if not first and X.shape[1] != self.n_features_in_:
            raise ValueError("X has %d columns, the estimator's store %d words" %
                             (X.shape[1], self.n_features_in_))
        words = self._words(X, vocabulary)
        opts = self._fit_opts()
        if first:
            work = tempfile.mkdtemp(prefix="jsmf-sk-partial-")
            self._partial_dir = work
            weakref.finalize(self, shutil.rmtree, work, True)
            self._partial_store = self.store or os.path.join(work, "store")
            Store.create(self._partial_store, words, min_doc_len=self.min_doc_len, hold="docs")
            self._nights = 0
        st = Store.open(self._partial_store)
        st.ingest(X, name="sklearn-%d" % (self._nights + 1), threads=self.threads,
                  progress=self.progress)
        night = os.path.join(self._partial_dir, "night%d" % (self._nights + 1))
        prev = os.path.join(self._partial_dir, "night%d" % self._nights) if self._nights else None
        self.model_ = _fit(st, self.n_components, out=night, previous=prev, force=True,
                           progress=self.progress, **opts)
        if prev:
            shutil.rmtree(prev, ignore_errors=True)  # only the last model is kept
        self._nights += 1
        return self._fitted(X, words, vocabulary)

    def transform(self, X: Any) -> np.ndarray:
        """theta of the rows of X (documents x n_components, rows on the simplex)."""
        X = _counts(X)
        if X.shape[1] != self.n_features_in_:
            raise ValueError("X has %d columns, the model %d words" % (X.shape[1],
                                                                      self.n_features_in_))
        return self.model_.infer(X, threads=self.threads, max_iters=self.max_iter, tol=self.tol)

    def get_feature_names_out(self, input_features: Any = None) -> np.ndarray:
        """The names of the columns transform gives: jsmf0, jsmf1, ..."""
        return np.array(["jsmf%d" % t for t in range(self.n_components)], dtype=object)


def _counts(X: Any) -> Any:
    X = sp.csr_matrix(X)
    if X.nnz and (X.data.min() < 0 or not np.all(np.equal(np.mod(X.data, 1), 0))):
        raise ValueError("X must hold non-negative integer counts")
    return X
