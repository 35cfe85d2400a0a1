"""model.py — a MODEL directory (formats/model.md) in Python: fit, fdm and refine make one, load
and save read and write what the CLI reads, and the arrays are numpy views of the library's own
(B, A, alpha, anchors: no copy); top words, theta of documents, evaluation, the HTML report,
lineage and diff, and pyLDAvis's arguments."""
import ctypes
import json
import os
import shutil
import tempfile
import warnings
from ctypes import byref, POINTER, c_char_p, c_uint64, c_void_p

import numpy as np

from . import _lib
from ._lib import lib, enc, check
from ._progress import Guard
from .store import vocab_words, _Open, _Feeder, RDONLY, FORMATS

RECTIFY = {"ap": 0, "dr": 1, "none": 2, "compressed": 3}
ANCHORS = {"qr": 0, "fast": 1}
RECOVER = {"admm": 0, "expgrad": 1, "kl": 2, "activeset": 3}
DEVICES = {"auto": 0, "cpu": 1, "cuda": 2}
# jsmf_refine_opts fields a caller may set by name (iters and threads are arguments of their own)
REFINE_OPTS = ("theta_steps", "alpha", "beta", "mix", "exclude", "batches", "tol", "overrelax",
               "learn_alpha")
REFINE_MIN_DOC_LEN = 5  # the CLI's --min-doc-len default (cli_refine_defaults)


class _Handle:
    """Owns a jsmf_model*: freed when the Model and every array viewing it are gone."""

    def __init__(self, ptr):
        self.ptr = ptr

    def __del__(self):
        if self.ptr:
            lib.jsmf_model_free(self.ptr)
            self.ptr = None


def _view(handle, ptr, shape, ctype, dtype):
    """A numpy array over the library's memory that keeps the model alive."""
    if not ptr:
        return None
    n = int(np.prod(shape))
    buf = (ctype * n).from_address(ctypes.addressof(ptr.contents))
    buf._owner = handle
    a = np.frombuffer(buf, dtype=dtype).reshape(shape)
    a.flags.writeable = False
    return a


