# tests/faults/scenarios/42-full-cache.sh - a full disk under the compile
# cache or TMPDIR (sourced by run.sh).
#
# The variants (and references) that cannot be compiled for want of space have
# had no try: they must not be archived as compile_error (or launch_error,
# "reference did not compile") in a run that then ends "finished" with exit 0,
# which no rerun measures again. The run ends (exit 1) saying what to free,
# stays unfinished, and the same command resumes it to the reference's rows.
# A TMPDIR too full for mpirun itself is said as such: nothing ran, nothing to
# resume.

echo "-- a full disk under the compile cache or TMPDIR: the run stops, the same command resumes"
mkdir -p fullc
if mount -t tmpfs -o size=300k tmpfs fullc 2>/dev/null; then
    dd if=/dev/zero of=fullc/filler bs=4k 2>/dev/null || true   # until ENOSPC
    # storage_rows ARCHIVE: how many rows blame the full disk.
    storage_rows() { $PY -c "
import h5py, sys
n = sum(b'No space left' in r['message'] for g in h5py.File(sys.argv[1])['kernels'].values()
        for r in g['results'][()])
print(n)" "$1"; }
    start cfull.h5 XDG_CACHE_HOME="$PWD/fullc/cache"
    finish_rc
    if [ "$RUN_RC" -eq 1 ] && contains cfull.h5.out "free space (the compile cache"; then
        pass "compile cache on a full disk: exit 1, saying what to free"
        check "  no row blames the full disk" test "$(storage_rows cfull.h5)" -eq 0
        check "  the run is unfinished" sh -c "\"$TF\" status cfull.h5 | grep -q UNFINISHED"
        resume "compile cache on a full disk, then resume with space" cfull.h5 0
    else
        echo "exit $RUN_RC" >>cfull.h5.out; fail "compile cache on a full disk: expected exit 1 naming what to free" cfull.h5.out
    fi
    # TMPDIR for the ranks only (mpirun itself needs it for its session).
    tfull_rc=0
    mpirun -np 2 --oversubscribe env XDG_CACHE_HOME="$PWD/tcache" TMPDIR="$PWD/fullc" \
        "$TF" run "$JOB" -o tfull.h5 >tfull.h5.out 2>&1 || tfull_rc=$?
    if [ "$tfull_rc" -ne 0 ] && contains tfull.h5.out "No space left on device" &&
       contains tfull.h5.out "run the same command again to resume"; then
        pass "TMPDIR on a full disk: the run stops, saying what to free"
        check "  no row blames the full disk" test "$(storage_rows tfull.h5)" -eq 0
        resume "TMPDIR on a full disk, then resume with space" tfull.h5 0
    else
        echo "exit $tfull_rc" >>tfull.h5.out; fail "TMPDIR on a full disk: expected the run to stop" tfull.h5.out
    fi
    # TMPDIR full for mpirun itself: it cannot make its session directory, no
    # rank gets through MPI's start-up and nothing runs. tunefarm says so and
    # what to free, not "resume" (there is no run to resume), and no archive
    # or journal appears.
    mfull_rc=0
    TMPDIR="$PWD/fullc" timeout -s KILL 120 "$TF" run -n 1 "$JOB" -o mfull.h5 \
        >mfull.h5.out 2>&1 || mfull_rc=$?
    if [ "$mfull_rc" -eq 1 ] && contains mfull.h5.out "mpirun could not start the run" &&
       contains mfull.h5.out "nothing ran"; then
        pass "TMPDIR full for mpirun itself: exit 1, saying nothing ran"
    else
        echo "exit $mfull_rc" >>mfull.h5.out; fail "TMPDIR full for mpirun itself: expected exit 1 saying nothing ran" mfull.h5.out
    fi
    check "  naming TMPDIR and what to do" sh -c \
        "grep -Eq \"TMPDIR \\('$PWD/fullc'\\), where Open MPI makes its session directory, has [0-9]+ KiB free: free space there, or set TMPDIR to a folder with room\" mfull.h5.out"
    check "  not suggesting a resume" sh -c "! grep -q resume mfull.h5.out"
    check "  no archive or journal made" sh -c "[ ! -e mfull.h5 ] && [ ! -e mfull.h5.journal ]"
    umount fullc
    # A variant that fills a roomy disk by itself (a 96 MiB initialised array,
    # on 90 MiB free) is the variant's trouble: once the linker deletes its
    # output the space is back, so it costs that configuration alone (a
    # compile_error, not cached) and the run finishes; stopping would stop every
    # run that meets it.
    mount -t tmpfs -o size=90m tmpfs fullc
    cp -R "$ROOT/tests/fixtures/compile_includes" "$TMP/big_variant"
    sed -i "s#-Itests/fixtures/compile_includes/include#-I$TMP/big_variant/include#" \
        "$TMP/big_variant/kernel.yaml"
    printf '#if U == 4\n__attribute__((used)) static const char incl_big[96 << 20] = {1};\n#endif\n' \
        >>"$TMP/big_variant/incl.c"
    big_rc=0
    XDG_CACHE_HOME="$PWD/fullc/cache" "$TF" run -q -n 1 "$TMP/big_variant/job.yaml" -o big.h5 \
        >big.h5.out 2>&1 || big_rc=$?
    "$TF" status big.h5 >>big.h5.out 2>&1 || true
    if [ "$big_rc" -eq 0 ] && grep -q "measured (ok 2, compile_error 1)" big.h5.out &&
       [ "$(storage_rows big.h5)" -eq 1 ]; then
        pass "a variant that fills a roomy disk itself: its compile_error alone, the run finishes"
    else
        echo "exit $big_rc" >>big.h5.out; fail "a variant that fills a roomy disk itself: expected ok 2, compile_error 1, exit 0" big.h5.out
    fi
    umount fullc
else
    skip "full compile cache" "cannot mount a small tmpfs here (needs root with CAP_SYS_ADMIN)"
fi
