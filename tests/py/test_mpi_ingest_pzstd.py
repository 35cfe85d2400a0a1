"""test_mpi_ingest_pzstd.py — `mpirun -np 2 jsmf ingest` of a zstd text whose first frame is a
skippable one (what pzstd writes) makes the store one process makes. Before one shared zstd
detection, the MPI planner knew only the ordinary frame's magic number, took such a file for plain
text and cut it at byte offsets into the compressed stream: a different document count, silently.
The file is written by pzstd when installed, else as a skippable frame followed by zstd's frames.
Skips (77) without mpirun, the MPI plugin or a zstd compressor."""
import os
import shutil
import struct
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ingest_corpus import make_corpus, run, write_text  # noqa: E402
from test_mpi_ingest import BUILD, assert_same, content, mpi  # noqa: E402


def skippable_first(src, dst):
    """A zstd file that opens with a skippable frame: pzstd's output when pzstd is installed,
    else a 16-byte skippable frame (magic 0x184D2A50) then `zstd`'s ordinary frame."""
    if shutil.which("pzstd"):
        subprocess.run(["pzstd", "-q", "-f", "-p", "2", src, "-o", dst], check=True)
    else:
        body = subprocess.run(["zstd", "-q", "-c", src], capture_output=True, check=True).stdout
        with open(dst, "wb") as f:
            f.write(struct.pack("<II", 0x184D2A50, 8) + b"jsmftest" + body)
    with open(dst, "rb") as f:
        magic = struct.unpack("<I", f.read(4))[0]
    assert magic & 0xFFFFFFF0 == 0x184D2A50, "%s does not open with a skippable frame" % dst


def main():
    if not shutil.which("mpirun") or not os.path.exists(os.path.join(BUILD, "libjsmf_mpi.so")):
        print("no mpirun or no MPI plugin (libopenmpi-dev): MPI ingest not tested")
        sys.exit(77)
    if not shutil.which("pzstd") and not shutil.which("zstd"):
        print("neither pzstd nor zstd installed: no skippable-frame input to test with")
        sys.exit(77)
    tmp = tempfile.mkdtemp(prefix="jsmf-mpi-pzstd-")
    vocab, lines = make_corpus(seed=11, n_vocab=600, n_oov=40, n_docs=3000, max_len=60)
    vpath, text = os.path.join(tmp, "vocab.txt"), os.path.join(tmp, "docs.txt")
    write_text(vpath, vocab)
    write_text(text, lines)
    zst = text + ".zst"
    skippable_first(text, zst)
    args = [zst, "--vocab", vpath]
    piece = {"JSMF_TEST_PIECE_BYTES": "8000"}  # the compressed file is several pieces' worth

    one = os.path.join(tmp, "one")
    run("ingest", one, *args)
    want = content(one, tmp)
    two = os.path.join(tmp, "two")
    mpi(2, "ingest", two, *args, env=piece)
    got = content(two, tmp)
    assert got["info"] == want["info"], "mpirun -np 2: info differs\n one: %r\n two: %r" % (
        want["info"], got["info"])
    assert_same(want, got, "mpirun -np 2 of a skippable-frame zstd file")
    print("skippable-frame zstd, -np 2: the store of one process (%d documents)" %
          want["info"]["docs"])
    shutil.rmtree(tmp)


if __name__ == "__main__":
    main()
