"""Classic ML beside ONNX Runtime (issue 13's speed cases): RandomForest (100 trees,
depth 12) and GradientBoosting (300 trees) on 10,000 rows and on 1 row, SVC rbf on 1,000
rows, at 1 and 2 threads. Models are trained with fixed seeds on a synthetic data set
(sklearn.datasets.make_classification, 20 features) and converted with skl2onnx.

Each runtime is timed in its own block (warm-up, then `--repeats` runs; ORT's workers
spin after runs, so alternating single runs would charge that to the other runtime).
Latency medians and every raw sample are written.

    ./bazelw run //benchmarks:sklearn_vs_ort -- --output=benchmarks/reports/sklearn/sklearn.json
"""

import time

import numpy as np
import onnx_light
import onnxruntime as ort
from absl import app, flags
from skl2onnx import to_onnx
from sklearn.datasets import make_classification
from sklearn.ensemble import GradientBoostingClassifier, RandomForestClassifier
from sklearn.svm import SVC

from benchmarks.ort_reference import conditions, finish_document

OUTPUT = flags.DEFINE_string("output", "", "where to write the JSON results")
REPEATS = flags.DEFINE_integer("repeats", 15, "timed runs per block")


def cases():
    x, y = make_classification(n_samples=12000, n_features=20, n_informative=12, n_classes=3, random_state=0)
    x = x.astype(np.float32)
    forest = RandomForestClassifier(n_estimators=100, max_depth=12, random_state=0, n_jobs=1).fit(x[:8000], y[:8000])
    boosting = GradientBoostingClassifier(n_estimators=100, max_depth=3, random_state=0).fit(x[:3000], y[:3000])
    svc = SVC(kernel="rbf", probability=False, random_state=0).fit(x[:2000], y[:2000])
    options = {"zipmap": False}
    # GradientBoosting: 100 boosting rounds x 3 classes = 300 trees.
    for name, model in (("RandomForest-100x12", forest), ("GradientBoosting-300", boosting)):
        onnx_model = to_onnx(model, x[:1], options={id(model): options}, target_opset={"": 17, "ai.onnx.ml": 3})
        for rows in (10000, 1):
            yield f"{name}/{rows}", onnx_model, x[-rows:]
    yield "SVC-rbf/1000", to_onnx(svc, x[:1], target_opset={"": 17, "ai.onnx.ml": 3}), x[-1000:]


def timed(session, feeds, repeats):
    for _ in range(3):
        session.run(None, feeds)
    samples = []
    for _ in range(repeats):
        start = time.perf_counter()
        session.run(None, feeds)
        samples.append((time.perf_counter() - start) * 1e3)
    return samples


def main(argv):
    del argv
    doc = {"benchmark": "sklearn_vs_ort", "results": [], "conditions": conditions()}
    for name, model, x in cases():
        data = model.SerializeToString()
        input_name = model.graph.input[0].name
        feeds = {input_name: x}
        for threads in (1, 2):
            options = ort.SessionOptions()
            options.intra_op_num_threads = threads
            theirs = ort.InferenceSession(data, options, providers=["CPUExecutionProvider"])
            ours = onnx_light.InferenceSession(data, cpu_execution=onnx_light.CpuExecutionPolicy(num_threads=threads))
            got, expected = ours.run(None, feeds), theirs.run(None, feeds)
            np.testing.assert_array_equal(got[0], expected[0])  # labels
            np.testing.assert_allclose(got[1], expected[1], rtol=1e-4, atol=1e-5)
            row = {"case": name, "threads": threads}
            row["onnx_light_ms"] = timed(ours, feeds, REPEATS.value)
            time.sleep(0.5)
            row["ort_ms"] = timed(theirs, feeds, REPEATS.value)
            time.sleep(0.5)
            row["ratio_ours_over_ort"] = float(np.median(row["onnx_light_ms"]) / np.median(row["ort_ms"]))
            doc["results"].append(row)
            print(
                f"{name:28s} {threads} thread(s): ours {np.median(row['onnx_light_ms']):8.3f} ms, ORT "
                f"{np.median(row['ort_ms']):8.3f} ms, ours/ORT {row['ratio_ours_over_ort']:.2f}",
                flush=True,
            )
    finish_document(doc, OUTPUT.value)


if __name__ == "__main__":
    app.run(main)
