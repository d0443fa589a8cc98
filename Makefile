# tunefarm - distributed GPU kernel tuning farm.
#   make              build ./tunefarm
#   make test         build and run every test (unit, integration, MPI, fault matrix, Slurm)
#   make check-faults the fault matrix: kills, hangs, full disk, bad archives, resume
#   make slurm        sbatch templates (hetjob included) on a Slurm cluster of two nodes on localhost
#   make check-scale  64 ranks over those two nodes (exactly once, ranks killed, requeue), a compile rank on node 1
#   make fuzz-replay  every fuzz corpus through its target, built with ASan + UBSan (gcc)
#   make sanitize     tunefarm and the unit tests built with ASan + UBSan, run
#   make fuzz         the libFuzzer targets (clang); make fuzz-run FUZZ_SECONDS=N
#   make install      install under $(PREFIX) (honours DESTDIR)
#   make bench-space  build and run the enumeration benchmark
# Dependencies come from the distribution through pkg-config (scripts/deps.sh installs them).

PREFIX    ?= /usr/local
BINDIR    ?= $(PREFIX)/bin
SHAREDIR  ?= $(PREFIX)/share/tunefarm
LIBDIR    ?= $(PREFIX)/lib/tunefarm
CC        := mpicc
SHCC      ?= cc
PKG       ?= pkg-config
HDF5_PC   := $(shell $(PKG) --exists hdf5 && echo hdf5 || echo hdf5-serial)
PKGS      := yaml-0.1 $(HDF5_PC) hwloc jansson zlib lapacke
VERSION   := $(shell git describe --always --dirty 2>/dev/null || echo 0.1)

CFLAGS    ?= -O2 -g
WARNINGS  := -Wall -Wextra -Wshadow -Wpedantic -Wmissing-prototypes
ALL_CFLAGS = -std=c11 -D_GNU_SOURCE -fopenmp-simd $(WARNINGS) $(CFLAGS) $(shell $(PKG) --cflags $(PKGS)) \
             -DTF_VERSION='"$(VERSION)"' -DTF_KERNEL_DIR='"$(SHAREDIR)/kernels"' -DTF_LIB_DIR='"$(LIBDIR)"' -MMD -MP
LIBS      := $(shell $(PKG) --libs $(PKGS)) -ldl -lpthread -lm

# The archive module, one idea a file (schema/archive_internal.h lists them), the
# exchange formats that read and write archives through it (export.c, import.c), and
# what compares archives (diff.c): objects that need HDF5.
ARCHIVE_OBJS := schema/archive.o schema/archive_merge.o schema/archive_validate.o \
               schema/archive_layout.o schema/archive_table.o schema/archive_h5.o \
               schema/archive_write.o schema/archive_read.o \
               schema/export.o schema/import.o schema/diff.o
SCHEMA_OBJS := schema/error.o schema/status.o schema/hash.o schema/device.o schema/result.o \
               schema/defines.o \
               schema/bundle.o schema/yamldoc.o schema/expr.o schema/kernel.o schema/job.o \
               schema/space.o schema/wire.o schema/wire_mpi.o $(ARCHIVE_OBJS) \
               schema/ktcache.o schema/exchange.o schema/parammap.o schema/replace.o \
               schema/version.o
# The search strategies stand alone (schema objects and LAPACKE): the job fuzzer links them.
STRATEGY_OBJS := coordinator/strategy.o coordinator/strategy_brute_force.o \
               coordinator/strategy_random.o coordinator/strategy_genetic.o \
               coordinator/strategy_local.o coordinator/strategy_bayes.o \
               coordinator/strategy_hybrid.o
COORD_OBJS  := coordinator/coordinator.o coordinator/plan.o coordinator/progress.o \
               coordinator/report.o coordinator/journal.o coordinator/session.o coordinator/diffcmd.o \
               $(STRATEGY_OBJS)
