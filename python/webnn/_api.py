"""The Python mapping of the WebNN API (see docs/architecture.md).

The classes are the native ones from ``webnn._core``; this module adds the spec's methods that
need argument normalization (done by ``_normalize``: descriptors, options dictionaries, camelCase
and snake_case names), the ``*_async`` variants, and one builder method per operation, generated
from the native op registry so that an op added in C++ appears here with no Python change. The
2022 Working Draft forms (``_compat``) are mapped onto the same normalized calls.
"""
import keyword

import numpy as np

from . import _async, _compat, _core, _dynamic
from ._errors import InvalidStateError
from ._compat import MLActivation
from ._normalize import (DATA_TYPES, OP_INFOS, MLOperandDescriptor, MLTensorDescriptor, OpCall, data_type_name,
                         is_number, normalize_descriptor, snake_case)

__all__ = [
    "DATA_TYPES", "ML", "MLActivation", "MLContext", "MLContextLostInfo", "MLGraph", "MLGraphBuilder", "MLOperand",
    "MLOperandDescriptor", "MLTensor", "MLTensorDescriptor", "create_context", "create_context_async", "ml",
    "normalize_descriptor", "numpy_dtype", "op_doc", "snake_case",
]

MLContext = _core.MLContext
MLGraphBuilder = _core.MLGraphBuilder
MLGraph = _core.MLGraph
MLOperand = _core.MLOperand
MLTensor = _core.MLTensor

# NumPy has no 4-bit integers: int4/uint4 data is held one value per int8/uint8 element.
_NUMPY_STORAGE = {"int4": "int8", "uint4": "uint8"}
POWER_PREFERENCES = ("default", "high-performance", "low-power")


def numpy_dtype(data_type):
    """The NumPy dtype that holds an MLOperandDataType's values (``int4`` -> ``int8``,
    ``uint4`` -> ``uint8``, one value per element; every other type maps to itself)."""
    name = data_type_name(data_type, "numpy_dtype")
    return np.dtype(_NUMPY_STORAGE.get(name, name))


# ---------------------------------------------------------------- the entry point
def _context_options(power_preference, accelerated, num_threads, device_type, options):
    if options:
        power_preference = options.get("powerPreference", options.get("power_preference", power_preference))
        accelerated = options.get("accelerated", accelerated)
        device_type = options.get("deviceType", options.get("device_type", device_type))
        num_threads = options.get("numThreads", options.get("num_threads", num_threads))
    if power_preference not in POWER_PREFERENCES:
        raise TypeError(f"create_context: power_preference must be one of {POWER_PREFERENCES}, got {power_preference!r}")
    if device_type is not None and device_type not in ("cpu", "gpu"):
        raise TypeError(f"create_context: device_type must be 'cpu' or 'gpu' (2022 draft), got {device_type!r}")
    if not isinstance(num_threads, int) or isinstance(num_threads, bool) or num_threads < 0:
        raise TypeError(f"create_context: num_threads must be an integer >= 0, got {num_threads!r}")
    return power_preference, bool(accelerated), num_threads


class ML:
    """``navigator.ml``: creates contexts."""

    def create_context(self, options=None, *, power_preference="default", accelerated=True, num_threads=0,
                       device_type=None):
        """Creates an MLContext.

        ``accelerated`` is a request: this engine runs on the CPU, so ``context.accelerated`` is
        always False. ``device_type`` ('cpu' or 'gpu', from the 2022 draft) is accepted; both run
        on the CPU. ``num_threads`` (beyond the spec) caps the intra-op threads; 0 uses all cores.
        """
        return MLContext._create(*_context_options(power_preference, accelerated, num_threads, device_type, options))

    async def create_context_async(self, options=None, **keywords):
        """The awaitable form of :meth:`create_context`."""
        return self.create_context(options, **keywords)


ml = ML()


def create_context(options=None, **keywords):
    """Shorthand for ``webnn.ml.create_context``."""
    return ml.create_context(options, **keywords)


async def create_context_async(options=None, **keywords):
    """Shorthand for ``webnn.ml.create_context_async``."""
    return ml.create_context(options, **keywords)


# ---------------------------------------------------------------- MLContext
def _op_support_limits(self):
    """The data types and ranks this context supports, per op and operand (spec §2.3)."""
    return self._op_support_limits()


