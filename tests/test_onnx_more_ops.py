"""webnn.onnx's mappings of Einsum, OneHot, Mod, LRN, If, DynamicQuantizeLinear, MatMulInteger,
ConvInteger and ONNX Runtime's com.microsoft contrib ops (FusedConv, Gelu, FastGelu, BiasGelu,
QuickGelu, SkipLayerNormalization), compared with ONNX Runtime (NumPy where ONNX Runtime lacks the
case), a model quantized by onnxruntime.quantization.quantize_dynamic end to end, and the cases the
importer refuses (NotSupportedError naming the node). Integer and quantized results are checked
against exact NumPy references, and against ONNX Runtime only where its kernels are exact on the
inputs on every CPU (ort_exact).
"""
import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

import webnn  # noqa: E402
import webnn.onnx  # noqa: E402
from onnx import helper, numpy_helper  # noqa: E402

MS = "com.microsoft"
RNG = np.random.default_rng(7)


@pytest.fixture(scope="module")
def ctx():
    return webnn.create_context()


def make_model(nodes, inputs, outputs, initializers=(), opset=17, contrib=False):
    """inputs: {name: array} (graph inputs typed from the arrays); outputs: names (types inferred by
    ONNX Runtime, left undefined here); initializers: {name: array}."""
    def info(name, array):
        return helper.make_tensor_value_info(name, helper.np_dtype_to_tensor_dtype(array.dtype), list(array.shape))

    graph = helper.make_graph(nodes, "g", [info(n, a) for n, a in inputs.items()],
                              [helper.make_empty_tensor_value_info(n) for n in outputs],
                              [numpy_helper.from_array(np.asarray(a), n) for n, a in dict(initializers).items()])
    imports = [helper.make_opsetid("", opset)] + ([helper.make_opsetid(MS, 1)] if contrib else [])
    model = helper.make_model(graph, opset_imports=imports)
    model.ir_version = 8  # what opset 17 needs: the ONNX Runtime of Python 3.9 reads IR versions up to 10
    return model


def run_ort(model, feeds):
    try:
        session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    except ort.capi.onnxruntime_pybind11_state.NotImplemented as e:  # ConvInteger's int8 inputs in 1.19
        pytest.skip(f"this ONNX Runtime ({ort.__version__}) has no kernel for the reference: {e}")
    names = [o.name for o in session.get_outputs()]
    return dict(zip(names, session.run(None, feeds)))


def run_webnn(ctx, model, feeds):
    graph = webnn.onnx.load(model, ctx)
    return graph.compute({k: v.astype(np.uint8) if v.dtype == np.bool_ else v for k, v in feeds.items()
                          if k in graph.input_descriptors})


def check(ctx, model, feeds, expected=None, rtol=1e-5, atol=1e-5):
    """Compares webnn.onnx with ONNX Runtime (or with ``expected``); integers exactly."""
    if expected is None:
        expected = run_ort(model, feeds)
    actual = run_webnn(ctx, model, feeds)
    for name, want in expected.items():
        want = np.asarray(want)
        got = actual[name]
        assert list(got.shape) == list(want.shape), f"{name}: shape {got.shape} != {want.shape}"
        if want.dtype.kind == "f":
            np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, err_msg=name)
        elif want.dtype == np.bool_:
            np.testing.assert_array_equal(got, want.astype(got.dtype), err_msg=name)
        else:
            assert got.dtype == want.dtype, f"{name}: {got.dtype} != {want.dtype}"
            np.testing.assert_array_equal(got, want, err_msg=name)
    return actual


def refused(ctx, model, *fragments):
    with pytest.raises(webnn.NotSupportedError) as info:
        webnn.onnx.load(model, ctx)
    message = str(info.value)
    for fragment in fragments:
        assert fragment in message, message
    return message


def floats(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


# ---------------------------------------------------------------- Einsum
EINSUM_CASES = [
    ("bij,bjk->bik", [(5, 2, 3), (5, 3, 4)]),
    ("bij, bjk -> bik", [(2, 2, 3), (2, 3, 4)]),      # spaces, as in the ONNX node test
    ("->", [()]),                                   # a scalar
    ("i->", [(5,)]),
    ("bhqd,bhkd->bhqk", [(2, 3, 4, 8), (2, 3, 5, 8)]),
    ("ij->ji", [(3, 4)]),
    ("ij->i", [(3, 4)]),
    ("ij->", [(3, 4)]),
    ("ij", [(3, 4)]),                               # implicit: the identity
    ("ji", [(3, 4)]),                               # implicit: a transpose (output labels sorted)
    ("i,j->ij", [(3,), (4,)]),
    ("ij,ij->ij", [(3, 4), (3, 4)]),
    ("i,i", [(5,), (5,)]),                          # implicit inner product
    ("ij,jk", [(3, 4), (4, 2)]),
    ("ij,kj->ik", [(3, 4), (2, 4)]),
    ("...ij,...jk->...ik", [(2, 3, 4), (2, 4, 5)]),
    ("...ij,jk->...ik", [(2, 3, 3, 4), (4, 5)]),    # ellipsis broadcast over one operand
    ("b...d,b...d->b...", [(2, 3, 4), (2, 3, 4)]),
    ("...ii->...i", [(3, 5, 5)]),                   # batch diagonal
    ("ii->i", [(4, 4)]),
    ("ii", [(4, 4)]),                               # trace
    ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 5)]),
    ("bn,anm,bm->ba", [(2, 3), (4, 3, 5), (2, 5)]),
    ("Ab,bC->CA", [(2, 3), (3, 4)]),
    ("...ij,...jk->...ik", [(1, 2, 3), (4, 3, 2)]),  # broadcast batch dims
    ("ij,j->i", [(3, 1), (4,)]),                    # a summed label one side broadcasts
]


