"""opSupportLimits(): its members per op (spec §2.3), its exact allowed data types and ranks
(spec §3 / ops.tsv), and that every allowed (operand, data type, rank) builds while the rest is
rejected with a TypeError naming the label.

The per-op ``RECIPES`` table (small shapes that satisfy each op's shape rules) is shared with
``test_validation_generic.py``. Ops not registered yet are skipped, never failed.
"""
import math

import pytest

import webnn
from webnn._api import snake_case

LABEL = "lbl"
N = "N"  # "any rank": the implementation's maximum rank
MAX_TESTED_RANK = 5
SPEC_TYPES = ("float32", "float16", "int32", "uint32", "int64", "uint64", "int8", "uint8")  # the spec's "any"
ALL_TYPES = SPEC_TYPES + ("int4", "uint4")  # int4/uint4: quantize/dequantize only (beyond the spec's list)
REGISTERED = {info["name"]: info for info in webnn._core.op_infos()}
OPERAND_KINDS = ("operand", "operand?", "operands")

# The spec's allowed sets per op member (from ops.tsv; "any" = all 8 types, N = any rank).
# fmt: off
EXPECTED_LIMITS = {
    "abs": {"input": ("float32 float16 int64 int32 int8", 0, N), "output": ("float32 float16 int64 int32 int8", 0, N)},
    "add": {"a": ("any", 0, N), "b": ("any", 0, N), "output": ("any", 0, N)},
    "argMax": {"input": ("any", 1, N), "output": ("int32 int64", 0, N)},
    "argMin": {"input": ("any", 1, N), "output": ("int32 int64", 0, N)},
    "averagePool2d": {"input": ("float32 float16", 4, 4), "output": ("float32 float16", 4, 4)},
    "batchNormalization": {"input": ("float32 float16", 1, N), "mean": ("float32 float16", 1, 1), "variance": ("float32 float16", 1, 1), "scale": ("float32 float16", 1, 1), "bias": ("float32 float16", 1, 1), "output": ("float32 float16", 1, N)},
    "cast": {"input": ("any", 0, N), "output": ("any", 0, N)},
    "ceil": {"input": ("float32 float16", 0, N), "output": ("float32 float16", 0, N)},
    "clamp": {"input": ("any", 0, N), "output": ("any", 0, N)},
    "concat": {"inputs": ("any", 1, N), "output": ("any", 1, N)},
    "conv2d": {"input": ("float32 float16", 4, 4), "filter": ("float32 float16", 4, 4), "bias": ("float32 float16", 1, 1), "output": ("float32 float16", 4, 4)},
    "convTranspose2d": {"input": ("float32 float16", 4, 4), "filter": ("float32 float16", 4, 4), "bias": ("float32 float16", 1, 1), "output": ("float32 float16", 4, 4)},
    "cos": {"input": ("float32 float16", 0, N), "output": ("float32 float16", 0, N)},
    "cumulativeSum": {"input": ("float32 float16 int32 uint32 int64 uint64", 1, N), "output": ("float32 float16 int32 uint32 int64 uint64", 1, N)},
    "dequantizeLinear": {"input": ("uint8 int8 uint32 int32 uint4 int4", 0, N), "scale": ("float32 float16", 0, N), "zeroPoint": ("uint8 int8 uint32 int32 uint4 int4", 0, N), "output": ("float32 float16", 0, N)},
    "div": {"a": ("any", 0, N), "b": ("any", 0, N), "output": ("any", 0, N)},
    "elu": {"input": ("float32 float16", 0, N), "output": ("float32 float16", 0, N)},
    "equal": {"a": ("any", 0, N), "b": ("any", 0, N), "output": ("uint8", 0, N)},
    "erf": {"input": ("float32 float16", 0, N), "output": ("float32 float16", 0, N)},
    "exp": {"input": ("float32 float16", 0, N), "output": ("float32 float16", 0, N)},
    "expand": {"input": ("any", 0, N), "output": ("any", 0, N)},
    "floor": {"input": ("float32 float16", 0, N), "output": ("float32 float16", 0, N)},
    "gather": {"input": ("any", 1, N), "indices": ("int32 uint32 int64", 0, N), "output": ("any", 1, N)},
    "gatherElements": {"input": ("any", 1, N), "indices": ("int32 uint32 int64", 1, N), "output": ("any", 1, N)},
    "gatherND": {"input": ("any", 1, N), "indices": ("int32 uint32 int64", 1, N), "output": ("any", 0, N)},
    "gelu": {"input": ("float32 float16", 0, N), "output": ("float32 float16", 0, N)},
    "gemm": {"a": ("float32 float16", 2, 2), "b": ("float32 float16", 2, 2), "c": ("float32 float16", 0, 2), "output": ("float32 float16", 2, 2)},
    "greater": {"a": ("any", 0, N), "b": ("any", 0, N), "output": ("uint8", 0, N)},
    "greaterOrEqual": {"a": ("any", 0, N), "b": ("any", 0, N), "output": ("uint8", 0, N)},
    "gru": {"input": ("float32 float16", 3, 3), "weight": ("float32 float16", 3, 3), "recurrentWeight": ("float32 float16", 3, 3), "bias": ("float32 float16", 2, 2), "recurrentBias": ("float32 float16", 2, 2), "initialHiddenState": ("float32 float16", 3, 3), "output0": ("float32 float16", 3, 3), "output1": ("float32 float16", 4, 4)},
    "gruCell": {"input": ("float32 float16", 2, 2), "weight": ("float32 float16", 2, 2), "recurrentWeight": ("float32 float16", 2, 2), "hiddenState": ("float32 float16", 2, 2), "bias": ("float32 float16", 1, 1), "recurrentBias": ("float32 float16", 1, 1), "output": ("float32 float16", 2, 2)},
    "hardSigmoid": {"input": ("float32 float16", 0, N), "output": ("float32 float16", 0, N)},
    "hardSwish": {"input": ("float32 float16", 0, N), "output": ("float32 float16", 0, N)},
    "identity": {"input": ("any", 0, N), "output": ("any", 0, N)},
    "instanceNormalization": {"input": ("float32 float16", 4, 4), "scale": ("float32 float16", 1, 1), "bias": ("float32 float16", 1, 1), "output": ("float32 float16", 4, 4)},
    "isInfinite": {"a": ("any", 0, N), "output": ("uint8", 0, N)},
    "isNaN": {"a": ("any", 0, N), "output": ("uint8", 0, N)},
    "l2Pool2d": {"input": ("float32 float16", 4, 4), "output": ("float32 float16", 4, 4)},
    "layerNormalization": {"input": ("float32 float16", 0, N), "scale": ("float32 float16", 0, N), "bias": ("float32 float16", 0, N), "output": ("float32 float16", 0, N)},
    "leakyRelu": {"input": ("float32 float16", 0, N), "output": ("float32 float16", 0, N)},
    "lesser": {"a": ("any", 0, N), "b": ("any", 0, N), "output": ("uint8", 0, N)},
    "lesserOrEqual": {"a": ("any", 0, N), "b": ("any", 0, N), "output": ("uint8", 0, N)},
    "linear": {"input": ("float32 float16", 0, N), "output": ("float32 float16", 0, N)},
    "log": {"input": ("float32 float16", 0, N), "output": ("float32 float16", 0, N)},
    "logicalAnd": {"a": ("uint8", 0, N), "b": ("uint8", 0, N), "output": ("uint8", 0, N)},
    "logicalNot": {"a": ("uint8", 0, N), "output": ("uint8", 0, N)},
    "logicalOr": {"a": ("uint8", 0, N), "b": ("uint8", 0, N), "output": ("uint8", 0, N)},
    "logicalXor": {"a": ("uint8", 0, N), "b": ("uint8", 0, N), "output": ("uint8", 0, N)},
    "lstm": {"input": ("float32 float16", 3, 3), "weight": ("float32 float16", 3, 3), "recurrentWeight": ("float32 float16", 3, 3), "bias": ("float32 float16", 2, 2), "recurrentBias": ("float32 float16", 2, 2), "peepholeWeight": ("float32 float16", 2, 2), "initialHiddenState": ("float32 float16", 3, 3), "initialCellState": ("float32 float16", 3, 3), "output0": ("float32 float16", 3, 3), "output1": ("float32 float16", 3, 3), "output2": ("float32 float16", 4, 4)},
    "lstmCell": {"input": ("float32 float16", 2, 2), "weight": ("float32 float16", 2, 2), "recurrentWeight": ("float32 float16", 2, 2), "hiddenState": ("float32 float16", 2, 2), "cellState": ("float32 float16", 2, 2), "bias": ("float32 float16", 1, 1), "recurrentBias": ("float32 float16", 1, 1), "peepholeWeight": ("float32 float16", 1, 1), "output0": ("float32 float16", 2, 2), "output1": ("float32 float16", 2, 2)},
    "matmul": {"a": ("float32 float16", 2, N), "b": ("float32 float16", 2, N), "output": ("float32 float16", 2, N)},
    "max": {"a": ("any", 0, N), "b": ("any", 0, N), "output": ("any", 0, N)},
    "maxPool2d": {"input": ("any", 4, 4), "output": ("any", 4, 4)},
    "min": {"a": ("any", 0, N), "b": ("any", 0, N), "output": ("any", 0, N)},
    "mul": {"a": ("any", 0, N), "b": ("any", 0, N), "output": ("any", 0, N)},
    "neg": {"input": ("float32 float16 int64 int32 int8", 0, N), "output": ("float32 float16 int64 int32 int8", 0, N)},
    "notEqual": {"a": ("any", 0, N), "b": ("any", 0, N), "output": ("uint8", 0, N)},
    "pad": {"input": ("any", 0, N), "output": ("any", 0, N)},
    "pow": {"a": ("any", 0, N), "b": ("any", 0, N), "output": ("any", 0, N)},
    "prelu": {"input": ("float32 float16 int64 int32 int8", 0, N), "slope": ("float32 float16 int64 int32 int8", 0, N), "output": ("float32 float16 int64 int32 int8", 0, N)},
    "quantizeLinear": {"input": ("float32 float16", 0, N), "scale": ("float32 float16", 0, N), "zeroPoint": ("uint8 int8 uint32 int32 uint4 int4", 0, N), "output": ("uint8 int8 uint32 int32 uint4 int4", 0, N)},
    "reciprocal": {"input": ("float32 float16", 0, N), "output": ("float32 float16", 0, N)},
    "reduceL1": {"input": ("float32 float16 int32 uint32 int64 uint64", 0, N), "output": ("float32 float16 int32 uint32 int64 uint64", 0, N)},
    "reduceL2": {"input": ("float32 float16", 0, N), "output": ("float32 float16", 0, N)},
    "reduceLogSum": {"input": ("float32 float16", 0, N), "output": ("float32 float16", 0, N)},
    "reduceLogSumExp": {"input": ("float32 float16", 0, N), "output": ("float32 float16", 0, N)},
    "reduceMax": {"input": ("any", 0, N), "output": ("any", 0, N)},
    "reduceMean": {"input": ("float32 float16", 0, N), "output": ("float32 float16", 0, N)},
    "reduceMin": {"input": ("any", 0, N), "output": ("any", 0, N)},
    "reduceProduct": {"input": ("float32 float16 int32 uint32 int64 uint64", 0, N), "output": ("float32 float16 int32 uint32 int64 uint64", 0, N)},
    "reduceSum": {"input": ("float32 float16 int32 uint32 int64 uint64", 0, N), "output": ("float32 float16 int32 uint32 int64 uint64", 0, N)},
    "reduceSumSquare": {"input": ("float32 float16 int32 uint32 int64 uint64", 0, N), "output": ("float32 float16 int32 uint32 int64 uint64", 0, N)},
    "relu": {"input": ("float32 float16 int64 int32 int8", 0, N), "output": ("float32 float16 int64 int32 int8", 0, N)},
    "resample2d": {"input": ("float32 float16 uint8 int8", 4, 4), "output": ("float32 float16 uint8 int8", 4, 4)},
    "reshape": {"input": ("any", 0, N), "output": ("any", 0, N)},
    "reverse": {"input": ("any", 0, N), "output": ("any", 0, N)},
    "roundEven": {"input": ("float32 float16", 0, N), "output": ("float32 float16", 0, N)},
    "scatterElements": {"input": ("any", 1, N), "indices": ("int32 uint32 int64", 1, N), "updates": ("any", 1, N), "output": ("any", 1, N)},
    "scatterND": {"input": ("any", 1, N), "indices": ("int32 uint32 int64", 1, N), "updates": ("any", 0, N), "output": ("any", 1, N)},
    "sigmoid": {"input": ("float32 float16", 0, N), "output": ("float32 float16", 0, N)},
    "sign": {"input": ("float32 float16 int64 int32 int8", 0, N), "output": ("float32 float16 int64 int32 int8", 0, N)},
    "sin": {"input": ("float32 float16", 0, N), "output": ("float32 float16", 0, N)},
    "slice": {"input": ("any", 0, N), "output": ("any", 0, N)},
    "softmax": {"input": ("float32 float16", 1, N), "output": ("float32 float16", 1, N)},
    "softplus": {"input": ("float32 float16", 0, N), "output": ("float32 float16", 0, N)},
    "softsign": {"input": ("float32 float16", 0, N), "output": ("float32 float16", 0, N)},
    "split": {"input": ("any", 1, N), "outputs": ("any", 1, N)},
    "sqrt": {"input": ("float32 float16", 0, N), "output": ("float32 float16", 0, N)},
    "sub": {"a": ("any", 0, N), "b": ("any", 0, N), "output": ("any", 0, N)},
    "tan": {"input": ("float32 float16", 0, N), "output": ("float32 float16", 0, N)},
    "tanh": {"input": ("float32 float16", 0, N), "output": ("float32 float16", 0, N)},
    "tile": {"input": ("any", 0, N), "output": ("any", 0, N)},
    "transpose": {"input": ("any", 0, N), "output": ("any", 0, N)},
    "triangular": {"input": ("any", 2, N), "output": ("any", 2, N)},
    "where": {"condition": ("uint8", 0, N), "trueValue": ("any", 0, N), "falseValue": ("any", 0, N), "output": ("any", 0, N)},
}
# fmt: on
# Where the spec disagrees with itself or with WPT, either value is accepted:
# - §6.9: isNaN/isInfinite: the table allows any type, the algorithm only float32/float16;
# - gather: the table gives the output rank 1..N, but WPT gathers a 0-D index from a 1-D input.
ALSO_ACCEPTED = {("isNaN", "a"): ("float32 float16", 0, N), ("isInfinite", "a"): ("float32 float16", 0, N),
                 ("gather", "output"): ("any", 0, N)}


