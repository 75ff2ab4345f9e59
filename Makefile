# SPDX-License-Identifier: MIT
# gorila: one flat Makefile.
#
#   make              build/gorila, the unit-test binary and the MPI test programs
#   make gorila       build/gorila alone (no test dependency: Criterion not needed)
#   make install      build/gorila to PREFIX/bin (default /usr/local), the scripts,
#                     tools, configs, docs and license to PREFIX/share/gorila
#                     (DESTDIR=dir stages it); make uninstall removes them
#   make check        the fast tier, no MPI job: layer check, unit tests and the
#                     CLI tests (tests/cli); ends with "N passed, N failed"
#   make test         the whole suite: make check's tiers and the MPI integration
#                     tests (tests/mpi: real mpirun jobs)
#   make check-layers compile each layer with only the include paths it may use,
#                     each room of src/core with only its own private headers
#   make check-cycles no cycle between the object files (both run in make check and test)
#   make test-asan    the same unit and CLI tests built with ASan + UBSan (build-asan/)
#   make test-kernels the unit tests and the number-comparing scripts once per
#                     OpenBLAS kernel this CPU can run (KERNELS="Haswell Zen" picks)
#   make fuzz         libFuzzer target for the config loader (clang), FUZZ_SECONDS=60 to run
#   make run          build, then a short training run on the default config
#   make deps         install the Debian packages (scripts/install-deps.sh)
#
# Layers (docs/ARCHITECTURE.md): src/base <- envs, agents <- src/core <-
# src/mpi (the only MPI code) <- src/cli (the binary only, not libgorila.a);
# src/pyenv (the Python bridge, over base and envs only) <- src/cli.
#
# BUILD=dir puts every output under dir (default build/); nothing is written
# elsewhere (but by make install).
#
# Where the compiler and libraries are (docs/MULTIHOST.md, "Building on a
# cluster without root"), on the command line or in the environment:
#   MPICC=cmd         the MPI compiler wrapper (default mpicc; CC= as well)
#   PKG_CONFIG_PATH=dir:...  where pkg-config looks first for openblas.pc and
#                     yaml-0.1.pc (PKG_CONFIG_LIBDIR: instead of its own path)
#   BLAS_PREFIX=dir   OpenBLAS under dir/include and dir/lib (not pkg-config)
#   YAML_PREFIX=dir   libyaml under dir/include and dir/lib (not pkg-config)
#   BLAS_CFLAGS=... BLAS_LIBS=...  YAML_CFLAGS=... YAML_LIBS=...  given outright
#   RPATH=1           the binaries find those libraries where they were linked
#                     (-Wl,-rpath for every -L directory), no LD_LIBRARY_PATH Warnings are errors. Floating point is reproducible: no
# fast-math and no contraction of a*b+c into fused multiply-adds.

