#!/usr/bin/env bash
# bench/gpu.sh - the cuda backend's benchmarks on a GPU machine, in one go.
#
# usage: bench/gpu.sh [SECTION...]   (default: every section)
#   check      device unit tests (test_cuda) and the GPU fault job
#   space      sgemm space (1000 configurations at 1024^3), cold then warm compile cache:
#              configurations/s and GPU duty cycle
#   kt1024     tunefarm vs Kernel Tuner at 1024^3 (compile-bound), same space, same timing
#   kt4096     the same at 4096^3 (GPU-bound)
#   kernels    each GPU kernel's best configuration vs its default (large problems)
#   deep       a two-phase sgemm tune at 4096^3 (1500 screened, top 30 re-measured)
#   search     the deep tune with the local and genetic strategies beside random
#   seeds      the deep tune, random and genetic, with seeds 2028 and 2029 (is genetic's
#              lead over random a property of the strategy or of seed 2027?); SEEDS and
#              SEED_TUNES (e.g. "deep-genetic deep-local deep-bayes deep-hybrid") pick others, RUN_ARGS adds
#              options to `tunefarm run` (e.g. "-n 1": the GPU worker alone)
#   cores      issue 16 item 1: `tunefarm compile -j 16/32/64` (as many as there are cores)
#              with a cold cache, then a cold run with a compile rank, each with
#              bench/compile_sampler.py beside it (how many compiler processes ran at
#              once, on which CPUs, allowed which): is it NVRTC, the machine or the run?
#              then the same run with every pool at all the CPUs (compile_jobs: two
#              pools, twice the CPUs) and a plain `tunefarm run` on GPU 0
#   compilers  why compiling stops scaling: `compile -j 1/32/64` with the cache on disk or
#              in /dev/shm, with and without glibc malloc keeping its memory; vmstat and
#              the sampler (where the compilers wait) beside each
#   machine    the CPUs, memory and cgroup limits the benchmarks run under
#   ab         the deep tune (SEED_TUNES, default "deep-genetic deep-local", seed SEEDS or
#              2028; AB_SECTION=mixed: jobs/default.yaml instead, the `mixed` section)
#              alternating a base tree and this one, ROUNDS times (default 2), on
#              one machine: per run the wall time, GPU duty, the runner's CPU and wait
#              per configuration, and who compared the outputs. The base tree is
#              BASE_TAR (default .device/base.tar: `git archive -o .device/base.tar REV`
#              here before the call); every log ends up in $LOG/ab.tgz (one file, so
#              the device tool brings it back)
#   nvrtc      what one NVRTC compile of an sgemm 4096^3 variant costs, with the options
#              the worker passes and with -minimal (bench/nvrtc_cost.py), one at a time
#              and with every CPU compiling, as compiler processes see NVRTC (no driver)
#   gpus       issue 16 item 2: the sgemm space job (warm cache) with 1, 2, 4, 8 GPU
#              workers (as many as there are GPUs): configurations/s, duty per GPU,
#              scaling efficiency; the same job on each GPU alone: rank correlation
#              between GPUs and the spread of the best configuration's time; then
#              (DEFAULT_JOB=1, default) jobs/default.yaml cold with 1, 2, 4 GPUs;
#              SPACE_JOB=0 skips the sgemm space part; DEFAULT_GPUS="1 4" picks the counts
#   strategies jobs/default.yaml with search.strategy random, local and genetic (cold
#              caches each; STRATEGIES="local hybrid" picks others): per kernel the best
#              found, wall time and duty cycle, side by side (bench/compare_best.py):
#              should the default job switch?
#   baselines  cuBLAS SGEMM, PyTorch SDPA, device-to-device copy (bench/baselines.py)
#   ahead      compiling decoupled from measuring: the Kernel Tuner job at 1024^3 with a
#              cold cache, then `tunefarm compile` on every core and a run with the warm
#              cache: configurations/s and GPU duty cycle of each
#   mixed      jobs/default.yaml: cuda and host workers in one job, one archive
#   energy     100 random sgemm configurations at 4096^3 with an energy window each: the
#              share of ok rows with their energy, the reasons of the others, a launch's
#              energy against NVML's power x its time, and the best GFLOP/J (the deep
#              job's archive too, when `deep` ran before it in the same call)
#   faults     bad variants (illegal address, endless kernel, oversized launch) mixed
#              into the transpose space, then the clean space on the same GPU: every
#              good variant measured, the same best; then a GPU run stopped by
#              SIGTERM and resumed
# KT=0 skips Kernel Tuner in kt1024 / kt4096 (tunefarm's half only). PACK=1 leaves
# only table.txt and logs.tgz (every other log and trace) in $LOG at the end.
# Logs go to $OUT (the device tool's folder) or /tmp/tunefarm-bench; a table of the
# headline numbers is printed at the end. Kernel Tuner and its missing dependencies
# are installed from wheels in .device/wheels (the GPU machine has no network) into
# /tmp/ktpy, never over the system's packages (stage them here with `pip download
# --only-binary=:all: --python-version 3.12 --platform manylinux_2_28_x86_64
# kernel_tuner==1.3.3`, less numpy, pandas and scikit-learn: bayes_opt alone wants
# it and the tree must stay under the device tool's 64 MiB).
set -u
cd "$(dirname "$0")/.."
ROOT=$PWD
LOG=${LOG:-${OUT:-/tmp/tunefarm-bench}}
mkdir -p "$LOG"
WORK=$(mktemp -d /tmp/tf-bench.XXXXXX)
TF="$ROOT/tunefarm"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
SECTIONS=${*:-check space kt1024 kt4096 kernels deep energy baselines ahead mixed faults}
PY=${PYTHON:-python3} # the one with h5py and numpy
export TUNEFARM_PROFILE=1 # each runner prints where its time went (in the logs)
# NVRTC 13 keeps its own cache of compiled programs in the driver's compute cache
# (~/.nv) where a driver is present: without this a "cold" tunefarm cache still
# compiles 10x faster the second time a source is seen (measured: 600 sgemm
# variants in 0.9 s). Off, so cold means cold, for tunefarm and Kernel Tuner alike.
export CUDA_CACHE_DISABLE=${CUDA_CACHE_DISABLE:-1}
TABLE="$LOG/table.txt"
: >"$TABLE"
row() { printf '%-44s %s\n' "$1" "$2" | tee -a "$TABLE"; }

