#!/usr/bin/env bash
# tests/integration/t1.sh - `tunefarm import-t1` (issue 14 item 9): T1 files
# (Kernel Tuner's input format) imported into kernel folders that load, count,
# compile and run. The round trip: kernels/sgemm written by hand as a T1 file
# (tests/fixtures/t1/sgemm.T1.json, restrictions in Python with in, is,
# if-else, True, <<, not) imports to a kernel whose space lists exactly the
# shipped kernel's valid configurations for s1024 on sm_90, and compiles with
# NVRTC (and hipRTC for gfx90a); tricky.T1.json (names the CUDA headers
# break, a string and a bool parameter, a local header) and the community's
# convolution_milo.T1.json list exactly what Python's eval() of their
# restrictions keeps (tests/integration/t1_check.py), the latter the 4,362
# configurations of the Kernel Tuner caches. Bad input: JSON syntax with
# file:line:col, unknown fields, untranslatable restrictions, a missing
# source; --partial. On a machine with an NVIDIA GPU the imports also run
# (all ok); elsewhere that is skipped.
. "$(dirname "$0")/../lib.sh"
cd "$TMP"
T1FIX="$ROOT/tests/fixtures/t1"
CONV="${DATASETS:-$ROOT/../shared/datasets}/benchmark_hub/convolution_milo"
T1CHECK="$PY $ROOT/tests/integration/t1_check.py"
SGEMM_REF="$ROOT/kernels/sgemm/reference.c:sgemm_reference"
TRICKY_REF="$T1FIX/tricky_reference.c"
have_nvrtc() { ldconfig -p 2>/dev/null | grep -q 'libnvrtc\.so' || ls /usr/local/cuda/lib64/libnvrtc.so* >/dev/null 2>&1; }
have_hiprtc() { ldconfig -p 2>/dev/null | grep -qE 'libhiprtc\.so|libamdhip64\.so'; }

echo "-- command line"
check "import-t1 --help" "$TF" import-t1 --help
check "help import-t1" sh -c "\"$TF\" help import-t1 | grep -q -- --partial"
check "the command list names it" sh -c "\"$TF\" help | grep -q 'import-t1 FILE.json'"
expect_fail "without a file exits 2" 2 "$TF" import-t1
expect_fail "a missing file exits 2" 2 "$TF" import-t1 nowhere.json
check "  naming it" contains "$TMP/last" "nowhere.json"

echo "-- round trip: kernels/sgemm as a T1 file"
check "imports with its reference, nothing left untranslated" \
    "$TF" import-t1 -q "$T1FIX/sgemm.T1.json" -o sg --reference "$SGEMM_REF" --rtol 1e-3 --atol 1e-3
check "  kernel.yaml, job.yaml, the source and the reference" \
    sh -c "grep -q '^verify: {rtol: 0.001, atol: 0.001}' sg/kernel.yaml && [ -f sg/kernel.yaml ] && [ -f sg/job.yaml ] && cmp -s sg/sgemm.cu '$ROOT/kernels/sgemm/sgemm.cu' && cmp -s sg/reference.c '$ROOT/kernels/sgemm/reference.c'"
"$TF" space sg -q >sg.count 2>&1 || true
"$TF" space "$ROOT/kernels/sgemm" -p s1024 -q >ship.count 2>&1 || true
check "space counts what the shipped sgemm counts for s1024 on sm_90 (878832 of 6998400)" sh -c \
    "grep -q ': 6998400 configurations, 878832 valid' sg.count && grep -q ': 6998400 configurations, 878832 valid' ship.count"
"$TF" space sg -q --list >sg.list 2>&1 || true
"$TF" space "$ROOT/kernels/sgemm" -p s1024 -q --list >ship.list 2>&1 || true
check "  the same valid configurations, in the same order" sh -c "[ -s sg.list ] && cmp sg.list ship.list"
check "  Python's restrictions became tunefarm's (in, is, if-else, True, <<)" sh -c \
    "grep -q -- \"- 'SA == 0 ? MDIMA == 8 : 1'\" sg/kernel.yaml &&
     grep -q -- '- SB == 1 or NDIMB == 8' sg/kernel.yaml &&
     grep -q -- '- PAD == 0 or (1 == SA or 1 == SB)' sg/kernel.yaml &&
     grep -q -- '<= 1 \* 2 \*\* 16' sg/kernel.yaml"
check "  value generators became ranges, the search and budget a job" sh -c \
    "grep -q 'MWG: {pow2: \[16, 256\]}' sg/kernel.yaml && grep -q 'strategy: random' sg/job.yaml &&
     grep -q 'budget: 4' sg/job.yaml"
