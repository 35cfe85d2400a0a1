"""test_ingest_grow.py — a vocabulary that grows (formats/store.md, "Growth"). A planted corpus
of six nights where one word ('zephyr', topic 0) occurs at a constant rate but is not in the
first vocabulary: the store counts it while it is pending and admits it at the start of the
third ingest, whose pre-pass over the night's file makes its df pass --min-df, so that night's
documents count its pairs. Checks: C equals a numpy reference recomputed from the raw documents
with the same admission rule; the late word's normalised row agrees with a one-shot store's
within 5% relative l1, the two fits' topics within mean l1 0.05; old ids are kept; equal stores
for threads 1 and 2, a small --mem, a pre-pass that counts in parts, mpirun -np 2 (skipped
without it; also killed after the admission), kills in a checkpoint, in the pre-pass, in the
admission, after it and in the night's checkpoint; stdin (read once) admits at the command's
end, and a kill inside that admission is repaired by the rerun; a word so admitted has a zero
row (export, fit, fdm) until the next night counts its pairs; a frozen store, bad rules and a
vocabulary file with a bad rule line give clear errors and change nothing; merge of grown stores
is refused; a hand-written vocabulary does not grow; UCI input grows by its vocabulary file's
words."""
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ingest_corpus import JSMF, counts, read_mm, run, write_text, write_uci  # noqa: E402

NIGHTS, DOCS, LEN, K = 6, 600, 30, 3
LATE = "zephyr"
INFO_KEYS = ("n_words", "docs", "docs_dropped", "tokens", "oov_tokens", "nnz", "rule",
             "pending_words", "pending_digest", "grow_docs", "first_words", "admitted_late")
MPI_ENV = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
           "OMPI_MCA_btl_vader_single_copy_mechanism": "none",
           "OMPI_MCA_rmaps_base_oversubscribe": "1", "JSMF_STORE_NOSYNC": "1"}


def planted(seed=11):
    """K topics over disjoint blocks of 20 words; LATE belongs to topic 0 at a constant rate.
    Documents mix two topics; every word of a block is frequent, so the first vocabulary (jsmf
    vocab of night 0, with LATE removed by hand) holds them all."""
    rnd = random.Random(seed)
    letters = "bcdfghjklmnpqrstvwxz"
    words = set()
    while len(words) < 20 * K:
        words.add("".join(rnd.choice(letters) + rnd.choice("aeiou") for _ in range(3)))
    words = sorted(words)
    rnd.shuffle(words)
    topics = [words[20 * k:20 * (k + 1)] for k in range(K)]
    # rare words outside every vocabulary (pending, never admitted): one-off tokens
    rare = ["qy" + "".join(rnd.choice(letters) for _ in range(5)) for _ in range(3000)]
    nights = []
    for _ in range(NIGHTS):
        lines = []
        for _ in range(DOCS):
            a, b = rnd.sample(range(K), 2)
            toks = []
            for _ in range(LEN):
                k = a if rnd.random() < 0.8 else b
                if k == 0 and rnd.random() < 0.06:
                    toks.append(LATE)
                else:
                    toks.append(rnd.choice(topics[k]))
            toks += rnd.sample(rare, 2)
            lines.append(" ".join(toks))
        nights.append(lines)
    return nights


def info(store):
    j = json.loads(run("info", store, "--json").stdout)
    return {k: j[k] for k in INFO_KEYS}


def export(store, tmp, name="x"):
    out = os.path.join(tmp, name + ".mtx")
    run("export", store, "-o", out)
    with open(out, "rb") as f, open(out + ".vocab.txt") as g:
        return f.read(), g.read().split("\n")[:-1]


def content(store, tmp):
    """What formats/store.md calls a store's content, as the tests can see it: C (exported),
    the vocabulary in id order, counters, pending words (digest) and admissions."""
    mtx, vocab = export(store, tmp, "content")
    return mtx, vocab, info(store)


