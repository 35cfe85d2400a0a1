"""_common.py — what store.py and model.py both need, below both of them (the package's imports
go one way: _lib, then _progress and _common, then model, then store, sklearn and __init__):
a store handle for the length of a `with`, the store's vocabulary and counters, the library's
tokenizer, memory sizes, the library's choice tables and what turns a name into its value."""
from __future__ import annotations

import ctypes
import os
from ctypes import POINTER, byref, c_char_p, c_uint32, c_uint64, c_void_p
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

import numpy as np

from . import _lib
from ._lib import PathArg, check, enc, lib

RDONLY, WRITE, CREATE = 0, 1, 2  # jsmf_store_open's flags (JSMF_STORE_*)

# The input formats (jsmf_format_name: "auto", "text", "uci", "ldac", "items", ...).
FORMATS = _lib.names(lib.jsmf_format_name)


def choice(table: Dict[str, int], value: Union[str, int], what: str) -> int:
    """The library's value of choice `value` (a name of `table`, or the value itself), or
    ValueError listing the names as the CLI lists them."""
    if not isinstance(value, str):
        return int(value)
    try:
        return table[value]
    except KeyError:
        names = list(table)
        raise ValueError("%s must be %s or %s, not %r" % (what, ", ".join(names[:-1]), names[-1],
                                                          value)) from None


class StoreBase:
    """What identifies a store: its directory (jsmf.Store is one; model.py takes any)."""

    def __init__(self, path: PathArg) -> None:
        self.path: str = os.fsdecode(os.fspath(path))

    def __repr__(self) -> str:
        return "jsmf.Store(%r)" % self.path


def path_of(x: Union[StoreBase, PathArg]) -> str:
    """The directory or file of a jsmf.Store or a path."""
    return x.path if isinstance(x, StoreBase) else os.fsdecode(os.fspath(x))


class StoreHandle:
    """A store handle (a jsmf_store*) for the length of a `with`."""

    def __init__(self, path: PathArg, flags: int) -> None:
        self.h = c_void_p()
        check(lib.jsmf_store_open(enc(os.fspath(path)), flags, byref(self.h)))

    def __enter__(self) -> c_void_p:
        return self.h

    def __exit__(self, *exc: object) -> None:
        lib.jsmf_store_close(self.h)


def vocab_words(v: "ctypes._Pointer[_lib.Vocab]") -> List[str]:
    """The words of a jsmf_vocab* as a list of str."""
    return [v.contents.words[i].decode("utf-8", "surrogateescape") for i in range(v.contents.n)]


def store_vocabulary(h: c_void_p) -> Tuple[np.ndarray, Optional[np.ndarray],
                                            Optional[np.ndarray]]:
    """(words, df, tf) of the open store `h`: the words in row order and their document and
    term frequencies (numpy arrays; df and tf None when the store has none)."""
    vp = POINTER(_lib.Vocab)()
    check(lib.jsmf_store_vocab_get(h, byref(vp)))
    try:
        n = vp.contents.n
        words = np.array(vocab_words(vp), dtype=object)
        df = np.ctypeslib.as_array(vp.contents.df, (n,)).copy() if vp.contents.df and n else None
        tf = np.ctypeslib.as_array(vp.contents.tf, (n,)).copy() if vp.contents.tf and n else None
    finally:
        lib.jsmf_vocab_free(vp)
    return words, df, tf


def store_stats(h: c_void_p) -> _lib.StoreStats:
    """The counters of the open store `h` (jsmf_store_stats)."""
    st = _lib.StoreStats()
    check(lib.jsmf_store_stats_get(h, byref(st)))
    return st


class Tokens:
    """The library's tokenizer (jsmf_tokenize) with its buffers, for text cut in Python
    exactly as the readers cut a line of a text file."""

    def __init__(self, min_len: int, max_len: int) -> None:
        self.tok = _lib.Tokenizer(min_len, max_len)
        self.cap = 0

    def _room(self, nbytes: int) -> None:
        if nbytes <= self.cap:
            return
        self.cap = max(nbytes, 2 * self.cap, 4096)
        ntok = self.cap // max(2, self.tok.min_len + 1) + 1 if self.tok.min_len > 1 else \
            self.cap // 2 + 1
        self.out = ctypes.create_string_buffer(self.cap)
        self.toks = (c_void_p * ntok)()
        self.lens = np.zeros(ntok, dtype=np.uint32)

    def __call__(self, text: bytes) -> List[bytes]:
        """The tokens of `text`."""
        self._room(len(text) + 1)
        n = lib.jsmf_tokenize(byref(self.tok), text, len(text), self.out, self.toks,
                              self.lens.ctypes.data)
        if n == 0:
            return []
        ends: List[int] = np.cumsum(self.lens[:n]).tolist()
        raw = self.out.raw[:ends[-1]]
        starts = [0] + ends[:-1]
        return [raw[a:b] for a, b in zip(starts, ends)]

    def of(self, doc: Any) -> List[bytes]:
        """A document's tokens: a string or bytes cut by the tokenizer, or a list of tokens
        taken as they are (str as UTF-8)."""
        if isinstance(doc, str):
            doc = doc.encode("utf-8", "surrogateescape")
        if isinstance(doc, (bytes, bytearray, memoryview)):
            return self(bytes(doc))
        return [t.encode("utf-8", "surrogateescape") if isinstance(t, str) else bytes(t)
                for t in doc]


def mem_bytes(mem: Union[int, str]) -> int:
    """A memory size: bytes, or text as --mem takes it ("512M", "2G": jsmf_mem_parse)."""
    if isinstance(mem, int):
        return mem
    v = c_uint64()
    check(lib.jsmf_mem_parse(b"mem", enc(mem), 0, byref(v)))
    return v.value


_libc = ctypes.CDLL(None)
_libc.free.argtypes = [c_void_p]


def libc_free(p: Any) -> None:
    """free() what the library allocated for the caller (jsmf_store_inputs_get's array)."""
    _libc.free(ctypes.cast(p, c_void_p))


def store_inputs(h: c_void_p) -> List[_lib.StoreInput]:
    """Copies of the input records of the open store `h`."""
    recs = POINTER(_lib.StoreInput)()
    n = c_uint32()
    check(lib.jsmf_store_inputs_get(h, byref(recs), byref(n)))
    try:
        return [_lib.StoreInput.from_buffer_copy(recs[i]) for i in range(n.value)]
    finally:
        libc_free(recs)


def u32_arg(value: Any, what: str) -> int:
    """An unsigned 32-bit option (ctypes would wrap a negative or larger one silently)."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or \
            not 0 <= value <= 0xFFFFFFFF:
        raise ValueError("%s must be an integer from 0 to 2^32 - 1, not %r" % (what, value))
    return int(value)


def fields(s: Any, skip: Sequence[str] = ()) -> Dict[str, Any]:
    """The fields of ctypes struct `s` as a dict, its reserve and `skip` left out."""
    return {f: getattr(s, f) for f, *_ in s._fields_ if f != "reserved" and f not in skip}


def c_strings(items: List[bytes]) -> "ctypes.Array[c_char_p]":
    """A C array of strings (const char *const *) of `items` (keep it alive while used)."""
    return (c_char_p * len(items))(*items)
