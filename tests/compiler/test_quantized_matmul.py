"""Quantized matrix products run on integers (compiler pass quantized_ops): dequantizeLinear(a) x
dequantizeLinear(constant 2-D b) [-> relu/clamp] -> quantizeLinear becomes one matmul step on
8-bit values, within one quantization step of the spec's float path (docs/quantization.md), exact
where every float value on the way is exact."""
import numpy as np
import pytest

import webnn

RNG = np.random.default_rng(7)
RANGES = {"uint8": (0, 255), "int8": (-128, 127)}


def _build(context, a_shape, k, n, a_type, b_type, per_column, activation, exact, other_reader=False):
    builder = webnn.MLGraphBuilder(context)
    rank = len(a_shape)
    lo, hi = RANGES[a_type]
    b_lo, b_hi = RANGES[b_type]
    b = RNG.integers(b_lo, b_hi + 1, (k, n)).astype(b_type)
    if exact:  # power-of-two scales and small sums: the float path is exact too
        sa, sb, sy = np.float32(2.0 ** -4), np.full(n if per_column else 1, 2.0 ** -6, np.float32), np.float32(2.0 ** -3)
    else:
        sa = np.float32(0.013)
        sb = (RNG.random(n if per_column else 1) * 0.01 + 0.001).astype(np.float32)
        sy = np.float32(0.07)
    za = np.array(RNG.integers(lo, hi + 1), a_type)
    zb = np.array(RNG.integers(b_lo, b_hi + 1, sb.shape), b_type)
    zy = np.array(RNG.integers(0, 256), np.uint8)
    one = [1] * rank
    x = builder.input("a", data_type=a_type, shape=list(a_shape))
    a_dq = builder.dequantize_linear(x, builder.constant(sa.reshape(one)), builder.constant(za.reshape(one)))
    b_shape = [1, n] if per_column else [1, 1]
    b_dq = builder.dequantize_linear(builder.constant(b), builder.constant(sb.reshape(b_shape)),
                                     builder.constant(zb.reshape(b_shape)))
    y = builder.matmul(a_dq, b_dq, label="qmatmul")
    float_y = y
    if activation == "relu":
        y = builder.relu(y)
    elif activation == "clamp":
        y = builder.clamp(y, min_value=-0.5, max_value=3.0)
    outputs = {"q": builder.quantize_linear(y, builder.constant(np.full(one, sy, np.float32)),
                                            builder.constant(zy.reshape(one)))}
    if other_reader:
        outputs["f"] = builder.relu(float_y)
    graph = builder.build(outputs)

    def reference(a):
        ad = (a.astype(np.float64) - float(za)) * float(sa)
        bd = (b.astype(np.float64) - zb.reshape(b_shape).astype(np.float64)) * sb.reshape(b_shape).astype(np.float64)
        r = ad @ bd
        if activation == "relu":
            r = np.maximum(r, 0)
        elif activation == "clamp":
            r = np.clip(r, -0.5, 3.0)
        return np.clip(np.round(r / float(sy)) + float(zy), 0, 255)

    return graph, reference


def _summary(graph):
    return dict(graph.describe_plan()["passes"])["quantized_ops"]


@pytest.mark.parametrize("a_shape,k,n", [((5, 16), 16, 24), ((2, 3, 40), 40, 33), ((1, 7, 4096), 4096, 5),
                                         ((13, 3), 3, 1)])
@pytest.mark.parametrize("types", [("uint8", "int8"), ("int8", "int8"), ("uint8", "uint8")])
@pytest.mark.parametrize("activation", [None, "relu", "clamp"])
def test_quantized_matmul_runs_on_integers(context, a_shape, k, n, types, activation):
    graph, reference = _build(context, a_shape, k, n, *types, per_column=True, activation=activation, exact=False)
    steps = [s for s in graph.describe_plan()["steps"] if not s["view"]]
    assert [s["op"] for s in steps] == ["matmul"], steps
    assert "dequantizeLinear" in steps[0]["fused"] and "quantizeLinear" in steps[0]["fused"]
    assert steps[0]["inputs"][0]["dataType"] == types[0] and steps[0]["outputs"][0]["dataType"] == "uint8"
    assert _summary(graph).startswith("1 ops run on integers"), _summary(graph)
    a = RNG.integers(*RANGES[types[0]], a_shape, endpoint=True).astype(types[0])
    out = context.compute(graph, {"a": a})["q"].astype(np.int64)
    diff = np.abs(out - reference(a).astype(np.int64))
    assert diff.max() <= 1 and (diff == 0).mean() >= 0.99


