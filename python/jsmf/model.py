"""model.py — a MODEL directory (formats/model.md) in Python: fit, fdm and refine make one, load
and save read and write what the CLI reads, and the arrays are numpy views of the library's own
(B, A, alpha, anchors: no copy); top words, theta of documents, evaluation, the HTML report,
lineage and diff, and pyLDAvis's arguments.

Every rule of a stage is the library's: fit(corpus=/refine=) is jsmf_fit_refine_to_dir and a
refinement over files or a store jsmf_refine_to_dir, as for the CLI, with the defaults of the
library's _init functions; the choices (RECTIFY, ANCHORS, RECOVER, DEVICES, REFINE_METHODS) are
read from its name functions when the package is imported."""
from __future__ import annotations

import ctypes
import json
import os
import shutil
import tempfile
import warnings
from ctypes import POINTER, byref, c_uint64, c_void_p
from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple, Union

import numpy as np

from . import _lib
from ._common import (FORMATS, RDONLY, StoreBase, StoreHandle, Tokens, c_strings, choice,
                      fields, mem_bytes, path_of, store_stats, store_vocabulary, u32_arg,
                      vocab_words)
from ._lib import PathArg, check, enc, lib
from ._progress import Guard, ProgressArg

RECTIFY = _lib.names(lib.jsmf_fit_rectify_name)
ANCHORS = _lib.names(lib.jsmf_fit_anchors_name)
RECOVER = _lib.names(lib.jsmf_fit_recover_name)
DEVICES = _lib.names(lib.jsmf_fdm_device_name)
REFINE_METHODS = _lib.names(lib.jsmf_refine_method_name)
# jsmf_refine_opts fields a caller may set by name (iters and threads are arguments of their
# own); `exclude` (True/False) is `method` as 'jsmf refine --exclude yes|no' first spelled it
REFINE_OPTS = ("theta_steps", "alpha", "beta", "mix", "method", "batches", "tol", "overrelax",
               "learn_alpha", "exclude")

# What the package takes as documents: an iterable of texts (str or bytes) or token lists, or a
# doc-term count matrix (scipy sparse or numpy), or (Model.refine) corpus files or a jsmf.Store.
Documents = Any


def _tokenizer_default() -> Tuple[int, int]:
    """The readers' tokenizer (jsmf_read_opts_init's), for text given to a model."""
    ro = _lib.ReadOpts()
    lib.jsmf_read_opts_init(byref(ro))
    return ro.tok.min_len, ro.tok.max_len


class _Handle:
    """Owns a jsmf_model*: freed when the Model and every array viewing it are gone."""

    def __init__(self, ptr: Any) -> None:
        self.ptr = ptr

    def __del__(self) -> None:
        if self.ptr:
            lib.jsmf_model_free(self.ptr)
            self.ptr = None


def _view(handle: _Handle, ptr: Any, shape: Tuple[int, ...], ctype: Any,
          dtype: Any) -> Optional[np.ndarray]:
    """A numpy array over the library's memory that keeps the model alive (None for NULL)."""
    if not ptr:
        return None
    n = int(np.prod(shape))
    buf = (ctype * n).from_address(ctypes.addressof(ptr.contents))
    buf._owner = handle
    a = np.frombuffer(buf, dtype=dtype).reshape(shape)
    a.flags.writeable = False
    return a


def _is_files(docs: Any) -> bool:
    """Whether `docs` names corpus files: a path, or a non-empty list or tuple of them."""
    path = (str, bytes, os.PathLike)
    return isinstance(docs, path) or (isinstance(docs, (list, tuple)) and len(docs) > 0 and
                                      all(isinstance(d, path) for d in docs))


