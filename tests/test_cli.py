"""The ``webnn`` command line tool."""
import io
import os
import subprocess
import sys

import numpy as np
import pytest

import webnn
from webnn import cli, models

MODEL = """\
webnn_graph "small" v1 {
  inputs { a: f32[dyn("batch", 16), 3]; k: i32[2]; }
  consts { two: f32[] @scalar(2.0); }
  nodes { y = mul(a, two); z = add(k, k); }
  outputs { y; z; }
}
"""


@pytest.fixture
def small(tmp_path):
    path = tmp_path / "small.webnn"
    path.write_text(MODEL)
    return path


def run_cli(capsys, *argv):
    code = cli.main(list(map(str, argv)))
    out, err = capsys.readouterr()
    return code, out, err


def test_info(capsys):
    code, out, err = run_cli(capsys, "info")
    assert code == 0
    assert f"webnn {webnn.__version__}" in out
    assert "cpu isa: " in out and "threads: " in out
    assert f"operations: {len(webnn._core.op_infos())}" in out
    active, detected = cli.cpu_isa_levels()
    assert active is None or active in ("ref", "avx2", "avx512")


@pytest.mark.parametrize("argv", [["demo"], ["run"]])
def test_demo_classifies_the_bundled_digits(capsys, argv):
    code, out, err = run_cli(capsys, *argv)
    assert code == 0, err
    assert "200 held-out" in out
    accuracy = float(out.split("accuracy ")[1].split("%")[0])
    assert accuracy >= 90


def test_selftest(capsys):
    code, out, err = run_cli(capsys, "selftest")
    assert code == 0 and "OK" in out


def test_run_with_random_inputs_and_output_dir(capsys, small, tmp_path):
    code, out, err = run_cli(capsys, "run", small, "--dim", "batch=4", "--output-dir", tmp_path / "out")
    assert code == 0, err
    assert "model 'small': 2 input(s), 1 constant(s), 2 operation(s), 2 output(s)" in out
    assert "output y: float32 [4, 3]" in out and "output z: int32 [2]" in out
    y = np.load(tmp_path / "out" / "y.npy")
    assert y.shape == (4, 3) and y.dtype == np.float32


def test_run_with_input_files(capsys, small, tmp_path):
    a = np.arange(6, dtype=np.float64).reshape(2, 3)  # float64 is cast to the model's float32
    np.save(tmp_path / "a.npy", a)
    np.save(tmp_path / "k.npy", np.array([5, -7], np.int32))
    code, out, err = run_cli(capsys, "run", small, "--input", f"a={tmp_path / 'a.npy'}", "--input",
                             f"k={tmp_path / 'k.npy'}", "--dim", "batch=2", "--output-dir", tmp_path)
    assert code == 0, err
    assert "(from file)" in out
    np.testing.assert_array_equal(np.load(tmp_path / "y.npy"), a * 2)
    np.testing.assert_array_equal(np.load(tmp_path / "z.npy"), [10, -14])


def test_run_sets_unpinned_dynamic_dimensions_to_one(capsys, small):
    code, out, err = run_cli(capsys, "run", small)
    assert code == 0
    assert "dynamic dimension 'batch' of input 'a' set to 1" in err
    assert "output y: float32 [1, 3]" in out


@pytest.mark.parametrize("argv,message", [
    (["run", "missing.webnn"], "no such model file: missing.webnn"),
    (["run", "{small}", "--input", "q=x.npy"], "the model has no input 'q'"),
    (["run", "{small}", "--input", "a"], "--input must look like NAME=VALUE"),
    (["run", "{small}", "--input", "a={tmp}/none.npy"], "--input a: cannot read"),
    (["run", "{small}", "--input", "a={tmp}/wrong.npy"], "--input a: the array has shape [5], the model expects [1, 3]"),
    (["run", "{small}", "--dim", "seq=3"], "the model has no dynamic dimension 'seq' (it has: batch)"),
    (["run", "{small}", "--dim", "batch=x"], "--dim batch: 'x' is not an integer"),
    (["run", "{small}", "--dim", "batch=99"], "dimension 'batch' is at most 16, got 99"),
    (["run", "{bad}"], "bad.webnn, line 1: the file must start with"),
    (["bench", "{small}", "--iterations", "0"], "--iterations must be at least 1"),
    (["bench", "{small}", "--threads", "0"], "--threads must be at least 1"),
    (["bench", "{fixed}", "--batch", "4"], "input 'x' has a fixed batch size of 2"),
])
def test_user_mistakes_print_one_line(capsys, small, tmp_path, argv, message):
    (tmp_path / "bad.webnn").write_text("not a model")
    (tmp_path / "fixed.webnn").write_text('webnn_graph "f" v1 { inputs { x: f32[2, 3]; } nodes { y = relu(x); } '
                                          'outputs { y; } }')
    np.save(tmp_path / "wrong.npy", np.zeros(5, np.float32))
    paths = {"small": small, "tmp": tmp_path, "bad": tmp_path / "bad.webnn", "fixed": tmp_path / "fixed.webnn"}
    code, out, err = run_cli(capsys, *[a.format(**paths) for a in argv])
    assert code == 1
    lines = [line for line in err.splitlines() if not line.startswith("note:")]
    assert len(lines) == 1 and lines[0].startswith(f"webnn {argv[0]}: error: "), err
    assert message in lines[0], err
    assert "Traceback" not in err