@pytest.mark.parametrize("per_column", [False, True])
def test_quantized_matmul_exact(context, per_column):
    graph, reference = _build(context, (9, 32), 32, 20, "uint8", "int8", per_column, "relu", exact=True)
    a = RNG.integers(0, 256, (9, 32)).astype(np.uint8)
    np.testing.assert_array_equal(context.compute(graph, {"a": a})["q"], reference(a).astype(np.uint8))


def test_matmul_with_another_reader_gives_its_float_result(context):
    # Its float result is read twice: no quantized output, but an integer product with a float32 one.
    graph, reference = _build(context, (4, 8), 8, 6, "uint8", "int8", True, None, exact=False, other_reader=True)
    assert _summary(graph).startswith("1 ops run on integers (quantizedMatmul"), _summary(graph)
    assert "its float result has other readers" in _summary(graph)
    a = RNG.integers(0, 256, (4, 8)).astype(np.uint8)
    diff = np.abs(context.compute(graph, {"a": a})["q"].astype(np.int64) - reference(a).astype(np.int64))
    assert diff.max() <= 1


def _float_product(context, a_shape, n, a_type, b_type, per_column, runtime_parameters):
    """dequantizeLinear(a) x dequantizeLinear(constant b) with a float32 result; a's scale and zero
    point are graph inputs (a dynamically quantized input) or constants. Returns (graph, feeds maker,
    exact reference): the kernel's float32(float32(exact integer sum) x float32(sa x sb))."""
    builder = webnn.MLGraphBuilder(context)
    k, rank = a_shape[-1], len(a_shape)
    b_lo, b_hi = RANGES[b_type]
    b = RNG.integers(b_lo, b_hi + 1, (k, n)).astype(b_type)
    sb = (RNG.random(n if per_column else 1) * 0.01 + 0.001).astype(np.float32)
    zb = RNG.integers(b_lo, b_hi + 1, sb.shape).astype(b_type)
    b_shape = [1, n] if per_column else [1, 1]
    one = [1] * rank
    x = builder.input("a", data_type=a_type, shape=list(a_shape))
    if runtime_parameters:
        scale = builder.input("sa", data_type="float32", shape=one)
        zero = builder.input("za", data_type=a_type, shape=one)
    else:
        fixed = (np.float32(0.021), np.array(RNG.integers(*RANGES[a_type], endpoint=True), a_type))
        scale, zero = builder.constant(fixed[0].reshape(one)), builder.constant(fixed[1].reshape(one))
    a_dq = builder.dequantize_linear(x, scale, zero)
    b_dq = builder.dequantize_linear(builder.constant(b), builder.constant(sb.reshape(b_shape)),
                                     builder.constant(zb.reshape(b_shape)))
    graph = builder.build({"y": builder.matmul(a_dq, b_dq)})

    def feeds(sa, za):
        a = RNG.integers(*RANGES[a_type], a_shape, endpoint=True).astype(a_type)
        given = {"a": a}
        if runtime_parameters:
            given.update(sa=np.full(one, sa, np.float32), za=np.full(one, za, a_type))
        else:
            sa, za = fixed[0], fixed[1]
        sums = (a.astype(np.int64) - int(za)) @ (b.astype(np.int64) - zb.reshape(b_shape).astype(np.int64))
        multiplier = (np.float64(np.float32(sa)) * sb.reshape(b_shape).astype(np.float64)).astype(np.float32)
        return given, sums.astype(np.float32) * multiplier

    return graph, feeds


