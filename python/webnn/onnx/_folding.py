"""Constant folding: a node whose inputs are all known at conversion time is evaluated at
conversion (NumPy forms of the common shape ops, else the ONNX reference implementation), so
shape subgraphs never reach WebNN."""
import math

import numpy as np

from ._prepare import onnx_module

# Ops whose result is not a function of their inputs.
_NOT_FOLDABLE = {"RandomNormal", "RandomUniform", "RandomNormalLike", "RandomUniformLike", "Multinomial", "Bernoulli"}


def can_fold(converter, node):
    if node.op_type in _NOT_FOLDABLE:
        return False
    # Inputs first: most nodes have a computed input, and the attribute scan is the slower test.
    if not all(name == "" or converter.is_const(name) for name in node.input):
        return False
    return not any(attribute.type in (5, 10) for attribute in node.attribute)  # GRAPH(S): If/Loop/Scan bodies


# TensorProto data types stored in a typed repeated field, read without numpy_helper's generality.
_TYPED_FIELDS = {1: ("float_data", np.float32), 6: ("int32_data", np.int32), 7: ("int64_data", np.int64),
                 11: ("double_data", np.float64)}


def _tensor_array(tensor):
    onnx = onnx_module()
    typed = _TYPED_FIELDS.get(tensor.data_type)
    if typed is not None and not tensor.raw_data and tensor.data_location == 0 and not tensor.HasField("segment"):
        field, dtype = typed
        values = np.array(getattr(tensor, field), dtype)
        if values.size == math.prod(tensor.dims):
            return values.reshape(tuple(tensor.dims))
    return onnx.numpy_helper.to_array(tensor)


def _constant(node):
    onnx = onnx_module()
    attribute = node.attribute[0]
    if attribute.name == "value" and attribute.type == 4:  # TENSOR
        return _tensor_array(attribute.t)
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


# ---- NumPy forms of the ops shape subgraphs are made of (building a ReferenceEvaluator costs
# about 0.3 ms a node). Each returns the outputs, or None to leave the node to the reference
# implementation (an attribute or case it does not handle); tests/test_onnx_folding.py compares
# them with it.

def _ints(attribute_name, node):
    for attribute in node.attribute:
        if attribute.name == attribute_name:
            return list(attribute.ints) if attribute.type == 7 else [attribute.i]  # INTS, INT
    return None


def _reshape(node, inputs, opset):
    data, shape = inputs
    if any(a.name == "allowzero" and a.i for a in node.attribute):
        return None
    dims = [int(d) for d in shape.reshape(-1)]
    if any(d == 0 and i >= data.ndim for i, d in enumerate(dims)):
        return None
    dims = [data.shape[i] if d == 0 and i < data.ndim else d for i, d in enumerate(dims)]
    return [data.reshape(dims)]


def _cast(node, inputs, opset):
    onnx = onnx_module()
    to = _ints("to", node)
    if len(node.attribute) != 1 or not to or to[0] in (8, 16, 17, 18, 19, 20, 21, 22, 23):  # strings, bf16, fp8, 4-bit
        return None
    (data,) = inputs
    if data.dtype.kind not in "biuf":
        return None
    return [data.astype(onnx.helper.tensor_dtype_to_np_dtype(to[0]))]


def _axes(node, inputs, opset, first_axes_input=13):
    """Squeeze/Unsqueeze axes: the second input from opset 13, an attribute before."""
    if opset >= first_axes_input:
        return [int(a) for a in inputs[1].reshape(-1)] if len(inputs) > 1 else None
    return _ints("axes", node)


def _unsqueeze(node, inputs, opset):
    axes = _axes(node, inputs, opset)
    if axes is None:
        return None
    rank = inputs[0].ndim + len(axes)
    axes = sorted(a + rank if a < 0 else a for a in axes)
    if len(set(axes)) != len(axes) or not all(0 <= a < rank for a in axes):
        return None
    out = inputs[0]
    for a in axes:
        out = np.expand_dims(out, a)
    return [out]


def _squeeze(node, inputs, opset):
    data = inputs[0]
    axes = _axes(node, inputs, opset)
    if axes is None:
        return [np.squeeze(data)]
    axes = tuple(a + data.ndim if a < 0 else a for a in axes)
    if not all(0 <= a < data.ndim and data.shape[a] == 1 for a in axes):
        return None
    return [np.squeeze(data, axis=axes)]


def _concat(node, inputs, opset):
    axis = _ints("axis", node)
    if axis is None or len(node.attribute) != 1 or len({x.dtype for x in inputs}) != 1:
        return None
    return [np.concatenate(inputs, axis=axis[0])]


def _gather(node, inputs, opset):
    data, indices = inputs
    axis = (_ints("axis", node) or [0])[0]
    if indices.dtype.kind not in "iu" or not -data.ndim <= axis < data.ndim:
        return None
    extent = data.shape[axis]
    if indices.size and not (-extent <= indices.min() and indices.max() < extent):
        return None
    return [np.take(data, indices, axis=axis)]


def _shape(node, inputs, opset):
    if node.attribute:
        return None  # start / end
    return [np.array(inputs[0].shape, dtype=np.int64)]


_NUMPY_FORMS = {"Reshape": _reshape, "Cast": _cast, "Unsqueeze": _unsqueeze, "Squeeze": _squeeze,
                "Concat": _concat, "Gather": _gather, "Shape": _shape}


def _numpy_form(converter, node, opset):
    form = _NUMPY_FORMS.get(node.op_type)
    if form is None or "" in node.input or len([o for o in node.output if o]) != 1:
        return None
    try:
        outputs = form(node, [np.asarray(converter.values[name]) for name in node.input], opset)
    except (ValueError, TypeError, IndexError):
        return None  # the reference implementation reports it
    return None if outputs is None else [np.require(outputs[0], requirements="C")]


def evaluate(converter, node, opset):
    """The node's outputs as NumPy arrays."""
    if node.op_type == "Constant" and len(node.attribute) == 1:
        value = _constant(node)
        if value is not None:
            return [value]
    outputs = _numpy_form(converter, node, opset)
    if outputs is not None:
        return outputs
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