class Model:
    """A topic model: B (N x K, column k = p(word | topic k)), A (K x K, topic
    co-occurrence, sums to 1), alpha, anchors (word ids; None for FDM), vocabulary; `levels`
    are the super-topic levels of a hierarchy. The arrays are read-only views of the
    library's memory. `report_` (a dict) says what the call that made the model did."""

    report_: Dict[str, Any]

    def __init__(self, ptr: "ctypes._Pointer[_lib.Model]",
                 _handle: Optional[_Handle] = None) -> None:
        self._h = _handle or _Handle(ptr)
        m = ptr.contents
        self.n: int = m.n
        self.k: int = m.k
        B = _view(self._h, m.B, (m.n, m.k), ctypes.c_double, np.float64)
        A = _view(self._h, m.A, (m.k, m.k), ctypes.c_double, np.float64)
        if B is None or A is None:
            raise _lib.InvalidError(_lib.EINVAL, "a model without B or A", "invalid argument")
        self.B: np.ndarray = B
        self.A: np.ndarray = A
        self.alpha = _view(self._h, m.alpha, (m.k,), ctypes.c_double, np.float64)
        self.anchors = _view(self._h, m.anchors, (m.k,), ctypes.c_uint32, np.uint32)
        self.vocabulary = np.array(vocab_words(m.vocab) if m.vocab else
                                   ["w%d" % i for i in range(m.n)], dtype=object)
        self.summary: Optional[Dict[str, Any]] = \
            json.loads(ctypes.string_at(m.summary_json).decode()) if m.summary_json else None
        self.levels: List[Model] = []
        sub = m.sub
        while sub:
            self.levels.append(Model(sub, _handle=self._h))
            sub = sub.contents.sub
        self._ptr = ptr
        self._index: Optional[Dict[bytes, int]] = None

    def __repr__(self) -> str:
        kind = (self.summary or {}).get("kind") or \
            ("anchor" if self.anchors is not None else "fdm")
        return "<jsmf.Model %s: %d topics over %d words>" % (kind, self.k, self.n)

    # ---- pickling ---------------------------------------------------------------------------

    _STATE = ("_h", "n", "k", "B", "A", "alpha", "anchors", "vocabulary", "summary", "levels",
              "_ptr", "_index")

    def __getstate__(self) -> Dict[str, Any]:
        """A pickle holds the files of the MODEL directory save() writes (its levels within),
        and the attributes set since (report_): the library's memory is made again from them by
        load on unpickling, so B, A, alpha, anchors, vocabulary and summary come back equal."""
        files: Dict[str, bytes] = {}
        with tempfile.TemporaryDirectory(prefix="jsmf-pickle-") as tmp:
            d = os.path.join(tmp, "model")
            self.save(d)
            for root, _dirs, names in os.walk(d):
                for name in names:
                    p = os.path.join(root, name)
                    with open(p, "rb") as f:
                        files[os.path.relpath(p, d)] = f.read()
        extra = {k: v for k, v in self.__dict__.items() if k not in self._STATE}
        return {"model_files": files, "attrs": extra}

    def __setstate__(self, state: Dict[str, Any]) -> None:
        with tempfile.TemporaryDirectory(prefix="jsmf-pickle-") as tmp:
            d = os.path.join(tmp, "model")
            for rel, data in state["model_files"].items():
                p = os.path.join(d, rel)
                os.makedirs(os.path.dirname(p), exist_ok=True)
                with open(p, "wb") as f:
                    f.write(data)
            m = Model.load(d)
        self.__dict__.update(m.__dict__)
        self.__dict__.update(state["attrs"])

    # ---- files ------------------------------------------------------------------------------

    @classmethod
    def load(cls, path: PathArg) -> Model:
        """A MODEL directory (jsmf_model_load: shapes, sums and anchors checked)."""
        p = POINTER(_lib.Model)()
        check(lib.jsmf_model_load(enc(os.fspath(path)), byref(p)))
        return cls(p)

    def save(self, path: PathArg, overwrite: bool = False) -> None:
        """Write the MODEL directory the CLI reads (whole or not at all)."""
        check(lib.jsmf_model_save(enc(os.fspath(path)), self._ptr, int(bool(overwrite))))

    # ---- topics -----------------------------------------------------------------------------

    @property
    def topic_sizes(self) -> np.ndarray:
        """p(z) = A 1."""
        pz = np.empty(self.k)
        lib.jsmf_model_topic_sizes(self._ptr, pz.ctypes.data)
        return pz

    @property
    def word_marginal(self) -> np.ndarray:
        """p(w) = sum_z B_wz p(z)."""
        pw = np.empty(self.n)
        lib.jsmf_model_word_marginal(self._ptr, pw.ctypes.data)
        return pw

    def top_words(self, n: int = 10, topic: Optional[int] = None,
                  lambda_: float = 0.7) -> Union[List[List[str]], List[str]]:
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

    def _batch_of(self, docs: Documents) -> Tuple[np.ndarray, np.ndarray, np.ndarray,
                                                   np.ndarray]:
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
        index = self._index
        if index is None:
            index = self._index = {w.encode("utf-8", "surrogateescape"): i
                                   for i, w in enumerate(self.vocabulary)}
        tokens = Tokens(*_tokenizer_default())
        indptr, ids, counts, oovs = [0], [], [], []
        for doc in docs:
            x = np.array([index.get(t, -1) for t in tokens.of(doc)], dtype=np.int64)
            oovs.append(int((x < 0).sum()))
            u, c = np.unique(x[x >= 0], return_counts=True)
            ids.append(u.astype(np.uint32))
            counts.append(c.astype(np.uint32))
            indptr.append(indptr[-1] + len(u))

        def cat(a: List[np.ndarray]) -> np.ndarray:
            return np.concatenate(a) if a else np.zeros(0, np.uint32)
        return (np.array(indptr, dtype=np.uint64), cat(ids), cat(counts),
                np.array(oovs, dtype=np.uint64))

    @staticmethod
    def _docbatch(indptr: np.ndarray, ids: np.ndarray, counts: np.ndarray, oov: np.ndarray,
                  d0: int, d1: int) -> Tuple[_lib.DocBatch, np.ndarray]:
        start = (indptr[d0:d1 + 1] - indptr[d0]).astype(np.uint64)
        base = int(indptr[d0])
        b = _lib.DocBatch()
        b.ndocs, b.first_index = d1 - d0, d0
        b.start = start.ctypes.data_as(POINTER(ctypes.c_uint64))
        b.ids = ctypes.cast(ids.ctypes.data + 4 * base, POINTER(ctypes.c_uint32))
        b.counts = ctypes.cast(counts.ctypes.data + 4 * base, POINTER(ctypes.c_uint32))
        b.oov = ctypes.cast(oov.ctypes.data + 8 * d0, POINTER(ctypes.c_uint64))
        return b, start

    def infer(self, docs: Documents, batch: int = 4096, threads: int = 0,
              max_iters: int = 1000, tol: float = 1e-5,
              progress: ProgressArg = False) -> np.ndarray:
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

    def eval(self, store: Union[StoreBase, PathArg, None] = None, docs: Documents = None,
             top: int = 20, eps: float = 0.01, batch: int = 4096,
             threads: int = 0) -> Dict[str, Any]:
        """The metrics of 'jsmf eval': against the C of `store` (recovery, approximation,
        dominancy, specificity, dissimilarity, sparsity, entropy) and over documents `docs`
        (coherence of the `top` words, held-out log-likelihood per token)."""
        out: Dict[str, Any] = {}
        if store is not None:
            with StoreHandle(path_of(store), RDONLY) as h:
                src = _lib.Source()
                check(lib.jsmf_store_source(h, byref(src)))
                m = _lib.Metrics()
                check(lib.jsmf_model_metrics(self._ptr, byref(src), byref(m)))
                lib.jsmf_store_source_release(h)
            out.update(fields(m))
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
                out.update(fields(r, skip=("coherence_topic",)))
                out["coherence_topic"] = np.ctypeslib.as_array(r.coherence_topic,
                                                               (self.k,)).copy()
            finally:
                lib.jsmf_docmetrics_free(acc)
        return out

    def report(self, path: PathArg, top: int = 12, title: Optional[str] = None) -> None:
        """The self-contained HTML page of 'jsmf report'."""
        o = _lib.ReportOpts()
        lib.jsmf_report_opts_init(byref(o))
        o.top, o.title = top, enc(title)
        check(lib.jsmf_report_save(enc(os.fspath(path)), self._ptr, byref(o)))

    # ---- refinement over documents ----------------------------------------------------------

    def refine(self, docs: Documents, iters: Optional[int] = None,
               min_doc_len: Optional[int] = None, format: Union[str, int, None] = None,
               uci_vocab: Optional[PathArg] = None, threads: Optional[int] = None,
               progress: ProgressArg = False, **opts: Any) -> Model:
        """'jsmf refine MODEL --corpus ...': a new Model (kind "refined") whose topics are these
        refined by `iters` passes over documents (MAP-EM / synchronous CVB0 for LDA started
        from them, include/jsmf_refine.h), the best held-out likelihood jsmf gives. `docs`:

        - a doc-term count matrix (scipy sparse or numpy, rows documents, columns this model's
          words; non-negative integer counts), or
        - the path of a corpus file, or a list of them (any format 'jsmf ingest' reads, `format`
          one of FORMATS; read over this model's vocabulary, words outside it left out), or
        - a jsmf.Store holding its documents over this model's vocabulary (the store it was
          fitted on).

        Documents with fewer than max(2, min_doc_len) tokens over the model's words are left
        out, as the CLI leaves them (report_["dropped"] counts them). `opts`: any other field
        of jsmf_refine_opts (theta_steps, alpha, beta, mix, method: one of REFINE_METHODS,
        "cvb0" or "em", exclude: True or False, its first spelling, batches, tol, overrelax,
        learn_alpha: False, True or "auto"). Every option left out (None) is the library's
        default (jsmf_refine_run_opts_init: 80 passes, min_doc_len 5, CVB0); alpha is learned
        (the model's alpha) on documents of 100 tokens or more on average. The result depends
        on the thread count only. Ctrl-C stops between passes (jsmf.Interrupted)."""
        run = _RefineRun(iters=iters, threads=threads, min_doc_len=min_doc_len, format=format,
                         uci_vocab=uci_vocab,
                         corpus=docs if _is_files(docs) else None, **opts)
        if isinstance(docs, StoreBase):
            with StoreHandle(docs.path, RDONLY) as h:
                words = store_vocabulary(h)[0]
            if len(words) != self.n or any(a != b for a, b in zip(words, self.vocabulary)):
                raise _lib.MismatchError(_lib.EMISMATCH, "%s: the store's vocabulary is not "
                                         "the model's" % docs.path, "mismatch")
            return self._refine_saved(run, docs.path, progress)
        if _is_files(docs):
            return self._refine_saved(run, None, progress)
        return self._refine_matrix(docs, run, progress)

    def _refine_saved(self, run: _RefineRun, store: Optional[str],
                      progress: ProgressArg) -> Model:
        """jsmf_refine_to_dir of this model, saved for it, in a directory of its own."""
        with tempfile.TemporaryDirectory(prefix="jsmf-refine-") as tmp:
            start = os.path.join(tmp, "start")
            self.save(start)
            return run.to_dir(start, store, os.path.join(tmp, "refined"), False, progress)

    def _refine_matrix(self, X: Any, run: _RefineRun, progress: ProgressArg) -> Model:
        """The refinement over documents in memory (the advanced jsmf_refine): the rows of
        the matrix with at least max(2, min_doc_len) tokens, as jsmf_doc_csr_read keeps a
        corpus's (a jsmf_doc_csr holds documents of 2 tokens or more)."""
        indptr, ids, counts = _count_rows(X, self.n)
        cum = np.zeros(len(counts) + 1, np.uint64)
        np.cumsum(counts, out=cum[1:])
        tokens = cum[indptr[1:]] - cum[indptr[:-1]]
        min_len = max(2, run.opts.min_doc_len)
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
        src = _lib.DocSource()
        check(lib.jsmf_doc_csr_source(byref(csr), 0, byref(src)))  # 0: the library's blocks
        try:
            m = run.in_memory(self, src, progress)
        finally:
            lib.jsmf_doc_csr_source_free(byref(src))
        m.report_["dropped"] = int((~keep).sum())
        return m

    # ---- refits -----------------------------------------------------------------------------

    def lineage(self) -> Optional[Dict[str, Any]]:
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

    def diff(self, new: Union[Model, PathArg], top: int = 10) -> Dict[str, Any]:
        """What changed from this model to `new` ('jsmf diff OLD NEW'), as a dict."""
        return diff(self, new, top=top)

    # ---- pyLDAvis ---------------------------------------------------------------------------

    def to_pyldavis(self, store: Union[StoreBase, PathArg]) -> Dict[str, Any]:
        """The keyword arguments of pyLDAvis.prepare from the model and the store it was
        fitted on alone. The store keeps no per-document theta, so doc_topic_dists is ONE
        pseudo-document carrying p(z) = A 1 with doc_lengths = [the store's tokens]: pyLDAvis
        sizes its topics by sum_d theta_d * len_d, which that gives exactly. term_frequency is
        the store's term frequency of each word (tf)."""
        with StoreHandle(path_of(store), RDONLY) as h:
            words, _df, tf = store_vocabulary(h)
            tokens = store_stats(h).tokens
        if len(words) != self.n or any(a != b for a, b in zip(words, self.vocabulary)):
            raise _lib.MismatchError(_lib.EMISMATCH, "the store's vocabulary is not the model's")
        if tf is None:
            raise _lib.InvalidError(_lib.EINVAL, "%s: the store has no term frequencies" %
                                    path_of(store), "invalid argument")
        pz = self.topic_sizes
        pz = pz / pz.sum()
        ttd = np.ascontiguousarray(self.B.T)
        ttd = ttd / ttd.sum(axis=1, keepdims=True)
        return {"topic_term_dists": ttd, "doc_topic_dists": pz[None, :],
                "doc_lengths": np.array([tokens], dtype=np.int64),
                "vocab": list(self.vocabulary), "term_frequency": tf.astype(np.int64)}