def ingest_nights(store, paths, vocab, min_df, env=None, args=(), mpi=0, kill=None):
    """The nightly commands: night 0 with --vocab (and the rule's min df), then plain ingests.
    kill=(night, env): that night's first run is killed by the env hook, then run again."""
    for n, p in enumerate(paths):
        cmd = ["ingest", store, p] + list(args)
        if n == 0:
            cmd += ["--vocab", vocab, "--min-df", min_df]
        if kill and kill[0] == n:
            e = dict(env or {})
            e.update(kill[1])
            if mpi:
                subprocess.run(["mpirun", "--oversubscribe", "-np", str(mpi), JSMF] + cmd,
                               env=dict(os.environ, **MPI_ENV, **e), capture_output=True)
            else:
                p1 = run(*cmd, ok=False, env=e)
                assert p1.returncode in (96, 97, 98, 99), (p1.returncode, p1.stderr)
        if mpi:
            r = subprocess.run(["mpirun", "--oversubscribe", "-np", str(mpi), JSMF] +
                               [str(c) for c in cmd], env=dict(os.environ, **MPI_ENV),
                               capture_output=True)
            assert r.returncode == 0, r.stderr.decode(errors="replace")
        else:
            run(*cmd, env=env)


def reference_grown(first_vocab, nights_docs, admit_after, late_word, min_doc_len=5):
    """C recomputed from the raw documents with the growth rule: documents of nights up to
    admit_after see the first vocabulary, later ones also late_word (id N0, admission point the
    documents of nights up to admit_after); a pair (i, j) divides by the documents counted since
    both words could appear."""
    vocab = list(first_vocab) + [late_word]
    n = len(vocab)
    S = np.zeros((n, n))
    M, a = 0, 0
    for night, lines in enumerate(nights_docs):
        v_now = vocab if night > admit_after else first_vocab
        for h, _ in counts(v_now, lines):
            x = np.zeros(n)
            for i, c in h.items():
                x[i] = c
            t = x.sum()
            if t < max(2, min_doc_len):
                continue
            M += 1
            S += (np.outer(x, x) - np.diag(x)) / (t * (t - 1))
        if night == admit_after:
            a = M
    adm = np.zeros(n)
    adm[-1] = a
    D = M - np.maximum.outer(adm, adm)
    return S / D, vocab


def check_planted(tmp, nights):
    paths = []
    for n, lines in enumerate(nights):
        paths.append(os.path.join(tmp, "night%d.txt" % n))
        write_text(paths[-1], lines)
    # the first vocabulary: night 0's, without the late word (a hand edit keeps the rule line)
    v0 = os.path.join(tmp, "v0.txt")
    run("vocab", paths[0], "-o", v0)
    with open(v0) as f:
        lines = f.read().split("\n")
    assert lines[0].startswith("# jsmf-rule: min-df=5 max-df-frac=0.5 max-words=0 stopwords=en"), lines[0]
    lines = [l for l in lines if not l.startswith(LATE + "\t")]
    with open(v0, "w") as f:
        f.write("\n".join(lines))
    first = [l.split("\t")[0] for l in lines if l and not l.startswith("#")]
    # min df between the late word's df after two nights and after three: admitted at night 2's
    # end (the third ingest), from the documents themselves
    df = [sum(LATE in l.split() for l in nights[n]) for n in range(NIGHTS)]
    min_df = df[0] + df[1] + 1
    assert min_df <= df[0] + df[1] + df[2]

    grown = os.path.join(tmp, "grown")
    ingest_nights(grown, paths, v0, min_df)
    g = info(grown)
    assert g["n_words"] == len(first) + 1 and g["admitted_late"] == 1, g
    assert g["rule"].startswith("min-df=%d " % min_df), g
    mtx, vocab = export(grown, tmp, "grown")
    assert vocab[:len(first)] == first, "old ids changed"
    assert vocab[-1] == LATE

    # the numpy reference, from the raw documents with the same rule
    # admitted at the start of the third ingest (night 2), whose pre-pass sees it pass: night 2's
    # documents already count its pairs
    ref, ref_vocab = reference_grown(first, nights, 1, LATE)
    ref /= ref.sum()  # readers scale a grown C to sum 1 (formats/store.md)
    C = read_mm(os.path.join(tmp, "grown.mtx"), len(vocab))
    assert ref_vocab == vocab
    err = np.abs(C - ref).max() / np.abs(ref).max()
    assert err < 1e-9, "grown C differs from the reference by %g" % err

    # a one-shot store over the final vocabulary (the same words, all nights at once)
    vall = os.path.join(tmp, "vall.txt")
    with open(vall, "w") as f:
        f.write("\n".join(vocab) + "\n")
    one = os.path.join(tmp, "oneshot")
    run("ingest", one, *paths, "--vocab", vall)
    _, vocab1 = export(one, tmp, "one")
    C1 = read_mm(os.path.join(tmp, "one.mtx"), len(vocab1))
    i = vocab.index(LATE)
    rel = np.abs(C[i] - C1[i]).sum() / np.abs(C1[i]).sum()
    assert rel < 0.05, "late word's row: relative l1 %.4f against the one-shot store" % rel
    print("late word's row: relative l1 %.4f against the one-shot store" % rel)

    # the two fits' topics
    for s, m in ((grown, "mg"), (one, "m1")):
        run("fit", s, "-k", K, "-o", os.path.join(tmp, m), "--seed", 1, "--refine", 0)
    ev = json.loads(run("eval", os.path.join(tmp, "mg"), "--truth", os.path.join(tmp, "m1"),
                        "--json").stdout)
    l1 = float(np.mean(ev["l1_per_topic"]))
    assert l1 < 0.05, "fits of the grown and one-shot stores: mean l1 %.4f" % l1
    print("fits: mean l1 %.4f between the grown and one-shot stores' topics" % l1)
    return paths, v0, min_df, grown


