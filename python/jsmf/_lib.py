"""_lib.py — libjsmf.so through ctypes: finding the library, the C structs of include/, the
prototypes of the calls the package makes, and library errors as Python exceptions.

ctypes, not cffi or a C extension: nothing to compile (the package is the .py files; no
python3-dev or python3-cffi on the machine), the struct layouts are checked against the
headers by a test (tests/test_layout.py compiles a C program printing offsetof/sizeof), and a
foreign call releases the GIL by itself, so long calls run while other Python threads go on.
"""
from __future__ import annotations

import ctypes
import ctypes.util
import os
from typing import Callable, Dict, Iterator, Optional, Tuple, Union
from ctypes import (CFUNCTYPE, POINTER, Structure, c_char, c_char_p, c_double, c_int,
                    c_size_t, c_uint32, c_uint64, c_void_p)

SOMAJOR = 3
SONAME = "libjsmf.so.%d" % SOMAJOR

# error codes (include/jsmf.h)
OK, EINVAL, ENOMEM, EIO, EFORMAT, ESTORE, EVERSION, EEXIST, EBUSY, ENOSPC, EMISMATCH, \
    ENOTSUP, ENUMERIC, ENOTFOUND, EINTR = range(0, -15, -1)


class JsmfError(Exception):
    """A library call failed: `code` is its JSMF_E* code (negative), `name` the code's short
    text (jsmf_strerror), the message the library's own (jsmf_errmsg_for: it names the file,
    line or offset)."""

    def __init__(self, code: int, message: str, name: str = "") -> None:
        super().__init__(message)
        self.code = code
        self.name = name
        self.message = message


class NotFoundError(JsmfError, FileNotFoundError):
    pass


class ExistsError(JsmfError, FileExistsError):
    pass


class FormatError(JsmfError, ValueError):
    pass


class InvalidError(JsmfError, ValueError):
    pass


class MismatchError(JsmfError, ValueError):
    pass


_CLASSES = {ENOTFOUND: NotFoundError, EEXIST: ExistsError, EFORMAT: FormatError,
            EINVAL: InvalidError, EMISMATCH: MismatchError}


def _candidates() -> Iterator[str]:
    """Where the library is looked for, in order (README, 'Python')."""
    env = os.environ.get("JSMF_LIB")
    if env:
        yield env
        return
    here = os.path.dirname(os.path.abspath(__file__))
    yield os.path.join(here, SONAME)                     # the package's own copy
    build = os.environ.get("JSMF_BUILD") or os.path.join(here, "..", "..", "build")
    yield os.path.normpath(os.path.join(build, SONAME))  # a source checkout's build
    found = ctypes.util.find_library("jsmf")
    yield SONAME                                         # the system loader (ldconfig, LD_LIBRARY_PATH)
    if found:
        yield found


def _load() -> Tuple[ctypes.CDLL, str]:
    errors = []
    for path in _candidates():
        if os.sep in path and not os.path.exists(path):
            errors.append("%s: no such file" % path)
            continue
        try:
            lib = ctypes.CDLL(path)
        except OSError as e:
            errors.append(str(e))
            continue
        return lib, path
    raise ImportError("jsmf: libjsmf.so not found (set JSMF_LIB to its path, or build it with "
                      "'make'): " + "; ".join(errors))


lib, LIBRARY_PATH = _load()


def _point_plugins_at_library() -> None:
    """The CUDA and MPI plugins are looked for beside the running program, in the build
    directory compiled in, then in LIBDIR; the program here is python3, so a plugin beside the
    library this package loaded is named through the library's own overrides (unless set)."""
    d = os.path.dirname(os.path.realpath(LIBRARY_PATH)) if os.sep in LIBRARY_PATH else None
    if not d:
        return
    for env, name in (("JSMF_CUDA_LIB", "libjsmf_cuda.so"), ("JSMF_MPI_LIB", "libjsmf_mpi.so")):
        p = os.path.join(d, name)
        if not os.environ.get(env) and os.path.exists(p):
            os.environ[env] = p


_point_plugins_at_library()

# ---- structs (include/*.h; tests/test_layout.py compares them with the C compiler's) --------

u32, u64, f64 = c_uint32, c_uint64, c_double
PROGRESS_FN = CFUNCTYPE(None, c_void_p, c_char_p, c_double, c_double, c_char_p)
WARN_FN = CFUNCTYPE(None, c_void_p, c_char_p)