class _RefineRun:
    """A refinement's jsmf_refine_run_opts: jsmf_refine_run_opts_init's defaults, then what the
    caller said (None: the default), with the Python objects its pointers need kept alive; it
    runs as jsmf_refine_to_dir (a model directory over files or a store) or jsmf_refine (a
    model in memory over documents in memory)."""

    def __init__(self, iters: Optional[int] = None, threads: Optional[int] = None,
                 min_doc_len: Optional[int] = None, format: Union[str, int, None] = None,
                 uci_vocab: Optional[PathArg] = None,
                 corpus: Union[PathArg, Sequence[PathArg], None] = None, **opts: Any) -> None:
        r = self.opts = _lib.RefineRunOpts()
        lib.jsmf_refine_run_opts_init(byref(r))
        if iters is not None:
            r.refine.iters = u32_arg(iters, "refine: iters")
            if not r.refine.iters:  # the library's 0 is its budget: None says that here
                raise ValueError("refine: iters must be at least 1 (None: the library's "
                                 "budget of passes), not 0")
        if threads is not None:
            r.refine.threads = int(threads)
        if min_doc_len is not None:
            r.min_doc_len = u32_arg(min_doc_len, "refine: min_doc_len")
        if format is not None:
            r.read.format = choice(FORMATS, format, "refine: format")
        self._uci_vocab = enc(os.fspath(uci_vocab)) if uci_vocab is not None else None
        r.read.uci_vocab = self._uci_vocab
        for name, value in opts.items():
            if name not in REFINE_OPTS:
                raise TypeError("refine: unknown option %r" % name)
            if value is not None:
                setattr(r.refine, *_refine_opt(name, value))
        # the reader's notes on each input (as the CLI prints them) as Python warnings
        self._warn = _lib.WARN_FN(lambda _a, msg: warnings.warn(
            msg.decode("utf-8", "replace"), RuntimeWarning, stacklevel=2))
        r.read.warn = self._warn
        if corpus is not None:
            files = [corpus] if isinstance(corpus, (str, bytes, os.PathLike)) else corpus
            self._corpus = c_strings([os.fsencode(f) for f in files])
            r.corpus = ctypes.cast(self._corpus, POINTER(ctypes.c_char_p))
            r.n_corpus = len(self._corpus)

    def to_dir(self, model: PathArg, store: Optional[str], out: PathArg, force: bool,
               progress: ProgressArg) -> Model:
        """jsmf_refine_to_dir: the model at `model` refined over the corpus or the store's
        documents, written to `out`."""
        return self._run(progress, lambda p, res: lib.jsmf_refine_to_dir(
            enc(os.fspath(model)), enc(store), enc(os.fspath(out)), int(bool(force)),
            byref(self.opts), byref(p), byref(res)))

    def in_memory(self, start: Model, docs: _lib.DocSource, progress: ProgressArg) -> Model:
        """jsmf_refine of `start` over `docs` (the advanced call)."""
        return self._run(progress, lambda p, res: lib.jsmf_refine(
            start._ptr, byref(docs), byref(self.opts.refine), byref(p), byref(res)))

    def _run(self, progress: ProgressArg, call: Any) -> Model:
        p = POINTER(_lib.Model)()
        res = _lib.RefineResult()
        try:
            with Guard(progress) as g:
                self.opts.refine.progress = g.fn
                g.check(call(p, res))
            report = _refine_report(res)
        finally:
            lib.jsmf_refine_result_free(byref(res))
        m = Model(p)
        m.report_ = report
        return m


