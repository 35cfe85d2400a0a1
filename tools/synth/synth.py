#!/usr/bin/python3
"""synth.py — semi-synthetic corpora with known topics (Arora et al. 2013 Sec. 5.1).

Topics B come from a fitted model (--from-model DIR, optionally with one planted anchor word per
topic as in Arora et al. 2013 Fig. 4) or are random Dirichlet topics with planted anchor words. Document
mixtures are LDA (symmetric or asymmetric Dirichlet) or logistic-normal (correlated topics);
lengths are Poisson. Writes the corpus (text, UCI, LDA-C or item baskets, zstd-compressed when
the name ends in .zst) and the ground truth as a MODEL directory (formats/model.md, kind "truth") whose A is
E[theta theta^T], so that the population co-occurrence is exactly C = B A B^T.
See tools/synth/README.md.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np

FORMAT_VERSION = 1
CONSONANTS = "bdfgklmnprstvz"
VOWELS = "aeiou"


def pseudo_words(count, taken=()):
    """`count` distinct pronounceable letters-only words of length >= 6 that the jsmf tokenizer
    keeps whole. They start with z or x, so they never collide with English stopwords."""
    first = [c + v for c in "zx" for v in VOWELS]
    syl = [c + v for c in CONSONANTS for v in VOWELS]
    taken = set(taken)
    nsyl = 3
    while len(first) * len(syl) ** (nsyl - 1) < 2 * (count + len(taken)):
        nsyl += 1
    space = len(first) * len(syl) ** (nsyl - 1)
    # i -> i * step mod space is a bijection (step is prime and does not divide space), and it
    # spreads consecutive indices over all syllables so neighbouring words look different.
    step = 7919
    out = []
    i = 0
    while len(out) < count:
        n = (i * step + 1) % space
        parts = [first[n % len(first)]]
        n //= len(first)
        for _ in range(nsyl - 1):
            parts.append(syl[n % len(syl)])
            n //= len(syl)
        w = "".join(parts)
        if w not in taken:
            out.append(w)
            taken.add(w)
        i += 1
    return out


ID_ALPHABET = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"


def base62(x, width):
    out = []
    for _ in range(width):
        x, r = divmod(x, 62)
        out.append(ID_ALPHABET[r])
    return "".join(out)


def spotify_id(i):
    """A track URI like spotify:track:4uLU6hMCjMI75M1A2tKUQC: 22 base62 characters, the first 11
    an odd multiplier's bijection of i mod 2^64 (so distinct), the rest a second mix of it."""
    x = (i * 0x9E3779B97F4A7C15 + 0x632BE59BD9B4E019) % (1 << 64)
    y = ((x ^ (x >> 31)) * 0xBF58476D1CE4E5B9) % (1 << 64)
    return "spotify:track:" + base62(x, 11) + base62(y, 11)


