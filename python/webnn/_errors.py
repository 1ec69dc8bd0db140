"""The WebNN error classes.

The spec's ``TypeError`` is Python's builtin :class:`TypeError`. The spec's DOMException names
are classes here, each a subclass of :class:`MLError` and of the closest builtin.
"""


class MLError(Exception):
    """Base class of every WebNN DOMException-style error."""


class DataError(MLError, ValueError):
    """Malformed data, such as a bad model file or weights blob."""


class InvalidStateError(MLError, RuntimeError):
    """The object is in the wrong state: a destroyed graph or tensor, a lost context, a spent builder."""


class NotSupportedError(MLError, NotImplementedError):
    """The request is valid but this implementation does not support it."""


class OperationError(MLError, RuntimeError):
    """An operation failed, such as graph compilation."""


class UnknownError(MLError, RuntimeError):
    """An unexpected failure, such as running out of memory on the timeline."""


# Shown as webnn.DataError (where they are imported from), not webnn._errors.DataError.
for _cls in (MLError, DataError, InvalidStateError, NotSupportedError, OperationError, UnknownError):
    _cls.__module__ = "webnn"
del _cls

__all__ = ["MLError", "DataError", "InvalidStateError", "NotSupportedError", "OperationError", "UnknownError"]
