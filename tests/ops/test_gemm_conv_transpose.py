"""gemm and convTranspose2d against float64 NumPy references, plus their validation rules."""
import itertools

import numpy as np
import pytest

import webnn
from conftest import run

FLOAT_TYPES = ["float32", "float16"]


def _random(rng, shape, dtype, low=-1.0, high=1.0):
    return rng.uniform(low, high, size=shape).astype(dtype)


def _assert_close(actual, expected, dtype):
    assert actual.dtype == np.dtype(dtype)
    assert actual.shape == expected.shape
    scale = max(1.0, float(np.nanmax(np.abs(expected[np.isfinite(expected)]), initial=0.0)))
    tol = 1e-5 if dtype == "float32" else 2e-3
    np.testing.assert_allclose(actual.astype(np.float64), expected, rtol=tol, atol=tol * scale, equal_nan=True)


# ---------------------------------------------------------------- gemm
def gemm_ref(a, b, c=None, alpha=1.0, beta=1.0, a_transpose=False, b_transpose=False):
    a = a.astype(np.float64).T if a_transpose else a.astype(np.float64)
    b = b.astype(np.float64).T if b_transpose else b.astype(np.float64)
    out = alpha * (a @ b)
    if c is not None:
        out = out + beta * np.broadcast_to(c.astype(np.float64), out.shape)
    return out


@pytest.mark.parametrize("dtype", FLOAT_TYPES)
@pytest.mark.parametrize("a_transpose", [False, True])
@pytest.mark.parametrize("b_transpose", [False, True])
@pytest.mark.parametrize("c_shape", [None, [], [1], [5], [3, 1], [1, 5], [3, 5]])
def test_gemm(builder, dtype, a_transpose, b_transpose, c_shape):
    rng = np.random.default_rng(1)
    M, K, N = 3, 4, 5
    a = _random(rng, [K, M] if a_transpose else [M, K], dtype)
    b = _random(rng, [N, K] if b_transpose else [K, N], dtype)
    options = {"a_transpose": a_transpose, "b_transpose": b_transpose, "alpha": -1.5, "beta": 0.25}
    inputs = {"a": a, "b": b}
    c = None
    if c_shape is not None:
        c = _random(rng, c_shape, dtype)
        inputs["c"] = c
        options["c"] = builder.input("c", {"dataType": dtype, "shape": c_shape})
    out = builder.gemm(builder.input("a", {"dataType": dtype, "shape": list(a.shape)}),
                       builder.input("b", {"dataType": dtype, "shape": list(b.shape)}), **options)
    assert out.data_type == dtype and out.shape == [M, N]
    result = run(builder, {"out": out}, inputs)["out"]
    _assert_close(result, gemm_ref(a, b, c, -1.5, 0.25, a_transpose, b_transpose), dtype)


@pytest.mark.parametrize("dtype", FLOAT_TYPES)
@pytest.mark.parametrize("b_transpose", [False, True])
@pytest.mark.parametrize("a_transpose", [False, True])
@pytest.mark.parametrize("c_shape, alpha, beta", [([70], 1.0, 1.0), ([1, 70], 1.0, 1.0), ([70], 2.0, 1.0),
                                                  ([37, 1], 1.0, 1.0), (None, 1.0, 1.0)])
def test_gemm_constant_b_linear_layer(builder, dtype, a_transpose, b_transpose, c_shape, alpha, beta):
    # Constant b is packed at build time; a row bias with alpha = beta = 1 runs in the GEMM epilogue.
    rng = np.random.default_rng(3)
    M, K, N = 37, 450, 70  # several tiles and two K blocks
    a = _random(rng, [K, M] if a_transpose else [M, K], dtype)
    b = _random(rng, [N, K] if b_transpose else [K, N], dtype)
    options = {"a_transpose": a_transpose, "b_transpose": b_transpose, "alpha": alpha, "beta": beta}
    c = None
    if c_shape is not None:
        c = _random(rng, c_shape, dtype)
        options["c"] = builder.constant(c)
    out = builder.gemm(builder.input("a", {"dataType": dtype, "shape": list(a.shape)}), builder.constant(b), **options)
    result = run(builder, {"out": out}, {"a": a})["out"]
    _assert_close(result, gemm_ref(a, b, c, alpha, beta, a_transpose, b_transpose), dtype)


