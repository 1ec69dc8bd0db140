"""The Python mapping of the WebNN API (see ARCHITECTURE.md §2).

The classes are the native ones from ``webnn._core``; this module adds the spec's methods that
need argument normalization (descriptors, options dictionaries, camelCase and snake_case names),
the ``*_async`` variants, and one builder method per operation, generated from the native op
registry so that an op added in C++ appears here with no Python change.
"""
import keyword
import re
from dataclasses import dataclass, field
from typing import List

import numpy as np

from . import _async, _core

MLContext = _core.MLContext
MLGraphBuilder = _core.MLGraphBuilder
MLGraph = _core.MLGraph
MLOperand = _core.MLOperand
MLTensor = _core.MLTensor

DATA_TYPES = ("float32", "float16", "int32", "uint32", "int64", "uint64", "int8", "uint8", "int4", "uint4")
# NumPy has no 4-bit integers: int4/uint4 data is held one value per int8/uint8 element.
_NUMPY_STORAGE = {"int4": "int8", "uint4": "uint8"}


def numpy_dtype(data_type):
    """The NumPy dtype that holds an MLOperandDataType's values (``int4`` -> ``int8``,
    ``uint4`` -> ``uint8``, one value per element; every other type maps to itself)."""
    name = _data_type_name(data_type, "numpy_dtype")
    return np.dtype(_NUMPY_STORAGE.get(name, name))
POWER_PREFERENCES = ("default", "high-performance", "low-power")


# ---------------------------------------------------------------- names
_SNAKE_OVERRIDES = {"isNaN": "is_nan"}


def snake_case(name):
    """The Python name of a spec name: ``convTranspose2d`` -> ``conv_transpose2d``."""
    if name in _SNAKE_OVERRIDES:
        return _SNAKE_OVERRIDES[name]
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name).lower()


# ---------------------------------------------------------------- descriptors
@dataclass
class MLOperandDescriptor:
    """An operand's data type and shape (``[]`` is a scalar)."""

    data_type: str
    shape: List[int] = field(default_factory=list)


@dataclass
class MLTensorDescriptor(MLOperandDescriptor):
    """A tensor's data type, shape, and whether script may read or write it."""

    readable: bool = False
    writable: bool = False


def _data_type_name(value, what):
    if isinstance(value, str):
        if value not in DATA_TYPES:
            raise TypeError(f"{what}: '{value}' is not an MLOperandDataType (one of {', '.join(DATA_TYPES)})")
        return value
    try:
        name = np.dtype(value).name
    except TypeError:
        name = None
    if name not in DATA_TYPES:
        raise TypeError(f"{what}: {value!r} is not an MLOperandDataType (one of {', '.join(DATA_TYPES)})")
    return name


def _pick(mapping, *keys):
    for key in keys:
        if key in mapping:
            return mapping[key]
    return None


