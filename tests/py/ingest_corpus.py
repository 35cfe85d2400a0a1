"""ingest_corpus.py — shared by the ingest tests: a seeded random corpus written as text, UCI and
LDA-C, jsmf's tokenizer re-implemented, the dense numpy reference of C, and small helpers to run
jsmf and read its MatrixMarket export. Not a test itself (no test_ prefix)."""
import os
import random
import re
import subprocess

import numpy as np

JSMF = os.environ.get("JSMF", "build/jsmf")
TOKEN = re.compile(rb"[A-Za-z\x80-\xff]+")


def run(*args, ok=True, env=None, stdin=None, **kw):
    """Run jsmf with args; check the exit status when ok is True (or equals ok when an int)."""
    e = dict(os.environ)
    e.setdefault("JSMF_STORE_NOSYNC", "1")  # kill-safe; fsync per checkpoint would dominate
    e.setdefault("JSMF_TEST_SMALL_MEM", "1")  # --mem 1M: many checkpoint windows on small inputs
    if env:
        e.update(env)
    args = list(args)
    # these tests measure the rows' machinery (checkpoint windows, exact nnz, stdin repeats):
    # a store they make holds rows unless they say (formats/store.md "Documents")
    if (len(args) > 1 and args[0] == "ingest" and "--hold" not in args and
            not os.path.exists(os.path.join(str(args[1]), "data.mdb"))):
        args += ["--hold", "rows"]
    p = subprocess.run([JSMF] + [str(a) for a in args], capture_output=True, env=e, stdin=stdin, **kw)
    want = 0 if ok is True else ok
    if ok is not False and p.returncode != want:
        raise AssertionError("jsmf %s: exit %d (want %d)\n%s" % (
            " ".join(map(str, args)), p.returncode, want, p.stderr.decode(errors="replace")))
    return p


def tokenize(line):
    """jsmf_tokenize with the default settings: letter runs (and bytes >= 0x80), lowercased,
    3..64 bytes."""
    return [t.lower() for t in TOKEN.findall(line) if 3 <= len(t) <= 64]


def make_corpus(seed=7, n_vocab=120, n_oov=30, n_docs=300, max_len=40):
    """Words, the vocabulary (a subset), and documents as lines of text with mixed case,
    punctuation, out-of-vocabulary words, short and empty documents."""
    rnd = random.Random(seed)
    letters = "abcdefghijklmnopqrstuvwxyz"
    words = set()
    while len(words) < n_vocab + n_oov:
        words.add("".join(rnd.choice(letters) for _ in range(rnd.randint(3, 9))))
    words = sorted(words)
    rnd.shuffle(words)
    vocab, oov = words[:n_vocab], words[n_vocab:]
    weights = [1.0 / (i + 1) for i in range(len(words))]  # Zipf-like, shared over both
    lines = []
    for d in range(n_docs):
        n = rnd.choice([0, 1, 3, 4]) if d % 17 == 0 else rnd.randint(0, max_len)
        toks = rnd.choices(words, weights, k=n)
        out = []
        for t in toks:
            r = rnd.random()
            out.append(t.upper() if r < 0.05 else t.capitalize() if r < 0.1 else t)
            out.append(rnd.choice([" ", " ", " ", ", ", ". ", " - ", " 12 ", " a "]))
        lines.append("".join(out).strip())
    return vocab, lines


def counts(vocab, lines):
    """Per document: {id: count} over in-vocabulary tokens, and the OOV token count."""
    index = {w.encode(): i for i, w in enumerate(vocab)}
    docs = []
    for line in lines:
        h, oov = {}, 0
        for t in tokenize(line.encode()):
            if t in index:
                h[index[t]] = h.get(index[t], 0) + 1
            else:
                oov += 1
        docs.append((h, oov))
    return docs


def reference_c(n_words, docs, min_doc_len=5):
    """Dense C = (1/M) sum_m (h h^T - diag h) / (n (n - 1)) over documents with n >= min_doc_len."""
    C = np.zeros((n_words, n_words))
    M = 0
    for h, _ in docs:
        v = np.zeros(n_words)
        for i, c in h.items():
            v[i] = c
        n = v.sum()
        if n < max(2, min_doc_len):
            continue
        M += 1
        C += (np.outer(v, v) - np.diag(v)) / (n * (n - 1))
    return C / M, M


def write_text(path, lines):
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


def write_uci(dirname, name, vocab, docs, extra_words=()):
    """docword.NAME.txt + vocab.NAME.txt; the file's vocabulary is the store's plus extra words,
    in a different order, so ids must be mapped by word. Empty documents have no lines."""
    file_vocab = list(vocab) + list(extra_words)
    random.Random(3).shuffle(file_vocab)
    pos = {w: i for i, w in enumerate(file_vocab)}
    rows = []
    doc_id = 0
    for h, _ in docs:
        if not h:
            continue
        doc_id += 1
        for i in sorted(h, key=lambda i: pos[vocab[i]]):
            rows.append((doc_id, pos[vocab[i]] + 1, h[i]))
    with open(os.path.join(dirname, "vocab.%s.txt" % name), "w") as f:
        f.write("\n".join(file_vocab) + "\n")
    path = os.path.join(dirname, "docword.%s.txt" % name)
    with open(path, "w") as f:
        f.write("%d\n%d\n%d\n" % (doc_id, len(file_vocab), len(rows)))
        for r in rows:
            f.write("%d %d %d\n" % r)
    return path


def write_ldac(path, docs):
    with open(path, "w") as f:
        for h, _ in docs:
            if h:
                f.write("%d %s\n" % (len(h), " ".join("%d:%d" % (i, c) for i, c in sorted(h.items()))))


def read_mm(path, n_words):
    """A MatrixMarket 'coordinate real symmetric' export as a dense matrix."""
    with open(path) as f:
        header = f.readline()
        assert header.startswith("%%MatrixMarket matrix coordinate real symmetric"), header
        line = f.readline()
        while line.startswith("%"):
            line = f.readline()
        n, m, nnz = map(int, line.split())
        assert n == m == n_words, (n, m, n_words)
        C = np.zeros((n, n))
        k = 0
        for line in f:
            i, j, v = line.split()
            i, j = int(i) - 1, int(j) - 1
            assert i >= j, "upper-triangle entry in a symmetric export"
            C[i, j] = C[j, i] = float(v)
            k += 1
        assert k == nnz, (k, nnz)
    return C


def export_bytes(store, tmp, fmt="mm"):
    out = os.path.join(tmp, "export.%s" % fmt)
    run("export", store, "-o", out, "--format", fmt)
    with open(out, "rb") as f:
        return f.read()
