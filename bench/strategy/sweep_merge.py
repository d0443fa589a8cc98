#!/usr/bin/env python3
"""bench/strategy/sweep_merge.py - join bench/strategy/sweep.sh's chunks.

usage: sweep_merge.py OUTDIR

Each OUTDIR/NAME.FIRST.txt is one study over a chunk of seeds, printed with --se; a
chunk stopped early counts for the rows it printed (the seeds column says how many).
Per variant NAME, strategy and budget: the mean over all its seeds per cache (the
chunks' means weighted by their seed counts) and the standard error of that mean,
from the pooled variance over seeds (each chunk's variance, recovered from its
standard error, plus the spread of the chunks' means, so a one-seed chunk counts
too); then the average over caches, its standard error from the per-cache ones.
The chunks' numbers are printed to 3 decimals, so the last digit can differ from a
single study's. Prints a markdown table. Python's standard library only."""
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


if __name__ == '__main__':
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
