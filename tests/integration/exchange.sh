#!/usr/bin/env bash
# Integration tests of `tunefarm export` and `tunefarm import`: archives made
# by real host runs (the known-optimum fixture, the fault fixture) exported as
# CSV (read back by pandas.read_csv with no options), JSON, T4 (validated with
# python3-jsonschema against the community's schema) and Kernel Tuner caches;
# the six convolution caches of ../shared/datasets imported into one archive
# that `tunefarm query` compares across six device classes of two vendors;
# export(import(F)) holding F's configurations and times, for Kernel Tuner
# caches and T4 files; tunefarm's own columns (noisy, energy_status, warnings,
# shared and spill bytes, flags, phase) through its T4 export and import; and
# hostile files refused without touching the archive.
# Kernel Tuner itself is not a test dependency: bench/kt_simulate.py runs its
# simulation mode on exported caches (bench/results/export-kt-*.md).
. "$(dirname "$0")/../lib.sh"
cd "$TMP"
FIX="$ROOT/tests/fixtures"
CHECK="$PY $ROOT/tests/integration/check_exchange.py"
DATA="${DATASETS:-$ROOT/../shared/datasets}"
CONV="$DATA/benchmark_hub/convolution_milo"

echo "-- command line"
check "export --help" "$TF" export --help
check "import --help" "$TF" import --help
check "help export" sh -c "\"$TF\" help export | grep -q 'kt-cache'"
check "the command list names both" sh -c "\"$TF\" help | grep -q 'export ARCHIVE' && \"$TF\" help | grep -q 'import ARCHIVE'"
expect_fail "export without --format exits 2" 2 "$TF" export nothing.h5
expect_fail "an unknown format exits 2" 2 "$TF" export nothing.h5 --format xml
check "  naming the formats" contains "$TMP/last" "none of csv, json, t4, kt-cache"
expect_fail "import without a file exits 2" 2 "$TF" import nothing.h5

echo "-- archives from real host runs"
check "run the ranked fixture (38 configurations)" "$TF" run -q -n 1 "$FIX/ranked.yaml" -o ranked.h5
check "run the fault fixture (every failure status)" "$TF" run -q -n 1 "$FIX/faulty.yaml" -o faulty.h5

echo "-- export: CSV, JSON, T4, Kernel Tuner cache"
check "CSV to standard output" sh -c "\"$TF\" export ranked.h5 --format csv >ranked.csv"
check "  pandas.read_csv reads every row and column back" $CHECK csv ranked.h5 ranked.csv
check "CSV with failures, to a file" "$TF" export faulty.h5 --format csv -o faulty.csv
check "  statuses by name, NaN times, messages" $CHECK csv faulty.h5 faulty.csv
check "  no temporary file left" sh -c "! ls faulty.csv.tmp.* 2>/dev/null"
check "JSON" "$TF" export faulty.h5 --format json -o faulty.json
check "  holds the archive's rows" $CHECK json faulty.h5 faulty.json
if [ -d "$DATA/t4-schema" ]; then
    check "T4 of the fault fixture" "$TF" export faulty.h5 --format t4 -o faulty_t4.json
    check "  results and metadata validate against the T4 schemas" \
        $CHECK t4 faulty_t4.json faulty_t4.metadata.json "$DATA/t4-schema"
    check "T4 of the ranked fixture" "$TF" export ranked.h5 --format t4 -o ranked_t4.json
    check "  validates" $CHECK t4 ranked_t4.json ranked_t4.metadata.json "$DATA/t4-schema"
else
    skip "T4 schema validation" "no $DATA/t4-schema"
fi
check "Kernel Tuner cache of the ranked fixture" "$TF" export ranked.h5 --format kt-cache -o ranked_kt.json
check "  keyed and closed as Kernel Tuner reads it" $CHECK kt ranked_kt.json
check "  an enum parameter keeps its strings" grep -q '"Z":\["a","b"\]' ranked_kt.json
check "--run, --problem, --kernel select" sh -c "\"$TF\" export ranked.h5 --format csv --run 0 \
    --problem base --kernel ranked | wc -l | grep -qx 39"
