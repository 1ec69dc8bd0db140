"""Constant folding: a node whose inputs are all known at conversion time is evaluated at conversion,
so shape subgraphs never reach WebNN. In order of preference:

1. exact NumPy forms of the ops that only move data or do index arithmetic (Shape, Reshape, Gather,
   Concat, Slice, Expand, ...; Cast between integers), and of ConstantOfShape and Range, which WebNN
   has no op for: they do no floating-point arithmetic, so they cannot disagree with any kernel; and
   of DequantizeLinear per tensor or per axis (the weights and int32 biases of quantized models): one
   float32 product per element, bitwise ONNX Runtime's (``dequantize_array``), and for 8- and 16-bit
   data any correct kernel's;
2. every other op is converted by its own handler (``ops/``) into a WebNN graph of that one node on
   the converter's context, its first input a graph input (as the data is when the node runs at
   dispatch) and the others constants, built and computed: the kernels that run the node at
   dispatch, so folding and running give the same numbers;
3. the ONNX reference implementation, only for ops the importer cannot map to WebNN at all (so no
   kernel could run them at dispatch), once ONNX shape inference has bounded their outputs.

Every folded result's size is checked against WebNN's limits (``Converter.check_size``) before it is
allocated: by ``_OUTPUT_SHAPES`` for the ops whose output size comes from input values or
attributes, by the builder (which validates each op's output) for the one-node graphs, and by shape
inference for the reference implementation."""
import math

import numpy as np

from ._prepare import onnx_module
from ._registry import HANDLERS, dequantize_array

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


def _attribute(node, name, default=None):
    for attribute in node.attribute:
        if attribute.name == name:
            return onnx_module().helper.get_attribute_value(attribute)
    return default


def _ints(attribute_name, node):
    for attribute in node.attribute:
        if attribute.name == attribute_name:
            return list(attribute.ints) if attribute.type == 7 else [attribute.i]  # INTS, INT
    return None


def _int_list(value):
    return [int(v) for v in np.asarray(value).reshape(-1)]


# ---- Output sizes of the ops whose result can be far larger than their inputs: checked before the
# result is allocated. Each returns the output shape, or None when the inputs are not well formed
# (the path that evaluates the node then reports it).

def _broadcast(a, b):
    rank = max(len(a), len(b))
    a, b = [1] * (rank - len(a)) + list(a), [1] * (rank - len(b)) + list(b)
    if any(x != y and 1 not in (x, y) for x, y in zip(a, b)):
        return None
    return [y if x == 1 else x for x, y in zip(a, b)]


def _tile_shape(node, inputs, opset):
    repeats = _int_list(inputs[1])
    if len(repeats) != inputs[0].ndim:
        return None
    return [d * r for d, r in zip(inputs[0].shape, repeats)]


def _expand_shape(node, inputs, opset):
    return _broadcast(inputs[0].shape, _int_list(inputs[1]))


def _constant_of_shape_shape(node, inputs, opset):
    return _int_list(inputs[0])


def _pad_shape(node, inputs, opset):
    shape = list(inputs[0].shape)
    if opset < 11:
        pads, axes = _ints("pads", node) or _ints("paddings", node) or [], range(len(shape))
    else:
        pads = _int_list(inputs[1])
        axes = _int_list(inputs[3]) if len(inputs) > 3 and inputs[3] is not None else range(len(shape))
    axes = list(axes)
    if len(pads) != 2 * len(axes) or not all(-len(shape) <= a < len(shape) for a in axes):
        return None
    for i, axis in enumerate(axes):
        shape[axis] += pads[i] + pads[i + len(axes)]
    return shape


def _concat_shape(node, inputs, opset):
    axis = (_ints("axis", node) or [0])[0]
    ranks = {x.ndim for x in inputs}
    if len(ranks) != 1 or not -inputs[0].ndim <= axis < max(inputs[0].ndim, 1):
        return None
    shape = list(inputs[0].shape)
    shape[axis] = sum(x.shape[axis] for x in inputs)
    return shape


def _gather_shape(node, inputs, opset):
    data, indices = inputs
    axis = (_ints("axis", node) or [0])[0]
    if not -data.ndim <= axis < data.ndim:
        return None
    axis %= data.ndim
    return list(data.shape[:axis]) + list(indices.shape) + list(data.shape[axis + 1:])


