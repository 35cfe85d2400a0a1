"""_progress.py — progress of long calls (a callback, or tqdm when installed) and Ctrl-C.

Every long call gets a progress callback from here, also when the user asked for no progress:
the callback is where a KeyboardInterrupt raised during the C call surfaces (Python runs
signal handlers when the callback's Python code runs), and it answers by asking the library to
stop (jsmf_cancel, or fdm's stop flag); the call then returns JSMF_EINTR with its state at a
checkpoint, and the interrupt is raised again once it has returned."""
from __future__ import annotations

import ctypes
import sys
from typing import Any, Callable, Optional, Tuple, Union

from . import _lib

try:
    import tqdm as _tqdm
except ImportError:  # pragma: no cover - python3-tqdm is optional
    _tqdm = None

# A reporter: f(what, done, total, unit), what and unit the step's and its unit's names.
Reporter = Callable[[str, float, float, str], Any]
# What a long call's `progress=` takes: True (tqdm when installed), False or None, a reporter.
ProgressArg = Union[bool, None, Reporter]


class _Tqdm:
    """One tqdm bar per part of a step: a new bar where the step's name or unit changes, and
    where within one step its total changes or its count goes back (the library reports a
    step's parts, e.g. rectify's eigendecomposition, then its steps, each with its own total),
    so that no bar's total or count ever moves backwards."""

    def __init__(self) -> None:
        self.bar: Any = None
        self.key: Optional[Tuple[str, str]] = None

    def _new_part(self, key: Tuple[str, str], done: float, total: float) -> bool:
        if key != self.key or self.bar is None:
            return True
        if total and self.bar.total and total != self.bar.total:
            return True
        return bool(done < self.bar.n)

    def __call__(self, what: str, done: float, total: float, unit: str) -> None:
        key = (what, unit)
        if self._new_part(key, done, total):
            self.close()
            self.key = key
            self.bar = _tqdm.tqdm(desc=what, total=total or None, unit=unit or "it",
                                  leave=False, file=sys.stderr)
        elif total and not self.bar.total:
            self.bar.total = total
        self.bar.update(max(0.0, done - self.bar.n))

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar, self.key = None, None


def make_reporter(progress: ProgressArg) -> Optional[Reporter]:
    """progress: True (tqdm when installed, else nothing), False/None (nothing), or a function
    f(what, done, total, unit)."""
    if progress is True:
        return _Tqdm() if _tqdm is not None else None
    if progress in (False, None):
        return None
    if not callable(progress):
        raise TypeError("progress must be True, False or a function(what, done, total, unit)")
    return progress


class Guard:
    """The callback of one long call and what it caught: `with Guard(progress) as g: rc =
    lib.call(..., g.fn, None, ...); g.check(rc)`."""

    def __init__(self, progress: ProgressArg = None) -> None:
        self.report = make_reporter(progress)
        self.caught: Optional[BaseException] = None
        self.stop = ctypes.c_int(0)  # fdm's stop flag (jsmf_fdm_opts.stop)
        self.fn = _lib.PROGRESS_FN(self._called)

    def _called(self, _arg: Any, what: bytes, done: float, total: float, unit: bytes) -> None:
        try:
            if self.caught is None and self.report is not None:
                self.report(what.decode("utf-8", "replace"), done, total,
                            unit.decode("utf-8", "replace"))
        except BaseException as e:  # KeyboardInterrupt, or the user's callback failing
            self.interrupt(e)

    def interrupt(self, e: BaseException) -> None:
        if self.caught is None:
            self.caught = e
        self.stop.value = 1
        _lib.lib.jsmf_cancel(1)

    def tell(self, what: str, done: float, total: float, unit: str) -> None:
        """Progress of work the package drives itself (documents fed from Python)."""
        if self.report is not None:
            self.report(what, done, total, unit)

    def __enter__(self) -> Guard:
        _lib.lib.jsmf_cancel(0)
        return self

    def __exit__(self, *exc: object) -> None:
        _lib.lib.jsmf_cancel(0)
        close = getattr(self.report, "close", None)
        if close:
            close()

    def check(self, rc: int) -> None:
        """After the call: the interrupt or the callback's exception it caught, else the
        library's error for rc."""
        if self.caught is not None:
            if isinstance(self.caught, KeyboardInterrupt) and rc == _lib.EINTR:
                raise _lib.error_for(rc) from None
            raise self.caught
        _lib.check(rc)
