"""Batch inference: one model over many items, on every core (a convenience beyond the spec).

    runner = webnn.BatchRunner("resnet50.onnx")           # batch size and core split chosen
    outputs = runner.run({"data": images})                # {output name: array}, items in order
    for out in runner.stream(batches):                    # or batches from an iterable, in order
        ...

The engine is the C++ ``webnn::BatchRunner`` (``webnn/batch.h``): one graph per worker, each on
its own context (contexts share packed weights), batches taken by whichever worker is free,
results written straight into the output arrays in item order, the GIL released while it runs.
"""
import os
import time

import numpy as np

from . import _core
from ._api import MLGraph, create_context, numpy_dtype
from ._errors import DataError, MLError

__all__ = ["BatchRunner", "run_batches"]

_WAIT_MS = 100  # how often a waiting run reports progress and lets Ctrl-C through


def _is_path(model):
    return isinstance(model, (str, os.PathLike))


def _onnx_batch_dimension(model):
    """The name of the ONNX model's symbolic first dimension shared by its inputs, or None."""
    initializers = {t.name for t in model.graph.initializer}
    for value in model.graph.input:
        dims = value.type.tensor_type.shape.dim
        if value.name not in initializers and dims and dims[0].dim_param:
            return dims[0].dim_param
    return None


def _factory(model, dims, input_shapes, batch_dimension):
    """(build(context, batch_size) -> MLGraph, the model's fixed batch size or 0, a name)."""
    dims = dict(dims or {})
    if callable(model) and not isinstance(model, MLGraph):
        return model, 0, getattr(model, "__name__", "model")
    onnx_bytes = isinstance(model, (bytes, bytearray, memoryview))
    if not (_is_path(model) or onnx_bytes or type(model).__name__ == "ModelProto"):
        raise TypeError("BatchRunner: model must be a path (.webnn, .json or .onnx), an onnx.ModelProto or its bytes, "
                        f"an MLGraph or a function (context, batch_size) -> MLGraph, got {type(model).__name__}")
    if _is_path(model) and not os.fspath(model).lower().endswith(".onnx"):
        from . import formats

        if input_shapes:
            raise TypeError("BatchRunner: input_shapes applies to ONNX models only")
        path = os.fspath(model)
        summary = formats.summary(path)
        name = batch_dimension or "batch"
        firsts = [i["shape"][0] for i in summary["inputs"] if i["shape"]]
        dynamic = any(isinstance(d, dict) and d["name"] == name for d in firsts)
        fixed = next((d for d in firsts if isinstance(d, int)), 0)
        if batch_dimension and not dynamic:
            raise TypeError(f"BatchRunner: {path} has no dynamic input dimension '{batch_dimension}'")

        def build(context, batch_size):
            return formats.load(path, context, dims={**dims, name: batch_size} if dynamic else dims)

        return build, 0 if dynamic else fixed, os.path.basename(path)

    from . import onnx as onnx_import
    from .onnx._convert import _as_model

    proto = _as_model(model)  # parsed once for every worker
    item_shapes = {n: list(s) for n, s in (input_shapes or {}).items()}
    # Item shapes pin whole inputs, batch axis included; otherwise the symbolic batch dimension.
    name = batch_dimension or (None if item_shapes else _onnx_batch_dimension(proto))
    fixed = 0
    if name is None and not item_shapes:
        initializers = {t.name for t in proto.graph.initializer}
        for value in proto.graph.input:
            d = value.type.tensor_type.shape.dim
            if value.name not in initializers and d and d[0].dim_value:
                fixed = d[0].dim_value
                break

    def build(context, batch_size):
        pinned = {**dims, name: batch_size} if name else dims
        shapes = {n: [batch_size] + s for n, s in item_shapes.items()}
        return onnx_import.load(proto, context, override_dims=pinned, input_shapes=shapes)

    return build, fixed, os.path.basename(os.fspath(model)) if _is_path(model) else "onnx model"


