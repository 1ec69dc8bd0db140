"""Builder-call fuzzer: random calls of every op with random, wrong and hostile arguments; some
graphs are built and run on random data; objects are destroyed while still in use.

Every call must return or raise a documented exception (TypeError or a webnn.MLError subclass).
Anything else is a finding: the script prints the call and exits 1. A crash kills the process;
run it as a subprocess (``tests/test_fuzz.py`` does) and read the last line of ``--log``, which
names the call in flight. Seeded and reproducible:

    python tools/fuzz_builder.py --seed 7 --seconds 60 --log /tmp/fuzz.log
"""
import argparse
import math
import random
import sys
import time

import numpy as np

import webnn
from webnn._api import snake_case

DOCUMENTED = (TypeError, webnn.MLError)
TYPES = ["float32", "float16", "int32", "uint32", "int64", "uint64", "int8", "uint8", "int4", "uint4"]
MAX_RUN_ELEMENTS = 1 << 16  # graphs whose values are larger are built but not run


def concrete_shape(shape, rng, sizes):
    """A dynamic descriptor's shape at random small sizes (one size per dimension name)."""
    return [d if isinstance(d, int) else sizes.setdefault(d.name, rng.randint(1, 3)) for d in shape]


class RaisingIndex:
    def __index__(self):
        raise ValueError("fuzz: __index__ raises")


class RaisingFloat:
    def __float__(self):
        raise ArithmeticError("fuzz: __float__ raises")


class RaisingIter:
    def __iter__(self):
        raise KeyError("fuzz: __iter__ raises")


class Finding(Exception):
    pass


def _self_list():
    items = [1, 2]
    items.append(items)
    return items


def _self_array():
    a = np.empty((), dtype=object)
    a[()] = a
    return a


