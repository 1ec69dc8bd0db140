"""File fuzzer: mutated ``.webnn`` models (text and JSON graphs, WGWT manifests and weights with
and without the header, safetensors) and mutated ONNX models, loaded, built and run.

Every load must succeed or raise a documented exception (webnn.DataError for malformed files,
TypeError from the builder's validation, another webnn.MLError). Anything else is a finding:
the script prints it, saves the mutated file set under ``--crash-dir`` and exits 1. Seeded:

    python tools/fuzz_files.py --seed 3 --seconds 60 --log /tmp/files.log
"""
import argparse
import warnings
import io
import math
import os
import random
import re
import shutil
import sys
import tempfile
import time

import numpy as np

import webnn

DOCUMENTED = (TypeError, webnn.MLError)
MAX_RUN_ELEMENTS = 1 << 16
SPECIAL_NUMBERS = [b"0", b"-1", b"1", b"65", b"2147483647", b"2147483648", b"4294967296", b"18446744073709551616",
                   b"1e400", b"-1e400", b"nan", b"inf", b"1.5", b"99999999999999999999999", b"-0"]


def seed_outputs(builder, four_bit):
    """A model that touches many ops and data types (its graph, weights and scalars; int4 weights
    unless the format cannot hold them)."""
    rng = np.random.default_rng(0)
    x = builder.input("x", data_type="float32", shape=[1, 2, 6, 6])
    w = builder.constant(rng.normal(size=(3, 2, 3, 3)).astype(np.float32))
    b = builder.constant(rng.normal(size=(3,)).astype(np.float32))
    y = builder.conv2d(x, w, bias=b, padding=[1, 1, 1, 1])
    y = builder.clamp(builder.relu(y), max_value=6.0)
    y = builder.max_pool2d(y, window_dimensions=[2, 2], strides=[2, 2])
    flat = builder.reshape(y, [1, 27])
    gathered = builder.gather(flat, builder.constant(np.array([0, 5, 26], np.int32)), axis=1)
    t = builder.transpose(builder.reshape(y, [3, 9]))
    q = builder.quantize_linear(t, builder.constant(np.full((1, 1), 0.5, np.float32)),
                                builder.constant(np.zeros((1, 1), np.int8)))
    d = builder.dequantize_linear(q, builder.constant(np.full((1, 1), 0.5, np.float32)),
                                  builder.constant(np.zeros((1, 1), np.int8)))
    half = builder.cast(builder.softmax(flat, 1), "float16")
    scaled = builder.mul(gathered, builder.constant("float32", 0.25))
    outputs = {"scaled": scaled, "d": d, "half": half}
    if four_bit:
        q4 = builder.constant({"dataType": "int4", "shape": [3, 3]}, rng.integers(-8, 7, (3, 3), endpoint=True).astype(np.int8))
        zero = builder.constant({"dataType": "int4", "shape": [1, 3]}, np.array([[0, -1, 7]], np.int8))
        outputs["w4"] = builder.dequantize_linear(q4, builder.constant(np.full((1, 3), 0.1, np.float32)), zero)
    return outputs


def onnx_seed():
    try:
        from onnx import TensorProto, helper, numpy_helper
    except ImportError:
        return None
    rng = np.random.default_rng(1)
    w = numpy_helper.from_array(rng.normal(size=(4, 3, 3, 3)).astype(np.float32), "w")
    shape = numpy_helper.from_array(np.array([1, -1], np.int64), "shape")
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c"], ["r"]),
             helper.make_node("GlobalAveragePool", ["r"], ["p"]),
             helper.make_node("Reshape", ["p", "shape"], ["f"]),
             helper.make_node("Softmax", ["f"], ["y"], axis=1)]
    graph = helper.make_graph(nodes, "seed", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 8, 8])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])], [w, shape])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString()


def concrete_shape(shape, rng, sizes):
    """A dynamic descriptor's shape at random small sizes (one size per dimension name)."""
    return [d if isinstance(d, int) else sizes.setdefault(d.name, rng.randint(1, 3)) for d in shape]


class Finding(Exception):
    pass


