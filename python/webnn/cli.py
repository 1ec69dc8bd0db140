"""The ``webnn`` command line tool.

    webnn demo                      classify the bundled digit samples with the bundled model
    webnn info                      version, CPU ISA level, threads, operation count
    webnn run [MODEL] [--input name=file.npy ...] [--output-dir D] [--dim name=N ...]
    webnn bench MODEL [--batch N] [--threads T] [--iterations K] [--warmup W] [--profile]
    webnn plan MODEL [--batch N]     the compiled plan: steps, fused ops, passes, arena
    webnn selftest                  conv2d -> relu -> add against NumPy
"""
import argparse
import importlib
import os
import sys
import tempfile
import time

import numpy as np

import webnn
from webnn import _core, models, profiling


class UsageError(Exception):
    """A mistake in the command line or its files, reported as one line."""


# ---------------------------------------------------------------- helpers
def cpu_isa_levels():
    """``(active, detected)`` CPU ISA levels of the native kernels ('ref', 'avx2', 'avx512'), or
    ``(None, None)`` when the native core does not report them."""
    active = getattr(_core, "active_isa", None)
    detected = getattr(_core, "detected_isa", None)
    return (active() if active else None, detected() if detected else None)


def _operation_count():
    return len(_core.op_infos())


def _parse_pairs(items, what):
    """``["a=1", "b=x.npy"]`` -> ``{"a": "1", "b": "x.npy"}``."""
    pairs = {}
    for item in items or []:
        name, sep, value = item.partition("=")
        if not sep or not name or not value:
            raise UsageError(f"{what} must look like NAME=VALUE, got '{item}'")
        if name in pairs:
            raise UsageError(f"{what} '{name}' is given twice")
        pairs[name] = value
    return pairs


def _file_sizes(dynamic_axes, input_args):
    """{dimension name: size} from the shapes of the --input NAME=FILE.npy arrays (their headers
    only): the sizes of the dynamic dimensions those inputs have (``dynamic_axes``: {input: (rank,
    [(axis, dimension name)])}). Files of another rank give none (_read_inputs reports them)."""
    sizes = {}
    for input_name, path in _parse_pairs(input_args, "--input").items():
        rank, axes = dynamic_axes.get(input_name, (0, []))
        try:
            shape = np.load(path, mmap_mode="r", allow_pickle=False).shape
        except (OSError, ValueError):
            continue  # _read_inputs reports it
        if len(shape) == rank:
            for axis, name in axes:
                sizes.setdefault(name, int(shape[axis]))
    return sizes


def _model_dims(summary, batch, dim_args, input_args=None):
    """Sizes for the model's dynamic dimensions: --dim values, --batch for a dynamic first
    dimension, the shapes of --input files, 1 for the rest (with a note)."""
    dims = {}
    for name, value in _parse_pairs(dim_args, "--dim").items():
        try:
            dims[name] = int(value)
        except ValueError:
            raise UsageError(f"--dim {name}: '{value}' is not an integer") from None
        if dims[name] < 1:
            raise UsageError(f"--dim {name}: the size must be at least 1")
    dynamic = {}
    for entry in summary["inputs"]:
        for index, d in enumerate(entry["shape"]):
            if isinstance(d, dict):
                dynamic.setdefault(d["name"], (entry["name"], index, d["max"]))
    unknown = sorted(set(dims) - set(dynamic))
    if unknown:
        names = ", ".join(sorted(dynamic)) or "none"
        raise UsageError(f"the model has no dynamic dimension '{unknown[0]}' (it has: {names})")
    if batch is not None:
        if batch < 1:
            raise UsageError("--batch must be at least 1")
        first = [(e["name"], e["shape"][0]) for e in summary["inputs"] if e["shape"]]
        for input_name, d in first:
            if isinstance(d, dict):
                dims.setdefault(d["name"], batch)
            elif d != batch:
                raise UsageError(f"input '{input_name}' has a fixed batch size of {d}; "
                                 f"--batch needs a dynamic first dimension")
    ranks = {entry["name"]: len(entry["shape"]) for entry in summary["inputs"]}
    axes = {}
    for name, (input_name, index, _) in dynamic.items():
        axes.setdefault(input_name, (ranks[input_name], []))[1].append((index, name))
    for name, size in _file_sizes(axes, input_args).items():
        dims.setdefault(name, size)
    for name, (input_name, index, maximum) in dynamic.items():
        if name not in dims:
            dims[name] = 1
            print(f"note: dynamic dimension '{name}' of input '{input_name}' set to 1 (use --dim {name}=N)",
                  file=sys.stderr)
        if maximum and dims[name] > maximum:
            raise UsageError(f"dimension '{name}' is at most {maximum}, got {dims[name]}")
    return dims


