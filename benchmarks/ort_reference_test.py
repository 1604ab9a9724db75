"""paired_blocks' rule (no onnx-light run meets ORT's spinning workers: a pause separates
every ORT run from the next onnx-light run), its sample counts, what the conditions record,
and that ort_session's spinning switch reaches ORT's session options. No timing: the
sessions are fakes that log their runs and the pause is a fake sleep that logs itself."""

from typing import Any

import numpy as np
from absl.testing import absltest, parameterized
from onnx import TensorProto, helper

from benchmarks import ort_reference


class _LoggingSession:
    def __init__(self, name: str, log: list[str]) -> None:
        self._name, self._log = name, log

    def run(self, outputs: Any, feeds: dict[str, Any]) -> list[Any]:
        del outputs, feeds
        self._log.append(self._name)
        return []


def _paired(warmup: int, repeats: int, pause_s: float = 0.25) -> tuple[dict[str, list[float]], list[str]]:
    log: list[str] = []
    pauses: list[float] = []

    def sleep(seconds: float) -> None:
        pauses.append(seconds)
        log.append("pause")

    samples = ort_reference.paired_blocks(
        _LoggingSession("ours", log), _LoggingSession("ort", log), {}, warmup, repeats, pause_s, sleep
    )
    assert all(p == pause_s for p in pauses), pauses
    return samples, log


class PairedBlocksTest(parameterized.TestCase):
    @parameterized.named_parameters(("one_sample", 0, 1), ("warm_up_and_samples", 3, 5))
    def test_each_runtime_runs_its_warm_up_and_samples_in_one_block(self, warmup: int, repeats: int) -> None:
        samples, log = _paired(warmup, repeats)
        runs = warmup + repeats
        self.assertEqual(log, ["pause"] + ["ours"] * runs + ["ort"] * runs + ["pause"])
        self.assertLen(samples["onnx_light"], repeats)
        self.assertLen(samples["ort"], repeats)

    def test_no_onnx_light_run_follows_an_ort_run_without_a_pause(self) -> None:
        # Two cases back to back, with ORT's agreement run before each, as the benchmarks do.
        log: list[str] = []

        def sleep(seconds: float) -> None:
            del seconds
            log.append("pause")

        ours, theirs = _LoggingSession("ours", log), _LoggingSession("ort", log)
        for _ in range(2):
            ours.run(None, {})
            theirs.run(None, {})  # the agreement run
            ort_reference.paired_blocks(ours, theirs, {}, 2, 3, 0.5, sleep)
        last = None
        for event in log:
            if event == "ours":
                self.assertNotEqual(last, "ort", log)
            last = event
        self.assertEqual(log[-1], "pause")

    def test_samples_are_wall_milliseconds_of_each_run(self) -> None:
        samples, _ = _paired(1, 4)
        for runtime in ("onnx_light", "ort"):
            self.assertTrue(all(s >= 0.0 for s in samples[runtime]), samples)


class ConditionsTest(parameterized.TestCase):
    @parameterized.named_parameters(("spinning", True, "on"), ("not_spinning", False, "off"))
    def test_conditions_name_the_spinning_and_the_pause(self, spinning: bool, word: str) -> None:
        got = ort_reference.block_timing_conditions(spinning, 0.75)
        self.assertEqual(got["pause_after_ort_s"], 0.75)
        self.assertTrue(got["ort_intra_op_spinning"].startswith(word), got)


def _identity_model() -> bytes:
    graph = helper.make_graph(
        [helper.make_node("Identity", ["x"], ["y"])],
        "identity",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]).SerializeToString()


class OrtSessionTest(parameterized.TestCase):
    @parameterized.named_parameters(("default_off", {}, "0"), ("off", {"spinning": False}, "0"))
    def test_spinning_off_is_in_the_session_options(self, kwargs: dict[str, Any], expected: str) -> None:
        session = ort_reference.ort_session(_identity_model(), 2, **kwargs)
        options = session.get_session_options()
        self.assertEqual(options.get_session_config_entry("session.intra_op.allow_spinning"), expected)
        self.assertEqual(options.intra_op_num_threads, 2)

    def test_spinning_on_leaves_ort_at_its_default(self) -> None:
        session = ort_reference.ort_session(_identity_model(), 2, spinning=True)
        options = session.get_session_options()
        # Not set: ORT's default (spinning on) applies.
        with self.assertRaisesRegex(RuntimeError, "allow_spinning"):
            options.get_session_config_entry("session.intra_op.allow_spinning")
        x = np.array([1.0, -2.0], np.float32)
        np.testing.assert_array_equal(session.run(None, {"x": x})[0], x)


if __name__ == "__main__":
    absltest.main()