@pytest.mark.parametrize("equation, shapes", EINSUM_CASES, ids=[c[0] for c in EINSUM_CASES])
def test_einsum(ctx, equation, shapes):
    feeds = {f"x{i}": floats(*shape) for i, shape in enumerate(shapes)}
    model = make_model([helper.make_node("Einsum", list(feeds), ["y"], equation=equation)], feeds, ["y"], opset=12)
    if equation in ("ij,j->i",):  # ONNX Runtime rejects broadcast labels; NumPy defines them
        expected = {"y": np.einsum(equation, *feeds.values())}
    else:
        expected = None
    check(ctx, model, feeds, expected, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("equation, shapes", [("ij,jk->ik", [(3, 4), (4, 5)]), ("bi,bi->b", [(3, 4), (3, 4)]),
                                              ("ij->j", [(3, 4)])])
def test_einsum_int32(ctx, equation, shapes):
    feeds = {f"x{i}": RNG.integers(-1000, 1000, shape).astype(np.int32) for i, shape in enumerate(shapes)}
    model = make_model([helper.make_node("Einsum", list(feeds), ["y"], equation=equation)], feeds, ["y"], opset=12)
    check(ctx, model, feeds, {"y": np.einsum(equation, *feeds.values())})
    check(ctx, model, feeds)


def test_einsum_constant_operand(ctx):
    feeds = {"x": floats(2, 3, 4)}
    model = make_model([helper.make_node("Einsum", ["x", "w"], ["y"], equation="bsi,oi->bso")], feeds, ["y"],
                       {"w": floats(5, 4)}, opset=12)
    check(ctx, model, feeds, rtol=1e-4)


# ---------------------------------------------------------------- OneHot
def _one_hot(indices, depth, values):
    """ONNX OneHot (axis -1) in NumPy: negative indices count from depth, out-of-range ones are all off."""
    indices = indices.astype(np.int64)
    indices = np.where(indices < 0, indices + int(depth), indices)
    return np.where(indices[..., None] == np.arange(int(depth)), values[1], values[0])


@pytest.mark.parametrize("axis", [0, 1, -1, -2, -3])
def test_one_hot_axes_and_negative_indices(ctx, axis):
    indices = np.array([[0, -1, 3], [-4, 2, 9]], np.int64)  # 9 and -6 would be out of range for depth 4
    feeds = {"i": indices}
    model = make_model([helper.make_node("OneHot", ["i", "d", "v"], ["y"], axis=axis)], feeds, ["y"],
                       {"d": np.array(4, np.float32), "v": np.array([-2.0, 5.0], np.float32)}, opset=11)
    check(ctx, model, feeds)


@pytest.mark.parametrize("index_type, depth_type, value_type", [
    (np.int32, np.float32, np.float32), (np.int64, np.int64, np.int64), (np.int64, np.float32, np.int32),
    (np.float32, np.float32, np.float32), (np.int64, np.int32, np.float32)])
def test_one_hot_types(ctx, index_type, depth_type, value_type):
    feeds = {"i": np.array([3, -1, 0, -5, 4, 7, -6], index_type)}
    depth, values = np.array(5, depth_type), np.array([1, 7], value_type)
    model = make_model([helper.make_node("OneHot", ["i", "d", "v"], ["y"])], feeds, ["y"],
                       {"d": depth, "v": values}, opset=11)
    check(ctx, model, feeds, {"y": _one_hot(feeds["i"], depth, values)})
    check(ctx, model, feeds)


def test_one_hot_runtime_values(ctx):
    feeds = {"i": np.array([1, -2, 0], np.int64), "v": np.array([0.5, 9.0], np.float32)}
    model = make_model([helper.make_node("OneHot", ["i", "d", "v"], ["y"], axis=0)], feeds, ["y"],
                       {"d": np.array(3, np.int64)}, opset=11)
    check(ctx, model, feeds)


# ---------------------------------------------------------------- Mod
MOD_A = [7, -7, 7, -7, 0, 13, -13, 5, -1, 6]
MOD_B = [2, 2, -2, -2, 3, 5, 5, -3, 4, -4]


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.int8])
@pytest.mark.parametrize("fmod", [0, 1])
def test_mod_integers(ctx, dtype, fmod):
    feeds = {"a": np.array(MOD_A, dtype), "b": np.array(MOD_B, dtype)}
    model = make_model([helper.make_node("Mod", ["a", "b"], ["y"], fmod=fmod)], feeds, ["y"], opset=13)
    actual = check(ctx, model, feeds)
    expected = np.fmod(feeds["a"], feeds["b"]) if fmod else np.mod(feeds["a"], feeds["b"])
    np.testing.assert_array_equal(actual["y"], expected)


