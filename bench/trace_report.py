#!/usr/bin/env python3
"""Summarise a worker's feed trace (TUNEFARM_TRACE=PREFIX; worker/worker.c).

    python3 bench/trace_report.py PREFIX.<pid>.csv [...]

For a device worker (lines `measure`): where its time went between
configurations, and in what state the queue was when it waited for a compile:
few configurations queued (the coordinator's slices came late or small) or many
(the compilers could not keep up). For a compile rank (lines `ahead`): how busy
its pool was. Standard library only.
"""
import csv
import sys


def report(path):
    rows = list(csv.DictReader(open(path)))
    if not rows:
        print(f"{path}: empty")
        return
    measures = [r for r in rows if r["event"] == "measure"]
    works = [r for r in rows if r["event"] in ("work", "compile")]
    asks = [r for r in rows if r["event"] == "ask"]
    aheads = [r for r in rows if r["event"] == "ahead"]
    span = float(rows[-1]["t"]) - float(rows[0]["t"])
    print(f"{path}: {span:.1f} s, {len(asks)} asks, {len(works)} slices "
          f"({sum(int(r['n']) for r in works)} configurations)")
    if measures:
        wait = sum(float(r["wait_s"]) for r in measures)
        meas = sum(float(r["measure_s"]) for r in measures)
        print(f"  {len(measures)} measured: {meas:.1f} s measuring, {wait:.1f} s waiting for "
              f"a compile ({100 * wait / span:.0f}% of the span)")
        # waits by the queue's length when the wait began (after taking the head)
        bins = [(0, 0), (1, 7), (8, 31), (32, 10**9)]
        for lo, hi in bins:
            sel = [r for r in measures if lo <= int(r["queue"]) <= hi]
            w = sum(float(r["wait_s"]) for r in sel)
            act = [int(r["pool_active"]) for r in sel if float(r["wait_s"]) > 0.005]
            busy = sum(act) / len(act) if act else float("nan")
            label = f"{lo}" if lo == hi else f"{lo}-{hi if hi < 10**9 else 'more'}"
            print(f"    queue {label:>7}: {len(sel):5d} configurations, {w:6.1f} s waiting; "
                  f"own pool compiling {busy:.1f} on average during waits over 5 ms")
    if asks and works:
        # time from each ask to the next slice
        gaps, j = [], 0
        times = [float(r["t"]) for r in works]
        for a in asks:
            t = float(a["t"])
            while j < len(times) and times[j] < t:
                j += 1
            if j < len(times):
                gaps.append(times[j] - t)
        if gaps:
            gaps.sort()
            print(f"  ask -> slice: median {gaps[len(gaps) // 2] * 1e3:.1f} ms, "
                  f"90th percentile {gaps[int(0.9 * (len(gaps) - 1))] * 1e3:.1f} ms, "
                  f"max {gaps[-1] * 1e3:.1f} ms")
    if aheads:
        act = [int(r["pool_active"]) for r in aheads]
        print(f"  {len(aheads)} compiled ahead; pool compiling {sum(act) / len(act):.1f} "
              f"on average when one finished")


for p in sys.argv[1:]:
    report(p)