def normalize_descriptor(descriptor=None, what="descriptor", **keywords):
    """Returns ``(data_type, shape, extras)`` from any accepted descriptor form.

    Accepted: an ``MLOperandDescriptor``/``MLTensorDescriptor``; a dict with ``dataType`` (or
    ``data_type``, or the 2022 ``type``) and ``shape`` (or the 2022 ``dimensions``); or keywords.
    """
    if descriptor is None:
        source = keywords
    elif isinstance(descriptor, MLOperandDescriptor):
        source = dict(vars(descriptor))
        source.update(keywords)
    elif isinstance(descriptor, dict):
        source = dict(descriptor)
        source.update(keywords)
    else:
        raise TypeError(f"{what}: expected a descriptor (dict or MLOperandDescriptor), got {type(descriptor).__name__}")
    data_type = _pick(source, "data_type", "dataType", "type")
    shape = _pick(source, "shape", "dimensions")
    if data_type is None:
        raise TypeError(f"{what}: the descriptor has no dataType")
    if shape is None:
        raise TypeError(f"{what}: the descriptor has no shape")
    if isinstance(shape, (str, bytes)) or not hasattr(shape, "__iter__"):
        raise TypeError(f"{what}: shape must be a sequence of integers")
    extras = {
        "readable": bool(_pick(source, "readable") or False),
        "writable": bool(_pick(source, "writable") or False),
    }
    return _data_type_name(data_type, what), list(shape), extras


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
        return {"dataType": _data_type_name(array.dtype, what), "shape": list(array.shape)}, array
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
    """Awaitable read: resolves with a numpy array (or ``out``, filled)."""
    return _async.awaitable(self._read_tensor_start(tensor, out))


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
    ``input("x", data_type="float32", shape=[2])``."""
    if not isinstance(name, str):
        raise TypeError(f"input: the name must be a string, got {type(name).__name__}")
    data_type, shape, _ = normalize_descriptor(descriptor, f"input '{name}'", **keywords)
    return self._input(name, data_type, shape)


def _is_number(value):
    return isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, (bool, np.bool_))


def _constant(self, *args, **keywords):
    """Creates a constant operand. Accepted forms:

    - ``constant(descriptor, data)``: data is a numpy array of the descriptor's dtype or raw bytes;
    - ``constant(array)``: dtype and shape from a numpy array;
    - ``constant(data_type, value)``: a scalar, converted with the spec's cast rules;
    - ``constant(tensor)``: a constant MLTensor from ``create_constant_tensor``.

    The data is copied at call time.
    """
    if len(args) == 1 and isinstance(args[0], MLTensor) and not keywords:
        return self._constant_tensor(args[0])
    if len(args) == 2 and isinstance(args[0], (str, type, np.dtype)) and not isinstance(args[1], (bytes, bytearray, memoryview, np.ndarray)):
        if isinstance(args[0], str) and args[0] not in DATA_TYPES:
            raise TypeError(f"constant: '{args[0]}' is not an MLOperandDataType")
        if not _is_number(args[1]):
            raise TypeError(f"constant: the scalar value must be a number, got {type(args[1]).__name__}")
        return self._constant_scalar(_data_type_name(args[0], "constant"), args[1])
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
def _make_op_method(info):
    op = info["name"]
    params = [p["name"] for p in info["arguments"]]
    options = {p["name"] for p in info["options"]}
    by_keyword = {}
    for name in params:
        by_keyword[name] = ("arg", name)
        by_keyword[snake_case(name)] = ("arg", name)
    for name in options:
        by_keyword[name] = ("opt", name)
        by_keyword[snake_case(name)] = ("opt", name)
    single = info["output_count"] == 1

    def method(self, *args, label="", **keywords):
        positional = list(args)
        opts = {}
        # A trailing options dictionary, as in the spec's JavaScript form.
        if len(positional) == len(params) + 1 and (isinstance(positional[-1], dict) or positional[-1] is None):
            trailing = positional.pop() or {}
            for key, value in trailing.items():
                if key == "label":
                    label = value
                    continue
                kind = by_keyword.get(key)
                if kind is None or kind[0] != "opt":
                    raise TypeError(f"{op}: unknown option '{key}'")
                opts[kind[1]] = value
        if len(positional) > len(params):
            raise TypeError(f"{op}() takes {len(params)} positional arguments but {len(positional)} were given")
        for key, value in keywords.items():
            kind = by_keyword.get(key)
            if kind is None:
                raise TypeError(f"{op}() got an unexpected keyword argument '{key}'")
            if kind[0] == "opt":
                opts[kind[1]] = value
                continue
            index = params.index(kind[1])
            if index < len(positional):
                raise TypeError(f"{op}() got multiple values for argument '{key}'")
            positional.extend([None] * (index + 1 - len(positional)))
            positional[index] = value
        if not isinstance(label, str):
            raise TypeError(f"{op}: label must be a string")
        result = self._call(op, positional, opts, label)
        return result[0] if single else result

    signature = ", ".join(snake_case(p) for p in params)
    option_doc = ", ".join(f"{snake_case(o['name'])}={o['default']!r}" if o["has_default"] else snake_case(o["name"])
                           for o in info["options"])
    method.__name__ = snake_case(op)
    method.__qualname__ = f"MLGraphBuilder.{method.__name__}"
    method.__doc__ = (f"WebNN ``{op}({signature}{', options' if info['options'] else ''})``.\n\n"
                      f"Keyword options: {option_doc + ', ' if option_doc else ''}label=''. A trailing dict of "
                      f"camelCase options is also accepted. Raises TypeError, naming the label, on invalid input.")
    return method


def _install_op_methods():
    for info in _core.op_infos():
        method = _make_op_method(info)
        name = snake_case(info["name"])
        if keyword.iskeyword(name):
            name += "_"
        setattr(MLGraphBuilder, name, method)
        if info["name"] != name:
            setattr(MLGraphBuilder, info["name"], method)  # the spec's camelCase name, for ported samples


_install_op_methods()


# ---------------------------------------------------------------- MLGraph: compute (2022 convenience)
def _compute(self, inputs, context=None):
    """Runs the graph once on NumPy data and returns ``{output name: numpy array}``.

    A convenience beyond the current spec (the 2022 draft's ``compute``): it creates tensors,
    writes the inputs, dispatches and reads every output, waiting with the GIL released.
    """
    context = context or self.context
    in_tensors = {}
    for name, descriptor in self.input_descriptors.items():
        if name not in inputs:
            raise TypeError(f"compute: missing input '{name}'")
        tensor = context._create_tensor(descriptor["dataType"], descriptor["shape"], False, True)
        try:
            value = np.asarray(inputs[name])
        except Exception as error:  # ragged lists, objects whose __array__ raises, ...
            raise TypeError(f"compute: input '{name}' is not array data ({type(error).__name__}: {error})") from None
        if value.dtype != numpy_dtype(descriptor["dataType"]):
            raise TypeError(f"compute: input '{name}' has dtype {value.dtype}, expected {descriptor['dataType']}")
        if list(value.shape) != list(descriptor["shape"]) and value.size != int(np.prod(descriptor["shape"])):
            raise TypeError(f"compute: input '{name}' has shape {list(value.shape)}, expected {descriptor['shape']}")
        context.write_tensor(tensor, value)
        in_tensors[name] = tensor
    extra = set(inputs) - set(in_tensors)
    if extra:
        raise TypeError(f"compute: unknown input(s) {sorted(extra)}")
    out_tensors = {name: context._create_tensor(d["dataType"], d["shape"], True, False)
                   for name, d in self.output_descriptors.items()}
    context.dispatch(self, in_tensors, out_tensors)
    return {name: context.read_tensor(tensor) for name, tensor in out_tensors.items()}


MLGraph.compute = _compute
