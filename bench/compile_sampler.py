#!/usr/bin/env python3
"""bench/compile_sampler.py - where a run's compiler processes ran, and how many at once.

usage: bench/compile_sampler.py OUT.txt [INTERVAL_S]   (until SIGTERM / SIGINT)

Every INTERVAL_S (default 0.2) it reads /proc for tunefarm's compiler children
(`tunefarm __compiler BACKEND`, worker/compiler.c): each one's parent (the rank
or `tunefarm compile` that owns its pool), the CPUs it may use (Cpus_allowed_list),
the CPU it last ran on (/proc/PID/stat field 39), its state and its CPU time. On
SIGTERM it writes OUT.txt: per pool (parent pid and its command): the number of
compiler processes, their allowed CPU sets, the distinct CPUs they were seen on,
the most and the mean of them running (state R) at once, and their CPU seconds;
and for all pools together the most and mean running at once, against the
machine's CPUs; the compilers' memory (RSS) and the machine's MemAvailable; how
many waited in state D at once, and where the waiting ones waited (the kernel
function in /proc/PID/wchan, by state D or S). NVRTC and hipRTC compile inside the child (state R while
compiling); the host backend's child waits for cc, whose time is not counted.
Standard library only (the GPU machine's python3 has it)."""
import os, signal, sys, time

out = sys.argv[1] if len(sys.argv) > 1 else sys.exit(__doc__)
interval = float(sys.argv[2]) if len(sys.argv) > 2 else 0.2
tick = os.sysconf("SC_CLK_TCK")
procs = {}   # pid -> dict
samples = []  # per sample: {parent: running count}, total running
owners = {}   # parent pid -> its command line, read when first seen
stop = False


def on_term(sig, frame):
    global stop
    stop = True


signal.signal(signal.SIGTERM, on_term)
signal.signal(signal.SIGINT, on_term)


def read(path):
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError:
        return None


def mem_available():
    """MemAvailable in KiB (the machine's, or its cgroup's, whichever /proc shows)."""
    for line in (read("/proc/meminfo") or b"").decode().splitlines():
        if line.startswith("MemAvailable:"):
            return int(line.split()[1])
    return -1


waits = {}  # (state, wchan) -> samples of a compiler process waiting there
threads_max = 0
memory = []  # per sample: compilers' RSS sum and max (KiB), how many in state D, MemAvailable
while not stop:
    running = {}
    rss_total = rss_one = waiting = 0
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        cmd = read("/proc/%s/cmdline" % name)
        if not cmd or b"__compiler" not in cmd:
            continue
        stat = read("/proc/%s/stat" % name)
        status = read("/proc/%s/status" % name)
        if not stat or not status:
            continue
        rest = stat.rsplit(b")", 1)[1].split()
        state, ppid = rest[0].decode(), int(rest[1])
        cpu_time = (int(rest[11]) + int(rest[12])) / tick
        last_cpu = int(rest[36])
        allowed = ""
        for line in status.decode(errors="replace").splitlines():
            if line.startswith("Cpus_allowed_list:"):
                allowed = line.split(":", 1)[1].strip()
            elif line.startswith("Threads:"):
                threads_max = max(threads_max, int(line.split()[1]))
            elif line.startswith("VmRSS:"):
                rss_kib = int(line.split()[1])
                rss_total += rss_kib
                rss_one = max(rss_one, rss_kib)
        p = procs.setdefault(int(name), {"ppid": ppid, "allowed": allowed, "cpus": set(),
                                         "cpu_time": 0.0})
        if ppid not in owners:
            owners[ppid] = (read("/proc/%d/cmdline" % ppid) or b"(gone)").replace(b"\0", b" ")
        p["cpus"].add(last_cpu)
        p["cpu_time"] = max(p["cpu_time"], cpu_time)
        if state == "R":
            running[ppid] = running.get(ppid, 0) + 1
        elif state == "D":
            waiting += 1
        if state in "DS":  # where in the kernel it waits (root reads the symbol)
            where = (read("/proc/%s/wchan" % name) or b"?").decode(errors="replace") or "?"
            waits[(state, where)] = waits.get((state, where), 0) + 1
    samples.append(running)
    memory.append((rss_total, rss_one, waiting, mem_available()))
    time.sleep(interval)

ncpu = os.cpu_count()
lines = ["compile_sampler: %d samples every %.2f s, %d CPUs online" % (len(samples), interval, ncpu)]
parents = sorted({p["ppid"] for p in procs.values()})
for pp in parents:
    mine = [p for p in procs.values() if p["ppid"] == pp]
    cmd = owners.get(pp, b"?").decode(errors="replace")[:120]
    counts = [s.get(pp, 0) for s in samples]
    active = [c for c in counts if c > 0]
    lines.append("pool of pid %d (%s): %d compiler processes; allowed %s; seen on %d distinct CPUs; "
                 "running at once: max %d, mean %.1f while any ran; %.1f CPU s" % (
                     pp, cmd.strip(), len(mine), sorted({p["allowed"] for p in mine}),
                     len(set().union(*[p["cpus"] for p in mine])), max(counts or [0]),
                     sum(active) / len(active) if active else 0.0,
                     sum(p["cpu_time"] for p in mine)))
totals = [sum(s.values()) for s in samples]
active = [t for t in totals if t > 0]
lines.append("all pools: %d compiler processes; running at once: max %d, mean %.1f while any ran "
             "(%d CPUs)" % (len(procs), max(totals or [0]),
                            sum(active) / len(active) if active else 0.0, ncpu))
if memory:
    lines.append("memory: compilers' RSS at most %.0f MiB together (%.0f MiB one process); "
                 "MemAvailable at least %.0f MiB; in state D (waiting on I/O or a page) at "
                 "most %d at once" % (max(m[0] for m in memory) / 1024.0,
                                      max(m[1] for m in memory) / 1024.0,
                                      min(m[3] for m in memory) / 1024.0,
                                      max(m[2] for m in memory)))
if waits:
    top = sorted(waits.items(), key=lambda kv: -kv[1])[:8]
    lines.append("waiting (state wchan: process-samples): " + ", ".join(
        "%s %s: %d" % (st, wc, n) for (st, wc), n in top) + "; threads per compiler process: at most %d" % threads_max)
with open(out, "w") as f:
    f.write("\n".join(lines) + "\n")
print("\n".join(lines))