expect_fail "a kernel the archive lacks" 2 "$TF" export ranked.h5 --format csv --kernel nope
check "  says which it has" contains "$TMP/last" "has no kernel 'nope'; it has: ranked"
expect_fail "a run the archive lacks" 2 "$TF" export ranked.h5 --format csv --run 3
expect_fail "an unwritable output" 1 "$TF" export ranked.h5 --format csv -o /proc/nope/x.csv

echo "-- round trip: tunefarm's own columns through its T4"
for f in ranked faulty; do
    check "T4 of the $f fixture, imported into a new archive" sh -c \
        "\"\$0\" export $f.h5 --format t4 -o ${f}_rt.json && \"\$0\" import -q ${f}_back.h5 ${f}_rt.json" "$TF"
    check "  each configuration's row as in $f.h5 (noisy, energy_status, warnings, phase, ...)" \
        $CHECK t4-columns $f.h5 ${f}_back.h5
done

if [ ! -f "$CONV/A100.json.gz" ]; then
    skip "import of the convolution caches" "no $CONV"
    finish
    exit
fi

echo "-- import: six Kernel Tuner caches, six device classes of two vendors"
check "import five caches that name their device" "$TF" import conv.h5 "$CONV/A100.json.gz" \
    "$CONV/A4000.json.gz" "$CONV/A6000.json.gz" "$CONV/W6600.json.gz" "$CONV/W7800.json.gz"
cp conv.h5 before.h5
expect_fail "MI250X's cache names no device: refused" 2 "$TF" import conv.h5 "$CONV/MI250X.json.gz"
check "  saying to give --device" contains "$TMP/last" "give --device NAME"
check "  the archive is untouched" cmp conv.h5 before.h5
check "  and no journal left" test ! -e conv.h5.journal
check "with --device, --arch" "$TF" import conv.h5 "$CONV/MI250X.json.gz" --device "AMD Instinct MI250X" --arch gfx90a
"$TF" query conv.h5 >query.out 2>&1 || true
check "query: a line per device class (six), in both tables" sh -c \
    "[ \$(grep -c '^convolution_kernel 4096x4096 ' query.out) -eq 12 ]"
check "  NVIDIA and AMD side by side" sh -c "grep -q 'NVIDIA RTX A6000' query.out && grep -q 'AMD Instinct MI250X' query.out && grep -q 'AMD Radeon PRO W7800' query.out"
check "  failures counted per class (A6000: 3889 of 4362 ok)" grep -q '3889/4362.*compile_error 252, runtime_error 221' query.out
best=$($CHECK best "$CONV/A100.json.gz")
check "  the A100's best is its fastest median ($best)" grep -q "NVIDIA A100-PCIE-40GB  *$best" query.out
check "  the cross-device table: each class's best on the other five" sh -c \
    "grep -q 'Across device classes' query.out && [ \$(grep -c '(1.00x)' query.out) -ge 6 ] && \
     grep -q '^  best of AMD Instinct MI250X:' query.out"
check "importing a cache again adds nothing" sh -c "\"$TF\" import conv.h5 \"$CONV/A100.json.gz\" | grep -q 'nothing added'"
check "  six runs still" sh -c "\"$TF\" status conv.h5 | grep -q '6 runs, 6 devices'"
mkdir -p copies && cp "$CONV/A100.json.gz" copies/renamed.json.gz
check "a copy under another name adds nothing either" sh -c "\"$TF\" import conv.h5 copies/renamed.json.gz | grep -q 'already in conv.h5 as run 0, from A100.json.gz'"
check "  six runs still" sh -c "\"$TF\" status conv.h5 | grep -q '6 runs, 6 devices'"
expect_fail "a Kernel Tuner cache of six classes is refused" 2 "$TF" export conv.h5 --format kt-cache
check "  saying to choose with --device" contains "$TMP/last" "choose one with --device"
check "CSV of 26172 rows that pandas reads" sh -c "\"$TF\" export conv.h5 --format csv -o conv.csv && $CHECK csv conv.h5 conv.csv"

echo "-- round trip: export(import(F)) holds F's configurations and times"
for dev in A100 A6000 MI250X; do
    name="NVIDIA A100-PCIE-40GB"
    [ $dev = A6000 ] && name="NVIDIA RTX A6000"
    [ $dev = MI250X ] && name="AMD Instinct MI250X"
    check "Kernel Tuner cache $dev" "$TF" export conv.h5 --format kt-cache --device "$name" -o rt_$dev.json
    check "  holds $dev.json.gz's configurations and times" $CHECK kt-roundtrip "$CONV/$dev.json.gz" rt_$dev.json
