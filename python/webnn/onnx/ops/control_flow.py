"""Control flow (If) and Constant."""
import numpy as np

from .._folding import evaluate
from .._prepare import initializers
from .._registry import attributes, handles, reshape


# ---------------------------------------------------------------- control flow
def _run_branch(cv, branch, opset):
    """Converts a branch subgraph inline (its nodes see the outer scope's values) and returns its
    output values."""
    saved = cv.node, cv.label
    for name, array in initializers(branch).items():
        cv.set(name, array)
    cv.run_nodes(branch.node, opset)
    cv.node, cv.label = saved
    return [cv.value(output.name) for output in branch.output]


@handles("If")
def if_op(cv, node, opset):
    """A condition known at conversion time converts the chosen branch only. A run-time condition
    converts both branches and selects each output with where, when the two branches' outputs have
    the same shapes and data types (WebNN shapes are static)."""
    attrs = attributes(node)
    if cv.is_const(node.input[0]):
        condition = bool(np.asarray(cv.values[node.input[0]]).reshape(-1)[0])
        return _run_branch(cv, attrs["then_branch" if condition else "else_branch"], opset)
    condition = cv.operand(node.input[0])
    if int(np.prod(condition.shape, dtype=np.int64)) != 1:
        raise TypeError(f"{cv.where()}: the condition must hold one element, got shape {list(condition.shape)}")
    then_values = _run_branch(cv, attrs["then_branch"], opset)
    else_values = _run_branch(cv, attrs["else_branch"], opset)
    outputs = []
    for index, (then_value, else_value) in enumerate(zip(then_values, else_values)):
        then_type, else_type = (("uint8" if v.dtype == np.bool_ else v.dtype.name) if isinstance(v, np.ndarray)
                                else v.data_type for v in (then_value, else_value))
        if list(then_value.shape) != list(else_value.shape) or then_type != else_type:
            error = cv.unsupported(
                f"the condition is computed at run time and output {index} differs between the branches "
                f"({then_type} {list(then_value.shape)} and {else_type} {list(else_value.shape)}); WebNN "
                "shapes are static, so the branch must be known at conversion time")
            error.runtime_value = node.input[0]  # lets callers retry with the condition fixed
            raise error
        if isinstance(then_value, np.ndarray) and isinstance(else_value, np.ndarray) and \
                np.array_equal(then_value, else_value):
            outputs.append(then_value)
            continue
        outputs.append(cv.op("where", reshape(cv, cv.operand(condition, "uint8"), []), cv.operand(then_value),
                             cv.operand(else_value)))
    return outputs


@handles("Constant")
def constant(cv, node, opset):
    return evaluate(cv, node, opset)
