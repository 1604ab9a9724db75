"""ONNX Runtime sessions for side-by-side benchmarks, configured alike everywhere.

ORT's intra-op workers spin after each run (session.intra_op.allow_spinning=1 by
default), holding a core for a while. The benchmarks interleave onnx-light and ORT
sample by sample, so a spinning ORT worker would sit on the second core during our
2-thread runs. Spinning is switched off; ORT is otherwise left at its defaults (all
graph optimizations, its own thread pool with the requested size).
"""
import onnxruntime as ort


def ort_session(model, threads, graph_optimization_level=None):
    """An ORT CPU session on `threads` intra-op threads; model: ModelProto or bytes."""
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    if graph_optimization_level is not None:
        options.graph_optimization_level = graph_optimization_level
    data = model if isinstance(model, bytes) else model.SerializeToString()
    return ort.InferenceSession(data, options, providers=["CPUExecutionProvider"])
