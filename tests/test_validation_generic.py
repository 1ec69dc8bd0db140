"""The generic WPT validation sweeps (research note validation-tests.md §2), applied to every op
through opSupportLimits() and the shared recipe table of ``test_op_support_limits.py``:

- an operand from another builder, for every operand argument (options operands included);
- two operands that must share a data type, given different ones (every binary op, every pair);
- shapes that do not broadcast, and a broadcast result larger than maxTensorByteLength;
- ``axes``/``axis`` values out of range, repeated, negative or not integers;
- any builder method after ``build()`` -> InvalidStateError.

Ops not registered yet are skipped, never failed.
"""
import itertools
import os
import sys

import pytest

import webnn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_op_support_limits import (  # noqa: E402
    ALL_OPS, EXPECTED_LIMITS, LABEL, OPERAND_KINDS, RECIPES, REGISTERED, Case, T, outputs_of, registered)

BINARY_OPS = ("add", "sub", "mul", "div", "max", "min", "pow", "equal", "notEqual", "greater", "greaterOrEqual",
              "lesser", "lesserOrEqual", "logicalAnd", "logicalOr", "logicalXor", "matmul")
# Ops that broadcast two of their operands bidirectionally: op -> pairs of operand names.
BROADCAST_PAIRS = {
    **{op: [("a", "b")] for op in BINARY_OPS if op != "matmul"},
    "prelu": [("input", "slope")],
    "where": [("condition", "trueValue"), ("trueValue", "falseValue"), ("condition", "falseValue")],
}


@pytest.fixture(scope="module")
def limits(context):
    return context.op_support_limits()


def expect_type_error(make, *fragments):
    """Runs ``make()``; returns a failure string unless it raised a TypeError naming the label
    and every fragment."""
    try:
        make()
    except TypeError as error:
        missing = [f for f in (f"[{LABEL}]",) + fragments if f not in str(error)]
        return f"message lacks {missing}: {error}" if missing else None
    except Exception as error:  # a wrong error class is a failure too
        return f"{type(error).__name__} instead of TypeError: {error}"
    return "accepted"


def operand_params(op):
    info = REGISTERED[op]
    return [p["name"] for p in info["arguments"] + info["options"] if p["kind"] in OPERAND_KINDS]


# ---------------------------------------------------------------- operands from another builder
@pytest.mark.parametrize("op", ALL_OPS)
def test_operand_from_another_builder(context, limits, op):
    registered(op)
    failures = []
    for name in operand_params(op):
        case = Case(webnn.MLGraphBuilder(context), op, limits[op], foreign=webnn.MLGraphBuilder(context),
                    foreign_name=name)
        failure = expect_type_error(case.run, name)
        if failure:
            failures.append(f"{name}: {failure}")
        if name not in case.shapes:
            failures.append(f"{name}: the recipe does not pass this operand")
    assert not failures, "\n".join(failures)


# ---------------------------------------------------------------- data types that must match
def _same_type_groups(op):
    groups = [sorted(group & set(EXPECTED_LIMITS[op])) for group in RECIPES[op].same]
    return [group for group in groups if len(group) > 1]


@pytest.mark.parametrize("op", [op for op in ALL_OPS if _same_type_groups(op)])
def test_operands_of_different_data_types(context, limits, op):
    """Every pair of data types for binary ops (WPT validateTwoInputsOfSameDataType); for other
    "same type as" groups, each member against the first."""
    registered(op)
    failures = []
    for group in _same_type_groups(op):
        first, allowed = group[0], limits[op][group[0]]["dataTypes"]
        others = group[1:] if op not in BINARY_OPS else group[1:2]
        for other in others:
            for mine, theirs in itertools.permutations(allowed, 2):
                case = Case(webnn.MLGraphBuilder(context), op, limits[op], set_dtype={first: mine, other: theirs})
                failure = expect_type_error(case.run)
                if failure:
                    failures.append(f"{first}={mine} {other}={theirs}: {failure}")
                if op not in BINARY_OPS:
                    break  # one pair per member is enough outside the binary family
    assert not failures, "\n".join(failures)


@pytest.mark.parametrize("op", [op for op in BINARY_OPS if not op.startswith("logical")])  # logical: uint8 only
def test_binary_data_type_mismatch_at_every_rank(context, limits, op):
    registered(op)
    low = limits[op]["a"]["rankRange"]["min"]
    allowed = limits[op]["a"]["dataTypes"]
    failures = []
    for rank in range(low, 6):
        case = Case(webnn.MLGraphBuilder(context), op, limits[op], set_dtype={"a": allowed[0], "b": allowed[1]},
                    set_rank={"a": rank, "b": rank})
        failure = expect_type_error(case.run)
        if failure:
            failures.append(f"rank {rank}: {failure}")
    assert not failures, "\n".join(failures)


