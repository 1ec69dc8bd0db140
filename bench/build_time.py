"""Build and load time of huge graphs: near-linear in the number of operations.

For each graph kind of tests/test_build_scaling.py: the builder calls, build() and, for the saved
.webnn file, load(), at n and 4n operations, with the ratio (linear is 4x). Then one graph of
--million operations (1,000,000 by default): an element-wise chain (relu, add) built with the
builder, saved, and loaded again; its result is checked.

    python bench/build_time.py [--base 20000] [--million 1000000]
"""
import argparse
import platform
import resource
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

import webnn

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from test_build_scaling import GRAPHS, _elementwise_chain  # noqa: E402


def cpu_name():
    for line in Path("/proc/cpuinfo").read_text().splitlines() if Path("/proc/cpuinfo").exists() else []:
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return platform.processor() or "unknown CPU"


def timed(run):
    start = time.perf_counter()
    result = run()
    return result, time.perf_counter() - start


def measure(context, kind, n, folder):
    b = webnn.MLGraphBuilder(context)
    outputs, calls = timed(lambda: GRAPHS[kind](b, n))
    _, build = timed(lambda: b.build(outputs))
    path = str(Path(folder) / f"{kind.replace(' ', '_')}_{n}.webnn")
    webnn.save(path, outputs)
    _, load = timed(lambda: webnn.load(path, context))
    return calls, build, load


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", type=int, default=20000, help="n for the n vs 4n table")
    parser.add_argument("--million", type=int, default=1_000_000, help="operations of the large chain")
    args = parser.parse_args()
    context = webnn.ml.create_context()
    print(f"webnn {webnn.__version__} on {cpu_name()}, isa {webnn._core.active_isa()}, "
          f"{context.op_support_limits().get('preferredInputLayout', '')} layout")
    with tempfile.TemporaryDirectory() as folder:
        print(f"\n{'graph':<20} {'ops':>8} {'calls s':>8} {'build s':>8} {'load s':>8}   4n/n: build, load")
        for kind in GRAPHS:
            small = measure(context, kind, args.base, folder)
            large = measure(context, kind, 4 * args.base, folder)
            for n, (calls, build, load) in ((args.base, small), (4 * args.base, large)):
                print(f"{kind:<20} {n:>8} {calls:>8.3f} {build:>8.3f} {load:>8.3f}", end="")
                print(f"   {large[1] / small[1]:.1f}x, {large[2] / small[2]:.1f}x" if n != args.base else "")

        n = args.million
        b = webnn.MLGraphBuilder(context)
        outputs, calls = timed(lambda: _elementwise_chain(b, n))
        graph, build = timed(lambda: b.build(outputs))
        path = str(Path(folder) / "million.webnn")
        _, save = timed(lambda: webnn.save(path, outputs))
        del b, outputs
        loaded, load = timed(lambda: webnn.load(path, context))
        x = np.array([-1, 0, 1, 2], np.float32)
        expected = np.array([n // 2, n // 2, n // 2 + 1, n // 2 + 2], np.float32)
        for g in (graph, loaded):
            np.testing.assert_array_equal(g.compute({"x": x})["y"], expected)
        size = Path(path).stat().st_size
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(f"\n{n:,}-op element-wise chain: builder calls {calls:.2f} s + build {build:.2f} s = "
              f"{calls + build:.2f} s; save {save:.2f} s ({size / 1e6:.1f} MB); load {load:.2f} s; "
              f"peak RSS {peak:.0f} MB; results checked")


if __name__ == "__main__":
    main()
