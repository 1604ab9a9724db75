"""Per round (one A process and the B process after it): medians of every block and B/A.

python3 summarize.py samples.jsonl
"""

import json
import sys

import numpy as np


def main() -> None:
    rows = [json.loads(line) for line in open(sys.argv[1]) if line.startswith("{")]
    keys = [k for k in rows[0] if k[:-1] in ("tight", "gap")]
    by_model: dict = {}
    for row in rows:
        by_model.setdefault(row["model"], []).append(row)
    for model, rs in by_model.items():
        print(f"== {model} (gap {rs[0]['gap_ms']} ms; medians in ms; B/A per round)")
        ratios = {k: [] for k in keys}
        for i in range(0, len(rs) - 1, 2):
            a, b = rs[i], rs[i + 1]
            assert (a["tag"], b["tag"]) == ("A", "B"), (a["tag"], b["tag"])
            cells = []
            for k in keys:
                ma, mb = np.median(a[k]), np.median(b[k])
                ratios[k].append(mb / ma)
                cells.append(f"{k} {ma:7.3f} {mb:7.3f} ({mb / ma:4.2f})")
            print(f"round {i // 2}: load {a['load']:.1f}/{b['load']:.1f} | " + " | ".join(cells))
        print("median of round ratios B/A: " + ", ".join(f"{k} {np.median(v):.3f}" for k, v in ratios.items()))


if __name__ == "__main__":
    main()
