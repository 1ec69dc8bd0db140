"""The converter: walks an ONNX graph in topological order (the file's, or sorted when a tool wrote the
nodes out of order), folding constant nodes (``_folding``) and mapping the others to MLGraphBuilder
calls (the per-op mappings are in ``ops/``, registered in ``_registry``)."""
import copy
import functools
import heapq
import os

import numpy as np

from .. import _core
from .._api import MLGraphBuilder, create_context
from .._dynamic import DynamicDimension, is_static
from .._errors import DataError, MLError, NotSupportedError
from . import _folding, _prepare
from ._registry import DEFAULT_DOMAINS, handler_key, onnx_type_name, webnn_type
from .ops import HANDLERS  # every handler registered
from .ops.quantization import fuse_integer_products

# Default-domain op types, then other domains' ops as "domain.OpType" ("com.microsoft.FusedConv").
SUPPORTED_OPS = tuple(sorted(HANDLERS, key=lambda key: ("." in key, key)))

# NumPy dtypes of values known at conversion time -> WebNN data types (bool as uint8 0/1).
_NUMPY_TO_WEBNN = {"float32": "float32", "float16": "float16", "int32": "int32", "uint32": "uint32",
                   "int64": "int64", "uint64": "uint64", "int8": "int8", "uint8": "uint8", "bool": "uint8"}