class Model:
    """A topic model: B (N x K, column k = p(word | topic k)), A (K x K, topic
    co-occurrence, sums to 1), alpha, anchors (word ids; None for FDM), vocabulary; `levels`
    are the super-topic levels of a hierarchy. The arrays are read-only views of the
    library's memory."""

    def __init__(self, ptr, _handle=None):
        self._h = _handle or _Handle(ptr)
        m = ptr.contents
        self.n, self.k = m.n, m.k
        self.B = _view(self._h, m.B, (m.n, m.k), ctypes.c_double, np.float64)
        self.A = _view(self._h, m.A, (m.k, m.k), ctypes.c_double, np.float64)
        self.alpha = _view(self._h, m.alpha, (m.k,), ctypes.c_double, np.float64)
        self.anchors = _view(self._h, m.anchors, (m.k,), ctypes.c_uint32, np.uint32)
        self.vocabulary = np.array(vocab_words(m.vocab) if m.vocab else
                                   ["w%d" % i for i in range(m.n)], dtype=object)
        self.summary = json.loads(ctypes.string_at(m.summary_json).decode()) \
            if m.summary_json else None
        self.levels = []
        sub = m.sub
        while sub:
            self.levels.append(Model(sub, _handle=self._h))
            sub = sub.contents.sub
        self._ptr = ptr

    def __repr__(self):
        kind = (self.summary or {}).get("kind") or \
            ("anchor" if self.anchors is not None else "fdm")
        return "<jsmf.Model %s: %d topics over %d words>" % (kind, self.k, self.n)

    # ---- files ------------------------------------------------------------------------------

    @classmethod
    def load(cls, path):
        """A MODEL directory (jsmf_model_load: shapes, sums and anchors checked)."""
        p = POINTER(_lib.Model)()
        check(lib.jsmf_model_load(enc(os.fspath(path)), byref(p)))
        return cls(p)

    def save(self, path, overwrite=False):
        """Write the MODEL directory the CLI reads (whole or not at all)."""
        check(lib.jsmf_model_save(enc(os.fspath(path)), self._ptr, int(bool(overwrite))))

    # ---- topics -----------------------------------------------------------------------------

    @property
    def topic_sizes(self):
        """p(z) = A 1."""
        pz = np.empty(self.k)
        lib.jsmf_model_topic_sizes(self._ptr, pz.ctypes.data)
        return pz

    @property
    def word_marginal(self):
        """p(w) = sum_z B_wz p(z)."""
        pw = np.empty(self.n)
        lib.jsmf_model_word_marginal(self._ptr, pw.ctypes.data)
        return pw

    def top_words(self, n=10, topic=None, lambda_=0.7):
        """The `n` top words of each topic (or of `topic`), ranked by relevance with
        `lambda_` as 'jsmf topics' does (1: by p(w|z))."""
        pw = self.word_marginal
        ids = np.empty(max(1, n), dtype=np.uint32)
        out = []
        for t in (range(self.k) if topic is None else [topic]):
            c = lib.jsmf_model_top_words_rank(self._ptr, t, n, lambda_, pw.ctypes.data,
                                              ids.ctypes.data)
            out.append([self.vocabulary[i] for i in ids[:c]])
        return out if topic is None else out[0]

    # ---- documents --------------------------------------------------------------------------

    def _batch_of(self, docs):
        """Documents (strings, token lists, or a scipy sparse matrix over this vocabulary) as
        CSR arrays in the model's rows: (indptr, ids, counts, oov)."""
        if hasattr(docs, "tocsr"):
            X = docs.tocsr().copy()
            if X.shape[1] != self.n:
                raise _lib.MismatchError(_lib.EMISMATCH, "the matrix has %d columns, the model "
                                         "%d words" % (X.shape[1], self.n))
            X.sum_duplicates()
            X.sort_indices()
            return (X.indptr.astype(np.uint64), X.indices.astype(np.uint32),
                    np.asarray(X.data).astype(np.uint32), np.zeros(X.shape[0], np.uint64))
        index = getattr(self, "_index", None)
        if index is None:
            index = self._index = {w.encode("utf-8", "surrogateescape"): i
                                   for i, w in enumerate(self.vocabulary)}
        feeder = _Feeder.__new__(_Feeder)
        feeder.tok, feeder.cap = _lib.Tokenizer(3, 64), 0
        indptr, ids, counts, oovs = [0], [], [], []
        for doc in docs:
            if isinstance(doc, str):
                doc = doc.encode("utf-8", "surrogateescape")
            toks = feeder.tokens(bytes(doc)) if isinstance(doc, (bytes, bytearray)) else \
                [t.encode("utf-8", "surrogateescape") if isinstance(t, str) else t for t in doc]
            x = np.array([index.get(t, -1) for t in toks], dtype=np.int64)
            oovs.append(int((x < 0).sum()))
            u, c = np.unique(x[x >= 0], return_counts=True)
            ids.append(u.astype(np.uint32))
            counts.append(c.astype(np.uint32))
            indptr.append(indptr[-1] + len(u))
        cat = (lambda a: np.concatenate(a) if a else np.zeros(0, np.uint32))
        return (np.array(indptr, dtype=np.uint64), cat(ids), cat(counts),
                np.array(oovs, dtype=np.uint64))

    @staticmethod
    def _docbatch(indptr, ids, counts, oov, d0, d1):
        start = (indptr[d0:d1 + 1] - indptr[d0]).astype(np.uint64)
        base = int(indptr[d0])
        b = _lib.DocBatch()
        b.ndocs, b.first_index = d1 - d0, d0
        b.start = start.ctypes.data_as(POINTER(ctypes.c_uint64))
        b.ids = ctypes.cast(ids.ctypes.data + 4 * base, POINTER(ctypes.c_uint32))
        b.counts = ctypes.cast(counts.ctypes.data + 4 * base, POINTER(ctypes.c_uint32))
        b.oov = ctypes.cast(oov.ctypes.data + 8 * d0, POINTER(ctypes.c_uint64))
        return b, start

    def infer(self, docs, batch=4096, threads=0, max_iters=1000, tol=1e-5, progress=False):
        """theta (documents x K, rows on the simplex) of documents given in Python: strings
        (tokenised as text input), token lists, or a scipy sparse matrix over this model's
        words. Run in batches: Ctrl-C stops between them."""
        indptr, ids, counts, oov = self._batch_of(docs)
        nd = len(indptr) - 1
        theta = np.empty((nd, self.k))
        o = _lib.InferOpts()
        lib.jsmf_infer_opts_init(byref(o))
        o.threads, o.max_iters, o.tol = threads, max_iters, tol
        with Guard(progress) as g:
            for d0 in range(0, nd, batch):
                d1 = min(nd, d0 + batch)
                b, _keep = self._docbatch(indptr, ids, counts, oov, d0, d1)
                check(lib.jsmf_theta_fit_batch(self._ptr, byref(b), byref(o),
                                               theta.ctypes.data + 8 * self.k * d0))
                g.tell("inferring", d1, nd, "documents")
        return theta

    def eval(self, store=None, docs=None, top=20, eps=0.01, batch=4096, threads=0):
        """The metrics of 'jsmf eval': against the C of `store` (recovery, approximation,
        dominancy, specificity, dissimilarity, sparsity, entropy) and over documents `docs`
        (coherence of the `top` words, held-out log-likelihood per token)."""
        out = {}
        if store is not None:
            path = os.fspath(getattr(store, "path", store))
            with _Open(path, RDONLY) as h:
                src = _lib.Source()
                check(lib.jsmf_store_source(h, byref(src)))
                m = _lib.Metrics()
                check(lib.jsmf_model_metrics(self._ptr, byref(src), byref(m)))
                lib.jsmf_store_source_release(h)
            out.update({f: getattr(m, f) for f, _ in _lib.Metrics._fields_})
        if docs is not None:
            indptr, ids, counts, oov = self._batch_of(docs)
            o = _lib.InferOpts()
            lib.jsmf_infer_opts_init(byref(o))
            o.threads = threads
            acc = c_void_p()
            check(lib.jsmf_docmetrics_new(self._ptr, top, eps, byref(o), byref(acc)))
            try:
                nd = len(indptr) - 1
                for d0 in range(0, nd, batch):
                    b, _keep = self._docbatch(indptr, ids, counts, oov, d0, min(nd, d0 + batch))
                    check(lib.jsmf_docmetrics_add(acc, byref(b)))
                r = _lib.DocMetricsResult()
                check(lib.jsmf_docmetrics_result_get(acc, byref(r)))
                out.update({f: getattr(r, f) for f, _ in _lib.DocMetricsResult._fields_
                            if f != "coherence_topic"})
                out["coherence_topic"] = np.ctypeslib.as_array(r.coherence_topic,
                                                               (self.k,)).copy()
            finally:
                lib.jsmf_docmetrics_free(acc)
        return out

    def report(self, path, top=12, title=None):
        """The self-contained HTML page of 'jsmf report'."""
        o = _lib.ReportOpts()
        lib.jsmf_report_opts_init(byref(o))
        o.top, o.title = top, enc(title)
        check(lib.jsmf_report_save(enc(os.fspath(path)), self._ptr, byref(o)))

    # ---- refinement over documents ----------------------------------------------------------

    def refine(self, docs, iters=80, min_doc_len=REFINE_MIN_DOC_LEN, format="auto",
               uci_vocab=None, threads=0, progress=False, **opts):
        """'jsmf refine MODEL --corpus ...': a new Model (kind "refined") whose topics are these
        refined by `iters` passes over documents (MAP-EM / synchronous CVB0 for LDA started
        from them, include/jsmf_refine.h), the best held-out likelihood jsmf gives. `docs`:

        - a doc-term count matrix (scipy sparse or numpy, rows documents, columns this model's
          words; non-negative integer counts), or
        - the path of a corpus file, or a list of them (any format 'jsmf ingest' reads; read
          over this model's vocabulary, words outside it left out), or
        - a jsmf.Store holding its documents over this model's vocabulary (the store it was
          fitted on).

        Documents with fewer than max(2, min_doc_len) tokens over the model's words are left
        out, as the CLI leaves them (report_["dropped"] counts them). `opts`: any other field
        of jsmf_refine_opts (theta_steps, alpha, beta, mix, exclude, batches, tol, overrelax,
        learn_alpha: False, True or "auto"), the C defaults otherwise; alpha is learned (the
        model's alpha) on documents of 100 tokens or more on average. The result depends on
        the thread count only. Ctrl-C stops between passes (jsmf.Interrupted)."""
        o = _refine_opts(iters, threads, opts)
        if _is_store(docs):
            return self._refine_store(docs, o, progress)
        if isinstance(docs, (str, bytes, os.PathLike)) or (
                isinstance(docs, (list, tuple)) and docs and
                all(isinstance(d, (str, bytes, os.PathLike)) for d in docs)):
            return self._refine_files(docs, o, min_doc_len, format, uci_vocab, progress)
        return self._refine_matrix(docs, o, min_doc_len, progress)

    def _refine_matrix(self, X, o, min_doc_len, progress):
        indptr, ids, counts = _count_rows(X, self.n)
        cum = np.zeros(len(counts) + 1, np.uint64)
        np.cumsum(counts, out=cum[1:])
        tokens = cum[indptr[1:]] - cum[indptr[:-1]]
        min_len = max(2, min_doc_len)
        keep = tokens >= min_len
        if not keep.any():
            raise _lib.InvalidError(_lib.EINVAL, "documents: no row of the matrix has %d tokens "
                                    "(of %d rows)" % (min_len, len(keep)), "invalid argument")
        per_row = np.diff(indptr)
        entries = np.repeat(keep, per_row)
        offs = np.zeros(int(keep.sum()) + 1, np.uint64)
        np.cumsum(per_row[keep], out=offs[1:])
        ids = np.ascontiguousarray(ids[entries], dtype=np.uint32)
        counts = np.ascontiguousarray(counts[entries], dtype=np.uint32)
        csr = _lib.DocCsr(self.n, len(offs) - 1, offs.ctypes.data_as(POINTER(c_uint64)),
                          ids.ctypes.data_as(POINTER(ctypes.c_uint32)),
                          counts.ctypes.data_as(POINTER(ctypes.c_uint32)), None)
        return self._refine_csr(csr, o, progress, int((~keep).sum()))

    def _refine_files(self, paths, o, min_doc_len, format, uci_vocab, progress):
        vocab = self._ptr.contents.vocab
        if not vocab:
            raise _lib.InvalidError(_lib.EINVAL, "refine: the model has no vocabulary",
                                    "invalid argument")
        if isinstance(paths, (str, bytes, os.PathLike)):
            paths = [paths]
        ps = [enc(os.fspath(p)) for p in paths]
        arr = (c_char_p * len(ps))(*ps)
        ro = _lib.ReadOpts()
        lib.jsmf_read_opts_init(byref(ro))
        ro.format = FORMATS[format] if isinstance(format, str) else int(format)
        ro.uci_vocab = enc(os.fspath(uci_vocab)) if uci_vocab is not None else None
        ro.threads = o.threads
        # the reader's notes on each input (as the CLI prints them) as Python warnings
        ro.warn = _lib.WARN_FN(lambda _a, msg: warnings.warn(
            msg.decode("utf-8", "replace"), RuntimeWarning, stacklevel=2))
        csr, dropped = _lib.DocCsr(), c_uint64()
        check(lib.jsmf_doc_csr_read(arr, len(ps), byref(ro), vocab, min_doc_len, byref(csr),
                                    byref(dropped)))
        try:
            return self._refine_csr(csr, o, progress, dropped.value)
        finally:
            lib.jsmf_doc_csr_free(byref(csr))

    def _refine_csr(self, csr, o, progress, dropped):
        src = _lib.DocSource()
        check(lib.jsmf_doc_csr_source(byref(csr), 0, byref(src)))  # 0: the CLI's blocks
        try:
            return self._refine_source(ctypes.pointer(src), o, progress, dropped)
        finally:
            lib.jsmf_doc_csr_source_free(byref(src))

    def _refine_store(self, store, o, progress):
        path = os.fspath(store.path)
        words = store.vocabulary()[0]
        if len(words) != self.n or any(a != b for a, b in zip(words, self.vocabulary)):
            raise _lib.MismatchError(_lib.EMISMATCH, "%s: the store's vocabulary is not the "
                                     "model's" % path, "mismatch")
        with _Open(path, RDONLY) as h:
            src = _lib.Source()
            check(lib.jsmf_store_source(h, byref(src)))
            try:
                if not src.docs:
                    raise _lib.InvalidError(_lib.EINVAL, "%s holds no documents to refine over "
                                            "(it holds C's rows): give the corpus files it was "
                                            "ingested from" % path, "invalid argument")
                docs = ctypes.cast(src.docs, POINTER(_lib.DocSource))
                return self._refine_source(docs, o, progress, None)
            finally:
                lib.jsmf_store_source_release(h)

    def _refine_source(self, src, o, progress, dropped):
        out = POINTER(_lib.Model)()
        r = _lib.RefineResult()
        try:
            with Guard(progress) as g:
                o.progress = g.fn
                rc = lib.jsmf_refine(self._ptr, src, byref(o), byref(out), byref(r))
                g.check(rc)
            report = {"iters": r.iters, "docs": r.docs, "tokens": r.tokens, "dropped": dropped,
                      "seconds": r.seconds, "bytes": r.bytes,
                      "objective": np.ctypeslib.as_array(r.objective, (r.iters,)).copy()
                      if r.iters else np.zeros(0)}
        finally:
            lib.jsmf_refine_result_free(byref(r))
        m = Model(out)
        m.report_ = report
        return m

    # ---- refits -----------------------------------------------------------------------------

    def lineage(self):
        """The lineage summary.json records (a fit after `previous=`), or None."""
        ln = _lib.Lineage()
        rc = lib.jsmf_model_lineage_read(self._ptr, byref(ln))
        if rc == _lib.ENOTFOUND:
            lib.jsmf_error_clear()
            return None
        check(rc)
        try:
            return _lineage_dict(ln)
        finally:
            lib.jsmf_lineage_free(byref(ln))

    def diff(self, new, top=10):
        """What changed from this model to `new` ('jsmf diff OLD NEW'), as a dict."""
        return diff(self, new, top=top)

    # ---- pyLDAvis ---------------------------------------------------------------------------

    def to_pyldavis(self, store):
        """The keyword arguments of pyLDAvis.prepare from the model and the store it was
        fitted on alone. The store keeps no per-document theta, so doc_topic_dists is ONE
        pseudo-document carrying p(z) = A 1 with doc_lengths = [the store's tokens]: pyLDAvis
        sizes its topics by sum_d theta_d * len_d, which that gives exactly. term_frequency is
        the store's term frequency of each word (tf)."""
        words, _df, tf = Store_vocabulary(store)
        if len(words) != self.n or any(a != b for a, b in zip(words, self.vocabulary)):
            raise _lib.MismatchError(_lib.EMISMATCH, "the store's vocabulary is not the model's")
        pz = self.topic_sizes
        pz = pz / pz.sum()
        ttd = np.ascontiguousarray(self.B.T)
        ttd = ttd / ttd.sum(axis=1, keepdims=True)
        info = __import__("jsmf.store", fromlist=["Store"]).Store(
            os.fspath(getattr(store, "path", store))).info()
        return {"topic_term_dists": ttd, "doc_topic_dists": pz[None, :],
                "doc_lengths": np.array([info["tokens"]], dtype=np.int64),
                "vocab": list(self.vocabulary), "term_frequency": tf.astype(np.int64)}


