"""onnx-light vs ONNX Runtime on single-node float Conv models (a benchmark, not a test).

    ONNX_LIGHT_MAX_ISA=avx2 ./bazelw run //benchmarks:conv_vs_ort -- [--repeats=N] [--threads=1,2] \
        [--only=dw] [--json=out.json]

Cases (issue 14, AVX2 convolution): 3x3 pad 1 convolutions 64 -> 64 on 56x56 and 128 -> 128
on 28x28 (the implicit GEMM), a 1x1 256 -> 64 on 56x56 (GEMM on X), and 3x3 pad 1 depthwise
convolutions with stride 1 and 2 on 96x112x112 and 144x56x56 (MobileNetV2 shapes); a 3x3
pad 1 convolution 24 -> 40 on 28x28 (a channel count no implicit tile divides) and 5x5 pad 2
depthwise convolutions with stride 1 on 240x14x14 and stride 2 on 144x56x56 (MobileNetV3 /
EfficientNet-B0 shapes); ResNet-18/50's 7x7/2 stem, 3x3 convolutions 256 on 14x14 and 512 on
7x7, 1x1 convolutions 64 -> 256 on 56x56, 512 -> 2048 and 2048 -> 512 on 7x7; MobileNetV3-small's
and EfficientNet-B0's 3x3 stride-2 stems on 3 channels (+ HardSwish / Swish) and their 1x1
convolutions 16 -> 96 on 112x112, 24 -> 144 on 56x56, 320 -> 1280 (+ Swish) and 1152 -> 320 on
7x7 (--only=mnv3_ or --only=effnet_). The depthwise
convolutions of the whole-model profiles with their activation behind them (Conv + Sigmoid +
Mul for Swish, which our session fuses into FusedConv and ORT runs as Conv + QuickGelu; Conv +
HardSwish): EfficientNet-B0's Conv_4 (3x3/1, 32 channels at 112x112) and Conv_18 (3x3/2, 96
channels 112 -> 56), MobileNetV3-small's 5x5 ones (240 channels at 14x14; stride 2: 96
channels 28 -> 14, 576 channels 14 -> 7), and the rest of their 5x5 and stride-2 depthwise
layers (EfficientNet-B0's 5x5/2 144 at 56, 5x5/1 240 at 28 and 672 at 14, 3x3/2 240 at 28,
5x5/2 672 at 14; MobileNetV3-small's 3x3/2 16 at 112 and 72 at 56 with Relu, 5x5/2 288 at 14);
and MobileNetV3's squeeze-and-excitation block on
[1, 576, 7, 7] (GlobalAveragePool, 1x1 576 -> 144, Relu, 1x1 144 -> 576, HardSigmoid, Mul:
our SqueezeExcitation node). A case's activation is its name's suffix (_swish, _hardswish, _relu). Weights
and bias are constant initializers (both runtimes may prepack them). Each runtime runs in its
own block per case and thread count (warm-up runs, then `repeats` timed runs), onnx-light
first, then ORT (ORT's workers spin after each run, so alternating single runs would charge
that spin to the other runtime), with a pause of --ort_pause_s before onnx-light's block and
after ORT's so that onnx-light never starts beside ORT's spinning workers; --ort_spinning=false
builds ORT's sessions with spinning off, for a check run. The ISA cap (ONNX_LIGHT_MAX_ISA, e.g. avx2 on an AVX-512
host) applies to onnx-light only and is recorded in the JSON's conditions with the CPU, the
build, ORT's version, ORT's spinning and the pause, and the load average before and after.
"""

import functools
import os

import numpy as np
import onnx_light
from absl import app, flags
from onnx import TensorProto, helper, numpy_helper

from benchmarks.ort_reference import (
    ORT_PAUSE_S,
    block_timing_conditions,
    conditions,
    finish_document,
    ort_session,
    paired_blocks,
)