def T(rank):
    """A shape of ``rank`` whose dims align at the end, so any two of them broadcast."""
    return [2, 3, 4, 5, 6][5 - rank:]


def prod(shape):
    return math.prod(shape) if shape else 1


# ---------------------------------------------------------------- building one call from a recipe
class Recipe:
    """``build(case)`` makes one valid call; ``same`` lists operands sharing a data type, ``ranks``
    operands sharing a rank; ``dtypes`` sets default data types."""

    def __init__(self, build, same=(), ranks=(), dtypes=None):
        self.build = build
        self.same = [set(group) for group in same]
        self.ranks = [set(group) for group in ranks]
        self.dtypes = dtypes or {}


class Case:
    """One call of ``op`` from its recipe, every operand a graph input.

    ``set_dtype``/``set_rank``/``set_shape`` override operands by name; with ``couple`` a data type
    (rank) override also applies to the operands that must share it, so the call stays valid.
    Without ``couple`` a rank override gives the shape ``[2] * rank``. ``foreign`` creates the
    operands named ``foreign_name`` in that other builder. ``overrides`` replaces arguments or
    options (spec names). After a first ``run()``, ``replay()`` reuses the same operands.
    """

    def __init__(self, builder, op, limits, set_dtype=None, set_rank=None, set_shape=None, couple=True,
                 foreign=None, foreign_name=None, overrides=None, label=LABEL):
        self.builder, self.op, self.limits = builder, op, limits
        self.recipe = RECIPES[op]
        self.set_dtype, self.set_rank, self.set_shape = set_dtype or {}, set_rank or {}, set_shape or {}
        self.couple, self.foreign, self.foreign_name = couple, foreign, foreign_name
        self.overrides = overrides or {}
        self.label = label
        self.shapes = {}
        self.created = []
        self._replay = None

    def _override(self, table, groups, name):
        if name in table:
            return table[name]
        if self.couple:
            for group in groups:
                if name in group:
                    for member in group:
                        if member in table:
                            return table[member]
        return None

    def dtype(self, name):
        chosen = self._override(self.set_dtype, self.recipe.same, name)
        if chosen is not None:
            return chosen
        if name in self.recipe.dtypes:
            return self.recipe.dtypes[name]
        allowed = self.limits[name]["dataTypes"]
        return "float32" if "float32" in allowed else allowed[0]

    def rank(self, name, default):
        chosen = self._override(self.set_rank, self.recipe.ranks, name)
        return default if chosen is None else chosen

    def x(self, name, shape, rank=None):
        """The operand ``name``: ``shape`` is a list or a function of the rank (default ``rank``)."""
        if self._replay is not None:
            return self._replay.pop(0)
        if name in self.set_shape:
            shape = self.set_shape[name]
        elif callable(shape):
            wanted = self.rank(name, rank)
            shape = [2] * wanted if (name in self.set_rank and not self.couple) else shape(wanted)
        elif name in self.set_rank and self.set_rank[name] != len(shape):
            shape = [2] * self.set_rank[name]
        builder = self.foreign if (self.foreign is not None and name == self.foreign_name) else self.builder
        operand = builder.input(f"{name}{len(self.created)}", {"dataType": self.dtype(name), "shape": list(shape)})
        self.shapes.setdefault(name, list(shape))
        self.created.append(operand)
        return operand

    def __call__(self, *args, **options):
        params = [p["name"] for p in REGISTERED[self.op]["arguments"]]
        args = list(args)
        for key, value in self.overrides.items():
            if key in params:
                args.extend([None] * (params.index(key) + 1 - len(args)))
                args[params.index(key)] = value
            else:
                options[key] = value
        return getattr(self.builder, snake_case(self.op))(*args, label=self.label, **options)

    def run(self):
        return self.recipe.build(self)

    def replay(self):
        self._replay = list(self.created)
        return self.recipe.build(self)


