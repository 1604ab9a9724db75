"""Kernel inventory (placeholder until issue 5): lists the registered native kernels.

    ./bazelw run //tools:kernel_inventory
"""
import collections

from absl import app

import onnx_light


def main(argv):
    del argv
    kernels = onnx_light.registered_kernels()
    by_family = collections.Counter(k["family"] for k in kernels)
    print(f"{len(kernels)} kernel registrations in {len(by_family)} families")
    for k in sorted(kernels, key=lambda k: (k["family"], k["domain"], k["op"], k["since_version"])):
        end = "" if k["end_version"] < 0 else str(k["end_version"])
        types = ",".join(k["element_types"]) or "*"
        print(f"  {k['family']:<20} {k['domain']:<12} {k['op']:<24} opset {k['since_version']}-{end:<4} {types}")
    print("The coverage inventory (states, fingerprints, exemptions) is not built yet.")


if __name__ == "__main__":
    app.run(main)
