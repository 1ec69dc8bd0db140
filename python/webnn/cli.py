"""The ``webnn`` command line tool."""
import argparse
import sys

import numpy as np

import webnn


def _demo(args):
    """Builds conv2d -> relu -> add, runs it on the context timeline and checks it against NumPy."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((1, 3, 8, 8)).astype(np.float32)
    w = rng.standard_normal((4, 3, 3, 3)).astype(np.float32)
    b = rng.standard_normal((4,)).astype(np.float32)
    z = rng.standard_normal((1, 4, 8, 8)).astype(np.float32)

    context = webnn.ml.create_context()
    builder = webnn.MLGraphBuilder(context)
    xi = builder.input("x", data_type="float32", shape=x.shape)
    conv = builder.conv2d(xi, builder.constant(w), padding=[1, 1, 1, 1], bias=builder.constant(b), label="conv")
    out = builder.add(builder.relu(conv), builder.constant(z))
    graph = builder.build({"y": out})

    x_tensor = context.create_tensor(data_type="float32", shape=x.shape, writable=True)
    y_tensor = context.create_tensor(data_type="float32", shape=out.shape, readable=True)
    context.write_tensor(x_tensor, x)
    context.dispatch(graph, {"x": x_tensor}, {"y": y_tensor})
    result = context.read_tensor(y_tensor)

    padded = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (1, 1), (1, 1)))
    windows = np.lib.stride_tricks.sliding_window_view(padded, (3, 3), axis=(2, 3))  # n c h w kh kw
    reference = np.einsum("nchwij,ocij->nohw", windows, w.astype(np.float64)) + b[None, :, None, None]
    reference = np.maximum(reference, 0) + z
    error = float(np.max(np.abs(result - reference)))
    print(f"webnn {webnn.__version__}: conv2d -> relu -> add on the context timeline")
    print(f"output shape {list(result.shape)}, max |webnn - numpy| = {error:.3g}")
    ok = error < 1e-4
    print("OK" if ok else "MISMATCH")
    return 0 if ok else 1


def _info(args):
    context = webnn.ml.create_context()
    limits = context.op_support_limits()
    ops = [k for k, v in limits.items() if isinstance(v, dict) and k not in ("input", "constant", "output")]
    print(f"webnn {webnn.__version__}")
    print(f"threads: {context.num_threads}")
    print(f"operations: {len(ops)}")
    return 0


def main(argv=None):
    parser = argparse.ArgumentParser(prog="webnn", description="WebNN on the CPU")
    commands = parser.add_subparsers(dest="command")
    commands.add_parser("demo", help="run a small graph and check it against NumPy")
    commands.add_parser("info", help="print the version, threads and op count")
    args = parser.parse_args(argv)
    handlers = {"demo": _demo, "info": _info}
    if args.command is None:
        parser.print_help()
        return 2
    try:
        return handlers[args.command](args)
    except (TypeError, ValueError, webnn.MLError) as error:
        print(f"webnn {args.command}: error: {error}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