def outputs_of(result):
    return result if isinstance(result, list) else [result]


# ---------------------------------------------------------------- recipes (one valid call per op)
def _unary(c):
    return c(c.x("input", T, 2))


def _binary(c):
    return c(c.x("a", T, 2), c.x("b", T, 2))


def _batch_normalization(c):
    x = c.x("input", T, 4)
    axis = 1 if len(x.shape) > 1 else 0
    channels = x.shape[axis] if x.shape else 2
    return c(x, c.x("mean", [channels]), c.x("variance", [channels]), scale=c.x("scale", [channels]),
             bias=c.x("bias", [channels]), axis=axis)


def _layer_normalization(c):
    x = c.x("input", T, 2)
    return c(x, scale=c.x("scale", T, 2), bias=c.x("bias", T, 2), axes=list(range(len(x.shape))))


def _scatter_nd(c):
    updates_rank = c.rank("updates", None)
    if updates_rank is None:
        x = c.x("input", T, 2)
        indices = c.x("indices", lambda r: [1] * r, 1)
    else:  # updates.rank = indices.rank - 1 + input.rank - indices.shape[-1]
        x = c.x("input", T, max(updates_rank, 1))
        indices = c.x("indices", [1] if updates_rank == 0 else [1, 1])
    return c(x, indices, c.x("updates", list(indices.shape[:-1]) + list(x.shape[1:])))


