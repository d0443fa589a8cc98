#!/usr/bin/env bash
# A one-node Slurm cluster on localhost, for tests and for trying the sbatch
# templates without a real cluster: munged + slurmctld + slurmd, with every
# file they write (munge key and socket, slurm.conf, state, spool, logs, pid
# files) inside DIR. Nothing system-wide is read or written except the
# installed packages (Debian/Ubuntu: munge slurmctld slurmd slurm-client;
# scripts/deps.sh test installs them). Run as root (slurmd must be root to start
# jobs as their user); no systemd, no cgroups needed.
#
#   slurm/local/cluster.sh start DIR   start the daemons, wait until the node is idle
#   slurm/local/cluster.sh stop DIR    cancel every job, stop the daemons
#   slurm/local/cluster.sh env DIR     print the export line for the clients:
#                                      eval "$(slurm/local/cluster.sh env DIR)"; sinfo
#
# `start` exits 0 once `sinfo` shows the node idle; otherwise it prints why and
# the end of the daemons' logs, stops what it started and exits 1 (a missing
# package: exit 3). Daemon logs: DIR/log/.
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cmd=${1:-}
dir=${2:-}
if [ -z "$cmd" ] || [ -z "$dir" ]; then
    sed -n '2,/^$/s/^# \{0,1\}//p' "${BASH_SOURCE[0]}" >&2
    exit 2
fi
mkdir -p "$dir" && dir=$(cd "$dir" && pwd) || exit 2
conf=$dir/slurm.conf
export SLURM_CONF=$conf

say() { echo "cluster: $*" >&2; }

