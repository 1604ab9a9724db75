"""InferenceSession: the ONNX Runtime Python API over the native session."""

import enum
import os
import pickle
from collections.abc import Sequence
from typing import Any

import onnx

from onnx_light import _native, graph_rewrites, kernel_tuning
from onnx_light._model import (
    build_graph,
    describe_type,
    load_model_and_weights,
    prepare_model,
    validate_model,
    with_weights,
)
from onnx_light._values import decode_value, encode_value

CpuExecutionPolicy = _native.CpuExecutionPolicy
RunOptions = _native.RunOptions


def _element_name(elem_type: int) -> str:
    """ "float" for TensorProto.FLOAT; "undefined" for 0 and numbers this onnx does not know
    (an output may leave its element type open)."""
    try:
        return onnx.helper.tensor_dtype_to_string(elem_type).split(".")[-1].lower()
    except (KeyError, ValueError):
        return "undefined"


def _type_name(type_proto: onnx.TypeProto) -> str:
    """ONNX Runtime's type strings: "tensor(float)", "seq(tensor(int64))", "optional(...)"."""
    which = type_proto.WhichOneof("value")
    if which == "tensor_type":
        return f"tensor({_element_name(type_proto.tensor_type.elem_type)})"
    if which == "sequence_type":
        return f"seq({_type_name(type_proto.sequence_type.elem_type)})"
    if which == "optional_type":
        return f"optional({_type_name(type_proto.optional_type.elem_type)})"
    if which == "map_type":
        key = _element_name(type_proto.map_type.key_type)
        return f"map({key},{_type_name(type_proto.map_type.value_type)})"
    return "unknown"


class NodeArg:
    """A graph input or output: .name, .type ("tensor(float)"), .shape (ints, dim names or None)."""

    def __init__(self, value_info: onnx.ValueInfoProto) -> None:
        self.name: str = value_info.name
        self.type: str = _type_name(value_info.type)
        self.shape: list[int | str | None] | None = None
        if value_info.type.HasField("tensor_type") and value_info.type.tensor_type.HasField("shape"):
            self.shape = [
                d.dim_value if d.HasField("dim_value") else (d.dim_param or None)
                for d in value_info.type.tensor_type.shape.dim
            ]

    def __repr__(self) -> str:
        return f"NodeArg(name={self.name!r}, type={self.type!r}, shape={self.shape!r})"


class GraphOptimizationLevel(enum.IntEnum):
    """ONNX Runtime's graph optimisation levels (same names and numbers), for SessionOptions;
    onnx_light.graph_rewrites names them disabled, basic, extended and all."""

    ORT_DISABLE_ALL = 0
    ORT_ENABLE_BASIC = 1
    ORT_ENABLE_EXTENDED = 2
    ORT_ENABLE_ALL = 99


class SessionOptions:
    """The session options onnx-light reads, as onnxruntime.SessionOptions names them (either
    can be given as sess_options): intra_op_num_threads (0 = one thread per physical core),
    graph_optimization_level (a GraphOptimizationLevel or a level name of
    onnx_light.graph_rewrites; default ORT_ENABLE_ALL) and optimized_model_filepath (when not
    empty, the optimised model is written there as an ONNX file)."""

    def __init__(self) -> None:
        self.intra_op_num_threads: int = 0
        self.graph_optimization_level: GraphOptimizationLevel | str = GraphOptimizationLevel.ORT_ENABLE_ALL
        self.optimized_model_filepath: str = ""


def _policy_from_session_options(options: Any) -> _native.CpuExecutionPolicy:
    """The CpuExecutionPolicy matching ONNX Runtime session options (intra-op threads only:
    onnx-light runs one node at a time, like ORT's sequential execution mode)."""
    threads = getattr(options, "intra_op_num_threads", 0)
    if not isinstance(threads, int) or threads < 0:
        raise ValueError(f"intra_op_num_threads must be a non-negative int, got {threads!r}")
    return CpuExecutionPolicy(num_threads=threads) if threads > 0 else CpuExecutionPolicy()


