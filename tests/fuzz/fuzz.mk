# tests/fuzz/fuzz.mk - fuzzing and sanitizer builds; included by the main Makefile
# after its own variables (PKG, PKGS, LIBS, ALL_CFLAGS, SCHEMA_OBJS, ARCHIVE_OBJS, ALL_OBJS,
# UNIT_TESTS).
#
#   make fuzz                    libFuzzer targets (clang, ASan + UBSan) in build/fuzz/
#   make fuzz-run FUZZ_SECONDS=N run each target N seconds (default 60) on its corpus
#   make fuzz-replay             replay every corpus with gcc + ASan + UBSan (build/replay/);
#                                no clang needed: this is the CI regression test
#   make sanitize                tunefarm and the unit tests with ASan + UBSan (build/san/),
#                                then run the unit tests and a real `tunefarm run` under them
#   make fuzz-corpus-wire        regenerate the wire seeds with the real encoders
# Objects are compiled separately under build/{fuzz,replay,san}/: the in-tree .o files
# belong to the normal build. tests/fuzz/README.md has the details and the results.

FUZZ_TARGETS  := job kernel expr wire archive import t1
FUZZ_CC       ?= clang-14
REPLAY_CC     ?= gcc
FUZZ_SECONDS  ?= 60
# Everything the loaders, decoders and the archive reader use; wire_mpi.c is the
# MPI transport only and would pull MPI into every target.
FUZZ_SCHEMA   := $(filter-out schema/wire_mpi.o,$(SCHEMA_OBJS))
# Only the archive and import targets need HDF5 code; the others stay linkable while the archive changes.
FUZZ_OBJS_archive := $(FUZZ_SCHEMA)
FUZZ_OBJS_import := $(FUZZ_SCHEMA)
FUZZ_OBJS_DEFAULT := $(filter-out $(ARCHIVE_OBJS),$(FUZZ_SCHEMA))
FUZZ_OBJS_t1  := $(FUZZ_OBJS_DEFAULT) tools/t1_expr.o
# A loaded job's strategy and options are checked as the coordinator does first.
FUZZ_OBJS_job := $(FUZZ_OBJS_DEFAULT) $(STRATEGY_OBJS)
SAN_FLAGS     := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
# -O1 after ALL_CFLAGS' -O2: better stacks, still fast; the source tree for the
# shipped kernels the job and kernel targets load.
FUZZ_CFLAGS    = $(ALL_CFLAGS) -O1 -g $(SAN_FLAGS) -I. -DTF_FUZZ_SRC_ROOT='"$(CURDIR)"'
# halt_on_error with -fno-sanitize-recover makes any report fatal. The replay checks
# leaks at exit; HDF5 1.10.8 leaks inside itself on some damaged files (README.md:
# upstream findings) and lsan-hdf5.supp names those HDF5-internal frames, which needs
# full malloc stacks (fast_unwind_on_malloc=0: slower, fine for a replay).
FUZZ_ASAN     := halt_on_error=1:abort_on_error=1:allocator_may_return_null=1
FUZZ_UBSAN    := UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
REPLAY_ENV    := ASAN_OPTIONS=detect_leaks=1:fast_unwind_on_malloc=0:$(FUZZ_ASAN) \
                 LSAN_OPTIONS=suppressions=$(CURDIR)/tests/fuzz/lsan-hdf5.supp:print_suppressions=0 \
                 $(FUZZ_UBSAN)
# libFuzzer options per target: archives are bigger than text inputs, and HDF5's own
# leaks and free lists make libFuzzer's per-input leak check report HDF5 memory there
# (README.md); the archive target checks for HDF5 objects left open instead. One
# in-process job (-jobs=1 would only move the output into ./fuzz-0.log).
FUZZ_MAXLEN_archive := 65536
FUZZ_LEAKS_archive  := 0
FUZZ_OPTS      = -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
                 -max_len=$(or $(FUZZ_MAXLEN_$*),8192) -detect_leaks=$(or $(FUZZ_LEAKS_$*),1)

FUZZ_BINS     := $(FUZZ_TARGETS:%=build/fuzz/fuzz_%)
REPLAY_BINS   := $(FUZZ_TARGETS:%=build/replay/replay_%)

.PHONY: fuzz fuzz-run fuzz-replay sanitize fuzz-corpus-wire
fuzz: $(FUZZ_BINS)

# Chains of pattern rules would make these intermediate (deleted after the link).
.SECONDARY: $(FUZZ_SCHEMA:%=build/fuzz/%) $(FUZZ_SCHEMA:%=build/replay/%) \
            $(STRATEGY_OBJS:%=build/fuzz/%) $(STRATEGY_OBJS:%=build/replay/%) \
            $(FUZZ_TARGETS:%=build/fuzz/tests/fuzz/fuzz_%.o) \
            $(FUZZ_TARGETS:%=build/replay/tests/fuzz/fuzz_%.o) build/replay/tests/fuzz/replay.o

build/fuzz/%.o: %.c
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -c $< -o $@

# Second expansion: each target links only the schema objects it uses.
.SECONDEXPANSION:
build/fuzz/fuzz_%: build/fuzz/tests/fuzz/fuzz_%.o $$(addprefix build/fuzz/,$$(or $$(FUZZ_OBJS_$$*),$$(FUZZ_OBJS_DEFAULT)))
	$(FUZZ_CC) $(SAN_FLAGS) -fsanitize=fuzzer -o $@ $^ $(LIBS)

