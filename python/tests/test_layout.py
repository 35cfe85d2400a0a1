"""test_layout.py — every ctypes struct of the package has the C compiler's layout: a C
program prints sizeof and offsetof of each field of include/'s structs, compared here."""
import ctypes
import os
import subprocess

from jsmf import _lib
from conftest import ROOT


def test_struct_layouts(tmp_path):
    lines = ["#define JSMF_ADVANCED", '#include "jsmf_ingest.h"', '#include "jsmf_fit.h"', '#include "jsmf_fdm.h"',
             '#include "jsmf_eval.h"', '#include "jsmf_refine.h"', "#include <stddef.h>",
             "int main(void) {"]
    expect = []
    for cls, cname in _lib.C_NAMES.items():
        lines.append('printf("%%zu\\n", sizeof(%s));' % cname)
        expect.append(("sizeof", cname, ctypes.sizeof(cls)))
        for f, _t in cls._fields_:
            cf = _lib.C_FIELD.get(f, f)
            lines.append('printf("%%zu\\n", offsetof(%s, %s));' % (cname, cf))
            expect.append((cname, f, getattr(cls, f).offset))
    lines.append("return 0; }")
    src = tmp_path / "layout.c"
    src.write_text("\n".join(lines))
    exe = tmp_path / "layout"
    subprocess.run(["cc", "-I", os.path.join(ROOT, "include"), "-o", str(exe), str(src)],
                   check=True)
    got = [int(x) for x in subprocess.run([str(exe)], capture_output=True, check=True,
                                          text=True).stdout.split()]
    bad = [(e, g) for e, g in zip(expect, got) if e[2] != g]
    assert len(got) == len(expect)
    assert not bad, bad


def test_every_struct_is_checked():
    # the options and results a caller allocates must all be in the table above
    assert len(_lib.C_NAMES) >= 30
