# SPDX-License-Identifier: MIT
# gorila: one flat Makefile.
#
#   make              build/gorila, the unit-test binary and the MPI test programs
#   make test         layer check, unit, CLI and MPI integration tests; ends with
#                     "N passed, N failed"
#   make check-layers compile each layer with only the include paths it may use
#   make test-asan    the same unit and CLI tests built with ASan + UBSan (build-asan/)
#   make test-kernels the unit tests and the number-comparing scripts once per
#                     OpenBLAS kernel this CPU can run (KERNELS="Haswell Zen" picks)
#   make fuzz         libFuzzer target for the config loader (clang), FUZZ_SECONDS=60 to run
#   make run          build, then a short training run on the default config
#   make deps         install the Debian packages (scripts/install-deps.sh)
#
# Layers (docs/ARCHITECTURE.md): src/base <- envs, agents <- src/core <-
# src/mpi (the only MPI code) <- src/cli (the binary only, not libgorila.a).
#
# BUILD=dir puts every output under dir (default build/); nothing is written
# elsewhere. Warnings are errors. Floating point is reproducible: no
# fast-math and no contraction of a*b+c into fused multiply-adds.

BUILD    ?= build
CC       := mpicc
OPT      ?= -O2
SAN      ?=
PKGS     := openblas yaml-0.1
DEPFLAGS := -MMD -MP
WARN     := -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes
# Include paths per layer: a layer sees its own folder and those below it.
INC_BASE   := -Isrc/base
INC_ENVS   := $(INC_BASE) -Ienvs
INC_AGENTS := $(INC_BASE) -Iagents
INC_CORE   := $(INC_BASE) -Ienvs -Iagents -Isrc/core
INC_MPI   := $(INC_CORE) -Isrc/mpi
INC_CLI    := $(INC_MPI) -Isrc/cli
CPPFLAGS := -D_GNU_SOURCE $(INC_CLI) $(shell pkg-config --cflags $(PKGS))
BASEFLAGS = -std=c11 $(OPT) -g $(WARN) -ffp-contract=off -fno-fast-math -fno-builtin-pow $(SAN)
LDLIBS   := $(shell pkg-config --libs $(PKGS)) -lm
TEST_LDLIBS := $(shell pkg-config --libs criterion)