def _create_tensor(self, descriptor=None, **keywords):
    """Creates a zero-filled MLTensor (``readable``/``writable`` default to False)."""
    data_type, shape, extras = normalize_descriptor(descriptor, "createTensor", **keywords)
    return self._create_tensor(data_type, shape, extras["readable"], extras["writable"])


async def _create_tensor_async(self, descriptor=None, **keywords):
    return _create_tensor(self, descriptor, **keywords)


def _split_descriptor_and_data(args, keywords, what):
    """(descriptor, data) from ``(desc, data)``, ``(array)`` or keywords."""
    data = keywords.pop("data", keywords.pop("buffer", None))
    if len(args) == 2:
        return args[0], args[1]
    if len(args) == 1 and data is not None:
        return args[0], data
    if len(args) == 1 and isinstance(args[0], np.ndarray):
        array = args[0]
        return {"dataType": data_type_name(array.dtype, what), "shape": list(array.shape)}, array
    if not args and data is not None:
        return dict(keywords), data
    raise TypeError(f"{what}: expected (descriptor, data) or a numpy array")


def _create_constant_tensor(self, *args, **keywords):
    """Creates a constant MLTensor from ``(descriptor, data)`` or a numpy array. Data is copied."""
    descriptor, data = _split_descriptor_and_data(args, keywords, "createConstantTensor")
    extra = {k: v for k, v in keywords.items() if k in ("data_type", "dataType", "shape")}
    data_type, shape, _ = normalize_descriptor(descriptor, "createConstantTensor", **extra)
    return self._create_constant_tensor(data_type, shape, data)


async def _create_constant_tensor_async(self, *args, **keywords):
    return _create_constant_tensor(self, *args, **keywords)


def _read_tensor_async(self, tensor, out=None):
    """Awaitable read: resolves with a numpy array (or ``out``, filled).

    As the spec's promise, it settles on the event loop: a ``tensor.destroy()`` (or the context's
    loss) before then rejects it with InvalidStateError, even when the copy was already made."""
    def settle(value):
        if tensor.destroyed:
            raise InvalidStateError("readTensor: the MLTensor was destroyed")
        if self.is_lost:
            raise InvalidStateError("readTensor: the context is lost")
        return value

    return _async.awaitable(self._read_tensor_start(tensor, out), settle)


def _lost(self):
    """A ``concurrent.futures.Future`` resolved with an MLContextLostInfo when the context is lost.

    ``await asyncio.wrap_future(context.lost)`` waits for it in a coroutine.
    """
    future = getattr(self, "_lost_future_cache", None)
    if future is None:
        future = _async.concurrent_future(self._lost_start(), MLContextLostInfo)
        try:
            self._lost_future_cache = future
        except AttributeError:  # native objects without a __dict__
            pass
    return future


class MLContextLostInfo:
    """Why a context was lost."""

    def __init__(self, message):
        self.message = message

    def __repr__(self):
        return f"MLContextLostInfo(message={self.message!r})"


MLContext.op_support_limits = _op_support_limits
MLContext.create_tensor = _create_tensor
MLContext.create_tensor_async = _create_tensor_async
MLContext.create_constant_tensor = _create_constant_tensor
MLContext.create_constant_tensor_async = _create_constant_tensor_async
MLContext.read_tensor_async = _read_tensor_async
MLContext.lost = property(_lost)


# ---------------------------------------------------------------- MLGraphBuilder: inputs, constants, build
def _input(self, name, descriptor=None, **keywords):
    """Declares a named graph input: ``input("x", {"dataType": "float32", "shape": [2]})`` or
    ``input("x", data_type="float32", shape=[2])``.

    A dimension may be dynamic: ``webnn.dynamic("batch", max_size=64)`` (inputs sharing the name
    share the size), or -1 (the 2022 draft's free dimension, named ``'x[axis]'``). The graph is then
    built once and runs at any sizes within the bounds."""
    if not isinstance(name, str):
        raise TypeError(f"input: the name must be a string, got {type(name).__name__}")
    data_type, shape, _ = normalize_descriptor(descriptor, f"input '{name}'", **keywords)
    return self._input(name, data_type, _dynamic.input_shape(name, shape))