done
for dev in A100 MI250X; do
    check "T4 $dev: import" "$TF" import t4_$dev.h5 "$CONV/${dev}_T4.json.gz" --kernel convolution_kernel --device "$dev"
    check "  export" "$TF" export t4_$dev.h5 --format t4 -o rt_t4_$dev.json
    check "  holds ${dev}_T4.json.gz's configurations and times" $CHECK t4-roundtrip "$CONV/${dev}_T4.json.gz" rt_t4_$dev.json
    check "  and validates" $CHECK t4 rt_t4_$dev.json rt_t4_$dev.metadata.json "$DATA/t4-schema"
done

echo "-- hostile files never touch the archive"
cp ranked.h5 keep.h5
# refused NAME TEXT FILE [OPTIONS]: importing FILE into ranked.h5 exits 2 with
# TEXT in the message, and ranked.h5 stays byte for byte as it was.
refused() {
    local name=$1 text=$2 file=$3 rc=0
    shift 3
    "$TF" import ranked.h5 "$file" "$@" >"$TMP/out" 2>&1 || rc=$?
    cp "$TMP/out" "$TMP/last"
    if [ "$rc" -eq 2 ] && contains "$TMP/out" "$text" && cmp -s ranked.h5 keep.h5 &&
        [ ! -e ranked.h5.journal ] && ! ls ranked.h5.tmp.* >/dev/null 2>&1; then
        pass "$name"
    else
        echo "      exit $rc; expected 2 with '$text' and the archive untouched" >>"$TMP/out"
        fail "$name" "$TMP/out"
    fi
}
head -c 300000 "$CONV/A4000.json.gz" >cut.json.gz
refused "a truncated gzip'd cache" "truncated gzip data" cut.json.gz
zcat "$CONV/A4000.json.gz" | head -c 5000 >cut.json
refused "a cache cut in the middle of its JSON" "not valid JSON" cut.json
check "  the message names file:line:col" grep -Eq 'cut\.json:[0-9]+:[0-9]+: error: not valid JSON' "$TMP/last"
zcat "$CONV/A4000.json.gz" | sed 's/^"tune_params": {$/"tune_params": "all", "unused": {/' >types.json
refused "tune_params of the wrong type" "tune_params" types.json
zcat "$CONV/A4000.json.gz" | sed 's/"RuntimeFailedConfig"/"MeltedConfig"/' >status.json
refused "an unknown failure name" '"MeltedConfig": expected milliseconds or one of Kernel Tuner' status.json
zcat "$CONV/A4000.json.gz" | sed '0,/"time": [0-9]/s/"time": \([0-9]\)/"time": true, "x": \1/' >wrongtime.json
refused "a time that is true" "has a 'time' that is neither a number nor a text" wrongtime.json
printf '{"results": [{"configuration": {"X": 1}, "times": {}, "invalidity": "meh", "correctness": 0}]}' >t4bad.json
refused "a T4 invalidity outside the schema's" 'results[0].invalidity: "meh"' t4bad.json --kernel t --device d
refused "a kernel whose parameters differ from the archive's" "archive kernel 'ranked' has parameters" \
    "$CONV/A4000.json.gz" --kernel ranked
refused "the archive named as a file" "is the archive" ranked.h5
zcat "$CONV/A4000.json.gz" | sed '0,/"time": [0-9.]*,/s/"time": [0-9.]*,/"time": -1.5,/' >negative.json
refused "a negative time" "has time -1.5: expected a positive number" negative.json
zcat "$CONV/A4000.json.gz" | sed 's/^"block_size_y": \[$/"block_size_y": [1,/' >repeated.json
refused "a parameter value listed twice" "lists the value 1 more than once" repeated.json

