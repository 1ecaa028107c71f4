#!/usr/bin/env python3
"""How well a rating tells labelled classes of levels apart.

    python3 analysis/python/agreement.py --game sokoban \
        easy=path/to/unfiltered/*.txt medium=path/to/medium/*.txt hard=path/to/hard/*.txt \
        [--model FILE] [--pregen target/release/pregen] [--time-limit 5]

Each CLASS=FILES argument names a class of levels (classes in increasing
difficulty); the files are solved and rated by `pregen solve --terms`. For
every pair of classes it prints the area under the ROC curve (AUC: the
chance that a level of the harder class rates above one of the easier) of
the difficulty, of the plain move count and pushes, and of each term, with a
95% bootstrap interval (1,000 resamples, seed 1). Levels not solved count as
the hardest (their difficulty is unknown but above any solved one's).
"""

import argparse
import glob
import random
import subprocess
import sys


def solve(pregen, game, files, model, time_limit):
    cmd = [pregen, "solve", "--game", game, "--terms", "--time-limit", str(time_limit)]
    if model:
        cmd += ["--model", model]
    out = subprocess.run(cmd + files, capture_output=True, text=True)
    lines = out.stdout.splitlines()
    if not lines:
        sys.exit(f"pregen solve printed nothing: {out.stderr}")
    header = lines[0].split("\t")
    rows = []
    for line in lines[1:]:
        cells = dict(zip(header, line.split("\t")))
        rows.append(cells)
    return header, rows


def value(cells, column):
    try:
        return float(cells[column])
    except (KeyError, ValueError):
        return float("inf")  # not solved: harder than any solved level


def auc(easy, hard):
    """P(hard > easy) + P(hard == easy) / 2, by ranks."""
    pooled = sorted([(v, 0) for v in easy] + [(v, 1) for v in hard])
    rank_sum, i = 0.0, 0
    while i < len(pooled):
        j = i
        while j < len(pooled) and pooled[j][0] == pooled[i][0]:
            j += 1
        mid = (i + j + 1) / 2  # ranks are 1-based
        rank_sum += mid * sum(1 for k in range(i, j) if pooled[k][1] == 1)
        i = j
    n1, n0 = len(hard), len(easy)
    return (rank_sum - n1 * (n1 + 1) / 2) / (n1 * n0)


def interval(easy, hard, resamples=1000):
    rng = random.Random(1)
    values = []
    for _ in range(resamples):
        e = [rng.choice(easy) for _ in easy]
        h = [rng.choice(hard) for _ in hard]
        values.append(auc(e, h))
    values.sort()
    return values[int(0.025 * resamples)], values[int(0.975 * resamples) - 1]


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--game", required=True)
    parser.add_argument("--model")
    parser.add_argument("--pregen", default="target/release/pregen")
    parser.add_argument("--time-limit", default="5")
    parser.add_argument("classes", nargs="+", metavar="CLASS=FILES")
    args = parser.parse_args()
    classes = []
    for spec in args.classes:
        name, _, pattern = spec.partition("=")
        files = sorted(glob.glob(pattern))
        if not name or not files:
            sys.exit(f"`{spec}`: expected CLASS=FILES with at least one file")
        header, rows = solve(args.pregen, args.game, files, args.model, args.time_limit)
        classes.append((name, rows))
        solved = sum(1 for r in rows if r.get("difficulty", "-") != "-")
        print(f"{name}: {len(rows)} levels, {solved} solved")
    columns = ["difficulty", "moves", "pushes"] + [c for c in header if c.startswith("term:")]
    print()
    print("| pair | " + " | ".join(columns) + " |")
    print("|---" * (len(columns) + 1) + "|")
    for i in range(len(classes)):
        for j in range(i + 1, len(classes)):
            (easy_name, easy), (hard_name, hard) = classes[i], classes[j]
            cells = []
            for column in columns:
                e = [value(r, column) for r in easy]
                h = [value(r, column) for r in hard]
                low, high = interval(e, h)
                cells.append(f"{auc(e, h):.2f} ({low:.2f}-{high:.2f})")
            print(f"| {hard_name} vs {easy_name} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
