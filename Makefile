# gorila: one flat Makefile.
#
#   make              build/gorila and the unit-test binary
#   make test         unit, CLI and MPI integration tests; ends with "N passed, N failed"
#   make test-asan    the same unit and CLI tests built with ASan + UBSan (build-asan/)
#   make fuzz         libFuzzer target for the config loader (clang), FUZZ_SECONDS=60 to run
#   make run          build, then a short training run on the default config
#   make deps         install the Debian packages (scripts/install-deps.sh)
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
CPPFLAGS := -D_GNU_SOURCE -Isrc -Ienvs -Iagents $(shell pkg-config --cflags $(PKGS))
BASEFLAGS = -std=c11 $(OPT) -g $(WARN) -ffp-contract=off -fno-fast-math -fno-builtin-pow $(SAN)
LDLIBS   := $(shell pkg-config --libs $(PKGS)) -lm
TEST_LDLIBS := $(shell pkg-config --libs criterion)

LIB_SRC  := $(filter-out src/main.c src/fuzz_%.c,$(wildcard src/*.c envs/*.c agents/*.c))
LIB_OBJ  := $(LIB_SRC:%.c=$(BUILD)/obj/%.o)
TEST_SRC := $(wildcard tests/test_*.c)
TEST_OBJ := $(TEST_SRC:%.c=$(BUILD)/obj/%.o)
MPI_TEST_SRC := $(wildcard tests/mpi_*.c)
MPI_TESTS := $(MPI_TEST_SRC:tests/%.c=$(BUILD)/tests/%)

GORILA   := $(BUILD)/gorila
UNIT     := $(BUILD)/tests/unit
LIBA     := $(BUILD)/libgorila.a

.PHONY: all test test-unit test-cli test-mpi test-asan fuzz run deps clean
# Keep intermediate objects (the mpi_* test objects are built through a
# chain of pattern rules): no "rm ..." after the test summary line.
.SECONDARY:
all: $(GORILA) $(UNIT) $(MPI_TESTS)

$(BUILD)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(BASEFLAGS) $(CFLAGS) $(DEPFLAGS) -c $< -o $@

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

$(GORILA): $(BUILD)/obj/src/main.o $(LIBA)
	$(CC) $(BASEFLAGS) $(LDFLAGS) $^ $(LDLIBS) -o $@

$(UNIT): $(TEST_OBJ) $(LIBA)
	@mkdir -p $(dir $@)
	$(CC) $(BASEFLAGS) $(LDFLAGS) $^ $(TEST_LDLIBS) $(LDLIBS) -o $@

# Multi-rank test programs (own main, TAP from rank 0), run by tests/mpi/*.sh.
$(BUILD)/tests/mpi_%: $(BUILD)/obj/tests/mpi_%.o $(LIBA)
	@mkdir -p $(dir $@)
	$(CC) $(BASEFLAGS) $(LDFLAGS) $^ $(LDLIBS) -o $@

test: all
	tests/run-all $(BUILD) unit cli mpi

test-unit: all
	tests/run-all $(BUILD) unit

test-cli: all
	tests/run-all $(BUILD) cli

test-mpi: all
	tests/run-all $(BUILD) mpi

# Sanitizer build in its own directory, so it never mixes with build/.
test-asan:
	$(MAKE) BUILD=build-asan OPT=-O1 SAN="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer" all
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	    tests/run-all build-asan unit cli

# Fuzz target for the config loader (needs clang and libclang-rt-14-dev).
FUZZ_SECONDS ?= 0
FUZZ_SRC := src/config.c src/util.c src/ctx.c $(wildcard envs/*.c)
fuzz: $(BUILD)/fuzz_config
$(BUILD)/fuzz_config: src/fuzz_config.c $(FUZZ_SRC) src/config.h src/util.h
	@mkdir -p $(dir $@)
	OMPI_CC=clang $(CC) -std=c11 -O1 -g -D_GNU_SOURCE -Isrc $(shell pkg-config --cflags yaml-0.1) \
	    -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
	    src/fuzz_config.c $(FUZZ_SRC) $(shell pkg-config --libs yaml-0.1) -lm -o $@
	@if [ "$(FUZZ_SECONDS)" -gt 0 ]; then \
	    mkdir -p $(BUILD)/fuzz-corpus && \
	    $@ -max_total_time=$(FUZZ_SECONDS) -max_len=4096 -timeout=5 -rss_limit_mb=2048 \
	       $(BUILD)/fuzz-corpus tests/fuzz-seeds; \
	fi

run: all
	scripts/launch configs/cartpole.yaml

deps:
	scripts/install-deps.sh

clean:
	rm -rf build build-asan

-include $(LIB_OBJ:.o=.d) $(TEST_OBJ:.o=.d) $(MPI_TEST_SRC:%.c=$(BUILD)/obj/%.d) $(BUILD)/obj/src/main.d
