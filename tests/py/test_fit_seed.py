#!/usr/bin/python3
"""The default fit's model does not depend on --seed (issue 34: users cannot trust a model that
moves with the seed, and a warm start needs one target). --seed starts C's eigendecomposition
only: the steps draw their padding columns from a fixed stream, and --sketch-tol (1e-3) makes the
eigendecomposition nearly the same from any start. On kjv (1,500 most widespread words, K=20) two
seeds gave topics 1.2e-3 apart (mean l1, same index) before; with either half undone, 2.1e-4
(seeded steps) and 1.2e-3 (loose eigendecomposition); now ~1e-6. The bound asks for the same
topics at the same index."""
import os
import subprocess
import sys
import tempfile

import numpy as np

JSMF = os.environ.get("JSMF", "build/jsmf")
CORPUS = os.environ.get("JSMF_CORPORA", "../shared/corpora") + "/kjv/kjv.txt.zst"


def jsmf(*args):
    subprocess.run([JSMF, *args, "-q"], check=True)


def main():
    if not os.path.exists(CORPUS):
        print("kjv corpus not found")
        sys.exit(77)
    with tempfile.TemporaryDirectory(prefix="jsmf-seed-") as d:
        docs = os.path.join(d, "docs.txt")
        with open(docs, "wb") as f:
            f.write(subprocess.run(["zstd", "-dc", CORPUS], check=True, capture_output=True).stdout)
        jsmf("vocab", docs, "-o", f"{d}/v.txt", "--max-words", "1500")
        jsmf("ingest", f"{d}/s", docs, "--vocab", f"{d}/v.txt")
        B = []
        for seed in ("1", "2"):
            jsmf("fit", f"{d}/s", "-k", "20", "-o", f"{d}/m{seed}", "--seed", seed)
            B.append(np.load(f"{d}/m{seed}/B.npy"))
        anchors = [open(f"{d}/m{s}/anchors.txt").read() for s in ("1", "2")]
    same_index = np.abs(B[0] - B[1]).sum(0).mean()
    print(f"mean l1 between seeds 1 and 2, topic by topic: {same_index:.3g}")
    assert anchors[0] == anchors[1], "the anchors depend on the seed"
    assert same_index <= 1e-4, f"the model depends on the seed: mean l1 {same_index:.3g} > 1e-4"
    print("ok")


if __name__ == "__main__":
    main()