class Vocab(Structure):
    _fields_ = [("n", u32), ("words", POINTER(c_char_p)), ("df", POINTER(u64)),
                ("tf", POINTER(u64))]


class Source(Structure):
    _fields_ = [("n", u32), ("nnz", u64), ("ctx", c_void_p), ("scan", c_void_p),
                ("bytes", u64), ("scan_rows", c_void_p), ("docs", c_void_p)]


class Csr(Structure):
    _fields_ = [("n", u32), ("rowptr", POINTER(u64)), ("cols", POINTER(u32)),
                ("vals", POINTER(f64))]


class StoreStats(Structure):
    _fields_ = [("n_words", u32), ("docs", u64), ("docs_dropped", u64), ("tokens", u64),
                ("tokens_dropped", u64), ("oov_tokens", u64), ("nnz", u64),
                ("min_doc_len", u32), ("n_inputs", u32), ("format_version", u32),
                ("fingerprint", u64), ("bytes", u64), ("runs", u32), ("nnz_exact", c_int),
                ("hold", u32), ("doc_nnz", u64), ("doc_bytes", u64),
                ("reserved", u64 * 16)]


class StoreCheck(Structure):
    _fields_ = [("entries", u64), ("bytes", u64), ("sum", f64), ("digest", u64),
                ("seconds", f64), ("docs", u64), ("doc_entries", u64), ("doc_digest", u64),
                ("reserved", u64 * 16)]


class StoreParams(Structure):
    _fields_ = [("min_doc_len", u32), ("tok_min_len", u32), ("tok_max_len", u32), ("hold", u32),
                ("reserved", u64 * 8)]


class StoreRule(Structure):
    _fields_ = [("state", c_int), ("min_df", u64), ("max_df_frac", f64), ("max_words", u64),
                ("stopwords", c_char * 8),
                ("reserved", u64 * 8)]


RULE_GROW = 1  # JSMF_RULE_GROW: the store admits words by its rule


class StoreInput(Structure):
    _fields_ = [("fingerprint", u64), ("occurrence", u32), ("state", u32), ("format", u32),
                ("size", u64), ("next_offset", u64), ("next_line", u64), ("next_doc", u64),
                ("docs", u64), ("docs_dropped", u64), ("tokens", u64), ("tokens_dropped", u64),
                ("oov_tokens", u64), ("path", c_char * 1024),
                ("reserved", u64 * 8)]


class IngestOpts(Structure):
    _fields_ = [("mem", u64), ("threads", c_int), ("force", c_int), ("format", c_int),
                ("uci_vocab", c_char_p), ("accumulator", c_int), ("checkpoint_secs", f64),
                ("df", POINTER(u64)), ("mem_below_need", c_int), ("progress", PROGRESS_FN),
                ("progress_arg", c_void_p), ("warn", WARN_FN), ("warn_arg", c_void_p),
                ("reserved", u64 * 8)]


class IngestSummary(Structure):
    _fields_ = [("docs", u64), ("docs_dropped", u64), ("tokens", u64), ("tokens_dropped", u64),
                ("oov_tokens", u64), ("pairs", u64), ("flushes", u64), ("dense_width", u32),
                ("doc_buffer", c_int), ("mem_needed", u64), ("oversize_docs", u64),
                ("inputs_done", u32), ("inputs_resumed", u32), ("inputs_skipped", u32),
                ("inputs_repeated", u32), ("seconds", f64), ("seconds_adding", f64),
                ("seconds_checkpoints", f64),
                ("reserved", u64 * 16)]


class VocabStats(Structure):
    _fields_ = [(n, u64) for n in ("docs_read", "docs_counted", "docs_short", "tokens_read",
                                   "tokens_counted", "words_seen", "dropped_min_df",
                                   "dropped_max_df", "dropped_max_words", "words_kept")] + \
        [("reserved", u64 * 16)]


class CommStats(Structure):
    _fields_ = [("bytes_sent", u64), ("calls", u64), ("seconds", f64),
                ("reserved", u64 * 16)]


class IngestDistOpts(Structure):
    _fields_ = [("shard_dir", c_char_p), ("piece_bytes", u64),
                ("reserved", u64 * 8)]


