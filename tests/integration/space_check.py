#!/usr/bin/env python3
"""Independent check of `tunefarm space` on tests/fixtures/space_cmd.

usage: space_check.py count|list|sample OUTPUT PROPS PROBLEM[,PROBLEM...]
PROPS is max_threads,max_shared,warp_size. The space, its constraints (as
Python, with the parameters each reads) and its problems are written out
below, not read from the kernel file, and every configuration of the Cartesian
product is tested: the valid set, and for each constraint the configurations
it is the first to reject in evaluation order (by the last parameter read,
then file order; constraints reading none first) and those only it rejects.
Exits non-zero, saying what differs, if OUTPUT (what tunefarm printed) does
not match."""
import itertools
import sys

PARAMS = [("BX", [16, 32, 64, 128, 256]), ("BY", [1, 2, 4, 8]),
          ("MODE", ["plain", "shared", "vec"]), ("TILE", [1, 2, 3, 4]),
          ("UNROLL", [1, 2, 4]), ("PAD", [0, 1])]
PROBLEMS = {"small": dict(N=1024, M=64), "wide": dict(N=3072, M=48), "none": dict(N=1024, M=16)}
# (text as in the kernel file, parameters read, predicate)
CONSTRAINTS = [
    ("N % (BX * TILE) == 0", ["BX", "TILE"], lambda c: c["N"] % (c["BX"] * c["TILE"]) == 0),
    ("BX * BY <= max_threads", ["BX", "BY"], lambda c: c["BX"] * c["BY"] <= c["max_threads"]),
    ("BX * BY >= warp_size", ["BX", "BY"], lambda c: c["BX"] * c["BY"] >= c["warp_size"]),
    ('MODE != "shared" || (BX * TILE + PAD) * BY * 4 <= max_shared // 8',
     ["BX", "BY", "MODE", "TILE", "PAD"],
     lambda c: c["MODE"] != "shared" or (c["BX"] * c["TILE"] + c["PAD"]) * c["BY"] * 4
     <= c["max_shared"] // 8),
    ("UNROLL <= TILE || UNROLL == 1", ["TILE", "UNROLL"],
     lambda c: c["UNROLL"] <= c["TILE"] or c["UNROLL"] == 1),
    ("M > 32", [], lambda c: c["M"] > 32),
    ('PAD == 0 || MODE == "shared"', ["MODE", "PAD"],
     lambda c: c["PAD"] == 0 or c["MODE"] == "shared"),
    ('MODE != "vec" || BX >= 64', ["BX", "MODE"], lambda c: c["MODE"] != "vec" or c["BX"] >= 64),
]
NAMES = [n for n, _ in PARAMS]


def expected(problem, props):
    level = lambda reads: max((NAMES.index(p) for p in reads), default=-1)
    order = sorted(range(len(CONSTRAINTS)), key=lambda i: (level(CONSTRAINTS[i][1]), i))
    first = [0] * len(CONSTRAINTS)
    alone = [0] * len(CONSTRAINTS)
    valid = []
    for values in itertools.product(*[v for _, v in PARAMS]):
        c = dict(zip(NAMES, values), **PROBLEMS[problem], **props)
        ok = [f(c) for _, _, f in CONSTRAINTS]
        failing = [i for i in order if not ok[i]]
        if not failing:
            valid.append(",".join(str(v) for v in values))
            continue
        first[failing[0]] += 1
        if len(failing) == 1:
            alone[failing[0]] += 1
    return valid, first, alone


def fail(msg):
    print("space_check: " + msg)
    sys.exit(1)


def check_count(lines, problems, props):
    for problem in problems:
        valid, first, alone = expected(problem, props)
        total = 1
        for _, v in PARAMS:
            total *= len(v)
        head = [i for i, l in enumerate(lines) if l.startswith("problem %s (" % problem)]
        if len(head) != 1:
            fail("no 'problem %s' section" % problem)
        want = "%d configurations, %d valid" % (total, len(valid))
        if want not in lines[head[0]]:
            fail("%s: expected '%s' in: %s" % (problem, want, lines[head[0]]))
        rows = {}
        for l in lines[head[0] + 2: head[0] + 2 + len(CONSTRAINTS)]:
            f, a, _, _, text = l.split(None, 4) if "(no parameter)" not in l else \
                l.replace("(no parameter)", "-").split(None, 4)
            rows[text] = (int(f), int(a))
        for i, (text, _, _) in enumerate(CONSTRAINTS):
            if rows.get(text) != (first[i], alone[i]):
                fail("%s: constraint '%s': expected first %d alone %d, printed %s"
                     % (problem, text, first[i], alone[i], rows.get(text)))
        if sum(first) + len(valid) != total:
            fail("the reference itself does not add up")


def check_list(lines, problems, props, sample):
    multi = len(problems) > 1
    if lines[0] != ("problem," if multi else "") + ",".join(NAMES):
        fail("header: " + lines[0])
    body = lines[1:]
    for problem in problems:
        valid, _, _ = expected(problem, props)
        got = [l.split(",", 1)[1] for l in body if l.startswith(problem + ",")] if multi else body
        if not sample:
            if got != valid:
                fail("%s: %d lines listed, %d valid expected; first difference at %s" % (
                    problem, len(got), len(valid),
                    next((i for i, (x, y) in enumerate(zip(got, valid)) if x != y), "the end")))
            continue
        pos = [valid.index(g) if g in valid else -1 for g in got]
        if len(got) != min(sample, len(valid)) or -1 in pos or pos != sorted(set(pos)):
            fail("%s: sample of %d: expected %d distinct valid lines in index order, got %s"
                 % (problem, sample, min(sample, len(valid)), got))


def main():
    mode, path, props, problems = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4].split(",")
    mt, ms, ws = (int(x) for x in props.split(","))
    props = dict(max_threads=mt, max_shared=ms, warp_size=ws)
    lines = open(path).read().splitlines()
    if mode == "count":
        check_count(lines, problems, props)
    elif mode == "list":
        check_list(lines, problems, props, 0)
    else:
        check_list(lines, problems, props, int(mode.split("=")[1]))
    print("space_check: ok")


main()
