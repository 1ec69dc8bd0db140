"""What a new user meets first (issue 14): the version flags, `python -m webnn`, `webnn info --ops`,
`webnn.onnx` after `import webnn`, errors printed as webnn.DataError, dispatch errors that name the
inputs, and CLI messages in the CLI's own flags for ONNX models with free dimensions."""
import subprocess
import sys

import numpy as np
import pytest

import webnn
from webnn import cli


def run_cli(capsys, *argv):
    code = cli.main(list(map(str, argv)))
    out, err = capsys.readouterr()
    return code, out, err


def test_version_flag_and_module_entry_point(capsys):
    with pytest.raises(SystemExit) as stop:
        cli.main(["--version"])
    assert stop.value.code == 0
    assert capsys.readouterr().out.strip() == f"webnn {webnn.__version__}"
    done = subprocess.run([sys.executable, "-m", "webnn", "--version"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and done.stdout.strip() == f"webnn {webnn.__version__}", done.stderr


def test_info_lists_ops_with_types_and_ranks(capsys):
    code, out, _ = run_cli(capsys, "info", "--ops")
    assert code == 0
    lines = {line.split()[0]: line for line in out.splitlines() if line.startswith("  ")}
    assert "input: float32|float16 rank 4;" in lines["conv2d"]
    assert "a: float32|float16|int32|uint32|int64|uint64|int8|uint8 rank 0-8;" in lines["add"]
    assert len(lines) >= 90


def test_onnx_after_import_webnn_alone():
    code = "import webnn, sys; assert 'onnx' not in sys.modules; print(callable(webnn.onnx.load))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and done.stdout.strip() == "True", done.stderr
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        webnn.nope  # noqa: B018


def test_errors_print_as_webnn_names():
    assert repr(webnn.DataError("x")) == "DataError('x')"
    for cls in (webnn.MLError, webnn.DataError, webnn.InvalidStateError, webnn.NotSupportedError,
                webnn.OperationError, webnn.UnknownError):
        assert cls.__module__ == "webnn" and getattr(webnn, cls.__name__) is cls
    done = subprocess.run([sys.executable, "-c", "import webnn; raise webnn.DataError('bad file')"],
                          capture_output=True, text=True, timeout=120)
    assert "webnn.DataError: bad file" in done.stderr


def test_dispatch_names_missing_and_unknown_inputs(context):
    b = webnn.MLGraphBuilder(context)
    x = b.input("x", data_type="float32", shape=[2])
    y = b.input("y", data_type="float32", shape=[2])
    graph = b.build({"z": b.add(x, y)})
    t = context.create_tensor(data_type="float32", shape=[2], writable=True)
    u = context.create_tensor(data_type="float32", shape=[2], writable=True)
    out = context.create_tensor(data_type="float32", shape=[2], readable=True)
    with pytest.raises(TypeError, match=r"the graph has 2 inputs but 1 was given: missing 'y'$"):
        context.dispatch(graph, {"x": t}, {"z": out})
    with pytest.raises(TypeError, match=r"but 3 were given: not the graph's 'w'"):
        v = context.create_tensor(data_type="float32", shape=[2], writable=True)
        context.dispatch(graph, {"x": t, "y": u, "w": v}, {"z": out})


# ---------------------------------------------------------------- ONNX models with free dimensions
onnx = pytest.importorskip("onnx")


@pytest.fixture
def free_model(tmp_path):
    from onnx import TensorProto, helper
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 3, None])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 3, None])
    graph = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "g", [x], [y])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    path = tmp_path / "free.onnx"
    onnx.save(model, path)
    return path


def test_cli_runs_free_dimensions_at_the_input_files_shape(capsys, free_model, tmp_path):
    data = tmp_path / "x.npy"
    np.save(data, np.linspace(-1, 1, 2 * 3 * 5, dtype=np.float32).reshape(2, 3, 5))
    code, out, err = run_cli(capsys, "run", free_model, "--input", f"x={data}")
    assert code == 0, err
    assert "output y: float32 [2, 3, 5]" in out and "note:" not in err
    code, out, err = run_cli(capsys, "run", free_model)
    assert code == 0, err
    assert "note: dynamic dimension 'batch' of input 'x' set to 1 (use --dim batch=N)" in err
    assert "note: dynamic dimension 'x[2]' of input 'x' set to 1 (use --dim x[2]=N)" in err
    code, out, err = run_cli(capsys, "run", free_model, "--dim", "batch=4", "--dim", "x[2]=7")
    assert code == 0 and "output y: float32 [4, 3, 7]" in out, err


def test_cli_errors_name_cli_flags(capsys, free_model):
    code, _, err = run_cli(capsys, "run", free_model, "--dim", "typo=3")
    assert code == 1 and "--dim names unknown dimension(s) ['typo']" in err and "override_dims" not in err
    code, _, err = run_cli(capsys, "convert", free_model, "-o", "/tmp/never.webnn")
    assert code == 1 and "'x'[2] (unnamed: 'x[2]')" in err and "--override-dim NAME=N" in err, err
    assert "override_dims" not in err and "input_shapes" not in err, err