if have_nvrtc; then
    export XDG_CACHE_HOME="$TMP/t1-cache"
    check "compile --arch sm_90: the job's variants compile (NVRTC)" sh -c \
        "\"$TF\" compile -q sg/job.yaml --arch sm_90 -j 2 >sg.compile 2>&1 &&
         grep -q 'sm_90: 4 variants of 1 kernel(s): 4 compiled now, 0 from the cache, 0 do not' sg.compile"
    export XDG_CACHE_HOME="$TMP/cache"
else
    skip "compile the imported sgemm for sm_90" "no NVRTC on this machine"
fi
if have_hiprtc; then
    export XDG_CACHE_HOME="$TMP/t1-cache-hip"
    check "  and for gfx90a (hipRTC): one source for both vendors" sh -c \
        "\"$TF\" compile -q sg/job.yaml --arch gfx90a -j 2 >sg.hip 2>&1 && grep -q '0 do not compile' sg.hip"
    export XDG_CACHE_HOME="$TMP/cache"
else
    skip "compile the imported sgemm for gfx90a" "no hipRTC on this machine"
fi

echo "-- names the compilers break, strings, bools, local headers"
check "tricky.T1.json imports" sh -c \
    "\"$TF\" import-t1 \"$T1FIX/tricky.T1.json\" -o tr --reference \"$TRICKY_REF\" >tr.import 2>&1"
check "  T and width are renamed, with a note saying why" sh -c \
    "grep -q '^  T_: \[1, 2, 3, 4\]' tr/kernel.yaml && grep -q '^  width_: {range: \[1, 4\]}' tr/kernel.yaml &&
     grep -q \"note: ConfigurationSpace.TuningParameters\[1\].Name: parameter 'T' is 'T_' in kernel.yaml\" tr.import"
check "  the source keeps the T1 names through #defines after tunefarm.h" sh -c \
    "grep -A5 '#include \"tunefarm.h\"' tr/tricky.cu | grep -q '^#define T T_' &&
     grep -q '^#define width width_' tr/tricky.cu && cmp -s tr/tricky_helper.h '$T1FIX/tricky_helper.h'"
"$TF" space tr -q --list >tr.list 2>&1 || true
check "  lists what Python's eval() of the restrictions keeps, in order" $T1CHECK "$T1FIX/tricky.T1.json" tr.list
if have_nvrtc; then
    export XDG_CACHE_HOME="$TMP/t1-cache-tricky"
    check "  every valid variant compiles (the #defines work, the header was copied)" sh -c \
        "\"$TF\" compile -q tr/job.yaml --arch sm_90 -j 2 >tr.compile 2>&1 &&
         grep -q 'sm_90: 80 variants of 1 kernel(s): 80 compiled now, 0 from the cache, 0 do not' tr.compile"
    # without C linkage the entry would be _Z6trickyPfPKfi, which tunefarm does not look up
    check "  with the entry unmangled: the source was wrapped in extern \"C\" as Kernel Tuner does" $PY -c "
import glob, sys
cubins = [open(p, 'rb').read() for p in glob.glob('$TMP/t1-cache-tricky/tunefarm/cuda/*/*.cubin')]
sys.exit(0 if cubins and all(b'.text.tricky\\0' in c for c in cubins) else 1)"
    export XDG_CACHE_HOME="$TMP/cache"
fi
if have_hiprtc; then
    export XDG_CACHE_HOME="$TMP/t1-cache-tricky-hip"
    check "  and for gfx90a (hipRTC, the local header found through -I)" sh -c \
        "\"$TF\" compile -q tr/job.yaml --arch gfx90a -j 2 >tr.hip 2>&1 &&
         grep -q 'gfx90a: 80 variants of 1 kernel(s): 80 compiled now, 0 from the cache, 0 do not' tr.hip"
    export XDG_CACHE_HOME="$TMP/cache"
else
    skip "compile the imported tricky kernel for gfx90a" "no hipRTC on this machine"
fi

