"""The asynchronous API: build_async, dispatch and read_tensor_async in a coroutine. Dispatches
queue on the context's timeline; reads resolve when the work before them is done."""
import asyncio
from typing import List

import numpy as np
import numpy.typing as npt

import webnn


async def run(steps: int) -> List[npt.NDArray[np.float32]]:
    """Runs ``y = x * 2 + 1`` on ``steps`` inputs, all dispatched before any read."""
    context = await webnn.create_context_async()
    builder = webnn.MLGraphBuilder(context)
    x = builder.input("x", data_type="float32", shape=[3])
    y = builder.add(builder.mul(x, builder.constant("float32", 2.0)), builder.constant("float32", 1.0))
    graph = await builder.build_async({"y": y})

    outputs = []
    for step in range(steps):
        x_tensor = await context.create_tensor_async(data_type="float32", shape=[3], writable=True)
        y_tensor = await context.create_tensor_async(data_type="float32", shape=[3], readable=True)
        context.write_tensor(x_tensor, np.full(3, step, np.float32))
        context.dispatch(graph, {"x": x_tensor}, {"y": y_tensor})
        outputs.append(y_tensor)
    return list(await asyncio.gather(*(context.read_tensor_async(t) for t in outputs)))


def main() -> List[npt.NDArray[np.float32]]:
    results = asyncio.run(run(4))
    for step, result in enumerate(results):
        np.testing.assert_array_equal(result, np.full(3, step * 2 + 1, np.float32))
    return results


if __name__ == "__main__":
    for row in main():
        print(row)
