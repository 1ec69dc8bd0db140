"""Control flow (If with a condition known at conversion) and Constant."""
import numpy as np

from .._folding import evaluate
from .._prepare import initializers
from .._registry import attributes, handles


# ---------------------------------------------------------------- control flow
@handles("If")
def if_op(cv, node, opset):
    condition = cv.const(node.input[0], "the condition")
    attrs = attributes(node)
    branch = attrs["then_branch"] if bool(np.asarray(condition).reshape(-1)[0]) else attrs["else_branch"]
    saved = cv.node, cv.label
    for name, array in initializers(branch).items():
        cv.set(name, array)
    cv.run_nodes(branch.node, opset)
    cv.node, cv.label = saved
    return [cv.value(output.name) for output in branch.output]


@handles("Constant")
def constant(cv, node, opset):
    return evaluate(cv, node, opset)
