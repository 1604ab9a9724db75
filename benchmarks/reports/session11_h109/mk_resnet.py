import pickle

import numpy as np
import onnx
from absl import flags

from benchmarks import quantized_vs_ort as q

flags.FLAGS(["x"])
for name, fn in [("resnet18_qop", q.resnet18_qoperator_model), ("resnet18_qdq", q.resnet18_qdq_model)]:
    model, feeds, _ = fn(np.random.default_rng(0))
    onnx.save(model, f"/tmp/h109/{name}.onnx")
    pickle.dump(feeds, open(f"/tmp/h109/{name}.feeds", "wb"))
    print(name, len(model.graph.node))
