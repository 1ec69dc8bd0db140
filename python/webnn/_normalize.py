"""Argument normalization: what a Python call gives -> what ``webnn._core`` takes.

One path, shared by the spec API (``_api``) and the 2022 Working Draft forms (``_compat``):
descriptors (dataclasses, dicts with camelCase, snake_case or 2022 keys, keywords) become
``(data_type, shape, extras)``, and a builder-method call (operands and arguments by position or
keyword, a trailing options dictionary, camelCase or snake_case options, a label) becomes an
:class:`OpCall` that ``invoke`` hands to the native builder.
"""
import re
from dataclasses import dataclass, field
from typing import List

import numpy as np

from . import _core

DATA_TYPES = ("float32", "float16", "int32", "uint32", "int64", "uint64", "int8", "uint8", "int4", "uint4")
OP_INFOS = {info["name"]: info for info in _core.op_infos()}

_SNAKE_OVERRIDES = {"isNaN": "is_nan"}


def snake_case(name):
    """The Python name of a spec name: ``convTranspose2d`` -> ``conv_transpose2d``."""
    if name in _SNAKE_OVERRIDES:
        return _SNAKE_OVERRIDES[name]
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name).lower()


def is_number(value):
    return isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, (bool, np.bool_))


def label_prefix(op, label):
    """``[label] op: `` (``op: `` without a label): how every TypeError about a call begins."""
    return f"[{label}] {op}: " if label else f"{op}: "


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


def data_type_name(value, what):
    """The MLOperandDataType named by ``value`` (a string or anything ``np.dtype`` takes)."""
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
    A 2022 descriptor (``type`` with no ``dimensions``) describes a scalar.
    """
    if descriptor is None:
        source = keywords
    elif isinstance(descriptor, MLOperandDescriptor):
        source = dict(vars(descriptor))
        source.update(keywords)
    elif isinstance(descriptor, dict):
        source = dict(descriptor)
        if "type" in source and not ({"dataType", "data_type", "shape", "dimensions"} & (set(source) | set(keywords))):
            source["dimensions"] = []
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
    return data_type_name(data_type, what), list(shape), extras


# ---------------------------------------------------------------- builder-method calls
def _keys(info):
    """{accepted keyword: ("arg" or "opt", spec name)} of one op, camelCase and snake_case."""
    keys = {}
    for kind, items in (("arg", info["arguments"]), ("opt", info["options"])):
        for item in items:
            keys[item["name"]] = keys[snake_case(item["name"])] = (kind, item["name"])
    return keys


_KEYS = {op: _keys(info) for op, info in OP_INFOS.items()}


def option_keys(op):
    """The keywords that name options of ``op`` (camelCase and snake_case)."""
    return {key for key, (kind, _) in _KEYS[op].items() if kind == "opt"}


class OpCall:
    """One builder-method call, normalized against the op's registry entry.

    ``positional`` holds the op's arguments in spec order (None where one is missing: the op
    reports it), ``options`` the options by spec name, ``extra`` the options named by ``extra``
    (``{accepted key: name}``, for forms beyond the spec) and ``label`` the label. Unknown options
    and keywords raise TypeError as Python calls do.
    """

    def __init__(self, op, args, keywords, label="", extra=None):
        info = OP_INFOS[op]
        keys = _KEYS[op]
        extra = extra or {}
        self.op = op
        self.params = [p["name"] for p in info["arguments"]]
        self.defaults = {p["name"]: p["default"] for p in info["options"] if p["has_default"]}
        self.single = info["output_count"] == 1
        self.positional = list(args)
        self.options = {}
        self.extra = {}
        # A trailing options dictionary, as in the spec's JavaScript form.
        if len(self.positional) == len(self.params) + 1 and (
                isinstance(self.positional[-1], dict) or self.positional[-1] is None):
            for key, value in (self.positional.pop() or {}).items():
                if key == "label":
                    label = value
                elif key in extra:
                    self.extra[extra[key]] = value
                elif keys.get(key, ("arg",))[0] == "opt":
                    self.options[keys[key][1]] = value
                else:
                    raise TypeError(f"{op}: unknown option '{key}'")
        if len(self.positional) > len(self.params):
            raise TypeError(f"{op}() takes {len(self.params)} positional arguments but {len(self.positional)} were given")
        for key, value in keywords.items():
            kind = keys.get(key)
            if kind is None and key in extra:
                self.extra[extra[key]] = value
                continue
            if kind is None:
                raise TypeError(f"{op}() got an unexpected keyword argument '{key}'")
            if kind[0] == "opt":
                self.options[kind[1]] = value
                continue
            index = self.params.index(kind[1])
            if index < len(self.positional):
                raise TypeError(f"{op}() got multiple values for argument '{key}'")
            self.positional.extend([None] * (index + 1 - len(self.positional)))
            self.positional[index] = value
        if not isinstance(label, str):
            raise TypeError(f"{op}: label must be a string")
        self.label = label

    def arg(self, name):
        """The argument ``name`` (a spec name), or None when it is missing."""
        index = self.params.index(name)
        return self.positional[index] if index < len(self.positional) else None

    def option(self, name):
        """The option ``name`` (a spec name), or its default."""
        return self.options.get(name, self.defaults.get(name))

    def fail(self, message):
        raise TypeError(label_prefix(self.op, self.label) + message)

    def invoke(self, builder):
        """Runs the op on ``builder``: one MLOperand, or a list for ops with several outputs."""
        result = builder._call(self.op, self.positional, self.options, self.label)
        return result[0] if self.single else result