class IngestDistSummary(Structure):
    _fields_ = [("ingest", IngestSummary), ("pieces", u32), ("restarted", c_int),
                ("rounds", u32), ("bytes_received", u64), ("seconds_ingest", f64),
                ("seconds_exchange", f64), ("seconds_commit", f64), ("comm", CommStats),
                ("reserved", u64 * 16)]


class IngestRunOpts(Structure):
    _fields_ = [("ingest", IngestOpts), ("vocab", c_char_p), ("min_doc_len", u32),
                ("min_doc_len_given", c_int), ("hold", u32), ("dist", IngestDistOpts),
                ("counted", c_void_p), ("counted_arg", c_void_p), ("rule", c_char_p),
                ("reserved", u64 * 8)]


class IngestRunSummary(Structure):
    _fields_ = [("vocab", VocabStats), ("ingest", IngestSummary), ("ranks", c_int),
                ("dist", IngestDistSummary), ("words_admitted", u32),
                ("reserved", u64 * 16)]


class Model(Structure):
    pass


Model._fields_ = [("n", u32), ("k", u32), ("vocab", POINTER(Vocab)), ("B", POINTER(f64)),
                  ("A", POINTER(f64)), ("a_uniform", c_int), ("anchors", POINTER(u32)),
                  ("alpha", POINTER(f64)), ("summary_json", c_void_p),
                  ("sub", POINTER(Model)), ("reserved", u64 * 8)]

FIT_MAX_LEVELS = 8
FIT_MAX_TRACE = 1024
FIT_MAX_SKETCH = 32
FIT_DF_AUTO = 2**64 - 1
FIT_FORCE = 1  # JSMF_FIT_FORCE: replace what is at the model directory
REFINE_WHERE_DOCUMENTS = 1  # enum jsmf_refine_when: refine where the store holds its documents


class FitOpts(Structure):
    _fields_ = [("k", u32), ("rectify", c_int), ("rectify_iters", u32), ("rectify_tol", f64),
                ("compress_rows", u32), ("sketch_passes", u32), ("sketch_tol", f64),
                ("anchors", c_int), ("fast_dim", u32), ("anchor_space", c_int),
                ("recover", c_int), ("recover_a", c_int), ("admm_lambda", f64),
                ("admm_gamma", f64), ("snls_tol", f64), ("snls_maxit", u32),
                ("min_anchor_df", u64), ("docs", u64), ("threads", c_int), ("seed", u64),
                ("levels", u32 * FIT_MAX_LEVELS), ("mode", c_int), ("mem_bytes", u64),
                ("dense_max_n", u32), ("eig_tol", f64), ("eig_maxit", u32),
                ("eig_step_maxit", u32), ("progress", PROGRESS_FN), ("progress_arg", c_void_p),
                ("comm", c_void_p), ("products", c_int),
                ("reserved", u64 * 8)]


class Metrics(Structure):
    _fields_ = [(n, f64) for n in ("recovery", "approximation", "dominancy", "specificity",
                                   "dissimilarity", "sparsity", "entropy")]


class FitTrace(Structure):
    _fields_ = [("delta", f64), ("shift", f64), ("neg_frac", f64), ("neg_mass", f64),
                ("lambda_min", f64), ("eig_iters", u32)]


class FitReport(Structure):
    _fields_ = [("mode", c_int), ("n", u32), ("k", u32), ("t_load", f64), ("t_rectify", f64),
                ("t_anchors", f64), ("t_recover_b", f64), ("t_recover_a", f64),
                ("t_metrics", f64), ("t_total", f64), ("n_trace", u32),
                ("trace", FitTrace * FIT_MAX_TRACE), ("passes", u64), ("c_scans", u64),
                ("c_scan_secs", f64), ("c_bytes", u64), ("ranks", c_int),
                ("rank_rows_min", u32), ("rank_rows_max", u32), ("comm_bytes_sent", u64),
                ("comm_calls", u64), ("comm_seconds", f64), ("snls_iters", u64),
                ("snls_unconverged", u32), ("a_raw_sum", f64), ("alpha0", f64),
                ("anchor_df", u64), ("anchor_candidates", u32), ("final_neg_frac", f64),
                ("final_neg_mass", f64), ("metrics", Metrics), ("c_metrics_skipped", c_int),
                ("recovery_rect", f64), ("approximation_rect", f64), ("levels", u32),
                ("rectify", c_int), ("converged", c_int), ("compress_rows", u32),
                ("eig_start", c_int), ("c_documents", c_int),
                ("n_sketch_within", u32), ("n_sketch_between", u32),
                ("sketch_within", f64 * FIT_MAX_SKETCH), ("sketch_between", f64 * FIT_MAX_SKETCH),
                ("anchor_rounds", u32), ("anchors_replaced", u32),  # 3.1.0
                ("mem_plan", u64), ("mem_budget", u64),  # 3.3.0
                ("eig_depth", u32), ("mem_choices", u32), ("eig_cycles_resumed", u64),
                ("reserved", u64 * 27)]


