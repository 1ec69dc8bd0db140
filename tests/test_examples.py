"""The Python examples (examples/python/) run and check their own results."""
import importlib.util
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "python"


def load(name):
    spec = importlib.util.spec_from_file_location(f"example_{name}", EXAMPLES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_build_and_run():
    y = load("build_and_run").main()
    assert y.shape == (2, 3) and (y >= 0).all()


def test_async_dispatch():
    assert [float(r[0]) for r in load("async_dispatch").main()] == [1.0, 3.0, 5.0, 7.0]


def test_onnx_import():
    pytest.importorskip("onnx")
    assert load("onnx_import").main().shape == (3, 2)


def test_every_example_is_tested():
    # ray_pipeline starts a Ray cluster of its own: tests/test_ray.py runs it.
    assert sorted(p.stem for p in EXAMPLES.glob("*.py")) == ["async_dispatch", "build_and_run", "onnx_import",
                                                             "ray_pipeline"]
