"""Reductions, ArgMax/ArgMin and CumSum."""
import numpy as np

from .._registry import attributes, handles, ints, normalize_axis, optional_const, scalar


# ---------------------------------------------------------------- reductions
_REDUCE = {"ReduceL1": "reduceL1", "ReduceL2": "reduceL2", "ReduceLogSum": "reduceLogSum",
           "ReduceLogSumExp": "reduceLogSumExp", "ReduceMax": "reduceMax", "ReduceMean": "reduceMean",
           "ReduceMin": "reduceMin", "ReduceProd": "reduceProduct", "ReduceSum": "reduceSum",
           "ReduceSumSquare": "reduceSumSquare"}


@handles(*_REDUCE)
def reduce(cv, node, opset):
    attrs = attributes(node)
    x = cv.operand(node.input[0])
    axes = attrs.get("axes")
    if axes is None:
        axes = optional_const(cv, node, 1)
    options = {"keepDimensions": bool(attrs.get("keepdims", 1))}
    if axes is None or len(np.asarray(axes).reshape(-1)) == 0:
        if attrs.get("noop_with_empty_axes", 0):
            return cv.op("identity", x)
    else:
        options["axes"] = sorted({normalize_axis(cv, a, len(x.shape)) for a in ints(axes)})
    return cv.op(_REDUCE[node.op_type], x, **options)


@handles("ArgMax", "ArgMin")
def arg_reduce(cv, node, opset):
    attrs = attributes(node)
    x = cv.operand(node.input[0])
    axis = normalize_axis(cv, attrs.get("axis", 0), len(x.shape))
    op = "argMax" if node.op_type == "ArgMax" else "argMin"
    keep = bool(attrs.get("keepdims", 1))
    if not attrs.get("select_last_index", 0):
        return cv.op(op, x, axis, keepDimensions=keep, outputDataType="int64")
    # The last extreme index is the first one of the reversed axis, counted from the end.
    index = cv.op(op, cv.op("reverse", x, axes=[axis]), axis, keepDimensions=keep, outputDataType="int64")
    return cv.op("sub", cv.operand(np.array(x.shape[axis] - 1, np.int64)), index)


@handles("CumSum")
def cumsum(cv, node, opset):
    attrs = attributes(node)
    x = cv.operand(node.input[0])
    axis = normalize_axis(cv, scalar(cv.const(node.input[1], "axis")), len(x.shape))
    return cv.op("cumulativeSum", x, axis, exclusive=bool(attrs.get("exclusive", 0)),
                 reversed=bool(attrs.get("reverse", 0)))
