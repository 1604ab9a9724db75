import pickle
import sys

import onnx_light

name = sys.argv[1]
feeds = pickle.load(open(f"/tmp/h109/{name}.feeds", "rb"))
o = onnx_light.SessionOptions()
o.intra_op_num_threads = 1
s = onnx_light.InferenceSession(f"/tmp/h109/{name}.onnx", sess_options=o)
for _ in range(int(sys.argv[2])):
    s.run(None, feeds)
