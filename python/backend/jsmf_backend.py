"""jsmf_backend.py — the Python package's build backend (PEP 517, PEP 660): setuptools'
(setuptools.build_meta), with the C library inside the wheel, so `pip install ./python` gives a
package that imports (docs/python.md, "Installing").

- The version is the library's: VERSION, read from include/jsmf.h, is the package's dynamic
  version (python/pyproject.toml), and jsmf.__version__ is the loaded library's (jsmf_version()).
- A wheel: when python/jsmf/ already holds the library (`make install-python` and `make wheel`
  copy $(BUILD)'s there), it is carried as it is. Otherwise the build's packages are checked
  (a C compiler, make, zstd, lmdb, xxHash, OpenBLAS, LAPACKE: a missing one is named with the command
  that installs it), `make python-lib` builds the library and the plugins whose compilers are
  here in build-python/ of the repository (JSMF_MAKE_ARGS, or the config setting make-args,
  adds make variables: "CUDA=no"), and their copies in python/jsmf/ go into the wheel and are
  removed after it. The wheel is tagged for this platform (it holds machine code) and any
  Python 3 (the package is ctypes, no extension module).
- An editable install (`pip install -e ./python`) builds the same way and links the library and
  plugins into python/jsmf/, where they stay, pointing at build-python/.
- An sdist carries the library's sources (Makefile, include/, src/, tools/install-deps.sh) as
  _csrc/, from which its wheel is built the same way.
Afterwards python/ holds no build/, jsmf.egg-info/ or copy of the library the build made.
"""
import glob
import os
import re
import shlex
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from typing import Any, Dict, List, Optional, Sequence, Tuple

from setuptools import build_meta as _st

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # python/
PKG = os.path.join(HERE, "jsmf")
CSRC = os.path.join(HERE, "_csrc")  # an sdist's copy of the library's sources
# what the package carries beside its .py files (pyproject.toml, package-data)
LIB_GLOBS = ("libjsmf.so.*", "libjsmf_cuda.so", "libjsmf_mpi.so")
# what an sdist copies of the repository: what `make python-lib` reads
CSRC_PARTS = ("Makefile", "include", "src", os.path.join("tools", "install-deps.sh"))

# The packages `make` needs for the library (tools/install-deps.sh installs them and the tests'):
# what is checked, the test program's header and link flags, and the Debian package.
Dep = Tuple[str, str, List[str], str]
DEPS: Tuple[Dep, ...] = (
    ("OpenMP (the C compiler's -fopenmp)", "omp.h", [], "build-essential"),
    ("zstd", "zstd.h", ["-lzstd"], "libzstd-dev"),
    ("LMDB", "lmdb.h", ["-llmdb"], "liblmdb-dev"),
    ("xxHash", "xxhash.h", ["-lxxhash"], "libxxhash-dev"),
    ("LAPACKE", "lapacke.h", ["-llapacke"], "liblapacke-dev"),
    ("OpenBLAS (OpenMP build)", "cblas.h", ["-lopenblas"], "libopenblas-openmp-dev"),
)


class BuildError(SystemExit):
    """A build that cannot go on: its message, without a traceback, is what pip shows."""

    def __init__(self, message: str) -> None:
        super().__init__("jsmf: " + message)


def _say(msg: str) -> None:
    print("jsmf: " + msg, file=sys.stderr, flush=True)


def _is_root(d: str) -> bool:
    return all(os.path.exists(os.path.join(d, p)) for p in CSRC_PARTS)


def source_root() -> str:
    """The library's sources: the repository python/ sits in, else an sdist's _csrc/."""
    up = os.path.dirname(HERE)
    if _is_root(up) and os.path.samefile(os.path.join(up, "python"), HERE):
        return up
    if _is_root(CSRC):
        return CSRC
    raise BuildError("the C library's sources are not here: %s is neither python/ of a jsmf "
                     "repository (Makefile, include/, src/ above it) nor an sdist of it "
                     "(_csrc/); build from the repository (pip install ./python there)" % HERE)