def item_ids(style, count):
    """`count` distinct item ids (--format items). sku: sku1, sku2, ...; spotify: track URIs;
    mixed: what a vocabulary file and the item reader must keep apart or escape, in turn: SKU-j
    and sku-j (case), #tagj (a leading '#'), a track URI, café-j (UTF-8), a leading backslash,
    a 200-odd byte URL, and digits only."""
    if style == "sku":
        return [f"sku{i + 1}" for i in range(count)]
    if style == "spotify":
        return [spotify_id(i) for i in range(count)]
    forms = [lambda j: f"SKU-{j}", lambda j: f"sku-{j}", lambda j: f"#tag{j}",
             lambda j: spotify_id(j), lambda j: f"café-{j}", lambda j: f"\\item{j}",
             lambda j: f"https://shop.example/p/{j}/" + "x" * 200, lambda j: f"{j}"]
    return [forms[i % len(forms)](i // len(forms)) for i in range(count)]


def vocab_line(word):
    """A word as a line of a vocabulary file (formats/vocab.md): a leading '#' or backslash
    escaped with a backslash, so the line is not a comment and reads back as the word."""
    return ("\\" if word[:1] in ("#", "\\") else "") + word + "\n"


def read_vocab(path):
    words = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\r\n")
            if not line or line.startswith("#"):
                continue
            if line[:2] in ("\\#", "\\\\"):  # the escape vocab_line writes
                line = line[1:]
            words.append(line.split("\t", 1)[0])
    return words


def gamma_normalised(rng, conc, shape):
    """Dirichlet draws along axis 0 via Gamma variates; robust for tiny concentrations where
    numpy's dirichlet can return NaN (all gammas underflow)."""
    g = rng.gamma(conc, 1.0, size=shape)
    s = g.sum(axis=0, keepdims=True)
    bad = s[0] <= 0
    if np.any(bad):  # every variate underflowed: put the mass on one random entry
        idx = rng.integers(0, shape[0], size=int(bad.sum()))
        g[:, bad] = 0
        g[idx, np.nonzero(bad)[0]] = 1
        s = g.sum(axis=0, keepdims=True)
    return g / s


def random_topics(rng, n, k, per_topic, conc):
    """N x K topics: Dirichlet(conc) over the free words plus `per_topic` planted anchor words per
    topic, each as probable as the topic's most probable free word (then renormalised). Rows are
    shuffled so anchors sit anywhere in the vocabulary. Returns B, words, anchor row per topic."""
    free = n - k * per_topic
    if free < 1:
        sys.exit("synth: --vocab must exceed --topics x --anchors-per-topic")
    bf = gamma_normalised(rng, conc, (free, k))
    b = np.zeros((n, k))
    b[:free] = bf
    for t in range(k):
        for a in range(per_topic):
            b[free + t * per_topic + a, t] = bf[:, t].max()
    b /= b.sum(axis=0, keepdims=True)
    perm = rng.permutation(n)  # new row r holds old row perm[r]
    b = b[perm]
    where = np.empty(n, dtype=np.int64)
    where[perm] = np.arange(n)
    anchors = [int(where[free + t * per_topic]) for t in range(k)]
    return b, pseudo_words(n), anchors


def topics_from_model(directory, add_anchors):
    b = np.load(os.path.join(directory, "B.npy"))
    words = read_vocab(os.path.join(directory, "vocab.txt"))
    if b.ndim != 2 or b.shape[0] != len(words):
        sys.exit(f"synth: {directory}: B.npy has shape {b.shape}, vocab.txt {len(words)} words")
    b = np.clip(np.asarray(b, dtype=np.float64), 0, None)
    b /= b.sum(axis=0, keepdims=True)
    n, k = b.shape
    anchors = None
    if add_anchors:  # Arora et al. 2013 Fig. 4: a synthetic anchor as probable as the topic's top word
        extra = np.diag(b.max(axis=0))
        b = np.vstack([b, extra])
        b /= b.sum(axis=0, keepdims=True)
        words = words + pseudo_words(k, taken=words)
        anchors = list(range(n, n + k))
    return b, words, anchors


def correlation_matrix(rng, k, structure, groups, rho):
    if structure == "block":  # Arora et al. 2013 Sec. 5.4: groups of topics with covariance rho
        g = groups or max(1, k // 10)
        label = rng.permutation(np.arange(k) % g)
        r = np.where(label[:, None] == label[None, :], rho, 0.0)
        np.fill_diagonal(r, 1.0)
        return r, label
    # A random correlation structure: a few random factors give positive and negative
    # correlations between topics; the added identity keeps it well conditioned.
    f = rng.normal(size=(k, max(1, k // 4)))
    s = f @ f.T + np.eye(k) * (k // 4 or 1)
    d = np.sqrt(np.diag(s))
    return s / np.outer(d, d), None


class Mixture:
    """Document-topic distributions theta_d and their exact or estimated E[theta theta^T]."""

    def __init__(self, args, rng, k):
        self.kind, self.k = args.mix, k
        self.info = {"mix": args.mix}
        if args.mix in ("lda", "lda-asym"):
            if args.mix == "lda":
                alpha = np.full(k, args.alpha)
            else:  # random asymmetric weights with mean alpha, largest first
                w = np.sort(rng.gamma(1.0, 1.0, size=k))[::-1]
                alpha = args.alpha * k * w / w.sum()
            self.alpha = alpha
            self.info["alpha"] = alpha.tolist()
        else:
            self.alpha = None
            r, label = correlation_matrix(rng, k, args.ctm_structure, args.ctm_groups, args.ctm_rho)
            self.cov = args.ctm_sigma ** 2 * r
            self.chol = np.linalg.cholesky(self.cov + 1e-12 * np.eye(k))
            self.info.update(ctm_structure=args.ctm_structure, ctm_sigma=args.ctm_sigma,
                             covariance=self.cov.tolist())
            if label is not None:
                self.info.update(ctm_rho=args.ctm_rho, ctm_groups=label.tolist())

    def draw(self, rng, m):
        if self.alpha is not None:
            return gamma_normalised(rng, self.alpha[:, None], (self.k, m)).T
        eta = rng.normal(size=(m, self.k)) @ self.chol.T
        eta -= eta.max(axis=1, keepdims=True)
        th = np.exp(eta)
        return th / th.sum(axis=1, keepdims=True)

    def second_moment(self, rng, samples):
        """E[theta theta^T]: closed form for Dirichlet, Monte Carlo for logistic-normal."""
        if self.alpha is not None:
            a, a0 = self.alpha, self.alpha.sum()
            self.info["a_estimate"] = "exact"
            return (np.outer(a, a) + np.diag(a)) / (a0 * (a0 + 1))
        acc = np.zeros((self.k, self.k))
        done = 0
        while done < samples:
            b = min(50000, samples - done)
            th = self.draw(rng, b)
            acc += th.T @ th
            done += b
        self.info["a_estimate"] = "monte-carlo"
        self.info["a_samples"] = samples
        return acc / samples


def doc_lengths(rng, m, mean_len, min_len):
    n = rng.poisson(mean_len, size=m)
    if min_len > 0:  # redraw the short ones: the law is Poisson conditioned on n >= min_len
        if mean_len < min_len / 4:
            sys.exit("synth: --min-len is far above --mean-len")
        while True:
            short = n < min_len
            if not short.any():
                break
            n[short] = rng.poisson(mean_len, size=int(short.sum()))
    return n


def generate(rng, b, mixture, lengths, batch=2048):
    """Yield (theta, [(word ids, counts)]) per batch of documents. Each token draws its topic from
    theta_d and its word from that topic's column of B (inverse CDF by binary search), so the
    cost is O(tokens log N), not O(documents N)."""
    m, (n, k) = len(lengths), b.shape
    cum = np.ascontiguousarray(np.cumsum(b, axis=0).T)  # K x N
    last = np.array([np.nonzero(b[:, t])[0].max() for t in range(k)])  # last possible word
    for start in range(0, m, batch):
        stop = min(m, start + batch)
        nd = stop - start
        th = mixture.draw(rng, nd)
        th = th / th.sum(axis=1, keepdims=True)
        zc = rng.multinomial(lengths[start:stop], th)  # nd x K topic counts
        flat = zc.ravel()
        topic = np.repeat(np.tile(np.arange(k), nd), flat)
        doc = np.repeat(np.repeat(np.arange(nd), k), flat)
        u = rng.random(len(topic))
        word = np.empty(len(topic), dtype=np.int64)
        order = np.argsort(topic, kind="stable")
        bounds = np.concatenate([[0], np.cumsum(zc.sum(axis=0))])
        for t in range(k):
            sel = order[bounds[t] : bounds[t + 1]]
            w = np.searchsorted(cum[t], u[sel] * cum[t, -1], side="right")
            word[sel] = np.minimum(w, last[t])
        key, cnt = np.unique(doc * n + word, return_counts=True)
        kd, kw = key // n, key % n
        split = np.searchsorted(kd, np.arange(1, nd))
        docs = list(zip(np.split(kw, split), np.split(cnt, split)))
        yield th, docs


class Output:
    """A corpus file, plain or piped through zstd when the name ends in .zst; '-' is stdout."""

    def __init__(self, path):
        self.path, self.proc = path, None
        if path == "-":
            self.f = sys.stdout
        elif path.endswith(".zst") or path.endswith(".zstd"):
            self.raw = open(path, "wb")
            self.proc = subprocess.Popen(["zstd", "-q", "-c"], stdin=subprocess.PIPE,
                                         stdout=self.raw)
            self.f = open(self.proc.stdin.fileno(), "w", encoding="utf-8", closefd=False)
        else:
            self.f = open(path, "w", encoding="utf-8")

    def write(self, s):
        self.f.write(s)

    def close(self):
        self.f.flush()
        if self.proc:
            self.f.close()
            self.proc.stdin.close()
            if self.proc.wait() != 0:
                sys.exit(f"synth: zstd failed writing {self.path}")
            self.raw.close()
        elif self.path != "-":
            self.f.close()


def uci_vocab_path(path):
    d, base = os.path.split(path)
    if not base.startswith("docword."):
        sys.exit("synth: UCI output must be named docword.NAME.txt[.zst] (vocab.NAME.txt is "
                 "written beside it)")
    rest = base[len("docword."):]
    for suf in (".zst", ".zstd"):
        if rest.endswith(suf):
            rest = rest[: -len(suf)]
    return os.path.join(d, "vocab." + rest)


def write_corpus(args, rng, b, words, mixture, lengths):
    """Stream the documents out; returns (theta M x K, tokens written)."""
    fmt, m = args.format, len(lengths)
    thetas = np.zeros((m, b.shape[1])) if args.theta else None
    tokens = 0
    body = []  # UCI needs the non-zero count in its header: keep the lines until the end
    nnz = 0
    out = Output(args.output) if fmt != "uci" else None
    warr = np.array(words, dtype=object)
    # Token order within a text document has its own generator, so the bags of words are the
    # same in every format for the same seed.
    shuffle = np.random.default_rng([args.seed, 2])
    d = 0
    for th, docs in generate(rng, b, mixture, lengths):
        if thetas is not None:
            thetas[d : d + len(docs)] = th
        lines = []
        for ids, cnt in docs:
            tokens += int(cnt.sum())
            if fmt in ("text", "items"):
                toks = warr[shuffle.permutation(np.repeat(ids, cnt))]
                lines.append(" ".join(toks))
            elif fmt == "ldac":
                lines.append(" ".join([str(len(ids))] + [f"{i}:{c}" for i, c in zip(ids, cnt)]))
            else:
                nnz += len(ids)
                body.append("".join(f"{d + 1} {i + 1} {c}\n" for i, c in zip(ids, cnt)))
            d += 1
        if out:
            out.write("\n".join(lines) + ("\n" if lines else ""))
    if fmt == "uci":
        out = Output(args.output)
        out.write(f"{m}\n{len(words)}\n{nnz}\n")
        for chunk in body:
            out.write(chunk)
        with open(uci_vocab_path(args.output), "w", encoding="utf-8") as f:
            f.write("".join(vocab_line(w) for w in words))
    out.close()
    return thetas, tokens


def xxh3_64():
    """libxxhash's XXH3_64bits through ctypes (the hash of formats/model.md, "Manifest"), or
    None where the library is not installed: the model is then written without MANIFEST."""
    import ctypes
    import ctypes.util
    for name in (ctypes.util.find_library("xxhash"), "libxxhash.so.0"):
        try:
            lib = ctypes.CDLL(name)
        except (OSError, TypeError):
            continue
        lib.XXH3_64bits.restype = ctypes.c_uint64
        lib.XXH3_64bits.argtypes = [ctypes.c_char_p, ctypes.c_size_t]
        return lambda data: lib.XXH3_64bits(data, len(data))
    return None


def write_manifest(top):
    """TOP/MANIFEST as jsmf writes it: 'xxh3-64 HEX SIZE PATH' for every other file, sorted by
    path, and a last line that checksums the lines above it; nothing without libxxhash."""
    h = xxh3_64()
    if h is None:
        return
    rels = sorted(os.path.relpath(os.path.join(d, f), top).encode()
                  for d, _, fs in os.walk(top) for f in fs)
    text = b""
    for rel in rels:
        if rel == b"MANIFEST":
            continue
        with open(os.path.join(top, rel.decode()), "rb") as f:
            data = f.read()
        text += b"xxh3-64 %016x %d %s\n" % (h(data), len(data), rel)
    text += b"xxh3-64 %016x %d MANIFEST\n" % (h(text), len(text))
    with open(os.path.join(top, "MANIFEST"), "wb") as f:
        f.write(text)


def save_model_dir(path, b, a, words, anchors, alpha, summary, force):
    """Write a MODEL directory atomically (temporary sibling, then rename), like jsmf does."""
    path = path.rstrip("/") or path
    if os.path.exists(path) and not force:
        sys.exit(f"synth: {path}: already exists (use --force to replace it)")
    parent = os.path.dirname(os.path.abspath(path))
    tmp = tempfile.mkdtemp(prefix=os.path.basename(path) + ".tmp-", dir=parent)
    os.chmod(tmp, 0o755)
    try:
        with open(os.path.join(tmp, "vocab.txt"), "w", encoding="utf-8") as f:
            f.write("".join(vocab_line(w) for w in words))
        np.save(os.path.join(tmp, "B.npy"), np.ascontiguousarray(b, dtype="<f8"))
        np.save(os.path.join(tmp, "A.npy"), np.ascontiguousarray(a, dtype="<f8"))
        if alpha is not None:
            np.save(os.path.join(tmp, "alpha.npy"), np.ascontiguousarray(alpha, dtype="<f8"))
        if anchors is not None:
            with open(os.path.join(tmp, "anchors.txt"), "w", encoding="utf-8") as f:
                f.write("".join(f"{t}\t{w}\t{words[w]}\n" for t, w in enumerate(anchors)))
        with open(os.path.join(tmp, "summary.json"), "w", encoding="utf-8") as f:
            json.dump(summary, f, indent=2)
            f.write("\n")
        write_manifest(tmp)  # last: it lists the files above
        if os.path.exists(path):
            if not os.path.exists(os.path.join(path, "B.npy")) and os.listdir(path):
                sys.exit(f"synth: {path}: exists and does not look like a model; not replacing it")
            old = tempfile.mkdtemp(prefix=os.path.basename(path) + ".old-", dir=parent)
            os.rename(path, old)
            os.rename(tmp, path)
            shutil.rmtree(old)
        else:
            os.rename(tmp, path)
    finally:
        if os.path.exists(tmp):
            shutil.rmtree(tmp)


def default_truth_path(output):
    if output == "-":
        return "synth.truth"
    base = output
    for suf in (".zst", ".zstd", ".txt", ".ldac", ".dat"):
        if base.endswith(suf):
            base = base[: -len(suf)]
    return base + ".truth"


def parse_args(argv):
    p = argparse.ArgumentParser(
        prog="synth.py",
        description="Semi-synthetic corpus with known topics (Arora et al. 2013 Sec. 5.1) and its "
        "ground truth as a jsmf MODEL directory.")
    p.add_argument("-o", "--output", required=True,
                   help="corpus file ('-' = stdout; .zst = zstd-compressed; UCI: docword.NAME.txt)")
    p.add_argument("--format", choices=("text", "uci", "ldac", "items"), default="text",
                   help="items: baskets of ids, one per line (jsmf --format items)")
    p.add_argument("--item-ids", choices=("sku", "spotify", "mixed"),
                   help="name the random topics' words as item ids (default with --format "
                   "items: sku; not with text, whose tokenizer would split them)")
    p.add_argument("--truth", help="ground-truth MODEL directory (default: OUTPUT minus "
                   "extensions + .truth)")
    p.add_argument("--vocab", type=int, default=1000, help="vocabulary size N (random topics)")
    p.add_argument("--topics", type=int, default=10, help="number of topics K (random topics)")
    p.add_argument("--docs", type=int, default=1000, help="number of documents M")
    p.add_argument("--mean-len", type=float, default=100, help="mean document length (Poisson)")
    p.add_argument("--min-len", type=int, default=0,
                   help="redraw lengths below this (Poisson conditioned on n >= min)")
    p.add_argument("--from-model", metavar="DIR",
                   help="topics from a model's B.npy and vocab.txt instead of random topics")
    p.add_argument("--add-anchors", action="store_true",
                   help="with --from-model: plant one synthetic anchor word per topic")
    p.add_argument("--anchors-per-topic", type=int, default=1,
                   help="planted anchor words per random topic (default 1)")
    p.add_argument("--topic-conc", type=float, default=0.1,
                   help="Dirichlet concentration of random topics over words (default 0.1)")
    p.add_argument("--mix", choices=("lda", "lda-asym", "ctm"), default="lda")
    p.add_argument("--alpha", type=float, default=0.1,
                   help="Dirichlet parameter per topic (lda; the mean for lda-asym)")
    p.add_argument("--ctm-structure", choices=("random", "block"), default="random")
    p.add_argument("--ctm-sigma", type=float, default=1.0, help="ctm: standard deviation of eta")
    p.add_argument("--ctm-rho", type=float, default=0.5, help="ctm block: within-group correlation")
    p.add_argument("--ctm-groups", type=int, default=0, help="ctm block: groups (default K/10)")
    p.add_argument("--a-samples", type=int, default=200000,
                   help="ctm: Monte Carlo samples for E[theta theta^T]")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--exact-c", metavar="FILE.npy",
                   help="also write C = B A B^T (N x N) and FILE.vocab.txt")
    p.add_argument("--theta", metavar="FILE.npy", help="also write the documents' theta (M x K)")
    p.add_argument("--force", action="store_true", help="replace an existing truth directory")
    a = p.parse_args(argv)
    if a.docs < 0 or a.mean_len < 0 or a.topics < 1 or a.vocab < 2 or a.anchors_per_topic < 0:
        p.error("sizes must be positive")
    if a.add_anchors and not a.from_model:
        p.error("--add-anchors needs --from-model")
    if a.format == "uci" and a.output == "-":
        p.error("UCI output needs a file name (docword.NAME.txt)")
    if a.format == "uci":
        uci_vocab_path(a.output)
    if not (0 <= a.ctm_rho < 1):
        p.error("--ctm-rho must be in [0, 1)")
    if a.item_ids and a.format == "text":
        p.error("--item-ids needs --format items, ldac or uci (text would split the ids)")
    if a.item_ids and a.from_model:
        p.error("--item-ids names random topics' words; --from-model brings its own")
    if a.format == "items" and not a.item_ids and not a.from_model:
        a.item_ids = "sku"
    return a


def main(argv):
    args = parse_args(argv)
    t0 = time.time()
    rng = np.random.default_rng(args.seed)
    if args.from_model:
        b, words, anchors = topics_from_model(args.from_model, args.add_anchors)
    else:
        b, words, anchors = random_topics(rng, args.vocab, args.topics, args.anchors_per_topic,
                                          args.topic_conc)
        if args.item_ids:  # names only: B and the documents are those of the same seed
            words = item_ids(args.item_ids, len(words))
        if args.anchors_per_topic == 0:
            anchors = None
    n, k = b.shape
    mixture = Mixture(args, rng, k)
    a = mixture.second_moment(np.random.default_rng([args.seed, 1]), args.a_samples)
    a /= a.sum()
    lengths = doc_lengths(rng, args.docs, args.mean_len, args.min_len)
    thetas, tokens = write_corpus(args, rng, b, words, mixture, lengths)

    truth = args.truth or default_truth_path(args.output)
    generator = {k2: v for k2, v in vars(args).items() if k2 not in ("force",)}
    generator.update(mixture.info)
    summary = {
        "format": "jsmf-model", "version": FORMAT_VERSION, "kind": "truth", "k": k,
        "n_words": n,
        "generator": generator,
        "corpus": {"path": args.output, "format": args.format, "docs": int(args.docs),
                   "tokens": int(tokens)},
        "timings": {"total": time.time() - t0},
    }
    save_model_dir(truth, b, a, words, anchors, mixture.alpha, summary, args.force)
    if args.theta:
        np.save(args.theta, np.ascontiguousarray(thetas, dtype="<f8"))
    if args.exact_c:
        c = b @ a @ b.T
        c = (c + c.T) / 2
        np.save(args.exact_c, np.ascontiguousarray(c / c.sum(), dtype="<f8"))
        stem = args.exact_c[:-4] if args.exact_c.endswith(".npy") else args.exact_c
        with open(stem + ".vocab.txt", "w", encoding="utf-8") as f:
            f.write("".join(vocab_line(w) for w in words))
    print(f"synth: {args.docs} documents, {tokens} tokens, N={n}, K={k}, mix {args.mix}; "
          f"truth in {truth}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