BUILD    ?= build
MPICC    ?= mpicc
CC       := $(MPICC)
OPT      ?= -O2
SAN      ?=
DEPFLAGS := -MMD -MP
WARN     := -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes
# Include paths per layer: a layer sees its own folder and those below it.
# MinAtar (envs/minatar, GPL-3.0-or-later): in the library when MINATAR=1
# (the default; the binary is then GPL-3.0-or-later as a whole, and says so
# in `gorila version`); `make MINATAR=0` builds an MIT-only binary without
# it. Switching rebuilds what depends on it (the minatar-build stamp).
MINATAR ?= 1
ifeq ($(MINATAR),1)
MINATAR_SRC := $(wildcard envs/minatar/*.c)
MINATAR_INC := -Ienvs/minatar
MINATAR_DEFS := -DGORILA_MINATAR=1 -DGORILA_LICENSE='"GPL-3.0-or-later"'
else
MINATAR_SRC :=
MINATAR_INC :=
MINATAR_DEFS :=
endif

# The Python bridge (src/pyenv): an embedded CPython steps environments
# with the Gymnasium API (env.name python:MODULE:CALLABLE or gymnasium:ID),
# linked with Debian's libpython3.11 (PYTHON_CONFIG; the python3 first on
# PATH may be another interpreter). `make PYTHON=0` builds without it: such
# ids are then refused at start. Switching rebuilds what depends on it.
PYTHON ?= 1
PYTHON_CONFIG ?= /usr/bin/python3.11-config
ifeq ($(PYTHON),1)
PYENV_SRC := src/pyenv/pyenv.c
PY_CFLAGS := $(shell $(PYTHON_CONFIG) --includes 2>/dev/null)
PY_LIBS   := $(shell $(PYTHON_CONFIG) --embed --ldflags 2>/dev/null)
ifneq ($(filter-out clean deps uninstall,$(or $(MAKECMDGOALS),all)),)
ifeq ($(strip $(PY_LIBS)),)
$(error Python not found: $(PYTHON_CONFIG) --embed gave nothing; install python3.11-dev (make deps), give PYTHON_CONFIG=path, or build without Python: make PYTHON=0)
endif
endif
else
PYENV_SRC := src/pyenv/pyenv_none.c
PY_CFLAGS :=
PY_LIBS   :=
endif

INC_BASE   := -Isrc/base
INC_ENVS   := $(INC_BASE) -Ienvs $(MINATAR_INC)
INC_AGENTS := $(INC_BASE) -Iagents
# src/core is in rooms (docs/ARCHITECTURE.md): each room's public headers
# are on the path of every file above base, envs and agents; a room's
# private/ headers only on its own files' path (PRIV_INC).
CORE_ROOMS := $(sort $(patsubst %/,%,$(dir $(wildcard src/core/*/*.c))))
INC_CORE   := $(INC_ENVS) -Iagents $(addprefix -I,$(CORE_ROOMS))
INC_PYENV  := $(INC_ENVS) -Isrc/pyenv
INC_MPI   := $(INC_CORE) -Isrc/mpi
INC_CLI    := $(INC_MPI) -Isrc/pyenv -Isrc/cli

# pkg-config, given the search path make was given: GNU make before 4.4 runs
# $(shell) in its own environment, without the command line's variables.
PKG_CONFIG ?= pkg-config
PKGCONF = $(foreach v,PKG_CONFIG_PATH PKG_CONFIG_LIBDIR,$(if $($(v)),$(v)='$($(v))')) $(PKG_CONFIG)
# lib_flags NAME PC-NAME LIB: NAME_CFLAGS and NAME_LIBS, unless given: from
# NAME_PREFIX, else from pkg-config (once, here: not at every compile).
define lib_flags
ifneq ($$($(1)_PREFIX),)
ifeq ($$(origin $(1)_CFLAGS),undefined)
$(1)_CFLAGS := -I$$($(1)_PREFIX)/include
endif
ifeq ($$(origin $(1)_LIBS),undefined)
$(1)_LIBS := -L$$($(1)_PREFIX)/lib -l$(3)
endif
endif
ifeq ($$(origin $(1)_CFLAGS),undefined)
$(1)_CFLAGS := $$(shell $$(PKGCONF) --cflags $(2) 2>/dev/null)
endif
ifeq ($$(origin $(1)_LIBS),undefined)
$(1)_LIBS := $$(shell $$(PKGCONF) --libs $(2) 2>/dev/null)
endif
endef
$(eval $(call lib_flags,BLAS,openblas,openblas))
$(eval $(call lib_flags,YAML,yaml-0.1,yaml))
# Every target but these needs both libraries: say so at once, in one line.
ifneq ($(filter-out clean deps uninstall,$(or $(MAKECMDGOALS),all)),)
ifeq ($(strip $(BLAS_LIBS)),)
$(error OpenBLAS not found: pkg-config has no openblas.pc (PKG_CONFIG_PATH="$(PKG_CONFIG_PATH)"); install it (make deps), or give PKG_CONFIG_PATH=DIR, BLAS_PREFIX=DIR or BLAS_CFLAGS=... BLAS_LIBS=... (docs/MULTIHOST.md, "Building on a cluster without root"))
endif
ifeq ($(strip $(YAML_LIBS)),)
$(error libyaml not found: pkg-config has no yaml-0.1.pc (PKG_CONFIG_PATH="$(PKG_CONFIG_PATH)"); install it (make deps), or give PKG_CONFIG_PATH=DIR, YAML_PREFIX=DIR or YAML_CFLAGS=... YAML_LIBS=... (docs/MULTIHOST.md, "Building on a cluster without root"))
endif
endif
LIB_CFLAGS := $(BLAS_CFLAGS) $(YAML_CFLAGS)
# RPATH=1: a run-time search path for every library directory linked with -L.
RPATH ?=
ifneq ($(filter-out 0 no,$(RPATH)),)
RPATH_DIRS := $(patsubst -L%,%,$(filter -L%,$(BLAS_LIBS) $(YAML_LIBS)))
RPATH_FLAGS := $(foreach d,$(RPATH_DIRS),-Wl,-rpath,$(d))
endif
CPPFLAGS := -D_GNU_SOURCE $(INC_CLI) $(LIB_CFLAGS)
BASEFLAGS = -std=c11 $(OPT) -g $(WARN) -ffp-contract=off -fno-fast-math -fno-builtin-pow $(SAN)
LDLIBS   := $(BLAS_LIBS) $(YAML_LIBS) $(PY_LIBS) -lm $(RPATH_FLAGS)
# Only where the unit tests are linked: make gorila needs no Criterion.
TEST_LDLIBS = $(shell $(PKGCONF) --libs criterion)