echo "-- outputs: an archive is never overwritten, modes and links are kept"
expect_fail "export -o the archive itself exits 1" 1 "$TF" export ranked.h5 --format json -o ranked.h5
check "  saying it is an HDF5 file" contains "$TMP/last" "is an HDF5 file"
check "  and the archive is untouched" cmp -s ranked.h5 keep.h5
expect_fail "best -o another archive exits 1" 1 "$TF" best ranked.h5 --kernel ranked -o faulty.h5
check "  and that archive still reads" "$TF" query faulty.h5
cp ranked.h5 private.h5 && chmod 600 private.h5
check "import into a private archive" "$TF" import -q private.h5 "$CONV/A6000.json.gz"
check "  keeps it private (600)" sh -c "[ \$(stat -c %a private.h5) = 600 ]"
ln -s ranked.h5 link.h5
check "an archive named through a symbolic link" "$TF" import -q link.h5 "$CONV/W6600.json.gz"
check "  stays a link; its file got the runs" sh -c "[ -L link.h5 ] && \"$TF\" query ranked.h5 | grep -q 'W6600'"
cp keep.h5 ranked.h5
check "export to a character device (/dev/null) writes into it" "$TF" export ranked.h5 --format csv -o /dev/null
check "  which is still a device" test -c /dev/null
if [ -w /dev/full ]; then
    expect_fail "query into a full device exits 1" 1 sh -c "\"$TF\" query ranked.h5 >/dev/full"
    check "  saying so" contains "$TMP/last" "cannot write to standard output"
else
    skip "query into /dev/full" "no writable /dev/full"
fi
( flock 9; sleep 30 ) 9>>ranked.h5.journal &
locker=$!
sleep 1
rc=0
"$TF" import ranked.h5 "$CONV/A4000.json.gz" >lock.out 2>&1 || rc=$?
check "an archive a run holds (its journal locked) is refused (exit 1: it cannot be written now)" sh -c "[ $rc -eq 1 ] && grep -q 'in use by another run' lock.out"
check "  and left as it was" cmp -s ranked.h5 keep.h5
kill "$locker" 2>/dev/null || true
wait "$locker" 2>/dev/null || true
rm -f ranked.h5.journal
check "a good file after all that is imported" "$TF" import -q ranked.h5 "$CONV/A4000.json.gz"
check "  beside the ranked kernel" sh -c "\"$TF\" query ranked.h5 | grep -q 'X=2 Y=1 Z=a' && \"$TF\" query ranked.h5 | grep -q 'NVIDIA RTX A4000'"

echo "-- what an imported file holds stays data (hostile names and values)"
# best's make fragment and header: an enum value is text the file chose; a flag
# that is not -DNAME=INTEGER is left out, never escaped into a recipe or a header.
$PY - <<'PYEOF'
import json
def cache(kernel, values, best):
    c = {}
    for i, v in enumerate(values):
        c[v + ",64"] = {"M": v, "N": 64, "time": 1.0 if v == best else 2.0 + i}
    return {"device_name": "NVIDIA A100", "kernel_name": kernel, "tune_params_keys": ["M", "N"],
            "tune_params": {"M": values, "N": [64, 128]}, "cache": c}
shell = "x;touch${IFS}pwned;"
cpp = "x=\n#define N 0\n#error pwned"
json.dump(cache("km", [shell, "y"], shell), open("hostile_make.json", "w"))
json.dump(cache("kh", [cpp, "y"], cpp), open("hostile_header.json", "w"))
PYEOF
check "import enum values with ';', '\${IFS}', '=' and line breaks" sh -c \
    "\"$TF\" import -q hostile.h5 hostile_make.json --arch sm_80 &&
     \"$TF\" import -q hostile.h5 hostile_header.json --arch sm_80"
check "best --format make leaves the shell-laden flag out, saying so" sh -c \
    "\"$TF\" best hostile.h5 -k km -f make -o best.mk 2>best_mk.err && grep -q 'leaves it out' best_mk.err &&
     grep -q ':= -DM=0 -DN=64\$' best.mk && ! grep -q 'touch' best.mk"
printf 'include best.mk\nall:\n\t@echo cc $(KM_BEST_FLAGS) -c x.c\n' >use.mk
check "  a recipe using the fragment runs no command of the file's" sh -c \
    "make -s -f use.mk >make.out 2>&1 && grep -qx 'cc -DM=0 -DN=64 -c x.c' make.out && ! [ -e pwned ]"