def _onnx_module():
    try:
        import webnn.onnx as onnx_import
        importlib.import_module("onnx")  # only to report a missing optional dependency clearly
    except ImportError:
        raise UsageError("ONNX models need the onnx package: pip install 'webnn[onnx]'") from None
    return onnx_import


def _parse_shapes(items):
    shapes = {}
    for name, value in _parse_pairs(items, "--input-shape").items():
        try:
            shapes[name] = [int(d) for d in value.lower().split("x")]
        except ValueError:
            raise UsageError(f"--input-shape {name}: '{value}' is not like 1x3x224x224") from None
    return shapes


def _onnx_pins(path, batch, dim_args, shape_args):
    """override_dims and input_shapes for an ONNX model from --dim, --batch and --input-shape."""
    dims = {}
    for name, value in _parse_pairs(dim_args, "--dim").items():
        try:
            dims[name] = int(value)
        except ValueError:
            raise UsageError(f"--dim {name}: '{value}' is not an integer") from None
    if batch is not None:
        import onnx
        model = onnx.load(path, load_external_data=False)
        initializers = {t.name for t in model.graph.initializer}
        for value in model.graph.input:
            shape = value.type.tensor_type.shape.dim
            if value.name not in initializers and shape and shape[0].dim_param:
                dims.setdefault(shape[0].dim_param, batch)
    return dims, _parse_shapes(shape_args)


def _in_flags(error, dim_flag="--dim"):
    """An importer error in the CLI's words: its flags instead of the Python keywords."""
    text = str(error).replace("override_dims={name: size}", f"{dim_flag} NAME=N").replace("override_dims", dim_flag)
    text = text.replace(" (webnn.onnx.load keeps them dynamic)", "")
    return text.replace("input_shapes={input: shape}", "--input-shape NAME=AxBxC").replace("input_shapes", "--input-shape")


def _pin_onnx_dims(onnx_import, path, dims, shapes, input_args):
    """--dim sizes plus, for every input dimension still free, the size an --input file gives or 1
    (with a note): the CLI runs one shape."""
    free = {}
    for input_name, descriptor in onnx_import.input_descriptors(path, override_dims=dims,
                                                                 input_shapes=shapes).items():
        for axis, d in enumerate(descriptor["shape"]):
            if isinstance(d, webnn.DynamicDimension):
                free.setdefault(input_name, (len(descriptor["shape"]), []))[1].append((axis, d.name))
    sizes = _file_sizes(free, input_args)
    for input_name, (_, axes) in free.items():
        for _, name in axes:
            if name not in dims and name not in sizes:
                sizes[name] = 1
                print(f"note: dynamic dimension '{name}' of input '{input_name}' set to 1 (use --dim {name}=N)",
                      file=sys.stderr)
    return {**dims, **sizes}


def _load(path, context, batch=None, dim_args=None, shape_args=None, input_args=None):
    if not os.path.isfile(path):
        raise UsageError(f"no such model file: {path}")
    if path.lower().endswith(".onnx"):
        onnx_import = _onnx_module()
        dims, shapes = _onnx_pins(path, batch, dim_args, shape_args)
        try:
            dims = _pin_onnx_dims(onnx_import, path, dims, shapes, input_args)
            graph = onnx_import.load(path, context, override_dims=dims, input_shapes=shapes)
        except TypeError as error:
            raise UsageError(_in_flags(error)) from None
        return graph, {"name": os.path.basename(path)}
    if shape_args:
        raise UsageError("--input-shape applies to ONNX models only")
    summary = webnn.formats.summary(path)
    dims = _model_dims(summary, batch, dim_args, input_args)
    return webnn.load(path, context, dims=dims), summary


