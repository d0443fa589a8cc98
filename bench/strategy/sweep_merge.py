#!/usr/bin/env python3
"""bench/strategy/sweep_merge.py - join bench/strategy/sweep.sh's chunks.

usage: sweep_merge.py OUTDIR [--paired BASE]

Each OUTDIR/NAME.FIRST.txt is one study over a chunk of seeds, printed with --se; a
chunk stopped early counts for the rows it printed (the seeds column says how many).
Per variant NAME, strategy and budget: the mean over all its seeds per cache (the
chunks' means weighted by their seed counts) and the standard error of that mean,
from the pooled variance over seeds (each chunk's variance, recovered from its
standard error, plus the spread of the chunks' means, so a one-seed chunk counts
too); then the average over caches, its standard error from the per-cache ones.
The chunks' numbers are printed to 3 decimals, so the last digit can differ from a
single study's. Prints a markdown table. Python's standard library only.

--paired BASE: a second table from the chunks' per-seed files (NAME.FIRST.seeds.tsv,
study --per-seed): per variant, strategy and budget, the mean over seeds of the
caches' average, and its difference from variant BASE's on the same seeds (same
budget; same strategy too where BASE has several at that budget), with the standard
error of that paired difference. Two variants' means on the same seeds differ much
less from seed to seed than either mean does, so a paired difference is a finding
at a smaller size than two independent means' difference. Seeds missing a cache in
either variant are left out; a variant run on other caches than BASE is not paired.
This table's standard error of a mean is over seeds of
the caches' average; the first table's comes from the per-cache variances, so the
two can differ in the last digits."""
import glob, math, os, re, sys
from collections import defaultdict

CELL = re.compile(r'\*{0,2}([0-9.]+)\*{0,2} ± ([0-9.]+)')


def main(out):
    rows = defaultdict(list)   # (name, strategy, budget) -> [(seeds, [(mean, se)])]
    caches = None
    for path in sorted(glob.glob(os.path.join(out, '*.txt'))):
        name = os.path.basename(path).rsplit('.', 2)[0]
        text = open(path).read()
        m = re.search(r'seeds (\d+)\.\.(\d+)', text)
        if not m:  # killed before its first row (the header is flushed with it)
            print(f'sweep_merge: {path}: no rows, left out', file=sys.stderr)
            continue
        n = int(m.group(2)) - int(m.group(1)) + 1
        for line in text.splitlines():
            if line.startswith('| strategy |'):
                caches = [c.strip() for c in line.strip('|').split('|')[2:-2]]
            cells = [c.strip() for c in line.strip().strip('|').split('|')]
            if len(cells) < 4 or not CELL.search(cells[2]):
                continue
            vals = [tuple(map(float, CELL.search(c).groups())) for c in cells[2:-2]]
            rows[(name, cells[0], cells[1])].append((n, vals))
    if not rows:
        sys.exit(f'sweep_merge: no study rows under {out} (were the studies run with --se?)')
    print('| variant | strategy | budget | seeds | ' + ' | '.join(caches or []) + ' | mean |')
    print('|---|---|---|---|' + '---|' * (len(caches or []) + 1))
    def order(item):  # budgets by number: 0.5% before 2% before 10%, 10 s before 80 s
        (name, strat, budget), _ = item
        return name, strat, float(re.match(r'[0-9.]*', budget).group() or 0)
    for (name, strat, budget), chunks in sorted(rows.items(), key=order):
        total = sum(n for n, _ in chunks)
        k = len(chunks[0][1])
        means, ses = [], []
        for c in range(k):
            mean = sum(n * v[c][0] for n, v in chunks) / total
            # pooled sum of squares: within chunks (se^2 * n * (n - 1)) and between them
            ss = sum(v[c][1] ** 2 * n * (n - 1) + n * (v[c][0] - mean) ** 2 for n, v in chunks)
            means.append(mean)
            ses.append(math.sqrt(ss / (total - 1) / total) if total > 1 else 0.0)
        avg = sum(means) / k
        avg_se = math.sqrt(sum(s * s for s in ses)) / k
        cells = ' | '.join(f'{m:.3f} ± {s:.3f}' for m, s in zip(means, ses))
        print(f'| {name} | {strat} | {budget} | {total} | {cells} | **{avg:.3f}** ± {avg_se:.3f} |')


