"""Per-round medians and ratios of run_ab.py's JSON lines: python3 summarize.py FILE.jsonl[.gz]"""

import collections
import gzip
import json
import sys

import numpy as np


def main() -> None:
    rows = [
        json.loads(line)
        for line in (gzip.open(sys.argv[1], "rt") if sys.argv[1].endswith(".gz") else open(sys.argv[1]))
        if line.startswith("{")
    ]
    configs = [k for k in rows[0] if k not in ("round", "load", "tag")]
    by_tag: dict = collections.defaultdict(lambda: collections.defaultdict(list))
    print("tag round load " + " ".join(f"{c}_med" for c in configs) + "  ol2/ol1 ol2/ort2")
    for row in rows:
        med = {c: float(np.median(row[c])) for c in configs}
        extra = ""
        if "ol2" in med and "ol1" in med:
            extra += f" {med['ol2'] / med['ol1']:.3f}"
        if "ol2" in med and "ort2" in med:
            extra += f" {med['ol2'] / med['ort2']:.3f}"
        print(row["tag"], row["round"], f"{row['load']:.1f}", " ".join(f"{med[c]:.3f}" for c in configs), extra)
        for c in configs:
            by_tag[row["tag"]][c].append(med[c])
    for tag, medians in by_tag.items():
        print(tag, "median of round medians:", {c: round(float(np.median(v)), 3) for c, v in medians.items()})


if __name__ == "__main__":
    main()
