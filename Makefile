# jsmf — build the library (build/libjsmf.so and build/libjsmf.a), the program (build/jsmf),
# tests and man page.
#   make                 library + program        make test        every test (installs deps)
#   make check-asan      tests under ASan+UBSan   make example     the example end to end
#   make check-fuzz      libFuzzer targets (clang), FUZZ_SECONDS each (default 20)
#   make install PREFIX=/usr/local DESTDIR=       make uninstall
#   make install-python  the Python package into the venv VENV (default build/venv), offline
#   make wheel           the Python package's wheel, with the library, in WHEEL_DIR ($(BUILD)/wheel)
#   V=1 for full command lines; CUDA=auto|yes|no (auto: on when nvcc is found);
#   MPI=auto|yes|no (auto: the MPI plugin is built when mpicc is found).
# User CFLAGS/LDFLAGS add to the required flags, never replace them.

PREFIX  ?= /usr/local
BINDIR  ?= $(PREFIX)/bin
LIBDIR  ?= $(PREFIX)/lib
INCDIR  ?= $(PREFIX)/include
MANDIR  ?= $(PREFIX)/share/man
BUILD   ?= build
CC      ?= cc
PYTHON  ?= /usr/bin/python3
CUDA    ?= auto
MPI     ?= auto
MPICC   ?= $(shell command -v mpicc 2>/dev/null)
NVCC    ?= $(shell command -v nvcc 2>/dev/null || ls $${CUDA_HOME:-/usr/local/cuda}/bin/nvcc 2>/dev/null)

ifeq ($(CUDA),auto)
  CUDA_ON := $(if $(NVCC),yes,no)
else
  CUDA_ON := $(CUDA)
endif

ifeq ($(MPI),auto)
  MPI_ON := $(if $(MPICC),yes,no)
else
  MPI_ON := $(MPI)
endif

ifeq ($(V),1)
  Q :=
else
  Q := @
endif

# OpenBLAS built for OpenMP: our own parallel regions call BLAS, the pthread build would
# oversubscribe the cores.
BLASDIR := /usr/lib/x86_64-linux-gnu/openblas-openmp
PKGS    := lmdb libzstd lapacke libxxhash

comma     := ,
SAN_FLAGS := $(if $(SAN),-fsanitize=address$(comma)undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined,)
OPT       := $(if $(SAN),-O1 -g,-O2 -g)
# FUZZ=1 (make check-fuzz): coverage for libFuzzer in every object, clang only.
FUZZ_FLAGS := $(if $(FUZZ),-fsanitize=fuzzer-no-link,)
# pkg-config is asked when a recipe runs, not when make reads this file: on a fresh machine the
# packages (and their .pc files) arrive only with $(DEPS_OK), a prerequisite of every object, so
# a value taken at parse time would be empty and the link would miss -llmdb -lzstd -llapacke.
PKG_CFLAGS     = $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS       = $(shell pkg-config --libs $(PKGS) 2>/dev/null || echo -llmdb -lzstd -llapacke -lxxhash)
FINAL_CFLAGS   = -std=gnu11 $(OPT) -Wall -Wextra -fopenmp -Iinclude -Isrc -DJSMF_ADVANCED $(SAN_FLAGS) $(FUZZ_FLAGS) \
                 $(PKG_CFLAGS) $(CFLAGS)
FINAL_LDFLAGS := -fopenmp $(SAN_FLAGS) -L$(BLASDIR) -Wl,-rpath,$(BLASDIR) $(LDFLAGS)
LIBS           = $(PKG_LIBS) -lopenblas -lm -lpthread -ldl $(LDLIBS)