def _one_hot_shape(node, inputs, opset):
    shape = list(inputs[0].shape)
    axis = (_ints("axis", node) or [-1])[0]
    if inputs[1].size != 1 or not -len(shape) - 1 <= axis <= len(shape):
        return None
    shape.insert(axis % (len(shape) + 1), int(np.asarray(inputs[1]).reshape(-1)[0]))
    return shape


def _range_count(start, limit, delta):
    """Range's length as ONNX Runtime computes it: ceil((limit - start) / delta) in double, where
    limit - start is computed in the inputs' type."""
    with np.errstate(over="ignore"):
        difference = (np.asarray(limit) - np.asarray(start)).astype(np.float64)
    return max(math.ceil(float(difference) / float(delta)), 0)


def _range_shape(node, inputs, opset):
    start, limit, delta = (np.asarray(x).reshape(-1) for x in inputs)
    if not start.size == limit.size == delta.size == 1 or delta[0] == 0 or \
            not np.isfinite(np.asarray([start[0], limit[0], delta[0]], np.float64)).all():
        return None
    return [_range_count(start[0], limit[0], delta[0])]


_OUTPUT_SHAPES = {"Tile": _tile_shape, "Expand": _expand_shape, "ConstantOfShape": _constant_of_shape_shape,
                  "Pad": _pad_shape, "Concat": _concat_shape, "Gather": _gather_shape, "OneHot": _one_hot_shape,
                  "Range": _range_shape}


def _output_dtype(node, inputs):
    if node.op_type == "ConstantOfShape":
        value = _attribute(node, "value")
        return np.float32 if value is None else onnx_module().helper.tensor_dtype_to_np_dtype(value.data_type)
    if node.op_type == "OneHot":
        return inputs[2].dtype
    return inputs[0].dtype


def _check_output_size(converter, node, inputs, opset):
    shape_of = _OUTPUT_SHAPES.get(node.op_type)
    if shape_of is None or any(x is None for x in inputs[:2]):
        return
    try:
        shape = shape_of(node, inputs, opset)
    except (ValueError, TypeError, IndexError, OverflowError):
        return
    if shape is not None:
        converter.check_size(shape, _output_dtype(node, inputs))


# ---- Exact NumPy forms. Each returns the outputs, or None to leave the node to the next path (an
# attribute, data type or case it does not handle); tests/test_onnx_folding.py compares them with
# the ONNX reference implementation.

def _reshape(node, inputs, opset):
    data, shape = inputs
    if any(a.name == "allowzero" and a.i for a in node.attribute):
        return None
    dims = [int(d) for d in shape.reshape(-1)]
    if any(d == 0 and i >= data.ndim for i, d in enumerate(dims)):
        return None
    dims = [data.shape[i] if d == 0 and i < data.ndim else d for i, d in enumerate(dims)]
    return [data.reshape(dims)]


# Types WebNN has (bool travels as uint8): casts between them are the engine's, except exact ones.
_WEBNN_DTYPES = {np.dtype(t) for t in ("float32", "float16", "int32", "uint32", "int64", "uint64", "int8", "uint8",
                                       "bool")}


def _cast(node, inputs, opset):
    """Casts that cannot round: between integer and bool types when every value fits the target
    (an exact copy), and of empty tensors. Casts from or to a type WebNN lacks (double, int16, ...)
    are NumPy's too: no WebNN kernel could run them (IEEE conversions, rounded to nearest)."""
    onnx = onnx_module()
    to = _ints("to", node)
    if len([a for a in node.attribute if a.name != "saturate"]) != 1 or not to or \
            to[0] in (8, 16, 17, 18, 19, 20, 21, 22, 23):  # strings, bf16, fp8, 4-bit
        return None
    (data,) = inputs
    target = np.dtype(onnx.helper.tensor_dtype_to_np_dtype(to[0]))
    if data.dtype.kind not in "biuf" or target.kind not in "biuf":
        return None
    if data.size == 0 or data.dtype == target or data.dtype not in _WEBNN_DTYPES or target not in _WEBNN_DTYPES:
        return [data.astype(target)]
    if data.dtype.kind in "biu" and target.kind == "b":
        return [data != 0]
    if data.dtype.kind in "biu" and target.kind in "iu":
        info = np.iinfo(target)
        if info.min <= int(data.min()) and int(data.max()) <= info.max:
            return [data.astype(target)]
    return None


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
        return None  # start / end: the handler's
    return [np.array(inputs[0].shape, dtype=np.int64)]