# Each run grows a working corpus in build/fuzz/corpus/T seeded from the committed
# one (libFuzzer writes new inputs to its first folder only), crashes go to
# build/fuzz/artifacts/T/. Minimise into the committed corpus by hand (README.md):
#   build/fuzz/fuzz_T -merge=1 -use_counters=0 NEWDIR tests/fuzz/corpus/T build/fuzz/corpus/T
fuzz-run: $(FUZZ_BINS)
	@for t in $(FUZZ_TARGETS); do \
	    mkdir -p build/fuzz/corpus/$$t build/fuzz/artifacts/$$t; \
	    echo "== fuzz $$t for $(FUZZ_SECONDS) s"; \
	    $(MAKE) --no-print-directory -f $(firstword $(MAKEFILE_LIST)) fuzz-run-$$t || exit 1; \
	done

fuzz-run-%: build/fuzz/fuzz_%
	ASAN_OPTIONS=detect_leaks=$(or $(FUZZ_LEAKS_$*),1):$(FUZZ_ASAN) $(FUZZ_UBSAN) \
	TF_FUZZ_ROOT=$(CURDIR) $< $(FUZZ_OPTS) -max_total_time=$(FUZZ_SECONDS) \
	    -artifact_prefix=build/fuzz/artifacts/$*/ build/fuzz/corpus/$* tests/fuzz/corpus/$*

build/replay/%.o: %.c
	@mkdir -p $(@D)
	$(REPLAY_CC) $(FUZZ_CFLAGS) -c $< -o $@

build/replay/replay_%: build/replay/tests/fuzz/fuzz_%.o build/replay/tests/fuzz/replay.o \
                       $$(addprefix build/replay/,$$(or $$(FUZZ_OBJS_$$*),$$(FUZZ_OBJS_DEFAULT)))
	$(REPLAY_CC) $(SAN_FLAGS) -o $@ $^ $(LIBS)

# The wire seeds come from the real encoders (tests/fuzz/gen_wire.c).
build/replay/gen_wire: build/replay/tests/fuzz/gen_wire.o $(FUZZ_OBJS_DEFAULT:%=build/replay/%)
	$(REPLAY_CC) $(SAN_FLAGS) -o $@ $^ $(LIBS)

fuzz-corpus-wire: build/replay/gen_wire
	$(REPLAY_ENV) $< tests/fuzz/corpus/wire tests/fixtures/ranked.yaml \
	    tests/unit/fixtures/jobs/tiny.yaml tests/fixtures/faulty.yaml

fuzz-replay: $(REPLAY_BINS)
	@$(REPLAY_ENV) TF_FUZZ_ROOT=$(CURDIR) tests/fuzz/replay.sh build/replay $(FUZZ_TARGETS)

# ---- the whole program and the unit tests under ASan + UBSan ----------------------
SAN_OBJS      := $(ALL_OBJS:%=build/san/%)
SAN_LIB       := build/san/libtunefarm.a
SAN_UNIT_BINS := $(UNIT_TESTS:%=build/san/tests/unit/test_%)
# handle_segv/sigbus/sigfpe=0: the runner and compiler tests crash child processes on
# purpose (a kernel that writes to NULL must be `crashed`, "killed by signal 11");
# ASan's handler would turn each into a report and SIGABRT. A real crash still fails.
SAN_OPTS      := halt_on_error=1:abort_on_error=1:handle_segv=0:handle_sigbus=0:handle_sigfpe=0
SAN_UBSAN     := UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
# Unit tests check leaks; tunefarm itself runs under mpirun, and Open MPI keeps
# allocations until exit by design, so the leak checker is off for the MPI run.
SAN_ENV       := ASAN_OPTIONS=detect_leaks=1:$(SAN_OPTS) $(SAN_UBSAN)
SAN_RUN_ENV   := ASAN_OPTIONS=detect_leaks=0:$(SAN_OPTS) $(SAN_UBSAN)

build/san/%.o: %.c
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -O1 -g $(SAN_FLAGS) -I. -c $< -o $@

$(SAN_LIB): $(filter-out build/san/main.o,$(SAN_OBJS))
	rm -f $@ && ar rcs $@ $^

build/san/tunefarm: build/san/main.o $(SAN_LIB)
	$(CC) $(SAN_FLAGS) -o $@ build/san/main.o $(SAN_LIB) $(LIBS)

build/san/tests/unit/test_%: tests/unit/test_%.c $(SAN_LIB) $(NOCUDA)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -O1 -g $(SAN_FLAGS) -I. $< -o $@ $(SAN_LIB) \
	    $(shell $(PKG) --cflags --libs cmocka) $(LIBS)

# The unit tests, then the sanitized binary end to end: a real run of the
# known-optimum fixture under mpirun (coordinator, worker, runner and compiler
# processes all sanitized) and a query of its archive.
sanitize: build/san/tunefarm $(SAN_UNIT_BINS)
	@$(SAN_ENV) tests/run_unit.sh $(SAN_UNIT_BINS)
	@rm -rf build/san/run && mkdir -p build/san/run
	@$(SAN_RUN_ENV) build/san/tunefarm run -q -n 1 tests/fixtures/ranked.yaml \
	    -o build/san/run/ranked.h5 >build/san/run/run.log 2>&1 && \
	 $(SAN_RUN_ENV) build/san/tunefarm query build/san/run/ranked.h5 >>build/san/run/run.log 2>&1 || \
	 { cat build/san/run/run.log; echo "== sanitized tunefarm run FAILED"; exit 1; }
	@echo "== sanitized tunefarm run + query of tests/fixtures/ranked.yaml: ok"

-include $(wildcard build/fuzz/*.d build/fuzz/*/*.d build/fuzz/*/*/*.d \
                    build/replay/*.d build/replay/*/*.d build/replay/*/*/*.d \
                    build/san/*.d build/san/*/*.d build/san/*/*/*.d)
