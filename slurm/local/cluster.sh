#!/usr/bin/env bash
# A Slurm cluster on localhost, for tests and for trying the sbatch templates
# without a real cluster: munged + slurmctld + two slurmd, that is two Slurm
# nodes on this one host (see slurm.conf.in): NODE0, named as the host, in
# partitions local (the default) and nvidia; NODE1 (the host's name with "-1")
# in partition amd, its slurmd in a UTS namespace of its own whose host name is
# NODE1 where the kernel allows it (`unshare --uts`, root). Every file they
# write (munge key and socket, slurm.conf, state, spool, temporary files, logs,
# pid files) is inside DIR. Nothing system-wide is read or written except the
# installed packages (Debian/Ubuntu: munge slurmctld slurmd slurm-client;
# scripts/deps.sh test installs them). Run as root (slurmd must be root to start
# jobs as their user); no systemd, no cgroups needed.
#
#   slurm/local/cluster.sh start DIR   start the daemons, wait until the nodes are idle
#   slurm/local/cluster.sh stop DIR    cancel every job, stop the daemons
#   slurm/local/cluster.sh env DIR     print the export line for the clients:
#                                      eval "$(slurm/local/cluster.sh env DIR)"; sinfo
#
# `start` exits 0 once `sinfo` shows both nodes idle; otherwise it prints why and
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

# A TCP port nobody listens on, with the next two free too (slurmctld and the
# two slurmd). Listening sockets from /proc/net/tcp{,6} (state 0A), no tools needed.
free_ports() {
    local used p i
    used=$(cat /proc/net/tcp /proc/net/tcp6 2>/dev/null | while read -r _ local _ state _; do
        [ "$state" = 0A ] && echo $((16#${local##*:}))
    done | sort -u)
    for i in $(seq 1 200); do
        p=$((20000 + (RANDOM % 4000) * 3)) # below the ephemeral range (32768-)
        if ! grep -qx "$p" <<<"$used" && ! grep -qx "$((p + 1))" <<<"$used" &&
            ! grep -qx "$((p + 2))" <<<"$used"; then
            echo "$p"
            return 0
        fi
    done
    return 1
}

# stop_pids FILE...: end the daemons whose pid FILEs hold (TERM to all at once,
# then KILL to those left after 10 s).
stop_pids() {
    local f pid pids="" i left
    for f in "$@"; do
        [ -s "$f" ] && pid=$(cat "$f") && kill "$pid" 2>/dev/null && pids="$pids $pid"
        rm -f "$f"
    done
    for i in $(seq 1 100); do
        left=""
        for pid in $pids; do
            kill -0 "$pid" 2>/dev/null && left="$left $pid"
        done
        pids=$left
        [ -z "$pids" ] && return 0
        sleep 0.1
    done
    for pid in $pids; do
        kill -KILL "$pid" 2>/dev/null
    done
    return 0
}

# The nodes' states, e.g. "idle" once both are, "idle unknown" before.
node_state() { sinfo -h -N -o '%T' 2>/dev/null | sort -u | tr '\n' ' ' | sed 's/ $//'; }

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
    stop_pids "$dir"/slurmd-*.pid
    stop_pids "$dir/slurmctld.pid"
    stop_pids "$dir/munge/munged.pid"
}

do_start() {
    local p missing="" host node_line node_hw nodes port i state n launch
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
    # The daemons read nothing, but started with standard input closed (a CI
    # runner's) their first socket becomes fd 0 and slurmd's job launches fail
    # (the job is requeued and held): give them /dev/null.
    exec </dev/null

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

    # slurm.conf: this host, three free ports, the nodes as slurmd -C sees it.
    host=$(hostname -s)
    node_line=$(slurmd -C 2>/dev/null | grep '^NodeName=') || true
    if [ -z "$node_line" ]; then
        say "slurmd -C did not describe this node"
        do_stop fresh
        exit 1
    fi
    node_hw=${node_line#NodeName=* }
    nodes="$host $host-1"
    port=$(free_ports) || { say "no three free TCP ports"; do_stop fresh; exit 1; }
    sed -e "s|@HOST@|$host|g" -e "s|@NODE0@|$host|g" -e "s|@NODE1@|$host-1|g" \
        -e "s|@DIR@|$dir|g" -e "s|@CTLD_PORT@|$port|g" -e "s|@SLURMD_PORT0@|$((port + 1))|g" \
        -e "s|@SLURMD_PORT1@|$((port + 2))|g" -e "s|@USER@|$(id -un)|g" \
        -e "s|@NODE_HW@|$node_hw|" "$here/slurm.conf.in" >"$conf"
    : >"$dir/plugstack.conf"

    # -c: start from a clean state (no jobs of an earlier cluster in DIR/state).
    if ! slurmctld -c -f "$conf" 2>>"$dir/log/slurmctld.log"; then
        say "slurmctld did not start"
        tail -n 5 "$dir/log/slurmctld.log" >&2
        do_stop fresh
        exit 1
    fi
    # Node 0 is this host. Node 1's slurmd (and so every job step on node 1)
    # runs in a UTS namespace of its own whose host name is the node's name:
    # the PMIx library in Slurm's step daemon and Open MPI in the ranks tell
    # nodes apart by host name, and with one name for two nodes a step over
    # both (slurm/hetjob.sbatch) gets node 0's list of local ranks on node 1
    # and clashing shared-memory segments. Where namespaces are not allowed,
    # node 1 keeps this host's name (jobs on one node are not affected).
    for n in $nodes; do
        mkdir -p "$dir/tmp/$n" "$dir/spool/$n" || exit 1
        launch=(slurmd -f "$conf" -N "$n")
        if [ "$n" != "$host" ]; then
            if unshare --uts true 2>"$dir/log/unshare.log"; then
                # shellcheck disable=SC2016 # expanded by that sh
                launch=(unshare --uts sh -c 'hostname "$0" && exec "$@"' "$n" "${launch[@]}")
            else
                say "node $n shares this host's name: unshare --uts: $(tail -n 1 "$dir/log/unshare.log")"
            fi
        fi
        if ! "${launch[@]}" 2>>"$dir/log/slurmd-$n.log"; then
            say "slurmd of node $n did not start"
            tail -n 5 "$dir/log/slurmd-$n.log" >&2
            do_stop fresh
            exit 1
        fi
    done

    # Wait (30 s at most) until both nodes registered and are idle.
    state=""
    for i in $(seq 1 300); do
        state=$(node_state)
        case "$state" in
        idle) say "nodes $host and $host-1 idle (slurmctld port $port, $dir)"; return 0 ;;
        *down* | *drain* | *fail*) [ "$i" -gt 50 ] && break ;;
        esac
        sleep 0.1
    done
    say "the nodes did not become idle (states: ${state:-none}); $(sinfo -h -N -o '%E' 2>/dev/null | grep -v '^none$' | head -n 1)"
    for f in slurmctld slurmd-$host slurmd-$host-1 munged; do
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