FLAGS = flags.FLAGS
flags.DEFINE_integer("repeats", 200, "timed runs per runtime, case and thread count")
flags.DEFINE_integer("warmup", 10, "untimed runs before each block")
flags.DEFINE_list("threads", ["1", "2"], "thread counts")
flags.DEFINE_string("only", "", "run only cases whose name contains this")
flags.DEFINE_bool("ort_spinning", True, "ORT's intra-op spinning at its default (on); false: off, for a check run")
flags.DEFINE_float("ort_pause_s", ORT_PAUSE_S, "pause after every ORT block, for ORT's spinning workers to sleep")
flags.DEFINE_float("scale", 1.0, "spatial size factor (a quick check of the script: --scale=0.1)")
flags.DEFINE_string("json", "", "where to write the raw samples")

# name: (input channels, output channels, height = width, kernel, stride, group)
CASES: dict[str, tuple[int, int, int, int, int, int]] = {
    "conv3x3_64_56": (64, 64, 56, 3, 1, 1),
    "conv3x3_128_28": (128, 128, 28, 3, 1, 1),
    "conv1x1_256to64_56": (256, 64, 56, 1, 1, 1),
    "dw3x3s1_96_112": (96, 96, 112, 3, 1, 96),
    "dw3x3s2_96_112": (96, 96, 112, 3, 2, 96),
    "dw3x3s1_144_56": (144, 144, 56, 3, 1, 144),
    "dw3x3s2_144_56": (144, 144, 56, 3, 2, 144),
    "conv3x3_24to40_28": (24, 40, 28, 3, 1, 1),
    "dw5x5s1_240_14": (240, 240, 14, 5, 1, 240),
    "dw5x5s2_144_56": (144, 144, 56, 5, 2, 144),
    # ResNet-18/50 (issue 14, dense convolutions): the 7x7/2 stem, 3x3 convolutions down to
    # 7x7 (K up to 4608: the implicit GEMM's K chunks), the 1x1 expansions and reductions.
    "resnet_stem7x7s2_224": (3, 64, 224, 7, 2, 1),
    "conv3x3_256_14": (256, 256, 14, 3, 1, 1),
    "conv3x3_512_7": (512, 512, 7, 3, 1, 1),
    "conv1x1_64to256_56": (64, 256, 56, 1, 1, 1),
    "conv1x1_512to2048_7": (512, 2048, 7, 1, 1, 1),
    "conv1x1_2048to512_7": (2048, 512, 7, 1, 1, 1),
    # MobileNetV3-small / EfficientNet-B0 (issue 14, whole CNNs): the 3x3 stride-2 stems on
    # 3 input channels (with their activations, as the models have them) and the 1x1
    # convolutions at both ends: K = 16 and 24 on 112x112 and 56x56, 320 -> 1280 and
    # 1152 -> 320 on 7x7 (49 positions).
    "mnv3_stem3to16s2_224_hardswish": (3, 16, 224, 3, 2, 1),
    "effnet_stem3to32s2_224_swish": (3, 32, 224, 3, 2, 1),
    "effnet_1x1_16to96_112_swish": (16, 96, 112, 1, 1, 1),
    "effnet_1x1_24to144_56_swish": (24, 144, 56, 1, 1, 1),
    "effnet_1x1_320to1280_7_swish": (320, 1280, 7, 1, 1, 1),
    "effnet_1x1_1152to320_7": (1152, 320, 7, 1, 1, 1),
    # Issue 14, whole CNNs: the depthwise convolutions of EfficientNet-B0 and MobileNetV3-small
    # the lead's per-node profile names, with their activation (ACTIVATIONS below).
    "dw3x3s1_32_112_swish": (32, 32, 112, 3, 1, 32),
    "dw3x3s2_96_112_swish": (96, 96, 112, 3, 2, 96),
    "dw5x5s1_240_14_hardswish": (240, 240, 14, 5, 1, 240),
    "dw5x5s2_96_28_hardswish": (96, 96, 28, 5, 2, 96),
    "dw5x5s2_576_14_hardswish": (576, 576, 14, 5, 2, 576),
    # The rest of the two models' 5x5 and stride-2 depthwise layers at their real sizes,
    # channel counts and activations: EfficientNet-B0's 5x5/2 144 at 56 -> 28, 5x5/1 240 at
    # 28 and 672 at 14, 3x3/2 240 at 28 -> 14, 5x5/2 672 at 14 -> 7 (Swish);
    # MobileNetV3-small's 3x3/2 16 at 112 -> 56 and 72 at 56 -> 28 (Relu), 5x5/2 288 at
    # 14 -> 7 (HardSwish).
    "dw5x5s2_144_56_swish": (144, 144, 56, 5, 2, 144),
    "dw5x5s1_240_28_swish": (240, 240, 28, 5, 1, 240),
    "dw5x5s1_672_14_swish": (672, 672, 14, 5, 1, 672),
    "dw3x3s2_240_28_swish": (240, 240, 28, 3, 2, 240),
    "dw5x5s2_672_14_swish": (672, 672, 14, 5, 2, 672),
    "dw3x3s2_16_112_relu": (16, 16, 112, 3, 2, 16),
    "dw3x3s2_72_56_relu": (72, 72, 56, 3, 2, 72),
    "dw5x5s2_288_14_hardswish": (288, 288, 14, 5, 2, 288),
}