def _option(value, what):
    if value is None:
        return 0
    if isinstance(value, bool) or not hasattr(value, "__index__") or int(value) < 1:
        raise TypeError(f"BatchRunner: {what} must be a positive integer or None, got {value!r}")
    return int(value)


class BatchRunner:
    """Runs one model over many items with every core.

    ``model``: a ``.webnn``/``.json``/``.onnx`` path, an ``onnx.ModelProto``, a function
    ``build(context, batch_size) -> MLGraph``, or a built :class:`MLGraph` (which runs on its own
    context as one worker, at its own batch size). A model file's dynamic batch dimension
    (``batch_dimension``: ``"batch"`` for ``.webnn``, the first input's symbolic first dimension for
    ONNX) is set to the batch size; ``dims`` pins other named dimensions, and ``input_shapes``
    (ONNX) gives inputs' item shapes (``{"x": [3, 48, 320]}``, the batch axis left out) where their
    dimensions have no names.

    ``batch_size``, ``workers`` (contexts run concurrently) and ``threads_per_worker`` are chosen
    when left ``None`` (``webnn/batch.h`` says how) for ``cores`` cores (default: all of this
    machine's; a Ray actor passes the CPUs it was given); ``items`` (how many you will run) refines
    the choice for small runs.
    """

    def __init__(self, model, *, batch_size=None, workers=None, threads_per_worker=None, items=None, cores=None,
                 dims=None, input_shapes=None, batch_dimension=None):
        requested = (_option(batch_size, "batch_size"), _option(workers, "workers"),
                     _option(threads_per_worker, "threads_per_worker"))
        cores = _option(cores, "cores") or _core.hardware_threads()
        items = 0 if items is None else int(items)
        if isinstance(model, MLGraph):
            if requested[1] > 1 or requested[2]:
                raise TypeError("BatchRunner: a built MLGraph runs on its own context as one worker; pass a model "
                                "file or a build function for more workers or threads")
            graph_batch = next((d["shape"][0] for d in model.input_descriptors.values() if d["shape"]), 0)
            if requested[0] and requested[0] != graph_batch:
                raise TypeError(f"BatchRunner: the MLGraph's batch size is {graph_batch}, not {requested[0]}")
            graphs, self._name = [model], "graph"
        else:
            build, fixed, self._name = _factory(model, dims, input_shapes, batch_dimension)
            batch, count, threads = _core.choose_batch_split(items, fixed, *requested, cores)
            graphs = []
            for _ in range(count):
                graph = build(create_context(num_threads=threads), batch)
                if not isinstance(graph, MLGraph):
                    raise TypeError(f"BatchRunner: the build function returned {type(graph).__name__}, not an MLGraph")
                graphs.append(graph)
        self._runner = _core.BatchRunner(graphs)
        b = self._runner.batch_size
        self._inputs = {n: (numpy_dtype(d["dataType"]), tuple(d["shape"][1:]))
                        for n, d in self._runner.input_descriptors.items()}
        self._outputs = {n: (numpy_dtype(d["dataType"]), tuple(d["shape"][1:]))
                         for n, d in self._runner.output_descriptors.items()}
        self._split = (b, self._runner.workers, self._runner.threads_per_worker)
        self._reported = 0.0  # when progress was last reported

    # ------------------------------------------------------------------ what it runs
    @property
    def name(self):
        """The model's file name (or the build function's name)."""
        return self._name

    @property
    def batch_size(self):
        """Items per batch: the first dimension of every model input and output."""
        return self._split[0]

    @property
    def workers(self):
        """Contexts running batches concurrently, each with its own copy of the plan."""
        return self._split[1]

    @property
    def threads_per_worker(self):
        return self._split[2]

    @property
    def input_descriptors(self):
        """``{name: {"dataType", "shape"}}`` of one item (the batch axis left out)."""
        return {n: {"dataType": np.dtype(t).name, "shape": list(s)} for n, (t, s) in self._inputs.items()}

    @property
    def output_descriptors(self):
        return {n: {"dataType": np.dtype(t).name, "shape": list(s)} for n, (t, s) in self._outputs.items()}

    def __repr__(self):
        return (f"<webnn.BatchRunner {self.name}: batch {self.batch_size}, {self.workers} worker(s) x "
                f"{self.threads_per_worker} thread(s)>")

    # ------------------------------------------------------------------ inputs
    def _named(self, inputs):
        if not hasattr(inputs, "items"):
            if len(self._inputs) != 1:
                raise TypeError(f"BatchRunner: the model has inputs {sorted(self._inputs)}: pass a dict of arrays")
            inputs = {next(iter(self._inputs)): inputs}
        missing = sorted(set(self._inputs) - set(inputs))
        extra = sorted(set(inputs) - set(self._inputs))
        if missing or extra:
            raise TypeError(f"BatchRunner: the model's inputs are {sorted(self._inputs)}"
                            + (f"; missing {missing}" if missing else "") + (f"; unknown {extra}" if extra else ""))
        arrays, count = {}, None
        for name, value in inputs.items():
            array = value if isinstance(value, np.ndarray) else np.asarray(value)
            dtype, item_shape = self._inputs[name]
            if array.shape[1:] != item_shape:
                raise TypeError(f"BatchRunner: input '{name}' has items of shape {list(array.shape[1:])} "
                                f"(array {list(array.shape)}), the model takes {list(item_shape)}")
            if array.dtype != dtype and not np.can_cast(array.dtype, dtype, "same_kind") and not (
                    array.dtype.kind in "iub" and dtype.kind in "iu"):
                raise TypeError(f"BatchRunner: input '{name}' is {array.dtype}, the model takes {dtype}")
            if count is not None and len(array) != count:
                raise TypeError(f"BatchRunner: the inputs hold different numbers of items ({count} and {len(array)} "
                                f"in '{name}')")
            count = len(array)
            arrays[name] = array
        return arrays, count

    def _chunk(self, arrays, start, stop, check_finite, first):
        """Items start..stop in the model's dtype, contiguous, checked (a view when the data already
        is); errors number the items from `first`."""
        out = {}
        for name, array in arrays.items():
            dtype, _ = self._inputs[name]
            part = array[start:stop]
            if part.dtype != dtype:
                if dtype.kind in "iu" and part.dtype.kind in "iub" and part.size:
                    info = np.iinfo(dtype)
                    bad = (part < info.min) | (part > info.max)
                    if bad.any():
                        k = int(np.argwhere(bad)[0][0])
                        raise DataError(f"BatchRunner: item {first + k} of input '{name}' holds "
                                        f"{part[k][bad[k]].flat[0]}, outside the {dtype} range")
                part = part.astype(dtype)
            part = np.ascontiguousarray(part)
            if check_finite and dtype.kind == "f" and part.size:
                finite = np.isfinite(part.reshape(len(part), -1)).all(axis=1)
                if not finite.all():
                    k = int(np.argmin(finite))
                    where = np.argwhere(~np.isfinite(part[k]))[0].tolist()
                    raise DataError(f"BatchRunner: item {first + k} of input '{name}' is not finite "
                                    f"({part[k][tuple(where)]} at {where}); pass check_finite=False to run it")
            out[name] = part
        return out

    # ------------------------------------------------------------------ running
    def _wait(self, job, progress, total, base):
        """Waits for `job`, reporting progress about every 0.1 s (also when jobs finish quickly)."""
        while True:
            done = self._runner.wait(job, _WAIT_MS)
            now = time.monotonic()
            if progress is not None and (not done or now - self._reported >= _WAIT_MS / 1e3):
                self._reported = now
                progress(self._runner.items_done - base, total)
            if done:
                return

    def _abandon(self, pending):
        """After Ctrl-C or an error: drop the batches of `pending` jobs not started, and wait for
        those in flight (they write into arrays this call owns)."""
        for job, *_ in pending:
            self._runner.cancel(job)
        for job, *_ in pending:
            try:
                self._runner.wait(job)
            except (MLError, TypeError):
                pass  # the cancellation itself, or the failure being raised already

    def run(self, inputs, *, progress=None, check_finite=True):
        """Runs every item; returns ``{output name: array}`` with the items in input order.

        ``inputs``: an array whose first axis is the item axis (one-input models), or a dict of
        such arrays. Integer inputs are converted when every value fits; float items holding NaN or
        inf raise :class:`webnn.DataError` naming the item unless ``check_finite=False``.
        ``progress(done, total)`` is called on this thread about every 0.1 s and at the end.
        """
        arrays, count = self._named(inputs)
        outputs = {n: np.empty((count,) + s, t) for n, (t, s) in self._outputs.items()}
        # Chunks of a few batches per worker: converted and checked while earlier ones run.
        item_bytes = sum(np.dtype(t).itemsize * int(np.prod(s)) for t, s in self._inputs.values())
        chunk = max(self.batch_size * self.workers * 4, min(256, (16 << 20) // max(item_bytes, 1)))
        chunk = -(-chunk // self.batch_size) * self.batch_size  # whole batches
        base = self._runner.items_done
        pending = []
        try:
            for start in range(0, count, chunk):
                stop = min(start + chunk, count)
                parts = self._chunk(arrays, start, stop, check_finite, start)
                views = {n: a[start:stop] for n, a in outputs.items()}
                job = self._runner.submit(stop - start, parts, views, start)
                pending.append((job, parts))  # the converted inputs live until their job is done
                while len(pending) > 2:
                    self._wait(pending[0][0], progress, count, base)
                    pending.pop(0)
            while pending:
                self._wait(pending[0][0], progress, count, base)
                pending.pop(0)
        except BaseException:
            self._abandon(pending)
            raise
        if progress is not None:
            progress(count, count)
        return outputs

    def stream(self, batches, *, progress=None, check_finite=True):
        """Runs each element of ``batches`` (an array or dict of arrays, any number of items) and
        yields its ``{output name: array}``, in order, while later ones run. At most a few batches
        per worker are read ahead. ``progress(done, None)`` as in :meth:`run`."""
        base = self._runner.items_done
        pending, submitted = [], 0
        ahead = 2 * self.workers * self.batch_size
        try:
            iterator = iter(batches)
            while True:
                queued = sum(p[2] for p in pending)
                if queued < ahead:
                    try:
                        element = next(iterator)
                    except StopIteration:
                        break
                    arrays, count = self._named(element)
                    parts = self._chunk(arrays, 0, count, check_finite, submitted)
                    outputs = {n: np.empty((count,) + s, t) for n, (t, s) in self._outputs.items()}
                    job = self._runner.submit(count, parts, outputs, submitted)
                    submitted += count
                    pending.append((job, outputs, count, parts))
                    continue
                self._wait(pending[0][0], progress, None, base)
                yield pending.pop(0)[1]
            while pending:
                self._wait(pending[0][0], progress, None, base)
                yield pending.pop(0)[1]
        except BaseException:
            self._abandon(pending)
            raise

    def take_batch_latencies(self):
        """Seconds per batch finished since the last call, from a worker taking the batch to its
        results landing in the output arrays (an array, in the order the batches finished)."""
        return np.asarray(self._runner.take_latencies_ms(), np.float64) / 1e3

    def close(self):
        """Waits for the batches in flight and releases the contexts."""
        if self._runner is not None:
            self._runner.close()
            self._runner = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def run_batches(model, inputs, *, batch_size=None, workers=None, threads_per_worker=None, progress=None,
                check_finite=True, **model_options):
    """``BatchRunner(model, ...).run(inputs)`` in one call: the model is built for this run only."""
    arrays = inputs if hasattr(inputs, "items") else {"": inputs}
    items = len(next(iter(arrays.values()))) if arrays else 0
    with BatchRunner(model, batch_size=batch_size, workers=workers, threads_per_worker=threads_per_worker,
                     items=items, **model_options) as runner:
        return runner.run(inputs, progress=progress, check_finite=check_finite)