def _random_input(rng, descriptor):
    dtype = np.dtype(descriptor["dataType"])
    shape = descriptor["shape"]
    if dtype.kind == "f":
        return rng.standard_normal(shape).astype(dtype)
    return rng.integers(0, 4, size=shape).astype(dtype)  # small values stay valid as indices


def _read_inputs(graph, input_args, rng):
    files = _parse_pairs(input_args, "--input")
    unknown = sorted(set(files) - set(graph.input_descriptors))
    if unknown:
        raise UsageError(f"the model has no input '{unknown[0]}' (inputs: {', '.join(sorted(graph.input_descriptors))})")
    inputs = {}
    for name, descriptor in graph.input_descriptors.items():
        if name not in files:
            inputs[name] = _random_input(rng, descriptor)
            continue
        try:
            array = np.load(files[name], allow_pickle=False)
        except (OSError, ValueError) as error:
            raise UsageError(f"--input {name}: cannot read '{files[name]}' as a .npy array ({error})") from None
        dtype = np.dtype(descriptor["dataType"])
        if list(array.shape) != list(descriptor["shape"]):
            raise UsageError(f"--input {name}: the array has shape {list(array.shape)}, the model expects "
                             f"{descriptor['shape']}")
        if array.dtype != dtype:
            if not np.can_cast(array.dtype, dtype, "same_kind"):
                raise UsageError(f"--input {name}: the array is {array.dtype}, the model expects {dtype}")
            array = array.astype(dtype)
        inputs[name] = np.ascontiguousarray(array)
    return inputs


def _describe(array):
    text = f"{array.dtype} {list(array.shape)}"
    if array.size and array.dtype.kind in "fiu":
        values = array.astype(np.float64)
        finite = values[np.isfinite(values)]
        if finite.size:
            text += f"  min {finite.min():.4g}  max {finite.max():.4g}  mean {finite.mean():.4g}"
        if finite.size != values.size:
            text += f"  ({values.size - finite.size} non-finite)"
    return text


# ---------------------------------------------------------------- commands
def _demo(args):
    """Classifies the bundled handwritten digits with the bundled model."""
    images, labels = models.digits_samples()
    context = webnn.create_context()
    graph = webnn.load(models.DIGITS, context, dims={"batch": len(images)})
    start = time.perf_counter()
    probabilities = graph.compute({"x": images})["probs"]
    elapsed = time.perf_counter() - start
    predicted = probabilities.argmax(axis=1)
    accuracy = float(np.mean(predicted == labels))
    print(f"webnn {webnn.__version__}: the bundled digits model (64-32-10 MLP) on {len(images)} held-out 8x8 images")
    print(f"accuracy {accuracy:.1%} ({int(np.sum(predicted == labels))}/{len(images)}) in {elapsed * 1e3:.2f} ms")
    print("first ten: predicted " + " ".join(map(str, predicted[:10])) + " | true " + " ".join(map(str, labels[:10])))
    return 0 if accuracy >= 0.9 else 1


