"""test_typing.py — the package is typed: mypy (Debian's python3-mypy, which
tools/install-deps.sh installs) passes over python/jsmf with the settings of
python/pyproject.toml (every function annotated, every ignore still needed), and the installed
package carries py.typed (PEP 561) so that mypy reads its hints in a caller's code."""
import os

import pytest

import jsmf
from conftest import ROOT


def test_mypy_passes_over_the_package():
    try:
        from mypy import api
    except ImportError:
        pytest.skip("mypy is not installed (Debian's python3-mypy; tools/install-deps.sh "
                    "installs it): the type hints are not checked")
    out, err, rc = api.run(["--config-file", os.path.join(ROOT, "python", "pyproject.toml"),
                            "--cache-dir", os.devnull, os.path.join(ROOT, "python", "jsmf")])
    assert rc == 0, out + err
    assert out.startswith("Success"), out


def test_installed_package_is_marked_typed():
    assert os.path.exists(os.path.join(os.path.dirname(jsmf.__file__), "py.typed"))
