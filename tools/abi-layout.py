#!/usr/bin/env python3
"""abi-layout.py — the layout of the stable API's structs, for tests/cli/api_abi.sh.

  tools/abi-layout.py print INCLUDE_DIR         "major M", then "T size S" and "T.field OFFSET"
                                                for every struct the stable part declares
  tools/abi-layout.py check INCLUDE_DIR RECORD  every struct and field of RECORD (the layout of
                                                this MAJOR version's first release) at its size
                                                and offset, each difference named; exit 1 on any

Stable: declared outside `#ifdef JSMF_ADVANCED` (include/jsmf.h, "Stable and advanced"); a
program printing sizeof and offsetof is compiled without JSMF_ADVANCED. Fields added since
RECORD are fine (they took words from a reserve: the sizes say so); a field moved, a struct
grown or shrunk, or a struct or field gone is a break of the ABI, which needs a new MAJOR
version and a new record."""
import glob
import os
import re
import subprocess
import sys
import tempfile


def stable_code(path):
    """The header's text outside #ifdef JSMF_ADVANCED blocks, comments dropped."""
    text = re.sub(r'/\*.*?\*/', ' ', open(path).read(), flags=re.S)
    out, depth, adv = [], 0, None
    for line in text.split("\n"):
        s = line.strip()
        if s.startswith("#if"):
            depth += 1
            if adv is None and re.match(r"#ifdef\s+JSMF_ADVANCED\b", s):
                adv = depth
            continue
        if s.startswith("#endif"):
            if adv == depth:
                adv = None
            depth -= 1
            continue
        if adv is None:
            out.append(line)
    return "\n".join(out)


def fields(body):
    """Field names of a struct body, in order."""
    names = []
    for decl in body.split(";"):
        decl = " ".join(decl.split())
        if not decl:
            continue
        m = re.search(r"\(\s*\*\s*(\w+)\s*\)", decl)
        if m:  # a function pointer
            names.append(m.group(1))
            continue
        for part in decl.split(","):
            part = re.sub(r"\[.*?\]", "", part).strip()
            m = re.search(r"(\w+)\s*$", part)
            if m:
                names.append(m.group(1))
    return names


def structs(inc):
    out = []
    for h in sorted(glob.glob(os.path.join(inc, "*.h"))):
        code = stable_code(h)
        for m in re.finditer(r"typedef struct (jsmf_\w+) \{(.*?)\} \1;", code, re.S):
            out.append((os.path.basename(h), m.group(1), fields(m.group(2))))
    return out


def major(inc):
    text = open(os.path.join(inc, "jsmf.h")).read()
    return int(re.search(r"#define JSMF_VERSION_MAJOR (\d+)", text).group(1))


def layout(inc):
    """[(key, value)] as compiled: ("T size", S), ("T.f", OFFSET)."""
    st = structs(inc)
    headers = sorted({h for h, _, _ in st})
    src = ["#include <stddef.h>", "#include <stdio.h>"] + ['#include "%s"' % h for h in headers]
    src.append("int main(void) {")
    keys = []
    for _, name, fs in st:
        src.append('printf("%%zu\\n", sizeof(%s));' % name)
        keys.append("%s size" % name)
        for f in fs:
            src.append('printf("%%zu\\n", offsetof(%s, %s));' % (name, f))
            keys.append("%s.%s" % (name, f))
    src.append("return 0; }")
    with tempfile.TemporaryDirectory() as d:
        c, exe = os.path.join(d, "layout.c"), os.path.join(d, "layout")
        with open(c, "w") as f:
            f.write("\n".join(src) + "\n")
        subprocess.run(["cc", "-std=c11", "-I", inc, "-o", exe, c], check=True)
        got = subprocess.run([exe], capture_output=True, text=True, check=True).stdout.split()
    return list(zip(keys, map(int, got)))


def main():
    mode, inc = sys.argv[1], sys.argv[2]
    if mode == "print":
        print("major %d" % major(inc))
        for k, v in layout(inc):
            print(k, v)
        return 0
    rec = open(sys.argv[3]).read().split("\n")
    want_major = int(rec[0].split()[1])
    if want_major != major(inc):
        print("%s records major %d, include/ is major %d: record this version's layout "
              "(tools/abi-layout.py print include > %s)" % (sys.argv[3], want_major, major(inc),
                                                            sys.argv[3]))
        return 1
    have = dict(layout(inc))
    bad = 0
    for line in rec[1:]:
        if not line.strip():
            continue
        k, v = line.rsplit(" ", 1)
        if k.endswith(".reserved"):  # a reserve shrinks, its start moves, as fields take it
            continue
        if k not in have:
            print("%s: gone (recorded at %s)" % (k, v))
            bad += 1
        elif have[k] != int(v):
            print("%s: %d, recorded %s" % (k, have[k], v))
            bad += 1
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