def _refine_opt(name: str, value: Any) -> Tuple[str, Any]:
    """The jsmf_refine_opts field and value of option `name` given as `value`."""
    if name == "learn_alpha":
        if value not in _lib.REFINE_ALPHA:
            raise ValueError("refine: learn_alpha is False, True or \"auto\", not %r" % (value,))
        return name, _lib.REFINE_ALPHA[value]
    if name == "method":
        return name, choice(REFINE_METHODS, value, "refine: method")
    if name == "exclude":  # a token's own share left out: CVB0
        return "method", REFINE_METHODS["cvb0" if value else "em"]
    if name in ("theta_steps", "batches"):
        return name, u32_arg(value, "refine: " + name)
    return name, value


def _refine_report(r: _lib.RefineResult) -> Dict[str, Any]:
    """What a refinement did (jsmf_refine_result) as a dict."""
    return {"iters": r.iters, "docs": r.docs, "tokens": r.tokens,
            "dropped": None if r.over_store else r.docs_dropped,
            "over_store": bool(r.over_store), "seconds": r.seconds, "bytes": r.bytes,
            "from_previous": bool(r.warm), "admitted": r.admitted,
            "objective": np.ctypeslib.as_array(r.objective, (r.iters,)).copy()
            if r.iters else np.zeros(0)}