def test_bench_reports_latency_and_throughput(capsys):
    code, out, err = run_cli(capsys, "bench", models.DIGITS, "--batch", "8", "--iterations", "5", "--threads", "1")
    assert code == 0, err
    assert "model 'digits': batch 8, 1 thread(s), 5 iterations after 5 warm-up" in out
    assert "latency ms: p50 " in out and " p90 " in out and " p99 " in out
    assert "throughput: " in out and "samples/s" in out
    assert err == ""  # a short run shows no progress bar


def test_progress_bar_only_after_two_seconds(monkeypatch):
    clock = [100.0]
    monkeypatch.setattr(cli.time, "perf_counter", lambda: clock[0])
    stream = io.StringIO()
    progress = cli._Progress(10, stream)
    progress.update(1)
    assert stream.getvalue() == ""
    clock[0] += 2.5
    for done in range(2, 11):
        progress.update(done)
    progress.close()
    lines = stream.getvalue().splitlines()
    assert lines[0] == "progress: 2/10" and lines[-1] == "progress: 10/10"


def test_no_command_prints_help(capsys):
    code, out, err = run_cli(capsys)
    assert code == 2 and "demo" in out and "bench" in out


def test_entry_point_runs_as_a_process(small):
    result = subprocess.run([sys.executable, "-m", "webnn.cli", "run", str(small), "--dim", "batch=2"],
                            capture_output=True, text=True, timeout=120, env={**os.environ, "PYTHONUNBUFFERED": "1"})
    assert result.returncode == 0, result.stderr
    assert "output y: float32 [2, 3]" in result.stdout
    result = subprocess.run([sys.executable, "-m", "webnn.cli", "run", "nope.webnn"], capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 1 and result.stderr.strip() == "webnn run: error: no such model file: nope.webnn"


# ---------------------------------------------------------------- ONNX models through the CLI
def _tiny_onnx(path):
    onnx = pytest.importorskip("onnx")
    from onnx import TensorProto, helper

    weight = helper.make_tensor("w", TensorProto.FLOAT, [4, 3], np.arange(12, dtype=np.float32).tolist())
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["h"]), helper.make_node("Relu", ["h"], ["y"])], "tiny",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 3])], initializer=[weight])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    onnx.save(model, str(path))
    return np.arange(12, dtype=np.float32).reshape(4, 3)


def test_run_and_bench_an_onnx_model(tmp_path, capsys):
    weight = _tiny_onnx(tmp_path / "tiny.onnx")
    x = np.array([[1, -2, 3, -4], [0.5, 0.5, 0.5, 0.5]], np.float32)
    np.save(tmp_path / "x.npy", x)
    out_dir = tmp_path / "out"
    assert cli.main(["run", str(tmp_path / "tiny.onnx"), "--dim", "batch=2", "--input", f"x={tmp_path / 'x.npy'}",
                     "--output-dir", str(out_dir)]) == 0
    np.testing.assert_allclose(np.load(out_dir / "y.npy"), np.maximum(x @ weight, 0), rtol=1e-6)
    assert cli.main(["bench", str(tmp_path / "tiny.onnx"), "--batch", "3", "--iterations", "3"]) == 0
    assert "latency ms" in capsys.readouterr().out


def test_convert_onnx_to_webnn(tmp_path):
    weight = _tiny_onnx(tmp_path / "tiny.onnx")
    target = tmp_path / "tiny.webnn"
    assert cli.main(["convert", str(tmp_path / "tiny.onnx"), "-o", str(target), "--override-dim", "batch=2"]) == 0
    graph = webnn.load(str(target), webnn.create_context())
    x = np.ones((2, 4), np.float32)
    np.testing.assert_allclose(graph.compute({"x": x})["y"], np.maximum(x @ weight, 0), rtol=1e-6)


def test_convert_reports_user_mistakes(tmp_path, capsys):
    assert cli.main(["convert", str(tmp_path / "missing.onnx"), "-o", str(tmp_path / "m.webnn")]) == 1
    assert "no such model file" in capsys.readouterr().err
