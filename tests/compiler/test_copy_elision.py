"""Copy elision (compiler/passes/copy_elision.cc): a concat whose pieces are contiguous (only size-1
dimensions before its axis) is written in place by its inputs' producers, and such a split is read in
place; every result equals the plan with the pass disabled, and the copy runs when a piece cannot move."""
import numpy as np
import pytest

import webnn
from webnn import _core

RNG = np.random.default_rng(7)


@pytest.fixture
def compare(checked_twice):
    return lambda make, feeds: checked_twice(make, feeds, "copy_elision")


def _copy_elision_log(graph):
    return dict(_core.plan_passes(graph))["copy_elision"]


def test_channel_concat_at_batch_one_is_written_in_place(compare):
    x = RNG.standard_normal((1, 3, 4, 4)).astype(np.float32)

    def make(b):
        a = b.input("x", data_type="float32", shape=[1, 3, 4, 4])
        return b.build({"y": b.relu(b.concat([b.sigmoid(a), b.neg(a), b.abs(a)], 1))})

    graph, out = compare(make, {"x": x})
    assert "concat" not in _core.plan_steps(graph)
    assert _copy_elision_log(graph).startswith("1 concats written in place")
    want = np.maximum(np.concatenate([1 / (1 + np.exp(-x.astype(np.float64))), -x, np.abs(x)], 1), 0)
    np.testing.assert_allclose(out["y"], want, rtol=1e-6, atol=1e-7)


def test_concat_as_graph_output_is_written_into_the_callers_tensor(compare):
    x = RNG.standard_normal((2, 3)).astype(np.float32)

    def make(b):
        a = b.input("x", data_type="float32", shape=[2, 3])
        return b.build({"y": b.concat([b.neg(a), b.exp(a)], 0)})

    graph, out = compare(make, {"x": x})
    assert _core.plan_steps(graph) == ["neg", "exp"]
    np.testing.assert_allclose(out["y"], np.concatenate([-x, np.exp(x)], 0), rtol=1e-6)


def test_nested_concats_and_a_piece_read_by_later_steps(compare):
    x = RNG.standard_normal((1, 2, 3)).astype(np.float32)

    def make(b):
        a = b.input("x", data_type="float32", shape=[1, 2, 3])
        n = b.neg(a)
        inner = b.concat([n, b.abs(a)], 1)
        outer = b.concat([b.exp(a), inner, b.relu(n)], 1)  # n is read again, after inner exists
        return b.build({"y": b.mul(outer, b.constant("float32", 2.0)), "n_sum": b.reduce_sum(b.relu(n))})

    graph, out = compare(make, {"x": x})
    assert "concat" not in _core.plan_steps(graph)
    assert _copy_elision_log(graph).startswith("2 concats")
    n = -x
    want = 2 * np.concatenate([np.exp(x), n, np.abs(x), np.maximum(n, 0)], 1)
    np.testing.assert_allclose(out["y"], want, rtol=1e-6)


@pytest.mark.parametrize("case", ["batch_two", "input_piece", "output_piece", "repeated_piece", "constant_piece"])
def test_concat_copies_when_a_piece_cannot_move(compare, case):
    x = RNG.standard_normal((2, 3) if case == "batch_two" else (1, 3)).astype(np.float32)

    def make(b):
        a = b.input("x", data_type="float32", shape=list(x.shape))
        n = b.neg(a)
        pieces = {"batch_two": [n, b.abs(a)], "input_piece": [n, a], "output_piece": [n, b.abs(a)],
                  "repeated_piece": [n, n], "constant_piece": [n, b.constant(np.ones_like(x))]}[case]
        outputs = {"y": b.concat(pieces, 1)}
        if case == "output_piece":
            outputs["n"] = n
        return b.build(outputs)

    graph, _ = compare(make, {"x": x})
    assert "concat" in _core.plan_steps(graph)


def test_split_at_batch_one_is_read_in_place(compare):
    x = RNG.standard_normal((1, 6, 2, 2)).astype(np.float32)

    def make(b):
        a = b.input("x", data_type="float32", shape=[1, 6, 2, 2])
        mid = b.relu(a)
        p, q, r = b.split(mid, [1, 2, 3], axis=1)
        return b.build({"y": b.add(b.reduce_sum(p, axes=[1]), b.reduce_sum(q, axes=[1])), "r": b.exp(r),
                        "again": b.sigmoid(mid)})

    graph, out = compare(make, {"x": x})
    assert "split" not in _core.plan_steps(graph)
    assert "1 splits read in place" in _copy_elision_log(graph)
    m = np.maximum(x, 0)
    np.testing.assert_allclose(out["y"], m[:, :1].sum(1) + m[:, 1:3].sum(1), rtol=1e-6)
    np.testing.assert_allclose(out["r"], np.exp(m[:, 3:]), rtol=1e-6)