_OTHER_DOMAINS = {key.rsplit(".", 1)[0] for key in HANDLERS if "." in key}
MAX_DIMENSION = 2**31 - 1  # WebNN's largest valid dimension, and largest element count of a tensor


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
        self.context = context
        self.node = None
        self.label = ""

    def for_node(self):
        """A converter of the current node alone, on a new builder over the same context (constant
        folding converts a node with its handler into a one-node WebNN graph)."""
        node_converter = copy.copy(self)
        node_converter.builder = MLGraphBuilder(self.context)
        node_converter.values = {"": None}
        node_converter._constants = {}
        return node_converter

    # ------------------------------------------------------------ errors
    def where(self):
        if self.node is None:
            return "ONNX graph"
        return f"ONNX node '{self.label}' ({handler_key(self.node.domain, self.node.op_type)})"

    def unsupported(self, reason):
        return NotSupportedError(f"{self.where()}: {reason}")

    def check_size(self, shape, dtype, what="the result"):
        """Refuses (NotSupportedError) a tensor of this shape and NumPy or WebNN data type that WebNN
        could not hold: a dimension or element count over 2^31-1, or more bytes than the context's
        maxTensorByteLength. Called before the tensor is allocated."""
        shape = [int(d) for d in shape]
        count = 1
        for d in shape:
            if d > MAX_DIMENSION:
                raise self.unsupported(f"{what} would have shape {shape}, whose dimension {d} is over WebNN's "
                                       "limit of 2^31-1")
            count *= max(d, 0)
        if count > MAX_DIMENSION:
            raise self.unsupported(f"{what} would have shape {shape}: {count} elements, over WebNN's limit of 2^31-1")
        byte_length = count * np.dtype(dtype).itemsize
        if byte_length > self._limits["maxTensorByteLength"]:
            raise self.unsupported(f"{what} would have shape {shape}: {byte_length} bytes, over this context's "
                                   f"maxTensorByteLength of {self._limits['maxTensorByteLength']}")

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
        # The 8-bit weights of QDQ convolutions and matrix products stay dequantizeLinear ops of integer
        # constants, so that the compiler's quantized_ops pass can run those ops on integers.
        conv_weights = {node.input[1] for node in nodes
                        if node.op_type in ("Conv", "MatMul", "Gemm") and len(node.input) > 1}
        for index, node in self.in_order(nodes):
            self.node = node
            self.label = node.name or f"{node.op_type}_{index}"
            fused_handler = getattr(node, "handler", None)  # a node the importer fused (FusedNode)
            default_domain = node.domain in DEFAULT_DOMAINS and fused_handler is None
            if fused_handler is None and not default_domain and node.domain not in _OTHER_DOMAINS:
                raise self.unsupported(f"the operator domain '{node.domain}' is not supported (only the default "
                                       f"ONNX domain and {', '.join(sorted(_OTHER_DOMAINS))})")
            # Other domains' ops are not folded (left to the compiler's own constant folding).
            if default_domain and _folding.can_fold(self, node) and not (
                    node.op_type == "DequantizeLinear" and node.output[0] in conv_weights
                    and self.dtype(node.input[0]) in ("int8", "uint8")):
                outputs = _folding.evaluate(self, node, opset)
            else:
                handler = fused_handler or HANDLERS.get(handler_key(node.domain, node.op_type))
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

    def in_order(self, nodes):
        """[(index in the file, node)] in an order where every node comes after the nodes producing
        its inputs (those of its subgraphs included): the file's order when it is one (checked in
        one pass), else the topological order closest to it (Kahn's algorithm taking the earliest
        ready node first; O(n log n)), as ONNX Runtime sorts graphs whose nodes some tool appended
        out of order. An input no node produces is left to the walk's own error; a cycle raises
        TypeError naming its nodes."""
        known = self.values
        pending, outputs = set(), set()
        for node in nodes:
            for name in _node_inputs(node):
                if name not in known and name not in outputs:
                    pending.add(name)
            outputs.update(node.output)
        if not pending & outputs:
            return enumerate(nodes)
        return self._sorted(list(nodes), known)

    def _sorted(self, nodes, known):
        producer = {}
        for index, node in enumerate(nodes):
            for name in node.output:
                if name and name not in known:
                    producer.setdefault(name, index)
        missing = [0] * len(nodes)  # inputs not produced yet
        waiting = {}  # name -> indices of the nodes waiting for it
        for index, node in enumerate(nodes):
            for name in set(_node_inputs(node)):
                if name in producer:
                    missing[index] += 1
                    waiting.setdefault(name, []).append(index)
        ready = [index for index, count in enumerate(missing) if count == 0]  # already a heap: sorted
        order = []
        while ready:
            index = heapq.heappop(ready)
            order.append((index, nodes[index]))
            for name in nodes[index].output:
                if producer.get(name) != index:
                    continue
                for waiter in waiting.pop(name, ()):
                    missing[waiter] -= 1
                    if missing[waiter] == 0:
                        heapq.heappush(ready, waiter)
        if len(order) < len(nodes):
            self._refuse_cycle(nodes, producer, missing)
        return order

    def _refuse_cycle(self, nodes, producer, missing):
        """Raises TypeError naming the nodes of a cycle: followed back from the first node left
        unsorted, through inputs produced by nodes also left, until one repeats."""
        def label(index):
            node = nodes[index]
            return f"'{node.name or f'{node.op_type}_{index}'}' ({handler_key(node.domain, node.op_type)})"

        path, seen = [], {}
        index = next(i for i, count in enumerate(missing) if count)
        while index not in seen:
            seen[index] = len(path)
            path.append(index)
            index = next(producer[name] for name in _node_inputs(nodes[index])
                         if name in producer and missing[producer[name]])
        cycle = path[seen[index]:] + [index]
        first = nodes[cycle[0]]
        self.node, self.label = first, first.name or f"{first.op_type}_{cycle[0]}"
        steps = " -> ".join(label(i) for i in reversed(cycle))
        raise TypeError(f"{self.where()}: the graph has a cycle ({steps}: each node's output is an input of the "
                        "next), so no order computes it")


# The ONNX ops with subgraph attributes (GRAPH or GRAPHS): If, Loop, Scan and SequenceMap.
_SUBGRAPH_OPS = frozenset({"If", "Loop", "Scan", "SequenceMap"})


def _node_inputs(node):
    """The names a node reads: its inputs, and for nodes with subgraphs (If, Loop, Scan) the names of
    the enclosing scopes their bodies use."""
    if node.op_type not in _SUBGRAPH_OPS:
        return node.input
    return list(node.input) + sorted(_outer_names(node))


def _outer_names(node):
    names = set()
    for attribute in node.attribute:
        for graph in ([attribute.g] if attribute.type == 5 else attribute.graphs if attribute.type == 10 else []):
            defined = {info.name for info in graph.input} | {t.name for t in graph.initializer} | \
                {t.values.name for t in graph.sparse_initializer}
            used = set()
            for inner in graph.node:
                used.update(_node_inputs(inner))
                defined.update(inner.output)
            names |= used - defined
    names.discard("")
    return names


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
    return _convert(model, context, override_dims, input_shapes, builder)


