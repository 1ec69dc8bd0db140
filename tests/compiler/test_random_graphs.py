"""The optional passes against random graphs: seeded random DAGs of element-wise ops, concat, split,
conv2d (+ batchNormalization / per-channel mul and add), clamp and transposes, built with every pass and
with every optional pass disabled. Without scale folding and transpose absorption (which round
differently: folded weights, filter taps summed in another order) the results must be bit-identical;
with them, equal to float32 rounding."""
import numpy as np
import pytest

import webnn

OPTIONAL = ("constant_folding,op_recognition,transpose_folding,scale_folding,nhwc_regions,epilogue_fusion,"
            "transpose_absorption,copy_elision,in_place")
UNARY = ["relu", "sigmoid", "tanh", "neg", "abs", "exp", "hard_swish", "elu", "softsign"]
BINARY = ["add", "mul", "sub", "max", "min"]


class RandomGraph:
    """Replays the same random choices on any builder (so two builds see the same graph)."""

    def __init__(self, seed):
        self.seed = seed

    def make(self, builder):
        rng = np.random.default_rng(self.seed)
        batch = int(rng.choice([1, 1, 2]))
        channels, size = int(rng.choice([2, 4, 6])), int(rng.choice([3, 5]))
        x = builder.input("x", data_type="float32", shape=[batch, channels, size, size])
        pool = [x]

        def pick(same_as=None):
            candidates = [p for p in pool if same_as is None or p.shape == same_as.shape]
            return candidates[int(rng.integers(len(candidates)))]

        def constant(shape):
            return builder.constant(rng.uniform(0.5, 1.5, shape).astype(np.float32))

        for _ in range(int(rng.integers(4, 14))):
            kind = rng.choice(["unary", "binary", "broadcast", "concat", "split", "conv", "clamp", "transpose"])
            a = pick()
            n, c, h, w = a.shape
            if kind == "unary":
                pool.append(getattr(builder, UNARY[int(rng.integers(len(UNARY)))])(a))
            elif kind == "binary":
                pool.append(getattr(builder, BINARY[int(rng.integers(len(BINARY)))])(a, pick(a)))
            elif kind == "broadcast":
                op = getattr(builder, BINARY[int(rng.integers(len(BINARY)))])
                pool.append(op(constant([c, 1, 1]), a) if rng.random() < 0.5 else op(a, constant([c, 1, 1])))
            elif kind == "concat":
                pieces = [a] + [pick() for _ in range(int(rng.integers(1, 3)))]
                pieces = [p for p in pieces if p.shape[0] == n and p.shape[2:] == [h, w]]
                pool.append(builder.concat([builder.neg(p) if rng.random() < 0.5 else p for p in pieces], 1))
            elif kind == "split" and c % 2 == 0:
                pool.extend(builder.split(a, 2, axis=1))
            elif kind == "conv":
                out = int(rng.choice([2, 4, 8]))
                k = int(rng.choice([1, 3]))
                weights = builder.constant(rng.standard_normal((out, c, k, k)).astype(np.float32) * 0.3)
                y = builder.conv2d(a, weights, padding=[k // 2] * 4)
                if rng.random() < 0.6:
                    y = builder.batch_normalization(y, constant([out]), constant([out]), scale=constant([out]),
                                                    bias=constant([out]))
                if rng.random() < 0.4:
                    y = builder.add(builder.mul(y, constant([out, 1, 1])), constant([1, out, 1, 1]))
                if rng.random() < 0.5:
                    y = builder.relu(y)
                pool.append(y)
            elif kind == "clamp":
                pool.append(builder.clamp(a, min_value=-0.5, max_value=float(rng.uniform(0.5, 2))))
            elif kind == "transpose":
                pool.append(builder.transpose(builder.transpose(a, permutation=[0, 2, 3, 1]),
                                              permutation=[0, 3, 1, 2]))
        count = int(rng.integers(1, 4))
        outputs = {f"out{i}": pool[int(rng.integers(1, len(pool)))] if len(pool) > 1 else builder.relu(x)
                   for i in range(count)}
        feeds = {"x": rng.standard_normal((batch, channels, size, size)).astype(np.float32)}
        return builder.build(outputs), feeds


# transpose_absorption fires in few of these graphs (2-6 channel inputs, rarely two convolutions):
# tests/compiler/test_transpose_absorption.py covers it.
ACTIVE = {"transpose_folding": 0, "scale_folding": 0, "nhwc_regions": 0, "epilogue_fusion": 0, "copy_elision": 0,
          "in_place": 0}


def _build(context, monkeypatch, graph, disabled):
    if disabled:
        monkeypatch.setenv("WEBNN_DISABLE_PASSES", disabled)
    else:
        monkeypatch.delenv("WEBNN_DISABLE_PASSES", raising=False)
    return graph.make(webnn.MLGraphBuilder(context))


@pytest.mark.parametrize("seed", range(100))
def test_optional_passes_change_no_result(context, monkeypatch, seed):
    graph = RandomGraph(seed)
    plain, feeds = _build(context, monkeypatch, graph, OPTIONAL)
    want = plain.compute(feeds)
    exact, _ = _build(context, monkeypatch, graph, "scale_folding,transpose_absorption")
    for name, value in exact.compute(feeds).items():
        np.testing.assert_array_equal(value, want[name], err_msg=f"seed {seed}, {name}")
    optimized, _ = _build(context, monkeypatch, graph, "")
    log = dict(webnn._core.plan_passes(optimized))
    for name in ACTIVE:
        ACTIVE[name] += not log[name].startswith("0 ")
    for name, value in optimized.compute(feeds).items():
        scale = max(1.0, float(np.abs(want[name]).max()))
        np.testing.assert_allclose(value, want[name], rtol=1e-4, atol=1e-5 * scale, err_msg=f"seed {seed}, {name}")


def test_random_graphs_exercise_every_optional_pass():
    """Runs after the seeds above (same module): each pass changed at least 5 of the 100 plans."""
    if sum(ACTIVE.values()) == 0:
        pytest.skip("run with the seeded tests")
    assert min(ACTIVE.values()) >= 5, ACTIVE