def test_mod_broadcast_uint8(ctx):
    feeds = {"a": np.arange(0, 238, 7, dtype=np.uint8).reshape(2, -1)}
    model = make_model([helper.make_node("Mod", ["a", "b"], ["y"])], feeds, ["y"],
                       {"b": np.array([9], np.uint8)}, opset=13)
    check(ctx, model, feeds, {"y": feeds["a"] % np.uint8(9)})
    check(ctx, model, feeds)


@pytest.mark.parametrize("fmod", [0, 1])
def test_mod_float32(ctx, fmod):
    a = np.array(MOD_A + [5.5, -5.5, 0.25, -7.75, 3.0, -3.0, 1.0, -1.0], np.float32)
    b = np.array(MOD_B + [2.0, 2.0, -0.1, 1.5, np.inf, np.inf, -np.inf, -np.inf], np.float32)
    feeds = {"a": a, "b": b}
    model = make_model([helper.make_node("Mod", ["a", "b"], ["y"], fmod=fmod)], feeds, ["y"], opset=13)
    expected = np.fmod(a, b) if fmod else np.mod(a, b)
    actual = check(ctx, model, feeds, {"y": expected}, rtol=1e-6, atol=1e-6)
    np.testing.assert_array_equal(np.signbit(actual["y"]), np.signbit(expected))  # signed zeros too
    if fmod:  # ONNX Runtime computes float Mod with fmod=1 only
        check(ctx, model, feeds, rtol=1e-6, atol=1e-6)