check "best's header leaves the '=' and line-break flag out" sh -c \
    "\"$TF\" best hostile.h5 -k kh -o best.h 2>best_h.err && grep -q 'leaves it out' best_h.err &&
     ! grep -q '^#error pwned' best.h && ! grep -q '^#define N 0' best.h"
printf '#include "best.h"\nint m = M, n = N;\n' >use.c
check "  and compiles as it is" gcc -Wall -Werror -c -o use.o use.c \
    -DTUNEFARM_DEVICE_CUDA_SM_80_NVIDIA_A100

# T4: a time_median / time_min of 0 means unknown (schema/import.md), never 0 s.
printf '%s\n' '{"schema_version": "1.0.0", "results": [' \
    ' {"configuration": {"a": 1}, "invalidity": "correct", "measurements": [' \
    '   {"name": "time", "value": 2.0, "unit": "ms"}, {"name": "time_median", "value": 0, "unit": "ms"},' \
    '   {"name": "time_min", "value": 0, "unit": "ms"}]},' \
    ' {"configuration": {"a": 2}, "invalidity": "correct", "measurements": [' \
    '   {"name": "time", "value": 1.0, "unit": "ms"}]}]}' >t4zero.json
check "a T4 time_median of 0 is unknown: the best is a=2 at 1 ms, not a=1 at 0" sh -c \
    "\"$TF\" import -q t4zero.h5 t4zero.json --kernel kz --device 'GPU Z' &&
     \"$TF\" query t4zero.h5 | grep 'GPU Z' | grep -q '1.000 ms.*a=2'"
# T4 measurements of tunefarm's own, out of range: refused, the archive untouched.
for m in '"samples", "value": -1' '"samples", "value": 2.5' '"registers", "value": 1e300' \
    '"time_rsd", "value": -5'; do
    printf '{"schema_version": "1.0.0", "results": [{"configuration": {"a": 1}, "invalidity": "correct", "measurements": [{"name": "time", "value": 1.0, "unit": "ms"}, {"name": %s}]}]}\n' "$m" >t4range.json
    expect_fail "a T4 measurement {\"name\": $m} is refused (exit 2)" 2 \
        "$TF" import t4zero.h5 t4range.json --kernel kz --device 'GPU Z'
done
check "  and the archive keeps its 2 configurations" sh -c \
    "\"$TF\" query t4zero.h5 | grep 'GPU Z' | grep -q '2/2'"
# Timestamps: a date before the year 10000 (1e300 s, or milliseconds given for seconds: refused).
for ts in 1e300 4e12; do
    printf '{"schema_version": "1.0.0", "results": [{"configuration": {"a": 1}, "invalidity": "correct", "timestamp": %s, "measurements": [{"name": "time", "value": 1.0, "unit": "ms"}]}]}\n' "$ts" >t4time.json
    expect_fail "a timestamp of $ts s is refused (exit 2)" 2 \
        "$TF" import t4time.h5 t4time.json --kernel kt --device 'GPU T'
    check "  naming the entry" contains "$TMP/last" "results[0].timestamp"
done
check "  no archive was made" test ! -e t4time.h5

# A T4 measurement named like a Kernel Tuner key stays a metric in tunefarm
# and never replaces that key in a Kernel Tuner cache export.
printf '{"schema_version": "1.0.0", "results": [{"configuration": {"a": 1}, "invalidity": "correct", "measurements": [{"name": "time", "value": 1.5, "unit": "ms"}, {"name": "benchmark_time", "value": 99}]}]}\n' >t4key.json
check "a T4 measurement 'benchmark_time' is imported (a metric)" \
    "$TF" import -q t4key.h5 t4key.json --kernel kk --device 'GPU K'
check "  the Kernel Tuner export keeps its own benchmark_time and time" sh -c \
    "\"$TF\" export t4key.h5 --format kt-cache -o t4key_kt.json &&
     $PY -c \"import json, sys; e = json.load(open('t4key_kt.json'))['cache']['1']; sys.exit(not (e['benchmark_time'] != 99 and abs(e['time'] - 1.5) < 1e-9))\""
check "  and its re-import has the time of 1.5 ms" sh -c \
    "\"$TF\" import -q t4key2.h5 t4key_kt.json && \"$TF\" query t4key2.h5 | grep -q '1.500 ms'"