echo "== tunefarm bench/gpu.sh, $(date -u +%Y-%m-%dT%H:%MZ)"
echo "== command: bench/gpu.sh $SECTIONS"
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv,noheader
echo "== $(nproc) CPU cores; $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2)"
make -j"$(nproc)" >"$LOG/build.log" 2>&1 || { echo "build failed"; tail -20 "$LOG/build.log"; exit 1; }
"$TF" devices | tee "$LOG/devices.txt"

# run NAME JOB [tunefarm args]: a run in $WORK with its own compile cache unless
# CACHE is set; keeps the log and prints the summary lines.
run() {
    local name=$1 job=$2; shift 2
    case $job in /*) ;; *) job=$ROOT/$job ;; esac
    # TRACE=1: every worker writes its feed's trace (bench/trace_report.py reads it)
    (cd "$WORK" && XDG_CACHE_HOME=${CACHE:-$WORK/cache-$name} \
        TUNEFARM_TRACE=${TRACE:+$LOG/trace-$name} \
        "$TF" run -q "$job" -o "$WORK/$name.h5" "$@") >"$LOG/$name.log" 2>&1
    [ -z "${TRACE:-}" ] || $PY bench/trace_report.py "$LOG"/trace-"$name".*.csv | tee -a "$LOG/$name.log"
    local rc=$?
    echo "-- $name (exit $rc)"
    grep -E "^(Job|Compile|Duty|Statuses)" "$LOG/$name.log"
    return $rc
}

# Configurations/s and duty cycle (device_time / span) between the first and the last result, read
# from the archive (excludes start-up and the one-time reference computation).
steady() {
    $PY - "$1" <<'PY'
import sys, h5py, numpy as np
with h5py.File(sys.argv[1], "r") as f:
    for name in f["kernels"]:
        d = f["kernels/%s/results" % name][()]
        ok = d["status"] == 0
        span = d["timestamp"].max() - d["timestamp"].min()
        gpu = float(np.nansum(d["device_time"]))
        print("%s: %d results over %.2f s between first and last: %.1f configurations/s, duty cycle %.1f%%"
              % (name, len(d), span, len(d) / span if span > 0 else 0, 100 * gpu / span if span > 0 else 0))
PY
}

# The energy of an archive's rows: per kernel and phase, ok rows with energy_j
# and the reasons (energy_status) of those without; noisy rows; for measured
# rows a launch's energy (energy_j / samples) against power_w x time_median
# (NVML's power at the end of the samples), and the best GFLOP/J of sgemm.
energy_report() {
    $PY - "$1" <<'PY'
import sys, h5py, numpy as np, pandas as pd
with h5py.File(sys.argv[1], "r") as f:
    for name in f["kernels"]:
        ds = f["kernels/%s/results" % name]
        if "energy_status" not in ds.dtype.names:
            print("%s: no energy_status column (an archive of an older tunefarm)" % name)
            continue
        st = {v: k for k, v in h5py.check_enum_dtype(ds.dtype["status"]).items()}
        es = {v: k for k, v in h5py.check_enum_dtype(ds.dtype["energy_status"]).items()}
        d = pd.DataFrame(ds[()])
        d["status"], d["energy_status"] = d.status.map(st), d.energy_status.map(es)
        probs = pd.DataFrame(f["kernels/%s/problems" % name][()])
        for phase, g in d.groupby("phase"):
            ok = g[g.status == "ok"]
            if ok.empty:
                continue
            m = ok[ok.energy_status == "measured"]
            why = ", ".join("%s %d" % (k, n) for k, n in ok.energy_status.value_counts().items()
                            if k != "measured")
            print("%s phase %d: energy on %d of %d ok rows (%.1f%%)%s; noisy %d" % (
                name, phase, len(m), len(ok), 100.0 * len(m) / len(ok),
                "; without: " + why if why else "", int(ok.noisy.sum())))
            if m.empty:
                continue
            per = m.energy_j / m.samples
            ratio = (per / (m.power_w.astype(float) * m.time_median)).dropna()
            print("  a launch: %.4g J median (%.4g..%.4g); / (power_w x time_median): %s" % (
                per.median(), per.min(), per.max(),
                "median %.3f, 10-90%% %.3f..%.3f" % (ratio.median(), ratio.quantile(0.1),
                                                      ratio.quantile(0.9))
                if len(ratio) else "no power_w"))
            if {"M", "N", "K"} <= set(probs.columns):
                flop = 2.0 * (probs.M * probs.N * probs.K).to_numpy()[m.problem.to_numpy()]
                gpj = flop / per.to_numpy() / 1e9
                best = m.iloc[int(np.argmax(gpj))]
                print("  best %.1f GFLOP/J (config %d, %.3f ms, %.0f W); the fastest: "
                      "%.1f GFLOP/J" % (gpj.max(), best.config, best.time_median * 1e3,
                                        best.power_w, gpj[int(np.argmin(m.time_median))]))
PY
}

kt_setup() {
    python3 -c "import kernel_tuner" 2>/dev/null && return 0
    mkdir -p /tmp/ktpy
    local pairs="kernel_tuner:kernel_tuner python_constraint2:constraint xmltodict:xmltodict
        jsonschema:jsonschema jsonschema_specifications:jsonschema_specifications
        referencing:referencing rpds_py:rpds attrs:attrs packaging:packaging scipy:scipy
        typing_extensions:typing_extensions cloudpickle:cloudpickle
        python_dateutil:dateutil pytz:pytz tzdata:tzdata"
    for p in $pairs; do
        python3 -c "import ${p#*:}" 2>/dev/null && continue
        python3 -m pip install -q --no-index --no-deps --target /tmp/ktpy \
            "$ROOT"/.device/wheels/"${p%%:*}"-*.whl >>"$LOG/kt-install.log" 2>&1
    done
    export PYTHONPATH=/tmp/ktpy${PYTHONPATH:+:$PYTHONPATH}
    python3 -c "import kernel_tuner; print('kernel_tuner', kernel_tuner.__version__)"
}

for s in $SECTIONS; do
    echo
    echo "==== $s"
    case $s in
    check)
        make -s tests/unit/test_cuda >>"$LOG/build.log" 2>&1 && tests/unit/test_cuda | tee "$LOG/test_cuda.log" | tail -12
        run gpufaults tests/fixtures/gpufaults.yaml
        $PY tests/integration/check_archive.py "$WORK/gpufaults.h5" gpufaults --unique >/dev/null &&
            row "gpufaults job" "$(grep -E '^Statuses' "$LOG/gpufaults.log")"
        ;;
    space)
        CACHE=$WORK/cache-space run space-cold bench/gpu/sgemm-space.yaml
        grep -h "runner profile" "$LOG/space-cold.log" || true
        steady "$WORK/space-cold.h5" | tee -a "$LOG/space-cold.log"
        CACHE=$WORK/cache-space run space-warm bench/gpu/sgemm-space.yaml
        grep -h "runner profile" "$LOG/space-warm.log" || true
        steady "$WORK/space-warm.h5" | tee -a "$LOG/space-warm.log"
        for t in cold warm; do
            row "sgemm space 1024^3, $t cache" "$(sed -n 's/^Job .*configurations in \(.*\); archive.*/\1/p' "$LOG/space-$t.log"), $(sed -n 's/^Duty cycle .*: \([0-9.]*%\).*/duty \1/p' "$LOG/space-$t.log"); steady: $(tail -1 "$LOG/space-$t.log" | sed 's/^[^:]*: //')"
        done
        ;;
    kt1024 | kt4096)
        n=${s#kt}
        run "kt-s$n" "bench/gpu/kt-s$n.yaml"
        grep -h "runner profile" "$LOG/kt-s$n.log" || true
        steady "$WORK/kt-s$n.h5" | tee -a "$LOG/kt-s$n.log"
        row "tunefarm sgemm_kt ${n}^3" "$(sed -n 's/^Job .*: \([0-9]* configurations in .*\); archive.*/\1/p' "$LOG/kt-s$n.log"), $(sed -n 's/^Duty cycle .*: \([0-9.]*%\).*/duty \1/p' "$LOG/kt-s$n.log")"
        if [ "${KT:-1}" = 0 ]; then
            row "kernel_tuner sgemm_kt ${n}^3" "not run (KT=0)"
        elif kt_setup >>"$LOG/kt-install.log" 2>&1; then
            export PYTHONPATH=/tmp/ktpy${PYTHONPATH:+:$PYTHONPATH}
            mkdir -p "$WORK/hdr" && "$TF" header cuda >"$WORK/hdr/tunefarm.h"
            count=$(sed -n 's/.*budget: \([0-9]*\).*/\1/p' "bench/gpu/kt-s$n.yaml")
            python3 bench/kt_compare.py "$WORK/kt-s$n.h5" "$n" "$count" "$WORK/hdr" kernels/sgemm/sgemm.cu \
                >"$LOG/kt-python-s$n.log" 2>&1
            tail -1 "$LOG/kt-python-s$n.log"
            row "kernel_tuner sgemm_kt ${n}^3" "$(tail -1 "$LOG/kt-python-s$n.log" | sed 's/^kernel_tuner [^:]*: //')"
        else
            row "kernel_tuner sgemm_kt ${n}^3" "not run: Kernel Tuner could not be installed (see kt-install.log)"
        fi
        ;;
    kernels)
        run kernels bench/gpu/kernels.yaml
        grep -h "runner profile" "$LOG/kernels.log" || true
        sed -n '/^kernel /,$p' "$LOG/kernels.log" | tee -a "$TABLE"
        ;;
    deep)
        run deep bench/gpu/sgemm-deep.yaml
        grep -h "runner profile" "$LOG/deep.log" || true
        steady "$WORK/deep.h5" | tee -a "$LOG/deep.log"
        sed -n '/^kernel /,$p' "$LOG/deep.log" | tee -a "$TABLE"
        ;;
    search)
        # The deep tune with each adaptive strategy beside random, same budget (1500
        # screened + top 30), same seed: best found, configurations/s, GPU duty.
        # (`tune`, not `s`: the section loop's variable.)
        for tune in deep deep-local deep-genetic; do
            run "search-$tune" "bench/gpu/sgemm-$tune.yaml"
            steady "$WORK/search-$tune.h5" | tee -a "$LOG/search-$tune.log"
            row "sgemm 4096^3 $tune" "$(sed -n 's/^Job .*configurations in \(.*\); archive.*/\1/p' "$LOG/search-$tune.log"), $(sed -n 's/^Duty cycle .*: \([0-9.]*%\).*/duty \1/p' "$LOG/search-$tune.log")"
            grep -m1 '^sgemm ' "$LOG/search-$tune.log" | tee -a "$TABLE"
        done
        ;;
    seeds)
        for seed in ${SEEDS:-2028 2029}; do
            for tune in ${SEED_TUNES:-deep deep-genetic}; do
                sed -e "s/seed: 2027/seed: $seed/" -e "s|\.\./\.\./kernels/|$ROOT/kernels/|" \
                    "bench/gpu/sgemm-$tune.yaml" >"$WORK/$tune-$seed.yaml"
                # shellcheck disable=SC2086 # RUN_ARGS: tunefarm run's options, e.g. "-n 1"
                TUNEFARM_KERNEL_PATH=$ROOT/kernels run "seed-$tune-$seed" "$WORK/$tune-$seed.yaml" ${RUN_ARGS:-}
                steady "$WORK/seed-$tune-$seed.h5" | tee -a "$LOG/seed-$tune-$seed.log"
                row "sgemm 4096^3 $tune seed $seed" "$(sed -n 's/^Job .*configurations in \(.*\); archive.*/\1/p' "$LOG/seed-$tune-$seed.log"), $(sed -n 's/^Duty cycle .*: \([0-9.]*%\).*/duty \1/p' "$LOG/seed-$tune-$seed.log")"
                grep -m1 '^sgemm ' "$LOG/seed-$tune-$seed.log" | tee -a "$TABLE"
            done
        done
        ;;
    ab)
        base=/tmp/tf-ab-base
        rm -rf "$base" && mkdir -p "$base" && tar -xf "${BASE_TAR:-$ROOT/.device/base.tar}" -C "$base" ||
            { echo "ab: no base tree (BASE_TAR)"; continue; }
        for round in $(seq 1 "${ROUNDS:-2}"); do
            for tree in base new; do
                dir=$ROOT
                [ "$tree" = base ] && dir=$base
                # (gpu.sh of either tree: the base builds itself; TRACE etc. pass through)
                (cd "$dir" && PACK=0 SEEDS="${SEEDS:-2028}" SEED_TUNES="${SEED_TUNES:-deep-genetic deep-local}" \
                    LOG=$LOG/ab-$tree-$round bash bench/gpu.sh "${AB_SECTION:-seeds}" >"$LOG/ab-$tree-$round.out" 2>&1)
                f=$LOG/ab-$tree-$round/mixed.log
                [ -f "$f" ] && row "ab $tree round $round default job" "$(sed -n 's/^Job .*configurations in \([0-9.]* s\).*/\1/p' "$f"), $(sed -n 's/^Duty cycle .*: \([0-9.]*%\).*/duty \1/p' "$f" | head -n 1), $(grep -h 'gpu profile' "$f" | sed -n 's/.*before later batches \([0-9.]*\).*/GPU idle before later batches \1 ms per configuration/p' | head -n 1)"
                for f in "$LOG/ab-$tree-$round"/seed-*.log; do
                    [ -f "$f" ] || continue
                    t=$(basename "$f" .log)
                    row "ab $tree round $round ${t#seed-}" "$(sed -n 's/^Job .*configurations in \([0-9.]* s\).*/\1/p' "$f"), $(sed -n 's/^Duty cycle .*: \([0-9.]*%\).*/duty \1/p' "$f"), $(grep -h 'runner profile: per' "$f" | sed -n 's/.*waiting for the next request \([0-9.]*\).*/wait \1 ms/p')$(grep -h 'runner profile: per' "$f" | sed -n 's/.*runner.s CPU time \([0-9.]*\).*/, runner CPU \1 ms/p')"
                done
            done
        done
        tar czf "$LOG/ab.tgz" -C "$LOG" $(cd "$LOG" && ls -d ab-* 2>/dev/null) && rm -rf "$LOG"/ab-*
        ;;
    nvrtc)
        arch=sm_$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -n 1 | tr -d .)
        LD_PRELOAD=$ROOT/build/libtunefarm-nocuda.so $PY bench/nvrtc_cost.py "$TF" kernels/sgemm \
            s4096 "$arch" "${NVRTC_VARIANTS:-32}" "$(nproc)" 2>&1 | tee "$LOG/nvrtc.log"
        grep -E "^(base|minimal|nov) " "$LOG/nvrtc.log" | sed 's/^/nvrtc /' | tee -a "$TABLE"
        ;;
    cores)
        arch=sm_$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -n 1 | tr -d .)
        job=bench/gpu/kt-s1024.yaml
        for j in 16 32 64 128; do
            [ "$j" -le "$(nproc)" ] || continue
            python3 bench/compile_sampler.py "$LOG/cores-j$j.sampler" &
            sp=$!
            (cd "$WORK" && XDG_CACHE_HOME=$WORK/cache-j$j "$TF" compile "$ROOT/$job" --arch "$arch" \
                -j "$j" -q) >"$LOG/cores-j$j.log" 2>&1
            kill -TERM "$sp"; wait "$sp"
            row "tunefarm compile -j $j, sgemm_kt 1024^3" "$(tail -n 1 "$LOG/cores-j$j.log" | sed 's/^tunefarm compile: [^:]*: //')"
            tail -n 1 "$LOG/cores-j$j.sampler" | tee -a "$TABLE"
        done
        # In the run, cold cache: (a) the GPU worker and a compile rank (as in `ahead`),
        # which share the CPUs (half each); (b) the same with every pool sized to all
        # the CPUs (compile_jobs = nproc), as before they shared: twice as many
        # compilers as CPUs; (c) a plain `tunefarm run` on GPU 0, as kt1024 runs it
        # (its host worker, having no work, compiles for the GPU).
        sed "s/^checkpoint: .*/&\ncompile_jobs: $(nproc)/" "$job" >"$WORK/kt-over.yaml"
        for variant in run over plain; do
            python3 bench/compile_sampler.py "$LOG/cores-$variant.sampler" &
            sp=$!
            case $variant in
            run | over)
                vjob=$ROOT/$job
                [ "$variant" = over ] && vjob=$WORK/kt-over.yaml
                (cd "$WORK" && XDG_CACHE_HOME=$WORK/cache-c$variant TUNEFARM_KERNEL_PATH=$ROOT/bench/gpu \
                    mpirun --oversubscribe --bind-to none \
                    -np 2 "$TF" run -q "$vjob" -o "$WORK/cores-$variant.h5" : \
                    -np 1 "$TF" run -q "$vjob" -o "$WORK/cores-$variant.h5" --compile-rank) \
                    >"$LOG/cores-$variant.log" 2>&1 ;;
            plain)
                (cd "$WORK" && CUDA_VISIBLE_DEVICES=0 XDG_CACHE_HOME=$WORK/cache-cplain \
                    "$TF" run -q "$ROOT/$job" -o "$WORK/cores-plain.h5") >"$LOG/cores-plain.log" 2>&1 ;;
            esac
            kill -TERM "$sp"; wait "$sp"
            echo "-- cores-$variant"
            grep -E "^(Job|Compile|Duty)|compile rank|a pool of" "$LOG/cores-$variant.log"
            cat "$LOG/cores-$variant.sampler"
            row "run sgemm_kt 1024^3 cold ($variant)" "$(sed -n 's/^Job .*: \([0-9]* configurations in .*\); archive.*/\1/p' "$LOG/cores-$variant.log"), $(sed -n 's/^Duty cycle .*: \([0-9.]*%\).*/duty \1/p' "$LOG/cores-$variant.log")"
            tail -n 2 "$LOG/cores-$variant.sampler" | tee -a "$TABLE"
        done
        ;;
    compilers)
        # Why `compile -j 64` is no faster than -j 32 here: the same cold compile
        # of 600 sgemm_kt variants with the cache on the disk (/tmp) or in memory
        # (/dev/shm), with glibc's malloc keeping its memory (no trim, no mmap per
        # allocation), and one process alone (48 variants) for the time of a
        # compile without company; vmstat beside each (run queue, blocked, steal).
        arch=sm_$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -n 1 | tr -d .)
        findmnt -T "$WORK" | tail -1
        findmnt -T /dev/shm | tail -1
        sed "s/budget: 600/budget: 48/" bench/gpu/kt-s1024.yaml >"$WORK/kt-48.yaml"
        keep=glibc.malloc.trim_threshold=4294967296:glibc.malloc.mmap_threshold=33554432:glibc.malloc.top_pad=268435456
        probe() { # NAME J CACHE_DIR JOB [VAR=VALUE...]
            local name=$1 j=$2 dir=$3 pjob=$4; shift 4
            rm -rf "$dir"
            python3 bench/compile_sampler.py "$LOG/probe-$name.sampler" &
            local sp=$!
            vmstat -n 1 >"$LOG/probe-$name.vmstat" &
            local vp=$!
            (cd "$WORK" && env XDG_CACHE_HOME="$dir" TUNEFARM_KERNEL_PATH="$ROOT/bench/gpu" "$@" "$TF" compile "$pjob" --arch "$arch" -j "$j" -q) \
                >"$LOG/probe-$name.log" 2>&1
            kill -TERM "$sp" "$vp"; wait "$sp" "$vp" 2>/dev/null
            row "compile probe $name" "$(tail -n 1 "$LOG/probe-$name.log" | sed 's/^tunefarm compile: [^:]*: //')"
            grep -E "^(all pools|pool of|waiting|memory)" "$LOG/probe-$name.sampler" | sed 's/(.*compile .*-q)/(compile)/' | tee -a "$TABLE"
            awk 'NR > 2 { r += $1; b += $2; us += $13; sy += $14; id += $15; wa += $16; st += $17; n++ }
                END { if (n) printf "vmstat over %d s: run queue %.1f, blocked %.1f; CPU us %.0f%% sy %.0f%% id %.0f%% wa %.0f%% st %.0f%%\n",
                      n, r/n, b/n, us/n, sy/n, id/n, wa/n, st/n }' "$LOG/probe-$name.vmstat" | tee -a "$TABLE"
        }
        probe j1-tmp 1 "$WORK/cp1" "$WORK/kt-48.yaml"
        probe j64-tmp 64 "$WORK/cp2" "$ROOT/bench/gpu/kt-s1024.yaml"
        probe j64-shm 64 /dev/shm/tf-cp3 "$ROOT/bench/gpu/kt-s1024.yaml"
        probe j64-keep 64 "$WORK/cp4" "$ROOT/bench/gpu/kt-s1024.yaml" GLIBC_TUNABLES=$keep
        probe j64-shm-keep 64 /dev/shm/tf-cp5 "$ROOT/bench/gpu/kt-s1024.yaml" GLIBC_TUNABLES=$keep
        probe j32-shm-keep 32 /dev/shm/tf-cp6 "$ROOT/bench/gpu/kt-s1024.yaml" GLIBC_TUNABLES=$keep
        probe j1-shm-keep 1 /dev/shm/tf-cp7 "$WORK/kt-48.yaml" GLIBC_TUNABLES=$keep
        rm -rf /dev/shm/tf-cp*
        ;;
    machine)
        # What the CPUs and memory really are: cgroup limits (a CPU quota or a
        # memory cap the core count does not show), swap, NUMA, GPU locality.
        lscpu | grep -E "^(CPU\(s\)|Model name|Thread|Core|Socket|NUMA|L3)" | tee -a "$LOG/machine.txt"
        free -m | tee -a "$LOG/machine.txt"
        for f in cpu.max cpu.weight cpuset.cpus.effective memory.max memory.high memory.swap.max memory.current pids.max; do
            [ -r "/sys/fs/cgroup/$f" ] && echo "cgroup $f: $(cat "/sys/fs/cgroup/$f")"
        done | tee -a "$LOG/machine.txt"
        cat /proc/pressure/cpu /proc/pressure/memory 2>/dev/null | sed 's/^/pressure: /' | tee -a "$LOG/machine.txt"
        nvidia-smi topo -m 2>&1 | head -12 | tee -a "$LOG/machine.txt"
        df -h /tmp | tail -1 | tee -a "$LOG/machine.txt"
        ;;
    gpus)
        arch=sm_$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -n 1 | tr -d .)
        ng=$(nvidia-smi -L | grep -c '^GPU ')
        job=bench/gpu/sgemm-space.yaml
        [ "${SPACE_JOB:-1}" = 1 ] &&
        (cd "$WORK" && XDG_CACHE_HOME=$WORK/cache-gpus "$TF" compile "$ROOT/$job" --arch "$arch" -q) \
            >"$LOG/gpus-compile.log" 2>&1
        rate1=""
        for n in 1 2 4 8; do
            [ "${SPACE_JOB:-1}" = 1 ] || break
            [ "$n" -le "$ng" ] || continue
            (cd "$WORK" && CUDA_VISIBLE_DEVICES=$(seq -s, 0 $((n - 1))) XDG_CACHE_HOME=$WORK/cache-gpus \
                mpirun --oversubscribe --bind-to none -np $((n + 1)) "$TF" run -q "$ROOT/$job" \
                -o "$WORK/gpus-$n.h5") >"$LOG/gpus-$n.log" 2>&1
            rate=$(sed -n 's/^Job .*(\([0-9.]*\)\/s).*/\1/p' "$LOG/gpus-$n.log")
            [ -z "$rate1" ] && rate1=$rate
            $PY bench/gpus_report.py duty "$WORK/gpus-$n.h5" | tee -a "$LOG/gpus-$n.log"
            row "sgemm space, warm, $n GPU(s)" "$(sed -n 's/^Job .*: \([0-9]* configurations in .*\); archive.*/\1/p' "$LOG/gpus-$n.log"); scaling efficiency $(awk -v r="$rate" -v r1="$rate1" -v n="$n" 'BEGIN { if (r1 > 0) printf "%.1f%%", 100 * r / (n * r1); else print "?" }')"
            grep '^device ' "$LOG/gpus-$n.log" | tee -a "$TABLE"
        done
        # Each GPU alone, all at once (one job per GPU, the same warm cache): the
        # same 1000 configurations measured on every GPU, in the time of one.
        alone=""
        for g in $(seq 0 $((ng - 1))); do
            [ "${SPACE_JOB:-1}" = 1 ] || break
            (cd "$WORK" && CUDA_VISIBLE_DEVICES=$g XDG_CACHE_HOME=$WORK/cache-gpus \
                mpirun --oversubscribe --bind-to none -np 2 "$TF" run -q "$ROOT/$job" \
                -o "$WORK/alone-$g.h5") >"$LOG/alone-$g.log" 2>&1 &
            alone="$alone $WORK/alone-$g.h5"
        done
        wait
        # shellcheck disable=SC2086 # one word per archive
        [ "$ng" -ge 2 ] && [ -n "$alone" ] && $PY bench/gpus_report.py agree $alone | tee -a "$TABLE"
        if [ "${DEFAULT_JOB:-1}" = 1 ]; then
            for n in ${DEFAULT_GPUS:-1 2 4 8}; do
                [ "$n" -le "$ng" ] || continue
                (cd "$WORK" && CUDA_VISIBLE_DEVICES=$(seq -s, 0 $((n - 1))) \
                    XDG_CACHE_HOME=$WORK/cache-gdef-$n TUNEFARM_KERNEL_PATH=$ROOT/kernels \
                    "$TF" run -q "$ROOT/jobs/default.yaml" -o "$WORK/gdef-$n.h5") >"$LOG/gdef-$n.log" 2>&1
                row "jobs/default.yaml cold, $n GPU(s)" "$(sed -n 's/^Job .*: \([0-9]* configurations in .*\); archive.*/\1/p' "$LOG/gdef-$n.log"); $(grep '^Duty cycle on NVIDIA' "$LOG/gdef-$n.log" | sed 's/^Duty cycle on //')"
                $PY bench/gpus_report.py duty "$WORK/gdef-$n.h5" | tee -a "$LOG/gdef-$n.log" | tee -a "$TABLE"
            done
        fi
        ;;
    strategies)
        labels=""
        for st in ${STRATEGIES:-random local genetic}; do
            sed "s/^  strategy: .*/  strategy: $st/" jobs/default.yaml >"$WORK/default-$st.yaml"
            TUNEFARM_KERNEL_PATH=$ROOT/kernels run "default-$st" "$WORK/default-$st.yaml"
            sed -n '/^kernel /,$p' "$LOG/default-$st.log"
            row "jobs/default.yaml, $st" "$(sed -n 's/^Job .*: \([0-9]* configurations in .*\); archive.*/\1/p' "$LOG/default-$st.log"); $(grep '^Duty cycle' "$LOG/default-$st.log" | sed 's/^Duty cycle on \([^:]*\): \([0-9.]*%\).*/\1 \2/' | tr '\n' ';')"
            labels="$labels $st=$WORK/default-$st.h5"
        done
        # shellcheck disable=SC2086 # one word per archive
        TF=$TF $PY bench/compare_best.py $labels | tee "$LOG/strategies.md" | tee -a "$TABLE"
        ;;
    baselines)
        python3 bench/baselines.py 2>&1 | tee "$LOG/baselines.log" | tee -a "$TABLE"
        ;;
    ahead)
        run ahead-cold bench/gpu/kt-s1024.yaml
        steady "$WORK/ahead-cold.h5" | tee -a "$LOG/ahead-cold.log"
        t0=$(date +%s%N)
        (cd "$WORK" && XDG_CACHE_HOME=$WORK/cache-ahead "$TF" compile "$ROOT/bench/gpu/kt-s1024.yaml" \
            --arch sm_90) >"$LOG/ahead-compile.log" 2>&1
        echo "-- tunefarm compile (exit $?), $(( ($(date +%s%N) - t0) / 1000000 )) ms"
        tail -2 "$LOG/ahead-compile.log"
        CACHE=$WORK/cache-ahead run ahead-warm bench/gpu/kt-s1024.yaml
        steady "$WORK/ahead-warm.h5" | tee -a "$LOG/ahead-warm.log"
        # the same cold, with a compile rank beside the GPU worker (MPMD)
        (cd "$WORK" && XDG_CACHE_HOME=$WORK/cache-rank mpirun --oversubscribe --bind-to none \
            -np 2 "$TF" run -q "$ROOT/bench/gpu/kt-s1024.yaml" -o "$WORK/ahead-rank.h5" : \
            -np 1 "$TF" run -q "$ROOT/bench/gpu/kt-s1024.yaml" -o "$WORK/ahead-rank.h5" --compile-rank) \
            >"$LOG/ahead-rank.log" 2>&1
        echo "-- ahead-rank (exit $?)"
        grep -E "^(Job|Compile|Duty|Statuses)|compile rank" "$LOG/ahead-rank.log"
        for t in cold warm rank; do
            row "sgemm_kt 1024^3 ($t)" "$(sed -n 's/^Job .*: \([0-9]* configurations in .*\); archive.*/\1/p' "$LOG/ahead-$t.log"), $(sed -n 's/^Duty cycle .*: \([0-9.]*%\).*/duty \1/p' "$LOG/ahead-$t.log")"
        done
        row "tunefarm compile sgemm_kt 1024^3" "$(tail -1 "$LOG/ahead-compile.log")"
        ;;
    mixed)
        (cd "$WORK" && XDG_CACHE_HOME=$WORK/cache-mixed "$TF" run "$ROOT/jobs/default.yaml" \
            -o "$WORK/default.h5") >"$LOG/mixed.log" 2>&1
        echo "-- jobs/default.yaml (exit $?)"
        grep -vE "^\[|^progress" "$LOG/mixed.log" | tail -25
        $PY tests/integration/check_archive.py "$WORK/default.h5" gemm --unique >/dev/null &&
            $PY tests/integration/check_archive.py "$WORK/default.h5" sgemm --unique >/dev/null &&
            row "jobs/default.yaml (cuda + host)" "$(grep -E '^Job' "$LOG/mixed.log")"
        ;;
    energy)
        run energy bench/gpu/sgemm-energy.yaml
        grep -h "runner energy" "$LOG/energy.log" || true # the reasons in words
        energy_report "$WORK/energy.h5" | tee -a "$LOG/energy.log"
        row "sgemm 4096^3 energy (100 random)" "$(grep -m1 ' phase 0: ' "$LOG/energy.log" | sed 's/^[^:]*: //')"
        if [ -e "$WORK/deep.h5" ]; then
            energy_report "$WORK/deep.h5" | tee -a "$LOG/energy.log"
            row "sgemm 4096^3 deep, strict phase" "$(grep -m1 'phase 2: ' "$LOG/energy.log" | sed 's/^[^:]*: //')"
        fi
        ;;
    faults)
        run faults bench/faults/faults.yaml
        run clean bench/faults/clean.yaml
        $PY bench/faults/compare.py "$WORK/faults.h5" "$WORK/clean.h5" | tee "$LOG/faults-compare.txt"
        echo "faults verdict: exit ${PIPESTATUS[0]}"
        nvidia-smi --query-gpu=name,pstate,temperature.gpu,clocks.sm,ecc.errors.uncorrected.volatile.total \
            --format=csv | tee -a "$LOG/faults-compare.txt"
        row "transpose + 9 bad variants" "$(grep -E '^good' "$LOG/faults-compare.txt")"
        row "  same best as without them" "$(sed -n 's/^same best configuration: //p' "$LOG/faults-compare.txt")"
        # Interrupted on the GPU: SIGTERM after 4 s, exit 75, then the same command resumes.
        (cd "$WORK" && XDG_CACHE_HOME=$WORK/cache-clean exec "$TF" run \
            "$ROOT/bench/faults/clean.yaml" -o "$WORK/resume.h5" >"$LOG/resume-1.log" 2>&1) &
        pid=$!
        sleep 4
        kill -TERM $pid
        wait $pid
        echo "-- interrupted run: exit $?"
        grep -E "signal|Interrupted" "$LOG/resume-1.log"
        "$TF" status "$WORK/resume.h5" | tail -2
        (cd "$WORK" && XDG_CACHE_HOME=$WORK/cache-clean "$TF" run "$ROOT/bench/faults/clean.yaml" \
            -o "$WORK/resume.h5" >"$LOG/resume-2.log" 2>&1; echo "-- resumed run: exit $?")
        grep -E "resuming|^Job|^Resumed" "$LOG/resume-2.log"
        $PY tests/integration/check_archive.py "$WORK/resume.h5" transpose --rows 160 --unique --runs 1 --all-ok &&
            row "GPU run: SIGTERM, exit 75, resumed" "$(sed -n 's/^Resumed run 0: //p' "$LOG/resume-2.log")"
        ;;
    *) echo "unknown section $s" ;;
    esac
done
echo
echo "==== table"
cat "$TABLE"
rm -rf "$WORK"
# PACK=1: every log and trace of $LOG into one file, $LOG/logs.tgz, beside table.txt
# (the device tool brings back at most 8 files of $OUT: a call of several sections
# lost its seed logs and traces so, bench/results/duty-2026-11-28.md).
if [ "${PACK:-0}" = 1 ]; then
    packed=$(mktemp /tmp/tf-bench-logs.XXXXXX)
    (cd "$LOG" && tar czf "$packed" --exclude=table.txt . &&
        find . -type f ! -name table.txt -delete &&
        find . -mindepth 1 -type d -empty -delete) && mv "$packed" "$LOG/logs.tgz"
    rm -f "$packed"
fi