echo "-- the community's convolution_milo.T1.json"
if [ -f "$CONV/convolution_milo.T1.json" ]; then
    expect_fail "without its source and a reference: exit 2, nothing written" 2 \
        "$TF" import-t1 "$CONV/convolution_milo.T1.json" -o conv
    check "  says the source is not in the dataset, and what to pass" sh -c \
        "grep -q \"convolution_milo.T1.json:[0-9]*:[0-9]*: error: KernelSpecification.KernelFile: the kernel source 'convolution_milo.cu' is not there\" '$TMP/last' &&
         grep -q 'pass --source FILE' '$TMP/last' && grep -q -- '--reference' '$TMP/last' && [ ! -e conv ]"
    check "  names the constant-memory argument at its line" sh -c \
        "grep -q 'T1.json:161:18: error: KernelSpecification.Arguments\[2\].MemType' '$TMP/last'"
    check "--partial writes the rest (skeleton source and reference)" \
        "$TF" import-t1 -q --partial "$CONV/convolution_milo.T1.json" -o conv
    "$TF" space conv --arch sm_90 -q >conv.count 2>&1 || true
    check "  space --count: 4362 valid of 10240, as the dataset says" \
        grep -q ': 10240 configurations, 4362 valid' conv.count
    "$TF" space conv -q --list >conv.list 2>&1 || true
    check "  exactly Python's valid set, and the Kernel Tuner cache's keys" \
        $T1CHECK "$CONV/convolution_milo.T1.json" conv.list "$CONV/A100.json.gz"
    check "  Kernel Tuner's grid rule, max(filter_width) in a size" sh -c \
        "grep -q -- '- ceil(problem_size_x / (block_size_x \* tile_size_x))' conv/kernel.yaml &&
         grep -q 'size: (problem_size_x + 15 - 1) \* (problem_size_y + 15 - 1)}' conv/kernel.yaml"
    printf '__global__ void convolution_kernel(float *o, const float *i, const float *f) {}\n' >conv.cu
    check "--source FILE takes the source" sh -c \
        "\"$TF\" import-t1 -q --partial --force \"$CONV/convolution_milo.T1.json\" -o conv --source conv.cu &&
         grep -q '^__global__ void convolution_kernel' conv/conv.cu && grep -q '^source: conv.cu' conv/kernel.yaml"
    check "  and says the entry is not extern \"C\"" sh -c \
        "\"$TF\" import-t1 --partial --force \"$CONV/convolution_milo.T1.json\" -o conv --source conv.cu 2>&1 | grep -q 'extern \"C\"'"
    expect_fail "an existing folder is not overwritten without --force" 2 \
        "$TF" import-t1 -q --partial "$CONV/convolution_milo.T1.json" -o conv
else
    skip "convolution_milo.T1.json" "no $CONV"
fi

echo "-- bad input: exit 2, the place, nothing written"
# bad_t1 NAME FILE LOCATION TEXT: importing FILE (written by the caller) exits
# 2 naming LOCATION and TEXT, and writes no folder.
bad_t1() {
    local name=$1 file=$2 loc=$3 text=$4 rc=0
    rm -rf badout
    "$TF" import-t1 "$file" -o badout --reference "$TRICKY_REF" >"$TMP/out" 2>&1 || rc=$?
    if [ "$rc" -eq 2 ] && contains "$TMP/out" "$loc" && contains "$TMP/out" "$text" && [ ! -e badout ]; then
        pass "$name"
    else
        echo "      exit $rc; expected 2 with '$loc' and '$text'" >>"$TMP/out"
        fail "$name" "$TMP/out"
    fi
}
mkdir -p bad && cp "$T1FIX/tricky.cu" "$T1FIX/tricky_helper.h" bad/
# a trailing comma on line 5
sed 's/"Default": 64}/"Default": 64,}/' "$T1FIX/tricky.T1.json" >bad/syntax.T1.json
bad_t1 "JSON syntax: file:line:col" bad/syntax.T1.json "bad/syntax.T1.json:5:" "not valid JSON"
sed 's/"Default": 64}/"Default": 64, "Default": 32}/' "$T1FIX/tricky.T1.json" >bad/dup.T1.json
bad_t1 "a duplicate key" bad/dup.T1.json "bad/dup.T1.json:5:" "duplicate object key"
sed 's/"Conditions"/"Condtions"/' "$T1FIX/tricky.T1.json" >bad/unknown.T1.json
bad_t1 "an unknown field, with did-you-mean and its place" bad/unknown.T1.json \
    "bad/unknown.T1.json:11:10: error: ConfigurationSpace.Condtions" "did you mean 'Conditions'?"
sed 's/"not (T == 4 and width == 4)"/"not (T \& 4 and width == 4)"/' "$T1FIX/tricky.T1.json" >bad/bitwise.T1.json
bad_t1 "an untranslatable restriction: its text, JSON path and column" bad/bitwise.T1.json \
    "bad/bitwise.T1.json:17:36: error: ConfigurationSpace.Conditions[4].Expression: 'not (T & 4 and width == 4)': column 8: '&' (bitwise and) has no tunefarm equivalent" \
    "nothing written"