LAYER_SRC := $(wildcard src/base/*.c envs/*.c agents/*.c src/core/*/*.c) $(MINATAR_SRC)
LIB_SRC  := $(LAYER_SRC) $(PYENV_SRC) $(wildcard src/mpi/*.c)
LIB_OBJ  := $(LIB_SRC:%.c=$(BUILD)/obj/%.o)
CLI_SRC  := $(wildcard src/cli/*.c)
CLI_OBJ  := $(CLI_SRC:%.c=$(BUILD)/obj/%.o)
TEST_SRC := $(filter-out $(if $(MINATAR_SRC),,tests/unit/test_minatar%),$(wildcard tests/unit/test_*.c))
TEST_OBJ := $(TEST_SRC:%.c=$(BUILD)/obj/%.o)
MPI_TEST_SRC := $(wildcard tests/mpi/mpi_*.c tests/bench/mpi_*.c)
MPI_TESTS := $(addprefix $(BUILD)/tests/,$(notdir $(MPI_TEST_SRC:.c=)))

GORILA   := $(BUILD)/gorila
# A build that differs from GORILA only in its source id (tests/mpi/multinode.sh:
# a job with ranks of two builds must refuse to start).
OTHER_BUILD := $(BUILD)/tests/gorila-other-build
UNIT     := $(BUILD)/tests/unit
# Writes conv networks' exports for tests/cli/export_conv.sh (tests/npz).
NPZ_CONV := $(BUILD)/tests/npz_conv
NPZ_OBJ  := $(BUILD)/obj/src/cli/npz.o
LIBA     := $(BUILD)/libgorila.a

.PHONY: all gorila install uninstall check test test-unit test-cli test-mpi test-kernels test-asan check-layers check-cycles fuzz run deps clean
# Keep intermediate objects (the mpi_* test objects are built through a
# chain of pattern rules): no "rm ..." after the test summary line.
.SECONDARY:
all: $(GORILA) $(UNIT) $(MPI_TESTS) $(OTHER_BUILD) $(NPZ_CONV)
gorila: $(GORILA)

# A file's own room's private headers (src/core/ROOM/private), when it has them.
PRIV_INC = $(addprefix -I,$(wildcard $(dir $<)private))
$(BUILD)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(PRIV_INC) $(BASEFLAGS) $(CFLAGS) $(DEPFLAGS) -c $< -o $@

# The source id (src/base/version.h): a hash of every source file and this
# Makefile. Only version.o depends on it, through a stamp file rewritten
# when the id changes.
# The release is the VERSION file (CHANGELOG.md's top entry); in a git
# checkout `gorila version` also says which commit it was built from.
SOURCE_FILES := $(sort $(wildcard src/*/*.c src/*/*.h src/core/*/*.c src/core/*/*.h src/core/*/private/*.h \
    envs/*.c envs/*.h envs/minatar/*.c envs/minatar/*.h agents/*.c agents/*.h)) Makefile VERSION
SOURCE_ID := $(shell (cat $(SOURCE_FILES); echo MINATAR=$(MINATAR); echo PYTHON=$(PYTHON)) | sha256sum | cut -c1-12)
VERSION := $(shell cat VERSION)
GIT_DESCRIBE := $(shell git describe --tags --always --dirty 2>/dev/null)
VERSION_DEFS = -DGORILA_VERSION='"$(VERSION)"' -DGORILA_GIT_DESCRIBE='"$(GIT_DESCRIBE)"'
VERSION_STAMP := $(SOURCE_ID) $(VERSION) $(GIT_DESCRIBE) MINATAR=$(MINATAR) PYTHON=$(PYTHON)
.PHONY: FORCE source-id
# `make -s source-id`: the id this tree's build embeds (tests/cli/version.sh, layers.sh)
source-id:
	@echo $(SOURCE_ID)
$(BUILD)/source-id: FORCE
	@mkdir -p $(dir $@); [ "$$(cat $@ 2>/dev/null)" = "$(VERSION_STAMP)" ] || echo "$(VERSION_STAMP)" > $@
$(BUILD)/obj/src/base/version.o: src/base/version.c $(BUILD)/source-id
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(BASEFLAGS) $(CFLAGS) $(DEPFLAGS) -DGORILA_SOURCE_ID='"$(SOURCE_ID)"' $(VERSION_DEFS) $(MINATAR_DEFS) -c $< -o $@
$(BUILD)/obj/tests/version-other.o: src/base/version.c $(BUILD)/source-id
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(BASEFLAGS) $(CFLAGS) -DGORILA_SOURCE_ID='"0th3r0bui1d0"' $(VERSION_DEFS) $(MINATAR_DEFS) -c $< -o $@
$(BUILD)/minatar-build: FORCE
	@mkdir -p $(dir $@); [ "$$(cat $@ 2>/dev/null)" = "MINATAR=$(MINATAR)" ] || echo "MINATAR=$(MINATAR)" > $@
$(BUILD)/obj/src/cli/cmd_env_minatar.o: CFLAGS += $(MINATAR_DEFS)
$(BUILD)/obj/src/cli/cmd_env_minatar.o: $(BUILD)/minatar-build
# The library holds pyenv.o or pyenv_none.o: remade when PYTHON changes.
$(BUILD)/python-build: FORCE
	@mkdir -p $(dir $@); [ "$$(cat $@ 2>/dev/null)" = "PYTHON=$(PYTHON)" ] || echo "PYTHON=$(PYTHON)" > $@
$(BUILD)/obj/src/pyenv/pyenv.o: CPPFLAGS += $(PY_CFLAGS)
# The registry (envs/env.c) lists the MinAtar environments only when linked.
$(BUILD)/obj/envs/env.o: CFLAGS += $(MINATAR_DEFS)
$(BUILD)/obj/envs/env.o: $(BUILD)/minatar-build
$(BUILD)/obj/tests/unit/test_config.o: CFLAGS += $(MINATAR_DEFS)
$(BUILD)/obj/tests/unit/test_config.o: $(BUILD)/minatar-build
$(OTHER_BUILD): $(CLI_OBJ) $(BUILD)/obj/tests/version-other.o $(LIBA)
	@mkdir -p $(dir $@)
	$(CC) $(BASEFLAGS) $(LDFLAGS) $^ $(LDLIBS) -o $@

# agents/ (the learner's hot loops): full loop vectorization (-O2 only
# vectorizes loops with no remainder) and no errno from sqrtf, so the Adam
# and RMSProp loops vectorize. Neither changes a result: no reassociation,
# no contraction, sqrt is correctly rounded either way.
AGENTS_CFLAGS ?= -fvect-cost-model=dynamic -fno-math-errno
$(BUILD)/obj/agents/%.o: agents/%.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(BASEFLAGS) $(AGENTS_CFLAGS) $(CFLAGS) $(DEPFLAGS) -c $< -o $@

# Tests: Criterion's Test() macro defines functions without prototypes.
# Unit tests are white-box: every room's private headers are on their path.
$(BUILD)/obj/tests/%.o: tests/%.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(addprefix -I,$(wildcard src/core/*/private)) -Itests/npz $(BASEFLAGS) -Wno-missing-prototypes \
	    $(CFLAGS) $(DEPFLAGS) -c $< -o $@