def _constant(self, *args, **keywords):
    """Creates a constant operand. Accepted forms:

    - ``constant(descriptor, data)``: data is a numpy array of the descriptor's dtype or raw bytes;
    - ``constant(array)``: dtype and shape from a numpy array (a NumPy scalar such as
      ``np.float16(0.5)`` is a 0-d array of its dtype);
    - ``constant(data_type, value)``: a scalar, converted with the spec's cast rules;
    - ``constant(tensor)``: a constant MLTensor from ``create_constant_tensor``.

    The data is copied at call time.

    2022 Working Draft convenience: ``constant(value, type='float32')`` (value first, the type
    defaulting to float32) creates the same scalar as ``constant(type, value)``.
    """
    if len(args) == 1 and isinstance(args[0], np.generic) and not keywords:
        args = (np.asarray(args[0]),)  # a NumPy scalar keeps its dtype (a 0-d array), as constant(array)
    value_first = _compat.constant_value_first(args, keywords)
    if value_first is not None:
        args, keywords = value_first, {}
    if len(args) == 1 and isinstance(args[0], MLTensor) and not keywords:
        return self._constant_tensor(args[0])
    if len(args) == 2 and isinstance(args[0], (str, type, np.dtype)) and not isinstance(args[1], (bytes, bytearray, memoryview, np.ndarray)):
        if isinstance(args[0], str) and args[0] not in DATA_TYPES:
            raise TypeError(f"constant: '{args[0]}' is not an MLOperandDataType")
        if not is_number(args[1]):
            raise TypeError(f"constant: the scalar value must be a number, got {type(args[1]).__name__}")
        return self._constant_scalar(data_type_name(args[0], "constant"), args[1])
    descriptor, data = _split_descriptor_and_data(args, keywords, "constant")
    extra = {k: v for k, v in keywords.items() if k in ("data_type", "dataType", "shape")}
    data_type, shape, _ = normalize_descriptor(descriptor, "constant", **extra)
    return self._constant_buffer(data_type, shape, data)


def _outputs_dict(outputs, keywords):
    if outputs is not None and not isinstance(outputs, dict):
        raise TypeError(f"build: outputs must be a dict of name -> MLOperand, got {type(outputs).__name__}")
    outs = dict(outputs or {})
    outs.update(keywords)
    return outs


def _build(self, outputs=None, **named_outputs):
    """Compiles the graph for ``{name: operand}`` outputs and returns an MLGraph (waits with the
    GIL released)."""
    return self._build_start(_outputs_dict(outputs, named_outputs)).result()


def _build_async(self, outputs=None, **named_outputs):
    """The awaitable form of :meth:`build`."""
    try:
        pending = self._build_start(_outputs_dict(outputs, named_outputs))
    except BaseException as error:
        future = _async.resolved(None)
        future = future.get_loop().create_future()
        future.set_exception(error)
        return future
    return _async.awaitable(pending)


MLGraphBuilder.input = _input
MLGraphBuilder.constant = _constant
MLGraphBuilder.build = _build
MLGraphBuilder.build_async = _build_async


# ---------------------------------------------------------------- MLGraphBuilder: one method per op
# What an option without a default means when it is absent, in the spec's words.
_ABSENT = {
    "axes": "all dimensions", "bias": "0", "c": "0", "initialCellState": "zeros", "initialHiddenState": "zeros",
    "maxValue": "no upper bound", "minValue": "no lower bound", "outputSizes": "computed from the other options",
    "peepholeWeight": "0", "permutation": "the dimensions reversed", "recurrentBias": "0", "scale": "1",
    "sizes": "computed from scales", "strides": "all 1", "windowDimensions": "the input's height and width",
}
_ABSENT_BY_OP = {("layerNormalization", "axes"): "[1, ..., rank - 1] ([] when rank <= 1)"}


def _option_line(op, option):
    name = snake_case(option["name"])
    if option["has_default"]:
        line = f"- ``{name}`` = {option['default']!r}"
    else:
        line = f"- ``{name}``: absent = {_ABSENT_BY_OP.get((op, option['name']), _ABSENT.get(option['name'], 'none'))}"
    if option["enum_values"]:
        line += f" (one of {', '.join(repr(v) for v in option['enum_values'])})"
    return line


