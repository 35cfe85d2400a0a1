"""store.py — the store (formats/store.md) from Python: create, open, ingest files or any
iterable of documents (streamed: one document at a time goes to the library), info, check,
merge, export."""
from __future__ import annotations

import ctypes
import os
from ctypes import POINTER, byref, c_char_p, c_uint32, c_void_p
from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple, Union

import numpy as np

from . import _lib
from ._common import (CREATE, FORMATS, RDONLY, WRITE, StoreBase, StoreHandle, Tokens, c_strings,
                      choice, fields, mem_bytes, path_of, store_inputs, store_stats,
                      store_vocabulary, vocab_words)
from ._lib import PathArg, check, enc, lib
from ._progress import Guard, ProgressArg
from .model import Model, fit as _fit

__all__ = ["Store", "count_vocabulary", "stopwords", "make_vocab", "vocab_words", "FORMATS",
           "HOLDS", "RDONLY", "WRITE", "CREATE"]


def _holds() -> Dict[Optional[str], int]:
    """What a new store holds (jsmf_store_params.hold): None for the library's default, then
    the names jsmf_store_hold_name gives 1, 2, ... (it answers "?" past the last)."""
    table: Dict[Optional[str], int] = {None: 0}
    while True:
        name = lib.jsmf_store_hold_name(len(table)).decode()
        if name == "?":
            return table
        table[name] = len(table)


HOLDS = _holds()

# A document as Store.ingest and count_vocabulary take it: text, or a list of tokens.
Document = Union[str, bytes, bytearray, memoryview, Sequence[Union[str, bytes]]]