def _with_input(make_call, default_rank=2):
    """A recipe for ops whose other arguments follow the input's shape."""
    def build(c):
        x = c.x("input", T, default_rank)
        return make_call(c, x, list(x.shape))
    return build


_FLOAT_GROUPS = {
    "conv": [("input", "filter", "bias")],
    "gru": [("input", "weight", "recurrentWeight", "bias", "recurrentBias", "initialHiddenState", "hiddenState")],
    "lstm": [("input", "weight", "recurrentWeight", "bias", "recurrentBias", "peepholeWeight", "initialHiddenState",
              "initialCellState", "hiddenState", "cellState")],
}

RECIPES = {
    **{op: Recipe(_unary) for op in (
        "abs", "ceil", "cos", "erf", "exp", "floor", "identity", "log", "neg", "reciprocal", "roundEven", "sin",
        "sign", "sqrt", "tan", "clamp", "elu", "gelu", "hardSigmoid", "hardSwish", "leakyRelu", "linear", "relu",
        "sigmoid", "softplus", "softsign", "tanh", "reduceL1", "reduceL2", "reduceLogSum", "reduceLogSumExp",
        "reduceMax", "reduceMean", "reduceMin", "reduceProduct", "reduceSum", "reduceSumSquare", "reverse",
        "transpose", "triangular")},
    **{op: Recipe(lambda c: c(c.x("a", T, 2))) for op in ("isNaN", "isInfinite", "logicalNot")},
    **{op: Recipe(_binary, same=[("a", "b")]) for op in (
        "add", "sub", "mul", "div", "max", "min", "pow", "equal", "notEqual", "greater", "greaterOrEqual", "lesser",
        "lesserOrEqual", "logicalAnd", "logicalOr", "logicalXor")},
    "matmul": Recipe(lambda c: c(c.x("a", lambda r: T(r - 2) + [3, 4], 2), c.x("b", lambda r: T(r - 2) + [4, 2], 2)),
                     same=[("a", "b")]),
    "prelu": Recipe(lambda c: c(c.x("input", T, 2), c.x("slope", T, 2)), same=[("input", "slope")]),
    "where": Recipe(lambda c: c(c.x("condition", T, 2), c.x("trueValue", T, 2), c.x("falseValue", T, 2)),
                    same=[("trueValue", "falseValue")]),
    "argMax": Recipe(lambda c: c(c.x("input", T, 2), 0)),
    "argMin": Recipe(lambda c: c(c.x("input", T, 2), 0)),
    "cast": Recipe(lambda c: c(c.x("input", T, 2), "float32")),
    "cumulativeSum": Recipe(lambda c: c(c.x("input", T, 2), 0)),
    "concat": Recipe(lambda c: c([c.x("inputs", T, 2), c.x("inputs", T, 2)], 0)),
    "expand": Recipe(_with_input(lambda c, x, s: c(x, [2] + s))),
    "pad": Recipe(_with_input(lambda c, x, s: c(x, [1] * len(s), [1] * len(s)))),
    "reshape": Recipe(_with_input(lambda c, x, s: c(x, [prod(s)]))),
    "slice": Recipe(_with_input(lambda c, x, s: c(x, [0] * len(s), s))),
    "softmax": Recipe(_with_input(lambda c, x, s: c(x, max(len(s) - 1, 0)))),
    "split": Recipe(_with_input(lambda c, x, s: c(x, 2, axis=max(len(s) - 1, 0)))),
    "tile": Recipe(_with_input(lambda c, x, s: c(x, [2] * len(s)))),
    "gather": Recipe(lambda c: c(c.x("input", T, 2), c.x("indices", T, 1))),
    "gatherElements": Recipe(lambda c: c(c.x("input", T, 2), c.x("indices", T, 2)), ranks=[("input", "indices")]),
    "gatherND": Recipe(lambda c: c(c.x("input", T, 2), c.x("indices", lambda r: T(r - 1) + [1], 1))),
    "scatterElements": Recipe(lambda c: c(c.x("input", T, 2), c.x("indices", T, 2), c.x("updates", T, 2)),
                              same=[("input", "updates")], ranks=[("input", "indices", "updates")]),
    "scatterND": Recipe(_scatter_nd, same=[("input", "updates")]),
    "dequantizeLinear": Recipe(lambda c: c(c.x("input", T, 2), c.x("scale", T, 2), c.x("zeroPoint", T, 2)),
                               same=[("input", "zeroPoint")], ranks=[("input", "scale", "zeroPoint")]),
    "quantizeLinear": Recipe(lambda c: c(c.x("input", T, 2), c.x("scale", T, 2), c.x("zeroPoint", T, 2)),
                             same=[("input", "scale")], ranks=[("input", "scale", "zeroPoint")]),
    "conv2d": Recipe(lambda c: c(c.x("input", [1, 4, 5, 5]), c.x("filter", [2, 4, 3, 3]), bias=c.x("bias", [2])),
                     same=_FLOAT_GROUPS["conv"]),
    "convTranspose2d": Recipe(lambda c: c(c.x("input", [1, 4, 3, 3]), c.x("filter", [4, 2, 3, 3]),
                                          bias=c.x("bias", [2])), same=_FLOAT_GROUPS["conv"]),
    "batchNormalization": Recipe(_batch_normalization, same=[("input", "mean", "variance", "scale", "bias")]),
    "instanceNormalization": Recipe(lambda c: c(c.x("input", [1, 4, 3, 3]), scale=c.x("scale", [4]),
                                                bias=c.x("bias", [4])), same=[("input", "scale", "bias")]),
    "layerNormalization": Recipe(_layer_normalization, same=[("input", "scale", "bias")],
                                 ranks=[("input", "scale", "bias")]),
    **{op: Recipe(lambda c: c(c.x("input", [1, 2, 4, 4]), windowDimensions=[2, 2]))
       for op in ("averagePool2d", "l2Pool2d", "maxPool2d")},
    "resample2d": Recipe(lambda c: c(c.x("input", [1, 2, 3, 3]), scales=[2.0, 2.0])),
    "gemm": Recipe(lambda c: c(c.x("a", [3, 4]), c.x("b", [4, 5]), c=c.x("c", lambda r: [3, 5][2 - r:], 2)),
                   same=[("a", "b", "c")]),
    "gru": Recipe(lambda c: c(c.x("input", [2, 1, 4]), c.x("weight", [1, 9, 4]), c.x("recurrentWeight", [1, 9, 3]),
                              2, 3, bias=c.x("bias", [1, 9]), recurrentBias=c.x("recurrentBias", [1, 9]),
                              initialHiddenState=c.x("initialHiddenState", [1, 1, 3]), returnSequence=True),
                  same=_FLOAT_GROUPS["gru"]),
    "gruCell": Recipe(lambda c: c(c.x("input", [1, 4]), c.x("weight", [9, 4]), c.x("recurrentWeight", [9, 3]),
                                  c.x("hiddenState", [1, 3]), 3, bias=c.x("bias", [9]),
                                  recurrentBias=c.x("recurrentBias", [9])),
                      same=_FLOAT_GROUPS["gru"]),
    "lstm": Recipe(lambda c: c(c.x("input", [2, 1, 4]), c.x("weight", [1, 12, 4]), c.x("recurrentWeight", [1, 12, 3]),
                               2, 3, bias=c.x("bias", [1, 12]), recurrentBias=c.x("recurrentBias", [1, 12]),
                               peepholeWeight=c.x("peepholeWeight", [1, 9]),
                               initialHiddenState=c.x("initialHiddenState", [1, 1, 3]),
                               initialCellState=c.x("initialCellState", [1, 1, 3]), returnSequence=True),
                   same=_FLOAT_GROUPS["lstm"]),
    "lstmCell": Recipe(lambda c: c(c.x("input", [1, 4]), c.x("weight", [12, 4]), c.x("recurrentWeight", [12, 3]),
                                   c.x("hiddenState", [1, 3]), c.x("cellState", [1, 3]), 3, bias=c.x("bias", [12]),
                                   recurrentBias=c.x("recurrentBias", [12]),
                                   peepholeWeight=c.x("peepholeWeight", [9])),
                       same=_FLOAT_GROUPS["lstm"]),
}