def _lineage_dict(ln: _lib.Lineage) -> Dict[str, Any]:
    prev = [None if ln.prev[t] == 0xFFFFFFFF else ln.prev[t] for t in range(ln.k)]
    return {"k": ln.k, "k_prev": ln.k_prev, "threshold": ln.threshold, "prev": prev,
            "l1": [ln.l1[t] for t in range(ln.k)],
            "retired": [ln.retired[i] for i in range(ln.n_retired)],
            "prev_path": ln.prev_path.decode() if ln.prev_path else None,
            "prev_fingerprint": ln.prev_fingerprint.decode()}


def _words(p: Any, n: int) -> List[Dict[str, Any]]:
    return [{"word": p[i].word.decode("utf-8", "replace"), "before": p[i].before,
             "after": p[i].after, "topic": p[i].topic} for i in range(n)]


def diff(old: Union[Model, PathArg], new: Union[Model, PathArg],
         top: int = 10) -> Dict[str, Any]:
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


def load(path: PathArg) -> Model:
    """jsmf.Model.load(path)."""
    return Model.load(path)


def _count_rows(X: Any, n: int) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
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

        def row(e: int) -> int:
            return int(np.searchsorted(indptr, e, side="right") - 1)
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

        def row(e: int) -> int:
            return int(r[e])
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
                                "non-negative integers below 2^32" % (row(e), int(ids[e]),
                                                                     data[e].item()),
                                "invalid argument")
    return indptr, np.asarray(ids, np.uint32), data.astype(np.uint64)


