#!/bin/bash
# tests/faults/run.sh - the fault matrix (`make check-faults`): real processes
# killed or real faults triggered on the host backend, one line per scenario.
# For each, the final archive (after a resume where there is one) must hold
# exactly the rows of an uninterrupted run of the same job (compare.py: same
# keys, same statuses, none twice, one run) and pass h5dump. Bad archives must
# be refused with a clear error (run, query, status, merge) and left untouched.
#
# Usage: tests/faults/run.sh [AREA...]. With no AREA, everything. Otherwise the
# reference run and only the areas named: `core` (the scenarios of this file)
# or a scenario file's name without .sh (tests/faults/run.sh core 30-space).
source "$(dirname "$0")/../lib.sh"
JOB="$ROOT/tests/fixtures/matrix.yaml"
COMPARE="$PY $ROOT/tests/faults/compare.py"
AREAS=("$@")
for a in "${AREAS[@]}"; do
    if [ "$a" != core ] && [ ! -e "$ROOT/tests/faults/scenarios/$a.sh" ]; then
        echo "tests/faults/run.sh: no area '$a' (core, or one of:" \
            $(cd "$ROOT/tests/faults/scenarios" && ls *.sh | sed 's/\.sh$//')")" >&2
        exit 2
    fi
done
# wanted AREA: AREA was named, or none was.
wanted() {
    [ "${#AREAS[@]}" -eq 0 ] && return 0
    local a
    for a in "${AREAS[@]}"; do [ "$a" = "$1" ] && return 0; done
    return 1
}
cd "$TMP"

# rank_pid N ARCHIVE: the pid of MPI rank N of the run writing ARCHIVE (the
# rank itself, not one of its runner children, which inherit its environment).
rank_of() { tr '\0' '\n' <"/proc/$1/environ" 2>/dev/null | grep -x "OMPI_COMM_WORLD_RANK=[0-9]*"; }
rank_pid() {
    local p parent
    for p in $(pgrep -f -- "$2" || true); do
        if [ "$(rank_of "$p")" = "OMPI_COMM_WORLD_RANK=$1" ]; then
            parent=$(awk '{print $4}' "/proc/$p/stat" 2>/dev/null || echo 1)
            [ "$(rank_of "$parent")" = "OMPI_COMM_WORLD_RANK=$1" ] && continue
            echo "$p"; return 0
        fi
    done
    return 1
}

# journal_records JOURNAL: how many whole records (CRC checked) it holds.
# Records differ in size (each ends with its result's message), so they are
# counted, not guessed from the file's size (tests/faults/journal_records.py).
journal_records() { $PY "$ROOT/tests/faults/journal_records.py" "$1"; }

# wait_results ARCHIVE N: wait until N results are measured (archive rows +
# journal records) with at least one still in the journal; fails after 60 s.
wait_results() {
    $PY "$ROOT/tests/faults/journal_records.py" "$1.journal" --archive "$1" --wait "$2" --seconds 60 >/dev/null
}