class FdmSamplerInfo(Structure):
    _fields_ = [("n", u32), ("nnz", u64), ("kept", u64), ("thinned", c_int),
                ("dropped_mass", f64), ("total_mass", f64), ("bytes", u64),
                ("build_seconds", f64), ("fingerprint", u64), ("documents", u64),
                ("reserved", u64 * 16)]


class FdmOpts(Structure):
    _fields_ = [("k", u32), ("device", c_int), ("seed", u64), ("steps", u64), ("batch", u32),
                ("lr", f64), ("beta1", f64), ("beta2", f64), ("eps", f64), ("init_kind", c_int),
                ("init_scale", f64), ("starts", u32), ("threads", c_int), ("precision", c_int),
                ("eval_every", u64), ("heldout", u32), ("patience", u32),
                ("lr_halvings", u32), ("tol", f64), ("time_limit", f64),
                ("checkpoint_every", u64), ("checkpoint_seconds", f64),
                ("checkpoint", c_char_p), ("restart", c_int), ("fresh_on_mismatch", c_int),
                ("mem_budget", u64), ("init_B", POINTER(f64)), ("init_A", POINTER(f64)),
                ("init_smooth", f64), ("progress", PROGRESS_FN),
                ("progress_arg", c_void_p), ("stop", POINTER(c_int)),
                ("reserved", u64 * 8)]


class FdmResult(Structure):
    _fields_ = [("n", u32), ("k", u32), ("B", POINTER(f64)), ("A", POINTER(f64)),
                ("steps", u64), ("resumed_from", u64), ("stopped_early", c_int),
                ("time_limited", c_int), ("device", c_char * 96), ("note", c_char * 256),
                ("host_sampling", c_int), ("n_curve", u64), ("curve_step", POINTER(u64)),
                ("curve_train", POINTER(f64)), ("curve_heldout", POINTER(f64)),
                ("best_heldout", f64), ("seconds_train", f64), ("pairs_per_second", f64),
                ("sampler", FdmSamplerInfo),
                ("mem_plan", u64), ("mem_budget", u64),  # 3.4.0
                ("reserved", u64 * 14)]


INFO_FN = CFUNCTYPE(None, c_void_p, c_char_p)


class FdmDirOpts(Structure):
    _fields_ = [("init", c_char_p), ("force", c_int), ("info", INFO_FN), ("info_arg", c_void_p),
                ("reserved", u64 * 8)]


class InferOpts(Structure):
    _fields_ = [("max_iters", u32), ("tol", f64), ("threads", c_int),
                ("reserved", u64 * 8)]


class DocBatch(Structure):
    _fields_ = [("ndocs", u32), ("first_index", u64), ("start", POINTER(u64)),
                ("ids", POINTER(u32)), ("counts", POINTER(u32)), ("oov", POINTER(u64)),
                ("cap_docs", u64), ("cap_ids", u64)]


class DocMetricsResult(Structure):
    _fields_ = [("coherence", f64), ("coherence_topic", POINTER(f64)),
                ("coherence_docs", u64), ("coherence_missing", u64), ("heldout_ll", f64),
                ("heldout_docs", u64), ("heldout_tokens", u64), ("heldout_zero", u64),
                ("oov_tokens", u64), ("heldout_ll_nonzero", f64), ("heldout_smoothing", f64),
                ("heldout_floored", u64),
                ("reserved", u64 * 16)]


class Tokenizer(Structure):
    _fields_ = [("min_len", u32), ("max_len", u32),
                ("reserved", u64 * 4)]