def test_split_of_a_graph_input_and_a_split_output_kept(compare):
    x = RNG.standard_normal((4, 3)).astype(np.float32)

    def make(b):
        a = b.input("x", data_type="float32", shape=[4, 3])
        first, second = b.split(a, 2)  # axis 0: contiguous
        return b.build({"first": first, "neg": b.neg(second)})

    graph, out = compare(make, {"x": x})
    assert "split" in _core.plan_steps(graph)  # a piece is a graph output: it gets its own tensor
    np.testing.assert_array_equal(out["first"], x[:2])

    def make_inner(b):
        a = b.input("x", data_type="float32", shape=[4, 3])
        first, second = b.split(a, 2)
        return b.build({"y": b.concat([b.neg(second), b.abs(first)], 0)})

    graph, out = compare(make_inner, {"x": x})
    assert _core.plan_steps(graph) == ["neg", "abs"]
    np.testing.assert_array_equal(out["y"], np.concatenate([-x[2:], np.abs(x[:2])], 0))


def test_split_pieces_joined_again_by_concat(compare):
    """A split's pieces already live in its input: the concat copies them (they cannot move twice)."""
    x = RNG.standard_normal((1, 4, 3)).astype(np.float32)

    def make(b):
        a = b.input("x", data_type="float32", shape=[1, 4, 3])
        p, q = b.split(b.exp(a), 2, axis=1)
        return b.build({"y": b.concat([q, p], 1)})

    graph, out = compare(make, {"x": x})
    e = np.exp(x)
    np.testing.assert_allclose(out["y"], np.concatenate([e[:, 2:], e[:, :2]], 1), rtol=1e-6)


def _c2f_block():
    """YOLO's C2f shape: conv pieces (with fused epilogues) concatenated, then convolved."""
    w1 = RNG.standard_normal((3, 4, 3, 3)).astype(np.float32)
    w2 = RNG.standard_normal((5, 4, 1, 1)).astype(np.float32)
    w3 = RNG.standard_normal((2, 12, 1, 1)).astype(np.float32)

    def make(b):
        a = b.input("x", data_type="float32", shape=[1, 4, 6, 6])
        c1 = b.relu(b.conv2d(a, b.constant(w1), padding=[1, 1, 1, 1]))
        c2 = b.clamp(b.conv2d(a, b.constant(w2)), min_value=0.0, max_value=6.0)
        joined = b.concat([c1, c2, b.sigmoid(a)], 1)
        return b.build({"y": b.conv2d(joined, b.constant(w3))})
    return make, {"x": RNG.standard_normal((1, 4, 6, 6)).astype(np.float32)}


def test_conv_outputs_concatenated_then_convolved(context, monkeypatch, same_results):
    """In NCHW (nhwc_regions off) the conv pieces are written into one buffer read by a conv."""
    make, feeds = _c2f_block()
    monkeypatch.setenv("WEBNN_DISABLE_PASSES", "nhwc_regions")
    graph = make(webnn.MLGraphBuilder(context))
    monkeypatch.setenv("WEBNN_DISABLE_PASSES", "nhwc_regions,copy_elision")
    plain = make(webnn.MLGraphBuilder(context))
    same_results(graph, plain, feeds)
    assert _core.plan_steps(graph) == ["conv2d+relu", "conv2d+clamp", "sigmoid", "conv2d"]


def test_channels_last_concat_copies(checked_twice):
    """The same block channels-last (nhwc_regions): a channel concat is no longer contiguous pieces,
    so it copies; the results stay those of the NCHW plan."""
    make, feeds = _c2f_block()
    graph, _ = checked_twice(make, feeds, "nhwc_regions")
    assert _core.plan_steps(graph) == ["transpose", "conv2d+relu", "conv2d+clamp", "sigmoid", "concat", "conv2d",
                                       "transpose"]


def test_split_outputs_in_order_inside_a_concat(compare):
    """C2f: the split's input is placed in the concat's output, so neither the split nor the concat copies."""
    x = RNG.standard_normal((1, 4, 3)).astype(np.float32)

    def make(b):
        a = b.input("x", data_type="float32", shape=[1, 4, 3])
        p, q = b.split(b.exp(a), [1, 3], axis=1)
        r = b.sigmoid(q)
        return b.build({"y": b.relu(b.concat([p, q, r, b.neg(r)], 1))})

    graph, out = compare(make, {"x": x})
    assert _core.plan_steps(graph) == ["exp", "sigmoid", "neg", "relu"]
    assert _copy_elision_log(graph).startswith("1 concats written in place by their producers, 1 splits")
    e = np.exp(x.astype(np.float64))
    s = 1 / (1 + np.exp(-e[:, 1:]))
    np.testing.assert_allclose(out["y"], np.maximum(np.concatenate([e, s, -s], 1), 0), rtol=1e-6)