def Store_vocabulary(store):
    from .store import Store
    return Store(os.fspath(getattr(store, "path", store))).vocabulary()


def _lineage_dict(ln):
    prev = [None if ln.prev[t] == 0xFFFFFFFF else ln.prev[t] for t in range(ln.k)]
    return {"k": ln.k, "k_prev": ln.k_prev, "threshold": ln.threshold, "prev": prev,
            "l1": [ln.l1[t] for t in range(ln.k)],
            "retired": [ln.retired[i] for i in range(ln.n_retired)],
            "prev_path": ln.prev_path.decode() if ln.prev_path else None,
            "prev_fingerprint": ln.prev_fingerprint.decode()}


def _words(p, n):
    return [{"word": p[i].word.decode("utf-8", "replace"), "before": p[i].before,
             "after": p[i].after, "topic": p[i].topic} for i in range(n)]


def diff(old, new, top=10):
    """What changed between two models (Model objects or MODEL paths): the lineage, every
    topic (continuing, new, retired) with its rising and falling words, and the new words."""
    old = old if isinstance(old, Model) else Model.load(old)
    new = new if isinstance(new, Model) else Model.load(new)
    o = _lib.DiffOpts()
    lib.jsmf_diff_opts_init(byref(o))
    o.top = top
    p = POINTER(_lib.Diff)()
    check(lib.jsmf_model_diff(old._ptr, new._ptr, byref(o), byref(p)))
    try:
        d = p.contents
        none = 0xFFFFFFFF
        topics = []
        for i in range(d.n_topics):
            t = d.topics[i]
            topics.append({"topic": None if t.topic == none else t.topic,
                           "prev": None if t.prev == none else t.prev, "l1": t.l1,
                           "size": t.size, "size_prev": t.size_prev,
                           "rising": _words(t.rising, t.n_rising),
                           "falling": _words(t.falling, t.n_falling)})
        return {"lineage": _lineage_dict(d.lineage), "recorded": bool(d.recorded),
                "topics": topics, "continuing": d.n_continuing, "new": d.n_new,
                "retired": d.n_retired, "new_words": _words(d.new_words, d.n_new_words)}
    finally:
        lib.jsmf_diff_free(p)


