"""Depthwise conv2d per layer: webnn vs ONNX Runtime on MobileNetV2's depthwise layers.

Batch 1, 3x3, pad 1, constant filter and bias. webnn runs the NCHW graph (the layout ORT gets) and,
separately, the NHWC one; NCHW webnn and ORT are timed interleaved (bench/kernels.py's
interleaved_times). Prints per-layer ms (median), webnn/ORT time ratios of the medians and of the
best rounds, and the sum over every depthwise instance of the network.

    python bench/depthwise.py [--quick] [--threads 1,2] [--rounds N]
"""
import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kernels  # noqa: E402  (bench/kernels.py: layers, timing, ORT session)

import webnn  # noqa: E402
from webnn import _core  # noqa: E402

LAYERS = tuple(layer for layer in kernels.MOBILENET_V2 if layer.groups == layer.c == layer.out and layer.groups > 1)


def _webnn_nhwc_conv(context, layer, x, w, bias):
    x_nhwc = np.ascontiguousarray(x.transpose(0, 2, 3, 1))
    return kernels._webnn_step(context, x_nhwc, lambda builder, xi: builder.conv2d(
        xi, builder.constant(w), bias=builder.constant(bias), padding=[layer.pad] * 4,
        strides=[layer.stride] * 2, groups=layer.groups, input_layout="nhwc"))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--quick", action="store_true", help="few short rounds")
    parser.add_argument("--threads", default="1,2", help="comma-separated thread counts (default 1,2)")
    parser.add_argument("--rounds", type=int, help="timed rounds per layer (default 15, 3 with --quick)")
    args = parser.parse_args(argv)
    threads = [int(t) for t in args.threads.split(",")]
    rounds = args.rounds or (3 if args.quick else 15)
    batch_seconds = 0.005 if args.quick else 0.03
    import onnxruntime as ort

    print(f"webnn isa={_core.active_isa()}, ORT {ort.__version__}; ms per call (median), ratio = webnn/ORT time")
    rng = np.random.default_rng(0)
    data = [kernels._layer_data(layer, rng) for layer in LAYERS]
    for t in threads:
        context = webnn.ml.create_context(num_threads=t)
        print(f"\n{t} thread(s)")
        print(f"{'layer':<30} {'n':>2} | {'webnn':>7} {'ORT':>7} | {'median':>6} {'best':>6} | {'NHWC':>7}")
        sums = np.zeros(5)
        for layer, (x, w, bias) in zip(LAYERS, data):
            webnn_step, webnn_out = kernels._webnn_conv(context, layer, x, w, bias)
            nhwc_step, nhwc_out = _webnn_nhwc_conv(context, layer, x, w, bias)
            ort_step, ort_out = kernels._ort_conv(layer, x, w, bias, t)
            webnn_step()
            nhwc_step()
            ort_step()
            label = kernels.conv_label(layer)
            kernels._check_close(label, webnn_out, ort_out.astype(np.float64))
            kernels._check_close(label + " nhwc", nhwc_out.transpose(0, 3, 1, 2), ort_out.astype(np.float64))
            times = kernels.interleaved_times({"webnn": webnn_step, "ort": ort_step, "nhwc": nhwc_step},
                                              rounds, batch_seconds)
            (tw, tw_min), (to, to_min), (tn, _) = times["webnn"], times["ort"], times["nhwc"]
            sums += layer.count * np.array([tw, to, tw_min, to_min, tn])
            print(f"{label:<30} {layer.count:>2} | {tw * 1e3:>7.3f} {to * 1e3:>7.3f} | {tw / to:>6.2f}"
                  f" {tw_min / to_min:>6.2f} | {tn * 1e3:>7.3f}")
        tw, to, tw_min, to_min, tn = sums
        print(f"{'sum over all instances':<30} {'':>2} | {tw * 1e3:>7.3f} {to * 1e3:>7.3f} | {tw / to:>6.2f}"
              f" {tw_min / to_min:>6.2f} | {tn * 1e3:>7.3f}")


if __name__ == "__main__":
    main()
