"""The converter: walks an ONNX graph in order, folding constant nodes with NumPy and mapping the
others to MLGraphBuilder calls (the per-op mappings are in ``ops/``, registered in ``_registry``)."""
import functools
import os

import numpy as np

from .. import _core
from .._api import MLGraphBuilder, create_context
from .._errors import DataError, MLError, NotSupportedError
from . import _folding, _prepare
from ._registry import DEFAULT_DOMAINS, handler_key, onnx_type_name, webnn_type
from .ops import HANDLERS  # every handler registered

# Default-domain op types, then other domains' ops as "domain.OpType" ("com.microsoft.FusedConv").
SUPPORTED_OPS = tuple(sorted(HANDLERS, key=lambda key: ("." in key, key)))

# NumPy dtypes of values known at conversion time -> WebNN data types (bool as uint8 0/1).
_NUMPY_TO_WEBNN = {"float32": "float32", "float16": "float16", "int32": "int32", "uint32": "uint32",
                   "int64": "int64", "uint64": "uint64", "int8": "int8", "uint8": "uint8", "bool": "uint8"}
_OTHER_DOMAINS = {key.rsplit(".", 1)[0] for key in HANDLERS if "." in key}


@functools.cache
def dtype_name(dtype):
    """np.dtype.name, remembered (the property builds its string on every access)."""
    return dtype.name


class Converter:
    """State of one conversion. Values are NumPy arrays (known at conversion time) or MLOperands."""

    def __init__(self, model, builder, context):
        self.model = model
        self.builder = builder
        self.opset = _prepare.default_opset(model)
        self.values = {"": None}
        self._constants = {}  # id(array) -> (array, MLOperand): one builder constant per array
        self._infos = {info["name"]: info for info in _core.op_infos()}
        self._limits = context.op_support_limits()
        self.node = None
        self.label = ""

    # ------------------------------------------------------------ errors
    def where(self):
        if self.node is None:
            return "ONNX graph"
        return f"ONNX node '{self.label}' ({handler_key(self.node.domain, self.node.op_type)})"

    def unsupported(self, reason):
        return NotSupportedError(f"{self.where()}: {reason}")

    # ------------------------------------------------------------ values
    def is_const(self, name):
        return isinstance(self.values.get(name), np.ndarray)

    def has(self, node, index):
        return index < len(node.input) and node.input[index] != ""

    def value(self, name):
        if name not in self.values:
            raise TypeError(f"{self.where()}: input '{name}' is not produced by any earlier node, initializer or input")
        return self.values[name]

    def const(self, name, what="this input"):
        """The NumPy value of a conversion-time constant input."""
        value = self.value(name)
        if not isinstance(value, np.ndarray):
            error = self.unsupported(f"{what} ('{name}') must be known at conversion time, but it is computed "
                                     "from graph inputs at run time (WebNN shapes and parameters are static)")
            error.runtime_value = name  # lets callers retry with that value fixed
            raise error
        return value

    def shape(self, name):
        value = self.value(name)
        return list(value.shape)

    def rank(self, name):
        return len(self.value(name).shape)

    def dtype(self, name):
        """The value's data type name: a WebNN name, or 'bool' for NumPy bool constants."""
        value = self.value(name)
        if isinstance(value, np.ndarray):
            return dtype_name(value.dtype)
        return value.data_type

    def operand(self, name_or_array, data_type=None):
        """The MLOperand for an input name or NumPy array; constants become builder constants."""
        value = self.value(name_or_array) if isinstance(name_or_array, str) else name_or_array
        if not isinstance(value, np.ndarray):
            if data_type is not None and value.data_type != data_type:
                value = self.op("cast", value, data_type)
            return value
        if data_type is not None:
            value = value.astype(np.dtype(data_type), copy=False)
        cached = self._constants.get(id(value))
        if cached is not None and cached[0] is value:
            return cached[1]
        webnn_name = _NUMPY_TO_WEBNN.get(dtype_name(value.dtype))
        if webnn_name is None:
            raise self.unsupported(f"a {value.dtype.name} tensor is used at run time; WebNN has no such data type")
        if 0 in value.shape:
            raise self.unsupported("a zero-sized tensor is used at run time; WebNN has no empty tensors")
        array = np.require(value.astype(np.uint8) if value.dtype == np.bool_ else value, requirements="C")
        operand = self.builder.constant({"dataType": webnn_name, "shape": list(array.shape)}, array)
        self._constants[id(value)] = (value, operand)
        return operand

    def set(self, name, value):
        if name:
            if isinstance(value, np.ndarray) or not hasattr(value, "data_type"):
                value = np.asarray(value)
            self.values[name] = value

    # ------------------------------------------------------------ builder calls
    def op(self, name, *args, **options):
        """Calls builder op ``name`` (its camelCase name) labelled with the current node, after
        checking its operands against the context's opSupportLimits."""
        info = self._infos[name]
        limits = self._limits.get(name, {})
        for spec, arg in zip(info["arguments"], args):
            if spec["kind"] == "operand":
                self._check_limits(name, spec["name"], arg, limits)
            elif spec["kind"] == "operands":
                for item in arg:
                    self._check_limits(name, spec["name"], item, limits)
        for key, arg in options.items():
            if hasattr(arg, "data_type"):
                self._check_limits(name, key, arg, limits)
        return getattr(self.builder, name)(*args, label=self.label, **options)

    def _check_limits(self, op, argument, operand, limits):
        limit = limits.get(argument)
        if not limit:
            return
        if operand.data_type not in limit["dataTypes"]:
            raise self.unsupported(f"WebNN {op} does not take a {operand.data_type} {argument} "
                                   f"(it takes {', '.join(limit['dataTypes'])})")
        rank = len(operand.shape)
        if not limit["rankRange"]["min"] <= rank <= limit["rankRange"]["max"]:
            raise self.unsupported(f"WebNN {op} does not take a rank-{rank} {argument} "
                                   f"(ranks {limit['rankRange']['min']}..{limit['rankRange']['max']})")

    # ------------------------------------------------------------ the walk
    def run_nodes(self, nodes, opset):
        for index, node in enumerate(nodes):
            self.node = node
            self.label = node.name or f"{node.op_type}_{index}"
            default_domain = node.domain in DEFAULT_DOMAINS
            if not default_domain and node.domain not in _OTHER_DOMAINS:
                raise self.unsupported(f"the operator domain '{node.domain}' is not supported (only the default "
                                       f"ONNX domain and {', '.join(sorted(_OTHER_DOMAINS))})")
            # Other domains' ops are not folded: the ONNX reference implementation has no such ops.
            if default_domain and _folding.can_fold(self, node):
                outputs = _folding.evaluate(self, node, opset)
            else:
                handler = HANDLERS.get(handler_key(node.domain, node.op_type))
                if handler is None:
                    raise self.unsupported("this operator has no WebNN mapping" if default_domain else
                                           f"the {node.domain} operator {node.op_type} has no WebNN mapping")
                outputs = handler(self, node, opset)
            if not isinstance(outputs, (list, tuple)):
                outputs = [outputs]
            for name, value in zip(node.output, outputs):
                if name and value is None:
                    raise self.unsupported(f"output '{name}' is not supported")
                self.set(name, value)
        self.node = None