def load(path):
    """jsmf.Model.load(path)."""
    return Model.load(path)


def _is_store(x):
    from .store import Store
    return isinstance(x, Store)


def _refine_opts(iters, threads, opts):
    """A jsmf_refine_opts: the C defaults, then the caller's values."""
    if isinstance(iters, bool) or not isinstance(iters, (int, np.integer)) or \
            not 1 <= iters <= 0xFFFFFFFF:
        raise ValueError("refine: iters must be an integer >= 1, not %r" % (iters,))
    o = _lib.RefineOpts()
    lib.jsmf_refine_opts_init(byref(o))
    o.iters, o.threads = int(iters), int(threads)
    for name, value in opts.items():
        if name not in REFINE_OPTS:
            raise TypeError("refine: unknown option %r" % name)
        if value is None:
            continue
        if name == "learn_alpha":
            if value not in _lib.REFINE_ALPHA:
                raise ValueError("refine: learn_alpha is False, True or \"auto\", not %r" %
                                 (value,))
            value = _lib.REFINE_ALPHA[value]
        elif name in ("theta_steps", "batches") and not (
                isinstance(value, (int, np.integer)) and 0 <= value <= 0xFFFFFFFF):
            raise ValueError("refine: %s must be a non-negative integer, not %r" % (name, value))
        elif name == "exclude":
            value = int(bool(value))
        setattr(o, name, value)
    return o