class InferenceSession:
    """Loads an ONNX model (path, bytes or onnx.ModelProto) and runs it on the CPU.

    cpu_execution: an onnx_light.CpuExecutionPolicy (default: one thread per physical core),
        or, as ONNX Runtime takes in that place, session options (sess_options=...: any object
        with `intra_op_num_threads`, such as onnxruntime.SessionOptions; 0 means the default).
    tuning_profile: an onnx_light._native.TuningSource, or None: the profiles that
        //tools:calibrate wrote for this machine ($XDG_CACHE_HOME/onnx-light/tuning_profiles.json,
        onnx_light.kernel_tuning.machine_tuning_source), else the portable defaults.
    memory_limit_bytes: bytes the session's tensors may hold at once; a node whose allocation
        would exceed it fails with ResourceExhausted naming the node and the size (0 = the
        machine's physical memory, the default guard against allocations that cannot succeed).
    graph_optimization_level: the onnx_light.graph_rewrites level ("disabled", "basic",
        "extended", "all"; or ORT's GraphOptimizationLevel); None: the session options' level,
        else "all" (as ONNX Runtime). Results equal the unoptimised model's up to float rounding.
    graph_optimizations: False is "disabled" whatever else says (the older switch).
    optimized_model_filepath: when not empty (or, if None, when the session options' is), the
        optimised model is written there (an ONNX file, as ONNX Runtime writes it). At levels
        "disabled" and "basic" it holds standard ONNX ops only; at "extended" and "all" it may
        hold onnx-light's own ops (ai.onnx_light SqueezeExcitation, at "all" the blocked-layout
        ops of graph_rewrites.layout, com.microsoft FusedGemm over an A of rank > 2) that ONNX
        Runtime does not load. "extended" is everything but the blocked layout (for A/B runs).
    """

    def __init__(
        self,
        model: str | os.PathLike | bytes | onnx.ModelProto,
        cpu_execution: _native.CpuExecutionPolicy | Any | None = None,
        tuning_profile: _native.TuningSource | None = None,
        providers: Sequence[str | tuple[str, dict]] | None = None,
        sess_options: Any | None = None,
        graph_optimizations: bool = True,
        memory_limit_bytes: int = 0,
        graph_optimization_level: Any | None = None,
        optimized_model_filepath: str | os.PathLike | None = None,
        **unused_ort_options: Any,
    ) -> None:
        if providers is not None and not any(
            (p[0] if isinstance(p, tuple) else p) == "CPUExecutionProvider" for p in providers
        ):
            raise ValueError(f"onnx-light only provides CPUExecutionProvider, not {providers}")
        if cpu_execution is not None and sess_options is not None:
            raise TypeError("give cpu_execution or sess_options, not both")
        if sess_options is None and hasattr(cpu_execution, "intra_op_num_threads"):
            sess_options, cpu_execution = cpu_execution, None  # ONNX Runtime's positional order
        if sess_options is not None:
            cpu_execution = _policy_from_session_options(sess_options)
            if graph_optimization_level is None:
                graph_optimization_level = getattr(sess_options, "graph_optimization_level", None)
            if optimized_model_filepath is None:
                optimized_model_filepath = getattr(sess_options, "optimized_model_filepath", None) or None
        level = graph_rewrites.level_of(
            graph_rewrites.DEFAULT_LEVEL if graph_optimization_level is None else graph_optimization_level
        )
        if not graph_optimizations:
            level = "disabled"
        if cpu_execution is None:
            cpu_execution = CpuExecutionPolicy()
        if not isinstance(cpu_execution, CpuExecutionPolicy):
            raise TypeError("cpu_execution must be an onnx_light.CpuExecutionPolicy")
        if tuning_profile is not None and not isinstance(tuning_profile, _native.TuningSource):
            raise TypeError("tuning_profile must be None or an onnx_light._native.TuningSource")
        base_dir = os.path.dirname(os.fspath(model)) if isinstance(model, (str, os.PathLike)) else ""
        if isinstance(model, (bytearray, memoryview)):
            model = bytes(model)  # the caller may change its buffer: one copy, borrowed and kept (pickling)
        source_files: list[tuple] = []
        proto, weights = _rewritten_model(model, level, source_files)
        if optimized_model_filepath:
            onnx.save_model(with_weights(proto, weights), os.fspath(optimized_model_filepath))
        self._model = proto
        self._weights = weights
        self._base_dir = base_dir
        # Where pickling finds the weights again once the session has them (__getstate__): the
        # path, whose files must still hold the bytes they held (source_files: path, size,
        # fingerprint), or the bytes, kept by reference. A ModelProto's stay in self._model.
        self._source: str | bytes | None = None
        # Absolute paths, as the pickling's load (from the absolute path below) reports them.
        self._source_files = [(os.path.abspath(f[0]), *f[1:]) for f in source_files]
        if isinstance(model, (str, os.PathLike)):
            self._source = os.path.abspath(os.fspath(model))
        elif isinstance(model, bytes):
            self._source = model
        if not isinstance(memory_limit_bytes, int) or isinstance(memory_limit_bytes, bool) or memory_limit_bytes < 0:
            raise ValueError(
                f"memory_limit_bytes must be an int >= 0 (0 = physical memory), got {memory_limit_bytes!r}"
            )
        self._tuning_profile = tuning_profile
        self._memory_limit_bytes = memory_limit_bytes
        if tuning_profile is None:  # the machine's calibrated profiles, if any
            tuning_profile = kernel_tuning.machine_tuning_source(cpu_execution.num_threads, cpu_execution.affinity)
        graph = build_graph(proto, base_dir, weights)
        if weights is not None:
            # The graph holds the native weights now; the session takes the graph over and
            # frees each weight its kernels absorb (packed constants) as it creates them.
            weights.release_payloads()
        # The loader read the model's files into memory (no weight reads them through a mapping):
        # re-exporting the model to the same path, even while this runs, cannot change the session.
        self._session = _native.Session.create(graph, cpu_execution, tuning_profile, memory_limit_bytes)
        initializers = {i.name for i in proto.graph.initializer}
        self._inputs = [NodeArg(vi) for vi in proto.graph.input if vi.name not in initializers]
        self._overridable = [NodeArg(vi) for vi in proto.graph.input if vi.name in initializers]
        self._outputs = [NodeArg(vi) for vi in proto.graph.output]
        # Declared input types, for feeds that need one to encode (dicts: maps).
        self._declared = {
            vi.name: describe_type(vi.type)[0]
            for vi in proto.graph.input
            if vi.type.WhichOneof("value") != "tensor_type"
        }

    def __getstate__(self) -> dict[str, Any]:
        """Pickling carries the model as this session runs it (prepared and rewritten, every
        weight and all external data inlined: unpickling reads no file) and the execution
        policy; unpickling builds a new session, so sessions travel to multiprocessing, Dask
        or Ray workers.

        The session keeps most weights packed only (constant_memory), so pickling reads the
        weights of a model given as a path again: from the model file and its external data
        files, which must then still hold the bytes the session was created from (each file's
        size and content fingerprint are compared for a file written less than 50 ms before the
        session was created; for an older one, whose bytes the session did not hash, its
        identity and modification and status-change times). A file re-exported, changed or
        deleted since then makes pickling raise pickle.PicklingError naming the file, rather
        than carry other weights; so does any rewrite of an old file, even with equal bytes.
        A session created from bytes keeps them (by reference) and always pickles; one
        created from a ModelProto holds its whole model."""
        if self._tuning_profile is not None:
            raise TypeError(
                "an InferenceSession created with an explicit tuning_profile cannot be pickled "
                "(a TuningSource is native state): let the worker load its profile instead"
            )
        model = self._model
        if self._weights is not None and self._source is not None:
            model = with_weights(self._model, self._weights_again())
        model = _with_external_data_inlined(model, self._base_dir)
        policy = self._session.policy
        return {
            "model": model.SerializeToString(),
            "memory_limit_bytes": self._memory_limit_bytes,
            "policy": {
                "num_threads": policy.num_threads,
                "spin_microseconds": policy.spin_microseconds,
                "affinity": list(policy.affinity),
                "join_wait_microseconds": policy.join_wait_microseconds,
            },
        }

    def _weights_again(self) -> _native.LoadedModel:
        """The weights this session was created with, loaded again from its source (the
        rewritten self._model names them), after checking that the source's files hold the
        bytes they held then."""
        source, held = self._source, self._weights
        assert source is not None and held is not None  # __getstate__ asks only then
        advice = (
            "the session keeps its weights packed and reads them again to pickle; pickle it before "
            "the model's files change, or create it from the model's bytes, which it keeps"
        )
        now: list[tuple] = []
        hashed = any(f[6] is not None for f in self._source_files)
        try:
            _, weights = load_model_and_weights(source, now, hash_every_file=hashed)
        except (OSError, _native.InvalidArgument) as e:
            raise pickle.PicklingError(
                f"cannot pickle this InferenceSession: its model {source!r} cannot be read again ({e}); {advice}"
            ) from None
        found = {f[0]: f for f in now}
        for then in self._source_files:
            path, size, fingerprint = then[0], then[1], then[6]
            current = found.get(path)
            if current is None:
                what = "is no longer read by the model"
            elif fingerprint is not None and (current[1], current[6]) != (size, fingerprint):
                what = f"holds other bytes: {current[1]} now, {size} when the session was created"
            elif fingerprint is None and current[1:6] != then[1:6]:
                what = "was written or replaced: its size, identity or times differ"
            else:
                continue
            raise pickle.PicklingError(
                f"cannot pickle this InferenceSession: {path!r} changed since the session was created from it "
                f"(it {what}); {advice}"
            )
        if weights is None or any(name not in weights for name in held.names()):
            raise pickle.PicklingError(f"cannot pickle this InferenceSession: {source!r} no longer holds its weights")
        return weights

    def __setstate__(self, state: dict[str, Any]) -> None:
        # The pickled model is already rewritten: rewriting again would only cost time.
        self.__init__(  # type: ignore[misc]  # re-initialising this very class
            state["model"],
            cpu_execution=CpuExecutionPolicy(**state["policy"]),
            graph_optimizations=False,
            memory_limit_bytes=state["memory_limit_bytes"],
        )

    def get_inputs(self) -> list[NodeArg]:
        return list(self._inputs)

    def get_overridable_initializers(self) -> list[NodeArg]:
        return list(self._overridable)

    def get_outputs(self) -> list[NodeArg]:
        return list(self._outputs)

    def get_providers(self) -> list[str]:
        return ["CPUExecutionProvider"]

    def get_cpu_execution(self) -> _native.CpuExecutionPolicy:
        """The CpuExecutionPolicy this session runs under."""
        return self._session.policy

    def get_modelmeta(self) -> Any:
        return self._model.metadata_props

    def _encode_feeds(self, input_feed: dict[str, Any]) -> list[tuple[str, Any]]:
        if not isinstance(input_feed, dict):
            raise TypeError("input_feed must be a dict of input name -> value")
        return [(name, encode_value(value, self._declared.get(name))) for name, value in input_feed.items()]

    def run(
        self,
        output_names: Sequence[str] | None,
        input_feed: dict[str, Any],
        run_options: _native.RunOptions | None = None,
    ) -> list[Any]:
        """Runs the model: a list of numpy arrays (lists for sequences, None for empty optionals)."""
        names = list(output_names) if output_names else []
        raw = self._session.run(self._encode_feeds(input_feed), names, run_options)
        return [decode_value(r) for r in raw]

    def run_with_events(
        self,
        output_names: Sequence[str] | None,
        input_feed: dict[str, Any],
        run_options: _native.RunOptions | None = None,
    ) -> tuple[list[Any], list[_native.NodeEvent], list[_native.RegionEvent]]:
        """As run, also returning (node events, region events) of this run."""
        names = list(output_names) if output_names else []
        raw, nodes, regions = self._session.run_with_events(self._encode_feeds(input_feed), names, run_options)
        return [decode_value(r) for r in raw], nodes, regions

    def tuning_report(self) -> list[_native.TuningValueReport]:
        """For every kernel instance: node, schema, parameter, value and where the value came from."""
        return self._session.tuning_report()

    def memory_limit_bytes(self) -> int:
        """The limit the session's allocator enforces (the physical memory by default)."""
        return self._session.memory_limit_bytes

    def memory(self) -> _native.AllocationStats:
        """The session allocator's counters: allocations, bytes_allocated, current_bytes, peak_bytes."""
        return self._session.memory()

    def constant_memory(self) -> _native.ConstantMemory:
        """Initializer bytes the session retains and those it released because every kernel
        reading them absorbed them (packed weights), and what those kernels hold instead."""
        return self._session.constant_memory()