def _as_model(model):
    """An onnx.ModelProto from a ModelProto, a path, or the serialized bytes of a model (as ONNX
    Runtime accepts them). A file or bytes that do not parse as ONNX raise webnn.DataError."""
    onnx = _prepare.onnx_module()
    if isinstance(model, onnx.ModelProto):
        return model
    if isinstance(model, (bytes, bytearray, memoryview)):
        what, load = "the serialized model", lambda: onnx.load_model_from_string(bytes(model))
    elif isinstance(model, (str, os.PathLike)):
        path = os.fspath(model)
        if isinstance(path, bytes):
            path = os.fsdecode(path)
        if not os.path.isfile(path):
            raise FileNotFoundError(f"webnn.onnx: no such model file: {path}")
        what, load = path, lambda: onnx.load(path)
    else:
        raise TypeError("webnn.onnx: expected a path, serialized model bytes or an onnx.ModelProto, "
                        f"got {type(model).__name__}")
    try:
        return load()
    except Exception as error:  # protobuf's DecodeError, or a truncated/foreign file
        raise DataError(f"webnn.onnx: {what} is not a valid ONNX model ({type(error).__name__}: {error})") from error


def convert(model, context=None, *, override_dims=None, input_shapes=None, builder=None):
    """Converts an ONNX model (a path or an ``onnx.ModelProto``) into WebNN builder calls.

    Returns ``(builder, inputs, outputs)``: the MLGraphBuilder (a new one on ``context``, or the
    given ``builder``), ``{input name: {"dataType", "shape"}}`` and ``{output name: MLOperand}``.
    ``builder.build(outputs)`` compiles the graph; ``webnn.save(path, outputs)`` writes it.
    ``override_dims`` pins symbolic dimensions by name (``{"batch": 1}``); ``input_shapes`` gives
    whole input shapes (``{"x": [1, 3, 48, 320]}``), for unnamed dimensions.
    """
    model = _as_model(model)
    if builder is not None and not isinstance(builder, MLGraphBuilder):
        raise TypeError(f"convert: builder must be an MLGraphBuilder, got {type(builder).__name__}")
    if context is None:
        context = builder.context if builder is not None and hasattr(builder, "context") else create_context()
    if builder is None:
        builder = MLGraphBuilder(context)
    walk = {}
    try:
        return _convert_graph(model, builder, context, override_dims, input_shapes, walk)
    except (TypeError, MLError, FileNotFoundError):
        raise
    except Exception as error:  # a malformed model that reached a corner of the importer
        converter = walk.get("converter")
        node = converter.node if converter is not None else None
        where = (f"node '{converter.label}' ({handler_key(node.domain, node.op_type)})" if node is not None
                 else "the model")
        raise DataError(f"webnn.onnx: {where} could not be converted: malformed model? "
                        f"({type(error).__name__}: {error})") from error


