import collections
import statistics
import sys

d = collections.defaultdict(dict)
hashes = collections.defaultdict(set)
for line in open(sys.argv[1]):
    p = line.split()
    if len(p) < 8 or p[0] != "round":
        continue
    r, load, x, case, med, h = int(p[1]), p[3], p[4], p[5], float(p[6]), p[7]
    d[(case, r)][x] = med
    d[(case, r)]["load"] = load
    hashes[case].add((x, h))
for case in sorted({c for c, _ in d}):
    ratios = []
    for r in sorted(r for c, r in d if c == case):
        e = d[(case, r)]
        if "A" in e and "B" in e:
            ratios.append(e["B"] / e["A"])
            print(f"{case} round {r} load {e['load']} A {e['A']:.4f} ms B {e['B']:.4f} ms B/A {e['B'] / e['A']:.3f}")
    print(
        f"{case}: median time ratio B/A {statistics.median(ratios):.3f} (<1 = B faster) min {min(ratios):.3f} max {max(ratios):.3f}; output hashes {sorted(hashes[case])}"
    )