def check_equal_stores(tmp, paths, v0, min_df, grown):
    want = content(grown, tmp)
    cases = [("threads 1", {}, ["-j", 1], 0, None),
             ("threads 2", {}, ["-j", 2], 0, None),
             ("--mem 1M", {"JSMF_TEST_SMALL_MEM": "1"}, ["--mem", "1M"], 0, None),
             ("a pre-pass counted in parts", {"JSMF_TEST_PREPASS_BYTES": "40000"}, [], 0, None),
             ("killed in a checkpoint", {}, [], 0,
              (1, {"JSMF_TEST_EXIT_IN_STAGE": "1", "JSMF_STORE_TXN_BYTES": "8192"})),
             # night 2 admits the late word at its start: its pre-pass, the admission (the
             # command's first commit, with its inputs' marks), its checkpoints
             ("killed in the pre-pass", {}, [], 0, (2, {"JSMF_TEST_EXIT_IN_PREPASS": "300"})),
             ("killed in the admission", {}, [], 0, (2, {"JSMF_TEST_EXIT_IN_COMMIT": "1"})),
             ("killed after the admission", {}, [], 0,
              (2, {"JSMF_TEST_EXIT_AFTER_COMMIT": "1"})),
             ("killed in the night's checkpoint", {}, [], 0,
              (2, {"JSMF_TEST_EXIT_IN_COMMIT": "2"}))]
    if shutil.which("mpirun") and os.path.exists(os.path.join(os.path.dirname(JSMF),
                                                              "libjsmf_mpi.so")):
        cases.append(("mpirun -np 2", {}, [], 2, None))
        cases.append(("mpirun -np 2, killed after the admission", {}, [], 2,
                      (2, {"JSMF_TEST_EXIT_AFTER_COMMIT": "1"})))
    else:
        print("skip: mpirun -np 2 (no mpirun or MPI plugin)")
    for name, env, args, mpi, kill in cases:
        s = os.path.join(tmp, "eq-" + name.replace(" ", "_"))
        ingest_nights(s, paths, v0, min_df, env=env, args=args, mpi=mpi, kill=kill)
        got = content(s, tmp)
        assert got[2] == want[2], "%s: counters differ:\n%s\n%s" % (name, got[2], want[2])
        assert got[1] == want[1], "%s: vocabulary differs" % name
        assert got[0] == want[0], "%s: C differs" % name
        print("equal store: %s" % name)