@pytest.mark.parametrize("a_shape,n", [((5, 16), 24), ((2, 3, 40), 33), ((1, 7, 4096), 5), ((13, 3), 1), ((30, 64), 64)])
@pytest.mark.parametrize("types", [("uint8", "int8"), ("int8", "int8"), ("uint8", "uint8")])
@pytest.mark.parametrize("runtime_parameters", [True, False])
def test_float_products_run_on_integers_exactly(context, a_shape, n, types, runtime_parameters):
    graph, feeds = _float_product(context, a_shape, n, *types, per_column=n > 1, runtime_parameters=runtime_parameters)
    steps = [s for s in graph.describe_plan()["steps"] if not s["view"]]
    assert [s["op"] for s in steps] == ["quantizedMatmul"], steps
    assert steps[0]["outputs"][0]["dataType"] == "float32"
    for sa, za in ((0.013, 3), (1.5, 0 if types[0] == "int8" else 250), (2.0 ** -20, -128 if types[0] == "int8" else 0)):
        given, want = feeds(sa, za)
        np.testing.assert_array_equal(context.compute(graph, given)["y"], want)  # the same bits


def test_float_product_reads_its_parameters_at_each_dispatch(context):
    graph, feeds = _float_product(context, (6, 32), 10, "uint8", "int8", True, True)
    for sa, za in ((0.5, 0), (0.001, 255), (7.0, 128)):
        given, want = feeds(sa, za)
        np.testing.assert_array_equal(context.compute(graph, given)["y"], want)


def _build_gemm(context, m, k, n, b_transposed, alpha, beta, c_kind, a_transposed=False):
    """dequantizeLinear(a) x dequantizeLinear(constant b) through gemm (alpha, beta, c, transposes)
    -> quantizeLinear, and its float64 reference."""
    builder = webnn.MLGraphBuilder(context)
    b = RNG.integers(-128, 128, (n, k) if b_transposed else (k, n)).astype(np.int8)
    sa, sy = np.float32(0.011), np.float32(0.09)
    sb = (RNG.random(n) * 0.01 + 0.002).astype(np.float32)
    za, zy = np.uint8(120), np.uint8(40)
    b_param_shape = [n, 1] if b_transposed else [1, n]
    a_shape = [k, m] if a_transposed else [m, k]
    x = builder.input("a", data_type="uint8", shape=a_shape)
    a_dq = builder.dequantize_linear(x, builder.constant(np.full([1, 1], sa, np.float32)),
                                     builder.constant(np.full([1, 1], za, np.uint8)))
    b_dq = builder.dequantize_linear(builder.constant(b), builder.constant(sb.reshape(b_param_shape)),
                                     builder.constant(np.zeros(b_param_shape, np.int8)))
    options = {"alpha": alpha, "beta": beta, "b_transpose": b_transposed, "a_transpose": a_transposed}
    c_values = None
    if c_kind in ("row", "vector"):
        c_values = (RNG.random(n) - 0.5).astype(np.float32)
        options["c"] = builder.constant(c_values.reshape([1, n] if c_kind == "row" else [n]))
    elif c_kind == "int32":  # a QDQ model's bias: dequantizeLinear of int32 with scale sa * sb
        c_int = RNG.integers(-3000, 3000, n).astype(np.int32)
        c_scale = (np.float64(sa) * sb.astype(np.float64)).astype(np.float32)
        options["c"] = builder.dequantize_linear(builder.constant(c_int), builder.constant(c_scale),
                                                 builder.constant(np.zeros(n, np.int32)))
        c_values = (c_int.astype(np.float64) * c_scale).astype(np.float32)
    elif c_kind == "matrix":
        c_values = (RNG.random((m, n)) - 0.5).astype(np.float32)
        options["c"] = builder.constant(c_values)
    y = builder.gemm(a_dq, b_dq, **options)
    graph = builder.build({"q": builder.quantize_linear(y, builder.constant(np.full([1, 1], sy, np.float32)),
                                                        builder.constant(np.full([1, 1], zy, np.uint8)))})

    def reference(a):
        ad = (a.astype(np.float64) - float(za)) * float(sa)
        ad = ad.T if a_transposed else ad
        bd = b.astype(np.float64) * sb.reshape(b_param_shape).astype(np.float64)
        r = alpha * (ad @ (bd.T if b_transposed else bd))
        if c_values is not None:
            r = r + beta * c_values.astype(np.float64)
        return np.clip(np.round(r / float(sy)) + float(zy), 0, 255)

    return graph, reference, a_shape


@pytest.mark.parametrize("m,k,n", [(1, 1280, 1000), (7, 64, 33), (25, 3, 5)])
@pytest.mark.parametrize("b_transposed", [False, True])
@pytest.mark.parametrize("alpha,beta,c_kind", [(1.0, 1.0, "row"), (0.5, 2.0, "vector"), (1.0, 1.0, "int32"),
                                               (1.7, 1.0, "none")])
