"""Model preparation: pinning input dimensions, shape inference, initializers."""
import functools
import os
import warnings

from .._errors import NotSupportedError, OperationError


@functools.cache
def onnx_module():
    """The ``onnx`` package, imported on first use (it is an optional dependency); looked up once
    (its import statements cost 6 us a call, and the importer calls it per node)."""
    try:
        import onnx
        import onnx.inliner  # noqa: F401
        import onnx.shape_inference  # noqa: F401
    except ImportError as error:
        raise ImportError("webnn.onnx needs the 'onnx' package: pip install 'webnn[onnx]'") from error
    return onnx


def default_opset(model):
    for entry in model.opset_import:
        if entry.domain in ("", "ai.onnx"):
            return entry.version
    raise NotSupportedError("ONNX model: it imports no version of the default operator set")


def check_sizes(mapping, what):
    if mapping is None:
        return {}
    if not hasattr(mapping, "items"):
        raise TypeError(f"webnn.onnx: {what} must be a dict")
    return dict(mapping)


def valid_size(value):
    return hasattr(value, "__index__") and not isinstance(value, bool) and int(value) >= 1


# Initializers with more elements than this are given to shape inference as typed inputs, not data.
_INFERENCE_DATA_LIMIT = 1024


def _repeated(field):
    is_repeated = getattr(field, "is_repeated", None)  # protobuf >= 6; older ones have label
    return is_repeated if is_repeated is not None else field.label == field.LABEL_REPEATED


def _copy_fields(source, target, skip):
    for field, value in source.ListFields():
        if field.name in skip:
            continue
        if _repeated(field):
            getattr(target, field.name).extend(value)
        elif field.message_type is not None:
            getattr(target, field.name).CopyFrom(value)
        else:
            setattr(target, field.name, value)


def _skeleton(model, onnx):
    """A copy of the model whose large initializers are declared as graph inputs (type and shape
    only), so that copying it and shape inference never serialize the weights. Small ones (shapes,
    scales, axes) stay data: inference reads their values."""
    skeleton = onnx.ModelProto()
    _copy_fields(model, skeleton, {"graph"})
    _copy_fields(model.graph, skeleton.graph, {"initializer"})
    declared = {info.name for info in model.graph.input}
    for tensor in model.graph.initializer:
        count = 1
        for d in tensor.dims:
            count *= d
        if count <= _INFERENCE_DATA_LIMIT:
            skeleton.graph.initializer.add().CopyFrom(tensor)
        elif tensor.name not in declared:
            skeleton.graph.input.append(onnx.helper.make_tensor_value_info(tensor.name, tensor.data_type,
                                                                           list(tensor.dims)))
    return skeleton


def shape_check_enabled():
    """Whether ONNX shape inference cross-checks the converted shapes (WEBNN_ONNX_SHAPE_CHECK=1; the
    test suite turns it on). Off by default: the conversion does not depend on it (every op is
    validated by the builder), and it costs about as much time as the conversion itself."""
    return os.environ.get("WEBNN_ONNX_SHAPE_CHECK", "") not in ("", "0")


