#!/usr/bin/env python3
"""journal_records.py JOURNAL [--wait N] [--seconds S] [--archive A]: the number
of whole records in a tunefarm result journal, each checked against its CRC.

The layout is coordinator/journal.c's: a 116-byte header (magic "TFJRNL02"),
then records of u32 payload length, u32 CRC-32 of the payload (both
little-endian) and the payload. A record's size is not fixed (its payload ends
with the result's message), so the fault scenarios count records rather than
divide the file's size by a guess. Counting stops at the first record cut short
or failing its CRC (a torn end, or a journal being rewritten under us).

Without --wait: print the count and exit 0 (0 for a missing or bare journal).
With --wait N: poll until the journal holds at least N records, print the
count and exit 0; after S seconds (default 60) say so and exit 1. The journal
is reset to a bare header after each checkpoint, so this counts the results
since the last checkpoint, not all of them. With --archive A, --wait counts the
results written to the archive A too (the rows of every kernel) and waits for
at least one record in the journal besides: "N results measured, some still
only in the journal", which a run checkpointing every second reaches at any
speed (8 records between two checkpoints it may never reach)."""
import argparse
import struct
import sys
import time
import zlib

HEADER = 116
MAGIC = b"TFJRNL02"


def count(path):
    try:
        with open(path, "rb") as f:
            data = f.read()
    except FileNotFoundError:
        return 0
    if len(data) < HEADER or data[:8] != MAGIC:
        return 0
    n, at = 0, HEADER
    while at + 8 <= len(data):
        size, crc = struct.unpack_from("<II", data, at)
        payload = data[at + 8:at + 8 + size]
        if len(payload) < size or zlib.crc32(payload) != crc:
            break
        n, at = n + 1, at + 8 + size
    return n


def archive_rows(path):
    """Rows of every kernel's results in archive PATH (0 while it does not exist
    or is being replaced)."""
    try:
        import h5py
        with h5py.File(path, "r") as f:
            kernels = f.get("kernels")
            return 0 if kernels is None else sum(
                len(g["results"]) for g in kernels.values() if "results" in g)
    except (OSError, KeyError):
        return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("journal")
    ap.add_argument("--wait", type=int, metavar="N")
    ap.add_argument("--seconds", type=float, default=60.0, metavar="S")
    ap.add_argument("--archive", metavar="A")
    args = ap.parse_args()
    if args.wait is None:
        print(count(args.journal))
        return 0
    deadline = time.monotonic() + args.seconds
    while True:
        n = count(args.journal)
        if args.archive is not None and n >= 1:
            n += archive_rows(args.archive)
        if n >= args.wait:
            print(n)
            return 0
        if time.monotonic() > deadline:
            print(f"{args.journal}: {n} records, not {args.wait}, after {args.seconds:g} s",
                  file=sys.stderr)
            return 1
        time.sleep(0.05)


if __name__ == "__main__":
    sys.exit(main())
