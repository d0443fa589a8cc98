#!/usr/bin/env bash
# tests/integration/noise_energy.sh - noise and energy made visible (issue 13
# item 7), on the host backend with a real runner, real HDF5 and real RAPL
# where the machine lets us read it:
#  - a kernel whose time alternates between 1x and 4x from launch to launch
#    (tests/fixtures/noisy, JITTER=1) runs to max_time with its spread above
#    max_noise: its row is marked `noisy`, the run summary and `query` count it;
#  - every ok row says why it has no energy (energy_status), never a silent NaN:
#    this machine's RAPL as it is (`no_counter` in a VM), a powercap without
#    a package zone, energy_time 0 (`off`), and a fake powercap whose package
#    draws 1 W (fake_rapl.py): every ok row measured, a launch's energy what
#    1 W gives over its time, and the metric iterations_per_j = WORK / energy_j
#    per launch. Run alone, or sourced by a harness that has lib.sh loaded.
noise_alone=0
if ! declare -F check >/dev/null; then
    . "$(dirname "$0")/../lib.sh"
    noise_alone=1
fi
cd "$TMP"
NOISY_JOB="$ROOT/tests/fixtures/noisy.yaml"
NOISE_CHECK="$PY $ROOT/tests/integration/check_noise_energy.py"
# max_noise of the job (0.25): JITTER=1 stays near 60%
NOISE_ARGS="--max-noise 0.25 --noisy-where JITTER=1 --per-joule iterations_per_j=WORK"

echo "-- noise and energy: a noisy kernel marked and counted; energy or why not"
if [ -r /sys/class/powercap/intel-rapl:0/energy_uj ]; then
    here="measured no_window counter_error"
else
    here="no_counter" # no readable RAPL (a VM, or energy_uj root's only)
fi
if "$TF" run "$NOISY_JOB" -o noisy.h5 >noisy.out 2>noisy.err; then
    pass "the noisy job runs"
else
    fail "the noisy job runs" noisy.err
fi
check "the alternating kernel is noisy, and the summary counts it (energy: $here)" \
    $NOISE_CHECK noisy.h5 noisy $NOISE_ARGS --energy $here --summary noisy.out
"$TF" query noisy.h5 >noisy.query 2>&1 || true
check "query counts the noisy row and the energies" \
    $NOISE_CHECK noisy.h5 noisy $NOISE_ARGS --query noisy.query
check "read_archive.py accepts the columns" $PY "$ROOT/tests/integration/read_archive.py" noisy.h5
"$TF" export noisy.h5 --format csv -o noisy.csv >/dev/null 2>&1 || true
check "the CSV export carries noisy and energy_status by name" $PY -c "
import pandas as pd, sys
d = pd.read_csv('noisy.csv')
sys.exit(0 if set(d.noisy) <= {0, 1} and d.noisy.sum() >= 1 and
         set(d.energy_status) <= {'measured', 'no_counter', 'no_window', 'counter_error'} else 1)"

mkdir -p nopackage/intel-rapl:1 && echo psys >nopackage/intel-rapl:1/name
TUNEFARM_RAPL_ROOT=$PWD/nopackage TUNEFARM_PROFILE=1 "$TF" run -q "$NOISY_JOB" -o nopkg.h5 \
    >nopkg.out 2>nopkg.err || true
check "a powercap without a package zone: no_counter on every ok row" \
    $NOISE_CHECK nopkg.h5 noisy $NOISE_ARGS --energy no_counter --summary nopkg.out
check "  and the runner says why (TUNEFARM_PROFILE)" \
    grep -q "tunefarm runner energy: [0-9]* no_counter: no RAPL: .*has no package zone" nopkg.err

sed -e "s|kernel: noisy|kernel: $ROOT/tests/fixtures/noisy|" -e 's/energy_time: 0.05/energy_time: 0/' \
    "$NOISY_JOB" >off.yaml
"$TF" run -q off.yaml -o off.h5 >off.out 2>&1 || true
check "energy_time 0: energy off on every ok row, noisy still marked" \
    $NOISE_CHECK off.h5 noisy $NOISE_ARGS --energy off --summary off.out

# A fake RAPL package at 1 W, wrapping every 2 s, for the length of one run.
$PY "$ROOT/tests/integration/fake_rapl.py" "$PWD/fakerapl" 1 60 &
fake=$!
for _ in 1 2 3 4 5 6 7 8 9 10; do [ -e fakerapl/intel-rapl:1/name ] && break; sleep 0.2; done
TUNEFARM_RAPL_ROOT=$PWD/fakerapl TUNEFARM_PROFILE=1 "$TF" run "$NOISY_JOB" -o fake.h5 \
    >fake.out 2>fake.err || true
kill "$fake" 2>/dev/null || true
wait "$fake" 2>/dev/null || true
check "RAPL at 1 W: every ok row measured, a launch's energy 1 W x its time, in the metric" \
    $NOISE_CHECK fake.h5 noisy $NOISE_ARGS --energy measured --watts 1 --summary fake.out
check "  the energy window's launches count in device_time" $PY -c "
import h5py, sys
d = h5py.File('fake.h5')['kernels/noisy/results'][()]
# the samples alone are max_time (0.1 s) at most; the window adds 0.05 s at least
sys.exit(0 if (d['device_time'] > d['time_mean'] * d['samples'] + 0.045).all() else 1)"

if [ "$noise_alone" = 1 ]; then
    finish
fi