@pytest.mark.parametrize("dtype", FLOAT_TYPES)
def test_gemm_defaults_and_constants(builder, dtype):
    rng = np.random.default_rng(2)
    a, b = _random(rng, [2, 3], dtype), _random(rng, [3, 4], dtype)
    out = builder.gemm(builder.constant(a), builder.constant(b))
    _assert_close(run(builder, {"out": out})["out"], gemm_ref(a, b), dtype)


@pytest.mark.parametrize("M,K,N", [(1, 1, 1), (1, 7, 1), (6, 1, 2), (33, 70, 65)])
def test_gemm_sizes(builder, M, K, N):
    rng = np.random.default_rng(3)
    a, b, c = _random(rng, [M, K], "float32"), _random(rng, [K, N], "float32"), _random(rng, [N], "float32")
    out = builder.gemm(builder.constant(a), builder.constant(b), c=builder.constant(c), alpha=2.0, beta=-3.0)
    _assert_close(run(builder, {"out": out})["out"], gemm_ref(a, b, c, 2.0, -3.0), "float32")


def test_gemm_nan_and_infinity(builder):
    a = np.array([[1, np.inf], [2, 3]], np.float32)
    b = np.array([[1, 0], [1, 1]], np.float32)
    c = np.array([np.nan, 1], np.float32)
    out = builder.gemm(builder.constant(a), builder.constant(b), {"c": builder.constant(c)})
    result = run(builder, {"out": out})["out"]
    np.testing.assert_array_equal(result, np.array([[np.nan, np.inf], [np.nan, 4]], np.float32))


def test_gemm_limits(context):
    limits = context.op_support_limits()["gemm"]
    assert set(limits) == {"a", "b", "c", "output"}
    for name, rank in [("a", (2, 2)), ("b", (2, 2)), ("c", (0, 2)), ("output", (2, 2))]:
        assert sorted(limits[name]["dataTypes"]) == ["float16", "float32"]
        assert (limits[name]["rankRange"]["min"], limits[name]["rankRange"]["max"]) == rank


_names = itertools.count()


def _operand(builder, shape, dtype="float32"):
    return builder.input(f"x{next(_names)}", {"dataType": dtype, "shape": shape})


@pytest.mark.parametrize("a_shape,b_shape,options", [
    ([2, 3], [4, 5], {}),                               # K mismatch
    ([3, 2], [3, 5], {}),                               # K mismatch without aTranspose
    ([2, 3], [3, 5], {"a_transpose": True}),            # K mismatch after aTranspose
    ([2, 3], [5, 3], {}),                               # K mismatch without bTranspose
    ([2], [2, 5], {}),                                  # a rank 1
    ([2, 3, 1], [3, 5], {}),                            # a rank 3
    ([2, 3], [3], {}),                                  # b rank 1
    ([2, 3], [3, 5], {"c_shape": [3, 5]}),              # c not broadcastable
    ([2, 3], [3, 5], {"c_shape": [2]}),                 # c not broadcastable
    ([2, 3], [3, 5], {"c_shape": [1, 2, 5]}),           # c rank 3
    ([2, 3], [3, 5], {"c_dtype": "float16"}),           # c dtype differs
    ([2, 3], [3, 5], {"b_dtype": "float16"}),           # b dtype differs
    ([2, 3], [3, 5], {"a_dtype": "int32", "b_dtype": "int32"}),  # unsupported dtype
])
def test_gemm_invalid(builder, a_shape, b_shape, options):
    options = dict(options)
    a = _operand(builder, a_shape, options.pop("a_dtype", "float32"))
    b = _operand(builder, b_shape, options.pop("b_dtype", "float32"))
    if "c_shape" in options or "c_dtype" in options:
        options["c"] = _operand(builder, options.pop("c_shape", [5]), options.pop("c_dtype", "float32"))
    with pytest.raises(TypeError, match=r"\[lbl\] gemm:"):
        builder.gemm(a, b, label="lbl", **options)


def test_gemm_invalid_scalars_and_owner(builder, context):
    a, b = _operand(builder, [2, 3]), _operand(builder, [3, 4])
    with pytest.raises(TypeError, match=r"\[lbl\]"):
        builder.gemm(a, b, alpha=float("nan"), label="lbl")
    with pytest.raises(TypeError, match=r"\[lbl\]"):
        builder.gemm(a, b, beta=float("inf"), label="lbl")
    other = webnn.MLGraphBuilder(context)
    with pytest.raises(TypeError, match=r"\[lbl\]"):
        builder.gemm(a, b, c=_operand(other, [4]), label="lbl")