def refine(model: Union[Model, PathArg], docs: Documents, out: Optional[PathArg] = None,
           force: bool = False, progress: ProgressArg = False, **opts: Any) -> Model:
    """'jsmf refine MODEL --corpus DOCS -o OUT': Model.refine of `model` (a Model or a MODEL
    directory) over `docs`, written to `out` when given (force: over an existing one). A
    MODEL directory over corpus files is jsmf_refine_to_dir, the CLI's own call; `opts` are
    Model.refine's."""
    if not isinstance(model, Model) and _is_files(docs):
        run = _RefineRun(corpus=docs, **opts)
        if out is not None:
            return run.to_dir(model, None, out, force, progress)
        with tempfile.TemporaryDirectory(prefix="jsmf-refine-") as tmp:
            return run.to_dir(model, None, os.path.join(tmp, "refined"), False, progress)
    model = model if isinstance(model, Model) else Model.load(model)
    m = model.refine(docs, progress=progress, **opts)
    if out is not None:
        m.save(out, overwrite=force)
    return m


def _fit_opts(k: int, levels: Sequence[int] = (), rectify: Union[str, int, None] = None,
              anchors: Union[str, int, None] = None, recover: Union[str, int, None] = None,
              seed: Optional[int] = None, threads: int = 0, mem: Union[int, str, None] = None,
              min_anchor_df: Optional[int] = None, **extra: Any) -> _lib.FitOpts:
    o = _lib.FitOpts()
    lib.jsmf_fit_opts_init(byref(o), k)
    if rectify is not None:
        o.rectify = choice(RECTIFY, rectify, "fit: rectify")
    if anchors is not None:
        o.anchors = choice(ANCHORS, anchors, "fit: anchors")
    if recover is not None:
        o.recover = choice(RECOVER, recover, "fit: recover")
    if seed is not None:
        o.seed = seed
    o.threads = threads
    if mem is not None:
        o.mem_bytes = mem_bytes(mem)
    if min_anchor_df is not None:
        o.min_anchor_df = min_anchor_df
    for i, lv in enumerate(levels):
        o.levels[i] = lv
    for name, value in extra.items():
        if name not in dict(_lib.FitOpts._fields_):
            raise TypeError("fit: unknown option %r" % name)
        setattr(o, name, value)
    return o


