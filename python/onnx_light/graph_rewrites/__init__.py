"""Graph rewrites applied when a session is created, at ONNX Runtime's optimisation levels:

    disabled  nothing (ORT_DISABLE_ALL; also InferenceSession(..., graph_optimizations=False))
    basic     basic.PASSES, repeated until the graph stops changing (at most MAX_BASIC_ROUNDS
              rounds): constant folding, static Shape/Size, Identity/Dropout/dead-node
              elimination, Cast, Transpose, Reshape and Squeeze/Unsqueeze cancellation,
              Conv + BatchNormalization (ORT_ENABLE_BASIC)
    extended  basic, then EXTENDED_PASSES: QDQ groups -> integer kernels, quantize_dynamic's
              MatMulInteger chains -> MatMulIntegerToFloat/DynamicQuantizeMatMul (qdq_rewrites),
              MatMul + Add -> Gemm (com.microsoft FusedGemm when A has more than 2
              dims: the bias in its epilogue), decomposed Gelu, LayerNormalization and
              RMSNormalization and scaled dot-product attention -> one op (Attention:
              the ai.onnx import raised to 23 where that changes no node's meaning),
              Conv/Gemm + activation (+ residual Add) ->
              com.microsoft FusedConv/FusedGemm (fusion_rewrites) (ORT_ENABLE_EXTENDED)
    all       extended, then LAYOUT_PASSES: CNN stretches of two or more convolutions in the
              blocked-channel layout NCHW16c (layout.py, native/kernels/nchwc/README.md), when
              the registry has its kernels (ORT_ENABLE_ALL, the default). "extended" is the
              switch that turns the layout off (for A/B runs and debugging): there is no
              per-pass option

Every pass is a function `(model, weights) -> model` (weights: the initializers held
natively, _model.load_model_and_weights) that rewrites the top-level graph in place, keeps
the graph outputs' names and the model's results up to float rounding, and leaves
control-flow subgraphs and the outer values they read alone. Passes read and edit the graph
through the shared index (`_graph.view_of(model, weights)`, see _graph.GraphView): one
index for all the rounds, updated by each edit (read again only after an edit behind its
back), and shape inference at most once per round, which refreshes the index's value types.
"""

from collections.abc import Callable
from typing import Any

import onnx

from onnx_light import _native, fusion_rewrites, qdq_rewrites
from onnx_light._model import _infer
from onnx_light.graph_rewrites import _graph, basic, extended, layout
from onnx_light.graph_rewrites.basic import fold_batch_norm_into_conv  # noqa: F401  (the first pass, kept here)

Pass = Callable[[onnx.ModelProto, "_native.LoadedModel | None"], onnx.ModelProto]

LEVELS = ("disabled", "basic", "extended", "all")
DEFAULT_LEVEL = "all"
MAX_BASIC_ROUNDS = 8

BASIC_PASSES: list[Pass] = list(basic.PASSES)
EXTENDED_PASSES: list[Pass] = [
    # QDQ groups become integer kernels first: the activation fusions below must not take
    # a quantized Conv's Relu away from the QuantizeLinear that absorbs it.
    *qdq_rewrites.PASSES,
    *extended.PASSES,
    # After MatMul + Add -> Gemm, so that Gemm + activation fuses too.
    *fusion_rewrites.PASSES,
]
LAYOUT_PASSES: list[Pass] = list(layout.PASSES)

# ONNX Runtime's GraphOptimizationLevel names -> ours.
_ORT_LEVELS = {
    "ORT_DISABLE_ALL": "disabled",
    "ORT_ENABLE_BASIC": "basic",
    "ORT_ENABLE_EXTENDED": "extended",
    "ORT_ENABLE_LAYOUT": "all",
    "ORT_ENABLE_ALL": "all",
}
_ORT_LEVEL_NUMBERS = {0: "disabled", 1: "basic", 2: "extended", 3: "all", 99: "all"}


def level_of(value: Any) -> str:
    """Our level name for `value`: one of LEVELS, an ONNX Runtime GraphOptimizationLevel
    (onnxruntime's or onnx_light.GraphOptimizationLevel), its name, or its number."""
    if isinstance(value, str):
        if value in LEVELS:
            return value
        name = value.rsplit(".", 1)[-1]
        if name in _ORT_LEVELS:
            return _ORT_LEVELS[name]
    elif getattr(value, "name", None) in _ORT_LEVELS:
        return _ORT_LEVELS[value.name]
    elif isinstance(value, int) and not isinstance(value, bool) and value in _ORT_LEVEL_NUMBERS:
        return _ORT_LEVEL_NUMBERS[value]
    raise ValueError(
        f"graph optimization level must be one of {', '.join(LEVELS)} or an ORT GraphOptimizationLevel, got {value!r}"
    )


