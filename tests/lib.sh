# tests/lib.sh - the shared harness of the shell tests (source it).
# Gives: set -eu, a temporary folder $TMP removed on exit, pass/fail/skip
# counters, `check NAME CMD...` (a test passes if CMD exits 0), `expect_fail
# NAME CODE CMD...` (passes if CMD exits with CODE; its output stays in
# $TMP/last for later checks), and `finish`, which prints
# the closing line "N passed, N failed" and exits non-zero on any failure.
set -eu
# No test reads input: a closed standard input (a CI runner's) would hand fd 0
# to the first file or socket a test or the daemons it starts open.
exec </dev/null
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
TF="$ROOT/tunefarm"
# The community's reference data (../shared/datasets beside the repository):
# $TUNEFARM_DATASETS, else beside this checkout, else beside the repository a
# clone was made from (CI runs a fresh `git clone . /tmp/c`); empty if none.
DATASETS=
for d in "${TUNEFARM_DATASETS:-}" "$ROOT/../shared/datasets" \
    "$(git -C "$ROOT" config --get remote.origin.url 2>/dev/null || true)/../shared/datasets"; do
    if [ -n "$d" ] && [ -d "$d/benchmark_hub" ]; then DATASETS=$(cd "$d" && pwd); break; fi
done
TMP=$(mktemp -d /tmp/tunefarm-test.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
PASSED=0
FAILED=0
SKIPPED=0
PY=/usr/bin/python3
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_mpi_yield_when_idle=1
export XDG_CACHE_HOME="$TMP/cache"

pass() { PASSED=$((PASSED + 1)); echo "ok    $1"; }
fail() { FAILED=$((FAILED + 1)); echo "FAIL  $1"; [ -n "${2:-}" ] && sed 's/^/      /' "$2" | tail -n 25 || true; }
skip() { SKIPPED=$((SKIPPED + 1)); echo "skip  $1: $2"; }

# check NAME CMD...: run CMD (output in $TMP/out), pass if it exits 0.
check() {
    local name=$1; shift
    if "$@" >"$TMP/out" 2>&1; then pass "$name"; else fail "$name" "$TMP/out"; fi
}

# expect_fail NAME CODE CMD...: pass if CMD exits with exactly CODE.
expect_fail() {
    local name=$1 code=$2; shift 2
    local rc=0
    "$@" >"$TMP/out" 2>&1 || rc=$?
    cp "$TMP/out" "$TMP/last"
    if [ "$rc" -eq "$code" ]; then pass "$name"; else
        echo "      expected exit $code, got $rc" >>"$TMP/out"; fail "$name" "$TMP/out"; fi
}

# contains FILE TEXT: the file has TEXT (fixed string).
contains() { grep -qF -- "$2" "$1"; }

finish() {
    echo
    if [ "$SKIPPED" -gt 0 ]; then echo "$PASSED passed, $FAILED failed, $SKIPPED skipped"
    else echo "$PASSED passed, $FAILED failed"; fi
    [ "$FAILED" -eq 0 ]
}