class Fuzzer:
    def __init__(self, seed, log):
        self.rng = random.Random(seed)
        self.np_rng = np.random.default_rng(seed)
        self.log = log
        self.ops = webnn._core.op_infos()
        self.calls = 0
        self.graphs_run = 0
        self.context = webnn.ml.create_context(num_threads=self.rng.choice([1, 2]))
        self.new_builder()

    # ------------------------------------------------------------ values
    def shape(self):
        r = self.rng.random()
        if r < 0.03:
            return [self.rng.choice([0, 2**31, 2**32, -1, 2**40])] + [2]
        if r < 0.05:
            return [3] * 9  # beyond the maximum rank
        rank = self.rng.choice([0, 1, 1, 2, 2, 3, 4, 4, 5])
        return [self.rng.choice([1, 1, 2, 3, 4, 5, 7, 8]) for _ in range(rank)]

    def data_for(self, data_type, shape):
        storage = webnn.numpy_dtype(data_type)
        size = math.prod(shape)
        if data_type in ("int4", "uint4"):
            low, high = (-8, 7) if data_type == "int4" else (0, 15)
            return self.np_rng.integers(low, high, size=size, endpoint=True).astype(storage).reshape(shape)
        if storage.kind == "f":
            values = self.np_rng.normal(0, 4, size=size)
            if self.rng.random() < 0.2 and size:
                values[self.np_rng.integers(0, size)] = self.rng.choice([np.nan, np.inf, -np.inf, 0.0, -0.0])
            return values.astype(storage).reshape(shape)
        info = np.iinfo(storage)
        low, high = (max(info.min, -50), min(info.max, 50)) if self.rng.random() < 0.9 else (info.min, info.max)
        return self.np_rng.integers(low, high, size=size, endpoint=True, dtype=storage).reshape(shape)

    def new_operand(self):
        data_type = self.rng.choice(TYPES if self.rng.random() < 0.3 else ["float32", "float32", "float16", "int32",
                                                                            "int64", "uint8"])
        shape = self.shape()
        self.record(f"operand {data_type}{shape}")
        try:
            if self.rng.random() < 0.5 and all(isinstance(d, int) and 0 < d < 64 for d in shape):
                operand = self.builder.constant({"dataType": data_type, "shape": shape}, self.data_for(data_type, shape))
            else:
                self.input_count += 1
                operand = self.builder.input(f"in{self.input_count}", data_type=data_type, shape=shape)
        except DOCUMENTED:
            return None
        self.pool.append(operand)
        return operand

    def operand(self):
        if self.pool and self.rng.random() < 0.8:
            return self.rng.choice(self.pool)
        return self.new_operand() or (self.rng.choice(self.pool) if self.pool else None)

    def hostile(self):
        return self.rng.choice([
            None, "", "\ud800", "nchw", [], [[1]], {}, {"a": 1}, object(), RaisingIndex(), RaisingFloat(),
            RaisingIter(), _self_list(), _self_array(), np.array([1.5, np.nan]), np.zeros((2, 2)), 2**70, -2**70,
            2**2000, float("nan"), float("inf"), -0.0, True, b"bytes", 1j, np.float64(3), np.int8(-1), range(3),
            (x for x in [1, 2]), "float32", -1, 2**32, [1, "a"], [RaisingIndex()], [2**64], [-1, -2],
            webnn.MLGraphBuilder(self.context).input("foreign", data_type="float32", shape=[2]),
        ])

    def value(self, kind, enum_values):
        if self.rng.random() < 0.08:
            return self.hostile()
        rng = self.rng
        if kind == "operand":
            return self.operand()
        if kind == "operand?":
            return self.operand() if rng.random() < 0.7 else None
        if kind == "operands":
            return [self.operand() for _ in range(rng.choice([0, 1, 2, 3]))]
        if kind in ("uint", "uint_wrap"):
            return rng.choice([0, 1, 2, 3, rng.randint(0, 5), 2**31, 2**32 - 1, 2**32, -1])
        if kind == "int":
            return rng.choice([-3, -2, -1, 0, 1, 2, 3, 2**31, -(2**31) - 1])
        if kind in ("uints", "uints_wrap"):
            return [rng.choice([0, 1, 1, 2, 2, 3, 4, 2**32 + 1, -1]) for _ in range(rng.choice([0, 1, 2, 3, 4]))]
        if kind == "uint_or_uints":
            return self.value("uint", ()) if rng.random() < 0.5 else self.value("uints", ())
        if kind in ("double", "float", "number"):
            return rng.choice([0.0, 1.0, -1.5, 1e-5, 0.5, 3, 1e39, -1e39, float("nan"), float("inf"), 2**64])
        if kind == "floats":
            return [rng.choice([0.5, 1.0, 2.0, 3.0, -1.0, 0.0, float("nan")]) for _ in range(rng.choice([0, 1, 2, 3]))]
        if kind == "bool":
            return rng.random() < 0.5
        if kind == "data_type":
            return rng.choice(TYPES + ["bool", "float64"])
        if kind == "enum":
            return rng.choice(list(enum_values) + ["bogus"]) if enum_values else "bogus"
        if kind == "enums":
            return [rng.choice(list(enum_values) or ["x"]) for _ in range(rng.choice([0, 1, 2]))]
        return self.hostile()

    # ------------------------------------------------------------ actions
    def record(self, text):
        self.log.write(f"{self.calls} {text}\n")
        self.log.flush()

    def guarded(self, what, fn):
        self.calls += 1
        self.record(what)
        try:
            return fn()
        except DOCUMENTED:
            return None
        except Exception as error:  # noqa: BLE001 - anything else is what the fuzzer looks for
            raise Finding(f"{what}: undocumented {type(error).__name__}: {error}") from error

    def new_builder(self):
        self.builder = webnn.MLGraphBuilder(self.context)
        self.pool, self.outputs, self.input_count = [], [], 0

    def call_op(self):
        info = self.rng.choice(self.ops)
        name = snake_case(info["name"])
        args = [self.value(p["kind"], p["enum_values"]) for p in info["arguments"]]
        if args and self.rng.random() < 0.05:
            args.pop() if self.rng.random() < 0.5 else args.append(self.hostile())
        options = {}
        for p in info["options"]:
            if self.rng.random() < 0.4:
                options[snake_case(p["name"])] = self.value(p["kind"], p["enum_values"])
        if self.rng.random() < 0.05:
            options[self.rng.choice(["bogus_option", "axis", "Padding", "\ud800"])] = self.hostile()
        label = self.rng.choice(["", "fuzz", "\ud800", "x" * 300])
        method = getattr(self.builder, name)
        result = self.guarded(f"{name}(args={args!r}, options={options!r}, label={label!r})",
                              lambda: method(*args, label=label, **options))
        for operand in result if isinstance(result, list) else [result]:
            if isinstance(operand, webnn.MLOperand):
                self.pool.append(operand)
                self.outputs.append(operand)

    def build_and_run(self):
        if not self.outputs:
            return
        chosen = self.rng.sample(self.outputs, min(len(self.outputs), self.rng.choice([1, 2, 3])))
        outputs = {f"out{i}": o for i, o in enumerate(chosen)}
        graph = self.guarded(f"build({len(outputs)} outputs)", lambda: self.builder.build(outputs))
        self.new_builder()
        if graph is None:
            return
        dims = {}
        shapes = {name: concrete_shape(d["shape"], self.rng, dims) for name, d in graph.input_descriptors.items()}
        outputs = self.guarded("output_descriptors_for", lambda: graph.output_descriptors_for(shapes))
        if outputs is None:
            return
        sizes = [math.prod(s) for s in shapes.values()] + [math.prod(d["shape"]) for d in outputs.values()]
        if sum(sizes) > MAX_RUN_ELEMENTS:
            return
        feeds = {name: self.data_for(d["dataType"], shapes[name]) for name, d in graph.input_descriptors.items()}
        if self.rng.random() < 0.05 and feeds:
            feeds[next(iter(feeds))] = self.hostile()
        self.graphs_run += 1
        self.guarded(f"compute({sorted(feeds)})", lambda: graph.compute(feeds))
        if self.rng.random() < 0.2:
            self.guarded("graph.destroy + compute", lambda: (graph.destroy(), graph.compute(feeds)))

    def lose_context(self):
        context = self.context
        self.guarded("context.destroy + builder use", lambda: (context.destroy(), self.builder.relu(self.operand())))
        self.context = webnn.ml.create_context(num_threads=self.rng.choice([1, 2]))
        self.new_builder()

    def step(self):
        r = self.rng.random()
        if r < 0.85:
            self.call_op()
        elif r < 0.97:
            self.build_and_run()
        elif r < 0.99:
            self.new_builder()
        else:
            self.lose_context()


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--seconds", type=float, default=10)
    parser.add_argument("--calls", type=int, default=0, help="stop after this many calls (0: only --seconds)")
    parser.add_argument("--log", default="/dev/null", help="each call is written here before it runs")
    args = parser.parse_args(argv)
    deadline = time.monotonic() + args.seconds
    with open(args.log, "w") as log:
        fuzzer = Fuzzer(args.seed, log)
        try:
            while time.monotonic() < deadline and not (args.calls and fuzzer.calls >= args.calls):
                fuzzer.step()
        except Finding as finding:
            print(f"fuzz_builder: seed {args.seed}, call {fuzzer.calls}: {finding}", file=sys.stderr)
            return 1
    print(f"fuzz_builder: seed {args.seed}: {fuzzer.calls} calls, {fuzzer.graphs_run} graphs run, no finding")
    return 0


if __name__ == "__main__":
    sys.exit(main())
