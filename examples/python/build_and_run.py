"""Builds a small graph (a dense layer with ReLU) and runs it with NumPy data, twice: with
``graph.compute`` and with tensors dispatched on the context's timeline."""
import numpy as np
import numpy.typing as npt

import webnn


def dense_relu(context: webnn.MLContext, weights: npt.NDArray[np.float32],
               bias: npt.NDArray[np.float32]) -> webnn.MLGraph:
    """relu(x @ weights + bias) for a batch of 2 rows."""
    builder = webnn.MLGraphBuilder(context)
    x = builder.input("x", data_type="float32", shape=[2, weights.shape[0]])
    y = builder.add(builder.matmul(x, builder.constant(weights)), builder.constant(bias))
    return builder.build({"y": builder.relu(y, label="activation")})


def main() -> npt.NDArray[np.float32]:
    context = webnn.create_context()
    weights = (np.arange(12).reshape(4, 3) / 10).astype(np.float32)
    bias = np.array([-1.0, 0.0, 1.0], np.float32)
    graph = dense_relu(context, weights, bias)
    x = np.array([[1, -2, 3, -4], [0.5, 0.5, 0.5, 0.5]], np.float32)

    y = graph.compute({"x": x})["y"]  # a convenience: tensors created, written, read for you

    x_tensor = context.create_tensor(data_type="float32", shape=[2, 4], writable=True)
    y_tensor = context.create_tensor(data_type="float32", shape=[2, 3], readable=True)
    context.write_tensor(x_tensor, x)
    context.dispatch(graph, {"x": x_tensor}, {"y": y_tensor})
    dispatched: npt.NDArray[np.float32] = context.read_tensor(y_tensor)

    np.testing.assert_allclose(dispatched, y)
    np.testing.assert_allclose(y, np.maximum(x @ weights + bias, 0), rtol=1e-6)
    print(webnn.profiling.format_plan(graph))
    return y


if __name__ == "__main__":
    print(main())
