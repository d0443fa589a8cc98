# tests/faults/scenarios/50-followups.sh - sourced by tests/faults/run.sh (its
# helpers at hand), in a folder of its own. Follow-ups of issue 11.
#
# Item 12, per configuration: a scalar whose value reads a parameter is known
# only per configuration, so the runner checks it. In
# tests/fixtures/followup_scalar, the int32 `total` = N * BLOCK overflows for
# BLOCK 3000000 and 4194304: those two configurations are `invalid`, saying
# which argument, its type, the value and the range; the other three are ok
# and the run finishes. (Before the runner checked, the wrapped value reached
# the variant and both were wrong_result "y[0] = 0, expected ...".)
FOLLOWUP_FIX="$ROOT/tests/fixtures"

echo "-- a scalar that overflows its type in one configuration"
expect_fail "int32 scalar N*BLOCK past 2^31 in two configurations: the run finishes (exit 0)" 0 \
    timeout -k 5 120 "$TF" run -n 1 "$FOLLOWUP_FIX/followup_scalar.yaml" -o followup_scalar.h5
check "  those two are invalid, naming the argument, type, value and range; the rest ok" $PY -c "
import h5py
t = h5py.File('followup_scalar.h5')['kernels/followup_scalar/results'][()]
names = {v: k for k, v in h5py.check_enum_dtype(t.dtype['status']).items()}
rows = {int(r['BLOCK']): (names[int(r['status'])], r['message'].decode()) for r in t}
assert sorted(rows) == [1, 2, 4, 3000000, 4194304], rows
for block in (1, 2, 4):
    assert rows[block] == ('ok', ''), (block, rows[block])
for block, value in ((3000000, 3072000000), (4194304, 4294967296)):
    status, message = rows[block]
    assert status == 'invalid', (block, rows[block])
    for part in (\"argument 'total' (int32 scalar = N * BLOCK)\", '%d is outside' % value,
                 \"int32's range -2147483648..2147483647\", \"declare it 'scalar: int64'\"):
        assert part in message, (block, part, message)
"
