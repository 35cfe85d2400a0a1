"""test_choices.py — every list of choices the package has is the library's and the CLI's:
FORMATS, HOLDS, RECTIFY, ANCHORS, RECOVER, DEVICES and REFINE_METHODS hold exactly the names the
library's name functions give (0, 1, ... up to the first NULL) at their values, and the names the
CLI lists for a bad value; a bad name is refused with the list. And format="items", a format
the package did not list while it kept its own table, for Store.ingest_files and Model.refine
as for 'jsmf ingest/refine --format items'."""
import random
import re
import subprocess

import numpy as np
import pytest

import jsmf
from jsmf import _lib, model, store
from conftest import CLI, cli

# (the table, the library's name function, a CLI command whose option takes the choice)
TABLES = [
    (store.FORMATS, "jsmf_format_name", ["ingest", "S", "F", "--format"]),
    (model.RECTIFY, "jsmf_fit_rectify_name", ["fit", "S", "-k", "2", "-o", "M", "--rectify"]),
    (model.ANCHORS, "jsmf_fit_anchors_name", ["fit", "S", "-k", "2", "-o", "M", "--anchors"]),
    (model.RECOVER, "jsmf_fit_recover_name", ["fit", "S", "-k", "2", "-o", "M", "--recover"]),
    (model.DEVICES, "jsmf_fdm_device_name", ["fdm", "S", "-k", "2", "-o", "M", "--device"]),
    (model.REFINE_METHODS, "jsmf_refine_method_name",
     ["refine", "M", "--corpus", "C", "-o", "O", "--method"]),
]


def _library_names(fn):
    """The names of fn(0), fn(1), ... up to the first NULL, by their values."""
    f = getattr(_lib.lib, fn)
    out, v = {}, 0
    while f(v) is not None:
        out[f(v).decode()] = v
        v += 1
    return out


def _cli_names(args):
    """The names the CLI lists when the option's value is none of them."""
    r = subprocess.run([CLI] + args + ["nosuch"], capture_output=True, text=True)
    assert r.returncode != 0
    m = re.search(r"must be (.*), not 'nosuch'", r.stderr)
    assert m, r.stderr
    return set(re.split(r", | or ", m.group(1)))


@pytest.mark.parametrize("table,fn,args", TABLES, ids=[t[1] for t in TABLES])
def test_tables_are_the_library_and_the_cli(table, fn, args):
    assert table == _library_names(fn)
    assert set(table) == _cli_names(args)


def test_holds_are_the_library_and_the_cli():
    v = 1
    while _lib.lib.jsmf_store_hold_name(v).decode() != "?":
        assert store.HOLDS[_lib.lib.jsmf_store_hold_name(v).decode()] == v
        v += 1
    assert len(store.HOLDS) == v and store.HOLDS[None] == 0  # None: the library's default
    assert {k or "default" for k in store.HOLDS} == _cli_names(["ingest", "S", "F", "--hold"])


def test_a_bad_name_lists_the_choices(tmp_path):
    with pytest.raises(ValueError, match="rectify must be ap, dr, none or compressed, not 'x'"):
        jsmf.fit(tmp_path / "none", 5, rectify="x", progress=False)
    with pytest.raises(ValueError, match="format must be auto, text, .*items"):
        jsmf.Store(tmp_path / "s").ingest_files([tmp_path / "f"], format="x", progress=False)


@pytest.fixture(scope="module")
def baskets(tmp_path_factory):
    """Baskets of item ids (case, digits and punctuation kept) from three groups, the CLI's
    store of them ('jsmf ingest --format items', counting its vocabulary) and its fit."""
    d = tmp_path_factory.mktemp("items")
    rng = random.Random(7)
    groups = [["SKU-%d" % i for i in range(15)], ["Milk.%d" % i for i in range(15)],
              ["x_%02d!" % i for i in range(15)]]
    with open(d / "baskets.txt", "w") as f:
        for i in range(400):
            items = rng.sample(groups[i % 3], rng.randint(4, 8)) + \
                rng.sample(groups[(i + 1) % 3], rng.randint(0, 2))
            f.write(" ".join(items) + "\n")
    cli("ingest", d / "cli", d / "baskets.txt", "--format", "items", "--quiet")
    cli("fit", d / "cli", "-k", 3, "-o", d / "fit", "--threads", 1, "--quiet")
    return d


def test_items_ingest_files_equals_cli(baskets):
    st = jsmf.Store(baskets / "py")
    r = st.ingest_files([baskets / "baskets.txt"], format="items", progress=False)
    assert r["docs"] > 300
    a = jsmf.Store(baskets / "cli")
    assert list(st.vocabulary()[0]) == list(a.vocabulary()[0])
    assert "SKU-0" in set(st.vocabulary()[0]) and "x_00!" in set(st.vocabulary()[0])
    assert st.check()["digest"] == a.check()["digest"]


def test_items_refine_equals_cli(baskets, tmp_path):
    cli("refine", baskets / "fit", "--corpus", baskets / "baskets.txt", "--format", "items",
        "-o", tmp_path / "cli", "--threads", 1, "--quiet")
    m = jsmf.load(baskets / "fit").refine(baskets / "baskets.txt", format="items", threads=1)
    for f in ("B", "A"):
        np.testing.assert_array_equal(getattr(m, f), np.load(tmp_path / "cli" / ("%s.npy" % f)))
    assert m.report_["dropped"] > 0  # baskets of fewer than 5 items, as the CLI leaves them out
