"""Per A/B round pair: medians of the first region's dispatch, first join (joined runs
only), wall, and the share of runs where a worker joined it.

    python3 summarize_first.py first.jsonl
"""

import json
import sys

import numpy as np


def main() -> None:
    rows = [json.loads(line) for line in open(sys.argv[1]) if line.startswith("{")]
    for i, row in enumerate(rows):
        join = np.array(row["first_join_ns"])
        joined = join[join >= 0]
        print(
            f"{i // 2} {row['tag']} load {row['load']:.1f} {row['model']} {row['first_label']}: "
            f"dispatch med {np.median(row['dispatch_ns']):6.1f} us, joined {100 * len(joined) / len(join):3.0f}% "
            f"join med {np.median(joined) if len(joined) else -1:6.1f} us, region wall med {np.median(row['wall_ns']):6.1f} "
            f"us, run med {np.median(row['run_us']) / 1e3:6.3f} ms"
        )


if __name__ == "__main__":
    main()