LIB_SRC  := $(sort $(filter-out src/cli/% src/mpi/mpi_plugin.c,$(wildcard src/*/*.c)))
CLI_SRC  := $(sort $(wildcard src/cli/*.c))
CU_SRC   := $(sort $(wildcard src/*/*.cu))
TEST_SRC := $(sort $(wildcard tests/unit/test_*.c))
FUZZ_SRC := $(sort $(wildcard tests/fuzz/fuzz_*.c))

# The CUDA back end is a plugin, $(BUILD)/libjsmf_cuda.so, that the library dlopen()s the first
# time a GPU is asked for: linking cuBLAS into the program would cost every 'jsmf' start ~1 s of
# loading 600 MB of libraries, GPU or not. Looked up beside the program, in ../ of it, in this
# build directory, then in $(LIBDIR); JSMF_CUDA_LIB overrides.
ifeq ($(CUDA_ON),yes)
  CUDA_HOME_DIR := $(patsubst %/bin/nvcc,%,$(NVCC))
  CUDA_SO       := $(BUILD)/libjsmf_cuda.so
  FINAL_CFLAGS  += -DJSMF_WITH_CUDA -DJSMF_CUDA_SO_BUILD='"$(abspath $(CUDA_SO))"' \
                   -DJSMF_CUDA_SO_INSTALL='"$(LIBDIR)/libjsmf_cuda.so"'
  LIBS          += -ldl
  CU_OBJ        := $(CU_SRC:%.cu=$(BUILD)/obj/%.o)
  # sm_90 machine code plus compute_90 PTX, which the driver JIT-compiles for newer GPUs.
  NVCCFLAGS     ?= -O2 -gencode arch=compute_90,code=sm_90 -gencode arch=compute_90,code=compute_90
  FINAL_NVCCFLAGS := $(NVCCFLAGS) -std=c++17 -Iinclude -Isrc -DJSMF_ADVANCED -DJSMF_WITH_CUDA \
                     -Xcompiler -fPIC,-Wall,-Wextra
  CUDA_LIBS     := -L$(CUDA_HOME_DIR)/lib64 -Xlinker -rpath,$(CUDA_HOME_DIR)/lib64 -lcublas
endif

# The MPI back end is a plugin too, $(BUILD)/libjsmf_mpi.so (src/mpi/mpi_plugin.c, built with
# mpicc), loaded only when mpirun started the program: jsmf itself never links libmpi, so it
# runs where no MPI runtime is installed. Looked up as the CUDA plugin is; JSMF_MPI_LIB overrides.
ifeq ($(MPI_ON),yes)
  MPI_SO        := $(BUILD)/libjsmf_mpi.so
  FINAL_CFLAGS  += -DJSMF_MPI_SO_BUILD='"$(abspath $(MPI_SO))"' \
                   -DJSMF_MPI_SO_INSTALL='"$(LIBDIR)/libjsmf_mpi.so"'
endif

# Objects depend on the CUDA choice: switching CUDA=yes/no in one build directory rebuilds them
# (the stubs and the .cu objects would not link together otherwise).
CUDA_STAMP := $(BUILD)/.cuda-$(CUDA_ON)

LIB_OBJ  := $(LIB_SRC:%.c=$(BUILD)/obj/%.o)
# The library's objects serve both libjsmf.so and libjsmf.a: position independent, and hidden
# unless include/ declares them JSMF_API, so the shared library exports exactly the public API
# (tests/cli/api_exports.sh) while tests, linked with the static one, still reach internal
# functions. -fno-semantic-interposition lets the library call its public functions directly.
$(LIB_OBJ): LIB_CFLAGS := -fPIC -fvisibility=hidden -fno-semantic-interposition
# libjsmf.so.MAJOR.MINOR.PATCH from include/jsmf.h, soname libjsmf.so.MAJOR (README, "Library
# versions": MAJOR changes with every ABI break).
VERSION  := $(shell sed -n 's/^\#define JSMF_VERSION_STRING "\(.*\)"/\1/p' include/jsmf.h)
SOMAJOR  := $(firstword $(subst ., ,$(VERSION)))
SONAME   := libjsmf.so.$(SOMAJOR)
SO_FILE  := $(BUILD)/libjsmf.so.$(VERSION)
SO_LINKS := $(BUILD)/$(SONAME) $(BUILD)/libjsmf.so
# --help shows the manual: tools/man2help.awk turns man/jsmf.1 into the C table cli_docs.
CLI_DOC  := $(BUILD)/gen/cli_doc.c
CLI_OBJ  := $(CLI_SRC:%.c=$(BUILD)/obj/%.o) $(CLI_DOC:%.c=%.o)
TEST_BIN := $(TEST_SRC:tests/unit/%.c=$(BUILD)/tests/%)
FUZZ_BIN := $(FUZZ_SRC:tests/fuzz/%.c=$(BUILD)/fuzz/%)
DEPS_OK  := $(BUILD)/.deps-ok

.PHONY: install-python wheel python-lib python-stage all deps test check check-asan asan check-fuzz fuzz-bins example install uninstall clean \
        features bench
all: features $(BUILD)/jsmf $(BUILD)/libjsmf.a $(TEST_BIN) $(CUDA_SO) $(MPI_SO) $(BUILD)/baskets

features:
	@echo "jsmf: features openmp openblas lmdb zstd cuda=$(CUDA_ON) mpi=$(MPI_ON)"

# Install the Debian packages the build and tests need, once per build directory.
$(DEPS_OK): tools/install-deps.sh
	$(Q)sh tools/install-deps.sh
	$(Q)mkdir -p $(BUILD) && touch $@
deps: $(DEPS_OK)

$(CUDA_STAMP):
	@mkdir -p $(BUILD) && rm -f $(BUILD)/.cuda-* && touch $@

$(BUILD)/obj/%.o: %.c $(DEPS_OK) $(CUDA_STAMP) $(wildcard include/*.h)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(FINAL_CFLAGS) $(LIB_CFLAGS) -MMD -MP -c $< -o $@

$(CLI_DOC): man/jsmf.1 tools/man2help.awk
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  AWK     $@")
	$(Q)awk -f tools/man2help.awk man/jsmf.1 >$@.tmp && mv $@.tmp $@

$(CLI_DOC:%.c=%.o): $(CLI_DOC) src/cli/cli.h $(DEPS_OK) $(CUDA_STAMP) $(wildcard include/*.h)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(FINAL_CFLAGS) -c $< -o $@

$(BUILD)/obj/%.o: %.cu $(DEPS_OK) $(CUDA_STAMP) $(wildcard include/*.h)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  NVCC    $<")
	$(Q)$(NVCC) $(FINAL_NVCCFLAGS) -MMD -MP -c $< -o $@

$(CUDA_SO): $(CU_OBJ)
	@$(if $(Q),echo "  NVCC-LD $@")
	$(Q)$(NVCC) -shared -o $@ $(CU_OBJ) $(CUDA_LIBS)

$(MPI_SO): src/mpi/mpi_plugin.c src/mpi/comm_plugin.h src/mpi/comm.h include/jsmf_comm.h $(DEPS_OK)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  MPICC   $@")
	$(Q)OMPI_CC=$(CC) $(MPICC) -std=gnu11 $(OPT) -Wall -Wextra -fPIC -shared -Iinclude -Isrc -DJSMF_ADVANCED $(CFLAGS) \
	    -o $@ $< $(LDFLAGS)

$(BUILD)/libjsmf.a: $(LIB_OBJ)
	@$(if $(Q),echo "  AR      $@")
	$(Q)rm -f $@ && ar rcs $@ $^

# The shared library: its soname names the ABI (libjsmf.so.MAJOR), the file its version; the
# two links are what the dynamic linker (the soname) and 'cc -ljsmf' (libjsmf.so) look for.
# -z defs: every symbol it needs is resolved by the libraries named here.
$(SO_FILE): $(LIB_OBJ)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) -shared -Wl,-soname,$(SONAME) $(if $(SAN),,-Wl,-z,defs) $(FINAL_LDFLAGS) -o $@ \
	    $(LIB_OBJ) $(LIBS)
$(SO_LINKS): $(SO_FILE)
	$(Q)ln -sf $(notdir $(SO_FILE)) $(BUILD)/$(SONAME) && ln -sf $(SONAME) $(BUILD)/libjsmf.so

# The program links the shared library, as any user of it does: the linker then refuses a call
# into the library that include/ does not declare. It finds the library beside itself (this
# build directory) or in ../lib of itself (PREFIX/bin and PREFIX/lib after 'make install',
# wherever PREFIX or DESTDIR put them), else in $(LIBDIR).
# Linked, then checked: every command's --help fails, naming the option, when man/jsmf.1 leaves
# out an option of its table (or shows a value an option does not take, or none it takes).
# tools/synth/baskets: the streaming generator of planted basket corpora (tools/bench/million);
# a tool, not part of the library.
$(BUILD)/baskets: tools/synth/baskets.c $(DEPS_OK)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) -std=gnu11 $(OPT) -Wall -Wextra $(SAN_FLAGS) $(PKG_CFLAGS) $(CFLAGS) -o $@ $< \
	    $(SAN_FLAGS) $(LDFLAGS) $(PKG_LIBS) -lm

$(BUILD)/jsmf: $(CLI_OBJ) $(SO_LINKS)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(FINAL_LDFLAGS) -o $@ $(CLI_OBJ) $(BUILD)/$(SONAME) \
	    -Wl,-rpath,'$$ORIGIN:$$ORIGIN/../lib:$(LIBDIR)' $(LIBS)
	$(Q)for c in $$($@ --help | awk '/^commands:/ {on = 1; next} on && /^  [a-z]/ {print $$1}'); do \
	    $@ $$c --help >/dev/null || { rm -f $@; exit 1; }; done

$(BUILD)/tests/%: tests/unit/%.c tests/unit/check.h $(BUILD)/libjsmf.a
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(FINAL_CFLAGS) -Itests/unit -o $@ $< $(BUILD)/libjsmf.a $(FINAL_LDFLAGS) $(LIBS)

$(BUILD)/fuzz/%: tests/fuzz/%.c $(wildcard tests/fuzz/*.h) $(BUILD)/libjsmf.a
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(FINAL_CFLAGS) -D_GNU_SOURCE -fsanitize=fuzzer -o $@ $< $(BUILD)/libjsmf.a $(FINAL_LDFLAGS) $(LIBS)
fuzz-bins: $(FUZZ_BIN)

# A second make after the packages are in: whether mpicc (hence the MPI plugin and its tests)
# exists is decided when this file is read, which on a fresh machine is before they arrive.
test check: deps
	$(Q)$(MAKE) --no-print-directory all
	$(Q)BUILD=$(BUILD) PYTHON=$(PYTHON) sh tests/run.sh

# Sanitizer build in its own directory; reruns the whole suite (LSan stays on).
check-asan asan:
	$(Q)$(MAKE) --no-print-directory BUILD=build-asan SAN=1 CUDA=no MPI=no test

# libFuzzer targets (tests/fuzz/README.md): the library with coverage, ASan and UBSan in its own
# directory, then each target on its seed corpus and FUZZ_SECONDS of new inputs.
FUZZ_SECONDS ?= 20
check-fuzz:
	$(Q)sh tools/install-deps.sh fuzz
	$(Q)$(MAKE) --no-print-directory BUILD=build-fuzz SAN=1 FUZZ=1 CUDA=no MPI=no CC=clang fuzz-bins
	$(Q)sh tests/fuzz/run.sh build-fuzz $(FUZZ_SECONDS)

# The Python package (python/) carries the library (as its soname) and the plugins built here,
# which it loads before any other (python/jsmf/_lib.py). python-lib builds them and lists them
# in $(BUILD)/python-lib.txt: what the package's build backend (python/backend/jsmf_backend.py)
# runs in build-python/ for `pip install ./python`. install-python and wheel take them from
# $(BUILD) instead (python-stage copies them into python/jsmf/, where the backend carries them
# as they are) and remove the copies after.
# install-python: a venv that sees Debian's numpy, scipy and sklearn (--system-site-packages),
# the package installed from the working tree without a package index (--no-build-isolation
# --no-index). wheel: the wheel, which installs into any venv of this platform's Python 3.
VENV      ?= $(BUILD)/venv
WHEEL_DIR ?= $(BUILD)/wheel
PY_LIBS   := $(BUILD)/$(SONAME) $(CUDA_SO) $(MPI_SO)
python-lib: $(SO_LINKS) $(CUDA_SO) $(MPI_SO)
	$(Q)printf '%s\n' $(abspath $(PY_LIBS)) >$(BUILD)/python-lib.txt
python-stage: python-lib
	$(Q)rm -f python/jsmf/libjsmf*.so*
	$(Q)cp -L $(PY_LIBS) python/jsmf/
install-python: python-stage
	$(Q)[ -x $(VENV)/bin/python ] || $(PYTHON) -m venv --system-site-packages $(VENV)
	$(Q)$(VENV)/bin/python -m pip install -q --no-build-isolation --no-index --no-deps \
	    --force-reinstall ./python; rc=$$?; rm -rf python/jsmf/libjsmf*.so*; exit $$rc
	@echo "installed: $(VENV)/bin/python -c 'import jsmf'"
wheel: python-stage
	$(Q)mkdir -p $(WHEEL_DIR) && rm -f $(WHEEL_DIR)/jsmf-*.whl
	$(Q)$(PYTHON) -m pip wheel -q --no-build-isolation --no-index --no-deps ./python \
	    -w $(WHEEL_DIR); rc=$$?; rm -rf python/jsmf/libjsmf*.so*; exit $$rc
	@echo "wheel: $$(ls $(WHEEL_DIR)/jsmf-*.whl)"

example: all
	$(Q)sh examples/run.sh

bench: all
	$(Q)echo "see tools/bench/README.md"

install: all
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(LIBDIR) $(DESTDIR)$(INCDIR) $(DESTDIR)$(MANDIR)/man1
	install -m 755 $(BUILD)/jsmf $(DESTDIR)$(BINDIR)/jsmf
	install -m 644 $(BUILD)/libjsmf.a $(DESTDIR)$(LIBDIR)/libjsmf.a
	install -m 755 $(SO_FILE) $(DESTDIR)$(LIBDIR)/$(notdir $(SO_FILE))
	ln -sf $(notdir $(SO_FILE)) $(DESTDIR)$(LIBDIR)/$(SONAME)
	ln -sf $(SONAME) $(DESTDIR)$(LIBDIR)/libjsmf.so
	$(if $(CUDA_SO),install -m 755 $(CUDA_SO) $(DESTDIR)$(LIBDIR)/libjsmf_cuda.so)
	$(if $(MPI_SO),install -m 755 $(MPI_SO) $(DESTDIR)$(LIBDIR)/libjsmf_mpi.so)
	install -m 644 include/jsmf*.h $(DESTDIR)$(INCDIR)/
	install -m 644 man/jsmf.1 $(DESTDIR)$(MANDIR)/man1/jsmf.1

uninstall:
	rm -f $(DESTDIR)$(LIBDIR)/libjsmf.so $(DESTDIR)$(LIBDIR)/$(SONAME) \
	    $(DESTDIR)$(LIBDIR)/$(notdir $(SO_FILE))
	rm -f $(DESTDIR)$(BINDIR)/jsmf $(DESTDIR)$(LIBDIR)/libjsmf.a $(DESTDIR)$(LIBDIR)/libjsmf_cuda.so $(DESTDIR)$(LIBDIR)/libjsmf_mpi.so $(DESTDIR)$(MANDIR)/man1/jsmf.1
	rm -f $(addprefix $(DESTDIR)$(INCDIR)/,$(notdir $(wildcard include/jsmf*.h)))

clean:
	rm -rf build build-asan build-fuzz build-python

-include $(LIB_OBJ:.o=.d) $(CLI_OBJ:.o=.d) $(CU_OBJ:.o=.d)
