"""webnn.ray: the predictor as a Ray Data ``map_batches`` stage, on a local two-CPU cluster.

Skipped without Ray (``pip install ".[ray]"``); with ``WEBNN_REQUIRE_RAY=1`` (CI) a missing Ray fails.
"""
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import webnn
from webnn.models import DIGITS, digits_samples

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning:ray")  # Ray's own settings, not ours

ROOT = Path(__file__).resolve().parents[1]
IMAGES, _ = digits_samples()
COUNT = len(IMAGES)


def _import_ray():
    if os.environ.get("WEBNN_REQUIRE_RAY") == "1":
        import ray
        import ray.data
    else:
        ray = pytest.importorskip("ray")
        pytest.importorskip("ray.data")
    return ray


def run_python(code):
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)


def test_import_webnn_does_not_import_ray():
    result = run_python("import sys, webnn, webnn.batch; print('ray' in sys.modules)")
    assert result.returncode == 0 and result.stdout.strip() == "False", result.stderr


def test_without_ray_the_import_says_what_to_install():
    result = run_python("import sys\nsys.modules['ray'] = None  # as if not installed\n"
                        "try:\n    import webnn.ray\nexcept ImportError as e:\n    print(e)")
    assert result.returncode == 0 and 'pip install "webnn[ray]"' in result.stdout, result.stdout + result.stderr


# Runs before the module's cluster starts (tests run in file order): the example starts its own.
def test_example_pipeline_runs():
    _import_ray()
    result = subprocess.run([sys.executable, str(ROOT / "examples" / "python" / "ray_pipeline.py")],
                            capture_output=True, text=True, timeout=180, cwd=ROOT)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert "200 images in" in result.stdout and "items/s" in result.stdout and "accuracy" in result.stdout


@pytest.fixture(scope="module")
def ray():
    ray = _import_ray()
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    # Test-module classes go to the actors by value: the workers cannot import this file.
    ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])
    ray.data.DataContext.get_current().enable_progress_bars = False
    yield ray
    ray.shutdown()


def dataset(ray, columns):
    """The 200 digits as rows: "id", the image under `columns` (a name or names), "note"."""
    names = [columns] if isinstance(columns, str) else columns
    rows = [{"id": i, **{name: IMAGES[i] for name in names}, "note": f"digit {i}"} for i in range(COUNT)]
    return ray.data.from_items(rows)


def actors(ray, count, cpus):
    """map_batches options: `count` actors of `cpus` CPUs each (``concurrency=count, num_cpus=cpus``)."""
    return {"compute": ray.data.ActorPoolStrategy(size=count), "num_cpus": cpus, "batch_format": "numpy"}


def expected_probs():
    with webnn.BatchRunner(DIGITS) as runner:
        return runner.run(IMAGES)["probs"]


def test_every_row_matches_the_in_process_runner(ray):
    from webnn.ray import WebnnPredictor

    ds = dataset(ray, "pixels").map_batches(
        WebnnPredictor, fn_constructor_kwargs={"model": DIGITS, "inputs": {"pixels": "x"}, "outputs": {"probs": "p"}},
        batch_size=16, **actors(ray, 2, 1))
    rows = ds.take_all()
    assert len(rows) == COUNT
    assert all(set(row) == {"id", "note", "p"} for row in rows)  # the input column is dropped
    by_id = {int(row["id"]): row for row in rows}
    assert sorted(by_id) == list(range(COUNT))  # every item once, in whatever order Ray returns them
    expected = expected_probs()
    for i, row in by_id.items():
        assert row["note"] == f"digit {i}"
        np.testing.assert_allclose(row["p"], expected[i], rtol=1e-5, atol=1e-6, err_msg=f"id {i}")


@pytest.mark.parametrize("count,cpus", [(2, 1), (1, 2)])
def test_each_actor_runs_one_thread_per_cpu_it_was_given(ray, count, cpus):
    from webnn.ray import WebnnPredictor

    class Reporting(WebnnPredictor):
        """Also writes its CPU count, its runner's threads and its process into every row."""

        def __call__(self, batch):
            out = super().__call__(batch)
            n = len(out["id"])
            out["cores"] = np.full(n, self.cores)
            out["threads"] = np.full(n, self.runner.workers * self.runner.threads_per_worker)
            out["pid"] = np.full(n, os.getpid())
            return out

    ds = dataset(ray, ["x", "extra"]).map_batches(
        Reporting, fn_constructor_kwargs={"model": DIGITS, "keep_inputs": True}, batch_size=32,
        **actors(ray, count, cpus))
    batch = ds.take_batch(COUNT, batch_format="numpy")
    assert set(batch) == {"id", "x", "extra", "note", "probs", "cores", "threads", "pid"}  # identity mapping
    assert set(batch["cores"]) == {cpus} and set(batch["threads"]) == {cpus}
    assert len(set(batch["pid"])) <= count
    order = np.argsort(batch["id"])
    np.testing.assert_array_equal(batch["x"][order], IMAGES)  # kept, unchanged
    np.testing.assert_allclose(batch["probs"][order], expected_probs(), rtol=1e-5, atol=1e-6)


def test_a_missing_column_is_named_with_the_batch_columns(ray):
    from webnn.ray import WebnnPredictor, assigned_cpus

    predictor = WebnnPredictor(DIGITS)
    assert assigned_cpus() is None and predictor.cores == os.cpu_count()  # the driver: every core
    batch = {"id": np.arange(3), "pixels": IMAGES[:3]}
    with pytest.raises(TypeError, match=r"no column 'x' \(model input 'x'\); its columns are \['id', 'pixels'\]"):
        predictor(batch)
    out = WebnnPredictor(DIGITS, inputs={"pixels": "x"}, outputs={"probs": "id"}, cores=1)
    with pytest.raises(ValueError, match=r"already has column\(s\) \['id'\]"):
        out(batch)
    with pytest.raises(TypeError, match=r"column 'pixels' \(model input 'x'\) has items of shape \[8, 8\]"):
        WebnnPredictor(DIGITS, inputs={"pixels": "x"}, cores=1)({"pixels": IMAGES[:3].reshape(3, 8, 8)})
    # Through Ray: the actor's error reaches the driver with its message.
    ds = dataset(ray, "pixels").map_batches(WebnnPredictor, fn_constructor_kwargs={"model": DIGITS},
                                           batch_size=64, **actors(ray, 1, 1))
    with pytest.raises(Exception, match="no column 'x'"):
        ds.materialize()


def test_bad_mappings_are_named():
    _import_ray()
    from webnn.ray import WebnnPredictor

    with pytest.raises(TypeError, match=r"inputs= names \['y'\], not inputs of the model: its inputs are \['x'\]"):
        WebnnPredictor(DIGITS, inputs={"pixels": "y"}, cores=1)
    with pytest.raises(TypeError, match=r"outputs= names \['logits'\].*its outputs are \['probs'\]"):
        WebnnPredictor(DIGITS, outputs={"logits": "l"}, cores=1)
    with pytest.raises(TypeError, match="from two columns"):
        WebnnPredictor(DIGITS, inputs={"a": "x", "b": "x"}, cores=1)
    predictor = WebnnPredictor(DIGITS, cores=1)
    empty = predictor({"x": IMAGES[:0], "id": np.arange(0)})
    assert empty["probs"].shape == (0, 10) and len(empty["id"]) == 0
    with pytest.raises(TypeError, match='batch_format="numpy"'):
        predictor([IMAGES])