# A TCP port nobody listens on, with the next one free too (slurmctld, slurmd).
# Listening sockets from /proc/net/tcp{,6} (state 0A), no tools needed.
free_port_pair() {
    local used p i
    used=$(cat /proc/net/tcp /proc/net/tcp6 2>/dev/null | while read -r _ local _ state _; do
        [ "$state" = 0A ] && echo $((16#${local##*:}))
    done | sort -u)
    for i in $(seq 1 200); do
        p=$((20000 + (RANDOM % 6000) * 2)) # below the ephemeral range (32768-)
        if ! grep -qx "$p" <<<"$used" && ! grep -qx "$((p + 1))" <<<"$used"; then
            echo "$p"
            return 0
        fi
    done
    return 1
}

# stop_pid FILE: end the daemon whose pid FILE holds (TERM, then KILL after 10 s).
stop_pid() {
    local pid i
    [ -s "$1" ] || return 0
    pid=$(cat "$1")
    if kill "$pid" 2>/dev/null; then
        for i in $(seq 1 100); do
            kill -0 "$pid" 2>/dev/null || break
            sleep 0.1
        done
        kill -0 "$pid" 2>/dev/null && kill -KILL "$pid" 2>/dev/null
    fi
    rm -f "$1"
}

node_state() { sinfo -h -N -o '%T' 2>/dev/null | head -n 1; }

# do_stop [fresh]: "fresh" when start failed (no job can exist: only the daemons).
do_stop() {
    if [ "${1:-}" != fresh ] && [ -f "$conf" ] && [ -s "$dir/slurmctld.pid" ] && kill -0 "$(cat "$dir/slurmctld.pid")" 2>/dev/null; then
        # Cancel every job and wait (10 s at most) for them to end: slurmd does
        # not kill running jobs when it stops, their slurmstepd would outlive it.
        # (Bounded: a controller that does not answer must not hold up the stop.)
        timeout 5 scancel --quiet --user="$(id -un)" 2>/dev/null || true
        local until=$((SECONDS + 10)) jobs
        while [ "$SECONDS" -lt "$until" ]; do
            jobs=$(timeout 5 squeue -h -o %i 2>/dev/null) || break
            [ -z "$jobs" ] && break
            sleep 0.1
        done
    fi
    stop_pid "$dir/slurmd.pid"
    stop_pid "$dir/slurmctld.pid"
    stop_pid "$dir/munge/munged.pid"
}

do_start() {
    local p missing="" host node_line port i state
    PATH=$PATH:/usr/sbin:/sbin
    for p in munged mungekey slurmctld slurmd sinfo sbatch scontrol; do
        command -v "$p" >/dev/null 2>&1 || missing="$missing $p"
    done
    if [ -n "$missing" ]; then
        say "not installed:$missing (Debian/Ubuntu: apt-get install munge slurmctld slurmd slurm-client)"
        exit 3
    fi
    if [ "$(id -u)" -ne 0 ]; then
        say "slurmd must run as root to start jobs"
        exit 3
    fi
    mkdir -p "$dir/munge" "$dir/state" "$dir/spool" "$dir/log" || exit 1
    chmod 700 "$dir/munge"

    # munge: a fresh key, the daemon's socket, pid, log and seed in DIR/munge.
    rm -f "$dir/munge/munge.key"
    if ! mungekey --create --keyfile="$dir/munge/munge.key" 2>"$dir/log/mungekey.log"; then
        say "mungekey failed: $(tail -n 1 "$dir/log/mungekey.log")"
        exit 1
    fi
    chmod 400 "$dir/munge/munge.key"
    # --force: munged wants its socket's directory open to every user, and
    # warns about directories above its files that others may write to (/tmp).
    # Here everything is in DIR, private to root, and only root uses it.
    if ! munged --force --socket="$dir/munge/munge.socket" --key-file="$dir/munge/munge.key" \
        --pid-file="$dir/munge/munged.pid" --log-file="$dir/log/munged.log" \
        --seed-file="$dir/munge/munged.seed" 2>>"$dir/log/munged.log"; then
        say "munged did not start: $(tail -n 1 "$dir/log/munged.log")"
        exit 1
    fi

    # slurm.conf: this host, two free ports, the node as slurmd -C sees it.
    host=$(hostname -s)
    node_line=$(slurmd -C 2>/dev/null | grep '^NodeName=') || true
    if [ -z "$node_line" ]; then
        say "slurmd -C did not describe this node"
        do_stop fresh
        exit 1
    fi
    node_line="NodeName=$host ${node_line#NodeName=* }"
    port=$(free_port_pair) || { say "no free TCP port pair"; do_stop fresh; exit 1; }
    sed -e "s|@HOST@|$host|g" -e "s|@DIR@|$dir|g" -e "s|@CTLD_PORT@|$port|g" \
        -e "s|@SLURMD_PORT@|$((port + 1))|g" -e "s|@USER@|$(id -un)|g" \
        -e "s|@NODE_LINE@|$node_line|" "$here/slurm.conf.in" >"$conf"
    : >"$dir/plugstack.conf"

    # -c: start from a clean state (no jobs of an earlier cluster in DIR/state).
    if ! slurmctld -c -f "$conf" 2>>"$dir/log/slurmctld.log"; then
        say "slurmctld did not start"
        tail -n 5 "$dir/log/slurmctld.log" >&2
        do_stop fresh
        exit 1
    fi
    if ! slurmd -f "$conf" -N "$host" 2>>"$dir/log/slurmd.log"; then
        say "slurmd did not start"
        tail -n 5 "$dir/log/slurmd.log" >&2
        do_stop fresh
        exit 1
    fi

    # Wait (30 s at most) until the node registered and is idle.
    state=""
    for i in $(seq 1 300); do
        state=$(node_state)
        case "$state" in
        idle) say "node $host idle (slurmctld port $port, $dir)"; return 0 ;;
        down* | drain* | fail*) [ "$i" -gt 50 ] && break ;;
        esac
        sleep 0.1
    done
    say "the node did not become idle (state: ${state:-none}); $(sinfo -h -N -o '%E' 2>/dev/null | head -n 1)"
    for f in slurmctld slurmd munged; do
        echo "--- $dir/log/$f.log" >&2
        tail -n 8 "$dir/log/$f.log" >&2 2>/dev/null
    done
    do_stop fresh
    exit 1
}

case "$cmd" in
start) do_start ;;
stop) do_stop ;;
env) echo "export SLURM_CONF='$conf'" ;;
*) echo "cluster.sh: unknown command '$cmd' (start, stop, env)" >&2; exit 2 ;;
esac