class TopicsOpts(Structure):
    _fields_ = [("name", c_char_p), ("top", u32), ("lambda_", f64), ("level", u32),
                ("format", c_int), ("matrix", c_int),
                ("reserved", u64 * 8)]


class ReportOpts(Structure):
    _fields_ = [("top", u32), ("max_points", u32), ("title", c_char_p),
                ("metrics_json", c_char_p), ("model_path", c_char_p),
                ("reserved", u64 * 8)]


class Lineage(Structure):
    _fields_ = [("k", u32), ("k_prev", u32), ("threshold", f64), ("prev", POINTER(u32)),
                ("l1", POINTER(f64)), ("n_retired", u32), ("retired", POINTER(u32)),
                ("prev_path", c_char_p), ("prev_fingerprint", c_char * 17),
                ("reserved", u64 * 8)]


class DiffWord(Structure):
    _fields_ = [("word", c_char_p), ("before", f64), ("after", f64), ("topic", u32),
                ("reserved", u64 * 2)]


class DiffTopic(Structure):
    _fields_ = [("topic", u32), ("prev", u32), ("l1", f64), ("size", f64), ("size_prev", f64),
                ("n_rising", u32), ("n_falling", u32), ("rising", POINTER(DiffWord)),
                ("falling", POINTER(DiffWord)),
                ("reserved", u64 * 2)]


class Diff(Structure):
    _fields_ = [("lineage", Lineage), ("recorded", c_int), ("n_topics", u32),
                ("topics", POINTER(DiffTopic)), ("n_continuing", u32), ("n_new", u32),
                ("n_retired", u32), ("n_new_words", u32), ("new_words", POINTER(DiffWord)),
                ("reserved", u64 * 8)]


class DiffOpts(Structure):
    _fields_ = [("top", u32), ("threshold", f64), ("format", c_int), ("old_name", c_char_p),
                ("new_name", c_char_p),
                ("reserved", u64 * 8)]


class ReadOpts(Structure):
    _fields_ = [("format", c_int), ("tok", Tokenizer), ("uci_vocab", c_char_p),
                ("start_offset", u64), ("start_doc", u64), ("start_line", u64),
                ("max_line", u64), ("ldac_vocab_size", u32), ("raw_text", c_int),
                ("warn", WARN_FN), ("warn_arg", c_void_p), ("end_offset", u64),
                ("empty_runs", c_int), ("threads", c_int),
                ("reserved", u64 * 8)]


class DocCsr(Structure):
    _fields_ = [("n", u32), ("n_docs", u64), ("offs", POINTER(u64)), ("ids", POINTER(u32)),
                ("counts", POINTER(u32)), ("admit", POINTER(u64))]


class DocSource(Structure):
    _fields_ = [("n", u32), ("n_docs", u64), ("nnz", u64), ("tokens", u64),
                ("admit", POINTER(u64)), ("total", f64), ("ctx", c_void_p), ("scan", c_void_p),
                ("bytes", u64)]


class RefineOpts(Structure):
    _fields_ = [("iters", u32), ("theta_steps", u32), ("alpha", f64), ("beta", f64),
                ("mix", f64), ("method", c_int), ("threads", c_int),
                ("progress", PROGRESS_FN), ("progress_arg", c_void_p), ("batches", u32),
                ("tol", f64), ("overrelax", f64), ("learn_alpha", c_int),
                ("prior", POINTER(f64)), ("prior_counts", POINTER(f64)),  # 3.2.0
                ("min_iters", u32),
                ("mem_bytes", u64), ("scratch_dir", c_char_p),  # 3.3.0
                ("reserved", u64 * 3)]


REFINE_ALPHA = {False: 0, True: 1, "auto": 2}  # JSMF_REFINE_ALPHA_FIXED, _LEARN, _AUTO
REFINE_START_AUTO, REFINE_START_SPECTRAL = 0, 1  # jsmf_refine_run_opts.start (3.2.0)


class RefineResult(Structure):
    _fields_ = [("iters", u32), ("objective", POINTER(f64)), ("docs", u64), ("tokens", u64),
                ("seconds", f64), ("bytes", u64), ("docs_dropped", u64), ("over_store", c_int),
                ("over_mem", u64),  # 3.1.0
                ("warm", c_int), ("admitted", u32),  # 3.2.0
                ("theta_file", u64),  # 3.3.0
                ("reserved", u64 * 11)]


