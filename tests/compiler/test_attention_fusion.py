"""Attention fusion (compiler/passes/attention_fusion.cc, kernels/attention): matmul, a scalar
scale, a mask add, softmax along the keys and matmul run as one attention step, reading the
transposes of Q, Kt and V in place. Results match a float64 reference and the unfused plan (within
float32 rounding: the scale is applied to the keys); chains the kernel does not take are left alone."""
import numpy as np
import pytest

import webnn
from webnn import _core

RNG = np.random.default_rng(21)


def _fused(graph):
    summary = dict(_core.plan_passes(graph))["attention_fusion"]
    return 0 if summary.startswith("disabled") else int(summary.split()[0])


def _reference(q, kt, v, scale, mask):
    s = q.astype(np.float64) @ kt.astype(np.float64) * scale
    if mask is not None:
        s = s + mask
    s = np.exp(s - s.max(-1, keepdims=True))
    return (s / s.sum(-1, keepdims=True)) @ v.astype(np.float64)


def _build_and_check(context, monkeypatch, make, feeds, want, fused=1, steps=None, tol=2e-5):
    graph = make(webnn.MLGraphBuilder(context))
    monkeypatch.setenv("WEBNN_DISABLE_PASSES", "attention_fusion")
    plain = make(webnn.MLGraphBuilder(context))
    monkeypatch.delenv("WEBNN_DISABLE_PASSES")
    assert _fused(graph) == fused and _fused(plain) == 0
    if steps is not None:
        assert _core.plan_steps(graph) == steps
    got, unfused = graph.compute(feeds)["o"], plain.compute(feeds)["o"]
    scale = max(1.0, float(np.abs(want).max()))
    np.testing.assert_allclose(got.astype(np.float64), want, rtol=tol, atol=tol * scale)
    np.testing.assert_allclose(got, unfused, rtol=tol, atol=tol * scale)
    return graph


def _encoder_block(b, x_shape, mask_shape, heads, scale_form):
    """Q, K, V sliced from one [B, S, 3, H, D] input and transposed the way BERT exporters do."""
    batch, seq, _, _, depth = x_shape
    x = b.input("x", data_type="float32", shape=list(x_shape))
    mask = b.input("m", data_type="float32", shape=list(mask_shape)) if mask_shape else None

    def part(i, perm):
        piece = b.reshape(b.slice(x, [0, 0, i, 0, 0], [batch, seq, 1, heads, depth]), [batch, seq, heads, depth])
        return b.transpose(piece, permutation=perm)

    q, kt, v = part(0, [0, 2, 1, 3]), part(1, [0, 2, 3, 1]), part(2, [0, 2, 1, 3])
    s = b.matmul(q, kt)
    root = np.array(np.sqrt(depth), np.float32)
    if scale_form == "div":
        s = b.div(s, b.constant(root))
    elif scale_form == "mul":
        s = b.mul(s, b.constant(np.float32(1 / root)))
    elif scale_form == "mul_left":
        s = b.mul(b.constant(np.float32(1 / root).reshape(1, 1)), s)
    if mask is not None:
        s = b.add(mask, s) if scale_form == "mul_left" else b.add(s, mask)
    return b.matmul(b.softmax(s, 3), v)


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("scale_form", ["div", "mul", "mul_left", "none"])
@pytest.mark.parametrize("batch,seq,heads,depth,mask_kind", [
    (1, 128, 12, 32, "keys"),      # MiniLM
    (2, 29, 3, 16, "full"),        # rows past a 14-row tile, every score masked separately
    (1, 77, 2, 40, "none"),        # a keys count and depth off the vector width
    (3, 1, 4, 8, "rows"),          # one query row
    (1, 300, 1, 64, "keys"),       # keys past the 256-column panel block
])
def test_encoder_attention_fused(monkeypatch, threads, scale_form, batch, seq, heads, depth, mask_kind):
    context = webnn.ml.create_context(num_threads=threads)
    x = RNG.standard_normal((batch, seq, 3, heads, depth)).astype(np.float32)
    mask_shape = {"keys": (batch, 1, 1, seq), "full": (batch, heads, seq, seq), "rows": (seq, seq), "none": None}[mask_kind]
    feeds = {"x": x}
    mask = None
    if mask_shape:
        mask = np.where(RNG.random(mask_shape) < 0.3, -10000.0, RNG.standard_normal(mask_shape)).astype(np.float32)
        feeds["m"] = mask
    q, k, v = (x[:, :, i].transpose(0, 2, 1, 3) for i in range(3))
    scale = 1.0 if scale_form == "none" else 1 / np.sqrt(depth)
    want = _reference(q, k.transpose(0, 1, 3, 2), v, scale, mask)
    graph = _build_and_check(
        context, monkeypatch, lambda b: b.build({"o": _encoder_block(b, x.shape, mask_shape, heads, scale_form)}),
        feeds, want)
    assert _core.plan_steps(graph).count("transpose") == 0
    # (transpose folding made views of those that move no data: all with one row, Q's and V's with one head)
    moved = 0 if seq == 1 else 1 if heads == 1 else 3
    assert f"{moved} transposes read in place" in dict(_core.plan_passes(graph))["attention_fusion"]


@pytest.mark.parametrize("rank", [2, 3, 5])
def test_contiguous_operands_any_rank(context, monkeypatch, rank):
    lead = [2, 3, 2][: rank - 2]
    q = RNG.standard_normal(lead + [20, 24]).astype(np.float32)
    kt = RNG.standard_normal(lead + [24, 35]).astype(np.float32)
    v = RNG.standard_normal(lead + [35, 48]).astype(np.float32)  # value depth over one 32-column panel

    def make(b):
        ins = [b.input(n, data_type="float32", shape=list(a.shape)) for n, a in (("q", q), ("kt", kt), ("v", v))]
        return b.build({"o": b.matmul(b.softmax(b.matmul(ins[0], ins[1]), rank - 1), ins[2])})

    _build_and_check(context, monkeypatch, make, {"q": q, "kt": kt, "v": v}, _reference(q, kt, v, 1.0, None),
                     steps=["attention"])