def check_stdin(tmp, nights, paths, v0, min_df):
    """Standard input cannot be read twice: no pre-pass, its words join at the end of the
    command (the late word from night 3's documents); a kill inside that admission is repaired
    by the rerun, which finds the content complete."""
    first = [l.split("\t")[0] for l in open(v0).read().split("\n") if l and not l.startswith("#")]

    def feed(store, kill_night=None):
        for n, p in enumerate(paths):
            args = ["ingest", store, "-"] + (["--vocab", v0, "--min-df", min_df] if n == 0 else [])
            if n == kill_night:  # commits of that night: its checkpoint, then the admission
                with open(p, "rb") as f:
                    p1 = run(*args, ok=False, stdin=f, env={"JSMF_TEST_EXIT_IN_COMMIT": "2"})
                assert p1.returncode == 98, (p1.returncode, p1.stderr)
            with open(p, "rb") as f:
                run(*args, stdin=f)

    s = os.path.join(tmp, "stdin")
    feed(s)
    _, vocab = export(s, tmp, "stdin")
    ref, ref_vocab = reference_grown(first, nights, 2, LATE)
    ref /= ref.sum()
    assert ref_vocab == vocab, "stdin: vocabulary"
    C = read_mm(os.path.join(tmp, "stdin.mtx"), len(vocab))
    err = np.abs(C - ref).max() / np.abs(ref).max()
    assert err < 1e-9, "stdin: C differs from the end-of-command reference by %g" % err
    k = os.path.join(tmp, "stdin-killed")
    feed(k, kill_night=2)
    assert content(k, tmp) == content(s, tmp), "stdin: a kill in the admission changed the store"
    print("stdin: admitted at the command's end; equal after a kill in that admission")


def check_admitted_last(tmp, nights, paths, v0, min_df):
    """A word admitted by the admission that ends a command (stdin's late word, after night 2)
    has no documents after its point (a_i = M) until the next command counts some: every reader
    takes its row of C as zero (formats/store.md), for a store of rows and one of documents: the
    export is the first vocabulary's C with a zero row and column, fit and fdm succeed and give
    the word no mass; the next night's documents count its pairs as before."""
    first = [l.split("\t")[0] for l in open(v0).read().split("\n") if l and not l.startswith("#")]
    ref, _ = reference_grown(first, nights[:3], 3, LATE)  # nothing after the point: no pairs
    ref[-1, :] = ref[:, -1] = 0
    ref /= ref.sum()
    for hold in ("rows", "docs"):
        s = os.path.join(tmp, "last-" + hold)
        for n, p in enumerate(paths[:3]):
            args = ["ingest", s, "-"] + (["--vocab", v0, "--min-df", min_df, "--hold", hold]
                                         if n == 0 else [])
            with open(p, "rb") as f:
                run(*args, stdin=f)
        i = json.loads(run("info", s, "--json").stdout)
        assert i["admitted_late"] == 1 and i["n_words"] == len(first) + 1, i
        _, vocab = export(s, tmp, "last")
        assert vocab[-1] == LATE
        C = read_mm(os.path.join(tmp, "last.mtx"), len(vocab))
        err = np.abs(C - ref).max() / np.abs(ref).max()
        assert err < 1e-9, "%s: C with a word admitted at M differs by %g" % (hold, err)
        m = os.path.join(tmp, "last-m-" + hold)
        run("fit", s, "-k", K, "-o", m, "--refine", 0)
        B = np.load(os.path.join(m, "B.npy"))
        assert B.shape == (len(vocab), K) and B[-1].max() < 1e-6, "%s: the word has mass %s" % (hold, B[-1])
        if hold == "docs":  # the default fit, refined: the word has the prior's floor alone
            run("fit", s, "-k", K, "-o", m + "-refined")
            B = np.load(os.path.join(m + "-refined", "B.npy"))
            assert np.allclose(B[-1], B.min(axis=0), rtol=1e-12, atol=0), \
                "refined: the word has more than the floor: %s" % B[-1]
        run("fdm", s, "-k", K, "-o", m + "-fdm", "--steps", 200, "--init", m, "-q")
        with open(paths[3], "rb") as f:  # the next night: its pairs count
            run("ingest", s, "-", stdin=f)
        run("fit", s, "-k", K, "-o", m + "-next")
        assert np.load(os.path.join(m + "-next", "B.npy"))[-1].max() > 1e-3, "%s: next night" % hold
    print("a word admitted after the last document: a zero row for export, fit and fdm")