def _identity(node, inputs, opset):
    return [inputs[0]]


def _slice(node, inputs, opset):
    """Python's slice rules clamp starts and ends as ONNX's do (the handler uses them too)."""
    data = inputs[0]
    if opset < 10:
        starts, ends = _ints("starts", node), _ints("ends", node)
        axes, steps = _ints("axes", node), None
        if starts is None or ends is None:
            return None
    else:
        starts, ends = _int_list(inputs[1]), _int_list(inputs[2])
        axes = _int_list(inputs[3]) if len(inputs) > 3 and inputs[3] is not None else None
        steps = _int_list(inputs[4]) if len(inputs) > 4 and inputs[4] is not None else None
    axes = list(range(len(starts))) if axes is None else axes
    steps = [1] * len(starts) if steps is None else steps
    if not len(starts) == len(ends) == len(axes) == len(steps) or 0 in steps:
        return None
    if not all(-data.ndim <= a < data.ndim for a in axes) or len({a % data.ndim for a in axes}) != len(axes):
        return None
    index = [slice(None)] * data.ndim
    for axis, start, end, step in zip(axes, starts, ends, steps):
        index[axis] = slice(*slice(start, end, step).indices(data.shape[axis]))
    return [data[tuple(index)]]


def _expand(node, inputs, opset):
    shape = _broadcast(inputs[0].shape, _int_list(inputs[1]))
    return None if shape is None else [np.broadcast_to(inputs[0], shape)]


def _constant_of_shape(node, inputs, opset):
    shape = _int_list(inputs[0])
    if any(d < 0 for d in shape):
        return None
    value = _attribute(node, "value")
    value = np.zeros(1, np.float32) if value is None else onnx_module().numpy_helper.to_array(value).reshape(-1)
    if value.size != 1:
        return None
    return [np.full(shape, value[0], value.dtype)]


def _range(node, inputs, opset):
    """The ONNX function body's definition, as ONNX Runtime computes it: start, then each value the
    previous one plus delta, added in the inputs' type."""
    if len({x.dtype for x in inputs}) != 1 or _range_shape(node, inputs, opset) is None:
        return None
    start, limit, delta = (np.asarray(x).reshape(-1)[0] for x in inputs)
    count = _range_count(start, limit, delta)
    if count == 0:
        return [np.zeros(0, inputs[0].dtype)]
    steps = np.full(count, delta, inputs[0].dtype)
    steps[0] = start
    with np.errstate(over="ignore"):
        return [np.add.accumulate(steps, dtype=inputs[0].dtype)]


def _dequantize_linear(node, inputs, opset):
    """Per-tensor and per-axis DequantizeLinear, bitwise as ONNX Runtime computes it
    (``dequantize_array``): the int32 biases of quantized models (their scale the input's times the
    weight's), and int16/uint16 weights, which WebNN has no type for."""
    axis, block_size, output_dtype = _attribute(node, "axis", 1), _attribute(node, "block_size", 0), \
        _attribute(node, "output_dtype", 0)
    if block_size or len(inputs) < 2 or inputs[1] is None:
        return None
    x, scale = inputs[0], inputs[1]
    if output_dtype and onnx_module().helper.tensor_dtype_to_np_dtype(output_dtype) != scale.dtype:
        return None
    y = dequantize_array(x, scale, inputs[2] if len(inputs) > 2 else None, axis)
    return None if y is None else [y]


_NUMPY_FORMS = {"Reshape": _reshape, "Cast": _cast, "Unsqueeze": _unsqueeze, "Squeeze": _squeeze,
                "Concat": _concat, "Gather": _gather, "Shape": _shape, "Identity": _identity, "Slice": _slice,
                "Expand": _expand, "ConstantOfShape": _constant_of_shape, "Range": _range,
                "DequantizeLinear": _dequantize_linear}
_OPTIONAL_INPUTS = {"Slice", "DequantizeLinear"}  # forms that take absent (None) inputs


