"""Dynamic input dimensions (the WebNN dynamic-shape explainer's ``MLDynamicDimension``).

``webnn.dynamic("batch", max_size=64)`` in an input's shape makes that dimension's size a choice of
each dispatch, from 1 to ``max_size``. Inputs that share a name share the size. The graph is built
once; each new input shape gets its own compiled plan (see ``MLGraph.plan_cache_info``).
"""

_MAX = 2**31 - 1


class DynamicDimension:
    """A named dimension whose size is given at dispatch. ``max_size`` None: bounded only by the
    tensor limits. Descriptors report a dimension that follows no input dimension with ``name``
    None."""

    __slots__ = ("name", "max_size")

    def __init__(self, name, max_size=None):
        if name is not None and (not isinstance(name, str) or not name):
            raise TypeError(f"dynamic: the name must be a non-empty string, got {name!r}")
        if max_size is not None and (isinstance(max_size, bool) or not isinstance(max_size, int)
                                     or not 1 <= max_size <= _MAX):
            raise TypeError(f"dynamic: max_size must be an integer in [1, 2^31-1] or None, got {max_size!r}")
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "max_size", max_size)

    def __setattr__(self, key, value):
        raise AttributeError("DynamicDimension is immutable")

    def __eq__(self, other):
        return isinstance(other, DynamicDimension) and (self.name, self.max_size) == (other.name, other.max_size)

    def __hash__(self):
        return hash((DynamicDimension, self.name, self.max_size))

    def __repr__(self):
        bound = "" if self.max_size is None else f", max_size={self.max_size}"
        return f"webnn.dynamic({self.name!r}{bound})"

    def __reduce__(self):
        return (DynamicDimension, (self.name, self.max_size))


def dynamic(name, max_size=None):
    """A dynamic dimension for a graph input's shape: ``shape=[webnn.dynamic("batch", 64), 3, 224, 224]``."""
    if name is None:
        raise TypeError("dynamic: a dynamic dimension needs a name")
    return DynamicDimension(name, max_size)


def input_shape(name, shape):
    """An input's shape with the 2022 draft's free dimensions (-1) as dynamic dimensions named
    ``'<input>[<axis>]'`` (each its own size)."""
    out = []
    for axis, size in enumerate(shape):
        if isinstance(size, int) and not isinstance(size, bool) and size == -1:
            out.append(DynamicDimension(f"{name}[{axis}]"))
        else:
            out.append(size)
    return out


def is_static(shape):
    return not any(isinstance(d, DynamicDimension) for d in shape)
