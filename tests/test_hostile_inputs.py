"""Reproducers of what hostile use found (issue "Trust"): each must end in a documented
exception (TypeError, or a webnn.MLError subclass), never a crash, a leak or an undocumented one."""
import sys

import numpy as np
import pytest

import webnn


@pytest.fixture
def x(builder):
    return builder.input("x", data_type="float32", shape=[2, 3])


def test_an_array_holding_itself_is_a_type_error(builder, x):
    cyclic = np.empty((), dtype=object)
    cyclic[()] = cyclic  # tolist() returns the array itself
    with pytest.raises(TypeError, match=r"\[t\] transpose: permutation: an array holding arrays"):
        builder.transpose(x, permutation=cyclic, label="t")
    nested = np.empty((), dtype=object)
    nested[()] = np.array([1, 0])
    with pytest.raises(TypeError, match="permutation"):
        builder.transpose(x, permutation=nested)


def test_shape_dimensions_are_not_leaked(context):
    dim = 10**5 + 7  # an int object of its own, not a cached small int
    before = sys.getrefcount(dim)
    for _ in range(50):
        context.create_tensor(data_type="uint8", shape=[1, dim], readable=True).destroy()
    builder = webnn.MLGraphBuilder(context)
    for i in range(50):
        builder.input(f"x{i}", data_type="uint8", shape=[dim])
    assert sys.getrefcount(dim) == before


def test_integers_beyond_64_bits_saturate(builder, x):
    huge = 2**2000
    with pytest.raises(TypeError, match=r"\[r\] reshape"):
        builder.reshape(x, [huge, 1], label="r")
    y = builder.clamp(x, min_value=-huge, max_value=huge)
    big = builder.constant("int64", huge)
    small = builder.constant("int64", -huge)
    out = builder.build({"y": y, "big": builder.identity(big), "small": builder.identity(small)}).compute({"x": np.full((2, 3), -3, np.float32)})
    np.testing.assert_array_equal(out["y"], np.full((2, 3), -3, np.float32))
    assert int(out["big"]) == 2**63 - 1 and int(out["small"]) == -(2**63)


class RaisingIndex:
    def __index__(self):
        raise ValueError("no index here")


class RaisingIter:
    def __iter__(self):
        raise RuntimeError("no iteration here")


def test_failing_python_protocols_are_type_errors(builder, x):
    with pytest.raises(TypeError, match=r"\[t\] transpose: permutation: .*could not be read as an integer"):
        builder.transpose(x, permutation=[1, RaisingIndex()], label="t")
    with pytest.raises(TypeError, match=r"\[t\] transpose: permutation: .*could not be read"):
        builder.transpose(x, permutation=RaisingIter(), label="t")
    with pytest.raises(TypeError, match=r"\[c\] clamp: minValue: .*could not be read as an integer"):
        builder.clamp(x, min_value=RaisingIndex(), label="c")
    with pytest.raises(TypeError):
        builder.constant("float32", RaisingIndex())


LONE = "\ud800"


def test_lone_surrogates_are_type_errors(context, builder, x):
    with pytest.raises(TypeError, match=r"\[r\] resample2d: mode: .*lone surrogate"):
        builder.resample2d(builder.input("img", data_type="float32", shape=[1, 1, 2, 2]), mode=LONE, label="r")
    with pytest.raises(TypeError, match="build: an output name .*lone surrogate"):
        builder.build({LONE: builder.relu(x)})
    with pytest.raises(TypeError):
        builder.input(LONE, data_type="float32", shape=[1])
    graph = webnn.MLGraphBuilder(context)
    a = graph.input("a", data_type="float32", shape=[2])
    g = graph.build({"b": graph.relu(a)})
    t_in = context.create_tensor(data_type="float32", shape=[2], writable=True)
    t_out = context.create_tensor(data_type="float32", shape=[2], readable=True)
    with pytest.raises(TypeError, match="dispatch: an input name .*lone surrogate"):
        context.dispatch(g, {LONE: t_in}, {"b": t_out})
    with pytest.raises(TypeError, match="dispatch: an output name .*lone surrogate"):
        context.dispatch(g, {"a": t_in}, {LONE: t_out})
    with pytest.raises(TypeError):
        builder.relu(x, label=LONE)


def test_a_long_chain_builds_with_a_small_arena(context):
    """Beyond the greedy planner's limit the time-ordered planner reuses two buffers."""
    builder = webnn.MLGraphBuilder(context)
    x = builder.input("x", data_type="float32", shape=[256])
    y = x
    for _ in range(6000):
        y = builder.neg(y)
    graph = builder.build({"y": y})
    arena = webnn._core.plan_arena_bytes(graph)
    assert 0 < arena <= 3 * 1024, arena
    data = np.arange(256, dtype=np.float32)
    np.testing.assert_array_equal(graph.compute({"x": data})["y"], data)  # an even number of negations


def test_arena_planners_agree_on_results(context):
    """A wide graph (many values live at once) beyond the greedy limit: values must not overlap."""
    builder = webnn.MLGraphBuilder(context)
    x = builder.input("x", data_type="float32", shape=[8])
    branches = [builder.add(x, builder.constant(np.full(8, i, np.float32))) for i in range(2100)]
    total = branches[0]
    for b in branches[1:]:
        total = builder.add(total, b)
    graph = builder.build({"y": total})
    data = np.arange(8, dtype=np.float32)
    expected = 2100 * data + sum(range(2100))
    np.testing.assert_allclose(graph.compute({"x": data})["y"], expected, rtol=1e-6)


onnx = pytest.importorskip("onnx")


def test_onnx_load_accepts_serialized_bytes_and_rejects_garbage(context, tmp_path):
    import webnn.onnx
    from onnx import TensorProto, helper

    node = helper.make_node("Relu", ["x"], ["y"])
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    data = model.SerializeToString()
    out = webnn.onnx.load(data, context).compute({"x": np.array([-1, 0, 2], np.float32)})["y"]
    np.testing.assert_array_equal(out, [0, 0, 2])
    with pytest.raises(webnn.DataError, match="not a valid ONNX model"):
        webnn.onnx.load(b"\xff\xfe garbage bytes", context)
    bad = tmp_path / "bad.onnx"
    bad.write_bytes(data[: len(data) // 2] + b"\xff" * 7)
    with pytest.raises(webnn.DataError, match="bad.onnx"):
        webnn.onnx.load(bad, context)