def _count_rows(X, n):
    """A doc-term count matrix (scipy sparse or anything numpy takes as 2-D) over `n` words as
    CSR arrays with ascending ids per row and no zeros: (indptr, ids, counts as uint64), or
    ValueError naming the first bad entry."""
    if hasattr(X, "tocsr"):
        X = X.tocsr().copy()
        shape = X.shape
        X.sum_duplicates()
        X.eliminate_zeros()
        X.sort_indices()
        indptr, ids, data = X.indptr.astype(np.int64), X.indices, np.asarray(X.data)
        rows = lambda e: int(np.searchsorted(indptr, e, side="right") - 1)  # noqa: E731
    else:
        A = np.asarray(X)
        if A.ndim != 2:
            raise _lib.InvalidError(_lib.EINVAL, "documents: a doc-term matrix is 2-D, not of "
                                    "shape %s" % (A.shape,), "invalid argument")
        shape = A.shape
        r, ids = np.nonzero(A)
        data = A[r, ids]
        indptr = np.zeros(shape[0] + 1, np.int64)
        np.cumsum(np.bincount(r, minlength=shape[0]), out=indptr[1:])
        rows = lambda e: int(r[e])  # noqa: E731
    if shape[1] != n:
        raise _lib.MismatchError(_lib.EMISMATCH, "documents: the matrix has %d columns, the "
                                 "model %d words" % (shape[1], n), "mismatch")
    if data.dtype.kind not in "biuf":
        raise _lib.InvalidError(_lib.EINVAL, "documents: counts must be numbers, not %s" %
                                data.dtype, "invalid argument")
    with np.errstate(invalid="ignore"):
        bad = ~((data >= 0) & (data <= 0xFFFFFFFF) & (np.mod(data, 1) == 0))
    if bad.any():
        e = int(np.argmax(bad))
        raise _lib.InvalidError(_lib.EINVAL, "documents: row %d, column %d holds %r: counts are "
                                "non-negative integers below 2^32" % (rows(e), int(ids[e]),
                                                                     data[e].item()),
                                "invalid argument")
    return indptr, np.asarray(ids, np.uint32), data.astype(np.uint64)


