"""store.py — the store (formats/store.md) from Python: create, open, ingest files or any
iterable of documents (streamed: one document at a time goes to the library), info, check,
merge, export."""
import ctypes
import os
from ctypes import byref, c_char_p, c_uint32, c_void_p, POINTER

import numpy as np

from . import _lib
from ._lib import lib, enc, check
from ._progress import Guard

RDONLY, WRITE, CREATE = 0, 1, 2
FORMATS = {"auto": 0, "text": 1, "uci": 2, "ldac": 3}
HOLDS = {None: 0, "rows": 1, "docs": 2, "both": 3}  # jsmf_store_params.hold (JSMF_HOLD_*)


def _fnv1a64(data):
    h = 0xcbf29ce484222325
    for b in data:
        h = ((h ^ b) * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
    return h or 1


def vocab_words(v):
    """The words of a jsmf_vocab* as a list of str."""
    return [v.contents.words[i].decode("utf-8", "surrogateescape") for i in range(v.contents.n)]


def _vocab_arrays(v):
    n = v.contents.n
    df = np.ctypeslib.as_array(v.contents.df, (n,)).copy() if v.contents.df and n else None
    tf = np.ctypeslib.as_array(v.contents.tf, (n,)).copy() if v.contents.tf and n else None
    return df, tf


def make_vocab(words):
    """A jsmf_vocab built from Python words (kept alive by the returned tuple's second item)."""
    bs = [enc(w) for w in words]
    arr = (c_char_p * len(bs))(*bs)
    v = _lib.Vocab(n=len(bs), words=ctypes.cast(arr, POINTER(c_char_p)))
    return v, (arr, bs)


class _Open:
    """A store handle for the length of a `with`."""

    def __init__(self, path, flags):
        self.h = c_void_p()
        check(lib.jsmf_store_open(enc(path), flags, byref(self.h)))

    def __enter__(self):
        return self.h

    def __exit__(self, *exc):
        lib.jsmf_store_close(self.h)
        return False


class Store:
    """A store directory. The object holds only its path: each call opens the store for what
    it does (reading, or writing under the store's writer lock) and closes it again, so other
    processes (a 'jsmf ingest', a reader) can use it between calls."""

    def __init__(self, path):
        self.path = os.fspath(path)

    def __repr__(self):
        return "jsmf.Store(%r)" % self.path

    # ---- making and opening -----------------------------------------------------------------

    @classmethod
    def open(cls, path):
        """An existing store (NotFoundError when there is none)."""
        with _Open(path, RDONLY):
            pass
        return cls(path)

    @classmethod
    def create(cls, path, vocabulary, min_doc_len=5, tok_min_len=3, tok_max_len=64, hold=None):
        """A new store with `vocabulary` (a list of words in row order, or the path of a
        vocabulary file as 'jsmf vocab' writes it) and the documents' rules; `hold` "rows",
        "docs" or "both" (None: the default; formats/store.md "Documents")."""
        if isinstance(vocabulary, (str, bytes, os.PathLike)):
            vp = POINTER(_lib.Vocab)()
            check(lib.jsmf_vocab_load(enc(vocabulary), byref(vp)))
            try:
                return cls._create(path, vp, min_doc_len, tok_min_len, tok_max_len, hold)
            finally:
                lib.jsmf_vocab_free(vp)
        v, _keep = make_vocab(list(vocabulary))
        return cls._create(path, byref(v), min_doc_len, tok_min_len, tok_max_len, hold)

    @classmethod
    def _create(cls, path, vp, min_doc_len, tok_min_len, tok_max_len, hold=None):
        p = _lib.StoreParams(min_doc_len, tok_min_len, tok_max_len, HOLDS[hold])
        h = c_void_p()
        check(lib.jsmf_store_create(enc(path), vp, byref(p), byref(h)))
        lib.jsmf_store_close(h)
        return cls(path)

    def exists(self):
        try:
            with _Open(self.path, RDONLY):
                return True
        except _lib.NotFoundError:
            return False

    # ---- what it holds ----------------------------------------------------------------------

    def info(self):
        """The counters (jsmf info) and the input records, as a dict."""
        with _Open(self.path, RDONLY) as h:
            st = _lib.StoreStats()
            check(lib.jsmf_store_stats_get(h, byref(st)))
            pr = _lib.StoreParams()
            check(lib.jsmf_store_params_get(h, byref(pr)))
            recs = POINTER(_lib.StoreInput)()
            n = c_uint32()
            check(lib.jsmf_store_inputs_get(h, byref(recs), byref(n)))
            try:
                inputs = [_record(recs[i]) for i in range(n.value)]
            finally:
                _libc_free(recs)
        d = {f: getattr(st, f) for f, _ in _lib.StoreStats._fields_}
        d["hold"] = {v: k for k, v in HOLDS.items() if k}.get(st.hold, st.hold)
        d["min_doc_len"] = pr.min_doc_len
        d["tokenizer"] = (pr.tok_min_len, pr.tok_max_len)
        d["inputs"] = inputs
        return d

    def vocabulary(self):
        """(words, df, tf): the words in row order and their document and term frequencies
        over the documents ingested so far (numpy arrays)."""
        with _Open(self.path, RDONLY) as h:
            vp = POINTER(_lib.Vocab)()
            check(lib.jsmf_store_vocab_get(h, byref(vp)))
            try:
                words = np.array(vocab_words(vp), dtype=object)
                df, tf = _vocab_arrays(vp)
            finally:
                lib.jsmf_vocab_free(vp)
        return words, df, tf

    def check(self):
        """One read of all of C (jsmf info --check): entries, sum, and a digest equal for two
        stores that hold the same C."""
        with _Open(self.path, RDONLY) as h:
            r = _lib.StoreCheck()
            check(lib.jsmf_store_check(h, byref(r)))
        return {f: getattr(r, f) for f, _ in _lib.StoreCheck._fields_}

    def export(self, out, npy=False):
        """C into `out` as MatrixMarket (or .npy), with OUT.vocab.txt (jsmf export)."""
        with _Open(self.path, RDONLY) as h:
            check(lib.jsmf_store_export(h, enc(out), int(bool(npy))))

    @classmethod
    def merge(cls, out, *stores):
        """A new store `out` holding the sum of `stores` (jsmf merge)."""
        paths = [enc(os.fspath(getattr(s, "path", s))) for s in stores]
        arr = (c_char_p * len(paths))(*paths)
        check(lib.jsmf_store_merge(enc(out), arr, len(paths)))
        return cls(out)

    # ---- ingest -----------------------------------------------------------------------------

    def ingest_files(self, paths, vocabulary=None, format="auto", min_doc_len=None, mem=None,
                     threads=0, force=False, checkpoint_secs=0.0, progress=True):
        """'jsmf ingest STORE PATHS...': files (plain or zstd; "-" is stdin) into the store,
        made with `vocabulary` (a vocabulary file) or, without one, a counting pass, when it
        does not exist. Ctrl-C checkpoints what was read and raises jsmf.Interrupted: the same
        call resumes there. Returns what the run did (a dict)."""
        if isinstance(paths, (str, bytes, os.PathLike)):
            paths = [paths]
        ps = [enc(os.fspath(p)) for p in paths]
        arr = (c_char_p * len(ps))(*ps)
        o = _lib.IngestRunOpts()
        lib.jsmf_ingest_run_opts_init(byref(o))
        o.ingest.threads, o.ingest.force = threads, int(bool(force))
        o.ingest.format = FORMATS[format] if isinstance(format, str) else int(format)
        o.ingest.checkpoint_secs = checkpoint_secs
        if mem:
            o.ingest.mem = _mem(mem)
        o.vocab = enc(os.fspath(vocabulary)) if vocabulary is not None else None
        if min_doc_len is not None:
            o.min_doc_len, o.min_doc_len_given = min_doc_len, 1
        r = _lib.IngestRunSummary()
        with Guard(progress) as g:
            o.ingest.progress = g.fn
            rc = lib.jsmf_ingest_run(enc(self.path), arr, len(ps), byref(o), None, byref(r))
            g.check(rc)
        return _summary(r.ingest)

    def ingest(self, docs, name="python", vocabulary=None, min_doc_len=5, force=False,
               mem=None, threads=0, checkpoint_secs=0.0, progress=True):
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
        with _Open(self.path, WRITE) as h:
            words, _, _ = self._vocab_of(h)
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
                o.mem = _mem(mem)
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
    def _admit(h):
        """The pending words that now pass the store's rule join its vocabulary."""
        n = c_uint32()
        check(lib.jsmf_ingest_admit(h, byref(n)))
        return n.value

    def _vocab_of(self, h):
        vp = POINTER(_lib.Vocab)()
        check(lib.jsmf_store_vocab_get(h, byref(vp)))
        try:
            return vocab_words(vp), None, None
        finally:
            lib.jsmf_vocab_free(vp)

    def _input_record(self, h, fp, label, force, grows=False):
        """The record to continue (a partial one of this name) or a fresh one; None for a
        complete one when the store grows and words wait for their admission."""
        recs = POINTER(_lib.StoreInput)()
        n = c_uint32()
        check(lib.jsmf_store_inputs_get(h, byref(recs), byref(n)))
        try:
            mine = [_lib.StoreInput.from_buffer_copy(recs[i]) for i in range(n.value)
                    if recs[i].fingerprint == fp]
        finally:
            _libc_free(recs)
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

    def fit(self, k, **kw):
        """jsmf.fit(self.path, k, ...)."""
        from .model import fit
        return fit(self.path, k, **kw)


def stopwords(spec="en"):
    """The words of a stopword list: "en" (the library's English list), "none", or a file."""
    vp = POINTER(_lib.Vocab)()
    check(lib.jsmf_stopwords_load(enc(spec), byref(vp)))
    try:
        return vocab_words(vp) if vp else []
    finally:
        lib.jsmf_vocab_free(vp)


def count_vocabulary(docs, min_df=5, max_df_frac=0.5, max_words=0, min_doc_len=5,
                     stopwords_="en", tok_min_len=3, tok_max_len=64):
    """'jsmf vocab' over documents held in Python, by its rules (formats/vocab.md): tokens as
    text input cuts them, stopwords never counted, documents with fewer than min_doc_len other
    tokens skipped, then words with df < min_df or df > max_df_frac * documents dropped, the
    rest sorted by df (descending) then word bytes, the first max_words kept (0: all).
    Returns (words, df, tf); the words are what Store.create and Store.ingest take."""
    stop = {w.encode("utf-8", "surrogateescape") for w in
            (stopwords(stopwords_) if isinstance(stopwords_, (str, os.PathLike)) else
             (stopwords_ or []))}
    f = _Feeder.__new__(_Feeder)
    f.tok, f.cap = _lib.Tokenizer(tok_min_len, tok_max_len), 0
    df, tf = {}, {}
    counted = 0
    for doc in docs:
        if isinstance(doc, str):
            doc = doc.encode("utf-8", "surrogateescape")
        toks = f.tokens(bytes(doc)) if isinstance(doc, (bytes, bytearray, memoryview)) else \
            [t.encode("utf-8", "surrogateescape") if isinstance(t, str) else bytes(t) for t in doc]
        toks = [t for t in toks if t not in stop]
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

    def __init__(self, g, index, params, rec, grows=False):
        self.g, self.index, self.grows = g, index, grows
        self.tok = _lib.Tokenizer(params.tok_min_len, params.tok_max_len)
        self.skip = rec.next_doc
        self.offset, self.line, self.doc = rec.next_offset, rec.next_line, rec.next_doc
        self.cap = 0

    def _room(self, nbytes):
        if nbytes <= self.cap:
            return
        self.cap = max(nbytes, 2 * self.cap, 4096)
        ntok = self.cap // max(2, self.tok.min_len + 1) + 1 if self.tok.min_len > 1 else \
            self.cap // 2 + 1
        self.out = ctypes.create_string_buffer(self.cap)
        self.toks = (c_void_p * ntok)()
        self.lens = np.zeros(ntok, dtype=np.uint32)

    def tokens(self, text):
        """The tokens of `text` (bytes) by jsmf_tokenize."""
        self._room(len(text) + 1)
        n = lib.jsmf_tokenize(byref(self.tok), text, len(text), self.out, self.toks,
                              self.lens.ctypes.data)
        if n == 0:
            return []
        ends = np.cumsum(self.lens[:n]).tolist()
        raw = self.out.raw[:ends[-1]]
        starts = [0] + ends[:-1]
        return [raw[a:b] for a, b in zip(starts, ends)]

    def feed_all(self, docs, guard, label):
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
                toks = [t.encode("utf-8", "surrogateescape") if isinstance(t, str) else bytes(t)
                        for t in doc]
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

    def _doc_words(self, words):
        """The next document's words outside the vocabulary (distinct, with counts) to the
        session; returns what must stay alive until its jsmf_ingest_doc."""
        count = {}
        for w in words:
            count[w] = count.get(w, 0) + 1
        ws = list(count)
        ptrs = (c_char_p * len(ws))(*ws)
        lens = np.fromiter((len(w) for w in ws), dtype=np.uint32, count=len(ws))
        cnts = np.fromiter((count[w] for w in ws), dtype=np.uint32, count=len(ws))
        lib.jsmf_ingest_doc_words(self.g, ptrs, lens.ctypes.data, cnts.ctypes.data, len(ws))
        return ptrs, lens, cnts

    def feed_csr(self, indptr, indices, counts, guard, label):
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


def _record(r):
    d = {f: getattr(r, f) for f, _ in _lib.StoreInput._fields_ if f != "path"}
    d["path"] = r.path.decode("utf-8", "replace")
    d["complete"] = r.state == 1
    return d


def _summary(s):
    return {f: getattr(s, f) for f, _ in _lib.IngestSummary._fields_}


def _mem(mem):
    if isinstance(mem, int):
        return mem
    v = ctypes.c_uint64()
    lib.jsmf_mem_parse.argtypes = [c_char_p, c_char_p, ctypes.c_int, POINTER(ctypes.c_uint64)]
    check(lib.jsmf_mem_parse(b"mem", enc(mem), 0, byref(v)))
    return v.value


_libc = ctypes.CDLL(None)
_libc.free.argtypes = [c_void_p]


def _libc_free(p):
    _libc.free(ctypes.cast(p, c_void_p))