# ---------------------------------------------------------------- shared helpers
def registered(op):
    """Skips the calling test when ``op`` is not in the native registry yet."""
    if op not in REGISTERED:
        pytest.skip(f"{op} is not registered yet")


def operand_members(limits, op):
    """The op's operand members (inputs), in limits order."""
    return [name for name in limits[op] if not name.startswith("output")]


def output_member(limits, op, index, count):
    members = limits[op]
    if "outputs" in members:
        return "outputs"
    if count == 1 and "output" in members:
        return "output"
    return f"output{index}"


def rank_range(entry):
    return entry["rankRange"]["min"], entry["rankRange"]["max"]


@pytest.fixture(scope="module")
def limits(context):
    return context.op_support_limits()


ALL_OPS = sorted(EXPECTED_LIMITS)


# ---------------------------------------------------------------- the dictionary itself
def test_tables_cover_every_spec_op():
    assert len(EXPECTED_LIMITS) == 95
    assert set(RECIPES) == set(EXPECTED_LIMITS)


def test_every_registered_op_is_a_spec_op():
    assert set(REGISTERED) <= set(EXPECTED_LIMITS), sorted(set(REGISTERED) - set(EXPECTED_LIMITS))


def test_top_level_members(limits):
    assert limits["preferredInputLayout"] in ("nchw", "nhwc")
    assert isinstance(limits["maxTensorByteLength"], int) and limits["maxTensorByteLength"] > 0
    for member in ("input", "constant", "output"):
        assert set(limits[member]["dataTypes"]) == set(ALL_TYPES)
        assert limits[member]["rankRange"]["min"] == 0
        assert limits[member]["rankRange"]["max"] >= MAX_TESTED_RANK
    ops = set(limits) - {"preferredInputLayout", "maxTensorByteLength", "input", "constant", "output"}
    assert ops == set(REGISTERED)