def _convert(model, context, override_dims, input_shapes, builder, weights=None):
    """convert(), with the model's initializers already read (``weights``) when given."""
    model = _as_model(model)
    if builder is not None and not isinstance(builder, MLGraphBuilder):
        raise TypeError(f"convert: builder must be an MLGraphBuilder, got {type(builder).__name__}")
    if context is None:
        context = builder.context if builder is not None and hasattr(builder, "context") else create_context()
    if builder is None:
        builder = MLGraphBuilder(context)
    walk = {}
    try:
        return _convert_graph(model, builder, context, override_dims, input_shapes, walk, weights)
    except (TypeError, MLError, FileNotFoundError):
        raise
    except Exception as error:  # a malformed model that reached a corner of the importer
        converter = walk.get("converter")
        node = converter.node if converter is not None else None
        where = (f"node '{converter.label}' ({handler_key(node.domain, node.op_type)})" if node is not None
                 else "the model")
        raise DataError(f"webnn.onnx: {where} could not be converted: malformed model? "
                        f"({type(error).__name__}: {error})") from error


def _convert_graph(model, builder, context, override_dims, input_shapes, walk, weights=None):
    weights = _prepare.initializers(model.graph) if weights is None else weights
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
    nodes = fuse_integer_products(list(graph.node), {info.name for info in graph.output}, weights)
    converter.run_nodes(nodes, converter.opset)
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


def load(model, context=None, *, override_dims=None, input_shapes=None, max_sizes=None):
    """Converts an ONNX model (a path, serialized bytes or an ``onnx.ModelProto``) and returns the
    built MLGraph.

    Input dimensions the model leaves free (named, like ``batch``, or unnamed) and that
    ``override_dims`` / ``input_shapes`` do not pin stay dynamic: the graph runs at any sizes
    (``max_sizes={"batch": 64}`` bounds named ones). The model is converted once at load, to check
    it, and again for each new input shape, where the shape computations it holds (Shape, Gather,
    Concat, Reshape, Range, Expand ...) are folded at that shape; each shape's plan is cached
    (``MLGraph.plan_cache_info``).

    The graph keeps one copy of each weight (conv and matmul weights in their packed form only), so
    it cannot be written back with ``webnn.save``: use :func:`convert_to_webnn` for a ``.webnn``
    file, or :func:`convert` and save its outputs.
    """
    model = _as_model(model)
    declared = _free_inputs(model, override_dims, input_shapes, max_sizes)
    if declared is not None and any(not is_static(shape) for _, shape in declared.values()):
        return _load_dynamic(model, context or create_context(), declared)
    if declared is not None:  # every dimension pinned, unnamed ones by name too
        override_dims, input_shapes = None, {name: shape for name, (_, shape) in declared.items()}
    builder, _, outputs = convert(model, context, override_dims=override_dims, input_shapes=input_shapes)
    graph = builder.build(outputs)
    del builder, outputs  # the raw weights, now packed into the graph's kernels
    _core.release_free_memory()
    return graph


def input_descriptors(model, *, override_dims=None, input_shapes=None):
    """``{input: {"dataType", "shape"}}`` of an ONNX model as :func:`load` declares them: the input
    dimensions that ``override_dims`` / ``input_shapes`` do not pin are ``webnn.DynamicDimension``
    (unnamed ones named ``'<input>[<axis>]'``). Converts nothing."""
    model = _as_model(model)
    declared = _free_inputs(model, override_dims, input_shapes, None)
    if declared is None:  # an input without a usable type or shape: the importer's own error
        _prepare.pin_and_infer(model, override_dims, input_shapes)
        raise TypeError("webnn.onnx: the model's inputs have no usable types or shapes")
    return {name: {"dataType": data_type, "shape": shape} for name, (data_type, shape) in declared.items()}


def _dimension_name(info, axis, dim):
    """A free input dimension's name: its dim_param, or '<input>[<axis>]' when it has none (or the
    placeholder '?', which some exporters write for every unknown dimension)."""
    if dim.HasField("dim_param") and dim.dim_param and dim.dim_param != "?":
        return dim.dim_param
    return f"{info.name}[{axis}]"