# ---------------------------------------------------------------- convTranspose2d
def conv_transpose2d_ref(x, w, padding=(0, 0, 0, 0), strides=(1, 1), dilations=(1, 1), output_padding=(0, 0),
                         output_sizes=None, groups=1, input_layout="nchw", filter_layout="iohw", bias=None):
    """PyTorch ConvTranspose2d semantics, written as the scatter in the spec."""
    x, w = x.astype(np.float64), w.astype(np.float64)
    if input_layout == "nhwc":
        x = x.transpose(0, 3, 1, 2)
    w = {"iohw": w, "hwoi": w.transpose(3, 2, 0, 1), "ohwi": w.transpose(3, 0, 1, 2)}[filter_layout]
    n, c, h, wd = x.shape
    og, kh, kw = w.shape[1:]
    cg = c // groups
    sizes = []
    for axis, (size, k) in enumerate([(h, kh), (wd, kw)]):
        calc = (size - 1) * strides[axis] + (k - 1) * dilations[axis] + 1 - padding[2 * axis] - padding[2 * axis + 1]
        sizes.append(output_sizes[axis] if output_sizes is not None else calc + output_padding[axis])
    out = np.zeros((n, og * groups, sizes[0], sizes[1]))
    for iy in range(h):
        for ix in range(wd):
            for ky in range(kh):
                y = iy * strides[0] + ky * dilations[0] - padding[0]
                for kx in range(kw):
                    xo = ix * strides[1] + kx * dilations[1] - padding[2]
                    if not (0 <= y < sizes[0] and 0 <= xo < sizes[1]):
                        continue
                    for g in range(groups):
                        out[:, g * og:(g + 1) * og, y, xo] += (x[:, g * cg:(g + 1) * cg, iy, ix]
                                                              @ w[g * cg:(g + 1) * cg, :, ky, kx])
    if bias is not None:
        out += bias.astype(np.float64)[None, :, None, None]
    return out.transpose(0, 2, 3, 1) if input_layout == "nhwc" else out


def _filter_shape(layout, c, og, kh, kw):
    return {"iohw": [c, og, kh, kw], "hwoi": [kh, kw, og, c], "ohwi": [og, kh, kw, c]}[layout]


def _conv_transpose_case(builder, dtype, n=1, c=2, h=3, w=4, og=3, kh=3, kw=2, bias=False, seed=0, **options):
    rng = np.random.default_rng(seed)
    groups = options.get("groups", 1)
    input_layout = options.get("input_layout", "nchw")
    filter_layout = options.get("filter_layout", "iohw")
    x = _random(rng, [n, h, w, c] if input_layout == "nhwc" else [n, c, h, w], dtype)
    f = _random(rng, _filter_shape(filter_layout, c, og, kh, kw), dtype)
    call = dict(options)
    ref_options = dict(options)
    if bias:
        b = _random(rng, [og * groups], dtype)
        call["bias"] = builder.constant(b)
        ref_options["bias"] = b
    out = builder.conv_transpose2d(builder.input("x", {"dataType": dtype, "shape": list(x.shape)}),
                                   builder.constant(f), **call)
    expected = conv_transpose2d_ref(x, f, **ref_options)
    assert out.data_type == dtype and out.shape == list(expected.shape)
    _assert_close(run(builder, {"out": out}, {"x": x})["out"], expected, dtype)


@pytest.mark.parametrize("dtype", FLOAT_TYPES)
@pytest.mark.parametrize("input_layout", ["nchw", "nhwc"])
@pytest.mark.parametrize("filter_layout", ["iohw", "hwoi", "ohwi"])
def test_conv_transpose2d_layouts(builder, dtype, input_layout, filter_layout):
    _conv_transpose_case(builder, dtype, n=2, bias=True, input_layout=input_layout, filter_layout=filter_layout,
                         strides=[2, 1], padding=[1, 0, 0, 1])