def _rewritten_model(
    model: str | os.PathLike | bytes | onnx.ModelProto, level: str, source_files: list[tuple[str, int, int]]
) -> tuple[onnx.ModelProto, _native.LoadedModel | None]:
    """The model as a session runs it: loaded (large weights native; the files read go to
    `source_files`), validated, prepared and rewritten at `level`."""
    proto, weights = load_model_and_weights(model, source_files)
    validate_model(proto)
    proto = prepare_model(proto)
    proto = graph_rewrites.optimize(proto, weights, level, in_place=True, shapes_inferred=True)  # our copy
    return proto, weights


def _with_external_data_inlined(model: onnx.ModelProto, base_dir: str) -> onnx.ModelProto:
    """model with every tensor still stored in an external file (those the native loader
    leaves to Python: sub-byte element types, subgraphs' and attributes' tensors) read into
    it from base_dir: a copy, or model itself when there is none."""
    tensors = onnx.external_data_helper._get_all_tensors  # onnx's own walk of every tensor (subgraphs too)
    if not any(onnx.external_data_helper.uses_external_data(t) for t in tensors(model)):
        return model
    full = onnx.ModelProto()
    full.CopyFrom(model)
    try:
        onnx.external_data_helper.load_external_data_for_model(full, base_dir)
    except (OSError, ValueError) as e:
        raise pickle.PicklingError(
            f"cannot pickle this InferenceSession: its external data cannot be read ({e})"
        ) from None
    return full
