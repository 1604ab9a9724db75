"""Whole models built in code (no downloads) for comparisons with ONNX Runtime.

Each model has realistic layer shapes, random weights from a fixed seed stored as
initializers, and random feeds from the same seed. Node names are unique, so per-node
timings of two runtimes can be matched by name. `corpus()` lists them smallest first.
"""

import dataclasses
from collections.abc import Sequence
from typing import Any

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 20  # Gelu is ai.onnx since 20; LayerNormalization since 17
ATTENTION_OPSET = 23  # the Attention operator
SEED = 0


@dataclasses.dataclass
class CorpusModel:
    name: str
    description: str
    model: onnx.ModelProto
    feeds: dict


class _GraphBuilder:
    """Collects nodes and initializers; names every node `<op>_<n>`."""

    def __init__(self, seed: int = SEED) -> None:
        self.rng = np.random.default_rng(seed)
        self.nodes = []
        self.initializers = []
        self._count = 0

    def weight(self, shape: Sequence[int], scale: float | None = None) -> str:
        fan_in = int(np.prod(shape[1:])) if len(shape) > 1 else int(shape[0])
        scale = scale if scale is not None else 1.0 / np.sqrt(max(fan_in, 1))
        return self.constant(self.rng.standard_normal(shape).astype(np.float32) * np.float32(scale))

    def constant(self, array: Any, prefix: str = "w") -> str:
        name = f"{prefix}{len(self.initializers)}"
        self.initializers.append(numpy_helper.from_array(np.asarray(array), name))
        return name

    def op(self, op_type: str, inputs: list[str], **attributes: Any) -> str:
        self._count += 1
        name = f"{op_type}_{self._count}"
        self.nodes.append(helper.make_node(op_type, inputs, [name + "_out"], name=name, **attributes))
        return name + "_out"

    def model(
        self,
        name: str,
        inputs: list[onnx.ValueInfoProto],
        output: str,
        output_shape: list[int],
        opset: int = OPSET,
    ) -> onnx.ModelProto:
        graph = helper.make_graph(
            self.nodes,
            name,
            inputs,
            [helper.make_tensor_value_info(output, TensorProto.FLOAT, output_shape)],
            self.initializers,
        )
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
        model.ir_version = 10
        onnx.checker.check_model(model)
        return model

    # Layers shared by the models.
    def conv_bn(
        self,
        x: str,
        in_ch: int,
        out_ch: int,
        kernel: int,
        stride: int = 1,
        group: int = 1,
        activation: str | None = "Relu",
    ) -> str:
        pad = kernel // 2
        y = self.op(
            "Conv",
            [x, self.weight([out_ch, in_ch // group, kernel, kernel])],
            kernel_shape=[kernel, kernel],
            strides=[stride, stride],
            pads=[pad] * 4,
            group=group,
        )
        scale = self.constant(1.0 + 0.1 * self.rng.standard_normal(out_ch).astype(np.float32))
        bias = self.constant(0.1 * self.rng.standard_normal(out_ch).astype(np.float32))
        mean = self.constant(0.1 * self.rng.standard_normal(out_ch).astype(np.float32))
        var = self.constant(1.0 + 0.1 * np.abs(self.rng.standard_normal(out_ch)).astype(np.float32))
        y = self.op("BatchNormalization", [y, scale, bias, mean, var], epsilon=1e-5)
        if activation == "Relu":
            y = self.op("Relu", [y])
        elif activation == "Relu6":
            y = self.op("Clip", [y, self.constant(np.float32(0)), self.constant(np.float32(6))])
        return y

    def linear(self, x: str, in_features: int, out_features: int) -> str:
        y = self.op("MatMul", [x, self.weight([in_features, out_features])])
        return self.op("Add", [y, self.constant(0.01 * self.rng.standard_normal(out_features).astype(np.float32))])

    def layer_norm(self, x: str, features: int) -> str:
        return self.op(
            "LayerNormalization",
            [x, self.constant(np.ones(features, np.float32)), self.constant(np.zeros(features, np.float32))],
            axis=-1,
            epsilon=1e-5,
        )


def _feed(shape: Sequence[int], seed: int = SEED + 1) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def mlp(batch: int = 32, features: Sequence[int] = (784, 1024, 1024, 10)) -> CorpusModel:
    """Gemm+Relu, then MatMul+Add+Gelu, then a Gemm classifier."""
    b = _GraphBuilder()
    x = "input"
    y = b.op("Gemm", [x, b.weight([features[1], features[0]]), b.constant(np.zeros(features[1], np.float32))], transB=1)
    y = b.op("Relu", [y])
    y = b.linear(y, features[1], features[2])
    y = b.op("Gelu", [y])
    y = b.op("Gemm", [y, b.weight([features[2], features[3]]), b.constant(np.zeros(features[3], np.float32))])
    model = b.model(
        "mlp", [helper.make_tensor_value_info(x, TensorProto.FLOAT, [batch, features[0]])], y, [batch, features[3]]
    )
    return CorpusModel(
        "mlp", f"MLP {'-'.join(map(str, features))}, batch {batch}", model, {x: _feed([batch, features[0]])}
    )


def _basic_block(b: _GraphBuilder, x: str, in_ch: int, out_ch: int, stride: int) -> str:
    y = b.conv_bn(x, in_ch, out_ch, 3, stride)
    y = b.conv_bn(y, out_ch, out_ch, 3, 1, activation=None)
    shortcut = x if stride == 1 and in_ch == out_ch else b.conv_bn(x, in_ch, out_ch, 1, stride, activation=None)
    return b.op("Relu", [b.op("Add", [y, shortcut])])


def resnet_cnn(size: int = 112, classes: int = 1000) -> CorpusModel:
    """ResNet-18 style: 7x7/2 stem + BN + Relu + MaxPool, basic blocks 64 and 128 (residual
    Adds, a strided 1x1 projection), GlobalAveragePool, Flatten, Gemm head; batch 1."""
    b = _GraphBuilder()
    x = "image"
    y = b.conv_bn(x, 3, 64, 7, 2)
    y = b.op("MaxPool", [y], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
    y = _basic_block(b, y, 64, 64, 1)
    y = _basic_block(b, y, 64, 64, 1)
    y = _basic_block(b, y, 64, 128, 2)
    y = _basic_block(b, y, 128, 128, 1)
    y = b.op("Flatten", [b.op("GlobalAveragePool", [y])])
    y = b.op("Gemm", [y, b.weight([classes, 128]), b.constant(np.zeros(classes, np.float32))], transB=1)
    model = b.model(
        "resnet_cnn", [helper.make_tensor_value_info(x, TensorProto.FLOAT, [1, 3, size, size])], y, [1, classes]
    )
    return CorpusModel(
        "resnet_cnn",
        f"ResNet-style CNN, 1x3x{size}x{size}, blocks 64,64,128,128",
        model,
        {x: _feed([1, 3, size, size])},
    )


def transformer_block(
    seq: int = 128,
    hidden: int = 384,
    heads: int = 6,
    ffn: int = 1536,
    batch: int = 1,
    fused_attention: bool = False,
) -> CorpusModel:
    """A pre-LayerNorm encoder block. Attention as its MatMul/Softmax decomposition (Reshape,
    Transpose, MatMul, Mul, Softmax), or with fused_attention as one Attention (opset 23) node."""
    b = _GraphBuilder()
    x = "tokens"
    head_dim = hidden // heads
    h = b.layer_norm(x, hidden)
    q, k, v = (b.linear(h, hidden, hidden) for _ in range(3))
    if fused_attention:
        context = b.op("Attention", [q, k, v], q_num_heads=heads, kv_num_heads=heads)
    else:
        split_heads = b.constant(np.array([batch, seq, heads, head_dim], np.int64), prefix="shape")
        merge_heads = b.constant(np.array([batch, seq, hidden], np.int64), prefix="shape")
        q, k, v = (b.op("Reshape", [t, split_heads]) for t in (q, k, v))
        q = b.op("Transpose", [q], perm=[0, 2, 1, 3])
        k = b.op("Transpose", [k], perm=[0, 2, 3, 1])
        v = b.op("Transpose", [v], perm=[0, 2, 1, 3])
        scores = b.op("Mul", [b.op("MatMul", [q, k]), b.constant(np.float32(1.0 / np.sqrt(head_dim)))])
        context = b.op("MatMul", [b.op("Softmax", [scores], axis=-1), v])
        context = b.op("Reshape", [b.op("Transpose", [context], perm=[0, 2, 1, 3]), merge_heads])
    x1 = b.op("Add", [x, b.linear(context, hidden, hidden)])
    h = b.op("Gelu", [b.linear(b.layer_norm(x1, hidden), hidden, ffn)])
    y = b.op("Add", [x1, b.linear(h, ffn, hidden)])
    name = "transformer_attention23" if fused_attention else "transformer_block"
    model = b.model(
        name,
        [helper.make_tensor_value_info(x, TensorProto.FLOAT, [batch, seq, hidden])],
        y,
        [batch, seq, hidden],
        ATTENTION_OPSET if fused_attention else OPSET,
    )
    attention = "Attention-23" if fused_attention else "MatMul/Softmax attention"
    return CorpusModel(
        name,
        f"encoder block, seq {seq}, hidden {hidden}, {heads} heads, FFN {ffn}, batch {batch}, {attention}",
        model,
        {x: _feed([batch, seq, hidden])},
    )


def _inverted_residual(b: _GraphBuilder, x: str, in_ch: int, out_ch: int, expand: int, stride: int) -> str:
    hidden = in_ch * expand
    y = b.conv_bn(x, in_ch, hidden, 1, activation="Relu6")
    y = b.conv_bn(y, hidden, hidden, 3, stride, group=hidden, activation="Relu6")
    y = b.conv_bn(y, hidden, out_ch, 1, activation=None)
    return b.op("Add", [x, y]) if stride == 1 and in_ch == out_ch else y


def mobilenet_block(size: int = 56) -> CorpusModel:
    """MobileNetV2 inverted residuals (1x1 expand, 3x3 depthwise, 1x1 project, Relu6 as
    Clip): 24->24 at stride 1 with a residual Add, then 24->32 at stride 2; batch 1."""
    b = _GraphBuilder()
    x = "features"
    y = _inverted_residual(b, x, 24, 24, 6, 1)
    y = _inverted_residual(b, y, 24, 32, 6, 2)
    out = size // 2
    model = b.model(
        "mobilenet_block",
        [helper.make_tensor_value_info(x, TensorProto.FLOAT, [1, 24, size, size])],
        y,
        [1, 32, out, out],
    )
    return CorpusModel(
        "mobilenet_block",
        f"2 MobileNetV2 inverted residuals, 1x24x{size}x{size}",
        model,
        {x: _feed([1, 24, size, size])},
    )


def corpus() -> list[CorpusModel]:
    """Every corpus model, smallest (by run time) first."""
    return [mlp(), mobilenet_block(), transformer_block(), transformer_block(fused_attention=True), resnet_cnn()]


def by_name(name: str) -> CorpusModel:
    return {m.name: m for m in corpus()}[name]