def _numpy_form(node, inputs, opset):
    """The node's outputs by its exact NumPy form, or None. ``inputs``: arrays, None where absent."""
    form = _NUMPY_FORMS.get(node.op_type)
    if form is None or len([o for o in node.output if o]) != 1 or node.output[0] == "":
        return None
    if any(x is None for x in inputs) and node.op_type not in _OPTIONAL_INPUTS:
        return None
    try:
        outputs = form(node, inputs, opset)
    except (ValueError, TypeError, IndexError, OverflowError):
        return None  # the next path reports it
    return None if outputs is None else [np.require(outputs[0], requirements="C")]


# ---- One-node WebNN graphs.

# ONNX ops whose output is bool, which WebNN returns as uint8 0/1.
_BOOL_RESULTS = {"Equal", "Greater", "Less", "GreaterOrEqual", "LessOrEqual", "And", "Or", "Xor", "Not", "IsNaN",
                 "IsInf"}


def _is_bool_result(node, inputs):
    """Whether the node's uint8 results are ONNX bools. ``inputs``: {name: array}."""
    if node.op_type in _BOOL_RESULTS:
        return True
    if node.op_type == "Cast":
        return _ints("to", node) == [9]
    if node.op_type == "CastLike":
        return inputs[node.input[1]].dtype == np.bool_
    # Data movement and Where keep their data's type: bool data gives bool results.
    dtypes = {x.dtype for x in inputs.values()}
    return np.dtype(np.bool_) in dtypes and np.dtype(np.uint8) not in dtypes


def _on_engine(converter, node, opset, handler, inputs):
    """The node converted alone by its handler into a WebNN graph on the converter's context, its
    first input a graph input, built and computed."""
    for x in inputs.values():
        if x.dtype not in _WEBNN_DTYPES:
            raise converter.unsupported(f"folding evaluates this node with WebNN's kernels, and WebNN has no "
                                        f"{x.dtype.name} tensors")
    node_converter = converter.for_node()
    builder = node_converter.builder
    for name, x in inputs.items():
        node_converter.set(name, x)
    data_operand, feeds = None, {}
    if node.input and node.input[0]:
        data = inputs[node.input[0]]
        if data.size == 0:
            raise converter.unsupported("folding evaluates this node with WebNN's kernels, and its input is an "
                                        "empty tensor (WebNN has no empty tensors)")
        feeds["x"] = np.require(data.astype(np.uint8) if data.dtype == np.bool_ else data, requirements="C")
        data_operand = builder.input("x", data_type=feeds["x"].dtype.name, shape=list(data.shape))
        node_converter.values[node.input[0]] = data_operand
    outputs = handler(node_converter, node, opset)
    outputs = list(outputs) if isinstance(outputs, (list, tuple)) else [outputs]

    computed = {}  # id(operand) -> its value
    operands = {id(v): v for v in outputs if not (v is None or isinstance(v, np.ndarray) or v is data_operand)}
    if operands:
        constants = {id(operand) for _, operand in node_converter._constants.values()}
        named = {f"y{i}": builder.identity(v) if key in constants else v for i, (key, v) in enumerate(operands.items())}
        graph = builder.build(named)
        values = graph.compute({name: feeds[name] for name in graph.input_descriptors})
        computed = {key: values[f"y{i}"] for i, key in enumerate(operands)}
    as_bool = _is_bool_result(node, inputs)

    def folded(value):
        if value is None or isinstance(value, np.ndarray):
            return value
        array = feeds["x"] if value is data_operand else computed[id(value)]
        return array.astype(np.bool_) if as_bool and array.dtype == np.uint8 else array

    return [folded(value) for value in outputs]


# ---- The ONNX reference implementation, for ops WebNN cannot express at all.

# Ops whose handler only refuses (WebNN has no op for them; ConstantOfShape and Range reach the
# reference implementation only with inputs their NumPy forms refuse), and Constant's rare forms
# (sparse_value, strings).
_NO_WEBNN_OP = {"NonZero", "Unique", "Compress", "ConstantOfShape", "Range", "Constant"}
# Ops whose output sizes depend on input values that shape inference cannot see, but whose outputs
# hold no more elements than the inputs (NonZero's: rank times as many indices).
_NO_LARGER_THAN_INPUTS = {"NonZero", "Unique", "Compress", "TopK", "NonMaxSuppression"}
# Initializers with more elements than this are given to shape inference as typed inputs, not data.
_INFERENCE_DATA_LIMIT = 1024