def _limits_text(limits):
    """'float32 or float16, rank 4': an operand's data types and ranks (op_support_limits' form)."""
    types = limits["dataTypes"]
    types = ", ".join(types[:-1]) + " or " + types[-1] if len(types) > 1 else types[0]
    low, high = limits["rankRange"]["min"], limits["rankRange"]["max"]
    return f"{types}, rank {low}" if low == high else f"{types}, rank {low} to {high}"


def _operand_lines(info):
    """The operands' and results' data types and ranks, from the same data as op_support_limits()."""
    limits = info["limits"]
    options = {option["name"] for option in info["options"]}
    parameters = options | {argument["name"] for argument in info["arguments"]}
    results = [name for name in limits if name not in parameters]
    lines = ["Operands (data types, ranks):", ""]
    for name, operand in limits.items():
        if name not in results:
            lines.append(f"- ``{snake_case(name)}``{' (option)' if name in options else ''}: "
                         f"{_limits_text(operand)}")
    if results == ["output"]:
        lines += ["", f"Returns an MLOperand: {_limits_text(limits['output'])}."]
    elif results == ["outputs"]:
        lines += ["", f"Returns a list of MLOperands, each: {_limits_text(limits['outputs'])}."]
    elif results:
        lines += ["", "Returns a list of MLOperands:", ""]
        lines += [f"- ``{name}``: {_limits_text(limits[name])}" for name in results]
    return lines + [""]


def op_doc(info, forms=None):
    """The docstring of a builder method: its spec signature, its operands' data types and ranks,
    options with their defaults (from the op registry, which follows the spec) and, with
    ``forms``, its 2022 conveniences."""
    op = info["name"]
    signature = ", ".join(snake_case(p["name"]) for p in info["arguments"])
    lines = [f"WebNN ``{op}({signature}, options)``.", ""] + _operand_lines(info)
    lines += ["Options, as keywords (snake_case or camelCase) or a trailing dict of camelCase names:", ""]
    lines += [_option_line(op, option) for option in info["options"]]
    lines += ["- ``label`` = ''", "", "Raises TypeError, naming the label, on invalid input."]
    return "\n".join(lines) + (forms.doc if forms is not None else "")


def _make_op_method(info):
    op = info["name"]
    forms = _compat.OP_FORMS.get(op)
    extra = forms.options if forms is not None else None

    def method(self, *args, label="", **keywords):
        if forms is None:
            return OpCall(op, args, keywords, label).invoke(self)
        if forms.makes_activation(args, keywords):
            return forms.activation(self, args, keywords, label)
        return forms.run(self, OpCall(op, args, keywords, label, extra))

    method.__name__ = snake_case(op)
    method.__qualname__ = f"MLGraphBuilder.{method.__name__}"
    method.__doc__ = op_doc(info, forms)
    return method


def _install_op_methods():
    for info in OP_INFOS.values():
        method = _make_op_method(info)
        name = snake_case(info["name"])
        if keyword.iskeyword(name):
            name += "_"
        setattr(MLGraphBuilder, name, method)
        if info["name"] != name:
            setattr(MLGraphBuilder, info["name"], method)  # the spec's camelCase name, for ported samples
    if "squeeze" not in OP_INFOS:
        MLGraphBuilder.squeeze = _compat.squeeze


_install_op_methods()


# ---------------------------------------------------------------- MLGraph: compute (2022 convenience)
def _array_of(value):
    """NumPy's view of input data: a DLPack producer (PyTorch, JAX) through DLPack, without a copy."""
    if not isinstance(value, np.ndarray) and hasattr(value, "__dlpack__"):
        return np.from_dlpack(value)
    return np.asarray(value)