# ---------------------------------------------------------------- LRN
def _lrn_reference(x, size, alpha=1e-4, beta=0.75, bias=1.0):
    squares = np.square(x.astype(np.float64))
    sums = np.zeros_like(squares)
    channels = x.shape[1]
    for c in range(channels):
        low, high = max(0, c - (size - 1) // 2), min(channels - 1, c + -(-(size - 1) // 2))
        sums[:, c] = squares[:, low:high + 1].sum(axis=1)
    return (x / (bias + alpha / size * sums) ** beta).astype(np.float32)


@pytest.mark.parametrize("size, attrs", [(3, {}), (5, {"alpha": 0.01, "beta": 0.5, "bias": 2.0}), (4, {"beta": 1.0}),
                                         (9, {"alpha": 0.5})])
def test_lrn(ctx, size, attrs):
    feeds = {"x": floats(2, 7, 3, 4)}
    model = make_model([helper.make_node("LRN", ["x"], ["y"], size=size, **attrs)], feeds, ["y"], opset=13)
    if size % 2:  # ONNX Runtime takes odd sizes only
        check(ctx, model, feeds, rtol=1e-5)
    check(ctx, model, feeds, {"y": _lrn_reference(feeds["x"], size, **attrs)}, rtol=1e-5)


# ---------------------------------------------------------------- If
def _if_model(condition_as_input, then_shape=(2, 3)):
    """y = If(c) then x * w + k else x - outer, both branches reading outer-scope values (a graph
    input, an initializer and an outer node's output) and the then branch its own initializer."""
    then_branch = helper.make_graph(
        [helper.make_node("Mul", ["x", "w"], ["t0"]), helper.make_node("Add", ["t0", "k"], ["t1"]),
         helper.make_node("Reshape", ["t1", "shape"], ["then_out"])], "then", [],
        [helper.make_empty_tensor_value_info("then_out")],
        [numpy_helper.from_array(np.array(0.5, np.float32), "k"),
         numpy_helper.from_array(np.array(then_shape, np.int64), "shape")])
    else_branch = helper.make_graph([helper.make_node("Sub", ["x", "outer"], ["else_out"])], "else", [],
                                    [helper.make_empty_tensor_value_info("else_out")])
    nodes = [helper.make_node("Relu", ["x"], ["outer"]),
             helper.make_node("If", ["c"], ["y"], name="choose", then_branch=then_branch, else_branch=else_branch)]
    feeds = {"x": floats(2, 3)}
    initializers = {"w": floats(3)}
    if condition_as_input:
        feeds["c"] = np.array(True)
    return nodes, feeds, initializers


@pytest.mark.parametrize("condition", [True, False])
def test_if_constant_condition(ctx, condition):
    nodes, feeds, initializers = _if_model(False)
    model = make_model(nodes, feeds, ["y"], dict(initializers, c=np.array(condition)), opset=13)
    check(ctx, model, feeds)


@pytest.mark.parametrize("condition", [True, False])
def test_if_runtime_condition_selects(ctx, condition):
    nodes, feeds, initializers = _if_model(True)
    feeds["c"] = np.array(condition)
    model = make_model(nodes, feeds, ["y"], initializers, opset=13)
    check(ctx, model, feeds)


def test_if_runtime_condition_with_different_shapes_is_refused(ctx):
    nodes, feeds, initializers = _if_model(True, then_shape=(3, 2))
    model = make_model(nodes, feeds, ["y"], initializers, opset=13)
    refused(ctx, model, "ONNX node 'choose' (If)", "differs between the branches")


# ---------------------------------------------------------------- DynamicQuantizeLinear
def _dynamic_quantize(x):
    """ONNX DynamicQuantizeLinear in float32 NumPy: (y, scale, zero point)."""
    low, high = np.float32(min(x.min(), 0)), np.float32(max(x.max(), 0))
    scale = np.float32(1) if high == low else (high - low) / np.float32(255)
    zero_point = np.clip(np.rint(-low / scale), 0, 255)
    return np.clip(np.rint(x / scale) + zero_point, 0, 255).astype(np.uint8), scale, zero_point.astype(np.uint8)


@pytest.mark.parametrize("values", [
    RNG.standard_normal((3, 4)).astype(np.float32) * 3,
    np.abs(RNG.standard_normal((2, 5))).astype(np.float32),       # all positive: min widened to 0
    -np.abs(RNG.standard_normal((6,))).astype(np.float32),        # all negative: zero point 255
    np.zeros((2, 2), np.float32),                                 # scale 1, as in ONNX Runtime
    np.array([-1.0, 0.5, 2.0, 3.0, 1.53, -0.47], np.float32),
])
def test_dynamic_quantize_linear(ctx, values):
    feeds = {"x": values}
    outputs = ["y", "scale", "zero_point"]
    model = make_model([helper.make_node("DynamicQuantizeLinear", ["x"], outputs)], feeds, outputs, opset=11)
    check(ctx, model, feeds, dict(zip(outputs, _dynamic_quantize(values))), rtol=0, atol=0)
    check(ctx, model, feeds, rtol=1e-7, atol=0)


# ---------------------------------------------------------------- MatMulInteger
def _ints(dtype, shape, low=None, high=None):
    info = np.iinfo(dtype)
    return RNG.integers(info.min if low is None else low, (info.max if high is None else high) + 1, shape).astype(dtype)


def ort_exact(a, b):
    """Whether ONNX Runtime's integer products (MatMulInteger, ConvInteger) are exact on every CPU for
    operands a and b (raw uint8 / int8 values: MLAS applies the zero points after). Its u8 x s8 kernel
    for AVX2 and AVX-512 without VNNI (vpmaddubsw) adds pairs of products in int16 with saturation,
    so it is wrong once 2 * max|a| * max|b| passes 32767 (issue 33: 11,468,450 for 22,669,245 on a
    Zen 3); the u8 x u8 and s8 x s8 paths are held to the same bound, to be safe."""
    return 2 * int(np.abs(np.asarray(a, np.int64)).max()) * int(np.abs(np.asarray(b, np.int64)).max()) <= 32767


MATMUL_INTEGER_CASES = {
    "uint8 x uint8": (np.uint8, (3, 4), np.uint8, (4, 5), None, None, False),
    "uint8 x int8 with zero points": (np.uint8, (3, 4), np.int8, (4, 5), np.uint8(131), np.int8(-3), False),
    "int8 x int8 per-column": (np.int8, (3, 4), np.int8, (4, 5), np.int8(-7), np.array([0, 1, -1, 2, 5], np.int8),
                               True),
    "int8 x int8 per-row and per-column": (np.int8, (3, 4), np.int8, (4, 5), np.array([1, -2, 3], np.int8),
                                           np.array([0, 1, -1, 2, 5], np.int8), False),
    "batched A, constant B": (np.uint8, (2, 3, 6), np.int8, (6, 4), np.uint8(7), None, True),
    "1-D A": (np.uint8, (6,), np.uint8, (6, 3), np.uint8(4), np.uint8(200), False),
    "K=700, split for exactness": (np.uint8, (2, 700), np.uint8, (700, 3), None, None, False),
    "K=700 constant extremes": (np.uint8, (2, 700), np.int8, (700, 3), np.uint8(0), np.int8(0), True),
    "K=700 runtime extremes": (np.uint8, (2, 700), np.int8, (700, 3), None, None, False),
    "uint8 x int8 small values": (np.uint8, (2, 3, 40), np.int8, (40, 5), np.uint8(60), np.int8(-3), True),
    "uint8 x uint8 small values": (np.uint8, (3, 33), np.uint8, (33, 4), None, np.uint8(90), False),
}


@pytest.mark.parametrize("case", MATMUL_INTEGER_CASES, ids=list(MATMUL_INTEGER_CASES))
def test_matmul_integer(ctx, case):
    a_type, a_shape, b_type, b_shape, a_zero, b_zero, b_constant = MATMUL_INTEGER_CASES[case]
    a = _ints(a_type, a_shape)
    b = _ints(b_type, b_shape)
    if "extremes" in case:  # odd sums beyond 2^24: a single float32 product would round them
        a[:] = 255
        b[:] = 127
        b[0] = 126
    if "small" in case:  # within ort_exact's bound, so ONNX Runtime checks these too
        a, b = a // 2, b // 2
    feeds, initializers = {"a": a}, {}
    (initializers if b_constant else feeds)["b"] = b
    inputs = ["a", "b"]
    for name, zero in (("a_zero", a_zero), ("b_zero", b_zero)):
        if zero is not None:
            initializers[name] = np.asarray(zero)
            inputs.append(name)
        elif name == "a_zero" and b_zero is not None:
            inputs.append("")
    model = make_model([helper.make_node("MatMulInteger", inputs, ["y"])], feeds, ["y"], initializers, opset=10)
    a64 = a.astype(np.int64) - (0 if a_zero is None else np.asarray(a_zero, np.int64).reshape(
        (-1, 1) if np.ndim(a_zero) == 1 else ()))
    b64 = b.astype(np.int64) - (0 if b_zero is None else np.asarray(b_zero, np.int64))
    check(ctx, model, feeds, {"y": (a64 @ b64).astype(np.int32)})
    if ort_exact(a, b) and "per-row" not in case:  # ONNX Runtime takes a per-tensor a_zero_point only
        check(ctx, model, feeds)


def test_matmul_integer_runtime_zero_points(ctx):
    feeds = {"a": _ints(np.uint8, (4, 300)), "b": _ints(np.uint8, (300, 2)), "az": np.array(9, np.uint8),
             "bz": np.array(250, np.uint8)}
    model = make_model([helper.make_node("MatMulInteger", ["a", "b", "az", "bz"], ["y"])], feeds, ["y"], opset=10)
    expected = (feeds["a"].astype(np.int64) - 9) @ (feeds["b"].astype(np.int64) - 250)
    check(ctx, model, feeds, {"y": expected.astype(np.int32)})
    feeds["a"] //= 2
    feeds["b"] //= 2  # within ort_exact's bound: ONNX Runtime checks the same graph on these
    assert ort_exact(feeds["a"], feeds["b"])
    check(ctx, model, feeds)


# ---------------------------------------------------------------- ConvInteger
CONV_INTEGER_CASES = {
    "no zero points": ({"auto_pad": "SAME_UPPER"}, np.uint8, (1, 2, 5, 5), np.uint8, (3, 2, 3, 3), None, None),
    "zero points, pads, strides": ({"pads": [1, 1, 1, 1], "strides": [2, 1]}, np.uint8, (2, 3, 6, 5), np.int8,
                                   (4, 3, 3, 2), np.uint8(128), np.int8(-2)),
    "1-D, dilations": ({"dilations": [2], "pads": [2, 1]}, np.int8, (1, 2, 9), np.int8,
                                 (2, 2, 3), np.int8(5), None),
    "groups": ({"group": 2, "pads": [0, 1, 1, 0]}, np.uint8, (1, 4, 4, 4), np.uint8, (6, 2, 2, 2), np.uint8(3),
               np.uint8(100)),
    "64 channels of extremes, split for exactness": ({"pads": [1, 1, 1, 1]}, np.uint8, (1, 64, 5, 5), np.int8,
                                                     (2, 64, 3, 3), np.uint8(0), np.int8(0)),
    "small values, SAME_LOWER, strides, groups": ({"auto_pad": "SAME_LOWER", "strides": [2, 2], "group": 2},
                                                  np.uint8, (2, 4, 6, 5), np.int8, (4, 2, 3, 2), np.uint8(100),
                                                  np.int8(5)),
}


def _conv_int64(x, w, auto_pad="NOTSET", pads=None, strides=None, dilations=None, group=1):
    """ONNX Conv of int64 x [N, C, *spatial] and w [M, C / group, *kernel], exactly: a sum over the
    kernel offsets of strided windows of the padded x."""
    rank, kernel = x.ndim - 2, w.shape[2:]
    strides, dilations = strides or [1] * rank, dilations or [1] * rank
    if auto_pad.startswith("SAME"):  # output size ceil(size / stride); the odd pad at the end for SAME_UPPER
        total = [max(0, (-(-size // s) - 1) * s + (k - 1) * d + 1 - size)
                 for size, k, s, d in zip(x.shape[2:], kernel, strides, dilations)]
        begins = [t // 2 if auto_pad == "SAME_UPPER" else t - t // 2 for t in total]
        pads = begins + [t - b for t, b in zip(total, begins)]
    pads = pads or [0] * 2 * rank
    x = np.pad(x, [(0, 0), (0, 0)] + list(zip(pads[:rank], pads[rank:])))
    out = [(size - (k - 1) * d - 1) // s + 1 for size, k, s, d in zip(x.shape[2:], kernel, strides, dilations)]
    x = x.reshape(x.shape[0], group, -1, *x.shape[2:])
    w = w.reshape(group, -1, *w.shape[1:])
    y = 0
    for offset in np.ndindex(*kernel):
        window = x[(...,) + tuple(slice(o * d, o * d + (n - 1) * s + 1, s)
                                  for o, d, n, s in zip(offset, dilations, out, strides))]
        y = y + np.einsum("ngc...,gmc->ngm...", window, w[(...,) + offset])
    return y.reshape(y.shape[0], -1, *out)


@pytest.mark.parametrize("case", CONV_INTEGER_CASES, ids=list(CONV_INTEGER_CASES))
def test_conv_integer(ctx, case):
    attrs, x_type, x_shape, w_type, w_shape, x_zero, w_zero = CONV_INTEGER_CASES[case]
    x, w = _ints(x_type, x_shape), _ints(w_type, w_shape)
    if "extremes" in case:  # odd sums beyond 2^24: a single float32 convolution would round them
        x[:] = 255
        w[:] = 127
        w[:, 0, 0, 0] = 126
    if "small" in case:  # within ort_exact's bound, so ONNX Runtime checks these too
        x, w = x // 2, w // 2
    feeds, initializers, inputs = {"x": x}, {"w": w}, ["x", "w"]
    if x_zero is not None or w_zero is not None:
        inputs.append("xz" if x_zero is not None else "")
        if x_zero is not None:
            initializers["xz"] = np.asarray(x_zero)
    if w_zero is not None:
        inputs.append("wz")
        initializers["wz"] = np.asarray(w_zero)
    model = make_model([helper.make_node("ConvInteger", inputs, ["y"], **attrs)], feeds, ["y"], initializers,
                       opset=10)
    expected = _conv_int64(x.astype(np.int64) - (x_zero or 0), w.astype(np.int64) - (w_zero or 0), **attrs)
    check(ctx, model, feeds, {"y": expected.astype(np.int32)})
    if ort_exact(x, w):
        check(ctx, model, feeds)


def test_conv_integer_runtime_weight_and_per_channel_zero_point(ctx):
    x, w = _ints(np.uint8, (1, 3, 5, 5)), _ints(np.uint8, (4, 3, 2, 2))
    feeds = {"x": x, "w": w}
    w_zero = np.array([1, 50, 128, 255], np.uint8)
    model = make_model([helper.make_node("ConvInteger", ["x", "w", "xz", "wz"], ["y"], pads=[1, 0, 0, 1])], feeds,
                       ["y"], {"xz": np.array(17, np.uint8), "wz": w_zero}, opset=10)
    expected = _conv_int64(x.astype(np.int64) - 17, w.astype(np.int64) - w_zero.astype(np.int64).reshape(4, 1, 1, 1),
                           pads=[1, 0, 0, 1])
    check(ctx, model, feeds, {"y": expected.astype(np.int32)})  # ONNX Runtime takes a per-tensor w_zero_point only


def test_conv_integer_groups_beyond_float32_exactness_is_refused(ctx):
    feeds = {"x": _ints(np.uint8, (1, 128, 4, 4))}
    model = make_model([helper.make_node("ConvInteger", ["x", "w"], ["y"], name="qconv", group=2)], feeds, ["y"],
                       {"w": np.full((2, 64, 3, 3), -128, np.int8)}, opset=10)
    refused(ctx, model, "ONNX node 'qconv' (ConvInteger)", "2^24")


# ---------------------------------------------------------------- a dynamically quantized model
def mlp_layers(sizes):
    """(nodes, initializers) of an MLP x -> y: MatMul + Add per layer, ReLU between."""
    nodes, initializers, previous = [], {}, "x"
    for i, (n_in, n_out) in enumerate(zip(sizes, sizes[1:])):
        initializers[f"w{i}"] = floats(n_in, n_out) / np.float32(np.sqrt(n_in))
        initializers[f"b{i}"] = floats(n_out)
        nodes += [helper.make_node("MatMul", [previous, f"w{i}"], [f"m{i}"]),
                  helper.make_node("Add", [f"m{i}", f"b{i}"], [f"a{i}"])]
        previous = f"a{i}"
        if i < len(sizes) - 2:
            nodes.append(helper.make_node("Relu", [previous], [f"r{i}"]))
            previous = f"r{i}"
    nodes.append(helper.make_node("Identity", [previous], ["y"]))
    return nodes, initializers


def quantize_mlp(float_model, tmp_path, **options):
    """float_model through onnxruntime.quantization.quantize_dynamic (options passed on)."""
    quantization = pytest.importorskip("onnxruntime.quantization")
    onnx.save(float_model, tmp_path / "mlp.onnx")
    quantization.quantize_dynamic(str(tmp_path / "mlp.onnx"), str(tmp_path / "mlp.quant.onnx"), **options)
    quantized = onnx.load(tmp_path / "mlp.quant.onnx")
    op_types = {n.op_type for n in quantized.graph.node}
    assert {"DynamicQuantizeLinear", "MatMulInteger"} <= op_types, op_types
    return quantized


def check_quantized(actual, model, feeds):
    """Checks output y of a quantize_dynamic model against onnx.reference (NumPy: exact integer
    products) and, where ort_exact holds for every MatMulInteger (A quantized at run time: any uint8,
    B an initializer), ONNX Runtime. Equal up to int8 rounding: an activation that lands on the other
    side of a rounding boundary moves by one quantization step. Returns the NumPy reference."""
    from onnx.reference import ReferenceEvaluator
    references = [ReferenceEvaluator(model).run(None, feeds)[0]]
    weights = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}
    if all(ort_exact(255, weights[n.input[1]]) for n in model.graph.node if n.op_type == "MatMulInteger"):
        references.append(run_ort(model, feeds)["y"])
    for expected in references:
        np.testing.assert_allclose(actual, expected, rtol=0, atol=0.01 * np.abs(expected).max())
    return references[0]


@pytest.mark.parametrize("reduce_range", [False, True])  # True: 7-bit weights, within ort_exact's bound
def test_quantize_dynamic_mlp(ctx, tmp_path, reduce_range):
    sizes = [16, 32, 24, 8]
    nodes, initializers = mlp_layers(sizes)
    feeds = {"x": floats(5, sizes[0])}
    float_model = make_model(nodes, feeds, ["y"], initializers, opset=17)
    quantized = quantize_mlp(float_model, tmp_path, reduce_range=reduce_range)
    actual = run_webnn(ctx, quantized, feeds)["y"]
    expected = check_quantized(actual, quantized, feeds)
    np.testing.assert_allclose(actual, run_ort(float_model, feeds)["y"], rtol=0, atol=0.1 * np.abs(expected).max())


# ---------------------------------------------------------------- com.microsoft contrib ops
FUSED_CONV_ACTIVATIONS = [("Relu", []), ("Tanh", []), ("Sigmoid", []), ("LeakyRelu", [0.2]), ("Clip", [-0.5, 0.7]),
                          ("HardSigmoid", [0.3, 0.4]), ("", [])]


@pytest.mark.parametrize("activation, params", FUSED_CONV_ACTIVATIONS, ids=[a or "none" for a, _ in FUSED_CONV_ACTIVATIONS])
def test_fused_conv(ctx, activation, params):
    feeds = {"x": floats(1, 3, 6, 6)}
    attrs = {"pads": [1, 1, 1, 1], "strides": [1, 1]}
    if activation:
        attrs["activation"] = activation
    if params:
        attrs["activation_params"] = params
    node = helper.make_node("FusedConv", ["x", "w", "b"], ["y"], domain=MS, **attrs)
    model = make_model([node], feeds, ["y"], {"w": floats(4, 3, 3, 3), "b": floats(4)}, contrib=True)
    check(ctx, model, feeds, rtol=1e-4, atol=1e-5)


def test_fused_conv_with_sum_input(ctx):
    feeds = {"x": floats(2, 2, 5, 5), "z": floats(2, 4, 3, 3)}
    node = helper.make_node("FusedConv", ["x", "w", "", "z"], ["y"], domain=MS, activation="Relu")
    model = make_model([node], feeds, ["y"], {"w": floats(4, 2, 3, 3)}, contrib=True)
    check(ctx, model, feeds, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("op, inputs, attrs", [
    ("Gelu", ["x"], {}), ("BiasGelu", ["x", "bias"], {}), ("FastGelu", ["x"], {}), ("FastGelu", ["x", "bias"], {}),
    ("QuickGelu", ["x"], {}), ("QuickGelu", ["x"], {"alpha": 1.25})],
    ids=["Gelu", "BiasGelu", "FastGelu", "FastGelu-bias", "QuickGelu", "QuickGelu-alpha"])
def test_gelu_family(ctx, op, inputs, attrs):
    feeds = {"x": floats(2, 3, 8) * 3}
    model = make_model([helper.make_node(op, inputs, ["y"], domain=MS, **attrs)], feeds, ["y"],
                       {"bias": floats(8)} if "bias" in inputs else {}, contrib=True)
    check(ctx, model, feeds, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("inputs, outputs, attrs", [
    (["x", "skip", "gamma"], ["y"], {}),
    (["x", "skip", "gamma", "beta"], ["y"], {"epsilon": 1e-5}),
    (["x", "skip", "gamma", "beta", "bias"], ["y", "", "", "sum"], {}),
    (["x", "skip", "gamma", "", "bias"], ["y", "mean", "inv_std", "sum"], {"epsilon": 1e-3}),
], ids=["plain", "beta", "bias-sum", "statistics"])
def test_skip_layer_normalization(ctx, inputs, outputs, attrs):
    feeds = {"x": floats(2, 3, 16), "skip": floats(2, 3, 16)}
    params = {"gamma": floats(16), "beta": floats(16), "bias": floats(16)}
    model = make_model([helper.make_node("SkipLayerNormalization", inputs, outputs, domain=MS, **attrs)], feeds,
                       [o for o in outputs if o], {k: v for k, v in params.items() if k in inputs}, contrib=True)
    expected = run_ort(model, feeds)
    if "mean" in expected and np.shape(expected["mean"]) == ():  # ONNX Runtime 1.19 leaves them empty
        total = (feeds["x"] + feeds["skip"] + params["bias"]).astype(np.float64)
        expected["mean"] = total.mean(-1, keepdims=True)
        expected["inv_std"] = 1 / np.sqrt(total.var(-1, keepdims=True) + attrs["epsilon"])
    check(ctx, model, feeds, expected, rtol=1e-4, atol=1e-4)


def test_skip_layer_normalization_default_epsilon(ctx):
    """ONNX Runtime's default epsilon is 1e-12: visible with a variance of about 1e-8."""
    feeds = {"x": floats(1, 2, 8) * 1e-4, "skip": np.zeros((1, 2, 8), np.float32)}
    model = make_model([helper.make_node("SkipLayerNormalization", ["x", "skip", "gamma"], ["y"], domain=MS)], feeds,
                       ["y"], {"gamma": np.ones(8, np.float32)}, contrib=True)
    check(ctx, model, feeds, rtol=1e-3, atol=1e-3)


def test_onnx_runtime_optimized_model(ctx, tmp_path):
    """A model as ONNX Runtime's extended graph optimizations save it: Conv + Relu become FusedConv,
    the erf Gelu pattern Gelu, Add + LayerNormalization SkipLayerNormalization."""
    weights = {"w1": floats(4, 3, 3, 3), "b1": floats(4), "w2": floats(16, 16), "b2": floats(16), "g": floats(16),
               "be": floats(16), "sqrt2": np.array(np.sqrt(2), np.float32), "one": np.array(1, np.float32),
               "half": np.array(0.5, np.float32), "shape": np.array([1, 4, 16], np.int64)}
    nodes = [helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c1"], ["r1"]), helper.make_node("Reshape", ["r1", "shape"], ["flat"]),
             helper.make_node("MatMul", ["flat", "w2"], ["m"]), helper.make_node("Add", ["m", "b2"], ["mb"]),
             helper.make_node("Div", ["mb", "sqrt2"], ["d"]), helper.make_node("Erf", ["d"], ["e"]),
             helper.make_node("Add", ["e", "one"], ["e1"]), helper.make_node("Mul", ["mb", "e1"], ["g1"]),
             helper.make_node("Mul", ["g1", "half"], ["gelu"]), helper.make_node("Add", ["gelu", "flat"], ["res"]),
             helper.make_node("LayerNormalization", ["res", "g", "be"], ["y"], axis=-1, epsilon=1e-5)]
    feeds = {"x": floats(1, 3, 4, 4)}
    model = make_model(nodes, feeds, ["y"], weights, opset=17)
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED
    options.optimized_model_filepath = str(tmp_path / "optimized.onnx")
    ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
    optimized = onnx.load(options.optimized_model_filepath)
    contrib = {n.op_type for n in optimized.graph.node if n.domain == MS}
    if not contrib:
        pytest.skip("this ONNX Runtime wrote no contrib ops")
    assert contrib <= {"FusedConv", "Gelu", "BiasGelu", "FastGelu", "SkipLayerNormalization"}, contrib
    check(ctx, optimized, feeds, run_ort(model, feeds), rtol=1e-4, atol=1e-4)


# ---------------------------------------------------------------- refusals and domains
def test_contrib_ops_only_in_their_domain(ctx):
    feeds = {"x": floats(2, 3)}
    model = make_model([helper.make_node("QuickGelu", ["x"], ["y"], name="plain")], feeds, ["y"])
    refused(ctx, model, "ONNX node 'plain' (QuickGelu)", "no WebNN mapping")
    assert "com.microsoft.QuickGelu" in webnn.onnx.SUPPORTED_OPS and "QuickGelu" not in webnn.onnx.SUPPORTED_OPS


def test_unmapped_contrib_op_and_unknown_domain(ctx):
    feeds = {"x": floats(2, 3)}
    model = make_model([helper.make_node("Attention", ["x"], ["y"], name="attn", domain=MS)], feeds, ["y"],
                       contrib=True)
    refused(ctx, model, "ONNX node 'attn' (com.microsoft.Attention)", "has no WebNN mapping")
    model = make_model([helper.make_node("Foo", ["x"], ["y"], name="foo", domain="org.example")], feeds, ["y"])
    model.opset_import.append(helper.make_opsetid("org.example", 1))
    refused(ctx, model, "ONNX node 'foo' (org.example.Foo)", "domain 'org.example' is not supported")


def test_fused_conv_unknown_activation_is_refused(ctx):
    feeds = {"x": floats(1, 2, 4, 4)}
    node = helper.make_node("FusedConv", ["x", "w"], ["y"], name="fc", domain=MS, activation="Softplus")
    model = make_model([node], feeds, ["y"], {"w": floats(2, 2, 3, 3)}, contrib=True)
    refused(ctx, model, "ONNX node 'fc' (com.microsoft.FusedConv)", "activation 'Softplus' is not supported")


def test_one_hot_runtime_depth_is_refused(ctx):
    feeds = {"i": np.array([1, 2], np.int64), "d": np.array(4, np.int64)}
    model = make_model([helper.make_node("OneHot", ["i", "d", "v"], ["y"], name="hot")], feeds, ["y"],
                       {"v": np.array([0, 1], np.float32)}, opset=11)
    refused(ctx, model, "ONNX node 'hot' (OneHot)", "depth ('d') must be known at conversion time")


def test_dynamic_quantize_linear_float16_is_refused(ctx):
    feeds = {"x": floats(4).astype(np.float16)}
    model = make_model([helper.make_node("DynamicQuantizeLinear", ["x"], ["y", "s", "z"], name="dq")], feeds,
                       ["y", "s", "z"], opset=11)
    refused(ctx, model, "ONNX node 'dq' (DynamicQuantizeLinear)", "float16")


def test_einsum_int8_contraction_is_refused(ctx):
    feeds = {"a": _ints(np.int8, (2, 3)), "b": _ints(np.int8, (3, 2))}
    model = make_model([helper.make_node("Einsum", ["a", "b"], ["y"], name="ein", equation="ij,jk->ik")], feeds,
                       ["y"], opset=12)
    refused(ctx, model, "ONNX node 'ein' (Einsum)", "reduceSum does not take a int8")