class RefineRunOpts(Structure):
    _fields_ = [("refine", RefineOpts), ("read", ReadOpts), ("corpus", POINTER(c_char_p)),
                ("n_corpus", u32), ("min_doc_len", u32),
                ("when", c_int),  # 3.1.0
                ("start", c_int), ("prior_weight", f64),  # 3.2.0
                ("reserved", u64 * 6)]


# The C names of the structs, for the layout test.
C_NAMES = {Vocab: "jsmf_vocab", Source: "jsmf_source", Csr: "jsmf_csr",
           StoreStats: "jsmf_store_stats", StoreCheck: "jsmf_store_check_result",
           StoreParams: "jsmf_store_params", StoreInput: "jsmf_store_input",
           StoreRule: "jsmf_store_rule",
           IngestOpts: "jsmf_ingest_opts", IngestSummary: "jsmf_ingest_summary",
           VocabStats: "jsmf_vocab_stats", CommStats: "jsmf_comm_stats",
           IngestDistOpts: "jsmf_ingest_dist_opts", IngestDistSummary: "jsmf_ingest_dist_summary",
           IngestRunOpts: "jsmf_ingest_run_opts", IngestRunSummary: "jsmf_ingest_run_summary",
           Model: "jsmf_model", FitOpts: "jsmf_fit_opts", Metrics: "jsmf_metrics",
           FitTrace: "jsmf_fit_trace", FitReport: "jsmf_fit_report",
           FdmSamplerInfo: "jsmf_fdm_sampler_info", FdmOpts: "jsmf_fdm_opts",
           FdmResult: "jsmf_fdm_result", FdmDirOpts: "jsmf_fdm_dir_opts",
           InferOpts: "jsmf_infer_opts", DocBatch: "jsmf_docbatch",
           DocMetricsResult: "jsmf_docmetrics_result", Tokenizer: "jsmf_tokenizer",
           TopicsOpts: "jsmf_topics_opts", ReportOpts: "jsmf_report_opts",
           Lineage: "jsmf_lineage", DiffWord: "jsmf_diff_word", DiffTopic: "jsmf_diff_topic",
           Diff: "jsmf_diff", DiffOpts: "jsmf_diff_opts", ReadOpts: "jsmf_read_opts",
           DocCsr: "jsmf_doc_csr", DocSource: "jsmf_doc_source",
           RefineOpts: "jsmf_refine_opts", RefineResult: "jsmf_refine_result",
           RefineRunOpts: "jsmf_refine_run_opts"}
C_FIELD = {"lambda_": "lambda"}

# ---- prototypes ----------------------------------------------------------------------------

