"""jsmf — topics from word co-occurrence (the Rectified Anchor Word fit, FDM) over libjsmf.so,
in-process. Start at examples/notebook.py; README.md, "Python".

    import jsmf
    store = jsmf.Store("store")
    store.ingest(lines, vocabulary="vocab.txt")      # any iterable of documents, streamed
    model = jsmf.fit(store, k=20)                      # B, A, alpha, anchors: numpy
    model = jsmf.fit(store, k=20, refine=80)           # refined over the store's documents
    model.top_words(10); model.infer(["some text"]); model.save("model")
"""
from typing import Any

from ._lib import (JsmfError, NotFoundError, ExistsError, FormatError, InvalidError,
                   MismatchError, Interrupted, version, LIBRARY_PATH)
from .store import Store, count_vocabulary, stopwords
from .model import Model, fit, fdm, refine, load, diff

__all__ = ["Store", "count_vocabulary", "stopwords", "Model", "fit", "fdm", "refine", "load", "diff",
           "JsmfError", "NotFoundError",
           "ExistsError", "FormatError", "InvalidError", "MismatchError", "Interrupted",
           "version", "LIBRARY_PATH", "JSMF"]
# the package's version is the library's: a wheel's is read from include/jsmf.h when it is
# built with its library (python/backend/jsmf_backend.py), and this is the loaded library's
__version__ = version().split()[0]


def __getattr__(name: str) -> Any:
    # the one import inside a function: the sklearn estimator, imported on first use, since
    # scikit-learn is optional and slow to import (python/tests/test_imports.py allows it)
    if name == "JSMF":
        from .sklearn import JSMF
        return JSMF
    raise AttributeError(name)
