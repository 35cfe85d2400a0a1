"""test_progress.py — the progress bars of long calls (jsmf._progress)."""
from jsmf import _progress


def test_progress_bars_never_move_backwards(monkeypatch):
    """A step whose parts come with their own totals (rectify: 20, then 13, then 100) gets a
    bar per part: no bar's total or count goes back within a call (issue 57, item 5)."""
    bars = []

    class FakeBar:
        def __init__(self, desc, total, unit, leave, file):
            self.desc, self.total, self.n, self.totals, self.counts = desc, total, 0.0, [], []
            bars.append(self)

        def update(self, d):
            assert d >= 0
            self.n += d
            self.counts.append(self.n)
            self.totals.append(self.total)

        def close(self):
            pass

    class FakeTqdm:
        tqdm = FakeBar

    monkeypatch.setattr(_progress, "_tqdm", FakeTqdm)
    r = _progress.make_reporter(True)
    for total in (20, 13, 100):
        for done in range(0, total + 1, 3):
            r("rectify", done, total, "products")
    r("anchors", 1, 0, "")
    r("anchors", 2, 0, "")
    r.close()
    assert [(b.desc, b.total) for b in bars] == [("rectify", 20), ("rectify", 13),
                                                  ("rectify", 100), ("anchors", None)]
    for b in bars:
        assert b.counts == sorted(b.counts) and len(set(b.totals)) == 1
        assert b.total is None or b.n <= b.total