P = POINTER
_PROTOS = {
    "jsmf_strerror": (c_char_p, [c_int]),
    "jsmf_errmsg_for": (c_char_p, [c_int]),
    "jsmf_error_clear": (None, []),
    "jsmf_cancel": (None, [c_int]),
    "jsmf_version": (c_char_p, []),
    "jsmf_have_cuda": (c_int, []),
    "jsmf_mem_default": (u64, []),
    "jsmf_mem_parse": (c_int, [c_char_p, c_char_p, c_int, P(u64)]),
    "jsmf_format_name": (c_char_p, [c_int]),
    "jsmf_vocab_free": (None, [P(Vocab)]),
    "jsmf_vocab_load": (c_int, [c_char_p, P(P(Vocab))]),
    "jsmf_vocab_save": (c_int, [c_char_p, P(Vocab)]),
    "jsmf_tokenize": (u32, [P(Tokenizer), c_char_p, c_size_t, c_void_p, c_void_p, c_void_p]),
    "jsmf_stopwords_load": (c_int, [c_char_p, P(P(Vocab))]),
    "jsmf_store_open": (c_int, [c_char_p, c_int, P(c_void_p)]),
    "jsmf_store_close": (None, [c_void_p]),
    "jsmf_store_hold_name": (c_char_p, [u32]),
    "jsmf_store_create": (c_int, [c_char_p, P(Vocab), P(StoreParams), P(c_void_p)]),
    "jsmf_store_stats_get": (c_int, [c_void_p, P(StoreStats)]),
    "jsmf_store_params_get": (c_int, [c_void_p, P(StoreParams)]),
    "jsmf_store_vocab_get": (c_int, [c_void_p, P(P(Vocab))]),
    "jsmf_store_inputs_get": (c_int, [c_void_p, P(P(StoreInput)), P(u32)]),
    "jsmf_store_check": (c_int, [c_void_p, P(StoreCheck)]),
    "jsmf_store_merge": (c_int, [c_char_p, P(c_char_p), u32]),
    "jsmf_store_export": (c_int, [c_char_p, c_char_p, c_int]),
    "jsmf_store_source": (c_int, [c_void_p, P(Source)]),
    "jsmf_store_source_release": (None, [c_void_p]),
    "jsmf_csr_source": (None, [P(Csr), P(Source)]),
    "jsmf_ingest_opts_init": (None, [P(IngestOpts)]),
    "jsmf_ingest_run_opts_init": (None, [P(IngestRunOpts)]),
    "jsmf_ingest_run": (c_int, [c_char_p, P(c_char_p), u32, P(IngestRunOpts), c_void_p,
                                P(IngestRunSummary)]),
    "jsmf_ingest_new": (c_int, [c_void_p, P(IngestOpts), P(c_void_p)]),
    "jsmf_ingest_input": (c_int, [c_void_p, P(StoreInput)]),
    "jsmf_ingest_doc": (c_int, [c_void_p, c_void_p, c_void_p, u32, u64, u64, u64, u64]),
    "jsmf_ingest_doc_words": (None, [c_void_p, c_void_p, c_void_p, c_void_p, u32]),
    "jsmf_ingest_admit": (c_int, [c_void_p, P(u32)]),
    "jsmf_store_rule_get": (c_int, [c_void_p, P(StoreRule)]),
    "jsmf_ingest_input_done": (c_int, [c_void_p]),
    "jsmf_ingest_checkpoint": (c_int, [c_void_p]),
    "jsmf_ingest_finish": (c_int, [c_void_p, P(IngestSummary)]),
    "jsmf_ingest_free": (None, [c_void_p]),
    "jsmf_model_new": (c_int, [u32, u32, P(P(Model))]),
    "jsmf_model_free": (None, [P(Model)]),
    "jsmf_model_save": (c_int, [c_char_p, P(Model), c_int]),
    "jsmf_model_load": (c_int, [c_char_p, P(P(Model))]),
    "jsmf_model_topic_sizes": (None, [P(Model), c_void_p]),
    "jsmf_model_word_marginal": (None, [P(Model), c_void_p]),
    "jsmf_model_top_words_rank": (u32, [P(Model), u32, u32, f64, c_void_p, c_void_p]),
    "jsmf_model_metrics": (c_int, [P(Model), P(Source), P(Metrics)]),
    "jsmf_model_diff": (c_int, [P(Model), P(Model), P(DiffOpts), P(P(Diff))]),
    "jsmf_diff_opts_init": (None, [P(DiffOpts)]),
    "jsmf_diff_free": (None, [P(Diff)]),
    "jsmf_model_lineage_read": (c_int, [P(Model), P(Lineage)]),
    "jsmf_lineage_free": (None, [P(Lineage)]),
    "jsmf_fit_opts_init": (None, [P(FitOpts), u32]),
    "jsmf_fit": (c_int, [P(Source), P(Vocab), P(FitOpts), P(P(Model)), P(FitReport)]),
    "jsmf_fit_summarize": (c_int, [P(Model), P(FitOpts), P(FitReport), c_char_p, c_void_p]),
    "jsmf_fit_to_dir_after": (c_int, [c_char_p, c_char_p, c_char_p, c_int, P(FitOpts),
                                      c_void_p, P(P(Model)), P(FitReport)]),
    "jsmf_fit_rectify_name": (c_char_p, [c_int]),
    "jsmf_fit_anchors_name": (c_char_p, [c_int]),
    "jsmf_fit_recover_name": (c_char_p, [c_int]),
    "jsmf_fdm_opts_init": (None, [P(FdmOpts)]),
    "jsmf_fdm_dir_opts_init": (None, [P(FdmDirOpts)]),
    "jsmf_fdm_to_dir": (c_int, [c_char_p, c_char_p, P(FdmDirOpts), P(FdmOpts), P(FdmResult)]),
    "jsmf_fdm_result_free": (None, [P(FdmResult)]),
    "jsmf_fdm_device_name": (c_char_p, [c_int]),
    "jsmf_infer_opts_init": (None, [P(InferOpts)]),
    "jsmf_theta_fit_batch": (c_int, [P(Model), P(DocBatch), P(InferOpts), c_void_p]),
    "jsmf_docmetrics_new": (c_int, [P(Model), u32, f64, P(InferOpts), P(c_void_p)]),
    "jsmf_docmetrics_add": (c_int, [c_void_p, P(DocBatch)]),
    "jsmf_docmetrics_result_get": (c_int, [c_void_p, P(DocMetricsResult)]),
    "jsmf_docmetrics_free": (None, [c_void_p]),
    "jsmf_report_opts_init": (None, [P(ReportOpts)]),
    "jsmf_report_save": (c_int, [c_char_p, P(Model), P(ReportOpts)]),
    "jsmf_topics_opts_init": (None, [P(TopicsOpts)]),
    "jsmf_read_opts_init": (None, [P(ReadOpts)]),
    "jsmf_doc_csr_source": (c_int, [P(DocCsr), u32, P(DocSource)]),
    "jsmf_doc_csr_source_free": (None, [P(DocSource)]),
    "jsmf_refine_opts_init": (None, [P(RefineOpts)]),
    "jsmf_refine": (c_int, [P(Model), P(DocSource), P(RefineOpts), P(P(Model)),
                            P(RefineResult)]),
    "jsmf_refine_result_free": (None, [P(RefineResult)]),
    "jsmf_refine_method_name": (c_char_p, [c_int]),
    "jsmf_refine_run_opts_init": (None, [P(RefineRunOpts)]),
    "jsmf_refine_to_dir": (c_int, [c_char_p, c_char_p, c_char_p, c_int, P(RefineRunOpts),
                                   P(P(Model)), P(RefineResult)]),
    "jsmf_fit_refine_to_dir": (c_int, [c_char_p, c_char_p, c_char_p, c_int, P(FitOpts),
                                       P(RefineRunOpts), c_void_p, P(P(Model)), P(FitReport),
                                       P(RefineResult)]),
}
for _name, (_res, _args) in _PROTOS.items():
    _f = getattr(lib, _name)
    _f.restype, _f.argtypes = _res, _args