# MinAtar (envs/minatar, GPL-3.0-or-later): in the library when MINATAR=1
# (the default; the binary is then GPL-3.0-or-later as a whole, and says so
# in `gorila version`); `make MINATAR=0` builds an MIT-only binary without
# it. Switching rebuilds what depends on it (the minatar-build stamp).
MINATAR ?= 1
ifeq ($(MINATAR),1)
MINATAR_SRC := $(wildcard envs/minatar/*.c)
MINATAR_DEFS := -DGORILA_MINATAR=1 -DGORILA_LICENSE='"GPL-3.0-or-later"'
else
MINATAR_SRC :=
MINATAR_DEFS :=
endif

LAYER_SRC := $(wildcard src/base/*.c envs/*.c agents/*.c src/core/*.c) $(MINATAR_SRC)
LIB_SRC  := $(LAYER_SRC) $(wildcard src/mpi/*.c)
LIB_OBJ  := $(LIB_SRC:%.c=$(BUILD)/obj/%.o)
CLI_SRC  := $(filter-out src/cli/fuzz_%.c,$(wildcard src/cli/*.c))
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
LIBA     := $(BUILD)/libgorila.a

.PHONY: all test test-unit test-cli test-mpi test-kernels test-asan check-layers fuzz run deps clean
# Keep intermediate objects (the mpi_* test objects are built through a
# chain of pattern rules): no "rm ..." after the test summary line.
.SECONDARY:
all: $(GORILA) $(UNIT) $(MPI_TESTS) $(OTHER_BUILD)

$(BUILD)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(BASEFLAGS) $(CFLAGS) $(DEPFLAGS) -c $< -o $@

# The source id (src/base/version.h): a hash of every source file and this
# Makefile. Only version.o depends on it, through a stamp file rewritten
# when the id changes.
# The release is the VERSION file (CHANGELOG.md's top entry); in a git
# checkout `gorila version` also says which commit it was built from.
SOURCE_FILES := $(sort $(wildcard src/*/*.c src/*/*.h envs/*.c envs/*.h envs/minatar/*.c envs/minatar/*.h agents/*.c agents/*.h)) Makefile VERSION
SOURCE_ID := $(shell (cat $(SOURCE_FILES); echo MINATAR=$(MINATAR)) | sha256sum | cut -c1-12)
VERSION := $(shell cat VERSION)
GIT_DESCRIBE := $(shell git describe --tags --always --dirty 2>/dev/null)
VERSION_DEFS = -DGORILA_VERSION='"$(VERSION)"' -DGORILA_GIT_DESCRIBE='"$(GIT_DESCRIBE)"'
VERSION_STAMP := $(SOURCE_ID) $(VERSION) $(GIT_DESCRIBE) MINATAR=$(MINATAR)
.PHONY: FORCE
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
$(BUILD)/obj/tests/%.o: tests/%.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(BASEFLAGS) -Wno-missing-prototypes $(CFLAGS) $(DEPFLAGS) -c $< -o $@

$(LIBA): $(LIB_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(GORILA): $(CLI_OBJ) $(LIBA)
	$(CC) $(BASEFLAGS) $(LDFLAGS) $^ $(LDLIBS) -o $@

$(UNIT): $(TEST_OBJ) $(LIBA)
	@mkdir -p $(dir $@)
	$(CC) $(BASEFLAGS) $(LDFLAGS) $^ $(TEST_LDLIBS) $(LDLIBS) -o $@

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
# (or <mpi.h>) fails. Syntax only: no objects are written.
LAYER_CC ?= gcc
check-layers:
	@mkdir -p $(BUILD); fail=0; \
	for f in $(LAYER_SRC) $(wildcard src/base/*.h envs/*.h $(if $(MINATAR_SRC),envs/minatar/*.h) agents/*.h src/core/*.h); do \
	    case $$f in \
	    src/base/*) inc="$(INC_BASE)";; envs/*) inc="$(INC_ENVS)";; \
	    agents/*) inc="$(INC_AGENTS)";; *) inc="$(INC_CORE)";; esac; \
	    if grep -nE '^[[:space:]]*#[[:space:]]*include[[:space:]]*[<"]mpi\.h[">]' $$f; then \
	        echo "check-layers: $$f includes mpi.h: only src/mpi may use MPI"; fail=1; continue; fi; \
	    $(LAYER_CC) -std=c11 -D_GNU_SOURCE $$inc $(shell pkg-config --cflags $(PKGS)) -fsyntax-only \
	        -x c $$f 2>$(BUILD)/check-layers.err || { sed -n 1,3p $(BUILD)/check-layers.err; \
	        echo "check-layers: $$f does not compile with the include paths of its layer"; fail=1; }; \
	done; \
	if [ $$fail -ne 0 ]; then exit 1; fi; echo "check-layers: base, envs, agents and core are MPI-free and include nothing above them"

test: all check-layers
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
	    tests/run-all -j2 build-asan unit cli

# Fuzz target for the config loader (needs clang and libclang-rt-14-dev).
FUZZ_SECONDS ?= 0
FUZZ_SRC := $(wildcard src/core/config*.c) src/base/util.c src/base/clock.c src/base/ctx.c src/base/platform.c src/base/json.c $(wildcard envs/*.c)
fuzz: $(BUILD)/fuzz_config
$(BUILD)/fuzz_config: src/cli/fuzz_config.c $(FUZZ_SRC) src/core/config.h src/base/util.h
	@mkdir -p $(dir $@)
	clang -std=c11 -O1 -g -D_GNU_SOURCE $(INC_CORE) $(shell pkg-config --cflags yaml-0.1 openblas) \
	    -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
	    src/cli/fuzz_config.c $(FUZZ_SRC) $(shell pkg-config --libs yaml-0.1 openblas) -lm -o $@
	@if [ "$(FUZZ_SECONDS)" -gt 0 ]; then \
	    mkdir -p $(BUILD)/fuzz-corpus && \
	    $@ -max_total_time=$(FUZZ_SECONDS) -max_len=4096 -timeout=5 -rss_limit_mb=2048 \
	       $(BUILD)/fuzz-corpus tests/fixtures/fuzz-seeds; \
	fi

run: all
	scripts/run-compared configs/cartpole.yaml

deps:
	scripts/install-deps.sh

clean:
	rm -rf build build-asan

-include $(LIB_OBJ:.o=.d) $(CLI_OBJ:.o=.d) $(TEST_OBJ:.o=.d) $(MPI_TEST_SRC:%.c=$(BUILD)/obj/%.d)