def refine(model, docs, out=None, force=False, **opts):
    """'jsmf refine MODEL --corpus DOCS -o OUT': Model.refine of `model` (a Model or a MODEL
    directory) over `docs`, written to `out` when given (force: over an existing one)."""
    model = model if isinstance(model, Model) else Model.load(model)
    m = model.refine(docs, **opts)
    if out is not None:
        m.save(out, overwrite=force)
    return m


def _fit_opts(k, levels=(), rectify=None, anchors=None, recover=None, seed=None, threads=0,
              mem=None, min_anchor_df=None, **extra):
    o = _lib.FitOpts()
    lib.jsmf_fit_opts_init(byref(o), k)
    if rectify is not None:
        o.rectify = RECTIFY[rectify]
    if anchors is not None:
        o.anchors = ANCHORS[anchors]
    if recover is not None:
        o.recover = RECOVER[recover]
    if seed is not None:
        o.seed = seed
    o.threads = threads
    if mem is not None:
        from .store import _mem
        o.mem_bytes = _mem(mem)
    if min_anchor_df is not None:
        o.min_anchor_df = min_anchor_df
    for i, lv in enumerate(levels):
        o.levels[i] = lv
    for name, value in extra.items():
        if name not in dict(_lib.FitOpts._fields_):
            raise TypeError("fit: unknown option %r" % name)
        setattr(o, name, value)
    return o