# The activation behind a case's Conv, by the name's suffix (none without one).
ACTIVATIONS = ("swish", "hardswish", "relu")

# Squeeze-and-excitation blocks: name: (channels, reduced channels, height = width).
SE_CASES: dict[str, tuple[int, int, int]] = {
    "se_576to144_7": (576, 144, 7),
}


def activation_of(name: str) -> str:
    """The activation a case's name ends with ("" for none)."""
    suffix = name.rsplit("_", 1)[-1]
    return suffix if suffix in ACTIVATIONS else ""


def conv_model(
    rng: np.random.Generator, cin: int, cout: int, hw: int, kernel: int, stride: int, group: int, activation: str = ""
) -> tuple[object, dict[str, np.ndarray]]:
    """Conv(x, W, B) with W and B constant; pads kernel // 2 ('same' for 3x3 and 5x5, none for 1x1).

    activation "swish" appends Sigmoid and Mul (x * sigmoid(x), as PyTorch exports SiLU),
    "hardswish" HardSwish, "relu" Relu.
    """
    pad = kernel // 2
    w = (rng.standard_normal((cout, cin // group, kernel, kernel)) * 0.1).astype(np.float32)
    b = rng.standard_normal(cout).astype(np.float32)
    conv_out = "c" if activation else "y"
    nodes = [
        helper.make_node(
            "Conv",
            ["x", "w", "b"],
            [conv_out],
            kernel_shape=[kernel, kernel],
            strides=[stride, stride],
            pads=[pad] * 4,
            group=group,
        )
    ]
    if activation == "swish":
        nodes += [helper.make_node("Sigmoid", ["c"], ["s"]), helper.make_node("Mul", ["c", "s"], ["y"])]
    elif activation == "hardswish":
        nodes.append(helper.make_node("HardSwish", ["c"], ["y"]))
    elif activation == "relu":
        nodes.append(helper.make_node("Relu", ["c"], ["y"]))
    graph = helper.make_graph(
        nodes,
        "conv",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, cin, hw, hw])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(w, "w"), numpy_helper.from_array(b, "b")],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)], ir_version=8)
    return model, {"x": rng.standard_normal((1, cin, hw, hw)).astype(np.float32)}


