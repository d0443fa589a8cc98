#!/usr/bin/env python3
"""tests/integration/t1_check.py T1.json LIST.csv [CACHE.json.gz]

Check `tunefarm space --list` of a kernel imported by `tunefarm import-t1`
against Python itself: the T1 file's Values are eval()'d and every
restriction eval()'d over the Cartesian product, as Kernel Tuner evaluates
them (parameters bound to their values, math available), in the order
itertools.product gives (the first parameter most significant, as tunefarm
numbers configurations). The valid configurations, in that order, must be
the CSV's rows (True/False as 1/0, strings by name). With a Kernel Tuner
cache of the same kernel, its keys must be exactly the listed configurations
too (a brute-forced cache holds the valid space). Exit 0 if all holds.
"""
import csv
import gzip
import itertools
import json
import math
import sys
import warnings

warnings.simplefilter("ignore", SyntaxWarning)  # `x is 1` in a restriction


def main():
    t1 = json.load(open(sys.argv[1]))
    space = t1["ConfigurationSpace"]
    names = [p["Name"] for p in space["TuningParameters"]]
    values = [eval(p["Values"], {"math": math}) for p in space["TuningParameters"]]
    restrictions = [compile(c["Expression"], "<restriction>", "eval")
                    for c in space.get("Conditions", [])]
    want = []
    for combo in itertools.product(*values):
        env = dict(zip(names, combo), math=math)
        if all(eval(r, env) for r in restrictions):
            want.append([str(int(v)) if isinstance(v, bool) else str(v) for v in combo])
    rows = list(csv.reader(open(sys.argv[2])))
    got = rows[1:]
    if got != want:
        extra = [r for r in got if r not in want][:3]
        missing = [r for r in want if r not in got][:3]
        print(f"tunefarm lists {len(got)} configurations, Python finds {len(want)} valid; "
              f"only in tunefarm's: {extra}; only in Python's: {missing}")
        return 1
    if len(sys.argv) > 3:
        cache = json.load(gzip.open(sys.argv[3]))
        keys = set(cache["cache"])
        listed = {",".join(r) for r in got}
        if keys != listed:
            print(f"the cache has {len(keys)} configurations, tunefarm lists {len(listed)}; "
                  f"only in the cache: {sorted(keys - listed)[:3]}; "
                  f"only in the list: {sorted(listed - keys)[:3]}")
            return 1
        print(f"the cache's {len(keys)} configurations are the listed ones")
    print(f"{len(got)} valid configurations of {math.prod(len(v) for v in values)}, "
          f"the same as Python's, in the same order")
    return 0


if __name__ == "__main__":
    sys.exit(main())