def header_version(root: Optional[str] = None) -> str:
    """JSMF_VERSION_STRING of include/jsmf.h: the library's version, and the package's."""
    path = os.path.join(root or source_root(), "include", "jsmf.h")
    with open(path) as f:
        m = re.search(r'^#define JSMF_VERSION_STRING "([0-9]+\.[0-9]+\.[0-9]+)"', f.read(), re.M)
    if not m:
        raise BuildError("no JSMF_VERSION_STRING in %s" % path)
    return m.group(1)


def __getattr__(name: str) -> Any:
    # VERSION, the package's dynamic version (pyproject.toml, tool.setuptools.dynamic), read
    # when asked for, so importing the backend never fails on its own
    if name == "VERSION":
        return header_version()
    raise AttributeError(name)


def _check_abi(version: str) -> None:
    """The package's ctypes declarations are for one ABI: _lib.SOMAJOR must be the header's."""
    with open(os.path.join(PKG, "_lib.py")) as f:
        m = re.search(r"^SOMAJOR = ([0-9]+)$", f.read(), re.M)
    major = version.split(".")[0]
    if not m or m.group(1) != major:
        raise BuildError("python/jsmf/_lib.py declares the ABI of libjsmf.so.%s but "
                         "include/jsmf.h is %s: update the package's structs and prototypes "
                         "(and SOMAJOR) to the new ABI" % (m.group(1) if m else "?", version))


def _libs_in_package() -> List[str]:
    return sorted(p for g in LIB_GLOBS for p in glob.glob(os.path.join(PKG, g)))