# ---------------------------------------------------------------- broadcasting
def _non_broadcastable(rank):
    """Pairs of shapes that do not broadcast: one dim changed, at full rank and with the other
    shape's leading dims dropped (implicit 1-padding)."""
    base = T(rank)
    for axis in range(rank):
        other = list(base)
        other[axis] += 1
        yield base, other
        yield other, base
        if axis > 0:
            yield base, other[axis:]
            yield other[axis:], base


@pytest.mark.parametrize("op", sorted(BROADCAST_PAIRS))
def test_shapes_that_do_not_broadcast(context, limits, op):
    registered(op)
    failures = []
    for first, second in BROADCAST_PAIRS[op]:
        for rank in range(1, 6):
            for shape_a, shape_b in _non_broadcastable(rank):
                case = Case(webnn.MLGraphBuilder(context), op, limits[op], set_shape={first: shape_a, second: shape_b})
                failure = expect_type_error(case.run)
                if failure:
                    failures.append(f"{first}={shape_a} {second}={shape_b}: {failure}")
    assert not failures, "\n".join(failures)


def test_matmul_batch_dims_that_do_not_broadcast(context, limits):
    registered("matmul")
    for shape_a, shape_b in (([2, 3, 4], [3, 4, 5]), ([2, 2, 3, 4], [3, 1, 4, 5]), ([3, 4], [5, 2])):
        case = Case(webnn.MLGraphBuilder(context), "matmul", limits["matmul"], set_shape={"a": shape_a, "b": shape_b})
        assert expect_type_error(case.run) is None, (shape_a, shape_b)


@pytest.mark.parametrize("op", sorted(BROADCAST_PAIRS) + ["matmul"])
def test_broadcast_result_over_max_tensor_byte_length(context, limits, op):
    """[rows, 1] with [1, cols] makes a result larger than maxTensorByteLength (even of uint8),
    while each operand is a valid input (WPT validateTwoBroadcastableInputsTensorLimit)."""
    registered(op)
    rows = 2 ** 30
    cols = limits["maxTensorByteLength"] // rows + 1
    shapes = {"a": [rows, 1], "b": [1, cols], "input": [rows, 1], "slope": [1, cols], "condition": [rows, 1],
              "trueValue": [1, cols], "falseValue": [1, cols]}
    case = Case(webnn.MLGraphBuilder(context), op, limits[op], set_shape=shapes)
    assert expect_type_error(case.run) is None


# ---------------------------------------------------------------- axes
def _axis_options(op):
    """{name: kind} of the op's ``axis``/``axes`` argument or option."""
    info = REGISTERED[op]
    return {p["name"]: p["kind"] for p in info["arguments"] + info["options"] if p["name"] in ("axis", "axes")}


AXIS_OPS = ["argMax", "argMin", "batchNormalization", "concat", "cumulativeSum", "gather", "gatherElements",
            "layerNormalization", "resample2d", "reverse", "scatterElements", "softmax", "split", "reduceL1",
            "reduceL2", "reduceLogSum", "reduceLogSumExp", "reduceMax", "reduceMean", "reduceMin", "reduceProduct",
            "reduceSum", "reduceSumSquare"]


@pytest.mark.parametrize("op", AXIS_OPS)
def test_invalid_axes(context, limits, op):
    """``axes`` (a list) or ``axis``: out of range, negative, 2^32 (except where the spec wraps
    modulo 2^32), not a number, and for lists a repeated axis (WPT validateOptionsAxes)."""
    registered(op)
    assert _axis_options(op), f"{op} has no axis or axes"
    probe = Case(webnn.MLGraphBuilder(context), op, limits[op])
    probe.run()
    rank = len(probe.shapes.get("input", probe.shapes.get("inputs", [])))
    failures = []
    for name, kind in _axis_options(op).items():
        values = [rank, -1, "a"] if name == "axis" else [[rank], [-1], [2 ** 32], ["a"], [0, 0], [rank - 1] * 2]
        if kind == "uint":
            values.append(2 ** 32)
        for value in values:
            case = Case(webnn.MLGraphBuilder(context), op, limits[op], overrides={name: value})
            failure = expect_type_error(case.run)
            if failure:
                failures.append(f"{name}={value!r}: {failure}")
    assert not failures, "\n".join(failures)


# ---------------------------------------------------------------- after build()
@pytest.mark.parametrize("op", ALL_OPS)
def test_builder_methods_after_build(context, limits, op):
    registered(op)
    builder = webnn.MLGraphBuilder(context)
    case = Case(builder, op, limits[op])
    builder.build({"out": outputs_of(case.run())[0]})
    with pytest.raises(webnn.InvalidStateError):
        case.replay()
    with pytest.raises(webnn.InvalidStateError):
        builder.input("late", {"dataType": "float32", "shape": [2]})