def load_seeds(out):
    """(name, strategy, budget) -> {(cache, seed): quality}, from the per-seed files."""
    q = defaultdict(dict)
    for path in sorted(glob.glob(os.path.join(out, '*.seeds.tsv'))):
        name = os.path.basename(path).rsplit('.', 3)[0]
        with open(path) as f:
            for lineno, line in enumerate(f, 1):
                fields = line.rstrip('\n').split('\t')
                try:
                    q[(name, fields[0], fields[1])][(fields[2], int(fields[3]))] = float(fields[4])
                except (IndexError, ValueError):
                    sys.exit(f'sweep_merge: {path}:{lineno}: expected strategy, budget, cache, '
                             f'seed and quality separated by tabs (study --per-seed)')
    return q


def seed_means(cells):
    """seed -> the caches' average quality, for the seeds that have every cache."""
    caches = {c for c, _ in cells}
    by_seed = defaultdict(dict)
    for (cache, seed), v in cells.items():
        by_seed[seed][cache] = v
    return {s: sum(v.values()) / len(v) for s, v in by_seed.items() if len(v) == len(caches)}


def mean_se(xs):
    m = sum(xs) / len(xs)
    if len(xs) < 2:
        return m, 0.0
    return m, math.sqrt(sum((x - m) ** 2 for x in xs) / (len(xs) - 1) / len(xs))


def paired(out, base):
    q = load_seeds(out)
    if not q:
        sys.exit(f'sweep_merge: no per-seed files (*.seeds.tsv) under {out}: '
                 'run bench/strategy/sweep.sh again (it writes them) or pass --per-seed')
    base_rows = {k: v for k, v in q.items() if k[0] == base}
    if not base_rows:
        sys.exit(f'sweep_merge: --paired {base}: no variant of that name under {out} '
                 f'(there are: {", ".join(sorted({k[0] for k in q}))})')
    print()
    print(f'| variant | strategy | budget | seeds | mean | paired vs {base} |')
    print('|---|---|---|---|---|---|')
    for (name, strat, budget) in sorted(q, key=lambda k: (k[0] != base, k)):
        ref = [k for k in base_rows if k[2] == budget]
        if len(ref) > 1:
            ref = [k for k in ref if k[1] == strat]
        if len(ref) != 1:
            why = (f'{base} has no {budget} row' if not any(k[2] == budget for k in base_rows)
                   else f'{base} has several strategies at {budget}, none of them {strat}')
            print(f'| {name} | {strat} | {budget} | | | not paired: {why} |')
            continue
        caches = sorted({c for c, _ in q[(name, strat, budget)]})
        base_caches = sorted({c for c, _ in q[ref[0]]})
        if caches != base_caches:
            print(f'| {name} | {strat} | {budget} | | | not paired: its caches ({", ".join(caches)}) '
                  f'are not {base}\'s ({", ".join(base_caches)}) |')
            continue
        mine, theirs = seed_means(q[(name, strat, budget)]), seed_means(q[ref[0]])
        common = sorted(set(mine) & set(theirs))
        if not common:
            print(f'| {name} | {strat} | {budget} | 0 | | no seed in common with {base} |')
            continue
        m, se = mean_se([mine[s] for s in common])
        d, dse = mean_se([mine[s] - theirs[s] for s in common])
        diff = '' if (name, strat, budget) == ref[0] else f'{d:+.3f} ± {dse:.3f}'
        print(f'| {name} | {strat} | {budget} | {len(common)} | {m:.3f} ± {se:.3f} | {diff} |')


if __name__ == '__main__':
    args = sys.argv[1:]
    if args[:1] in (['-h'], ['--help']):
        print(__doc__)
    elif len(args) == 3 and args[1] == '--paired':
        main(args[0])
        paired(args[0], args[2])
    elif len(args) == 1:
        main(args[0])
    else:
        sys.exit(__doc__)