def _check_deps(root: str) -> None:
    """Fail naming what the library's build lacks, with the command that installs it."""
    if not shutil.which("make"):
        raise BuildError("make is missing: install it with: sudo apt-get install build-essential")
    cc = os.environ.get("CC") or "cc"
    if not shutil.which(shlex.split(cc)[0]):
        raise BuildError("no C compiler (%s): install one with: sudo apt-get install "
                         "build-essential, or name yours in CC" % cc)
    # the Makefile's flags: pkg-config's for its PKGS (when it knows them), its BLASDIR
    flags = ["-fopenmp"]
    if shutil.which("pkg-config"):
        r = subprocess.run(["pkg-config", "--cflags"] + _makefile_var(root, "PKGS").split(),
                           stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        flags += shlex.split(r.stdout) if r.returncode == 0 else []
    blasdir = _makefile_var(root, "BLASDIR")
    flags += ["-L" + blasdir] if blasdir else []
    with tempfile.TemporaryDirectory(prefix="jsmf-deps-") as t:
        def fails(deps: Sequence[Dep]) -> str:
            """'' when a program including the headers links with the libraries, else why not."""
            src = os.path.join(t, "t.c")
            with open(src, "w") as f:
                f.write("".join("#include <%s>\n" % d[1] for d in deps) +
                        "int main(void) { return 0; }\n")
            r = subprocess.run(shlex.split(cc) + flags + [src, "-o", os.path.join(t, "t")] +
                               [lib for d in deps for lib in d[2]],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            last = (r.stdout.strip().splitlines() or ["failed"])[-1]
            return "" if r.returncode == 0 else last.split("error: ", 1)[-1]
        together = fails(DEPS)
        if not together:
            return
        missing = [(d, why) for d, why in ((d, fails([d])) for d in DEPS) if why]
    if not missing:  # each alone builds, all together not
        raise BuildError("the library's packages do not build together: " + together)
    raise BuildError(
        "libjsmf.so cannot be built here, missing: %s. Install with: sudo apt-get install %s "
        "(or 'make deps' in %s, which installs what the build and the tests use)" % (
            "; ".join("%s (%s, %s: %s)" % (d[0], d[1], " ".join(d[2]) or "-fopenmp", why)
                      for d, why in missing),
            " ".join(d[3] for d, _ in missing), root))


def _makefile_var(root: str, name: str) -> str:
    """A plain `NAME := value` of the Makefile (BLASDIR, PKGS)."""
    with open(os.path.join(root, "Makefile")) as f:
        m = re.search(r"^%s\s*:?=[ \t]*(.*?)[ \t]*$" % name, f.read(), re.M)
    return m.group(1) if m else ""


def _make(root: str, config_settings: Optional[Dict[str, Any]]) -> List[str]:
    """`make python-lib` in the backend's build directory: the paths of what it built."""
    args = shlex.split(os.environ.get("JSMF_MAKE_ARGS", ""))
    extra = (config_settings or {}).get("make-args") or []
    for e in [extra] if isinstance(extra, str) else extra:
        args += shlex.split(e)
    build = os.path.join(root, "build-python")
    for a in args:
        if a.startswith("BUILD="):
            build = os.path.join(root, a[len("BUILD="):])
    build = os.path.abspath(build)
    _check_deps(root)
    # make runs tools/install-deps.sh (apt-get, as root, of the tests' packages too) once per
    # build directory, when its stamp is missing or older than the script; the packages the
    # library needs were checked above, so the stamp is renewed here as that run would renew it
    stamp = os.path.join(build, ".deps-ok")
    os.makedirs(build, exist_ok=True)
    script = os.path.join(root, "tools", "install-deps.sh")
    if not os.path.exists(stamp) or os.path.getmtime(stamp) < os.path.getmtime(script):
        with open(stamp, "a"):
            os.utime(stamp, None)
    # the make that started pip, if one did, passes none of its variables (SAN=1 of 'make
    # check-asan' would make a library Python cannot load) and no job server
    # (make exports its command line's variables to the environment too: 'make check-asan'
    # runs the tests with SAN=1 CUDA=no MPI=no there, so the Makefile's switches are dropped
    # from it as well; JSMF_MAKE_ARGS is how a user sets them)
    env = {k: v for k, v in os.environ.items()
           if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL", "MAKEOVERRIDES", "SAN", "FUZZ",
                        "BUILD", "CUDA", "MPI")}
    jobs = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    cmd = ["make", "-C", root, "-j%d" % (jobs or 1), "BUILD=" + build] + \
          [a for a in args if not a.startswith("BUILD=")] + ["python-lib"]
    _say("building the library: " + " ".join(shlex.quote(c) for c in cmd))
    # make's output to stderr: pip shows it on failure (and with -v)
    r = subprocess.run(cmd, env=env, stdout=sys.stderr)
    if r.returncode:
        raise BuildError("'%s' failed (exit %d): see its output above" %
                         (" ".join(cmd), r.returncode))
    with open(os.path.join(build, "python-lib.txt")) as f:
        return [line.strip() for line in f if line.strip()]


def _own_link(p: str, root: str) -> bool:
    """A link an editable install left: into a build directory of the sources."""
    return os.path.islink(p) and os.path.realpath(p).startswith(os.path.realpath(root) + os.sep)


def _stage(config_settings: Optional[Dict[str, Any]], link: bool, staged: List[str]) -> None:
    """The library and plugins in python/jsmf/; `staged` gets the copies made (for removal)."""
    root = source_root()
    version = header_version(root)
    _check_abi(version)
    soname = "libjsmf.so." + version.split(".")[0]
    present = _libs_in_package()
    given = [p for p in present if not _own_link(p, root)]
    if given:
        names = [os.path.basename(p) for p in given]
        wrong = [n for n in names if n.startswith("libjsmf.so.") and n != soname]
        if soname not in names or wrong:
            raise BuildError("python/jsmf/ holds %s, but include/jsmf.h (%s) makes %s: remove "
                             "them (rm python/jsmf/libjsmf*.so*) to have the library built, or "
                             "put %s there" % (", ".join(names), version, soname, soname))
        _say("carrying the library python/jsmf/ holds as it is: " + ", ".join(names))
        return
    built = _make(root, config_settings)
    if not any(os.path.basename(b) == soname for b in built):
        raise BuildError("make python-lib built no %s: %s" % (soname, ", ".join(built)))
    for old in present:  # an earlier editable install's links: renewed or dropped
        if link or os.path.basename(old) not in [os.path.basename(b) for b in built]:
            os.unlink(old)
    for b in built:
        dest = os.path.join(PKG, os.path.basename(b))
        if link:
            os.symlink(os.path.relpath(b, PKG), dest)
        elif not os.path.lexists(dest):  # (an editable install's link to b stays, b is fresh)
            staged.append(dest)
            shutil.copy(b, dest)
    _say("%s into python/jsmf/: %s" % ("linked" if link else "copied",
                                       ", ".join(os.path.basename(b) for b in built)))


def _clean(staged: List[str]) -> None:
    """python/ as the build found it: setuptools' build/ and egg-info, what _stage copied."""
    for p in staged:
        if os.path.lexists(p):
            os.unlink(p)
    shutil.rmtree(os.path.join(HERE, "build"), ignore_errors=True)
    for d in glob.glob(os.path.join(HERE, "*.egg-info")):
        shutil.rmtree(d, ignore_errors=True)


def _plat_name() -> str:
    return sysconfig.get_platform().replace("-", "_").replace(".", "_")


get_requires_for_build_wheel = _st.get_requires_for_build_wheel
get_requires_for_build_sdist = _st.get_requires_for_build_sdist


def prepare_metadata_for_build_wheel(metadata_directory: str,
                                     config_settings: Optional[Dict[str, Any]] = None) -> str:
    try:
        return str(_st.prepare_metadata_for_build_wheel(metadata_directory, config_settings))
    finally:
        _clean([])


def build_wheel(wheel_directory: str, config_settings: Optional[Dict[str, Any]] = None,
                metadata_directory: Optional[str] = None) -> str:
    # a stale build/lib would go into the wheel with the files of today (a library or module
    # since removed), so setuptools starts from none
    _clean([])
    staged: List[str] = []
    try:
        _stage(config_settings, link=False, staged=staged)
        settings = {k: v for k, v in (config_settings or {}).items() if k != "make-args"}
        opts = settings.get("--build-option") or []
        opts = shlex.split(opts) if isinstance(opts, str) else list(opts)
        settings["--build-option"] = opts + ["--plat-name", _plat_name()]
        return str(_st.build_wheel(wheel_directory, settings, metadata_directory))
    finally:
        _clean(staged)


if hasattr(_st, "build_editable"):  # setuptools >= 64
    get_requires_for_build_editable = _st.get_requires_for_build_editable

    def prepare_metadata_for_build_editable(
            metadata_directory: str, config_settings: Optional[Dict[str, Any]] = None) -> str:
        try:
            return str(_st.prepare_metadata_for_build_editable(metadata_directory,
                                                               config_settings))
        finally:
            _clean([])

    def build_editable(wheel_directory: str, config_settings: Optional[Dict[str, Any]] = None,
                       metadata_directory: Optional[str] = None) -> str:
        _clean([])
        _stage(config_settings, link=True, staged=[])  # the links stay: the package is python/jsmf
        settings = {k: v for k, v in (config_settings or {}).items() if k != "make-args"}
        try:
            return str(_st.build_editable(wheel_directory, settings, metadata_directory))
        finally:
            _clean([])


def build_sdist(sdist_directory: str, config_settings: Optional[Dict[str, Any]] = None) -> str:
    root = source_root()
    if root == CSRC:
        raise BuildError("an sdist is made from the repository, not from an sdist")
    if _libs_in_package():
        raise BuildError("python/jsmf/ holds %s: an sdist carries sources only; remove them "
                         "(rm python/jsmf/libjsmf*.so*)" %
                         ", ".join(os.path.basename(p) for p in _libs_in_package()))
    shutil.rmtree(CSRC, ignore_errors=True)
    try:
        ignore = shutil.ignore_patterns("__pycache__", "*.o", "*.d", "*.so", "*.so.*", "*.a")
        for part in CSRC_PARTS:
            src, dst = os.path.join(root, part), os.path.join(CSRC, part)
            os.makedirs(os.path.dirname(dst), exist_ok=True)
            if os.path.isdir(src):
                shutil.copytree(src, dst, ignore=ignore)
            else:
                shutil.copy2(src, dst)
        return str(_st.build_sdist(sdist_directory, config_settings))
    finally:
        shutil.rmtree(CSRC, ignore_errors=True)
        _clean([])