class FileFuzzer:
    def __init__(self, seed, log, work, crash_dir):
        self.rng = random.Random(seed)
        self.np_rng = np.random.default_rng(seed)
        self.log, self.work, self.crash_dir = log, work, crash_dir
        self.context = webnn.ml.create_context(num_threads=1)
        self.seeds = self.make_seeds()
        self.onnx = onnx_seed()
        self.loads = self.runs = 0

    def make_seeds(self):
        """{kind: {file name: bytes}}: the seed model in every format and weights layout."""
        seeds = {}
        for kind, graph_name, fmt, weights in [("text-blob", "m.webnn", "text", "blob"),
                                              ("json-headerless", "m.json", "json", "headerless"),
                                              ("text-safetensors", "m.webnn", "text", "safetensors")]:
            folder = os.path.join(self.work, "seed-" + kind)
            os.makedirs(folder)
            outputs = seed_outputs(webnn.MLGraphBuilder(self.context), four_bit=weights != "safetensors")
            webnn.save(os.path.join(folder, graph_name), outputs, format=fmt, weights=weights)
            seeds[kind] = {name: open(os.path.join(folder, name), "rb").read() for name in sorted(os.listdir(folder))}
        return seeds

    # ------------------------------------------------------------ mutations
    def mutate_bytes(self, data):
        rng = self.rng
        data = bytearray(data)
        for _ in range(rng.choice([1, 1, 2, 4, 8])):
            op = rng.random()
            if not data:
                data += bytes([rng.randrange(256)])
            elif op < 0.3:
                data[rng.randrange(len(data))] = rng.randrange(256)
            elif op < 0.45:
                del data[rng.randrange(len(data)):]
            elif op < 0.6:
                at = rng.randrange(len(data))
                data[at:at] = bytes(rng.randrange(256) for _ in range(rng.choice([1, 4, 16])))
            elif op < 0.75:
                a = rng.randrange(len(data))
                b = min(len(data), a + rng.choice([4, 16, 64]))
                at = rng.randrange(len(data))
                data[at:at] = data[a:b]
            else:
                numbers = [m.span() for m in re.finditer(rb"-?\d+(\.\d+)?(e-?\d+)?", bytes(data))]
                if numbers:
                    a, b = rng.choice(numbers)
                    data[a:b] = rng.choice(SPECIAL_NUMBERS)
        return bytes(data)

    def mutate_text_lines(self, data):
        lines = data.split(b"\n")
        rng = self.rng
        for _ in range(rng.choice([1, 2])):
            i = rng.randrange(len(lines))
            choice = rng.random()
            if choice < 0.3:
                del lines[i]
            elif choice < 0.6:
                lines.insert(rng.randrange(len(lines) + 1), lines[i])
            else:
                j = rng.randrange(len(lines))
                lines[i], lines[j] = lines[j], lines[i]
        return b"\n".join(lines)

    # ------------------------------------------------------------ one iteration
    def record(self, text):
        self.log.write(text + "\n")
        self.log.flush()

    def check(self, what, fn, files):
        try:
            return fn()
        except DOCUMENTED:
            return None
        except Exception as error:  # noqa: BLE001 - anything else is a finding
            saved = self.save_crash(files)
            raise Finding(f"{what}: undocumented {type(error).__name__}: {error} (files saved in {saved})") from error

    def save_crash(self, files):
        os.makedirs(self.crash_dir, exist_ok=True)
        folder = tempfile.mkdtemp(prefix="case-", dir=self.crash_dir)
        for name, data in files.items():
            with open(os.path.join(folder, name), "wb") as f:
                f.write(data)
        return folder

    def run_graph(self, graph, what, files):
        dims = {}
        shapes = {name: concrete_shape(d["shape"], self.rng, dims) for name, d in graph.input_descriptors.items()}
        try:
            outputs = graph.output_descriptors_for(shapes)
        except (TypeError, webnn.MLError):
            return  # not valid at these sizes: said so, in the documented error
        if sum(math.prod(s) for s in shapes.values()) + sum(math.prod(d["shape"]) for d in outputs.values()) \
                > MAX_RUN_ELEMENTS:
            return
        feeds = {}
        for name, d in graph.input_descriptors.items():
            dtype = webnn.numpy_dtype(d["dataType"])
            feeds[name] = (self.np_rng.normal(size=shapes[name]) * 3).astype(dtype) if dtype.kind == "f" else \
                np.zeros(shapes[name], dtype)
        self.runs += 1
        self.check(what + " compute", lambda: graph.compute(feeds), files)

    def webnn_case(self):
        kind = self.rng.choice(sorted(self.seeds))
        files = dict(self.seeds[kind])
        target = self.rng.choice(sorted(files))
        data = files[target]
        if target.endswith((".webnn", ".json")) and self.rng.random() < 0.3:
            data = self.mutate_text_lines(data)
        files[target] = self.mutate_bytes(data)
        folder = os.path.join(self.work, "case")
        shutil.rmtree(folder, ignore_errors=True)
        os.makedirs(folder)
        for name, content in files.items():
            with open(os.path.join(folder, name), "wb") as f:
                f.write(content)
        graph_name = "m.json" if "m.json" in files else "m.webnn"
        what = f"{kind}: mutated {target}"
        self.record(what)
        self.loads += 1
        graph = self.check(what + " load", lambda: webnn.load(os.path.join(folder, graph_name), self.context), files)
        if graph is not None:
            self.run_graph(graph, what, files)
        self.check(what + " summary", lambda: webnn.formats.summary(os.path.join(folder, graph_name)), files)

    def onnx_case(self):
        import webnn.onnx

        data = self.mutate_bytes(self.onnx)
        what = "onnx: mutated model"
        self.record(what)
        self.loads += 1
        graph = self.check(what + " load", lambda: webnn.onnx.load(data, self.context), {"model.onnx": data})
        if graph is not None:
            self.run_graph(graph, what, {"model.onnx": data})

    def step(self):
        if self.onnx is not None and self.rng.random() < 0.3:
            self.onnx_case()
        else:
            self.webnn_case()


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--seconds", type=float, default=10)
    parser.add_argument("--log", default="/dev/null", help="each case is written here before it runs")
    parser.add_argument("--crash-dir", default="fuzz-findings", help="where failing file sets are saved")
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore")  # the ONNX importer's notes on malformed models
    deadline = time.monotonic() + args.seconds
    with open(args.log, "w") as log, tempfile.TemporaryDirectory() as work:
        fuzzer = FileFuzzer(args.seed, log, work, args.crash_dir)
        try:
            while time.monotonic() < deadline:
                fuzzer.step()
        except Finding as finding:
            print(f"fuzz_files: seed {args.seed}, load {fuzzer.loads}: {finding}", file=sys.stderr)
            return 1
    print(f"fuzz_files: seed {args.seed}: {fuzzer.loads} files loaded, {fuzzer.runs} graphs run, no finding")
    return 0


if __name__ == "__main__":
    sys.exit(main())