WORKER_OBJS := worker/worker.o worker/backends.o worker/backend_host.o worker/cache.o \
               worker/compile.o worker/compiler.o worker/channel.o worker/runner.o \
               worker/runner_child.o worker/runner_shield.o worker/runner_guard.o \
               worker/measure.o worker/verify.o worker/gpu_backend.o worker/cuda_api.o \
               worker/backend_cuda.o worker/hip_api.o worker/backend_hip.o worker/portability.o \
               worker/precompile.o worker/backend_replay.o \
               worker/provenance.o worker/energy.o worker/rapl.o
TOOLS_OBJS  := tools/space_tool.o tools/exchange_tool.o tools/outfile.o tools/best.o tools/svg.o \
               tools/html_report.o tools/t1_expr.o tools/t1_tool.o
MAIN_OBJS   := main.o
LIB         := build/libtunefarm.a
# The CUDA driver as compiler processes see it (worker/nocuda.c), beside the build.
NOCUDA      := build/libtunefarm-nocuda.so
ALL_OBJS    := $(SCHEMA_OBJS) $(COORD_OBJS) $(WORKER_OBJS) $(TOOLS_OBJS) $(MAIN_OBJS)

UNIT_TESTS  := expr loader space wire archive journal report measure verify host runner compiler cuda hip \
               portability strategy ktcache replay exchange export import parammap \
               provenance session diff best html_report energy rapl t1 replace progress
UNIT_BINS   := $(UNIT_TESTS:%=tests/unit/test_%)

.PHONY: all test check unit integration check-faults slurm check-scale install uninstall clean bench-space deps \
        bench-strategy
all: tunefarm

# The version lives in schema/version.o alone, rebuilt when `git describe`
# changes: the stamp is rewritten only then (every build dir's copy depends on it).
build/version.stamp: FORCE
	@mkdir -p build
	@echo '$(VERSION)' | cmp -s - $@ || echo '$(VERSION)' >$@
schema/version.o build/san/schema/version.o build/fuzz/schema/version.o \
build/replay/schema/version.o: build/version.stamp
.PHONY: FORCE
FORCE:

%.o: %.c
	$(CC) $(ALL_CFLAGS) -c $< -o $@

$(LIB): $(SCHEMA_OBJS) $(COORD_OBJS) $(WORKER_OBJS) $(TOOLS_OBJS)
	@mkdir -p build
	rm -f $@ && ar rcs $@ $^

tunefarm: $(MAIN_OBJS) $(LIB) $(NOCUDA)
	$(CC) $(LDFLAGS) -o $@ $(MAIN_OBJS) $(LIB) $(LIBS)

# Plain cc, not mpicc: nothing of MPI belongs in it. SONAME libcuda.so.1: why in the file.
$(NOCUDA): worker/nocuda.c
	@mkdir -p build
	$(SHCC) -std=c11 $(WARNINGS) $(CFLAGS) $(LDFLAGS) -fPIC -shared -Wl,-soname,libcuda.so.1 $< -o $@

tests/unit/test_%: tests/unit/test_%.c $(LIB) $(NOCUDA)
	$(CC) $(ALL_CFLAGS) $(LDFLAGS) -I. $< -o $@ $(LIB) $(shell $(PKG) --cflags --libs cmocka) $(LIBS)

# The archive of tests/unit/report_fixture.h, for the browser test (tests/integration/report.sh).
tests/integration/report_fixture: tests/integration/report_fixture.c tests/unit/report_fixture.h \
                                  tests/unit/archive_fixture.h $(LIB)
	$(CC) $(ALL_CFLAGS) $(LDFLAGS) -I. $< -o $@ $(LIB) $(shell $(PKG) --cflags --libs cmocka) $(LIBS)

bench/space: bench/space.c $(LIB)
	$(CC) $(ALL_CFLAGS) $(LDFLAGS) -I. $< -o $@ $(LIB) $(LIBS)

