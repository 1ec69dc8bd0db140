"""The memory plan (compiler/passes/memory_plan.cc): output binding, views, the arena, and which
constants the plan keeps."""
import numpy as np

import webnn


def test_views_and_duplicate_outputs_are_copied(context):
    builder = webnn.MLGraphBuilder(context)
    a = builder.input("a", data_type="float32", shape=[2, 3])
    r = builder.relu(a)
    view = builder.reshape(r, [3, 2])
    input_view = builder.reshape(a, [6])
    out = builder.build({"r": r, "r_again": r, "view": view, "input_view": input_view}).compute(
        {"a": np.arange(-3, 3, dtype=np.float32).reshape(2, 3)})
    np.testing.assert_array_equal(out["r"], out["r_again"])
    np.testing.assert_array_equal(out["view"], out["r"].reshape(3, 2))
    np.testing.assert_array_equal(out["input_view"], np.arange(-3, 3, dtype=np.float32))


def test_arena_reuse_keeps_values_apart(context):
    """A long chain reuses arena slots; every intermediate must still be right."""
    builder = webnn.MLGraphBuilder(context)
    x = builder.input("x", data_type="float32", shape=[64])
    value = x
    for i in range(20):
        value = builder.add(builder.mul(value, builder.constant("float32", 0.5)), builder.constant("float32", 1.0))
    data = np.linspace(-4, 4, 64).astype(np.float32)
    expected = data.astype(np.float64)
    for i in range(20):
        expected = expected * 0.5 + 1.0
    np.testing.assert_allclose(builder.build({"y": value}).compute({"x": data})["y"], expected, rtol=1e-6)


def test_packed_weights_keep_no_raw_copy(context):
    rng = np.random.default_rng(5)
    w = rng.normal(size=(64, 32)).astype(np.float32)
    f = rng.normal(size=(8, 3, 3, 3)).astype(np.float32)
    bias = rng.normal(size=(8,)).astype(np.float32)
    shift = rng.normal(size=(32,)).astype(np.float32)
    builder = webnn.MLGraphBuilder(context)
    x = builder.input("x", data_type="float32", shape=[4, 64])
    img = builder.input("img", data_type="float32", shape=[1, 3, 6, 6])
    y = builder.add(builder.matmul(x, builder.constant(w)), builder.constant(shift))  # shift: fused bias row
    z = builder.conv2d(img, builder.constant(f), bias=builder.constant(bias))
    shared = builder.constant(w)
    twice = builder.add(builder.matmul(x, shared), builder.reduce_sum(shared, axes=[0], keep_dimensions=True))
    graph = builder.build({"y": y, "z": z, "twice": twice})
    # Packed: w, f, bias. `shared` is packed too: its sum is folded at build into a row of 32 values.
    # Read raw at run time: the fused bias rows, shift and that sum.
    assert webnn._core.plan_constant_bytes(graph) == shift.nbytes + 32 * 4
    del builder, x, img, y, z, shared, twice
    xv = rng.normal(size=(4, 64)).astype(np.float32)
    iv = rng.normal(size=(1, 3, 6, 6)).astype(np.float32)
    out = graph.compute({"x": xv, "img": iv})
    np.testing.assert_allclose(out["y"], xv @ w + shift, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(out["twice"], xv @ w + w.sum(axis=0), rtol=1e-4, atol=1e-4)
    ref = np.zeros((1, 8, 4, 4))
    for o in range(8):
        for i in range(4):
            for j in range(4):
                ref[0, o, i, j] = np.sum(iv[0, :, i:i + 3, j:j + 3] * f[o]) + bias[o]
    np.testing.assert_allclose(out["z"], ref, rtol=1e-4, atol=1e-4)