def _one_node_model(converter, node, feeds, as_data):
    """The node as a model: its inputs graph inputs, or (``as_data``) the small ones initializers."""
    onnx = onnx_module()
    helper = onnx.helper
    inputs, initializers = [], []
    for name, array in feeds.items():
        if as_data and array.size <= _INFERENCE_DATA_LIMIT:
            initializers.append(onnx.numpy_helper.from_array(array, name))
        else:
            elem_type = helper.np_dtype_to_tensor_dtype(array.dtype)
            inputs.append(helper.make_tensor_value_info(name, elem_type, array.shape))
    outputs = [helper.make_empty_tensor_value_info(name) for name in node.output if name]
    graph = helper.make_graph([node], "fold", inputs, outputs, initializers)
    model = helper.make_model(graph, opset_imports=list(converter.model.opset_import))
    model.ir_version = converter.model.ir_version
    return model


def _check_inferred_sizes(converter, node, feeds):
    """Bounds the outputs before the reference implementation allocates them: ONNX shape inference
    (reading the small inputs' values) must give each output a static shape within WebNN's limits,
    unless the op's outputs are no larger than its inputs."""
    onnx = onnx_module()
    if node.op_type in _NO_LARGER_THAN_INPUTS:
        return
    try:
        # Without data propagation, which can itself allocate the tensors it propagates.
        inferred = onnx.shape_inference.infer_shapes(_one_node_model(converter, node, feeds, True),
                                                     strict_mode=False)
    except Exception:  # noqa: BLE001 (inference failed: the sizes are unknown)
        inferred = None
    by_name = {} if inferred is None else {info.name: info for info in inferred.graph.output}
    for name in node.output:
        info = by_name.get(name)
        tensor_type = info.type.tensor_type if info is not None and info.type.HasField("tensor_type") else None
        dims = list(tensor_type.shape.dim) if tensor_type is not None and tensor_type.HasField("shape") else None
        if name and (dims is None or not all(d.HasField("dim_value") for d in dims)):
            raise converter.unsupported("this operator has no WebNN mapping, and its output size on these constant "
                                        "inputs is not known before evaluating it")
        if name:
            dtype = onnx.helper.tensor_dtype_to_np_dtype(tensor_type.elem_type) if tensor_type.elem_type else np.int8
            converter.check_size([d.dim_value for d in dims], dtype)


def _reference(converter, node, opset):
    """The ONNX reference implementation: only for ops the importer cannot map to WebNN at all, which
    could never run at dispatch either (so there is no kernel for folding to disagree with)."""
    from onnx.reference import ReferenceEvaluator

    feeds = {}
    for name in node.input:
        if name and name not in feeds:
            feeds[name] = converter.values[name]
    _check_inferred_sizes(converter, node, feeds)
    try:
        results = ReferenceEvaluator(_one_node_model(converter, node, feeds, False)).run(None, feeds)
    except Exception as error:
        raise converter.unsupported(f"evaluating this node on its constant inputs failed: {error}") from error
    by_name = dict(zip([name for name in node.output if name], results))
    outputs = [np.asarray(by_name[name]) if name else None for name in node.output]
    for output in outputs:
        if output is not None:
            converter.check_size(output.shape, output.dtype)
    return outputs


def evaluate(converter, node, opset):
    """The node's outputs as NumPy arrays."""
    if node.op_type == "Constant" and len(node.attribute) == 1:
        value = _constant(node)
        if value is not None:
            return [value]
    inputs = [None if name == "" else converter.values[name] for name in node.input]
    _check_output_size(converter, node, inputs, opset)
    outputs = _numpy_form(node, inputs, opset)
    if outputs is not None:
        return outputs
    handler = HANDLERS.get(node.op_type)
    if handler is None or node.op_type in _NO_WEBNN_OP:
        return _reference(converter, node, opset)
    return _on_engine(converter, node, opset, handler, {name: converter.values[name] for name in node.input if name})