# kernel_rows ARCHIVE KERNEL KEYS PYTHON: run PYTHON with `rows` = {(KEY, ...):
# (status, message, time_min, time_median)} of KERNEL's results, keyed by the
# integer parameters named in KEYS ("MODE I").
kernel_rows() { $PY -c "
import h5py, sys
t = h5py.File(sys.argv[1])['kernels/' + sys.argv[2] + '/results'][()]
keys = sys.argv[3].split()
names = {v: k for k, v in h5py.check_enum_dtype(t.dtype['status']).items()}
rows = {tuple(int(r[k]) for k in keys): (names[int(r['status'])], r['message'].decode(),
        float(r['time_min']), float(r['time_median'])) for r in t}
$4" "$1" "$2" "$3"; }

# strays NAME VALUE: how many processes are running with NAME=VALUE in their
# environment (what a variant forked and left behind; zombies are not counted).
strays() {
    local p n=0
    for p in /proc/[0-9]*; do
        { tr "\0" "\n" <"$p/environ"; } 2>/dev/null | grep -qxF "$1=$2" || continue
        [ "$(sed 's/.*) \(.\).*/\1/' "$p/stat" 2>/dev/null)" = Z ] && continue
        n=$((n + 1))
    done
    echo "$n"
}

# start ARCHIVE [ENV...]: start a run in the background; its pid in $RUN_PID,
# its output in ARCHIVE.out.
start() {
    local a=$1; shift
    env "$@" "$TF" run -n 1 "$JOB" -o "$a" >"$a.out" 2>&1 &
    RUN_PID=$!
}

# finish_rc: wait for the background run, its exit code in $RUN_RC.
finish_rc() { RUN_RC=0; wait "$RUN_PID" || RUN_RC=$?; }

# verdict NAME ARCHIVE: the archive matches the reference and h5dump reads it.
verdict() {
    if $COMPARE ref.h5 "$2" >"$TMP/out" 2>&1 && h5dump -H "$2" >/dev/null 2>>"$TMP/out" &&
       ! ls "$2".tmp.* >/dev/null 2>&1; then
        pass "$1 ($(sed 's/^[^:]*: //' "$TMP/out"))"
    else
        cat "$2.out" >>"$TMP/out" 2>/dev/null || true
        fail "$1" "$TMP/out"
    fi
}

# resume NAME ARCHIVE [IN]: run the job again on ARCHIVE, expecting it to resume
# and finish; IN, a pattern, is how many configurations the archive held (any
# but 0 unless told: 0 where the run stopped before its first result).
resume() {
    if "$TF" run -n 1 "$JOB" -o "$2" >"$2.resume" 2>&1 &&
       grep -q "resuming run 0 .*: ${3:-[1-9][0-9]*} of [0-9]* configurations are in the archive" "$2.resume"; then
        verdict "$1" "$2"
    else
        fail "$1: the resumed run failed" "$2.resume"
    fi
}

echo "-- the helpers' own checks"
# The zero-strays checks of the scenarios mean something only if `strays` sees
# a stray: plant one (a sleeper with a marker in its environment), then end it.
env TF_FAULTS_PROBE="$TMP" sleep 300 &
probe=$!
check "strays finds a planted stray process" test "$(strays TF_FAULTS_PROBE "$TMP")" -eq 1
check "  and no other value of its marker" test "$(strays TF_FAULTS_PROBE "$TMP/x")" -eq 0
kill "$probe"; wait "$probe" 2>/dev/null || true
check "  and none once it ended" test "$(strays TF_FAULTS_PROBE "$TMP")" -eq 0

echo "-- the reference: one uninterrupted run"
check "uninterrupted run of the matrix job" "$TF" run -q -n 1 "$JOB" -o ref.h5
# Faults that are results: each MODE of the faulty kernel ends with its status.
statuses() { $PY -c "
import h5py, sys
t = h5py.File('ref.h5')['kernels/faulty/results'][()]
want = {0: 'ok', 1: 'compile_error', 2: 'crashed', 3: 'timeout', 4: 'wrong_result', 5: 'wrong_result'}
names = {v: k for k, v in h5py.check_enum_dtype(t.dtype['status']).items()}
for mode in [int(m) for m in sys.argv[1:]]:
    got = {names[int(r['status'])] for r in t if int(r['config']) // 3 == mode}
    assert got == {want[mode]}, (mode, got)
" "$@"; }
for scenario in "compile error:1" "runner segfault:2" "runner hang:3" "wrong result:4" "NaN output:5"; do
    check "${scenario%%:*}: every MODE=${scenario##*:} variant has its status, the run went on" \
        statuses "${scenario##*:}"
done
check "the reference passes h5dump" h5dump -H ref.h5

# The scenarios of this file: the area `core` (the body is not indented, to
# keep it as it was; it ends at "end of the area core" below).
if wanted core; then
echo "-- killed processes: resume makes the archive whole"
start wkill.h5
if wait_results wkill.h5 5 && pid=$(rank_pid 1 wkill.h5); then
    kill -KILL "$pid"; finish_rc
    if [ "$RUN_RC" -ne 0 ]; then resume "worker SIGKILL, then resume" wkill.h5
    else fail "worker SIGKILL: the run did not notice (exit 0)" wkill.h5.out; fi
else fail "worker SIGKILL: no worker rank found" wkill.h5.out; kill "$RUN_PID" 2>/dev/null || true; fi

start ckill.h5
# The coordinator's pid first, so that it dies right after the 8th record (a
# checkpoint, every second, empties the journal).
if wait_results ckill.h5 1 && pid=$(rank_pid 0 ckill.h5) && wait_results ckill.h5 8; then
    kill -KILL "$pid"; finish_rc
    held=$(journal_records ckill.h5.journal)
    check "coordinator SIGKILL: its journal holds whole results ($held records)" test "$held" -ge 1
    check "  status counts them all, and calls the run unfinished" sh -c \
        "\"$TF\" status ckill.h5 | grep -q 'Journal .*: $held results not checkpointed yet' &&
         \"$TF\" status ckill.h5 | grep -q UNFINISHED"
    resume "coordinator SIGKILL mid-run, then resume" ckill.h5
else fail "coordinator SIGKILL: no coordinator rank found" ckill.h5.out; kill "$RUN_PID" 2>/dev/null || true; fi

# The checkpoint pauses 2 s with its temporary file half written (test hook).
start cpkill.h5 TUNEFARM_TEST_CHECKPOINT_PAUSE=2
found=0
if wait_results cpkill.h5 3; then
    for i in $(seq 100); do
        if ls cpkill.h5.tmp.* >/dev/null 2>&1; then found=1; break; fi
        sleep 0.1
    done
fi
if [ "$found" = 1 ] && pid=$(rank_pid 0 cpkill.h5); then
    kill -KILL "$pid"; finish_rc
    check "SIGKILL during a checkpoint: the archive on disk is whole" h5dump -H cpkill.h5
    resume "SIGKILL during a checkpoint, then resume" cpkill.h5
else fail "SIGKILL during a checkpoint: no checkpoint caught" cpkill.h5.out; kill "$RUN_PID" 2>/dev/null || true; fi

start term.h5
if wait_results term.h5 5; then
    kill -TERM "$RUN_PID"; finish_rc
    if [ "$RUN_RC" -eq 75 ] && contains term.h5.out "run the same command again to resume"; then
        check "SIGTERM: exit 75, status says what remains" sh -c \
            "\"$TF\" status term.h5 | grep -q 'UNFINISHED' && \"$TF\" status term.h5 | grep -q 'remain'"
        resume "SIGTERM, then resume" term.h5
    else
        echo "exit $RUN_RC" >>term.h5.out; fail "SIGTERM: expected exit 75" term.h5.out
    fi
else fail "SIGTERM: no results reached the journal" term.h5.out; kill "$RUN_PID" 2>/dev/null || true; fi

# --fresh after an interruption: a new run measures everything, the
# interrupted one stays as it was (and status still calls it unfinished).
start fresh.h5
if wait_results fresh.h5 5; then
    kill -TERM "$RUN_PID"; finish_rc
    partial=$($PY -c "import h5py; print(sum(len(g['results']) for g in h5py.File('fresh.h5')['kernels'].values()))")
    check "--fresh: a new run next to the interrupted one ($partial rows kept)" sh -c "
        \"$TF\" run -q -n 1 --fresh \"$JOB\" -o fresh.h5 >fresh.h5.resume 2>&1 &&
        ! grep -q resuming fresh.h5.resume &&
        \"$TF\" status fresh.h5 | grep -q 'Run 0: .*UNFINISHED' &&
        \"$TF\" status fresh.h5 | grep -q 'Run 1: .*finished' &&
        $PY -c \"
import h5py, collections
rows = [r for g in h5py.File('fresh.h5')['kernels'].values() for r in g['results'][()]]
runs = collections.Counter(int(r['run']) for r in rows)
assert runs[0] == $partial and runs[1] == 56, runs
\""
else fail "--fresh: no results reached the journal" fresh.h5.out; kill "$RUN_PID" 2>/dev/null || true; fi

# A second signal: stop at once, abandoning what is in flight (the ranks are
# ended with MPI_Abort after the checkpoint); resume measures the rest.
start term2.h5
if wait_results term2.h5 5; then
    kill -TERM "$RUN_PID"; sleep 0.3; kill -TERM "$RUN_PID"; finish_rc
    if [ "$RUN_RC" -eq 75 ] && contains term2.h5.out "signal again: stopping now"; then
        resume "two signals: stop at once, exit 75, then resume" term2.h5
    else
        echo "exit $RUN_RC" >>term2.h5.out; fail "two signals: expected exit 75" term2.h5.out
    fi
else fail "two signals: no results reached the journal" term2.h5.out; kill "$RUN_PID" 2>/dev/null || true; fi

echo "-- a full disk: the run stops cleanly, the journal keeps what it had"
mkdir -p full
if mount -t tmpfs -o size=4m tmpfs full 2>/dev/null; then
    trap 'umount "$TMP/full" 2>/dev/null || true; rm -rf "$TMP"' EXIT
    start full/disk.h5
    if wait_results full/disk.h5 5; then
        dd if=/dev/zero of=full/filler bs=64k 2>/dev/null || true   # until ENOSPC
        finish_rc
        if [ "$RUN_RC" -eq 1 ] && contains full/disk.h5.out "cannot write the journal"; then
            check "full disk: exit 1, the archive left is whole" h5dump -H full/disk.h5
            rm -f full/filler
            resume "full disk, space freed, then resume" full/disk.h5
        else
            echo "exit $RUN_RC" >>full/disk.h5.out; fail "full disk: expected exit 1 naming the journal" full/disk.h5.out
        fi
    else
        fail "full disk: no results reached the journal" full/disk.h5.out
        kill "$RUN_PID" 2>/dev/null || true; wait "$RUN_PID" 2>/dev/null || true
    fi
    umount full
else
    skip "full disk" "cannot mount a small tmpfs here (needs root with CAP_SYS_ADMIN)"
fi

echo "-- bad archives are refused with a clear error and left untouched"
cp ref.h5 trunc.h5
truncate -s $(($(stat -c %s ref.h5) / 2)) trunc.h5
sum=$(md5sum <trunc.h5)
expect_fail "truncated archive: run refuses it (exit 2)" 2 "$TF" run -q -n 1 "$JOB" -o trunc.h5
check "  saying it is truncated or damaged" contains "$TMP/last" "truncated or damaged"
expect_fail "  query refuses it (exit 2)" 2 "$TF" query trunc.h5
expect_fail "  status refuses it (exit 2)" 2 "$TF" status trunc.h5
expect_fail "  merge refuses it (exit 2)" 2 "$TF" merge merged.h5 ref.h5 trunc.h5
check "  and writes nothing" sh -c "[ ! -e merged.h5 ] && [ ! -e merged.h5.journal ]"
check "  the file is untouched" sh -c "[ \"\$(md5sum <trunc.h5)\" = '$sum' ]"
$PY -c "import h5py; f = h5py.File('foreign.h5', 'w'); f['x'] = [1, 2, 3]; f.attrs['format'] = 'other'"
sum=$(md5sum <foreign.h5)
expect_fail "foreign HDF5 file: run refuses it (exit 2)" 2 "$TF" run -q -n 1 "$JOB" -o foreign.h5
check "  saying it is not a tunefarm archive" contains "$TMP/last" "not a tunefarm archive"
expect_fail "  query refuses it (exit 2)" 2 "$TF" query foreign.h5
expect_fail "  status refuses it (exit 2)" 2 "$TF" status foreign.h5
expect_fail "  merge refuses it (exit 2)" 2 "$TF" merge merged.h5 ref.h5 foreign.h5
check "  and writes nothing" sh -c "[ ! -e merged.h5 ] && [ ! -e merged.h5.journal ]"
check "  the file is untouched" sh -c "[ \"\$(md5sum <foreign.h5)\" = '$sum' ]"
# A journal whose archive is gone: refused, and the journal (someone's results) kept.
printf 'TFJRNL01\005\000\000\000\000\000\000\000' >gone.h5.journal  # any format: refused
sum=$(md5sum <gone.h5.journal)
expect_fail "an archive removed, its journal left: run refuses (exit 2)" 2 "$TF" run -q -n 1 "$JOB" -o gone.h5
check "  saying the archive was removed or moved" contains "$TMP/last" "the archive was removed or moved away"
expect_fail "  merge refuses too (exit 2)" 2 "$TF" merge gone.h5 ref.h5
check "  the journal is kept as it was, no archive made" sh -c \
    "[ \"\$(md5sum <gone.h5.journal)\" = '$sum' ] && [ ! -e gone.h5 ]"
fi # end of the area core
# More scenarios, one file per area (runner isolation, journal identity, space
# counting, compile cache, ...): each is sourced here, in name order, with
# everything above (ref.h5, start, verdict, resume, wait_results, kernel_rows,
# strays) at hand. Each runs in a folder of its own, so two files cannot meet
# on an archive name.
for more in "$ROOT"/tests/faults/scenarios/*.sh; do
    [ -e "$more" ] || continue
    wanted "$(basename "$more" .sh)" || continue
    area="$TMP/$(basename "$more" .sh)"
    mkdir -p "$area" && ln -sf "$TMP/ref.h5" "$area/ref.h5"
    cd "$area"
    source "$more"
done
cd "$TMP"
check "no process of the matrix is left" sh -c "! pgrep -f -- '[t]unefarm .*$TMP' >/dev/null"
finish