def _compute(self, inputs, outputs=None, context=None):
    """Runs the graph once on NumPy data and returns ``{output name: numpy array}``.

    A convenience beyond the current spec (the 2022 draft's ``compute``): it creates tensors,
    writes the inputs, dispatches and reads every output, waiting with the GIL released.
    ``compute(inputs, context)`` (the 2022 ``context.compute``) runs it with new tensors of
    ``context``, which must be the graph's own.

    2022 Working Draft convenience: ``compute(inputs, outputs)`` with ``outputs`` a dict of
    preallocated NumPy arrays (any subset of the outputs) fills them in place and returns that
    dict. Inputs may be 2022 ``{'resource': array, 'dimensions': [...]}`` dicts.
    """
    if isinstance(outputs, MLContext):
        outputs, context = None, outputs
    if outputs is not None:
        return _compat.compute_into(self, inputs, outputs, context)
    own_context = context
    context = context or self.context
    values = {}
    for name, descriptor in self.input_descriptors.items():
        if name not in inputs:
            raise TypeError(f"compute: missing input '{name}'")
        try:
            value = _array_of(_compat._array_input(inputs[name]))
        except Exception as error:  # ragged lists, objects whose __array__ raises, ...
            raise TypeError(f"compute: input '{name}' is not array data ({type(error).__name__}: {error})") from None
        if value.dtype != numpy_dtype(descriptor["dataType"]):
            raise TypeError(f"compute: input '{name}' has dtype {value.dtype}, expected {descriptor['dataType']}")
        if not _dynamic.is_static(descriptor["shape"]):
            if value.ndim != len(descriptor["shape"]):
                raise TypeError(f"compute: input '{name}' has shape {list(value.shape)}, expected {descriptor['shape']}")
        elif list(value.shape) != list(descriptor["shape"]) and value.size != int(np.prod(descriptor["shape"])):
            raise TypeError(f"compute: input '{name}' has shape {list(value.shape)}, expected {descriptor['shape']}")
        values[name] = value
    extra = set(inputs) - set(values)
    if extra:
        raise TypeError(f"compute: unknown input(s) {sorted(extra)}")
    if self.is_dynamic:
        in_tensors, out_tensors = _dynamic_compute_tensors(self, context, values, reuse=own_context is None)
    else:
        in_tensors, out_tensors = _take_compute_tensors(self, context, reuse=own_context is None)
    for name, value in values.items():
        context.write_tensor(in_tensors[name], value)
    context.dispatch(self, in_tensors, out_tensors)
    results = {name: context.read_tensor(tensor) for name, tensor in out_tensors.items()}
    if own_context is None:
        self.__dict__["_compute_tensors"] = (in_tensors, out_tensors)
    return results


def _dynamic_compute_tensors(graph, context, values, reuse):
    """compute()'s tensors for a dynamic graph: those of the last call when the shapes are the same."""
    shapes = {name: tuple(value.shape) for name, value in values.items()}
    kept = graph.__dict__.pop("_compute_tensors", None) if reuse else None
    if kept is not None and all(tuple(kept[0][n].shape) == s for n, s in shapes.items()):
        return kept
    outputs = graph._output_descriptors_for(shapes, "compute")
    in_tensors = {name: context._create_tensor(graph.input_descriptors[name]["dataType"], list(shape), False, True)
                  for name, shape in shapes.items()}
    out_tensors = {name: context._create_tensor(d["dataType"], d["shape"], True, False) for name, d in outputs.items()}
    return in_tensors, out_tensors


def _take_compute_tensors(graph, context, reuse):
    """The input and output tensors of one compute() call. On the graph's own context the set is
    kept and reused, so a loop of compute() calls does not allocate (and page-fault in) new tensors
    each time; a call takes the set while it runs, so a concurrent compute() makes its own."""
    kept = graph.__dict__.pop("_compute_tensors", None) if reuse else None
    if kept is not None:
        return kept
    in_tensors = {name: context._create_tensor(d["dataType"], d["shape"], False, True)
                  for name, d in graph.input_descriptors.items()}
    out_tensors = {name: context._create_tensor(d["dataType"], d["shape"], True, False)
                   for name, d in graph.output_descriptors.items()}
    return in_tensors, out_tensors


def _output_descriptors_for(self, input_shapes):
    """The output descriptors for concrete input shapes (``{input: shape}``): a dynamic graph's
    outputs at those sizes. TypeError, naming the op, when the graph is not valid at them."""
    if not isinstance(input_shapes, dict):
        raise TypeError(f"output_descriptors_for: expected a dict of input name -> shape, got {type(input_shapes).__name__}")
    return self._output_descriptors_for(input_shapes, "output_descriptors_for")


MLGraph.compute = _compute
MLGraph.output_descriptors_for = _output_descriptors_for
MLContext.compute = _compat.context_compute
