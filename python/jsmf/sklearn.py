"""sklearn.py — JSMF, an sklearn-style estimator: a scipy sparse doc-term matrix (after
CountVectorizer) in, topics out (components_, K x N) and theta from transform, so it goes in
a Pipeline where LatentDirichletAllocation would."""
import os
import shutil
import tempfile

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin

from .model import Model, fit as _fit
from .store import Store


class JSMF(TransformerMixin, BaseEstimator):
    """Topics of a doc-term count matrix by the Rectified Anchor Word fit.

    fit(X) ingests the rows of X (documents; columns are words) into a store (`store`: a new
    directory that is kept, or a temporary one removed after the fit) and fits n_components topics; components_ is B^T
    (rows p(word | topic), each summing to 1; LatentDirichletAllocation's are unnormalised),
    transform(X) is theta per document (rows on the simplex). `vocabulary` names the columns
    (else "w0", "w1", ...; fit(X, vocabulary=...) too). min_doc_len: rows with fewer tokens
    add nothing to C (the CLI's default is 5)."""

    def __init__(self, n_components=10, vocabulary=None, levels=(), min_doc_len=5, store=None,
                 rectify=None, anchors=None, recover=None, random_state=None, threads=0,
                 max_iter=1000, tol=1e-5, progress=False):
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

    def fit(self, X, y=None, vocabulary=None):
        X = _counts(X)
        words = vocabulary if vocabulary is not None else self.vocabulary
        words = list(words) if words is not None else ["w%d" % i for i in range(X.shape[1])]
        if len(words) != X.shape[1]:
            raise ValueError("vocabulary has %d words, X %d columns" % (len(words), X.shape[1]))
        tmp = None
        path = self.store
        if path is None:
            tmp = tempfile.mkdtemp(prefix="jsmf-sk-")
            path = os.path.join(tmp, "store")
        try:
            st = Store.create(path, words, min_doc_len=self.min_doc_len)
            st.ingest(X, name="sklearn", threads=self.threads, progress=self.progress)
            opts = {"levels": tuple(self.levels), "rectify": self.rectify,
                    "anchors": self.anchors, "recover": self.recover, "threads": self.threads}
            if self.random_state is not None:
                opts["seed"] = int(self.random_state)
            self.model_ = _fit(st, self.n_components, progress=self.progress, **opts)
        finally:
            if tmp:
                shutil.rmtree(tmp, ignore_errors=True)
        self.components_ = np.ascontiguousarray(self.model_.B.T)
        self.n_features_in_ = X.shape[1]
        if self.vocabulary is not None or vocabulary is not None:
            self.feature_names_in_ = np.array(words, dtype=object)
        return self

    def transform(self, X):
        X = _counts(X)
        if X.shape[1] != self.n_features_in_:
            raise ValueError("X has %d columns, the model %d words" % (X.shape[1],
                                                                      self.n_features_in_))
        return self.model_.infer(X, threads=self.threads, max_iters=self.max_iter, tol=self.tol)

    def get_feature_names_out(self, input_features=None):
        return np.array(["jsmf%d" % t for t in range(self.n_components)], dtype=object)


def _counts(X):
    import scipy.sparse as sp
    X = sp.csr_matrix(X)
    if X.nnz and (X.data.min() < 0 or not np.all(np.equal(np.mod(X.data, 1), 0))):
        raise ValueError("X must hold non-negative integer counts")
    return X