def _selftest(args):
    """Builds conv2d -> relu -> add, runs it on the context timeline and checks it against NumPy."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((1, 3, 8, 8)).astype(np.float32)
    w = rng.standard_normal((4, 3, 3, 3)).astype(np.float32)
    b = rng.standard_normal((4,)).astype(np.float32)
    z = rng.standard_normal((1, 4, 8, 8)).astype(np.float32)

    context = webnn.ml.create_context()
    builder = webnn.MLGraphBuilder(context)
    xi = builder.input("x", data_type="float32", shape=x.shape)
    conv = builder.conv2d(xi, builder.constant(w), padding=[1, 1, 1, 1], bias=builder.constant(b), label="conv")
    out = builder.add(builder.relu(conv), builder.constant(z))
    graph = builder.build({"y": out})

    x_tensor = context.create_tensor(data_type="float32", shape=x.shape, writable=True)
    y_tensor = context.create_tensor(data_type="float32", shape=out.shape, readable=True)
    context.write_tensor(x_tensor, x)
    context.dispatch(graph, {"x": x_tensor}, {"y": y_tensor})
    result = context.read_tensor(y_tensor)

    padded = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (1, 1), (1, 1)))
    windows = np.lib.stride_tricks.sliding_window_view(padded, (3, 3), axis=(2, 3))  # n c h w kh kw
    reference = np.einsum("nchwij,ocij->nohw", windows, w.astype(np.float64)) + b[None, :, None, None]
    reference = np.maximum(reference, 0) + z
    error = float(np.max(np.abs(result - reference)))
    print(f"webnn {webnn.__version__}: conv2d -> relu -> add on the context timeline")
    print(f"output shape {list(result.shape)}, max |webnn - numpy| = {error:.3g}")
    ok = error < 1e-4
    print("OK" if ok else "MISMATCH")
    return 0 if ok else 1


def _info(args):
    context = webnn.ml.create_context()
    active, detected = cpu_isa_levels()
    print(f"webnn {webnn.__version__}")
    if active is None:
        print("cpu isa: not reported by this build")
    else:
        print(f"cpu isa: {active}" + (f" (detected {detected})" if detected and detected != active else ""))
    features = getattr(_core, "cpu_features", None)
    if features:
        print(f"cpu features: {' '.join(features()) or 'none'}")
    gemm = getattr(_core, "gemm_kernel", None)
    if gemm:
        print(f"gemm kernel: {gemm()}")
    int8 = getattr(_core, "int8_kernel", None)
    if int8:
        print(f"int8 kernel: {int8()}")
    print(f"threads: {context.num_threads}")
    print(f"operations: {_operation_count()}")
    if getattr(args, "ops", False):
        for op, operands in sorted(context.op_support_limits().items()):
            if not isinstance(operands, dict):
                continue  # the context-wide entries (preferredInputLayout, maxTensorByteLength, ...)
            parts = []
            for name, limits in operands.items():
                if isinstance(limits, dict) and "dataTypes" in limits:
                    low, high = limits["rankRange"]["min"], limits["rankRange"]["max"]
                    ranks = f"{low}" if low == high else f"{low}-{high}"
                    parts.append(f"{name}: {'|'.join(limits['dataTypes'])} rank {ranks}")
            if parts:
                print(f"  {op}  " + "; ".join(parts))
    return 0


def _run(args):
    if args.model is None:
        return _demo(args)
    if args.batch_size is not None or args.output is not None:
        return _run_data_set(args)
    context = webnn.create_context()
    graph, summary = _load(args.model, context, dim_args=args.dim, shape_args=args.input_shape, input_args=args.input)
    inputs = _read_inputs(graph, args.input, np.random.default_rng(args.seed))
    start = time.perf_counter()
    outputs = graph.compute(inputs)
    elapsed = time.perf_counter() - start
    if "ops" in summary:
        print(f"model '{summary['name']}': {len(summary['inputs'])} input(s), {len(summary['consts'])} constant(s), "
              f"{len(summary['ops'])} operation(s), {len(outputs)} output(s)")
    else:
        print(f"model '{summary['name']}': {len(inputs)} input(s), {len(outputs)} output(s)")
    for name in sorted(inputs):
        source = "from file" if name in _parse_pairs(args.input, "--input") else "random"
        print(f"input  {name}: {_describe(inputs[name])}  ({source})")
    for name in sorted(outputs):
        print(f"output {name}: {_describe(outputs[name])}")
    print(f"ran in {elapsed * 1e3:.2f} ms")
    if args.output_dir:
        os.makedirs(args.output_dir, exist_ok=True)
        for name, array in outputs.items():
            safe = "".join(c if c.isalnum() or c in "._-" else "_" for c in name)
            np.save(os.path.join(args.output_dir, safe + ".npy"), array)
        print(f"saved {len(outputs)} output(s) to {args.output_dir}")
    return 0


def _data_set(graph_inputs, input_args):
    """{input name: array} from --input data.npy (one-input models), data.npz (arrays named like the
    inputs) or NAME=FILE.npy; .npy files are memory-mapped, not read whole."""
    if not input_args:
        raise UsageError("--input is required with --batch-size or --output: a .npy or .npz data set")

    def load(path, what):
        try:
            return np.load(path, mmap_mode="r", allow_pickle=False)
        except (OSError, ValueError) as error:
            raise UsageError(f"{what}: cannot read '{path}' ({error})") from None

    if len(input_args) == 1 and "=" not in input_args[0]:
        path = input_args[0]
        data = load(path, "--input")
        if isinstance(data, np.ndarray):
            if len(graph_inputs) != 1:
                raise UsageError(f"--input {path}: the model has inputs {sorted(graph_inputs)}; give a .npz with "
                                 "an array per input, or NAME=FILE.npy for each")
            return {graph_inputs[0]: data}
        with data:
            arrays = {name: data[name] for name in data.files}
        unknown = sorted(set(arrays) - set(graph_inputs))
        missing = sorted(set(graph_inputs) - set(arrays))
        if unknown or missing:
            raise UsageError(f"--input {path}: the model's inputs are {sorted(graph_inputs)}, the file has "
                             f"{sorted(arrays)}")
        return arrays
    files = _parse_pairs(input_args, "--input")
    if sorted(files) != sorted(graph_inputs):
        raise UsageError(f"--input: the model's inputs are {sorted(graph_inputs)}, given {sorted(files)}")
    return {name: load(path, f"--input {name}") for name, path in files.items()}


def _model_input_names(path):
    if path.lower().endswith(".onnx"):
        import onnx

        model = onnx.load(path, load_external_data=False)
        initializers = {t.name for t in model.graph.initializer}
        return [v.name for v in model.graph.input if v.name not in initializers], model
    return [i["name"] for i in webnn.formats.summary(path)["inputs"]], None


def _onnx_item_shapes(model, data):
    """ONNX inputs whose first dimension is not fixed take their item shapes from the data."""
    shapes = {}
    for value in model.graph.input:
        dims = value.type.tensor_type.shape.dim
        if value.name in data and dims and not dims[0].dim_value:
            shapes[value.name] = list(data[value.name].shape[1:])
    return shapes


def _run_data_set(args):
    """`webnn run MODEL --input data.npy --batch-size B --output out.npz`: every item, in order."""
    if not os.path.isfile(args.model):
        raise UsageError(f"no such model file: {args.model}")
    for option in ("batch_size", "workers", "threads"):
        value = getattr(args, option)
        if value is not None and value < 1:
            raise UsageError(f"--{option.replace('_', '-')} must be at least 1")
    if args.output_dir:
        raise UsageError("--output-dir is for a single run; a data set's outputs go to --output FILE.npz")
    if args.output is not None and not args.output.endswith(".npz"):
        raise UsageError(f"--output {args.output}: the outputs are written as one .npz file (name it *.npz)")
    names, onnx_model = _model_input_names(args.model)
    data = _data_set(names, args.input)
    counts = {len(a) if a.ndim else 0 for a in data.values()}
    if len(counts) != 1 or 0 in counts:
        raise UsageError("--input: every input array needs the same number of items along its first axis, got "
                         + ", ".join(f"{n} {list(a.shape)}" for n, a in data.items()))
    items = counts.pop()
    options = {"dims": {k: int(v) for k, v in _parse_pairs(args.dim, "--dim").items()}}
    if onnx_model is not None:
        _onnx_module()
        options["input_shapes"] = _onnx_item_shapes(onnx_model, data)
        del onnx_model
    elif args.input_shape:
        raise UsageError("--input-shape applies to ONNX models only")
    runner = webnn.BatchRunner(args.model, batch_size=args.batch_size, workers=args.workers,
                               threads_per_worker=args.threads, items=items, **options)
    print(f"model '{os.path.basename(args.model)}': {items} items, batch {runner.batch_size}, {runner.workers} "
          f"worker(s) x {runner.threads_per_worker} thread(s)", file=sys.stderr)
    progress = _Progress(items, unit="items")
    start = time.perf_counter()
    not_written = f"; nothing was written to {args.output}" if args.output else ""
    try:
        outputs = runner.run(data, progress=lambda done, total: progress.update(done),
                             check_finite=not args.allow_non_finite)
    except KeyboardInterrupt:
        progress.close()
        print(f"webnn run: interrupted after {progress.done} of {items} items{not_written}", file=sys.stderr)
        return 130
    except (webnn.MLError, TypeError, ValueError) as error:
        progress.close()
        message = str(error).replace("pass check_finite=False to run it", "--allow-non-finite runs it")
        print(f"webnn run: error: {message}{not_written}", file=sys.stderr)
        return 1
    progress.close()
    elapsed = time.perf_counter() - start
    latencies = runner.take_batch_latencies()
    runner.close()
    p50, p90, p99 = (np.percentile(latencies, q) * 1e3 for q in (50, 90, 99))
    print(f"{items} items in {elapsed:.2f} s: {items / elapsed:.1f} items/s")
    print(f"batch latency ms ({len(latencies)} batches of up to {runner.batch_size}): p50 {p50:.2f}  p90 {p90:.2f}  "
          f"p99 {p99:.2f}  max {latencies.max() * 1e3:.2f}")
    for name in sorted(outputs):
        print(f"output {name}: {_describe(outputs[name])}")
    if args.output is not None:
        _write_npz_atomically(args.output, outputs)
        print(f"wrote {len(outputs)} output(s) of {items} items to {args.output}")
    return 0


def _write_npz_atomically(path, arrays):
    """Writes beside the target and renames on success: a failed or interrupted write leaves no
    file that looks complete (and an older file at `path` untouched)."""
    directory = os.path.dirname(os.path.abspath(path))
    handle, partial = tempfile.mkstemp(prefix=os.path.basename(path) + ".", suffix=".partial", dir=directory)
    umask = os.umask(0)
    os.umask(umask)
    try:
        os.chmod(partial, 0o666 & ~umask)  # as open() would make it, not mkstemp's 0600
        with os.fdopen(handle, "wb") as stream:
            np.savez(stream, **arrays)
        os.replace(partial, path)
    except BaseException:
        os.unlink(partial)
        raise


class _Progress:
    """A progress bar on stderr for runs longer than ~2 s (WEBNN_PROGRESS_AFTER seconds): redrawn in
    place on a terminal, a line per 10% otherwise."""

    def __init__(self, total, stream=None, unit=None):
        self.total = total
        self.unit = unit  # shown with a rate: "items" -> "123.4 items/s"
        self.done = 0
        self.after = float(os.environ.get("WEBNN_PROGRESS_AFTER", "2"))  # seconds before the bar shows
        self.stream = stream or sys.stderr
        self.tty = hasattr(self.stream, "isatty") and self.stream.isatty()
        self.start = time.perf_counter()
        self.shown = False
        self.last_step = -1
        self.last_draw = 0.0

    def update(self, done):
        self.done = done
        now = time.perf_counter()
        if now - self.start < self.after:
            return
        fraction = done / self.total
        if self.tty:
            if now - self.last_draw < 0.1 and done < self.total:
                return
            width = 30
            filled = int(width * fraction)
            self.stream.write(f"\r[{'#' * filled}{'.' * (width - filled)}] {done}/{self.total}{self._rate(done, now)}")
            self.last_draw = now
        else:
            step = int(fraction * 10)
            if step == self.last_step:
                return
            self.last_step = step
            self.stream.write(f"progress: {done}/{self.total}{self._rate(done, now)}\n")
        self.shown = True
        self.stream.flush()

    def _rate(self, done, now):
        return f"  {done / (now - self.start):.1f} {self.unit}/s" if self.unit else ""

    def close(self):
        if self.shown and self.tty:
            self.stream.write("\n")
            self.stream.flush()


def _bench(args):
    if args.iterations < 1 or args.warmup < 0:
        raise UsageError("--iterations must be at least 1 and --warmup at least 0")
    if args.threads is not None and args.threads < 1:
        raise UsageError("--threads must be at least 1")
    context = webnn.create_context(num_threads=args.threads or 0)
    graph, summary = _load(args.model, context, batch=args.batch, dim_args=args.dim, shape_args=args.input_shape)
    inputs = _read_inputs(graph, None, np.random.default_rng(0))
    in_tensors = {}
    for name, d in graph.input_descriptors.items():
        in_tensors[name] = context.create_tensor(data_type=d["dataType"], shape=d["shape"], writable=True)
        context.write_tensor(in_tensors[name], inputs[name])
    out_tensors = {name: context.create_tensor(data_type=d["dataType"], shape=d["shape"], readable=True)
                   for name, d in graph.output_descriptors.items()}
    out_arrays = {name: np.empty(d["shape"], np.dtype(d["dataType"])) for name, d in graph.output_descriptors.items()}

    def once():
        context.dispatch(graph, in_tensors, out_tensors)
        for name, tensor in out_tensors.items():
            context.read_tensor(tensor, out_arrays[name])

    for _ in range(args.warmup):
        once()
    progress = _Progress(args.iterations)
    times = np.empty(args.iterations)
    for i in range(args.iterations):
        start = time.perf_counter()
        once()
        times[i] = time.perf_counter() - start
        progress.update(i + 1)
    progress.close()
    first = [d["shape"][0] for d in graph.input_descriptors.values() if d["shape"]]
    batch = args.batch or (first[0] if first else 1)
    p50, p90, p99 = (np.percentile(times, q) * 1e3 for q in (50, 90, 99))
    print(f"model '{summary['name']}': batch {batch}, {context.num_threads} thread(s), "
          f"{args.iterations} iterations after {args.warmup} warm-up")
    print(f"latency ms: p50 {p50:.3f}  p90 {p90:.3f}  p99 {p99:.3f}  mean {times.mean() * 1e3:.3f}")
    print(f"throughput: {batch * args.iterations / times.sum():.1f} samples/s ({args.iterations / times.sum():.1f} runs/s)")
    if args.profile:
        graph.set_profiling(True)
        for _ in range(args.iterations):
            once()
        graph.set_profiling(False)
        print(profiling.format_profile(graph))
    return 0


def _plan(args):
    context = webnn.create_context()
    graph, _ = _load(args.model, context, batch=args.batch, dim_args=args.dim, shape_args=args.input_shape)
    print(profiling.format_plan(graph))
    return 0


# ---------------------------------------------------------------- entry point
def _parser():
    parser = argparse.ArgumentParser(prog="webnn", description="WebNN on the CPU")
    parser.add_argument("--version", action="version", version=f"webnn {webnn.__version__}")
    commands = parser.add_subparsers(dest="command")
    commands.add_parser("demo", help="classify the bundled digit samples with the bundled model")
    info = commands.add_parser("info", help="print the version, CPU ISA level, threads and operation count")
    info.add_argument("--ops", action="store_true",
                      help="also list every operation with the data types and ranks of its operands")
    commands.add_parser("selftest", help="run a small conv2d graph and check it against NumPy")

    run = commands.add_parser("run", help="run a .webnn model once (the bundled demo without MODEL)")
    run.add_argument("model", nargs="?", help="a .webnn or .json graph (weights beside it), or an .onnx model")
    run.add_argument("--input", action="append", metavar="NAME=FILE.npy",
                     help="an input's data (default: random); with --batch-size/--output: DATA.npy, DATA.npz or "
                          "NAME=FILE.npy holding many items")
    run.add_argument("--output-dir", metavar="DIR", help="save every output as DIR/<name>.npy")
    run.add_argument("--dim", action="append", metavar="NAME=N", help="the size of a dynamic dimension")
    run.add_argument("--seed", type=int, default=0, help="seed of the random inputs (default 0)")
    run.add_argument("--batch-size", type=int, metavar="B",
                     help="run a data set: --input holds many items along its first axis, run B at a time")
    run.add_argument("--output", metavar="OUT.npz", help="run a data set and write every output to OUT.npz")
    run.add_argument("--workers", type=int, help="data set: contexts run concurrently (default: chosen)")
    run.add_argument("--threads", type=int, help="data set: threads per worker (default: chosen)")
    run.add_argument("--allow-non-finite", action="store_true",
                     help="data set: run float items holding NaN or inf instead of stopping at the first")

    bench = commands.add_parser("bench", help="measure a model's latency and throughput")
    bench.add_argument("model", help="a .webnn or .json graph (weights beside it), or an .onnx model")
    bench.add_argument("--batch", type=int, help="the size of a dynamic first (batch) dimension")
    bench.add_argument("--threads", type=int, help="intra-op threads (default: all cores)")
    bench.add_argument("--iterations", type=int, default=50, help="timed runs (default 50)")
    bench.add_argument("--warmup", type=int, default=5, help="untimed runs first (default 5)")
    bench.add_argument("--dim", action="append", metavar="NAME=N", help="the size of a dynamic dimension")
    bench.add_argument("--profile", action="store_true",
                       help="then time every plan step over as many runs and print the slowest op kinds and steps")

    plan = commands.add_parser("plan", help="print the compiled plan of a model: steps, fused ops, passes, arena")
    plan.add_argument("model", help="a .webnn or .json graph (weights beside it), or an .onnx model")
    plan.add_argument("--batch", type=int, help="the size of a dynamic first (batch) dimension")
    plan.add_argument("--dim", action="append", metavar="NAME=N", help="the size of a dynamic dimension")
    for command in (run, bench, plan):
        command.add_argument("--input-shape", action="append", metavar="NAME=AxBxC",
                             help="ONNX only: the full shape of an input with unnamed dynamic dims")

    convert = commands.add_parser("convert", help="convert an ONNX model to a .webnn model")
    convert.add_argument("model", help="an .onnx model")
    convert.add_argument("-o", "--output", required=True, help="the .webnn file to write (weights beside it)")
    convert.add_argument("--override-dim", action="append", metavar="NAME=N", help="pin a named symbolic dimension")
    convert.add_argument("--input-shape", action="append", metavar="NAME=AxBxC",
                         help="the full shape of an input with unnamed dynamic dims")
    return parser


def _convert(args):
    if not os.path.isfile(args.model):
        raise UsageError(f"no such model file: {args.model}")
    onnx_import = _onnx_module()
    dims, shapes = _onnx_pins(args.model, None, args.override_dim, args.input_shape)
    try:
        onnx_import.convert_to_webnn(args.model, args.output, override_dims=dims, input_shapes=shapes)
    except TypeError as error:
        raise UsageError(_in_flags(error, "--override-dim")) from None
    print(f"wrote {args.output}")
    return 0


def main(argv=None):
    parser = _parser()
    args = parser.parse_args(argv)
    handlers = {"demo": _demo, "info": _info, "selftest": _selftest, "run": _run, "bench": _bench,
                "plan": _plan, "convert": _convert}
    if args.command is None:
        parser.print_help()
        return 2
    try:
        return handlers[args.command](args)
    except KeyboardInterrupt:
        print(f"webnn {args.command}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # `webnn info --ops | head`: the reader has gone
        sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - nothing more is written, and exit flushes it
        return 0
    except (UsageError, webnn.MLError, TypeError, ValueError, OSError) as error:
        print(f"webnn {args.command}: error: {error}", file=sys.stderr)
        return 1
    except Exception as error:  # noqa: BLE001 - the tool reports, it does not dump a traceback
        if os.environ.get("WEBNN_DEBUG"):
            raise
        print(f"webnn {args.command}: internal error: {type(error).__name__}: {error} "
              f"(set WEBNN_DEBUG=1 for a traceback)", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