$(LIBA): $(LIB_OBJ) $(BUILD)/python-build
	@rm -f $@
	ar rcs $@ $(LIB_OBJ)

$(GORILA): $(CLI_OBJ) $(LIBA)
	$(CC) $(BASEFLAGS) $(LDFLAGS) $^ $(LDLIBS) -o $@

# The unit tests also link the .npz writer of src/cli (test_npz.c).
$(UNIT): $(TEST_OBJ) $(NPZ_OBJ) $(LIBA)
	@mkdir -p $(dir $@)
	$(CC) $(BASEFLAGS) $(LDFLAGS) $^ $(TEST_LDLIBS) $(LDLIBS) -o $@

$(NPZ_CONV): $(BUILD)/obj/tests/npz/npz_conv.o $(NPZ_OBJ) $(LIBA)
	@mkdir -p $(dir $@)
	$(CC) $(BASEFLAGS) $(LDFLAGS) $^ $(LDLIBS) -o $@

# Multi-rank programs with their own main: tests (TAP from rank 0, run by
# tests/mpi/*.sh) and benchmarks (tests/bench).
$(BUILD)/tests/mpi_%: $(BUILD)/obj/tests/mpi/mpi_%.o $(LIBA)
	@mkdir -p $(dir $@)
	$(CC) $(BASEFLAGS) $(LDFLAGS) $^ $(LDLIBS) -o $@