def passes(level: str) -> list[Pass]:
    """The passes after the basic rounds, for `level` (empty for disabled and basic)."""
    level = level_of(level)
    after: list[Pass] = []
    if level in ("extended", "all"):
        after += EXTENDED_PASSES
    if level == "all":
        after += LAYOUT_PASSES
    return after


def _fingerprint(model: onnx.ModelProto) -> tuple:
    """What the rounds compare to tell whether a round changed the graph, when the index
    cannot tell them (see _Rounds.run)."""
    _graph.COUNTS["fingerprints"] += 1
    graph = model.graph
    return (
        tuple((n.op_type, n.domain, tuple(n.input), tuple(n.output)) for n in graph.node),
        tuple(sorted(t.name for t in graph.initializer)),
    )


class _Rounds:
    """Runs groups of passes as rounds over one graph index (_graph.shared_view), kept from
    round to round (the passes keep it up to date as they edit), inferring shapes at the
    start of a round only when the graph changed since the last inference (the inference
    refreshes the index's value types, not its nodes)."""

    def __init__(self, model: onnx.ModelProto, weights: _native.LoadedModel | None, inferred: bool) -> None:
        self.model, self.weights = model, weights
        self.first = self._last = _fingerprint(model)
        self._inferred = self._last if inferred else None
        self._view: _graph.GraphView | None = None

    @property
    def last(self) -> tuple:
        """The graph's fingerprint after the last round."""
        return self._last

    def run(self, rewrites: list[Pass]) -> bool:
        """One round of `rewrites`; whether it changed the graph."""
        before = self._last
        if before != self._inferred:
            _graph.COUNTS["shape_inferences"] += 1
            _infer(self.model, nodes=False)  # fresh value types: folding makes more of them static
            self._inferred = before
            if self._view is not None and self._view.model is self.model:
                self._view.read_types()
        with _graph.shared_view(self.model, self.weights, self._view) as view:
            edits, rebuilds = view.edits, view.rebuilds
            for rewrite in rewrites:
                self.model = rewrite(self.model, self.weights)
                if _graph.CHECK_INDEX and self.model is view.model:
                    _graph.view_of(self.model, self.weights)  # read again if a pass said it is out of date
                    view.check()
        self._view = view
        # No edit through the index, which was never read again (nothing edited behind it)
        # and still indexes this model: the graph is the one the round began with.
        untouched = self.model is view.model and view.edits == edits and view.rebuilds == rebuilds and view.in_sync()
        self._last = before if untouched else _fingerprint(self.model)
        return self._last != before

    def keep_types(self) -> None:
        """Takes the index's value types as fresh for the graph as it is now: after the later
        passes, whose fused nodes write the names (and the types) of the values they replace,
        and whose new values stay inside what they fused (com.microsoft ops, which onnx's
        inference does not see through anyway)."""
        self._inferred = self._last

    def run_basic(self) -> None:
        for _ in range(MAX_BASIC_ROUNDS):
            if not self.run(BASIC_PASSES):
                break


def optimize(
    model: onnx.ModelProto,
    weights: _native.LoadedModel | None = None,
    level: Any = DEFAULT_LEVEL,
    in_place: bool = False,
    shapes_inferred: bool = False,
) -> onnx.ModelProto:
    """The model rewritten at `level` (see the module doc), on a copy (the caller's model is
    left as it was) unless `in_place` (for a caller that owns the model: no second copy of
    its weights). `weights`: the initializers held natively, read in place.
    `shapes_inferred`: the model's value_info is fresh (_model.prepare_model wrote it), so
    the first round does not infer again.

    Each round (the basic passes, then the later passes once, then basic rounds again if
    they changed anything) reads the one graph index that the passes update as they edit,
    and infers shapes at most once: not at all when the previous round changed nothing or
    was the later passes' (see _Rounds.keep_types)."""
    level = level_of(level)
    if level == "disabled":
        return model
    copy = model
    if not in_place:
        copy = onnx.ModelProto()
        copy.CopyFrom(model)
    rounds = _Rounds(copy, weights, shapes_inferred)
    rounds.run_basic()
    later = passes(level)
    if later and rounds.run(later):
        rounds.keep_types()
        rounds.run_basic()
    copy = rounds.model
    if rounds.last != rounds.first and copy.ir_version < 4:
        copy.ir_version = 4  # folded constants are initializers that are not graph inputs
    return copy