sed 's/"Language": "CUDA"/"Language": "OpenCL"/' "$T1FIX/tricky.T1.json" >bad/opencl.T1.json
bad_t1 "an OpenCL kernel" bad/opencl.T1.json "KernelSpecification.Language" "port the kernel to CUDA"
sed 's/"range(1, 5)"/"range(1, 5.5)"/' "$T1FIX/tricky.T1.json" >bad/values.T1.json
bad_t1 "values that do not evaluate" bad/values.T1.json \
    "bad/values.T1.json:7:" "range() takes integers"
printf '[1, 2]\n' >bad/array.T1.json
bad_t1 "not a T1 file" bad/array.T1.json "bad/array.T1.json" "expected an object"
check "--partial: the restriction left out, kept as a comment, exit 0" sh -c \
    "\"$TF\" import-t1 -q --partial bad/bitwise.T1.json -o partial --reference '$TRICKY_REF' &&
     grep -q \"# NOT TRANSLATED (Conditions\[4\]): column 8: '&' (bitwise and)\" partial/kernel.yaml &&
     grep -q '^  # - not (T & 4 and width == 4)' partial/kernel.yaml"
"$TF" space partial -q >partial.count 2>&1 || true
check "  a larger space: 5 of 6 restrictions" sh -c \
    "grep -q '^kernel tricky (partial/kernel.yaml): 5 parameters, 5 constraints' partial.count"

echo "-- hostile text stays text; the folder's files are not overwritten unasked"
# t1_edit OUT PYTHON: tricky.T1.json edited by PYTHON (on `d`) into OUT.
t1_edit() {
    $PY -c "
import json, re, sys
d = json.load(open('$T1FIX/tricky.T1.json'))
$2
json.dump(d, open('$1', 'w'))"
}
cp "$T1FIX/tricky.cu" "$T1FIX/tricky_helper.h" bad/
"$TF" space -q tr >tr.count 2>&1 || true
valid=$(sed -n 's/.* \([0-9][0-9]*\) valid.*/\1/p' tr.count | head -n 1)
t1_edit bad/inject.T1.json 'd["General"]["BenchmarkName"] = "tricky"
d["Search"] = {"Name": "x\nverify: {rtol: 1e29}\n#"}
d["KernelSpecification"]["Device"] = {"Name": "x\narchive: /tmp/elsewhere.h5\n#"}
d["ConfigurationSpace"]["Conditions"][0]["Parameters"] = ["block_size_x\nverify: {atol: 1e9}\n#", "T"]'
check "line breaks in the T1 file's names and notes stay inside comments" sh -c \
    "\"$TF\" import-t1 -q --partial bad/inject.T1.json -o inject --reference '$TRICKY_REF' &&
     ! grep -q '^verify: {\(rtol: 1e29\|atol: 1e9\)}' inject/kernel.yaml && ! grep -q '^archive:' inject/job.yaml"
"$TF" space -q inject >inject.count 2>&1 || true
check "  the space is the same as without them ($valid valid)" sh -c \
    "[ -n '$valid' ] && grep -q ' $valid valid' inject.count"
mkdir -p keep && echo precious >keep/job.yaml
expect_fail "a folder whose job.yaml exists needs --force (exit 2)" 2 \
    "$TF" import-t1 -q "$T1FIX/tricky.T1.json" -o keep --reference "$TRICKY_REF"
check "  naming it, and leaving it as it was" sh -c \
    "grep -q 'keep/job.yaml exists; pass --force' '$TMP/last' && grep -qx precious keep/job.yaml && [ ! -e keep/kernel.yaml ]"
mkdir -p linked && echo victim >victim.txt && ln -s "$TMP/victim.txt" linked/job.yaml
expect_fail "a symbolic link among the files is refused, even with --force (exit 2)" 2 \
    "$TF" import-t1 -q --force "$T1FIX/tricky.T1.json" -o linked --reference "$TRICKY_REF"
check "  the file it points to is untouched" grep -qx victim victim.txt
# a header in a subfolder of the source's ("sub/tricky_helper.h") is written in
# that subfolder of the output: a symbolic link there is refused as well
mkdir -p nested/sub linked2 elsewhere && cp "$T1FIX/tricky.T1.json" nested/t.T1.json &&
    sed 's|#include "tricky_helper.h"|#include "sub/tricky_helper.h"|' "$T1FIX/tricky.cu" >nested/tricky.cu &&
    cp "$T1FIX/tricky_helper.h" nested/sub/ && ln -s ../elsewhere linked2/sub