@pytest.mark.parametrize("options", [
    {},
    {"strides": [3, 2]},
    {"dilations": [2, 3]},
    {"padding": [2, 1, 1, 0]},
    {"strides": [3, 2], "output_padding": [2, 1]},
    {"strides": [3, 2], "output_sizes": [9, 9]},
    {"strides": [3, 2], "output_sizes": [11, 9], "output_padding": [2, 1]},  # outputPadding ignored
    {"strides": [2, 2], "padding": [0, 1, 0, 1], "output_sizes": [6, 8]},
    {"strides": [2, 3], "dilations": [2, 1], "padding": [1, 2, 2, 1], "output_padding": [1, 2]},
    {"groups": 2},
    {"groups": 2, "strides": [2, 2], "input_layout": "nhwc", "filter_layout": "ohwi"},
])
def test_conv_transpose2d_options(builder, options):
    c = 4 if options.get("groups") else 2
    _conv_transpose_case(builder, "float32", n=2, c=c, bias=True, seed=5, **options)


@pytest.mark.parametrize("shape", [dict(n=1, c=1, h=1, w=1, og=1, kh=1, kw=1), dict(n=1, c=1, h=1, w=1, og=2, kh=3,
                                                                                    kw=3)])
def test_conv_transpose2d_size_one(builder, shape):
    _conv_transpose_case(builder, "float32", **shape)


def test_conv_transpose2d_depthwise_and_large(context):
    _conv_transpose_case(webnn.MLGraphBuilder(context), "float32", n=1, c=6, h=9, w=7, og=1, kh=4, kw=4, groups=6, strides=[2, 2],
                         padding=[1, 1, 1, 1], bias=True)
    _conv_transpose_case(webnn.MLGraphBuilder(context), "float32", n=3, c=16, h=12, w=12, og=24, kh=3, kw=3, strides=[2, 2],
                         output_padding=[1, 1])


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("case", [
    # Windows that never overlap (stride = kernel), several pixel tiles, the scatter split by pixels too
    dict(n=2, c=8, h=40, w=41, og=32, kh=2, kw=2, strides=[2, 2]),
    dict(n=1, c=5, h=110, w=105, og=1, kh=2, kw=3, strides=[2, 3], padding=[1, 0, 0, 2], input_layout="nhwc",
         filter_layout="ohwi"),
    # Overlapping windows over several tiles, groups, dilation
    dict(n=1, c=6, h=30, w=31, og=16, kh=3, kw=3, strides=[2, 2], padding=[1, 1, 1, 1], groups=2),
    dict(n=2, c=4, h=25, w=23, og=20, kh=3, kw=2, strides=[1, 2], dilations=[2, 1], input_layout="nhwc",
         filter_layout="hwoi"),
])
def test_conv_transpose2d_tiles(threads, case):
    # Enough input pixels for several GEMM tiles (a tile is 256 KB of columns), at 1 and 2 threads
    _conv_transpose_case(webnn.MLGraphBuilder(webnn.ml.create_context(num_threads=threads)), "float32", bias=True,
                         seed=threads, **case)


def test_conv_transpose2d_filter_at_run_time(builder):
    rng = np.random.default_rng(3)
    x = _random(rng, [1, 3, 20, 21], "float32")
    f = _random(rng, [3, 4, 2, 2], "float32")
    out = builder.conv_transpose2d(builder.input("x", {"dataType": "float32", "shape": list(x.shape)}),
                                   builder.input("f", {"dataType": "float32", "shape": list(f.shape)}), strides=[2, 2])
    _assert_close(run(builder, {"out": out}, {"x": x, "f": f})["out"], conv_transpose2d_ref(x, f, strides=(2, 2)),
                  "float32")


def test_conv_transpose2d_padding_crops_everything_but_bias(builder):
    # The output starts past every contribution: only the bias remains.
    x = np.ones([1, 1, 1, 1], np.float32)
    f = np.ones([1, 1, 1, 1], np.float32)
    out = builder.conv_transpose2d(builder.constant(x), builder.constant(f), strides=[4, 4], padding=[1, 0, 1, 0],
                                   output_sizes=[3, 3], bias=builder.constant(np.array([7], np.float32)))
    np.testing.assert_array_equal(run(builder, {"out": out})["out"], np.full([1, 1, 3, 3], 7, np.float32))


