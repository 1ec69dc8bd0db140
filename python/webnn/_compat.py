"""Conveniences for code written against the 2022-05-20 Working Draft of WebNN.

The current spec removed or renamed several 2022 APIs (see the spec digest, §4). This module
accepts those forms and lowers each one to the current API at build time, so the graph holds
only current-spec operations. Every call that is valid in the current spec behaves exactly as
without this module: a convenience applies only to a form the current spec rejects.

- ``builder.squeeze(input, axes=None)``: lowered to ``reshape``.
- ``builder.relu()``, ``builder.clamp(min_value=0)``, ... called without an input return an
  :class:`MLActivation` (the 2022 ``MLOperator``). The ``activation`` option of ``conv2d``,
  ``convTranspose2d`` and ``batchNormalization`` applies one to the op's result; the
  ``activations`` option of ``gru``/``gruCell`` (and ``lstm``/``lstmCell``) accepts them where they
  map to an ``MLRecurrentNetworkActivation`` name.
- ``softplus(input, steepness=s)``: ``softplus(s·x)/s``.
- ``autoPad`` ("explicit", "same-upper", "same-lower") on ``conv2d``, ``convTranspose2d`` and the
  three pooling ops: resolved to explicit ``padding`` from the shapes.
- ``roundingType`` on pooling: the old name of ``outputShapeRounding``.
- Descriptors written ``{"type": ..., "dimensions": ...}`` (handled by
  ``_normalize.normalize_descriptor``); a 2022 descriptor without ``dimensions`` is a scalar.
- ``constant(value, type="float32")``: the 2022 argument order.
- ``graph.compute(inputs, outputs)`` and ``context.compute(graph, inputs, outputs)``: fill
  preallocated NumPy arrays, as the 2022 ``compute`` did.

Nothing here is installed on a class: ``_api`` builds each builder method once, on
``_normalize.OpCall``, and hands the call to :data:`OP_FORMS` when the op has 2022 forms; the
other functions are attached by ``_api`` too.
"""
import math

import numpy as np

from ._core import MLOperand
from ._normalize import OP_INFOS, OpCall, is_number, label_prefix, option_keys, snake_case

_AUTO_PAD_MODES = ("explicit", "same-upper", "same-lower")
_RECURRENT_ACTIVATIONS = ("relu", "sigmoid", "tanh")
ACTIVATION_OPS = ("clamp", "elu", "gelu", "hardSigmoid", "hardSwish", "leakyRelu", "linear", "relu", "sigmoid",
                  "softplus", "softsign", "tanh")
# Options an op gains here, with their accepted spellings.
_COMPAT_OPTIONS = {
    "activation": ("activation",),
    "autoPad": ("autoPad", "auto_pad"),
    "roundingType": ("roundingType", "rounding_type"),
    "steepness": ("steepness",),
}
# Filter dims (kH, kW) per filter layout.
_FILTER_HW = {"oihw": (2, 3), "hwio": (0, 1), "ohwi": (1, 2), "ihwo": (1, 2), "iohw": (2, 3), "hwoi": (0, 1)}


# ---------------------------------------------------------------- MLActivation
class MLActivation:
    """An activation not yet applied to an operand: the 2022 draft's ``MLOperator``.

    Created by calling an activation method without an input, e.g. ``builder.relu()`` or
    ``builder.leaky_relu(alpha=0.2)``. Pass it as the ``activation`` option of ``conv2d``,
    ``conv_transpose2d`` or ``batch_normalization`` (the op is built, then the activation applied
    to its result), or in the ``activations`` list of ``gru``/``gru_cell``. Option values are
    validated when it is applied. ``apply(operand)`` applies it directly.
    """

    __slots__ = ("_builder", "name", "options", "label")

    def __init__(self, builder, name, options, label=""):
        self._builder = builder
        self.name = name
        self.options = dict(options)
        self.label = label

    def __repr__(self):
        return f"MLActivation({self.name!r}, {self.options!r})"

    def apply(self, operand, label=""):
        """Applies the activation to ``operand`` (an operand of the same builder)."""
        return getattr(self._builder, snake_case(self.name))(operand, label=self.label or label, **self.options)

    def _check_builder(self, builder, op, label):
        if self._builder is not builder:
            raise TypeError(label_prefix(op, label) + f"the {self.name} activation was created by another MLGraphBuilder")