def test_quantized_gemm_runs_on_integers(context, m, k, n, b_transposed, alpha, beta, c_kind):
    """gemm of a dequantized input by a dequantized constant b (as written, or transposed: an ONNX
    classifier's Gemm with transB), alpha folded into the weight scales and beta * c (a float32 row,
    or a QDQ model's dequantized int32 bias) as the bias: one step on integers."""
    graph, reference, a_shape = _build_gemm(context, m, k, n, b_transposed, alpha, beta, c_kind)
    steps = [(s["op"], s["fused"]) for s in graph.describe_plan()["steps"] if not s["view"]]
    assert steps == [("gemm", ["dequantizeLinear", "quantizeLinear"])], steps
    assert _summary(graph).startswith("1 ops run on integers (gemm "), _summary(graph)
    a = RNG.integers(0, 256, a_shape).astype(np.uint8)
    diff = np.abs(context.compute(graph, {"a": a})["q"].astype(np.int64) - reference(a).astype(np.int64))
    assert diff.max() <= 1 and (diff == 0).mean() >= 0.99


@pytest.mark.parametrize("case,reason", [("a_transposed", "gemm's a is transposed"),
                                         ("negative_alpha", "gemm's alpha is not positive"),
                                         ("matrix_c", "gemm's c is not a row")])
def test_quantized_gemm_left_in_float(context, case, reason):
    graph, reference, a_shape = _build_gemm(context, 4, 8, 6, False, -1.0 if case == "negative_alpha" else 1.0, 1.0,
                                            "matrix" if case == "matrix_c" else "row",
                                            a_transposed=case == "a_transposed")
    assert _summary(graph).startswith("0 ops run on integers") and reason in _summary(graph), _summary(graph)
    a = RNG.integers(0, 256, a_shape).astype(np.uint8)
    diff = np.abs(context.compute(graph, {"a": a})["q"].astype(np.int64) - reference(a).astype(np.int64))
    assert diff.max() <= 1


@pytest.mark.parametrize("then", ["bias_gelu", "bias_relu", "residual_clamp", "sigmoid"])
def test_float_product_epilogue_gives_the_unfused_bits(build_twice, same_results, then):
    # A bias row (or a residual), a clamp and an activation run on the product's float32 tile in L1:
    # the same float32 operations as the separate steps.
    a_type, n = "uint8", 40
    b = RNG.integers(-128, 128, (24, n)).astype(np.int8)
    bias = RNG.standard_normal(n).astype(np.float32)
    a = RNG.integers(0, 256, (3, 10, 24)).astype(np.uint8)
    r = RNG.standard_normal((3, 10, n)).astype(np.float32)

    def make(builder):
        one = [1, 1, 1]
        x = builder.input("a", data_type=a_type, shape=list(a.shape))
        dq = builder.dequantize_linear(x, builder.input("sa", data_type="float32", shape=one),
                                       builder.input("za", data_type=a_type, shape=one))
        w = builder.dequantize_linear(builder.constant(b), builder.constant(np.full([1, n], 0.004, np.float32)),
                                      builder.constant(np.zeros([1, n], np.int8)))
        y = builder.matmul(dq, w)
        if then == "bias_gelu":
            y = builder.gelu(builder.add(y, builder.constant(bias)))
        elif then == "bias_relu":
            y = builder.relu(builder.add(builder.constant(bias.reshape(1, 1, n)), y))
        elif then == "residual_clamp":
            y = builder.clamp(builder.add(y, builder.input("r", data_type="float32", shape=list(r.shape))),
                              min_value=-0.5, max_value=0.75)
        else:
            y = builder.sigmoid(y)
        return builder.build({"y": y})

    graph, plain = build_twice(make, "epilogue_fusion")
    steps = [s for s in graph.describe_plan()["steps"] if not s["view"]]
    assert len(steps) == 1 and steps[0]["op"] == "quantizedMatmul", steps
    feeds = {"a": a, "sa": np.full([1, 1, 1], 0.03, np.float32), "za": np.full([1, 1, 1], 117, np.uint8)}
    if then == "residual_clamp":
        feeds["r"] = r
    same_results(graph, plain, feeds)