def test_conv_transpose2d_nan_and_infinity(builder):
    x = np.array([1, np.nan, np.inf, 2], np.float32).reshape(1, 1, 2, 2)
    f = np.ones([1, 1, 1, 1], np.float32)
    out = builder.conv_transpose2d(builder.constant(x), builder.constant(f))
    np.testing.assert_array_equal(run(builder, {"out": out})["out"], x)


def test_conv_transpose2d_limits(context):
    limits = context.op_support_limits()["convTranspose2d"]
    assert set(limits) == {"input", "filter", "bias", "output"}
    for name, rank in [("input", 4), ("filter", 4), ("bias", 1), ("output", 4)]:
        assert sorted(limits[name]["dataTypes"]) == ["float16", "float32"]
        assert limits[name]["rankRange"] == {"min": rank, "max": rank}


@pytest.mark.parametrize("input_shape,filter_shape,options", [
    ([1, 2, 3, 3], [2, 1, 2, 2], {"padding": [0, 0]}),
    ([1, 2, 3, 3], [2, 1, 2, 2], {"strides": [1]}),
    ([1, 2, 3, 3], [2, 1, 2, 2], {"strides": [0, 1]}),
    ([1, 2, 3, 3], [2, 1, 2, 2], {"dilations": [1, 1, 1]}),
    ([1, 2, 3, 3], [2, 1, 2, 2], {"dilations": [1, 0]}),
    ([1, 2, 3, 3], [2, 1, 2, 2], {"output_padding": [0]}),
    ([1, 2, 3, 3], [2, 1, 2, 2], {"output_padding": [1, 0]}),                      # >= strides
    ([1, 2, 3, 3], [2, 1, 2, 2], {"strides": [2, 2], "output_padding": [0, 2]}),  # >= strides
    ([1, 2, 3, 3], [2, 1, 2, 2], {"output_sizes": [4]}),
    ([1, 2, 3, 3], [2, 1, 2, 2], {"output_sizes": [3, 4]}),                       # below calc
    ([1, 2, 3, 3], [2, 1, 2, 2], {"strides": [2, 2], "output_sizes": [8, 7]}),    # calc + stride
    ([1, 2, 3, 3], [2, 1, 2, 2], {"groups": 0}),
    ([1, 3, 3, 3], [3, 1, 2, 2], {"groups": 2}),                                  # C % groups
    ([1, 2, 3, 3], [3, 1, 2, 2], {}),                                             # C != filter C
    ([1, 3, 3, 2], [3, 1, 2, 2], {"input_layout": "nhwc"}),                       # C != filter C
    ([1, 2, 3, 3], [2, 1, 2, 3], {"filter_layout": "hwoi"}),                      # C != filter C
    ([1, 2, 3, 3], [3, 2, 1, 3], {"filter_layout": "ohwi"}),                      # C != filter C
    ([1, 2, 3, 3], [2, 1, 2, 2], {"bias_shape": [2]}),                            # bias != [O]
    ([1, 2, 3, 3], [2, 1, 2, 2], {"bias_shape": [1, 1]}),                         # bias rank
    ([1, 2, 3, 3], [2, 1, 2, 2], {"padding": [3, 2, 0, 0]}),                      # output height <= 0
    ([1, 2, 3, 3], [2, 1, 2, 2], {"filter_layout": "oihw"}),                      # not a transposed layout
    ([1, 2, 3], [2, 1, 2, 2], {}),                                                # input rank
    ([1, 2, 3, 3], [2, 1, 2], {}),                                                # filter rank
    ([1, 2, 3, 3], [2, 1, 2, 2], {"filter_dtype": "float16"}),
    ([1, 2, 3, 3], [2, 1, 2, 2], {"bias_dtype": "float16"}),
    ([1, 2, 3, 3], [2, 1, 2, 2], {"dtype": "int32"}),
])
def test_conv_transpose2d_invalid(builder, input_shape, filter_shape, options):
    options = dict(options)
    dtype = options.pop("dtype", "float32")
    x = _operand(builder, input_shape, dtype)
    f = _operand(builder, filter_shape, options.pop("filter_dtype", dtype))
    if "bias_shape" in options or "bias_dtype" in options:
        options["bias"] = _operand(builder, options.pop("bias_shape", [1]), options.pop("bias_dtype", dtype))
    with pytest.raises(TypeError, match=r"\[lbl\] convTranspose2d:"):
        builder.conv_transpose2d(x, f, label="lbl", **options)