# a path as the package's functions take it (what os.fspath takes)
PathArg = Union[str, bytes, "os.PathLike[str]", "os.PathLike[bytes]"]


def enc(s: object) -> Optional[bytes]:
    """A path or word as the library's bytes (UTF-8; os.fsencode for paths)."""
    if s is None:
        return None
    if isinstance(s, bytes):
        return s
    return os.fsencode(s) if isinstance(s, os.PathLike) else str(s).encode("utf-8")


class Interrupted(KeyboardInterrupt):
    """A call stopped by Ctrl-C (JSMF_EINTR): a KeyboardInterrupt, so that `except Exception`
    does not swallow it, with the library's code and message (where the state was left)."""

    def __init__(self, message: str, code: int = EINTR) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def error_for(rc: int) -> BaseException:
    """The exception for code `rc` of the call that just failed on this thread."""
    msg = lib.jsmf_errmsg_for(rc).decode("utf-8", "replace")
    name = lib.jsmf_strerror(rc).decode()
    if rc == EINTR:
        return Interrupted(msg)
    return _CLASSES.get(rc, JsmfError)(rc, msg, name)


def check(rc: int) -> int:
    """Raise the library's error for a non-zero return code."""
    if rc:
        raise error_for(rc)
    return rc


def version() -> str:
    """The library's version and the features compiled in (jsmf_version), e.g. "3.2.0 (openmp
    openblas lmdb zstd)"."""
    v: bytes = lib.jsmf_version()
    return v.decode()


def names(name_fn: Callable[[int], Optional[bytes]]) -> Dict[str, int]:
    """A choice table {name: value} read from one of the library's name functions
    (jsmf_format_name, jsmf_fit_rectify_name, ...): the names of 0, 1, ... up to the first
    NULL, so the package lists exactly the choices the library has."""
    table: Dict[str, int] = {}
    v = 0
    while True:
        name = name_fn(v)
        if name is None:
            return table
        table[name.decode()] = v
        v += 1
