"""Sessions in servers: concurrent callers on one session, pickling, process pools and a
Dask cluster with process workers all give the outputs of a plain local run."""

import concurrent.futures
import gc
import multiprocessing
import os
import pickle
import time

import distributed
import numpy as np
import onnx_light
import pytest
from onnx import TensorProto, helper, numpy_helper

RNG = np.random.default_rng(7)
WEIGHTS = RNG.standard_normal((64, 32)).astype(np.float32)
BIAS = RNG.standard_normal(32).astype(np.float32)


def mlp_model():
    """x[N, 64] -> MatMul -> Add -> Relu -> Softmax: parallel kernels at a large batch."""
    graph = helper.make_graph(
        [
            helper.make_node("MatMul", ["x", "w"], ["h"]),
            helper.make_node("Add", ["h", "b"], ["a"]),
            helper.make_node("Relu", ["a"], ["r"]),
            helper.make_node("Softmax", ["r"], ["y"], axis=-1),
        ],
        "mlp",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [None, 64])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [None, 32])],
        initializer=[numpy_helper.from_array(WEIGHTS, "w"), numpy_helper.from_array(BIAS, "b")],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)]).SerializeToString()


def feeds(seed, rows=2048):
    return {"x": np.random.default_rng(seed).standard_normal((rows, 64)).astype(np.float32)}


def run_pickled(args):
    """In a worker process: unpickle the session and run it."""
    blob, seed = args
    return pickle.loads(blob).run(None, feeds(seed))[0]


@pytest.fixture(scope="module")
def session():
    return onnx_light.InferenceSession(mlp_model(), cpu_execution=onnx_light.CpuExecutionPolicy(num_threads=2))


@pytest.mark.parametrize("callers", [2, 4])
def test_concurrent_callers_on_one_session_get_the_serial_outputs(session, callers):
    expected = {seed: session.run(None, feeds(seed))[0] for seed in range(8)}
    with concurrent.futures.ThreadPoolExecutor(callers) as pool:
        results = list(pool.map(lambda seed: (seed, session.run(None, feeds(seed))[0]), list(range(8)) * 4))
    for seed, output in results:
        np.testing.assert_array_equal(output, expected[seed])


def test_pickled_session_is_rebuilt_with_its_policy_and_gives_the_same_outputs(session):
    clone = pickle.loads(pickle.dumps(session))
    assert clone.get_cpu_execution().num_threads == 2
    assert [i.name for i in clone.get_inputs()] == ["x"]
    np.testing.assert_array_equal(clone.run(None, feeds(1))[0], session.run(None, feeds(1))[0])


def test_pickling_keeps_every_field_of_the_policy():
    policy = onnx_light.CpuExecutionPolicy(num_threads=2, spin_microseconds=50, join_wait_microseconds=1000)
    clone = pickle.loads(pickle.dumps(onnx_light.InferenceSession(mlp_model(), cpu_execution=policy)))
    kept = clone.get_cpu_execution()
    assert (kept.num_threads, kept.spin_microseconds, kept.join_wait_microseconds) == (2, 50, 1000)


def test_session_with_an_explicit_tuning_profile_refuses_to_pickle_with_a_reason():
    profiled = onnx_light.InferenceSession(mlp_model(), tuning_profile=onnx_light._native.TableTuningSource())
    with pytest.raises(TypeError, match="tuning_profile"):
        pickle.dumps(profiled)


def test_process_pool_workers_run_a_pickled_session(session):
    blob = pickle.dumps(session)
    with multiprocessing.get_context("spawn").Pool(2) as pool:
        outputs = pool.map(run_pickled, [(blob, seed) for seed in range(4)])
    for seed, output in enumerate(outputs):
        np.testing.assert_array_equal(output, session.run(None, feeds(seed))[0])


def test_process_pool_workers_run_a_session_pickled_from_a_path_whose_file_is_then_deleted(tmp_path, session):
    """The pickle carries the model's bytes: the workers read no file."""
    path = tmp_path / "mlp.onnx"
    path.write_bytes(mlp_model())
    blob = pickle.dumps(
        onnx_light.InferenceSession(str(path), cpu_execution=onnx_light.CpuExecutionPolicy(num_threads=2))
    )
    path.unlink()
    with multiprocessing.get_context("spawn").Pool(2) as pool:
        outputs = pool.map(run_pickled, [(blob, seed) for seed in range(4)])
    for seed, output in enumerate(outputs):
        np.testing.assert_array_equal(output, session.run(None, feeds(seed))[0])


def test_dask_local_cluster_with_process_workers_matches_a_local_run(session):
    with (
        distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None, host="127.0.0.1"
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        remote = client.scatter(session, broadcast=True)
        # The function travels by value (cloudpickle): it must not need this test module.
        futures = [
            client.submit(lambda s, x: s.run(None, {"x": x})[0], remote, feeds(seed)["x"], pure=False)
            for seed in range(4)
        ]
        outputs = client.gather(futures)
    for seed, output in enumerate(outputs):
        np.testing.assert_array_equal(output, session.run(None, feeds(seed))[0])


def test_forked_child_runs_and_destroys_an_inherited_session():
    """A pre-forking server or multiprocessing's fork method: the child inherits a session
    whose executor's worker threads exist only in the parent (a policy of its own, so that
    deleting the session in the child destroys that executor there)."""
    inherited = onnx_light.InferenceSession(mlp_model(), cpu_execution=onnx_light.CpuExecutionPolicy(num_threads=3))
    expected = inherited.run(None, feeds(3))[0]
    time.sleep(0.05)  # the parent's workers park: the child must not wait for them
    pid = os.fork()
    if pid == 0:
        ok = np.array_equal(inherited.run(None, feeds(3))[0], expected)
        fresh = onnx_light.InferenceSession(mlp_model(), cpu_execution=onnx_light.CpuExecutionPolicy(num_threads=3))
        ok = ok and np.array_equal(fresh.run(None, feeds(3))[0], expected)
        del inherited, fresh
        gc.collect()
        os._exit(0 if ok else 1)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        time.sleep(0.05)
    else:
        os.kill(pid, 9)
        os.waitpid(pid, 0)
        raise AssertionError("the forked child hung")
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0, status