def _fit_report(rep: _lib.FitReport) -> Dict[str, Any]:
    """What a fit did (jsmf_fit_report) as a dict."""
    d = fields(rep, skip=("trace", "metrics", "sketch_within", "sketch_between"))
    d["sketch_within"] = list(rep.sketch_within[:rep.n_sketch_within])
    d["sketch_between"] = list(rep.sketch_between[:rep.n_sketch_between])
    d["metrics"] = fields(rep.metrics)
    return d


def fit(input: Union[StoreBase, PathArg], k: int, out: Optional[PathArg] = None,
        previous: Optional[PathArg] = None, force: bool = False, progress: ProgressArg = True,
        corpus: Union[PathArg, Sequence[PathArg], None] = None,
        refine: Union[int, bool, None] = None, min_doc_len: Optional[int] = None,
        refine_opts: Optional[Dict[str, Any]] = None, cold: bool = False,
        prior_weight: Optional[float] = None, **opts: Any) -> Model:
    """'jsmf fit INPUT -k K -o OUT [--previous PREVIOUS] [--corpus FILES | --refine N]': the
    spectral fit of a store (or an exported C) as a Model. With `out` the MODEL directory is
    written exactly as the CLI writes it; without, the model lives in memory only (save()
    writes it). `previous` (a MODEL directory) numbers the topics after it (lineage). `opts`:
    levels=(5,), rectify, anchors, recover (names of RECTIFY, ANCHORS, RECOVER), seed,
    threads, mem, min_anchor_df and any jsmf_fit_opts field. Ctrl-C stops the fit between its
    steps (jsmf.Interrupted); nothing is written, and the same call starts again.

    As 'jsmf fit', the fit is refined over the documents where the store holds them (refine
    None, the default) and is the spectral model alone where it holds only C's rows; `corpus`
    (files) or `refine` (passes, or True for the library's budget) refine it always, and
    refine=0 or False asks for the spectral model alone: 'jsmf fit --corpus/--refine N', the
    library's jsmf_fit_refine_to_dir, with its rules (Model.refine's options in `refine_opts`,
    a dict, and `min_doc_len`, the library's defaults otherwise). A refined model is returned
    (and written to `out`), its report_["fit"] the fit's.

    With `previous` of the same k on a store that holds its documents, the night starts from
    that model (formats/model.md, "Nights": no spectral fit, its topics held near by a prior of
    weight `prior_weight`, None: the library's 0.3) and report_["from_previous"] is True,
    report_["fit"] None; cold=True makes a new spectral fit instead ('jsmf fit --cold')."""
    o = _fit_opts(k, **opts)
    run = None
    if corpus and refine is not None and refine is not True and not refine:
        raise _lib.InvalidError(_lib.EINVAL, "fit: corpus refines the fit and refine=%r asks "
                                "for no refinement: give one of them" % (refine,),
                                "invalid argument")
    if corpus or refine is None or refine:
        run = _RefineRun(iters=None if refine is None or refine is True else refine,
                         min_doc_len=min_doc_len, corpus=corpus or None, **(refine_opts or {}))
        if refine is None and not corpus:
            run.opts.when = _lib.REFINE_WHERE_DOCUMENTS
        if cold:
            run.opts.start = _lib.REFINE_START_SPECTRAL
        if prior_weight is not None:
            if not prior_weight > 0:
                raise ValueError("fit: prior_weight must be > 0 (None: the library's default)")
            run.opts.prior_weight = float(prior_weight)
    flags = _lib.FIT_FORCE if force else 0
    tmp = None
    if out is None:
        tmp = tempfile.mkdtemp(prefix="jsmf-fit-")
        out, flags = os.path.join(tmp, "model"), flags | _lib.FIT_FORCE
    inp, dst = enc(path_of(input)), enc(os.fspath(out))
    prev = enc(os.fspath(previous)) if previous else None
    p = POINTER(_lib.Model)()
    rep = _lib.FitReport()
    res = _lib.RefineResult()
    try:
        with Guard(progress) as g:
            o.progress = g.fn
            if run is None:
                rc = lib.jsmf_fit_to_dir_after(inp, dst, prev, flags, byref(o), None, byref(p),
                                               byref(rep))
            else:
                run.opts.refine.progress = g.fn
                rc = lib.jsmf_fit_refine_to_dir(inp, dst, prev, flags, byref(o),
                                                byref(run.opts), None, byref(p), byref(rep),
                                                byref(res))
            g.check(rc)
        refined = _refine_report(res) if run is not None and res.iters else None
    finally:
        lib.jsmf_refine_result_free(byref(res))
        if tmp:
            shutil.rmtree(tmp, ignore_errors=True)
    m = Model(p)
    if refined is None:
        m.report_ = _fit_report(rep)
    else:
        m.report_ = refined
        m.report_["fit"] = None if refined["from_previous"] else _fit_report(rep)
    return m


def fdm(input: Union[StoreBase, PathArg], k: int, out: Optional[PathArg] = None,
        device: Union[str, int] = "auto", init: Optional[PathArg] = "auto",
        force: bool = False, progress: ProgressArg = True, checkpoint_every: int = 0,
        checkpoint_seconds: Optional[float] = None, **opts: Any) -> Model:
    """'jsmf fdm INPUT -k K -o OUT': the FDM model by Adam on pairs sampled from C (CPU, or
    CUDA when device is "auto"/"cuda" and the plugin finds a GPU: libjsmf_cuda.so, see the
    README; `device` one of DEVICES). Ctrl-C stops after the current step with a checkpoint
    OUT.ckpt (jsmf.Interrupted); the same call resumes from it (give `out`: without one the
    model is written to a temporary directory and a stopped run is lost). `opts`: any
    jsmf_fdm_opts field (steps, batch, lr, seed, time_limit, threads, ...)."""
    p = _lib.FdmOpts()
    lib.jsmf_fdm_opts_init(byref(p))
    p.k = k
    p.device = choice(DEVICES, device, "fdm: device")
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
            rc = lib.jsmf_fdm_to_dir(enc(path_of(input)), enc(os.fspath(out)), byref(d),
                                     byref(p), byref(r))
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
