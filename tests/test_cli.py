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


# ---------------------------------------------------------------- data sets: webnn run --batch-size / --output
MLP_WIDTH = 64


@pytest.fixture
def mlp(tmp_path):
    """A .webnn MLP with a dynamic batch, and its weights for the reference."""
    rng = np.random.default_rng(3)
    w1 = rng.standard_normal((MLP_WIDTH, 96)).astype(np.float32)
    w2 = rng.standard_normal((96, 10)).astype(np.float32)
    builder = webnn.MLGraphBuilder(webnn.create_context())
    x = builder.input("x", data_type="float32", shape=[5, MLP_WIDTH])
    y = builder.softmax(builder.matmul(builder.relu(builder.matmul(x, builder.constant(w1))), builder.constant(w2)),
                        axis=1)
    path = tmp_path / "mlp.webnn"
    webnn.save(path, {"y": y})
    path.write_text(path.read_text().replace(f"x: f32[5, {MLP_WIDTH}]", f'x: f32[dyn("batch", 1000000), {MLP_WIDTH}]'))
    return path, (w1, w2)


def mlp_reference(x, weights):
    w1, w2 = (w.astype(np.float64) for w in weights)
    logits = np.maximum(x.astype(np.float64) @ w1, 0) @ w2
    e = np.exp(logits - logits.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def test_run_a_data_set_of_ten_thousand_items(mlp, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("WEBNN_PROGRESS_AFTER", "0")
    path, weights = mlp
    x = np.random.default_rng(0).standard_normal((10000, MLP_WIDTH)).astype(np.float32)
    np.save(tmp_path / "data.npy", x)
    out = tmp_path / "out.npz"
    code, stdout, stderr = run_cli(capsys, "run", path, "--input", tmp_path / "data.npy", "--batch-size", 64,
                                   "--output", out)
    assert code == 0, stderr
    assert "10000 items, batch 64" in stderr and "progress: 10000/10000" in stderr and "items/s" in stderr
    assert "items/s" in stdout and "batch latency ms (157 batches of up to 64): p50 " in stdout
    assert " p99 " in stdout and f"wrote 1 output(s) of 10000 items to {out}" in stdout
    with np.load(out) as saved:
        assert saved.files == ["y"]
        np.testing.assert_allclose(saved["y"], mlp_reference(x, weights), rtol=1e-4, atol=1e-6)
    assert sorted(os.listdir(tmp_path)) == ["data.npy", "mlp.manifest.json", "mlp.webnn", "mlp.weights", "out.npz"]
    umask = os.umask(0)
    os.umask(umask)
    assert os.stat(out).st_mode & 0o777 == 0o666 & ~umask  # as a plain open() would make it


def test_a_malformed_item_stops_the_run_and_writes_nothing(mlp, tmp_path, capsys):
    path, _ = mlp
    x = np.random.default_rng(0).standard_normal((3000, MLP_WIDTH)).astype(np.float32)
    x[2345, 17] = np.nan
    np.save(tmp_path / "bad.npy", x)
    out = tmp_path / "out.npz"
    out.write_bytes(b"an older file")
    code, stdout, stderr = run_cli(capsys, "run", path, "--input", tmp_path / "bad.npy", "--output", out)
    assert code == 1
    assert (f"webnn run: error: BatchRunner: item 2345 of input 'x' is not finite (nan at [17]); --allow-non-finite "
            f"runs it; nothing was written to {out}") in stderr
    assert out.read_bytes() == b"an older file"
    assert not [f for f in os.listdir(tmp_path) if f.endswith(".partial")]
    code, stdout, stderr = run_cli(capsys, "run", path, "--input", tmp_path / "bad.npy", "--output", out,
                                   "--allow-non-finite")
    assert code == 0, stderr
    with np.load(out) as saved:
        assert np.isnan(saved["y"][2345]).all() and np.isfinite(np.delete(saved["y"], 2345, axis=0)).all()


def test_ctrl_c_leaves_a_message_and_no_file(mlp, tmp_path):
    import signal

    path, _ = mlp
    np.save(tmp_path / "big.npy", np.random.default_rng(0).standard_normal((400000, MLP_WIDTH)).astype(np.float32))
    out = tmp_path / "out.npz"
    process = subprocess.Popen(
        [sys.executable, "-m", "webnn.cli", "run", str(path), "--input", str(tmp_path / "big.npy"), "--batch-size",
         "1", "--output", str(out)], stderr=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
        env={**os.environ, "WEBNN_PROGRESS_AFTER": "0", "PYTHONUNBUFFERED": "1"},
        # As from a terminal: a shell's background job (CI started with `&`) ignores SIGINT, and a
        # child inherits that; Python only installs its Ctrl-C handler over the default action.
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    line = process.stderr.readline()
    while line and not line.startswith("progress:"):
        line = process.stderr.readline()
    process.send_signal(signal.SIGINT)
    _, stderr = process.communicate(timeout=120)
    assert process.returncode == 130, stderr
    assert "webnn run: interrupted after " in stderr and f"of 400000 items; nothing was written to {out}" in stderr
    assert not out.exists() and not [f for f in os.listdir(tmp_path) if f.endswith(".partial")]


def test_run_a_data_set_from_npz_with_two_inputs(tmp_path, capsys):
    (tmp_path / "two.webnn").write_text("""\
webnn_graph "two" v1 {
  inputs { a: f32[dyn("batch", 100), 3]; b: i32[dyn("batch", 100), 2]; }
  consts { two: f32[] @scalar(2.0); }
  nodes { y = mul(a, two); z = add(b, b); }
  outputs { y; z; }
}
""")
    a = np.random.default_rng(1).standard_normal((37, 3)).astype(np.float32)
    b = np.arange(74, dtype=np.int64).reshape(37, 2)  # int64 that fits: converted
    np.savez(tmp_path / "data.npz", a=a, b=b)
    code, stdout, stderr = run_cli(capsys, "run", tmp_path / "two.webnn", "--input", tmp_path / "data.npz",
                                   "--batch-size", 8, "--workers", 2, "--threads", 1, "--output", tmp_path / "o.npz")
    assert code == 0, stderr
    assert "37 items, batch 8, 2 worker(s) x 1 thread(s)" in stderr
    with np.load(tmp_path / "o.npz") as saved:
        np.testing.assert_array_equal(saved["y"], a * 2)
        np.testing.assert_array_equal(saved["z"], (b * 2).astype(np.int32))
    np.savez(tmp_path / "wrong.npz", a=a)
    code, _, stderr = run_cli(capsys, "run", tmp_path / "two.webnn", "--input", tmp_path / "wrong.npz", "--output",
                              tmp_path / "o.npz")
    assert code == 1 and "the model's inputs are ['a', 'b'], the file has ['a']" in stderr
    np.save(tmp_path / "a.npy", a)
    np.save(tmp_path / "b.npy", b[:30])
    code, _, stderr = run_cli(capsys, "run", tmp_path / "two.webnn", "--input", f"a={tmp_path / 'a.npy'}", "--input",
                              f"b={tmp_path / 'b.npy'}", "--output", tmp_path / "o.npz")
    assert code == 1 and "the same number of items" in stderr


@pytest.mark.parametrize("extra, message", [
    (["--output", "out.npy"], "written as one .npz file"),
    (["--batch-size", "0"], "--batch-size must be at least 1"),
    (["--batch-size", "4", "--output-dir", "d"], "--output-dir is for a single run"),
])
def test_data_set_mistakes_print_one_line(mlp, tmp_path, capsys, extra, message):
    path, _ = mlp
    np.save(tmp_path / "data.npy", np.zeros((4, MLP_WIDTH), np.float32))
    code, _, stderr = run_cli(capsys, "run", path, "--input", tmp_path / "data.npy", *extra)
    assert code == 1 and message in stderr and len(stderr.strip().splitlines()) == 1


def test_run_a_data_set_through_an_onnx_model(tmp_path, capsys):
    weight = _tiny_onnx(tmp_path / "tiny.onnx")
    x = np.random.default_rng(2).standard_normal((50, 4)).astype(np.float32)
    np.save(tmp_path / "x.npy", x)
    code, _, stderr = run_cli(capsys, "run", tmp_path / "tiny.onnx", "--input", tmp_path / "x.npy", "--batch-size",
                              7, "--output", tmp_path / "y.npz")
    assert code == 0, stderr
    with np.load(tmp_path / "y.npz") as saved:
        np.testing.assert_allclose(saved["y"], np.maximum(x @ weight, 0), rtol=1e-5, atol=1e-5)
