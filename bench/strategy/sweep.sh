#!/usr/bin/env bash
# bench/strategy/sweep.sh - many study runs at once: each variant's seeds are cut
# into chunks and every (variant, chunk) is one bench/strategy/study process, up to
# JOBS at a time (a 16-core machine does a 100-seed comparison of seven variants at
# 2% in about seven minutes). Each writes OUTDIR/NAME.FIRST.txt, and its searches'
# qualities one per line to OUTDIR/NAME.FIRST.seeds.tsv (study --per-seed, unless
# the variant's arguments name one, or --evals or --pairs, which print no
# qualities); bench/strategy/sweep_merge.py joins the chunks into one table per
# variant, and compares variants seed by seed (--paired BASE).
#
# usage: bench/strategy/sweep.sh JOBS OUTDIR FIRST SEEDS CHUNK CACHE... < VARIANTS
# VARIANTS: one per line, NAME|ENV|STUDY-ARGS (ENV: space-separated VAR=VALUE, may be
# empty; STUDY-ARGS: study's options, without -n, -f and the caches). The lines are
# started in order: put the longest first. Chunks of at least 2 seeds (a standard
# error needs two). Exits non-zero when a study failed (its file says why).
set -eu
# The usage is the header from its "usage:" line on.
usage() { sed -n '/^# usage:/,/^set -eu/{/^set -eu/!s/^# \{0,1\}//p}' "$0"; }
case ${1-} in -h | --help) usage; exit 0 ;; esac
[ $# -ge 6 ] || { usage >&2; exit 2; }
jobs=$1 out=$2 first=$3 seeds=$4 chunk=$5
shift 5
for v in "$jobs" "$first" "$seeds" "$chunk"; do
    [[ $v =~ ^[1-9][0-9]*$ ]] || { echo "sweep: JOBS, FIRST, SEEDS and CHUNK are integers >= 1, not '$v'" >&2; exit 2; }
done
study=$(cd "$(dirname "$0")" && pwd)/study
mkdir -p "$out"
list=$(mktemp)
trap 'rm -f "$list"' EXIT
while IFS='|' read -r name envs args || [ -n "$name" ]; do
    [ -n "$name" ] || continue
    [[ $name =~ ^[A-Za-z0-9_.+-]+$ ]] || { echo "sweep: variant name '$name': letters, digits and _.+- only" >&2; exit 2; }
    for e in $envs; do
        [[ $e == *=* ]] || { echo "sweep: $name: '$e' is not VAR=VALUE" >&2; exit 2; }
    done
    for ((f = first; f < first + seeds; f += chunk)); do
        n=$((first + seeds - f < chunk ? first + seeds - f : chunk))
        printf '%s\0%s\0%s\0%s\0%s\0' "$name" "$envs" "$args" "$f" "$n" >>"$list"
    done
done
# xargs appends each chunk's five fields after the caches.
export SWEEP_STUDY=$study SWEEP_OUT=$out
# shellcheck disable=SC2016 # the inner script expands its own arguments
xargs -0 -n 5 -P "$jobs" bash -c '
    all=("$@"); k=${#all[@]}
    name=${all[k-5]} envs=${all[k-4]} args=${all[k-3]} f=${all[k-2]} n=${all[k-1]}
    read -r -a e <<<"$envs"; read -r -a a <<<"$args"
    case " $args " in
        *" --per-seed "* | *" --evals "* | *" --pairs "*) ;;
        *) a+=(--per-seed "$SWEEP_OUT/$name.$f.seeds.tsv") ;;
    esac
    env ${e[@]+"${e[@]}"} "$SWEEP_STUDY" ${a[@]+"${a[@]}"} -n "$n" -f "$f" --se "${all[@]:0:k-5}" \
        >"$SWEEP_OUT/$name.$f.txt" 2>&1 || { echo "sweep: $name seeds $f.. failed: $SWEEP_OUT/$name.$f.txt" >&2; exit 1; }
' sweep "$@" <"$list"