def fit(input, k, out=None, previous=None, force=False, progress=True, corpus=None,
        refine=None, min_doc_len=REFINE_MIN_DOC_LEN, refine_opts=None, **opts):
    """'jsmf fit INPUT -k K -o OUT [--previous PREVIOUS] [--corpus FILES | --refine N]': the
    spectral fit of a store (or an exported C) as a Model. With `out` the MODEL directory is
    written exactly as the CLI writes it; without, the model lives in memory only (save()
    writes it). `previous` (a MODEL directory) numbers the topics after it (lineage). `opts`:
    levels=(5,), rectify, anchors, recover, seed, threads, mem, min_anchor_df and any
    jsmf_fit_opts field. Ctrl-C stops the fit between its steps (jsmf.Interrupted); nothing
    is written, and the same call starts again.

    `corpus` (files) or `refine` (passes; over the store's own documents without `corpus`)
    refine the fit over the documents as 'jsmf fit --corpus/--refine' does, the best held-out
    likelihood (Model.refine; `refine` passes, 80 by default; `min_doc_len` and
    `refine_opts`, a dict of Model.refine's options, as there): the fit then multiplies
    through the documents and takes at most 10 steps of the compressed rectification, as the
    CLI's does, and the refined model is returned (and written to `out`)."""
    refining = bool(corpus) or bool(refine)
    if refining:
        _check_refine_documents(input, corpus)
    o = _fit_opts(k, **opts)
    if refining:  # cmd_fit.c: the same fit for less CPU and memory, and the same after refining
        if "products" not in opts:
            o.products = 2  # JSMF_PRODUCTS_DOCUMENTS
        if o.rectify == RECTIFY["compressed"] and not o.rectify_iters:
            o.rectify_iters = 10
    flags = (1 if force else 0) | (8 if refining else 0)  # JSMF_FIT_FORCE, JSMF_FIT_NO_C_METRICS
    tmp = None
    if out is None:
        tmp = tempfile.mkdtemp(prefix="jsmf-fit-")
        out, flags = os.path.join(tmp, "model"), flags | 1
    p = POINTER(_lib.Model)()
    rep = _lib.FitReport()
    try:
        with Guard(progress) as g:
            o.progress = g.fn
            rc = lib.jsmf_fit_to_dir_after(enc(os.fspath(getattr(input, "path", input))),
                                           enc(os.fspath(out)),
                                           enc(os.fspath(previous)) if previous else None,
                                           flags, byref(o), None, byref(p), byref(rep))
            g.check(rc)
    finally:
        if tmp:
            shutil.rmtree(tmp, ignore_errors=True)
    m = Model(p)
    m.report_ = {f: getattr(rep, f) for f, _ in _lib.FitReport._fields_
                 if f not in ("trace", "metrics", "sketch_within", "sketch_between")}
    m.report_["sketch_within"] = list(rep.sketch_within[:rep.n_sketch_within])
    m.report_["sketch_between"] = list(rep.sketch_between[:rep.n_sketch_between])
    m.report_["metrics"] = {f: getattr(rep.metrics, f) for f, _ in _lib.Metrics._fields_}
    if not refining:
        return m
    from .store import Store
    docs = corpus if corpus else Store(os.fspath(getattr(input, "path", input)))
    iters = 80 if refine is None or refine is True else refine  # the CLI's default passes
    r = m.refine(docs, iters=iters, min_doc_len=min_doc_len, threads=o.threads,
                 progress=progress, **(refine_opts or {}))
    if not tmp:
        r.save(out, overwrite=True)  # the refined model replaces the fit's, as the CLI's does
    r.report_["fit"] = m.report_
    return r


