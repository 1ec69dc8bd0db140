"""Reading and writing ``.webnn`` models, the format of the webnn-graph tools.

A model is a text graph (``model.webnn``, or its JSON twin ``model.json``) with its weights in
``model.manifest.json`` + ``model.weights``, or in one ``model.safetensors``::

    graph = webnn.load("model.webnn")                    # an MLGraph on a new (or given) context
    outputs = webnn.load_into(builder, "model.webnn")    # {output name: MLOperand}, to extend
    webnn.save("copy.webnn", {"y": y})                   # writes the graph and its weights
    webnn.save("copy.webnn", graph)                      # a graph that webnn.load returned

Malformed files raise :class:`webnn.DataError` naming the file, the line or the tensor, and the
reason. Models with dynamic input dimensions (``dyn("batch", 64)``) load as dynamic graphs; ``dims``
pins them to sizes instead: ``webnn.load(path, dims={"batch": 8})``.
"""
import os

from . import _core
from ._api import MLGraph, MLGraphBuilder, MLOperand, create_context

__all__ = ["load", "load_into", "save", "summary"]

_FORMATS = ("auto", "text", "json")
_WEIGHTS = ("blob", "headerless", "safetensors")


def _path(path, what):
    try:
        return os.fspath(path)
    except TypeError:
        raise TypeError(f"{what}: the path must be a str or os.PathLike, got {type(path).__name__}") from None


def _existing(path, what):
    path = _path(path, what)
    if not os.path.isfile(path):
        raise FileNotFoundError(f"{what}: no such model file: {path}")
    return path


def _dims(dims, what):
    if dims is None:
        return {}
    if not hasattr(dims, "items"):
        raise TypeError(f"{what}: dims must be a dict of {{dimension name: size}}")
    out = {}
    for name, size in dims.items():
        if not isinstance(name, str):
            raise TypeError(f"{what}: dimension names must be strings, got {name!r}")
        if isinstance(size, bool) or not hasattr(size, "__index__") or not 1 <= int(size) <= 0xFFFFFFFF:
            raise TypeError(f"{what}: the size of dimension '{name}' must be an integer in [1, 4294967295]")
        out[name] = int(size)
    return out


def _optional_path(path, what):
    return "" if path is None else _path(path, what)


def load(path, context=None, *, dims=None, manifest=None, weights=None, map_weights=False):
    """Loads a ``.webnn`` (or JSON) model and returns a compiled :class:`MLGraph`.

    ``context`` defaults to a new context. ``dims`` sizes dynamic input dimensions by name.
    ``manifest``/``weights`` override where the weights are (default: ``<stem>.manifest.json``
    or ``manifest.json``, and ``<stem>.weights``; or ``<stem>.safetensors``; a ``weights`` path
    ending in ``.safetensors`` needs no manifest). The graph can be written back with :func:`save`.

    The weights are read into the process's memory: what another process then does to the file
    (truncates, rewrites, replaces or deletes it) cannot change or break the loaded model.
    ``map_weights=True`` memory-maps the file instead and computes from its pages (no copy, pages
    shared by every process that maps the file); the file must then stay unchanged while the model
    is loaded: truncating it kills the process (SIGBUS) at the next read of a lost page, and
    rewriting it in place changes the weights.
    """
    path = _existing(path, "load")
    context = context if context is not None else create_context()
    builder = MLGraphBuilder(context)
    outputs = load_into(builder, path, dims=dims, manifest=manifest, weights=weights, map_weights=map_weights)
    graph = builder.build(outputs)
    graph._webnn_outputs = outputs  # what save(path, graph) writes
    return graph


def load_into(builder, path, *, dims=None, manifest=None, weights=None, map_weights=False):
    """Adds a model's inputs, constants and nodes to ``builder`` and returns ``{output name:
    MLOperand}``. Node labels are the names in the file, so errors point at them; saving the
    builder's operands later keeps the model's names and weight keys. ``map_weights``: as for
    :func:`load`."""
    if not isinstance(map_weights, bool):
        raise TypeError(f"load_into: map_weights must be True or False, got {map_weights!r}")
    if not isinstance(builder, MLGraphBuilder):
        raise TypeError(f"load_into: expected an MLGraphBuilder, got {type(builder).__name__}")
    path = _existing(path, "load_into")
    return _core._load_model_into(builder, path, _optional_path(manifest, "load_into"),
                                  _optional_path(weights, "load_into"), _dims(dims, "load_into"), map_weights)


def save(path, outputs, *, format="auto", weights="blob", name=None):
    """Writes the graph that computes ``outputs`` to ``path`` and its weights beside it.

    ``outputs`` is ``{name: MLOperand}`` (all from one builder, before or after ``build``) or an
    :class:`MLGraph` returned by :func:`load`. ``format``: ``"text"``, ``"json"`` or ``"auto"``
    (JSON for a ``.json`` path). ``weights``: ``"blob"`` (``<stem>.manifest.json`` +
    ``<stem>.weights`` with the WGWT header), ``"headerless"`` (the same without it) or
    ``"safetensors"`` (``<stem>.safetensors``). ``name`` is the graph's name (default: the stem).
    Scalar constants are written inline; the others go to the weights file.
    """
    path = _path(path, "save")
    if isinstance(outputs, MLGraph):
        named = getattr(outputs, "_webnn_outputs", None)
        if named is None:
            raise TypeError("save: this MLGraph was not loaded by webnn.load; pass {name: MLOperand} outputs instead")
        outputs = named
    if not hasattr(outputs, "items"):
        raise TypeError(f"save: outputs must be a dict of {{name: MLOperand}} or an MLGraph, got {type(outputs).__name__}")
    for key, value in outputs.items():
        if not isinstance(key, str) or not isinstance(value, MLOperand):
            raise TypeError(f"save: outputs must map names (str) to MLOperands, got {key!r}: {type(value).__name__}")
    if format not in _FORMATS:
        raise TypeError(f"save: format must be one of {_FORMATS}, got {format!r}")
    if weights not in _WEIGHTS:
        raise TypeError(f"save: weights must be one of {_WEIGHTS}, got {weights!r}")
    if name is not None and not isinstance(name, str):
        raise TypeError("save: name must be a string")
    directory = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(directory):
        raise FileNotFoundError(f"save: no such directory: {directory}")
    _core._save_model(path, dict(outputs), format, weights, name or "")


def summary(path):
    """The structure of a model without reading its weights: ``{"name", "version", "inputs":
    [{"name", "dataType", "shape"}], "consts": [...], "ops": [op names], "outputs": {name: operand}}``.
    A dynamic dimension appears as ``{"name": ..., "max": ...}`` in an input's shape."""
    return _core._model_summary(_existing(path, "summary"))
