"""test_io_vocab.py — 'jsmf vocab' curation against counts computed here independently (regex
tokenizer, Python sets): stopwords, --min-df, --max-df-frac, --max-words, --min-doc-len,
--min-word-len; the same vocabulary from text, .zst, stdin, UCI and LDA-C versions of a corpus."""
import os
import random
import re
import subprocess
import sys
import tempfile

JSMF = os.environ.get("JSMF", "build/jsmf")
failures = 0


def check(cond, what):
    global failures
    if not cond:
        failures += 1
        print("FAIL:", what, file=sys.stderr)


def run(args, stdin=None):
    p = subprocess.run([JSMF] + args, input=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    return p.returncode, p.stdout, p.stderr


def words_only(out):
    """A vocabulary file without its comment lines (the rule jsmf vocab writes first)."""
    return b"".join(l for l in out.splitlines(True) if not l.startswith(b"#"))


TOKEN = re.compile(rb"[A-Za-z\x80-\xff]+")


def tokenize(line, min_len=3, max_len=64):
    return [t.lower() for t in TOKEN.findall(line) if min_len <= len(t) <= max_len]


def expected(docs, stop, min_df, max_df_frac, max_words, min_doc_len, min_len=3, max_len=64):
    df, tf, m = {}, {}, 0
    for line in docs:
        toks = [t for t in tokenize(line, min_len, max_len) if t not in stop]
        if len(toks) < min_doc_len:
            continue
        m += 1
        for t in toks:
            tf[t] = tf.get(t, 0) + 1
        for t in set(toks):
            df[t] = df.get(t, 0) + 1
    kept = [w for w in df if df[w] >= min_df and (max_df_frac >= 1 or df[w] <= max_df_frac * m)]
    kept.sort(key=lambda w: (-df[w], w))
    if max_words:
        kept = kept[:max_words]
    return b"".join(b"%s\t%d\t%d\n" % (w, df[w], tf[w]) for w in kept)


def make_corpus(rng):
    common = [b"alpha", b"Beta", b"gamma", b"delta", b"caf\xc3\xa9", b"epsilon", b"zeta"]
    rare = [b"omega%s" % bytes([97 + i]) for i in range(20)] + [b"rho", b"tau", b"phi"]
    # long words sharing their first 24 bytes (the word table keeps 24 inline), some over 64
    rare += [b"x" * 24 + b"tail" + bytes([97 + i]) * (i + 1) for i in range(6)]
    rare += [b"Y" * 23 + b"z", b"y" * 24, b"y" * 25, b"w" * 70, b"w" * 71]
    stops = [b"the", b"and", b"of", b"with"]
    short = [b"ab", b"x", b"42", b"a-b"]
    docs = []
    for d in range(120):
        n = rng.choice([0, 1, 2, 3, 4, 6, 10, 20, 40])
        words = []
        for _ in range(n):
            r = rng.random()
            pool = common if r < 0.5 else rare if r < 0.7 else stops if r < 0.9 else short
            words.append(rng.choice(pool))
        if d % 3 == 0:
            words.append(b"everywhere")  # in a third of documents: kept at 0.5, dropped at 0.3
        if d % 10 == 0:
            words += [b"Ubiquitous"] * 2
        sep = [b" ", b", ", b"; ", b" -- ", b"\t"]
        docs.append(b"".join(w + rng.choice(sep) for w in words).rstrip())
    # words at the thresholds: in exactly 1, 2, 3, 5 and 6 long (always counted) documents
    for k in range(6):
        words = [rng.choice(common) for _ in range(10)]
        words += [w for w, n in ((b"once", 1), (b"twice", 2), (b"thrice", 3), (b"fivefold", 5),
                                 (b"sixfold", 6)) if k < n]
        rng.shuffle(words)
        docs.insert(rng.randrange(len(docs)), b" ".join(words))
    return docs


def main():
    rng = random.Random(20261123)
    docs = make_corpus(rng)
    tmp = tempfile.mkdtemp(prefix="test_io_vocab.")
    text = os.path.join(tmp, "corpus.txt")
    with open(text, "wb") as f:
        f.write(b"\n".join(docs) + b"\n")
    stopfile = os.path.join(tmp, "stop.txt")
    with open(stopfile, "wb") as f:
        f.write(b"# my stopwords\nthe\nAND\nof\nwith\n")
    stop = {b"the", b"and", b"of", b"with"}

    cases = [
        (["--min-df", "2", "--max-df-frac", "0.5", "--min-doc-len", "3"], (2, 0.5, 0, 3, 3)),
        (["--min-df", "1", "--max-df-frac", "0.3", "--min-doc-len", "0"], (1, 0.3, 0, 0, 3)),
        (["--min-df", "3", "--max-df-frac", "1", "--max-words", "4"], (3, 1.0, 4, 5, 3)),
        (["--min-df", "1", "--max-df-frac", "1", "--min-word-len", "1", "--min-doc-len", "1"],
         (1, 1.0, 0, 1, 1)),
        ([], (5, 0.5, 0, 5, 3)),  # the defaults
        (["--min-df", "1", "--max-df-frac", "1", "--max-word-len", "200"], (1, 1.0, 0, 5, 3, 200)),
    ]
    for args, params in cases:
        min_df, frac, max_words, min_doc_len, min_len = params[:5]
        max_len = params[5] if len(params) > 5 else 64
        want = expected(docs, stop, min_df, frac, max_words, min_doc_len, min_len, max_len)
        rc, out, err = run(["vocab", text, "-o", "-", "--stopwords", stopfile, "-q"] + args)
        check(rc == 0, "vocab %s exit %d: %s" % (args, rc, err))
        rule = b"# jsmf-rule: min-df=%d max-df-frac=%g max-words=%d stopwords=list\n" % (
            min_df, frac, max_words)
        check(out.startswith(rule), "vocab %s: the rule line %r, want %r" % (args, out[:80], rule))
        out = words_only(out)
        check(out == want, "vocab %s:\n got %r\nwant %r" % (args, out[:300], want[:300]))
        check(len(want) > 0, "case %s has words" % args)

    # -o FILE equals -o -, and file / .zst / stdin agree
    base = ["--min-df", "2", "--stopwords", stopfile, "-q"]
    rc, ref, _ = run(["vocab", text, "-o", "-"] + base)
    out_file = os.path.join(tmp, "v.txt")
    rc, _, err = run(["vocab", text, "-o", out_file] + base)
    check(rc == 0 and open(out_file, "rb").read() == ref, "-o FILE equals -o -")
    subprocess.run(["zstd", "-q", "-f", text, "-o", text + ".zst"], check=True)
    rc, z, _ = run(["vocab", text + ".zst", "-o", "-"] + base)
    check(z == ref, ".zst gives the same vocabulary")
    rc, s, _ = run(["vocab", "-", "-o", "-"] + base, stdin=open(text + ".zst", "rb").read())
    check(s == ref, "stdin (zstd) gives the same vocabulary")
    rc, s, _ = run(["vocab", "-", "-o", "-"] + base, stdin=open(text, "rb").read())
    check(s == ref, "stdin gives the same vocabulary")
    # two inputs count as one corpus
    half = len(docs) // 2
    for name, part in (("a.txt", docs[:half]), ("b.txt", docs[half:])):
        with open(os.path.join(tmp, name), "wb") as f:
            f.write(b"\n".join(part) + b"\n")
    rc, two, _ = run(["vocab", os.path.join(tmp, "a.txt"), os.path.join(tmp, "b.txt"), "-o", "-"] + base)
    check(two == ref, "two inputs equal their concatenation")

    # the thread count changes nothing: not the vocabulary, not the counts reported
    outs = [run(["vocab", text, "-o", "-", "--threads", str(k)] + base[:-1]) for k in (1, 2, 3, 5)]
    check(all(o[0] == 0 and o[1] == outs[0][1] and o[2] == outs[0][2] for o in outs),
          "--threads 1, 2, 3, 5 agree")
    check(outs[0][1] == ref, "--threads 1 equals the default")
    # binary garbage is refused whatever the thread count, naming file, line and byte
    garbage = os.path.join(tmp, "garbage.txt")
    with open(garbage, "wb") as f:
        f.write(b"one good line here\nsecond line\x00with a NUL\n")
    for k in ("1", "2"):
        rc, _, err = run(["vocab", garbage, "-o", "-", "--threads", k])
        check(rc == 1 and b"garbage.txt:2: binary data (NUL byte) at byte 30" in err,
              "binary garbage with %s threads: %d %r" % (k, rc, err))

    # UCI and LDA-C of the same documents (words in first-seen order, ids 1-based / 0-based)
    ids, words, bags = {}, [], []
    for line in docs:
        bag = {}
        for t in tokenize(line):
            if t not in ids:
                ids[t] = len(words)
                words.append(t)
            bag[ids[t]] = bag.get(ids[t], 0) + 1
        bags.append(bag)
    with open(os.path.join(tmp, "vocab.c.txt"), "wb") as f:
        f.write(b"".join(w + b"\n" for w in words))
    nnz = sum(len(b) for b in bags)
    with open(os.path.join(tmp, "docword.c.txt"), "wb") as f:
        f.write(b"%d\n%d\n%d\n" % (len(bags), len(words), nnz))
        for d, bag in enumerate(bags):
            for i in sorted(bag, reverse=True):
                f.write(b"%d %d %d\n" % (d + 1, i + 1, bag[i]))
    with open(os.path.join(tmp, "c.ldac"), "wb") as f:
        for bag in bags:
            f.write(b"%d%s\n" % (len(bag), b"".join(b" %d:%d" % (i, c) for i, c in bag.items())))
    subprocess.run(["zstd", "-q", "-f", os.path.join(tmp, "docword.c.txt")], check=True)
    for inp, extra in ((["docword.c.txt"], []), (["docword.c.txt.zst"], []),
                       (["c.ldac"], ["--uci-vocab", os.path.join(tmp, "vocab.c.txt")])):
        rc, out, err = run(["vocab", os.path.join(tmp, inp[0]), "-o", "-"] + base + extra)
        check(rc == 0 and out == ref, "%s gives the text vocabulary (%d): %s" % (inp[0], rc, err))
    # LDA-C without names: words are the ids (so no stopword can match: compare without any)
    nostop = ["--min-df", "2", "--stopwords", "none", "-q"]
    rc, out, _ = run(["vocab", os.path.join(tmp, "c.ldac"), "-o", "-"] + nostop)
    rc, ref2, _ = run(["vocab", text, "-o", "-"] + nostop)
    named = [b"%d\t%s" % (ids[l.split(b"\t")[0]], l.split(b"\t", 1)[1])
             for l in words_only(ref2).splitlines()]
    got = [l for l in words_only(out).splitlines()]
    check(len(got) > 0 and sorted(got) == sorted(named), "LDA-C without vocabulary names words by id")

    # the built-in English list removes common function words
    rc, out, _ = run(["vocab", text, "-o", "-", "--min-df", "1", "--stopwords", "en", "-q",
                      "--max-df-frac", "1"])
    got = {l.split(b"\t")[0] for l in out.splitlines()}
    check(rc == 0 and b"the" not in got and b"with" not in got and b"alpha" in got, "--stopwords en")
    rc, out, _ = run(["vocab", text, "-o", "-", "--min-df", "1", "--stopwords", "none", "-q",
                      "--max-df-frac", "1"])
    check(b"the\t" in out, "--stopwords none keeps 'the'")

    # errors: bad input names file and line; bad options exit 2
    bad = os.path.join(tmp, "docword.bad.txt")
    with open(bad, "wb") as f:
        f.write(b"2\n3\n2\n1 1 1\n2 9 1\n")
    with open(os.path.join(tmp, "vocab.bad.txt"), "wb") as f:
        f.write(b"a\nb\nc\n")
    rc, _, err = run(["vocab", bad, "-o", "-"])
    check(rc == 1 and b"docword.bad.txt:5:" in err and b"wordID 9" in err, "bad UCI: %r" % err)
    for args in (["--min-df", "x"], ["--format", "csv"], ["--bogus"], ["--max-df-frac", "0"]):
        rc, _, err = run(["vocab", text, "-o", "-"] + args)
        check(rc == 2, "usage error %s exits 2 (%d)" % (args, rc))
    rc, out, _ = run(["vocab", "--help"])
    check(rc == 0 and b"usage: jsmf vocab" in out, "--help")
    rc, _, err = run(["vocab", os.path.join(tmp, "missing.txt"), "-o", "-"])
    check(rc == 1 and b"missing.txt" in err, "missing input exits 1 naming it")

    if failures == 0:
        subprocess.run(["rm", "-rf", tmp])
    print("%d failures" % failures)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