def check_errors(tmp, paths, v0, grown):
    before = content(grown, tmp)
    # bad rule values: usage errors, nothing written
    for args, msg in ((["--min-df", 0], b"--min-df"), (["--max-df-frac", "-1"], b"--max-df-frac"),
                      (["--freeze", "--min-df", 3], b"--freeze")):
        p = run("ingest", grown, paths[0], "--force", *args, ok=2)
        assert msg in p.stderr, p.stderr
    # frozen: no growth, nothing counted; asked to grow without --unfreeze: a clear error
    frozen = os.path.join(tmp, "frozen")
    run("ingest", frozen, paths[0], "--vocab", v0, "--freeze")
    f0 = info(frozen)
    assert f0["rule"] == "frozen" and f0["pending_words"] == 0, f0
    run("ingest", frozen, paths[1])
    assert info(frozen)["n_words"] == f0["n_words"]
    snap = content(frozen, tmp)
    p = run("ingest", frozen, paths[2], "--min-df", 50, ok=1)
    assert b"frozen" in p.stderr and b"--unfreeze" in p.stderr, p.stderr
    assert content(frozen, tmp) == snap, "a refused ingest changed the frozen store"
    run("ingest", frozen, paths[2], "--min-df", 50, "--unfreeze")
    assert info(frozen)["n_words"] == f0["n_words"] + 1, "unfrozen: the late word joins"
    # a vocabulary file with a bad rule line: error naming file and line, no store made
    bad = os.path.join(tmp, "bad.txt")
    with open(v0) as f:
        text = f.read()
    with open(bad, "w") as f:
        f.write(text.replace("min-df=5", "min-df=abc", 1))
    nb = os.path.join(tmp, "nobad")
    p = run("ingest", nb, paths[0], "--vocab", bad, ok=1)
    assert b"bad.txt:1" in p.stderr and b"min-df" in p.stderr, p.stderr
    assert not os.path.exists(os.path.join(nb, "data.mdb")), "a bad rule left a store"
    # merge of a grown store: refused, no output
    out = os.path.join(tmp, "merged")
    p = run("merge", out, grown, frozen, ok=1)
    assert b"grew" in p.stderr, p.stderr
    assert not os.path.exists(os.path.join(out, "data.mdb"))
    assert content(grown, tmp) == before


def check_no_rule(tmp, paths):
    """A hand-written vocabulary (no rule line) does not grow; --min-df gives it a rule."""
    hand = os.path.join(tmp, "hand.txt")
    run("vocab", paths[0], "-o", hand)
    with open(hand) as f:
        words = [l.split("\t")[0] for l in f if l.strip() and not l.startswith("#")]
    with open(hand, "w") as f:
        f.write("\n".join(w for w in words if w != LATE) + "\n")
    s = os.path.join(tmp, "hand")
    run("ingest", s, paths[0], "--vocab", hand)
    run("ingest", s, paths[1])
    i = info(s)
    assert i["rule"] == "none" and i["n_words"] == len(words) - 1 and i["pending_words"] == 0, i
    run("ingest", s, paths[2], "--min-df", 50)
    assert info(s)["n_words"] == len(words), "a rule given later: the late word joins"


def check_uci(tmp, nights):
    """UCI input: a word of the file's vocabulary that the store lacks is counted and admitted."""
    first = sorted({t for l in nights[0] for t in l.split()} - {LATE})
    v = os.path.join(tmp, "uci-v.txt")
    with open(v, "w") as f:
        f.write("# jsmf-rule: min-df=5 max-df-frac=1 max-words=0 stopwords=none\n")
        f.write("\n".join(first) + "\n")
    allw = first + [LATE]
    d = os.path.join(tmp, "uci")
    os.mkdir(d)
    docs = counts(allw, nights[0])
    path = write_uci(d, "n0", allw, docs)
    s = os.path.join(tmp, "uci.store")
    run("ingest", s, path, "--vocab", v)
    i = info(s)
    assert i["n_words"] == len(first) + 1 and i["admitted_late"] == 1, i
    _, vocab = export(s, tmp, "uci")
    assert vocab[-1] == LATE


def main():
    nights = planted()
    with tempfile.TemporaryDirectory(prefix="jsmf-grow-") as tmp:
        paths, v0, min_df, grown = check_planted(tmp, nights)
        check_equal_stores(tmp, paths, v0, min_df, grown)
        check_stdin(tmp, nights, paths, v0, min_df)
        check_admitted_last(tmp, nights, paths, v0, min_df)
        check_errors(tmp, paths, v0, grown)
        check_no_rule(tmp, paths)
        check_uci(tmp, nights)
    print("ok")


if __name__ == "__main__":
    main()