def _convert_graph(model, builder, context, override_dims, input_shapes, walk):
    weights = _prepare.initializers(model.graph)
    model, input_types, inferred = _prepare.pin_and_infer(model, override_dims, input_shapes)
    converter = walk["converter"] = Converter(model, builder, context)
    graph = model.graph
    inputs = {}
    for name, array in weights.items():
        converter.set(name, array)
    for info in graph.input:
        if info.name in converter.values:
            continue  # an initializer listed as an input (IR < 4): a constant, as in ONNX Runtime
        elem_type, shape = input_types[info.name]
        data_type = webnn_type(elem_type)
        if data_type is None:
            raise NotSupportedError(f"ONNX graph input '{info.name}' has type {onnx_type_name(elem_type)}, "
                                    "which WebNN does not have")
        inputs[info.name] = {"dataType": data_type, "shape": list(shape)}
        converter.set(info.name, builder.input(info.name, data_type=data_type, shape=list(shape)))
    converter.run_nodes(graph.node, converter.opset)
    outputs = {}
    used = {id(converter.values[name]) for name in inputs}  # an input can be an output only through identity
    for info in graph.output:
        value = converter.value(info.name)
        if isinstance(value, np.ndarray) or id(value) in used:
            value = builder.identity(converter.operand(value) if isinstance(value, np.ndarray) else value,
                                     label=f"output {info.name}")
        used.add(id(value))
        outputs[info.name] = value
    if inferred:
        _prepare.check_inferred_shapes(model, converter.values)
    return builder, inputs, outputs


def load(model, context=None, *, override_dims=None, input_shapes=None):
    """Converts an ONNX model (a path, serialized bytes or an ``onnx.ModelProto``) and returns the
    built MLGraph.

    The graph keeps one copy of each weight (conv and matmul weights in their packed form only), so
    it cannot be written back with ``webnn.save``: use :func:`convert_to_webnn` for a ``.webnn``
    file, or :func:`convert` and save its outputs.
    """
    builder, _, outputs = convert(model, context, override_dims=override_dims, input_shapes=input_shapes)
    graph = builder.build(outputs)
    del builder, outputs  # the raw weights, now packed into the graph's kernels
    _core.release_free_memory()
    return graph


def convert_to_webnn(model, out_path, *, override_dims=None, input_shapes=None, context=None, **save_options):
    """Converts an ONNX model and writes it as a ``.webnn`` model (``webnn.save``) to ``out_path``.

    ``save_options`` go to :func:`webnn.save` (``format``, ``weights``, ``name``). Returns
    ``{"inputs": {name: descriptor}, "outputs": {name: descriptor}}``.
    """
    from .. import formats

    save = getattr(formats, "save", None)
    if save is None:
        raise NotSupportedError("convert_to_webnn: this build has no webnn.save (.webnn writer)")
    _, inputs, outputs = convert(model, context, override_dims=override_dims, input_shapes=input_shapes)
    save(out_path, outputs, **save_options)
    return {"inputs": inputs,
            "outputs": {name: {"dataType": o.data_type, "shape": list(o.shape)} for name, o in outputs.items()}}