def _check_refine_documents(input, corpus):
    """What a refinement after the fit reads, checked before the fit (a refusal writes
    nothing): the corpus files can be read, or the store holds its documents."""
    if corpus:
        for c in [corpus] if isinstance(corpus, (str, bytes, os.PathLike)) else corpus:
            if os.fspath(c) not in ("-", b"-") and not os.access(c, os.R_OK):
                raise _lib.NotFoundError(_lib.ENOTFOUND, "%s: cannot read the corpus" %
                                         os.fsdecode(c), "not found")
        return
    from .store import Store
    path = os.fspath(getattr(input, "path", input))
    if Store(path).info()["hold"] not in ("docs", "both"):
        raise _lib.InvalidError(_lib.EINVAL, "%s holds no documents to refine over (it holds "
                                "C's rows): give corpus= with the documents it was ingested "
                                "from" % path, "invalid argument")


def fdm(input, k, out=None, device="auto", init="auto", force=False, progress=True,
        checkpoint_every=0, checkpoint_seconds=None, **opts):
    """'jsmf fdm INPUT -k K -o OUT': the FDM model by Adam on pairs sampled from C (CPU, or
    CUDA when device is "auto"/"cuda" and the plugin finds a GPU: libjsmf_cuda.so, see the
    README). Ctrl-C stops after the current step with a checkpoint OUT.ckpt (jsmf.Interrupted);
    the same call resumes from it (give `out`: without one the model is written to a
    temporary directory and a stopped run is lost). `opts`: any jsmf_fdm_opts field (steps,
    batch, lr, seed, time_limit, threads, ...)."""
    p = _lib.FdmOpts()
    lib.jsmf_fdm_opts_init(byref(p))
    p.k = k
    p.device = DEVICES[device] if isinstance(device, str) else int(device)
    p.checkpoint_every = checkpoint_every
    if checkpoint_seconds is not None:
        p.checkpoint_seconds = checkpoint_seconds
    for name, value in opts.items():
        if name not in dict(_lib.FdmOpts._fields_):
            raise TypeError("fdm: unknown option %r" % name)
        setattr(p, name, value)
    d = _lib.FdmDirOpts()
    lib.jsmf_fdm_dir_opts_init(byref(d))
    d.init = enc(os.fspath(init)) if init is not None else None
    d.force = int(bool(force))
    tmp = None
    if out is None:
        tmp = tempfile.mkdtemp(prefix="jsmf-fdm-")
        out = os.path.join(tmp, "model")
    r = _lib.FdmResult()
    try:
        with Guard(progress) as g:
            p.progress = g.fn
            p.stop = ctypes.pointer(g.stop)
            rc = lib.jsmf_fdm_to_dir(enc(os.fspath(getattr(input, "path", input))),
                                     enc(os.fspath(out)), byref(d), byref(p), byref(r))
            g.check(rc)
        result = {"steps": r.steps, "resumed_from": r.resumed_from,
                  "stopped_early": bool(r.stopped_early), "device": r.device.decode(),
                  "note": r.note.decode(), "best_heldout": r.best_heldout,
                  "seconds_train": r.seconds_train, "pairs_per_second": r.pairs_per_second,
                  "curve": {"step": np.ctypeslib.as_array(r.curve_step, (r.n_curve,)).copy(),
                            "train": np.ctypeslib.as_array(r.curve_train, (r.n_curve,)).copy(),
                            "heldout": np.ctypeslib.as_array(r.curve_heldout,
                                                             (r.n_curve,)).copy()}
                  if r.n_curve else None}
        lib.jsmf_fdm_result_free(byref(r))
        m = Model.load(out)
    finally:
        if tmp:
            shutil.rmtree(tmp, ignore_errors=True)
    m.report_ = result
    return m