def _fnv1a64(data: bytes) -> int:
    h = 0xcbf29ce484222325
    for b in data:
        h = ((h ^ b) * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
    return h or 1


def make_vocab(words: Sequence[Union[str, bytes]]) -> Tuple[_lib.Vocab, Any]:
    """A jsmf_vocab built from Python words (kept alive by the returned tuple's second item)."""
    bs = [w if isinstance(w, bytes) else str(w).encode("utf-8") for w in words]
    arr = c_strings(bs)
    v = _lib.Vocab(n=len(bs), words=ctypes.cast(arr, POINTER(c_char_p)))
    return v, (arr, bs)


class Store(StoreBase):
    """A store directory. The object holds only its path: each call opens the store for what
    it does (reading, or writing under the store's writer lock) and closes it again, so other
    processes (a 'jsmf ingest', a reader) can use it between calls."""

    # ---- making and opening -----------------------------------------------------------------

    @classmethod
    def open(cls, path: PathArg) -> Store:
        """An existing store (NotFoundError when there is none)."""
        with StoreHandle(path, RDONLY):
            pass
        return cls(path)

    @classmethod
    def create(cls, path: PathArg, vocabulary: Union[PathArg, Iterable[str]],
               min_doc_len: int = 5, tok_min_len: int = 3, tok_max_len: int = 64,
               hold: Optional[str] = None) -> Store:
        """A new store with `vocabulary` (a list of words in row order, or the path of a
        vocabulary file as 'jsmf vocab' writes it) and the documents' rules; `hold` "rows",
        "docs" or "both" (None: the default; formats/store.md "Documents")."""
        if isinstance(vocabulary, (str, bytes, os.PathLike)):
            vp = POINTER(_lib.Vocab)()
            check(lib.jsmf_vocab_load(enc(os.fspath(vocabulary)), byref(vp)))
            try:
                return cls._create(path, vp, min_doc_len, tok_min_len, tok_max_len, hold)
            finally:
                lib.jsmf_vocab_free(vp)
        v, _keep = make_vocab(list(vocabulary))
        return cls._create(path, byref(v), min_doc_len, tok_min_len, tok_max_len, hold)

    @classmethod
    def _create(cls, path: PathArg, vp: Any, min_doc_len: int, tok_min_len: int,
                tok_max_len: int, hold: Optional[str] = None) -> Store:
        named = {k: v for k, v in HOLDS.items() if k is not None}
        p = _lib.StoreParams(min_doc_len, tok_min_len, tok_max_len,
                             0 if hold is None else choice(named, hold, "hold"))
        h = c_void_p()
        check(lib.jsmf_store_create(enc(os.fspath(path)), vp, byref(p), byref(h)))
        lib.jsmf_store_close(h)
        return cls(path)

    def exists(self) -> bool:
        """Whether a store is there."""
        try:
            with StoreHandle(self.path, RDONLY):
                return True
        except _lib.NotFoundError:
            return False

    # ---- what it holds ----------------------------------------------------------------------

    def info(self) -> Dict[str, Any]:
        """The counters (jsmf info) and the input records, as a dict."""
        with StoreHandle(self.path, RDONLY) as h:
            st = store_stats(h)
            pr = _lib.StoreParams()
            check(lib.jsmf_store_params_get(h, byref(pr)))
            inputs = [_record(r) for r in store_inputs(h)]
        d = fields(st)
        d["hold"] = {v: k for k, v in HOLDS.items() if k}.get(st.hold, st.hold)
        d["min_doc_len"] = pr.min_doc_len
        d["tokenizer"] = (pr.tok_min_len, pr.tok_max_len)
        d["inputs"] = inputs
        return d

    def vocabulary(self) -> Tuple[np.ndarray, Optional[np.ndarray], Optional[np.ndarray]]:
        """(words, df, tf): the words in row order and their document and term frequencies
        over the documents ingested so far (numpy arrays)."""
        with StoreHandle(self.path, RDONLY) as h:
            return store_vocabulary(h)

    def check(self) -> Dict[str, Any]:
        """One read of all of C (jsmf info --check): entries, sum, and a digest equal for two
        stores that hold the same C."""
        with StoreHandle(self.path, RDONLY) as h:
            r = _lib.StoreCheck()
            check(lib.jsmf_store_check(h, byref(r)))
        return fields(r)

    def export(self, out: PathArg, npy: bool = False) -> None:
        """C into `out` as MatrixMarket (or .npy), with OUT.vocab.txt (jsmf export)."""
        with StoreHandle(self.path, RDONLY) as h:
            check(lib.jsmf_store_export(h, enc(os.fspath(out)), int(bool(npy))))

    @classmethod
    def merge(cls, out: PathArg, *stores: Union[StoreBase, PathArg]) -> Store:
        """A new store `out` holding the sum of `stores` (jsmf merge)."""
        arr = c_strings([os.fsencode(path_of(s)) for s in stores])
        check(lib.jsmf_store_merge(enc(os.fspath(out)), arr, len(arr)))
        return cls(out)

    # ---- ingest -----------------------------------------------------------------------------

    def ingest_files(self, paths: Union[PathArg, Sequence[PathArg]],
                     vocabulary: Optional[PathArg] = None,
                     format: Union[str, int, None] = None, min_doc_len: Optional[int] = None,
                     mem: Union[int, str, None] = None, threads: int = 0, force: bool = False,
                     checkpoint_secs: float = 0.0,
                     progress: ProgressArg = True) -> Dict[str, Any]:
        """'jsmf ingest STORE PATHS...': files (plain or zstd; "-" is stdin) into the store,
        made with `vocabulary` (a vocabulary file) or, without one, a counting pass, when it
        does not exist. `format`: one of FORMATS ("text", "uci", "ldac", "items"; None: the
        library's, sniffed). Ctrl-C checkpoints what was read and raises jsmf.Interrupted: the
        same call resumes there. Returns what the run did (a dict)."""
        if isinstance(paths, (str, bytes, os.PathLike)):
            paths = [paths]
        arr = c_strings([os.fsencode(p) for p in paths])
        o = _lib.IngestRunOpts()
        lib.jsmf_ingest_run_opts_init(byref(o))
        o.ingest.threads, o.ingest.force = threads, int(bool(force))
        if format is not None:
            o.ingest.format = choice(FORMATS, format, "format")
        o.ingest.checkpoint_secs = checkpoint_secs
        if mem:
            o.ingest.mem = mem_bytes(mem)
        o.vocab = enc(os.fspath(vocabulary)) if vocabulary is not None else None
        if min_doc_len is not None:
            o.min_doc_len, o.min_doc_len_given = min_doc_len, 1
        r = _lib.IngestRunSummary()
        with Guard(progress) as g:
            o.ingest.progress = g.fn
            rc = lib.jsmf_ingest_run(enc(self.path), arr, len(arr), byref(o), None, byref(r))
            g.check(rc)
        return _summary(r.ingest)

    def ingest(self, docs: Any, name: str = "python",
               vocabulary: Union[PathArg, Iterable[str], None] = None, min_doc_len: int = 5,
               force: bool = False, mem: Union[int, str, None] = None, threads: int = 0,
               checkpoint_secs: float = 0.0, progress: ProgressArg = True) -> Dict[str, Any]:
        """Any iterable of documents into the store, streamed: a document is a string (or
        bytes), cut into tokens by the store's text rules (jsmf_tokenize, as a line of a text
        file), or a list of tokens taken as they are; or a scipy sparse doc-term matrix whose
        columns are the store's words (counts; each row a document). The documents are an input named `name`
        (its record: 'python:NAME'); a new store needs `vocabulary` (words, or a vocabulary
        file; without one, documents that can be read twice get a counting pass:
        count_vocabulary's defaults, as 'jsmf ingest' counts a new store's). Ctrl-C (or an
        exception from the iterable) checkpoints the documents fed so
        far and raises again; calling again with the same `name` and the same documents
        resumes: the documents the store holds are skipped, as a resumed stdin skips what it
        read. An input complete already is refused (ExistsError) unless `force`."""
        if not self.exists():
            if vocabulary is None:
                if iter(docs) is docs or hasattr(docs, "tocsr"):
                    raise _lib.InvalidError(_lib.EINVAL, "%s: a new store needs its vocabulary "
                                            "(vocabulary=words or a vocabulary file; or pass "
                                            "documents that can be read twice, a list, for a "
                                            "counting pass)" % self.path)
                vocabulary = count_vocabulary(docs, min_doc_len=min_doc_len)[0]
            Store.create(self.path, vocabulary, min_doc_len=min_doc_len)
        label = "python:" + name
        fp = _fnv1a64(label.encode())
        with StoreHandle(self.path, WRITE) as h:
            words = store_vocabulary(h)[0]
            index = {w.encode("utf-8", "surrogateescape"): i for i, w in enumerate(words)}
            pr = _lib.StoreParams()
            check(lib.jsmf_store_params_get(h, byref(pr)))
            rule = _lib.StoreRule()
            check(lib.jsmf_store_rule_get(h, byref(rule)))
            grows = rule.state == _lib.RULE_GROW
            rec = self._input_record(h, fp, label, force, grows)
            if rec is None:  # complete already; a kill before its admission left words to admit
                return {"words_admitted": self._admit(h), "resumed_from": 0}
            o = _lib.IngestOpts()
            lib.jsmf_ingest_opts_init(byref(o))
            o.threads, o.checkpoint_secs = threads, checkpoint_secs
            if mem:
                o.mem = mem_bytes(mem)
            g = c_void_p()
            check(lib.jsmf_ingest_new(h, byref(o), byref(g)))
            try:
                check(lib.jsmf_ingest_input(g, byref(rec)))
                feeder = _Feeder(g, index, pr, rec, grows)
                with Guard(progress) as guard:
                    if hasattr(docs, "tocsr"):  # a scipy sparse doc-term matrix
                        X = docs.tocsr()
                        if X.shape[1] != len(words):
                            raise _lib.MismatchError(_lib.EMISMATCH, "%s: the matrix has %d "
                                                     "columns, the store's vocabulary %d words"
                                                     % (label, X.shape[1], len(words)))
                        feeder.feed_csr(X.indptr, X.indices.astype(np.uint32),
                                        np.asarray(X.data).astype(np.uint32), guard, label)
                    else:
                        feeder.feed_all(docs, guard, label)
                check(lib.jsmf_ingest_input_done(g))
            except BaseException:
                # what was fed is committed, so the same call resumes after it
                lib.jsmf_ingest_checkpoint(g)
                lib.jsmf_ingest_free(g)
                raise
            s = _lib.IngestSummary()
            check(lib.jsmf_ingest_finish(g, byref(s)))
            admitted = self._admit(h)  # the end of this "command", as for files
        d = _summary(s)
        d["resumed_from"] = feeder.skip
        d["words_admitted"] = admitted
        return d

    @staticmethod
    def _admit(h: c_void_p) -> int:
        """The pending words that now pass the store's rule join its vocabulary."""
        n = c_uint32()
        check(lib.jsmf_ingest_admit(h, byref(n)))
        return n.value

    def _input_record(self, h: c_void_p, fp: int, label: str, force: bool,
                      grows: bool = False) -> Optional[_lib.StoreInput]:
        """The record to continue (a partial one of this name) or a fresh one; None for a
        complete one when the store grows and words wait for their admission."""
        mine = [r for r in store_inputs(h) if r.fingerprint == fp]
        for r in mine:
            if r.state == 0:
                return r
        if mine and not force:
            if grows and self._admit(h):
                return None
            raise _lib.ExistsError(_lib.EEXIST, "%s: already ingested into %s; use force=True to "
                                   "add it again" % (label, self.path))
        r = _lib.StoreInput()
        r.fingerprint = fp
        r.occurrence = max((x.occurrence + 1 for x in mine), default=0)
        r.next_line = 1
        r.path = label.encode()[:1023]
        return r

    def fit(self, k: int, **kw: Any) -> Model:
        """jsmf.fit(self.path, k, ...)."""
        return _fit(self.path, k, **kw)


def stopwords(spec: PathArg = "en") -> List[str]:
    """The words of a stopword list: "en" (the library's English list), "none", or a file."""
    vp = POINTER(_lib.Vocab)()
    check(lib.jsmf_stopwords_load(enc(os.fspath(spec)), byref(vp)))
    try:
        return vocab_words(vp) if vp else []
    finally:
        lib.jsmf_vocab_free(vp)


def count_vocabulary(docs: Iterable[Document], min_df: int = 5, max_df_frac: float = 0.5,
                     max_words: int = 0, min_doc_len: int = 5,
                     stopwords_: Union[str, "os.PathLike[str]", Iterable[str], None] = "en",
                     tok_min_len: int = 3,
                     tok_max_len: int = 64) -> Tuple[List[str], np.ndarray, np.ndarray]:
    """'jsmf vocab' over documents held in Python, by its rules (formats/vocab.md): tokens as
    text input cuts them, stopwords never counted, documents with fewer than min_doc_len other
    tokens skipped, then words with df < min_df or df > max_df_frac * documents dropped, the
    rest sorted by df (descending) then word bytes, the first max_words kept (0: all).
    Returns (words, df, tf); the words are what Store.create and Store.ingest take."""
    stop = {w.encode("utf-8", "surrogateescape") for w in
            (stopwords(stopwords_) if isinstance(stopwords_, (str, os.PathLike)) else
             (stopwords_ or []))}
    tokens = Tokens(tok_min_len, tok_max_len)
    df: Dict[bytes, int] = {}
    tf: Dict[bytes, int] = {}
    counted = 0
    for doc in docs:
        toks = [t for t in tokens.of(doc) if t not in stop]
        if len(toks) < min_doc_len:
            continue
        counted += 1
        for t in toks:
            tf[t] = tf.get(t, 0) + 1
        for t in set(toks):
            df[t] = df.get(t, 0) + 1
    limit = max_df_frac * counted if max_df_frac > 0 else 0
    keep = [w for w, d in df.items() if d >= min_df and not (max_df_frac < 1 and d > limit)]
    keep.sort(key=lambda w: (-df[w], w))
    if max_words and len(keep) > max_words:
        keep = keep[:max_words]
    words = [w.decode("utf-8", "surrogateescape") for w in keep]
    return (words, np.array([df[w] for w in keep], dtype=np.uint64),
            np.array([tf[w] for w in keep], dtype=np.uint64))


class _Feeder:
    """Documents from Python to jsmf_ingest_doc, each with its resume point (the decoded byte
    offset, line and index after it, counted as if the documents were the lines of a file)."""

    def __init__(self, g: c_void_p, index: Dict[bytes, int], params: _lib.StoreParams,
                 rec: _lib.StoreInput, grows: bool = False) -> None:
        self.g, self.index, self.grows = g, index, grows
        self.tokens = Tokens(params.tok_min_len, params.tok_max_len)
        self.skip: int = rec.next_doc
        self.offset, self.line, self.doc = rec.next_offset, rec.next_line, rec.next_doc

    def feed_all(self, docs: Iterable[Document], guard: Guard, label: str) -> None:
        i = -1
        index = self.index
        for i, doc in enumerate(docs):
            if i < self.skip:
                continue
            if isinstance(doc, str):
                doc = doc.encode("utf-8", "surrogateescape")
            if isinstance(doc, (bytes, bytearray, memoryview)):
                text = bytes(doc)
                toks = self.tokens(text)
                nbytes = len(text) + 1
            else:
                toks = self.tokens.of(doc)
                nbytes = sum(len(t) + 1 for t in toks) or 1
            ids = [index.get(t, -1) for t in toks]
            oov = ids.count(-1)
            if oov:
                if self.grows:  # counted as pending words, as a file's are
                    keep = self._doc_words([t for t, x in zip(toks, ids) if x < 0])
                ids = [x for x in ids if x >= 0]
            arr = np.asarray(ids, dtype=np.uint32)
            self.offset += nbytes
            self.line += 1
            self.doc = i + 1
            check(lib.jsmf_ingest_doc(self.g, arr.ctypes.data, None, len(ids), oov,
                                      self.offset, self.line, self.doc))
            if (i & 1023) == 1023:
                guard.tell(label, i + 1, 0, "documents")
        if i + 1 < self.skip:
            raise _lib.MismatchError(_lib.EMISMATCH, "%s: %d documents, but the store holds %d of "
                                     "this input already: not the same documents" %
                                     (label, i + 1, self.skip))

    def _doc_words(self, words: List[bytes]) -> Tuple[Any, np.ndarray, np.ndarray]:
        """The next document's words outside the vocabulary (distinct, with counts) to the
        session; returns what must stay alive until its jsmf_ingest_doc."""
        count: Dict[bytes, int] = {}
        for w in words:
            count[w] = count.get(w, 0) + 1
        ws = list(count)
        ptrs = c_strings(ws)
        lens = np.fromiter((len(w) for w in ws), dtype=np.uint32, count=len(ws))
        cnts = np.fromiter((count[w] for w in ws), dtype=np.uint32, count=len(ws))
        lib.jsmf_ingest_doc_words(self.g, ptrs, lens.ctypes.data, cnts.ctypes.data, len(ws))
        return ptrs, lens, cnts

    def feed_csr(self, indptr: np.ndarray, indices: np.ndarray, counts: np.ndarray,
                 guard: Guard, label: str) -> None:
        """Rows of a CSR matrix (ids and counts as uint32 arrays) as documents."""
        ip = indptr.tolist()
        ia, ca = indices.ctypes.data, counts.ctypes.data
        f, g = lib.jsmf_ingest_doc, self.g
        for i in range(self.skip, len(ip) - 1):
            a, b = ip[i], ip[i + 1]
            rc = f(g, ia + 4 * a, ca + 4 * a, b - a, 0, 0, i + 2, i + 1)
            if rc:
                check(rc)
            if (i & 4095) == 4095:
                guard.tell(label, i + 1, len(ip) - 1, "documents")


def _record(r: _lib.StoreInput) -> Dict[str, Any]:
    d = fields(r, skip=("path",))
    d["path"] = r.path.decode("utf-8", "replace")
    d["complete"] = r.state == 1
    return d


def _summary(s: _lib.IngestSummary) -> Dict[str, Any]:
    return fields(s)