def pin_and_infer(model, override_dims, input_shapes):
    """Returns ``(graph model, {input: (elem_type, shape)}, inferred)``. With the shape check on
    (``inferred``), the graph model is a copy with static input shapes and inferred value_info that
    holds only the small initializers (read the weights from ``model``); otherwise it is ``model``
    itself (local functions inlined into a copy), read only. Raises TypeError for unknown names,
    wrong ranks, or dimensions left unresolved."""
    onnx = onnx_module()
    override_dims = check_sizes(override_dims, "override_dims")
    input_shapes = check_sizes(input_shapes, "input_shapes")
    for name, size in override_dims.items():
        if not isinstance(name, str) or not valid_size(size):
            raise TypeError(f"webnn.onnx: override_dims must map dimension names to integers >= 1, got {name!r}: {size!r}")
    initializer_names = {t.name for t in model.graph.initializer}
    check = shape_check_enabled()
    pinned = _skeleton(model, onnx) if check or len(model.functions) else model
    if len(pinned.functions):  # model-local functions: inline their bodies
        pinned = onnx.inliner.inline_local_functions(pinned)
    graph = pinned.graph
    inputs = [info for info in graph.input if info.name not in initializer_names]
    unknown = set(input_shapes) - {info.name for info in inputs}
    if unknown:
        raise TypeError(f"webnn.onnx: input_shapes names unknown input(s) {sorted(unknown)}; "
                        f"the model's inputs are {[info.name for info in inputs]}")
    symbols = set()
    types = {}
    missing = []
    for info in inputs:
        tensor_type = info.type.tensor_type
        if not info.type.HasField("tensor_type"):
            raise NotSupportedError(f"ONNX graph input '{info.name}' is not a tensor (sequences, maps and optionals "
                                    "are not supported)")
        dims = list(tensor_type.shape.dim) if tensor_type.HasField("shape") else None
        if info.name in input_shapes:
            shape = input_shapes[info.name]
            if not hasattr(shape, "__iter__") or not all(valid_size(d) for d in shape):
                raise TypeError(f"webnn.onnx: input_shapes['{info.name}'] must be a list of integers >= 1, got {shape!r}")
            shape = [int(d) for d in shape]
            if dims is not None and len(dims) != len(shape):
                raise TypeError(f"webnn.onnx: input_shapes['{info.name}'] has rank {len(shape)}, "
                                f"but the model's input has rank {len(dims)}")
            for axis, (dim, size) in enumerate(zip(dims or [], shape)):
                if dim.HasField("dim_value") and dim.dim_value > 0 and dim.dim_value != size:
                    raise TypeError(f"webnn.onnx: input_shapes['{info.name}'][{axis}] = {size}, but the model fixes "
                                    f"that dimension to {dim.dim_value}")
        else:
            if dims is None:
                raise TypeError(f"webnn.onnx: input '{info.name}' has no shape in the model; "
                                f"pass input_shapes={{'{info.name}': [...]}}")
            shape = []
            for axis, dim in enumerate(dims):
                unnamed = f"{info.name}[{axis}]"  # how override_dims names a dimension without a dim_param
                if dim.HasField("dim_value") and dim.dim_value > 0:
                    shape.append(dim.dim_value)
                elif dim.HasField("dim_param") and dim.dim_param and dim.dim_param != "?":
                    symbols.add(dim.dim_param)
                    if dim.dim_param in override_dims:
                        shape.append(int(override_dims[dim.dim_param]))
                    else:
                        missing.append(f"'{info.name}'[{axis}] ('{dim.dim_param}')")
                        shape.append(None)
                elif unnamed in override_dims:
                    symbols.add(unnamed)
                    shape.append(int(override_dims[unnamed]))
                else:
                    symbols.add(unnamed)
                    missing.append(f"'{info.name}'[{axis}] (unnamed: '{unnamed}')")
                    shape.append(None)
        types[info.name] = (tensor_type.elem_type, shape)
    unused = set(override_dims) - symbols
    if unused:
        raise TypeError(f"webnn.onnx: override_dims names unknown dimension(s) {sorted(unused)}; "
                        f"the model's symbolic input dimensions are {sorted(symbols)}")
    if missing:
        raise TypeError("webnn.onnx: this conversion needs static shapes, but input dimension(s) " + ", ".join(missing)
                        + " are not fixed; pin them with override_dims={name: size} or whole inputs with "
                        "input_shapes={input: shape} (webnn.onnx.load keeps them dynamic)")
    if not check:
        return pinned, types, False
    for info in inputs:
        tensor_shape = info.type.tensor_type.shape
        tensor_shape.ClearField("dim")
        for size in types[info.name][1]:
            tensor_shape.dim.add().dim_value = size
    del graph.value_info[:]
    for info in graph.output:  # declared output shapes may be symbolic or stale; inference redoes them
        info.type.tensor_type.ClearField("shape")
    try:
        pinned = onnx.shape_inference.infer_shapes(pinned, strict_mode=False, data_prop=True)
    except Exception as error:  # inference is a cross-check only; conversion does not depend on it
        warnings.warn(f"webnn.onnx: ONNX shape inference failed ({error}); converting without its cross-check")
    return pinned, types, True


def initializers(graph):
    onnx = onnx_module()
    if len(graph.sparse_initializer):
        raise NotSupportedError("ONNX graph: sparse initializers are not supported")
    return {t.name: onnx.numpy_helper.to_array(t) for t in graph.initializer}


def check_inferred_shapes(model, values):
    """Compares the shapes ONNX shape inference found with the converted ones (a self-check)."""
    for info in list(model.graph.value_info) + list(model.graph.output):
        tensor_type = info.type.tensor_type
        if not info.type.HasField("tensor_type") or not tensor_type.HasField("shape"):
            continue
        dims = tensor_type.shape.dim
        if not all(d.HasField("dim_value") and d.dim_value > 0 for d in dims):
            continue
        value = values.get(info.name)
        if value is None:
            continue
        inferred = [d.dim_value for d in dims]
        if list(value.shape) != inferred:
            raise OperationError(f"webnn.onnx: internal error: '{info.name}' was converted with shape "
                                 f"{list(value.shape)}, but ONNX shape inference gives {inferred}")