# A key twice in one JSON object: refused with its line and column.
printf '{"device_name": "GPU D", "kernel_name": "kd", "tune_params_keys": ["a"],\n "tune_params": {"a": [1, 2]},\n "cache": {"1": {"a": 1, "time": 5.0}, "1": {"a": 1, "time": 1.0}, "2": {"a": 2, "time": 3.0}}}\n' >dupkey.json
expect_fail "a cache key given twice is refused (exit 2)" 2 "$TF" import dupkey.h5 dupkey.json
check "  at its line" contains "$TMP/last" "dupkey.json:3:"
check "  naming the cause" contains "$TMP/last" "one object names a key twice"

# Enum values equal as numbers ("1", "1.0"): exported as strings, so the cache reads back.
printf '{"device_name": "G", "kernel_name": "ke", "tune_params_keys": ["a"], "tune_params": {"a": ["1", "1.0", "-0.0", "0.0"]}, "cache": {"1": {"a": "1", "time": 1.0}, "1.0": {"a": "1.0", "time": 2.0}, "-0.0": {"a": "-0.0", "time": 3.0}, "0.0": {"a": "0.0", "time": 4.0}}}\n' >eqenum.json
check "enum values 1, 1.0, -0.0, 0.0 round trip through a Kernel Tuner cache" sh -c \
    "\"$TF\" import -q eqenum.h5 eqenum.json && \"$TF\" export eqenum.h5 --format kt-cache -o eqenum_kt.json &&
     \"$TF\" import -q eqenum2.h5 eqenum_kt.json && grep -qF '\"a\":[\"1\",\"1.0\",\"-0.0\",\"0.0\"]' eqenum_kt.json"

# Names: too long for an archive refused (exit 2); CSV columns unique.
$PY - <<'PYEOF'
import json
a = "p" * 500 + "A"; b = "p" * 500 + "B"
json.dump({"device_name": "G", "kernel_name": "kl", "tune_params_keys": [a, b],
           "tune_params": {a: [1], b: [1, 2]},
           "cache": {"1,1": {a: 1, b: 1, "time": 1.0}, "1,2": {a: 1, b: 2, "time": 2.0}}},
          open("longname.json", "w"))
PYEOF
expect_fail "a 501-byte parameter name is refused (exit 2)" 2 "$TF" import longname.h5 longname.json
check "  saying the limit" contains "$TMP/last" "at most 255 bytes"
printf '{"device_name": "G", "kernel_name": "kcol", "tune_params_keys": ["param_kernel", "kernel"], "tune_params": {"param_kernel": [1], "kernel": [7, 8]}, "cache": {"1,7": {"param_kernel": 1, "kernel": 7, "time": 1.0}, "1,8": {"param_kernel": 1, "kernel": 8, "time": 2.0}}}\n' >cols.json
check "parameters 'param_kernel' and 'kernel': the CSV's columns stay unique" sh -c \
    "\"$TF\" import -q cols.h5 cols.json && \"$TF\" export cols.h5 --format csv | head -n 1 | tr , '\n' | sort | uniq -d | wc -l | grep -qx 0"

expect_fail "an arch holding '/' (the device class separator) is refused (exit 2)" 2 \
    "$TF" import slash.h5 cols.json --device X --arch a/b
check "  saying why" contains "$TMP/last" "separates the parts of a device class"

# More device classes than 64: every one in query, report and best.
printf '{"kernel_name": "kc", "tune_params_keys": ["a"], "tune_params": {"a": [1, 2]}, "cache": {"1": {"a": 1, "time": 1.0}, "2": {"a": 2, "time": 2.0}}}\n' >class.json
for i in $(seq 1 70); do "$TF" import -q classes.h5 class.json --device "Dev$i" >/dev/null; done
check "70 device classes: query lists the 70th" sh -c "\"$TF\" query classes.h5 | grep -q '^kc .*Dev70 '"
check "  the report has 70 groups" sh -c \
    "\"$TF\" report classes.h5 -o classes.html 2>&1 | grep -q '70 group(s)' && grep -q 'Dev70' classes.html"
check "  best has the 70th's macro" sh -c \
    "\"$TF\" best classes.h5 -o classes_best.h && grep -q 'TUNEFARM_DEVICE_IMPORT_DEV70' classes_best.h"

finish