# ---------------------------------------------------------------- helpers
def _int_list(value, length, minimum=1):
    """``value`` as a list of ``length`` ints >= ``minimum`` (fractions truncated, as the op's
    conversion does), or None when it is not one: the op itself then reports the problem."""
    try:
        items = [int(v) for v in value]
    except (TypeError, ValueError, OverflowError):
        return None
    if len(items) != length or any(v < minimum for v in items):
        return None
    return items


# ---------------------------------------------------------------- autoPad and roundingType
def _split_padding(mode, total):
    """(begin, end) of ``total`` padding: "same-upper" puts the odd one at the end."""
    total = max(0, total)
    small, large = total // 2, total - total // 2
    return (small, large) if mode == "same-upper" else (large, small)


def _same_padding(mode, size, effective_window, stride):
    """The 2022 "same" padding of conv2d and pooling: the output size is ceil(size / stride)."""
    out = -(-size // stride)
    return _split_padding(mode, (out - 1) * stride + effective_window - size)


def _spatial(shape, layout):
    return (shape[1], shape[2]) if layout == "nhwc" else (shape[2], shape[3])


def _auto_pad_geometry(call):
    """(input H/W, window H/W, strides, dilations) of a conv or pool call, or None when an
    argument is malformed (the op then reports it)."""
    source = call.arg("input")
    if not isinstance(source, MLOperand) or len(source.shape) != 4:
        return None
    strides = _int_list(call.option("strides"), 2)
    dilations = _int_list(call.option("dilations"), 2)
    if strides is None or dilations is None:
        return None
    if "filter" in call.params:
        layout = call.option("inputLayout")
        filter_ = call.arg("filter")
        hw = _FILTER_HW.get(call.option("filterLayout"))
        if not isinstance(filter_, MLOperand) or len(filter_.shape) != 4 or hw is None:
            return None
        window = (filter_.shape[hw[0]], filter_.shape[hw[1]])
    else:
        layout = call.option("layout")
        window = call.options.get("windowDimensions")
        window = _spatial(source.shape, layout) if window is None else _int_list(window, 2)
        if window is None:
            return None
    if layout not in ("nchw", "nhwc"):
        return None
    return _spatial(source.shape, layout), window, strides, dilations


def _resolve_auto_pad(builder, call):
    """``autoPad``: "same-upper"/"same-lower" replace ``padding`` with the 2022 draft's automatic
    padding (conv2d, pooling: output = ceil(input / stride); convTranspose2d: output =
    input · stride, or ``outputSizes`` when given). "explicit" keeps ``padding``."""
    mode = call.extra.pop("autoPad", "explicit")
    if mode is None or mode == "explicit":
        return
    if mode not in _AUTO_PAD_MODES:
        call.fail(f"autoPad must be one of {', '.join(_AUTO_PAD_MODES)}, got {mode!r}")
    geometry = _auto_pad_geometry(call)
    if geometry is None:
        return
    sizes, window, strides, dilations = geometry
    effective = [(k - 1) * d + 1 for k, d in zip(window, dilations)]
    padding = []
    if call.op == "convTranspose2d":
        given_sizes = call.options.get("outputSizes")
        output_sizes = None if given_sizes is None else _int_list(given_sizes, 2)
        output_padding = _int_list(call.option("outputPadding"), 2, minimum=0)
        if (given_sizes is not None and output_sizes is None) or output_padding is None:
            return
        for axis in range(2):
            size, stride = sizes[axis], strides[axis]
            natural = (size - 1) * stride + effective[axis]
            if output_sizes is not None:
                padding += _split_padding(mode, natural - output_sizes[axis])
                continue
            total = natural + output_padding[axis] - size * stride
            if total < 0:  # too little window for "same": the output padding supplies the rest
                output_padding[axis] -= total
            padding += _split_padding(mode, total)
        if output_sizes is None:
            call.options["outputPadding"] = output_padding
    else:
        for axis in range(2):
            padding += _same_padding(mode, sizes[axis], effective[axis], strides[axis])
    call.options["padding"] = padding


def _resolve_rounding_type(builder, call):
    """``roundingType``: the 2022 name of ``outputShapeRounding``."""
    if "roundingType" not in call.extra:
        return
    value = call.extra.pop("roundingType")
    current = call.options.get("outputShapeRounding")
    if current is not None and current != value:
        call.fail(f"roundingType ({value!r}) and outputShapeRounding ({current!r}) disagree")
    call.options["outputShapeRounding"] = value


# ---------------------------------------------------------------- activations
def _has_activation_objects(call):
    items = call.options.get("activations")
    return isinstance(items, (list, tuple)) and any(isinstance(a, MLActivation) for a in items)


def _convert_recurrent_activations(builder, call):
    """``activations`` of the recurrent ops: MLActivation items become their names."""
    if not _has_activation_objects(call):
        return
    names = []
    for item in call.options["activations"]:
        if isinstance(item, MLActivation):
            item._check_builder(builder, call.op, call.label)
            if item.name not in _RECURRENT_ACTIVATIONS or item.options:
                call.fail(f"the activation {item!r} has no MLRecurrentNetworkActivation equivalent "
                          f"(one of {', '.join(_RECURRENT_ACTIVATIONS)}, without options)")
            item = item.name
        names.append(item)
    call.options["activations"] = names


def _fused_activation(builder, call):
    """``activation``: returns the MLActivation to apply to the op's result (or None)."""
    activation = call.extra.pop("activation", None)
    if activation is None:
        return None
    if not isinstance(activation, MLActivation):
        call.fail(f"activation must be an MLActivation (e.g. builder.relu()), got {type(activation).__name__}")
    activation._check_builder(builder, call.op, call.label)
    return activation


_ACTIVATION_DOC = """

2022 Working Draft convenience: ``activation=builder.relu()`` (an :class:`MLActivation`) builds
the op, then applies the activation to its result."""
_AUTO_PAD_DOC = """

2022 Working Draft convenience: ``auto_pad``/``autoPad`` "same-upper" or "same-lower"
computes ``padding`` from the shapes (conv and pooling: output = ceil(input / stride);
convTranspose2d: output = input · stride, or ``output_sizes``), "same-upper" putting the odd
padding at the end; "explicit" (the default) uses ``padding``."""
_ROUNDING_DOC = """

2022 Working Draft convenience: ``rounding_type``/``roundingType`` is accepted as the old name
of ``output_shape_rounding``."""
_ACTIVATIONS_DOC = """

2022 Working Draft convenience: ``activations`` may hold :class:`MLActivation` objects
(``builder.sigmoid()``, ``builder.tanh()``, ``builder.relu()``), converted to their names."""

# op -> (2022 options, transforms applied in order, docstring addition)
_OP_COMPAT = {
    "conv2d": (("activation", "autoPad"), (_resolve_auto_pad,), _AUTO_PAD_DOC + _ACTIVATION_DOC),
    "convTranspose2d": (("activation", "autoPad"), (_resolve_auto_pad,), _AUTO_PAD_DOC + _ACTIVATION_DOC),
    "batchNormalization": (("activation",), (), _ACTIVATION_DOC),
    "averagePool2d": (("autoPad", "roundingType"), (_resolve_rounding_type, _resolve_auto_pad),
                      _AUTO_PAD_DOC + _ROUNDING_DOC),
    "l2Pool2d": (("autoPad", "roundingType"), (_resolve_rounding_type, _resolve_auto_pad),
                 _AUTO_PAD_DOC + _ROUNDING_DOC),
    "maxPool2d": (("autoPad", "roundingType"), (_resolve_rounding_type, _resolve_auto_pad),
                  _AUTO_PAD_DOC + _ROUNDING_DOC),
    "gru": ((), (_convert_recurrent_activations,), _ACTIVATIONS_DOC),
    "gruCell": ((), (_convert_recurrent_activations,), _ACTIVATIONS_DOC),
    "lstm": ((), (_convert_recurrent_activations,), _ACTIVATIONS_DOC),
    "lstmCell": ((), (_convert_recurrent_activations,), _ACTIVATIONS_DOC),
}


# ---------------------------------------------------------------- softplus steepness
def _apply_steepness(builder, call):
    """softplus(x, steepness=s) of the 2022 draft: softplus(s·x) / s."""
    steepness = call.extra.pop("steepness")
    if isinstance(steepness, bool) or not isinstance(steepness, (int, float, np.integer, np.floating)) \
            or not math.isfinite(steepness):
        call.fail(f"steepness must be a finite number, got {steepness!r}")
    x = call.arg("input")
    if steepness == 1 or not isinstance(x, MLOperand):
        return call.invoke(builder)  # a bad input is reported by the op
    s = builder.constant(x.data_type, float(steepness))
    call.positional[0] = builder.mul(x, s, label=call.label)
    return builder.div(call.invoke(builder), s, label=call.label)


# ---------------------------------------------------------------- the 2022 forms of builder ops
_CREATOR_DOC = """

2022 Working Draft convenience: called without an input (options only, as keywords or one
dict), returns an :class:`MLActivation` for the ``activation`` option of conv2d,
conv_transpose2d and batch_normalization."""
_STEEPNESS_DOC = " ``steepness=s`` (2022) computes softplus(s·x)/s."


class OpForms:
    """The 2022 forms one builder op accepts.

    ``options`` ({accepted key: name}) go to :class:`OpCall` as its ``extra``; ``run`` lowers them
    on the normalized call and invokes the op. An activation op called without an input makes an
    :class:`MLActivation` instead (``makes_activation``/``activation``).
    """

    def __init__(self, op, names, transforms=(), doc="", creates_activations=False):
        native = {p["name"] for p in OP_INFOS[op]["options"]}
        self.op = op
        self.names = tuple(name for name in names if name not in native)
        self.options = {key: name for name in self.names for key in _COMPAT_OPTIONS[name]}
        self.transforms = transforms
        self.creates_activations = creates_activations
        self.doc = doc + (_CREATOR_DOC if creates_activations else "") + (
            _STEEPNESS_DOC if "steepness" in self.names else "")

    def makes_activation(self, args, keywords):
        return self.creates_activations and "input" not in keywords and (
            not args or (len(args) == 1 and isinstance(args[0], dict)))

    def activation(self, builder, args, keywords, label):
        """``relu()``, ``leaky_relu(alpha=0.2)``, ``clamp({"minValue": 0})``: an MLActivation."""
        options = dict(args[0]) if args else {}
        label = options.pop("label", label)
        options.update(keywords)
        unknown = sorted(key for key in options if key not in option_keys(self.op) and key not in self.options)
        if unknown:
            raise TypeError(label_prefix(self.op, label if isinstance(label, str) else "")
                            + f"unknown option '{unknown[0]}'")
        call = OpCall(self.op, [], options, label, self.options)
        return MLActivation(builder, self.op, {**call.options, **call.extra}, call.label)

    def run(self, builder, call):
        """Lowers the 2022 options of ``call`` (an OpCall with ``extra=self.options``), then invokes it."""
        for transform in self.transforms:
            transform(builder, call)
        activation = _fused_activation(builder, call)
        if "steepness" in call.extra:
            return _apply_steepness(builder, call)
        result = call.invoke(builder)
        return activation.apply(result, call.label) if activation is not None else result


def _op_forms():
    forms = {op: OpForms(op, names, transforms, doc)
             for op, (names, transforms, doc) in _OP_COMPAT.items() if op in OP_INFOS}
    for op in ACTIVATION_OPS:
        if op in OP_INFOS:
            forms[op] = OpForms(op, ("steepness",) if op == "softplus" else (), creates_activations=True)
    return forms


OP_FORMS = _op_forms()


# ---------------------------------------------------------------- squeeze
def squeeze(self, input, axes=None, *, label=""):
    """``squeeze(input, axes=None)``, an operation of the 2022 draft, built as ``reshape``.

    Removes the size-1 dimensions listed in ``axes`` (all size-1 dimensions when absent). The
    2022 form ``squeeze(input, {"axes": [...], "label": ...})`` is accepted too. TypeError, naming
    the label, when an axis is out of range, repeated, or names a dimension that is not 1.
    """
    if isinstance(axes, dict):
        options = dict(axes)
        label = options.pop("label", label)
        axes = options.pop("axes", None)
        if options:
            raise TypeError(label_prefix("squeeze", label) + f"unknown option '{next(iter(options))}'")
    if not isinstance(input, MLOperand):
        raise TypeError(label_prefix("squeeze", label) + f"input must be an MLOperand, got {type(input).__name__}")
    shape = list(input.shape)
    if axes is None:
        axes = [i for i, d in enumerate(shape) if d == 1]
    if isinstance(axes, (str, bytes)) or not hasattr(axes, "__iter__"):
        raise TypeError(label_prefix("squeeze", label) + "axes must be a sequence of integers")
    axes = list(axes)
    for axis in axes:
        if isinstance(axis, bool) or not isinstance(axis, (int, np.integer)):
            raise TypeError(label_prefix("squeeze", label) + f"axes must hold integers, got {axis!r}")
        if not 0 <= axis < len(shape):
            raise TypeError(label_prefix("squeeze", label) + f"axis {axis} is out of range for rank {len(shape)}")
        if shape[axis] != 1:
            raise TypeError(label_prefix("squeeze", label) + f"dimension {axis} has size {shape[axis]}, not 1")
    if len(set(int(a) for a in axes)) != len(axes):
        raise TypeError(label_prefix("squeeze", label) + f"axes {axes} has duplicates")
    removed = {int(a) for a in axes}
    return self.reshape(input, [d for i, d in enumerate(shape) if i not in removed], label=label)


# ---------------------------------------------------------------- constant(value, type)
def constant_value_first(args, keywords):
    """The 2022 ``constant(value, type='float32')`` (value first, the type defaulting to float32) as
    the current ``(type, value)`` arguments, or None for any other form."""
    if args and is_number(args[0]) and (
            (len(args) == 1 and set(keywords) <= {"type"})
            or (len(args) == 2 and not keywords and isinstance(args[1], str))):
        return (args[1] if len(args) == 2 else keywords.get("type", "float32")), args[0]
    if not args and "value" in keywords and set(keywords) <= {"value", "type"}:
        return keywords.get("type", "float32"), keywords["value"]
    return None


# ---------------------------------------------------------------- compute(inputs, outputs)
def _array_input(value):
    """A 2022 ``MLArrayInput`` ``{"resource": array, "dimensions": [...]}`` as an array."""
    if isinstance(value, dict) and "resource" in value:
        array = np.asarray(value["resource"])
        dims = value.get("dimensions")
        return array if dims is None else array.reshape(dims)
    return value


def compute_into(graph, inputs, outputs, context):
    """The 2022 ``graph.compute(inputs, outputs)``: fills the preallocated NumPy arrays of
    ``outputs`` (any subset of the outputs) in place and returns that dict. Inputs may be 2022
    ``{'resource': array, 'dimensions': [...]}`` dicts."""
    if not isinstance(outputs, dict):
        raise TypeError(f"compute: outputs must be a dict of NumPy arrays, got {type(outputs).__name__}")
    values = {k: _array_input(v) for k, v in inputs.items()}
    known = graph.output_descriptors
    if graph.is_dynamic:  # (graphs built with -1 dimensions) the output shapes at these inputs' shapes
        shapes = {name: list(np.shape(values[name])) for name in graph.input_descriptors if name in values}
        known = graph.output_descriptors_for(shapes)
    for name, array in outputs.items():
        if name not in known:
            raise TypeError(f"compute: '{name}' is not an output of the graph")
        if not isinstance(array, np.ndarray) or not array.flags.writeable:
            raise TypeError(f"compute: output '{name}' must be a writable NumPy array")
        descriptor = known[name]
        if array.dtype != np.dtype(descriptor["dataType"]) or array.size != int(np.prod(descriptor["shape"])):
            raise TypeError(f"compute: output '{name}' must hold {descriptor['dataType']} {descriptor['shape']}, "
                            f"got {array.dtype} {list(array.shape)}")
    results = graph.compute(values, None, context)
    for name, array in outputs.items():
        np.copyto(array, results[name].reshape(array.shape))
    return {name: outputs[name] for name in outputs}


def context_compute(self, graph, inputs, outputs=None):
    """The 2022 draft's ``context.compute(graph, inputs, outputs)``: runs ``graph`` on this context.

    With ``outputs`` (a dict of preallocated NumPy arrays) fills them in place and returns that
    dict; without, returns ``{output name: array}`` like ``graph.compute``.
    """
    return graph.compute(inputs, outputs, self)