def test_query_read_through_a_transpose_of_its_last_dim(context, monkeypatch):
    # Q's depth is not contiguous in memory: the kernel copies each tile's rows.
    qt = RNG.standard_normal((4, 16, 30)).astype(np.float32)  # [H, D, S]
    kt = RNG.standard_normal((4, 16, 30)).astype(np.float32)
    v = RNG.standard_normal((4, 30, 16)).astype(np.float32)

    def make(b):
        a, k, c = (b.input(n, data_type="float32", shape=list(t.shape)) for n, t in (("qt", qt), ("kt", kt), ("v", v)))
        s = b.mul(b.matmul(b.transpose(a, permutation=[0, 2, 1]), k), b.constant(np.float32(0.25)))
        return b.build({"o": b.matmul(b.softmax(s, 2), c)})

    want = _reference(qt.transpose(0, 2, 1), kt, v, 0.25, None)
    _build_and_check(context, monkeypatch, make, {"qt": qt, "kt": kt, "v": v}, want, steps=["attention"])


def test_infinite_mask_entries(context, monkeypatch):
    q = RNG.standard_normal((2, 10, 8)).astype(np.float32)
    kt = RNG.standard_normal((2, 8, 10)).astype(np.float32)
    v = RNG.standard_normal((2, 10, 8)).astype(np.float32)
    mask = np.triu(np.full((10, 10), -np.inf, np.float32), 1)  # causal

    def make(b):
        a, k, c = (b.input(n, data_type="float32", shape=list(t.shape)) for n, t in (("q", q), ("kt", kt), ("v", v)))
        s = b.add(b.matmul(a, k), b.constant(mask))
        return b.build({"o": b.matmul(b.softmax(s, 2), c)})

    _build_and_check(context, monkeypatch, make, {"q": q, "kt": kt, "v": v}, _reference(q, kt, v, 1.0, mask),
                     steps=["attention"])


def test_float16_attention_fused_between_widening_casts(context, monkeypatch):
    # float16 values between nodes are held in float32 (half_widening): the float32 fusion applies, the
    # inputs are widened by casts and the result rounded to float16 and narrowed by a cast.
    q = RNG.standard_normal((2, 12, 8)).astype(np.float16)
    kt = RNG.standard_normal((2, 8, 12)).astype(np.float16)
    v = RNG.standard_normal((2, 12, 8)).astype(np.float16)

    def make(b):
        a, k, c = (b.input(n, data_type="float16", shape=list(t.shape)) for n, t in (("q", q), ("kt", kt), ("v", v)))
        s = b.mul(b.matmul(a, k), b.constant(np.array(0.35, np.float16)))
        return b.build({"o": b.matmul(b.softmax(s, 2), c)})

    want = _reference(q, kt, v, float(np.float16(0.35)), None)
    graph = _build_and_check(context, monkeypatch, make, {"q": q, "kt": kt, "v": v}, want,
                             steps=["cast", "cast", "cast", "attention+roundToFloat16", "cast"], tol=3e-3)
    assert graph.compute({"q": q, "kt": kt, "v": v})["o"].dtype == np.float16


@pytest.mark.parametrize("case", ["softmax_axis", "scores_output", "probs_read_twice",
                                  "mask_along_keys", "vector_scale", "broadcast_batch", "mask_grows_rank"])
def test_not_fused(context, case):
    dtype = "float32"
    q = RNG.standard_normal((2, 6, 8)).astype(dtype)
    kt = RNG.standard_normal((1 if case == "broadcast_batch" else 2, 8, 6)).astype(dtype)
    v = RNG.standard_normal((2, 6, 8)).astype(dtype)
    b = webnn.MLGraphBuilder(context)
    a, k, c = (b.input(n, data_type=dtype, shape=list(t.shape)) for n, t in (("q", q), ("kt", kt), ("v", v)))
    s = b.matmul(a, k)
    outputs = {}
    feeds = {"q": q, "kt": kt, "v": v}
    s64 = q.astype(np.float64) @ kt.astype(np.float64)
    axis = 2
    if case == "vector_scale":
        scale = np.linspace(0.5, 1.5, 6).astype(np.float32)
        s, s64 = b.mul(s, b.constant(scale)), s64 * scale
    if case == "mask_along_keys":
        mask = RNG.standard_normal((6, 1)).astype(np.float32)
        s, s64 = b.add(s, b.constant(mask)), s64 + mask
    if case == "mask_grows_rank":
        mask = RNG.standard_normal((1, 1, 6, 6)).astype(np.float32)
        s, s64 = b.add(s, b.constant(mask)), s64 + mask
        axis = 3
    if case == "scores_output":
        outputs["s"] = s
    if case == "softmax_axis":
        axis = 1
    p = b.softmax(s, axis)
    p64 = np.exp(s64 - s64.max(axis, keepdims=True))
    p64 /= p64.sum(axis, keepdims=True)
    o = b.matmul(p, c)
    want = p64 @ v.astype(np.float64)
    if case == "probs_read_twice":
        o = b.add(o, b.reduce_sum(p, axes=[2], keep_dimensions=True))
        want = want + p64.sum(2, keepdims=True)
    outputs["o"] = o
    graph = b.build(outputs)
    assert _fused(graph) == 0
    assert "attention" not in _core.plan_steps(graph)
    np.testing.assert_allclose(graph.compute(feeds)["o"].astype(np.float64), want, rtol=2e-5, atol=2e-5)