@pytest.mark.parametrize("op", ALL_OPS)
def test_members(limits, op):
    registered(op)
    assert op in limits
    assert set(limits[op]) == set(EXPECTED_LIMITS[op])
    for entry in limits[op].values():
        assert set(entry) == {"dataTypes", "rankRange"}
        assert set(entry["rankRange"]) == {"min", "max"}


@pytest.mark.parametrize("op", ALL_OPS)
def test_allowed_sets(limits, op):
    registered(op)
    max_rank = limits["input"]["rankRange"]["max"]

    def as_sets(types, rank_min, rank_max):
        return (set(SPEC_TYPES) if types == "any" else set(types.split()),
                (rank_min, max_rank if rank_max == N else rank_max))

    for member, expected in EXPECTED_LIMITS[op].items():
        if member not in limits[op]:
            continue  # reported by test_members
        entry = limits[op][member]
        reported = (set(entry["dataTypes"]), rank_range(entry))
        accepted = [as_sets(*expected)]
        if (op, member) in ALSO_ACCEPTED:
            accepted.append(as_sets(*ALSO_ACCEPTED[op, member]))
        assert reported in accepted, (member, sorted(reported[0]), reported[1])
        assert len(entry["dataTypes"]) == len(reported[0]), f"{member}: duplicate data types"