def _free_inputs(model, override_dims, input_shapes, max_sizes):
    """``{input: (data type, shape)}`` with the dimensions nothing pins as ``DynamicDimension``, or
    None when an input has no usable type or shape (the static path then says what is wrong).
    ``override_dims`` and ``max_sizes`` name free dimensions as :func:`_dimension_name` does."""
    override_dims = _prepare.check_sizes(override_dims, "override_dims")
    input_shapes = _prepare.check_sizes(input_shapes, "input_shapes")
    max_sizes = _prepare.check_sizes(max_sizes, "max_sizes")
    for what, mapping in (("override_dims", override_dims), ("max_sizes", max_sizes)):
        for name, size in mapping.items():
            if not isinstance(name, str) or not _prepare.valid_size(size):
                raise TypeError(f"webnn.onnx: {what} must map dimension names to integers >= 1, got {name!r}: {size!r}")
    initializer_names = {t.name for t in model.graph.initializer}
    if set(input_shapes) - {i.name for i in model.graph.input}:
        return None  # the static path names the unknown inputs
    declared, names = {}, set()
    for info in model.graph.input:
        if info.name in initializer_names or not info.type.HasField("tensor_type"):
            continue
        tensor_type = info.type.tensor_type
        data_type = webnn_type(tensor_type.elem_type)
        if data_type is None or (info.name not in input_shapes and not tensor_type.HasField("shape")):
            return None
        if info.name in input_shapes:
            declared[info.name] = (data_type, list(input_shapes[info.name]))
            continue
        shape = []
        for axis, dim in enumerate(tensor_type.shape.dim):
            if dim.HasField("dim_value") and dim.dim_value > 0:
                shape.append(int(dim.dim_value))
                continue
            name = _dimension_name(info, axis, dim)
            names.add(name)
            if name in override_dims:
                shape.append(int(override_dims[name]))
            else:
                bound = max_sizes.get(name)
                shape.append(DynamicDimension(name, None if bound is None else int(bound)))
        declared[info.name] = (data_type, shape)
    for what, mapping in (("override_dims", override_dims), ("max_sizes", max_sizes)):
        unknown = set(mapping) - names
        if unknown:
            raise TypeError(f"webnn.onnx: {what} names unknown dimension(s) {sorted(unknown)}; "
                            f"the model's free input dimensions are {sorted(names)}")
    return declared


def _load_dynamic(model, context, declared):
    """A graph with dynamic inputs: converted per concrete input shape when first dispatched."""

    # Converted once now at representative sizes: unsupported nodes fail here, not at a dispatch.
    sizes = {}
    for _, shape in declared.values():
        for d in shape:
            if isinstance(d, DynamicDimension) and d.name not in sizes:
                sizes[d.name] = min(d.max_size or 2**31 - 1, 64 + 32 * len(sizes))
    example = {name: [sizes[d.name] if isinstance(d, DynamicDimension) else d for d in shape]
               for name, (_, shape) in declared.items()}
    try:
        _, _, outputs = convert(model, context, input_shapes=example)
    except TypeError as error:
        at = ", ".join(f"{name}={size}" for name, size in sizes.items())
        raise TypeError(f"{error} (converting with the free input dimensions at {at}: a model that needs some of "
                        "them fixed takes override_dims={name: size}, and max_sizes bounds them)") from error
    by_name = {d.name: d for _, shape in declared.values() for d in shape if isinstance(d, DynamicDimension)}
    reported = {}
    for info in model.graph.output:
        operand = outputs[info.name]
        dims = list(info.type.tensor_type.shape.dim) if info.type.tensor_type.HasField("shape") else []
        shape = []
        for axis, size in enumerate(operand.shape):
            dim = dims[axis] if len(dims) == len(operand.shape) else None
            if dim is not None and dim.HasField("dim_value") and dim.dim_value == size:
                shape.append(size)
            elif dim is not None and dim.HasField("dim_param") and dim.dim_param in by_name:
                shape.append(by_name[dim.dim_param])
            else:
                shape.append(DynamicDimension(None))
        reported[info.name] = (operand.data_type, shape)
    del outputs
    weights = _prepare.initializers(model.graph)  # read once, for every shape

    def specialize(shapes):
        builder = MLGraphBuilder(context)
        _, _, operands = _convert(model, context, None, {k: list(v) for k, v in shapes.items()}, builder, weights)
        return builder, operands

    graph = _core._dynamic_graph(context, declared, reported, specialize)
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