def se_model(rng: np.random.Generator, channels: int, reduced: int, hw: int) -> tuple[object, dict[str, np.ndarray]]:
    """MobileNetV3's squeeze-and-excitation block: x * HardSigmoid(W2 Relu(W1 mean(x) + B1) + B2)."""
    inits = {
        "w1": (rng.standard_normal((reduced, channels, 1, 1)) * 0.1).astype(np.float32),
        "b1": rng.standard_normal(reduced).astype(np.float32),
        "w2": (rng.standard_normal((channels, reduced, 1, 1)) * 0.1).astype(np.float32),
        "b2": rng.standard_normal(channels).astype(np.float32),
    }
    nodes = [
        helper.make_node("GlobalAveragePool", ["x"], ["m"]),
        helper.make_node("Conv", ["m", "w1", "b1"], ["h"]),
        helper.make_node("Relu", ["h"], ["r"]),
        helper.make_node("Conv", ["r", "w2", "b2"], ["p"]),
        helper.make_node("HardSigmoid", ["p"], ["g"], alpha=1.0 / 6),
        helper.make_node("Mul", ["x", "g"], ["y"]),
    ]
    graph = helper.make_graph(
        nodes,
        "se",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, channels, hw, hw])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(v, k) for k, v in inits.items()],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)], ir_version=8)
    return model, {"x": rng.standard_normal((1, channels, hw, hw)).astype(np.float32)}


def main(argv: list[str]) -> None:
    del argv
    doc = {
        "benchmark": "conv_vs_ort",
        "conditions": conditions(
            repeats=FLAGS.repeats,
            warmup=FLAGS.warmup,
            scale=FLAGS.scale,
            onnx_light_max_isa=os.environ.get("ONNX_LIGHT_MAX_ISA", ""),
            **block_timing_conditions(FLAGS.ort_spinning, FLAGS.ort_pause_s),
        ),
    }
    results = []
    print(f"{'case':<26} {'thr':>3} {'onnx-light ms':>14} {'ORT ms':>10} {'ratio':>7} {'max |diff|':>11}")
    models = []
    for name, (cin, cout, hw, kernel, stride, group) in CASES.items():
        size = max(kernel + 1, round(hw * FLAGS.scale))
        activation = activation_of(name)
        build = functools.partial(conv_model, cin=cin, cout=cout, hw=size, kernel=kernel, stride=stride, group=group)
        shape = {"kernel": kernel, "stride": stride, "group": group, "out_channels": cout, "activation": activation}
        models.append((name, [1, cin, size, size], shape, functools.partial(build, activation=activation)))
    for name, (channels, reduced, hw) in SE_CASES.items():
        size = max(1, round(hw * FLAGS.scale))
        build = functools.partial(se_model, channels=channels, reduced=reduced, hw=size)
        models.append((name, [1, channels, size, size], {"reduced": reduced}, build))
    for name, in_shape, shape, build in models:
        if FLAGS.only and FLAGS.only not in name:
            continue
        model, feeds = build(np.random.default_rng(0))
        for threads in map(int, FLAGS.threads):
            ours = onnx_light.InferenceSession(
                model.SerializeToString(), cpu_execution=onnx_light.CpuExecutionPolicy(num_threads=threads)
            )
            theirs = ort_session(model, threads, spinning=FLAGS.ort_spinning)
            got, want = ours.run(None, feeds)[0], theirs.run(None, feeds)[0]
            np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
            max_diff = float(np.max(np.abs(np.asarray(got) - want)))
            samples = paired_blocks(ours, theirs, feeds, FLAGS.warmup, FLAGS.repeats, FLAGS.ort_pause_s)
            ol, rt = float(np.median(samples["onnx_light"])), float(np.median(samples["ort"]))
            print(f"{name:<26} {threads:>3} {ol:>14.4f} {rt:>10.4f} {ol / rt:>7.2f} {max_diff:>11.2e}", flush=True)
            results.append(
                {
                    "case": name,
                    "shape": in_shape,
                    **shape,
                    "threads": threads,
                    "median_ms_onnx_light": ol,
                    "median_ms_ort": rt,
                    "ratio": ol / rt,
                    "max_abs_diff_vs_ort": max_diff,
                    "samples_ms": samples,
                }
            )
    doc["results"] = results
    finish_document(doc, FLAGS.json)


if __name__ == "__main__":
    app.run(main)