# ---------------------------------------------------------------- every allowed combination builds
def _check_outputs(limits, op, result):
    outputs = outputs_of(result)
    for index, output in enumerate(outputs):
        entry = limits[op][output_member(limits, op, index, len(outputs))]
        assert output.data_type in entry["dataTypes"], (index, output.data_type)
        low, high = rank_range(entry)
        assert low <= len(output.shape) <= high, (index, output.shape)


@pytest.mark.parametrize("op", ALL_OPS)
def test_every_allowed_combination_builds(context, limits, op):
    registered(op)
    failures = []
    for member in operand_members(limits, op):
        entry = limits[op][member]
        low, high = rank_range(entry)
        for dtype in entry["dataTypes"]:
            for rank in sorted({low, min(high, MAX_TESTED_RANK)}):
                case = Case(webnn.MLGraphBuilder(context), op, limits[op], set_dtype={member: dtype},
                            set_rank={member: rank})
                try:
                    _check_outputs(limits, op, case.run())
                except Exception as error:  # collected so one run reports every combination
                    failures.append(f"{member} {dtype} rank {rank}: {type(error).__name__}: {error}")
    assert not failures, "\n".join(failures)


@pytest.mark.parametrize("op", ALL_OPS)
def test_disallowed_data_types_are_rejected(context, limits, op):
    registered(op)
    failures = []
    for member in operand_members(limits, op):
        for dtype in sorted(set(ALL_TYPES) - set(limits[op][member]["dataTypes"])):
            case = Case(webnn.MLGraphBuilder(context), op, limits[op], set_dtype={member: dtype}, couple=False)
            try:
                case.run()
                failures.append(f"{member} {dtype}: accepted")
            except TypeError as error:
                if f"[{LABEL}]" not in str(error) or member not in str(error):
                    failures.append(f"{member} {dtype}: message does not name the label and operand: {error}")
    assert not failures, "\n".join(failures)


@pytest.mark.parametrize("op", ALL_OPS)
def test_ranks_outside_the_range_are_rejected(context, limits, op):
    registered(op)
    max_rank = limits["input"]["rankRange"]["max"]
    failures = []
    for member in operand_members(limits, op):
        low, high = rank_range(limits[op][member])
        for rank in [r for r in (low - 1, high + 1) if 0 <= r <= max_rank]:
            case = Case(webnn.MLGraphBuilder(context), op, limits[op], set_rank={member: rank}, couple=False)
            try:
                case.run()
                failures.append(f"{member} rank {rank}: accepted")
            except TypeError as error:
                if f"[{LABEL}]" not in str(error) or member not in str(error) or "rank" not in str(error):
                    failures.append(f"{member} rank {rank}: message does not name the label, operand, rank: {error}")
    assert not failures, "\n".join(failures)
