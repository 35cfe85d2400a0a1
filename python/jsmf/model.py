"""model.py — a MODEL directory (formats/model.md) in Python: fit and fdm make one, load and
save read and write what the CLI reads, and the arrays are numpy views of the library's own
(B, A, alpha, anchors: no copy); top words, theta of documents, evaluation, the HTML report,
lineage and diff, and pyLDAvis's arguments."""
import ctypes
import json
import os
import shutil
import tempfile
from ctypes import byref, POINTER, c_void_p

import numpy as np

from . import _lib
from ._lib import lib, enc, check
from ._progress import Guard
from .store import vocab_words, _Open, _Feeder, RDONLY

RECTIFY = {"ap": 0, "dr": 1, "none": 2, "compressed": 3}
ANCHORS = {"qr": 0, "fast": 1}
RECOVER = {"admm": 0, "expgrad": 1, "kl": 2, "activeset": 3}
DEVICES = {"auto": 0, "cpu": 1, "cuda": 2}


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
        kind = "anchor" if self.anchors is not None else "fdm"
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


def fit(input, k, out=None, previous=None, force=False, progress=True, **opts):
    """'jsmf fit INPUT -k K -o OUT [--previous PREVIOUS]': the spectral fit of a store (or an
    exported C) as a Model. With `out` the MODEL directory is written exactly as the CLI
    writes it; without, the model lives in memory only (save() writes it). `previous` (a
    MODEL directory) numbers the topics after it (lineage). `opts`: levels=(5,), rectify,
    anchors, recover, seed, threads, mem, min_anchor_df and any jsmf_fit_opts field. Ctrl-C
    stops the fit between its steps (jsmf.Interrupted); nothing is written, and the same call
    starts again."""
    o = _fit_opts(k, **opts)
    flags = 1 if force else 0
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
                 if f not in ("trace", "metrics")}
    m.report_["metrics"] = {f: getattr(rep.metrics, f) for f, _ in _lib.Metrics._fields_}
    return m


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