# What one configuration costs the runner around the variant (bench/results/runner-overhead-*.md).
bench/runner_overhead: bench/runner_overhead.c $(LIB)
	$(CC) $(ALL_CFLAGS) $(LDFLAGS) -I. $< -o $@ $(LIB) $(LIBS)

# Where an energy window's GPU idles (bench/results/energy-window-2026-11-28.md; a CUDA device).
bench/energy_gaps: bench/energy_gaps.c $(LIB)
	$(CC) $(ALL_CFLAGS) $(LDFLAGS) -I. $< -o $@ $(LIB) $(LIBS)

bench/coordinator/warm_seeds: bench/coordinator/warm_seeds.c $(LIB)
	$(CC) $(ALL_CFLAGS) $(LDFLAGS) -I. $< -o $@ $(LIB) $(LIBS)

unit: $(UNIT_BINS)
	@tests/run_unit.sh $(UNIT_BINS)

integration: tunefarm tests/integration/report_fixture
	@tests/integration/run.sh; a=$$?; tests/integration/exchange.sh; b=$$?; \
	 tests/integration/diff.sh; c=$$?; tests/integration/noise_energy.sh; d=$$?; \
	 tests/integration/t1.sh; e=$$?; \
	 [ $$a -eq 0 ] && [ $$b -eq 0 ] && [ $$c -eq 0 ] && [ $$d -eq 0 ] && [ $$e -eq 0 ]

check-faults: tunefarm
	@tests/faults/run.sh

slurm: tunefarm
	@tests/slurm/run.sh

check-scale: tunefarm
	@tests/slurm/scale.sh

test check: unit integration check-faults slurm check-scale fuzz-replay sanitize

# Counting and listing speed (bench/results/space-listing-*.md); the comparison
# with Kernel Tuner is bench/spaces/kt_space.py (needs kernel_tuner, see its header).
bench-space: bench/space
	for y in bench/space-kernel/kernel.yaml kernels/sgemm/kernel.yaml bench/spaces/*/kernel.yaml; do \
	    bench/space -a sm_90 $$y || exit 1; done

bench/strategy/study: bench/strategy/study.c $(LIB)
	$(CC) $(ALL_CFLAGS) $(LDFLAGS) -I. $< -o $@ $(LIB) $(LIBS)

# The strategy study (bench/results/strategy-study-*.md): every strategy on the six
# convolution caches, 25 seeds, budgets 0.5/1/2/5 % of the valid space, 8 simulated workers.
STUDY_CACHES ?= $(wildcard ../shared/datasets/benchmark_hub/convolution_milo/[AMW]*[0-9].json.gz)
bench-strategy: bench/strategy/study
	bench/strategy/study -s random,genetic,local,bayes -n 25 -w 8 $(STUDY_CACHES)

install: tunefarm
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(SHAREDIR) $(DESTDIR)$(LIBDIR)
	install -m 755 tunefarm $(DESTDIR)$(BINDIR)/tunefarm
	install -m 644 $(NOCUDA) $(DESTDIR)$(LIBDIR)/libtunefarm-nocuda.so
	cp -R kernels jobs slurm $(DESTDIR)$(SHAREDIR)/

uninstall:
	rm -f $(DESTDIR)$(BINDIR)/tunefarm
	rm -rf $(DESTDIR)$(LIBDIR)
	rm -rf $(DESTDIR)$(SHAREDIR)

deps:
	scripts/deps.sh test

clean:
	rm -f tunefarm $(ALL_OBJS) $(ALL_OBJS:.o=.d) $(UNIT_BINS) bench/space bench/runner_overhead bench/energy_gaps bench/strategy/study \
	      bench/coordinator/warm_seeds tests/integration/report_fixture
	rm -rf build

-include $(ALL_OBJS:.o=.d)

# Fuzz targets, their corpora replayed, and the sanitizer build (tests/fuzz).
include tests/fuzz/fuzz.mk