$(BUILD)/tests/mpi_%: $(BUILD)/obj/tests/bench/mpi_%.o $(LIBA)
	@mkdir -p $(dir $@)
	$(CC) $(BASEFLAGS) $(LDFLAGS) $^ $(LDLIBS) -o $@

# The dependency rule, checked by the compiler: every file of base, envs,
# agents and core compiles with plain gcc (no MPI include path) and only the
# include paths of its own layer, so an include that points up the stack
# (or <mpi.h>) fails; a file of a src/core room sees the public headers of
# every room and the private/ headers of its own only, and no file of the
# library or the binary names a path in a quoted include (which could reach
# another room's private/ through a room's path). Syntax only: no objects
# are written. check-cycles: no cycle among the library's and the
# binary's object files (who calls whom, from nm: a file that uses a
# symbol another defines depends on it; tsort finds any loop).
# LAYER_ONLY="FILE..." checks only those files (tests/cli/layers.sh, whose
# broken copies need only the file it broke checked). The compiles run in
# two workers (every other file each), one per core here.
LAYER_CC ?= gcc
LAYER_FILES = $(LAYER_SRC) $(PYENV_SRC) src/pyenv/pyenv.h $(wildcard src/base/*.h envs/*.h $(if $(MINATAR_SRC),envs/minatar/*.h) agents/*.h src/core/*/*.h src/core/*/private/*.h)
LAYER_PATH_FILES = $(LIB_SRC) $(CLI_SRC) $(wildcard src/*/*.h src/core/*/*.h src/core/*/private/*.h envs/*.h agents/*.h)
layer_pick = $(if $(LAYER_ONLY),$(filter $(LAYER_ONLY),$(1)),$(1))
check-layers:
	@mkdir -p $(BUILD); rm -f $(BUILD)/check-layers.fail; \
	for w in 0 1; do ( i=0; for f in $(call layer_pick,$(LAYER_FILES)); do \
	    i=$$((i + 1)); [ $$((i % 2)) -eq $$w ] || continue; \
	    case $$f in \
	    src/base/*) inc="$(INC_BASE)";; envs/*) inc="$(INC_ENVS)";; \
	    agents/*) inc="$(INC_AGENTS)";; src/pyenv/*) inc="$(INC_PYENV) $(PY_CFLAGS)";; \
	    src/core/*) room=$$(echo "$$f" | cut -d/ -f1-3); inc="$(INC_CORE)"; \
	        if [ -d "$$room/private" ]; then inc="$$inc -I$$room/private"; fi;; \
	    *) inc="$(INC_CORE)";; esac; \
	    if grep -nE '^[[:space:]]*#[[:space:]]*include[[:space:]]*[<"]mpi\.h[">]' $$f; then \
	        echo "check-layers: $$f includes mpi.h: only src/mpi may use MPI"; touch $(BUILD)/check-layers.fail; continue; fi; \
	    $(LAYER_CC) -std=c11 -D_GNU_SOURCE $$inc $(LIB_CFLAGS) -fsyntax-only \
	        -x c $$f 2>$(BUILD)/check-layers.$$w.err || { sed -n 1,3p $(BUILD)/check-layers.$$w.err; \
	        echo "check-layers: $$f does not compile with the include paths of its layer"; touch $(BUILD)/check-layers.fail; }; \
	done ) & done; wait; \
	fail=0; [ ! -e $(BUILD)/check-layers.fail ] || fail=1; \
	for f in $(call layer_pick,$(LAYER_PATH_FILES)); do \
	    if grep -nE '^[[:space:]]*#[[:space:]]*include[[:space:]]*"[^"]*/' $$f; then \
	        echo "check-layers: $$f: a quoted include names a path; name the header alone (its folder is on the include path)"; fail=1; fi; \
	done; \
	if [ $$fail -ne 0 ]; then exit 1; fi; \
	echo "check-layers: base, envs, agents, pyenv and core are MPI-free and include nothing above them; each room's private headers are its own"

check-cycles: $(LIB_OBJ) $(CLI_OBJ)
	@mkdir -p $(BUILD); fail=0; \
	nm -A --defined-only -g $(LIB_OBJ) $(CLI_OBJ) | awk 'NF == 3 { print $$3, substr($$1, 1, index($$1, ":") - 1) }' \
	    | sort -k1,1 >$(BUILD)/check-cycles.defs; \
	nm -A -u $(LIB_OBJ) $(CLI_OBJ) | awk '{ print $$NF, substr($$1, 1, index($$1, ":") - 1) }' | sort -k1,1 \
	    | join - $(BUILD)/check-cycles.defs | awk '$$2 != $$3 { print $$2, $$3 }' | sort -u >$(BUILD)/check-cycles.edges; \
	if ! tsort $(BUILD)/check-cycles.edges >/dev/null 2>$(BUILD)/check-cycles.err; then \
	    sed -e 's|^tsort: $(BUILD)/check-cycles.edges: input contains a loop:|check-cycles: a cycle between object files:|' \
	        -e 's|^tsort: $(BUILD)/obj/|    |' $(BUILD)/check-cycles.err; fail=1; fi; \
	if [ $$fail -ne 0 ]; then exit 1; fi; echo "check-cycles: no cycle between object files"

# Tiers: check starts no MPI job (tests/run-all fails a tests/cli script that
# calls mpirun), test adds tests/mpi.
check: all check-layers check-cycles
	tests/run-all -j2 $(BUILD) unit cli

test: all check-layers check-cycles
	tests/run-all -j2 $(BUILD) unit cli mpi

test-unit: all
	tests/run-all $(BUILD) unit

test-cli: all
	tests/run-all -j2 $(BUILD) cli

test-mpi: all
	tests/run-all $(BUILD) mpi

test-kernels: all
	tests/run-all $(BUILD) kernels

# Sanitizer build in its own directory, so it never mixes with build/.
test-asan:
	$(MAKE) BUILD=build-asan OPT=-O1 SAN="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer" all
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	    LSAN_OPTIONS=suppressions=$(CURDIR)/tests/asan/lsan.supp \
	    tests/run-all -j2 build-asan unit cli

# Fuzz target for the config loader (tests/fuzz; needs clang and
# libclang-rt-14-dev).
FUZZ_SECONDS ?= 0
FUZZ_SRC := $(wildcard src/core/config/*.c) agents/qnet.c agents/conv.c src/base/util.c src/base/clock.c src/base/ctx.c src/base/platform.c src/base/json.c $(wildcard envs/*.c)
fuzz: $(BUILD)/fuzz_config
$(BUILD)/fuzz_config: tests/fuzz/fuzz_config.c $(FUZZ_SRC) src/core/config/config.h src/base/util.h
	@mkdir -p $(dir $@)
	clang -std=c11 -O1 -g -D_GNU_SOURCE $(INC_CORE) -Isrc/core/config/private $(LIB_CFLAGS) \
	    -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
	    tests/fuzz/fuzz_config.c $(FUZZ_SRC) $(LDLIBS) -o $@
	@if [ "$(FUZZ_SECONDS)" -gt 0 ]; then \
	    mkdir -p $(BUILD)/fuzz-corpus && \
	    $@ -max_total_time=$(FUZZ_SECONDS) -max_len=4096 -timeout=5 -rss_limit_mb=2048 \
	       $(BUILD)/fuzz-corpus tests/fixtures/fuzz-seeds; \
	fi

run: all
	scripts/run-compared configs/cartpole.yaml

deps:
	scripts/install-deps.sh

# make install PREFIX=dir: the binary to PREFIX/bin; beside it, in
# PREFIX/share/gorila, the tree the scripts run from (scripts/launch,
# scripts/slurm, tools, configs, docs, tests/simcluster for
# scripts/simcluster, the license, VERSION and CHANGELOG.md where they
# exist), with build/gorila a link to PREFIX/bin/gorila: the scripts find
# the binary there as in a clone. DESTDIR=dir stages the whole of it.
PREFIX   ?= /usr/local
DESTDIR  ?=
INSTALL_BIN   = $(DESTDIR)$(PREFIX)/bin
INSTALL_SHARE = $(DESTDIR)$(PREFIX)/share/gorila
INSTALL_TREES := scripts tools configs docs tests/simcluster
INSTALL_FILES  = $(wildcard LICENSE VERSION CHANGELOG.md README.md)
install: $(GORILA)
	@case "$(PREFIX)" in /*) ;; *) echo "make install: PREFIX must be an absolute path, got \"$(PREFIX)\"" >&2; exit 2;; esac
	install -d "$(INSTALL_BIN)" "$(INSTALL_SHARE)/build"
	install -m 755 $(GORILA) "$(INSTALL_BIN)/gorila"
	install -m 644 $(INSTALL_FILES) "$(INSTALL_SHARE)/"
	@find $(INSTALL_TREES) -name __pycache__ -prune -o -type f -print | while IFS= read -r f; do \
	    if [ -x "$$f" ]; then m=755; else m=644; fi; \
	    install -D -m $$m "$$f" "$(INSTALL_SHARE)/$$f" || exit 1; \
	done
	@if [ -n "$(MINATAR_SRC)" ]; then \
	    install -D -m 644 envs/minatar/COPYING "$(INSTALL_SHARE)/licenses/minatar/COPYING" && \
	    install -D -m 644 envs/minatar/README.md "$(INSTALL_SHARE)/licenses/minatar/README.md"; fi
	ln -sfn ../../../bin/gorila "$(INSTALL_SHARE)/build/gorila"
	@echo "make install: $(INSTALL_BIN)/gorila, and scripts/launch etc. in $(INSTALL_SHARE)"

uninstall:
	rm -f "$(INSTALL_BIN)/gorila"
	rm -rf "$(INSTALL_SHARE)"

clean:
	rm -rf build build-asan

-include $(LIB_OBJ:.o=.d) $(CLI_OBJ:.o=.d) $(TEST_OBJ:.o=.d) $(MPI_TEST_SRC:%.c=$(BUILD)/obj/%.d)
