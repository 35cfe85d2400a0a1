"""test_imports.py — the package's modules import one another one way: the graph of their
imports has no cycle, and no function imports a sibling module lazily (the one
exception: jsmf.__getattr__ imports the sklearn estimator on first use, scikit-learn being
optional and slow to import)."""
import ast
import os

import jsmf

PKG = os.path.dirname(jsmf.__file__)
ALLOWED_LAZY = {("__init__", "__getattr__", "sklearn")}


def _modules():
    return sorted(f[:-3] for f in os.listdir(PKG) if f.endswith(".py"))


def _siblings(node, mods):
    """The package's modules an import node names (relative, or absolute through jsmf)."""
    if isinstance(node, ast.ImportFrom):
        if node.level == 0 and node.module != "jsmf" and not \
                (node.module or "").startswith("jsmf."):
            return set()
        base = (node.module or "").split(".")[-1] if node.module not in (None, "jsmf") else ""
        if base:
            return {base} & mods
        return {a.name for a in node.names} & mods  # from . import _lib
    if isinstance(node, ast.Import):
        return {a.name.split(".")[1] for a in node.names if a.name.startswith("jsmf.")} & mods
    if isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", "")) \
            in ("__import__", "import_module"):
        return {"<dynamic>"}
    return set()


def _scan():
    mods = set(_modules())
    graph, lazy = {}, []
    for m in mods:
        tree = ast.parse(open(os.path.join(PKG, m + ".py")).read())
        graph[m] = set()
        for node in tree.body:  # module level, including under try and if
            if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                for sub in ast.walk(node):
                    graph[m] |= _siblings(sub, mods)
        for fn in ast.walk(tree):
            if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                for sub in ast.walk(fn):
                    for s in _siblings(sub, mods):
                        if (m, fn.name, s) not in ALLOWED_LAZY:
                            lazy.append("%s.%s imports %s" % (m, fn.name, s))
                            graph[m].add(s)  # a cycle through a lazy import is one too
    return graph, lazy


def _cycle(graph):
    """A cycle of `graph` as a list of modules, or None."""
    state, path = {}, []

    def visit(m):
        state[m] = 1
        path.append(m)
        for n in sorted(graph.get(m, ())):
            if state.get(n) == 1:
                return path[path.index(n):] + [n]
            if not state.get(n):
                c = visit(n)
                if c:
                    return c
        state[m] = 2
        path.pop()
        return None
    for m in sorted(graph):
        if not state.get(m):
            c = visit(m)
            if c:
                return c
    return None


def test_imports_form_no_cycle():
    graph, _ = _scan()
    assert graph["store"] and graph["model"], graph  # the scan sees imports at all
    assert _cycle(graph) is None, ("cycle: " + " -> ".join(_cycle(graph)), graph)
    assert _cycle({"a": {"b"}, "b": {"a"}}) == ["a", "b", "a"]  # and would see one


def test_no_function_imports_a_sibling():
    _, lazy = _scan()
    assert not lazy, lazy
