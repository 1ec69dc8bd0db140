"""Transpose folding (compiler/passes/transpose_folding.cc): transpose pairs compose into one (or into a
view when they cancel), and a transpose that only moves size-1 dimensions is a view; results are
bit-identical to the unfolded plan."""
import numpy as np
import pytest

from webnn import _core

RNG = np.random.default_rng(3)


@pytest.fixture
def both(checked_twice):
    return lambda make, feeds: checked_twice(make, feeds, "transpose_folding")


@pytest.mark.parametrize("first,second,steps", [
    ([0, 2, 3, 1], [0, 3, 1, 2], ["exp"]),                    # NCHW -> NHWC -> NCHW: cancel, a view
    ([0, 2, 1, 3], [0, 1, 3, 2], ["exp", "transpose"]),       # one composed transpose
    ([3, 2, 1, 0], [3, 2, 1, 0], ["exp"]),
])
def test_pairs(both, first, second, steps):
    x = RNG.standard_normal((2, 3, 4, 5)).astype(np.float32)

    def make(b):
        t = b.exp(b.input("x", data_type="float32", shape=[2, 3, 4, 5]))
        return b.build({"y": b.transpose(b.transpose(t, permutation=first), permutation=second)})

    graph, out = both(make, {"x": x})
    assert [s for s in _core.plan_steps(graph) if s != "reshape"] == steps
    np.testing.assert_allclose(out["y"], np.exp(x).transpose(first).transpose(second), rtol=1e-6)


def test_size_one_moves_are_views_and_shared_inner_results_stay(both):
    x = RNG.standard_normal((1, 6, 1, 4)).astype(np.float32)

    def make(b):
        t = b.exp(b.input("x", data_type="float32", shape=[1, 6, 1, 4]))
        view = b.transpose(t, permutation=[2, 1, 0, 3])  # only size-1 dims move
        inner = b.transpose(t, permutation=[0, 3, 2, 1])
        return b.build({"view": b.neg(view), "inner": b.abs(inner),
                        "outer": b.transpose(inner, permutation=[0, 3, 2, 1])})  # inner is read twice

    graph, out = both(make, {"x": x})
    log = dict(_core.plan_passes(graph))["transpose_folding"]
    assert log == "0 transpose pairs composed, 1 transposes that move no data made views"
    e = np.exp(x)
    np.testing.assert_allclose(out["outer"], e, rtol=1e-6)
    np.testing.assert_allclose(out["view"], -e.transpose(2, 1, 0, 3), rtol=1e-6)
