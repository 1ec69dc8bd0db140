"""Constant folding: a node whose inputs are all known at conversion time is evaluated with the
ONNX reference implementation (NumPy), so shape subgraphs never reach WebNN."""
import numpy as np

from ._prepare import onnx_module

# Ops whose result is not a function of their inputs.
_NOT_FOLDABLE = {"RandomNormal", "RandomUniform", "RandomNormalLike", "RandomUniformLike", "Multinomial", "Bernoulli"}


def can_fold(converter, node):
    if node.op_type in _NOT_FOLDABLE:
        return False
    if any(attribute.type in (5, 10) for attribute in node.attribute):  # GRAPH, GRAPHS: If/Loop/Scan bodies
        return False
    return all(name == "" or converter.is_const(name) for name in node.input)


def _constant(node):
    onnx = onnx_module()
    attribute = node.attribute[0]
    value = onnx.helper.get_attribute_value(attribute)
    if attribute.name == "value":
        return onnx.numpy_helper.to_array(value)
    if attribute.name == "value_float":
        return np.array(value, np.float32)
    if attribute.name == "value_floats":
        return np.array(value, np.float32)
    if attribute.name == "value_int":
        return np.array(value, np.int64)
    if attribute.name == "value_ints":
        return np.array(value, np.int64)
    return None


def evaluate(converter, node, opset):
    """The node's outputs as NumPy arrays."""
    if node.op_type == "Constant" and len(node.attribute) == 1:
        value = _constant(node)
        if value is not None:
            return [value]
    onnx = onnx_module()
    from onnx.reference import ReferenceEvaluator

    helper = onnx.helper
    feeds = {}
    inputs = []
    for name in node.input:
        if name and name not in feeds:
            array = converter.values[name]
            feeds[name] = array
            inputs.append(helper.make_tensor_value_info(name, helper.np_dtype_to_tensor_dtype(array.dtype), array.shape))
    outputs = [helper.make_empty_tensor_value_info(name) for name in node.output if name]
    graph = helper.make_graph([node], "fold", inputs, outputs)
    model = helper.make_model(graph, opset_imports=list(converter.model.opset_import))
    model.ir_version = converter.model.ir_version
    try:
        results = ReferenceEvaluator(model).run(None, feeds)
    except Exception as error:
        raise converter.unsupported(f"evaluating this node on its constant inputs failed: {error}") from error
    by_name = dict(zip([name for name in node.output if name], results))
    return [np.asarray(by_name[name]) if name else None for name in node.output]
