"""Ray Data: webnn inference as a stage of a Ray Data pipeline (needs ``pip install "webnn[ray]"``).

    import ray
    from webnn.ray import WebnnPredictor

    ds = ray.data.read_parquet("s3://bucket/images/")           # columns "id", "image", ...
    ds = ds.map_batches(WebnnPredictor, fn_constructor_kwargs={"model": "model.webnn",
                                                               "inputs": {"image": "x"}},
                        compute=ray.data.ActorPoolStrategy(size=4),  # concurrency=4 before Ray 2.51
                        num_cpus=2, batch_size=64, batch_format="numpy")
    ds.write_parquet("s3://bucket/predictions/")                # "id", ... and the model's outputs

Each actor loads the model once, into a :class:`webnn.BatchRunner` sized to the CPUs Ray assigned
to it (``num_cpus``): one thread per CPU. Leave the cluster CPUs for the read and write tasks.
"""
import os
from collections.abc import Mapping

import numpy as np

try:
    import ray
except ImportError as error:  # an optional extra: `import webnn` never gets here
    raise ModuleNotFoundError('webnn.ray needs Ray Data: pip install "webnn[ray]"', name="ray") from error

from .batch import BatchRunner

__all__ = ["WebnnPredictor", "assigned_cpus"]


def assigned_cpus():
    """The CPUs Ray assigned to the calling task or actor (whole CPUs, at least 1), or ``None``
    outside a Ray task or actor."""
    if not ray.is_initialized():
        return None
    context = ray.get_runtime_context()
    if context.get_task_id() is None:  # the driver
        return None
    return max(1, int(context.get_assigned_resources().get("CPU", 0) + 1e-9))


def _name_map(mapping, what):
    if mapping is None:
        return {}
    if not isinstance(mapping, Mapping) or not all(isinstance(k, str) and isinstance(v, str)
                                                   for k, v in mapping.items()):
        raise TypeError(f"WebnnPredictor: {what} must map names (str) to names (str), got {mapping!r}")
    return dict(mapping)


class WebnnPredictor:
    """A callable class for ``Dataset.map_batches``: runs a webnn model over each batch.

    ``model``: a ``.webnn``/``.onnx`` path readable on every node, ONNX bytes, or a function
    ``build(context, batch_size) -> MLGraph`` (see :class:`webnn.BatchRunner`). ``inputs`` maps
    column -> model input and ``outputs`` model output -> column (names not mentioned are the
    same on both sides). The batch's other columns pass through unchanged; the input columns are
    dropped unless ``keep_inputs``. ``cores`` defaults to the CPUs Ray assigned to the actor
    (all of the machine's outside Ray); ``batch_size``, ``workers``, ``threads_per_worker``,
    ``dims``, ``input_shapes`` and ``batch_dimension`` go to :class:`webnn.BatchRunner`.
    """

    def __init__(self, model, *, inputs=None, outputs=None, keep_inputs=False, check_finite=True, cores=None,
                 batch_size=None, workers=None, threads_per_worker=None, dims=None, input_shapes=None,
                 batch_dimension=None):
        inputs, outputs = _name_map(inputs, "inputs"), _name_map(outputs, "outputs")
        self.cores = cores or assigned_cpus() or os.cpu_count() or 1
        self.runner = BatchRunner(model, batch_size=batch_size, workers=workers,
                                  threads_per_worker=threads_per_worker, cores=self.cores, dims=dims,
                                  input_shapes=input_shapes, batch_dimension=batch_dimension)
        model_inputs, model_outputs = self.runner.input_descriptors, self.runner.output_descriptors
        unknown = sorted(set(inputs.values()) - set(model_inputs))
        if unknown:
            raise TypeError(f"WebnnPredictor: inputs= names {unknown}, not inputs of the model: "
                            f"its inputs are {sorted(model_inputs)}")
        unknown = sorted(set(outputs) - set(model_outputs))
        if unknown:
            raise TypeError(f"WebnnPredictor: outputs= names {unknown}, not outputs of the model: "
                            f"its outputs are {sorted(model_outputs)}")
        mapped = {v: k for k, v in inputs.items()}
        if len(mapped) != len(inputs):
            raise TypeError(f"WebnnPredictor: inputs= feeds a model input from two columns: {inputs}")
        #: {model input: column}, {model output: column}
        self.input_columns = {name: mapped.get(name, name) for name in model_inputs}
        self.output_columns = {name: outputs.get(name, name) for name in model_outputs}
        if len(set(self.output_columns.values())) != len(self.output_columns):
            raise TypeError(f"WebnnPredictor: two model outputs go to one column: {self.output_columns}")
        self.keep_inputs, self.check_finite = bool(keep_inputs), bool(check_finite)

    def __repr__(self):
        return f"<webnn.ray.WebnnPredictor {self.runner!r}, {self.cores} CPU(s)>"

    def _column(self, batch, name, column):
        if column not in batch:
            hint = f"; to feed it another column, pass inputs={{column: '{name}'}}" if column == name else ""
            raise TypeError(f"WebnnPredictor: the batch has no column '{column}' (model input '{name}'); its "
                            f"columns are {sorted(batch)}{hint}")
        array = np.asarray(batch[column])
        if array.dtype == object:  # Ray's column of separately shaped arrays
            try:
                array = np.stack([np.asarray(item) for item in array]) if len(array) else array
            except ValueError:
                raise TypeError(f"WebnnPredictor: column '{column}' holds items of different shapes") from None
        expected = tuple(self.runner.input_descriptors[name]["shape"])
        if array.ndim == 0 or array.shape[1:] != expected:
            raise TypeError(f"WebnnPredictor: column '{column}' (model input '{name}') has items of shape "
                            f"{list(array.shape[1:])}, the model takes {list(expected)}")
        return array

    def __call__(self, batch):
        """``{column: array}`` in (``batch_format="numpy"``); the model's outputs as columns, and the
        batch's other columns unchanged, out."""
        if not isinstance(batch, Mapping):
            raise TypeError(f"WebnnPredictor: expected a dict of NumPy arrays, got {type(batch).__name__}; "
                            "pass batch_format=\"numpy\" to map_batches")
        feeds = {name: self._column(batch, name, column) for name, column in self.input_columns.items()}
        consumed = set() if self.keep_inputs else set(self.input_columns.values())
        result = {column: value for column, value in batch.items() if column not in consumed}
        clash = sorted(set(result) & set(self.output_columns.values()))
        if clash:
            raise ValueError(f"WebnnPredictor: the batch already has column(s) {clash}; name the model's outputs "
                             "with outputs={output: column}")
        count = len(next(iter(feeds.values()))) if feeds else 0
        if count:
            produced = self.runner.run(feeds, check_finite=self.check_finite)
        else:
            produced = {name: np.empty([0] + d["shape"], d["dataType"])
                        for name, d in self.runner.output_descriptors.items()}
        for name, column in self.output_columns.items():
            result[column] = produced[name]
        return result
