"""conftest.py — shared fixtures: the repository root, the corpora, the CLI for comparisons
(called by path: jsmf itself is kept off PATH), small stores made once per session."""
import os
import shutil
import subprocess

import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
BUILD = os.environ.get("BUILD", "build")
BUILD = BUILD if os.path.isabs(BUILD) else os.path.join(ROOT, BUILD)
CLI = os.path.join(BUILD, "jsmf")
CORPORA = os.environ.get("JSMF_CORPORA") or os.path.join(ROOT, "..", "shared", "corpora")
if not os.path.isdir(CORPORA):
    CORPORA = "/work/shared/corpora"
KJV = os.path.join(CORPORA, "kjv")


def cli(*args, **kw):
    """The program, by path, for the outputs the package must equal."""
    return subprocess.run([CLI] + [str(a) for a in args], check=True, capture_output=True, **kw)


@pytest.fixture(scope="session")
def kjv_text(tmp_path_factory):
    """kjv.txt decompressed (documents as the lines of a plain file) and its vocabulary."""
    if not os.path.isdir(KJV):
        pytest.skip("no kjv corpus at %s" % KJV)
    d = tmp_path_factory.mktemp("kjv")
    txt = d / "kjv.txt"
    with open(txt, "wb") as f:
        subprocess.run(["zstd", "-dc", os.path.join(KJV, "kjv.txt.zst")], stdout=f, check=True)
    return txt, os.path.join(KJV, "vocab.kjv.txt")


@pytest.fixture(scope="session")
def kjv_store(tmp_path_factory, kjv_text):
    """A kjv store ingested by the CLI (from the text file and the corpus's vocabulary)."""
    txt, vocab = kjv_text
    s = tmp_path_factory.mktemp("kjvstore") / "store"
    cli("ingest", s, txt, "--vocab", vocab, "--quiet")
    return s
