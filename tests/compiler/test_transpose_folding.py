"""Transpose folding (compiler/passes/transpose_folding.cc): transpose pairs compose into one (or into a
view when they cancel), and a transpose that only moves size-1 dimensions is a view; results are
bit-identical to the unfolded plan."""
import numpy as np
import pytest

import webnn
from webnn import _core

RNG = np.random.default_rng(3)


def _both(context, monkeypatch, make, feeds):
    graph = make(webnn.MLGraphBuilder(context))
    monkeypatch.setenv("WEBNN_DISABLE_PASSES", "transpose_folding")
    plain = make(webnn.MLGraphBuilder(context))
    monkeypatch.delenv("WEBNN_DISABLE_PASSES")
    got, want = graph.compute(feeds), plain.compute(feeds)
    for name in want:
        np.testing.assert_array_equal(got[name], want[name])
    return graph, got


@pytest.mark.parametrize("first,second,steps", [
    ([0, 2, 3, 1], [0, 3, 1, 2], ["exp"]),                    # NCHW -> NHWC -> NCHW: cancel, a view
    ([0, 2, 1, 3], [0, 1, 3, 2], ["exp", "transpose"]),       # one composed transpose
    ([3, 2, 1, 0], [3, 2, 1, 0], ["exp"]),
])
def test_pairs(context, monkeypatch, first, second, steps):
    x = RNG.standard_normal((2, 3, 4, 5)).astype(np.float32)

    def make(b):
        t = b.exp(b.input("x", data_type="float32", shape=[2, 3, 4, 5]))
        return b.build({"y": b.transpose(b.transpose(t, permutation=first), permutation=second)})

    graph, out = _both(context, monkeypatch, make, {"x": x})
    assert [s for s in _core.plan_steps(graph) if s != "reshape"] == steps
    np.testing.assert_allclose(out["y"], np.exp(x).transpose(first).transpose(second), rtol=1e-6)


def test_size_one_moves_are_views_and_shared_inner_results_stay(context, monkeypatch):
    x = RNG.standard_normal((1, 6, 1, 4)).astype(np.float32)

    def make(b):
        t = b.exp(b.input("x", data_type="float32", shape=[1, 6, 1, 4]))
        view = b.transpose(t, permutation=[2, 1, 0, 3])  # only size-1 dims move
        inner = b.transpose(t, permutation=[0, 3, 2, 1])
        return b.build({"view": b.neg(view), "inner": b.abs(inner),
                        "outer": b.transpose(inner, permutation=[0, 3, 2, 1])})  # inner is read twice

    graph, out = _both(context, monkeypatch, make, {"x": x})
    log = dict(_core.plan_passes(graph))["transpose_folding"]
    assert log == "0 transpose pairs composed, 1 transposes that move no data made views"
    e = np.exp(x)
    np.testing.assert_allclose(out["outer"], e, rtol=1e-6)
    np.testing.assert_allclose(out["view"], -e.transpose(2, 1, 0, 3), rtol=1e-6)
