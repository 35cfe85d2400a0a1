#!/usr/bin/env python3
"""api-symbols.py — the public API as include/ declares it, for tests/cli/api_exports.sh.

  tools/api-symbols.py declared INCLUDE_DIR   every function a header of INCLUDE_DIR declares
  tools/api-symbols.py unmarked INCLUDE_DIR   "HEADER: NAME" for each declared without JSMF_API

Comments are dropped first, so a name a comment mentions is no declaration; a function pointer
type ((*name_fn)(...)) is none either."""
import glob
import os
import re
import sys


def code(path):
    text = open(path).read()
    text = re.sub(r'/\*.*?\*/', ' ', text, flags=re.S)
    return re.sub(r'//[^\n]*', ' ', text)


def declarations(path):
    """(name, marked) for each function declared in the header at `path`."""
    out = []
    # a declaration is a run of type words ending in the name and "(", after ';', '}' or a
    # preprocessor line; JSMF_API among the words marks it
    for stmt in re.split(r'[;{}]|^\s*#[^\n]*$', code(path), flags=re.M):
        if stmt is None:
            continue
        m = re.match(r'\s*((?:[A-Za-z_][A-Za-z0-9_]*[\s*]+)+?)([A-Za-z_][A-Za-z0-9_]*)\s*\(', stmt)
        if not m or m.group(1).split()[0] in ('typedef', 'return', 'struct', 'enum'):
            continue
        if re.match(r'\s*\(\s*\*', stmt[m.end(2):]):
            continue
        out.append((m.group(2), 'JSMF_API' in m.group(1).split()))
    return out


def main():
    mode, inc = sys.argv[1], sys.argv[2]
    for h in sorted(glob.glob(os.path.join(inc, '*.h'))):
        for name, marked in declarations(h):
            if mode == 'declared':
                print(name)
            elif not marked:
                print('%s: %s' % (os.path.basename(h), name))


if __name__ == '__main__':
    main()