expect_fail "a symbolic link to a folder among the files' folders is refused, even with --force (exit 2)" 2 \
    "$TF" import-t1 -q --force nested/t.T1.json -o linked2 --reference "$TRICKY_REF"
check "  naming it, and writing nothing where it points" sh -c \
    "grep -q 'linked2/sub is a symbolic link' '$TMP/last' && [ -z \"\$(ls -A elsewhere)\" ]"
t1_edit bad/clash.T1.json 'd["KernelSpecification"]["KernelFile"] = "kernel.yaml"'
cp "$T1FIX/tricky.cu" bad/kernel.yaml
expect_fail "a KernelFile named kernel.yaml is refused (exit 2)" 2 \
    "$TF" import-t1 -q bad/clash.T1.json -o clash --reference "$TRICKY_REF"
check "  saying why" contains "$TMP/last" "the KernelFile 'kernel.yaml' would be written over"
t1_edit bad/null.T1.json 'd["ConfigurationSpace"]["TuningParameters"][1]["Name"] = "null"
for c in d["ConfigurationSpace"]["Conditions"]:
    c["Expression"] = re.sub(r"\bT\b", "null", c["Expression"])
    c["Parameters"] = ["null" if p == "T" else p for p in c["Parameters"]]'
check "a parameter named null (a YAML null) is renamed, and the folder loads" sh -c \
    "\"$TF\" import-t1 -q bad/null.T1.json -o nullp --reference '$TRICKY_REF' && \"$TF\" space -q nullp >nullp.count 2>&1 &&
     grep -q ' $valid valid' nullp.count"
# defaults read as the parameter's values: True is 1 for a bool parameter, and
# an integer past 2^53 is matched as an integer (as a double it is its neighbour)
t1_edit bad/defaults.T1.json 'p = d["ConfigurationSpace"]["TuningParameters"]
p[4]["Default"] = True
p[2]["Values"] = "[9007199254740992, 9007199254740993]"
p[2]["Default"] = 9007199254740993'
check "a default of True, and one of 2^53 + 1, are the values they name" sh -c \
    "\"$TF\" import-t1 -q bad/defaults.T1.json -o defaults --reference '$TRICKY_REF' &&
     sed -n '/^default:/,\$p' defaults/kernel.yaml >defaults.yaml &&
     grep -qx '  unroll: 1' defaults.yaml && grep -qx '  width_: 9007199254740993' defaults.yaml"
t1_edit bad/noparams.T1.json 'd["ConfigurationSpace"]["TuningParameters"] = []
d["ConfigurationSpace"]["Conditions"] = []'
bad_t1 "no tuning parameters" bad/noparams.T1.json "ConfigurationSpace.TuningParameters" \
    "expected a non-empty array"
t1_edit bad/long.T1.json 'd["ConfigurationSpace"]["TuningParameters"][1]["Name"] = "T" * 300'
bad_t1 "a parameter name of 300 bytes" bad/long.T1.json "TuningParameters[1]" "at most 255 bytes"
# A buffer's Size that no buffer can have: refused where the T1 file says it,
# or, an expression, when what was written does not load; no folder is left.
t1_edit bad/negsize.T1.json 'd["KernelSpecification"]["Arguments"][1]["Size"] = -5'
bad_t1 "a buffer Size of -5" bad/negsize.T1.json "Arguments[1].Size" "-5 elements: a buffer holds 0 or more"
t1_edit bad/hugesize.T1.json 'd["KernelSpecification"]["Arguments"][1]["Size"] = "2**70"'
bad_t1 "a buffer Size of 2**70" bad/hugesize.T1.json "size of buffer 'in'" "does not load (above); the files were removed"

echo "-- running the imports on a GPU"
if "$TF" devices 2>/dev/null | grep -qE '^[0-9]+ +cuda '; then
    # the T1's Budget (4 configurations): the default is one of them, as in every job
    check "the imported sgemm runs: its budget of 4 configurations, all ok" sh -c \
        "\"$TF\" run -q -n 1 sg/job.yaml -o sg.h5 >sg.run 2>&1 &&
         $PY '$ROOT/tests/integration/check_archive.py' sg.h5 sgemm_t1 --rows 4 --all-ok"
    check "the imported tricky kernel runs: its 80 valid configurations, all ok" sh -c \
        "\"$TF\" run -q -n 1 tr/job.yaml -o tr.h5 >tr.run 2>&1 &&
         $PY '$ROOT/tests/integration/check_archive.py' tr.h5 tricky --rows 80 --all-ok"
else
    skip "running the imports" "no NVIDIA GPU (skipped: no device)"
fi

finish
