"""bench/kernels.py without timing: the FMA-peak diagnostic answers, the conv layer tables are valid, and
the GEMM part without threadpoolctl says what to install."""
import importlib.util
import math
import sys
from pathlib import Path

import pytest

import webnn
from webnn import _core

_BENCH = Path(__file__).resolve().parent.parent / "bench" / "kernels.py"


@pytest.fixture(scope="module")
def bench():
    spec = importlib.util.spec_from_file_location("bench_kernels", _BENCH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_fma_peak_diagnostic():
    gflops = _core.measure_fma_peak(1000)
    assert math.isfinite(gflops) and gflops > 0
    assert _core.fma_peak_isa() == _core.detected_isa()
    with pytest.raises(ValueError):
        _core.measure_fma_peak(0)


# Multiply-adds of all conv layers: torchvision's ResNet-50 (4.09 GMACs with the classifier's 2.05 M)
# and MobileNetV2 (300.8 M with the classifier's 1.28 M).
@pytest.mark.parametrize("net,instances,macs", [("ResNet-50", 53, 4.0871e9), ("MobileNetV2", 52, 299.49e6)])
def test_layer_tables(bench, net, instances, macs):
    layers = bench.NETWORKS[net]
    assert len(set(layers)) == len(layers), "a layer is listed twice"
    assert len({layer[:-1] for layer in layers}) == len(layers), "a shape is listed twice with different counts"
    for layer in layers:
        assert all(isinstance(v, int) and v >= 0 for v in layer), layer
        assert min(layer.c, layer.h, layer.w, layer.out, layer.k, layer.stride, layer.groups, layer.count) >= 1, layer
        assert layer.c % layer.groups == 0 and layer.out % layer.groups == 0, layer
        assert layer.pad < layer.k and layer.k <= layer.h + 2 * layer.pad, layer
        assert min(bench.conv_output_hw(layer)) >= 1, layer
    assert sum(layer.count for layer in layers) == instances
    total = sum(layer.count * bench.conv_flops(layer) for layer in layers) / 2
    assert total == pytest.approx(macs, rel=1e-3)


@pytest.mark.parametrize("net", ["ResNet-50", "MobileNetV2"])
def test_layer_tables_build_in_webnn(bench, context, net):
    # The output shapes the benchmark assumes are the ones webnn infers (filter as an input: no data).
    for layer in bench.NETWORKS[net]:
        builder = webnn.MLGraphBuilder(context)
        x = builder.input("x", {"dataType": "float32", "shape": [1, layer.c, layer.h, layer.w]})
        w = builder.input("w", {"dataType": "float32", "shape": [layer.out, layer.c // layer.groups, layer.k, layer.k]})
        y = builder.conv2d(x, w, padding=[layer.pad] * 4, strides=[layer.stride] * 2, groups=layer.groups)
        assert y.shape == [1, layer.out, *bench.conv_output_hw(layer)]


def test_parse_args(bench):
    args = bench.parse_args(["--quick", "--threads", "2,1", "--only", "conv"])
    assert args.quick and args.threads == [2, 1] and args.only == "conv"
    with pytest.raises(SystemExit):
        bench.parse_args(["--threads", "0"])


@pytest.mark.parametrize("only", [None, "gemm"])
def test_gemm_without_threadpoolctl_says_what_to_install(bench, monkeypatch, only):
    monkeypatch.setitem(sys.modules, "threadpoolctl", None)  # import threadpoolctl raises ImportError
    monkeypatch.delenv("OPENBLAS_CORETYPE", raising=False)
    monkeypatch.delenv("OPENBLAS_L2_SIZE", raising=False)
    with pytest.raises(SystemExit) as exit_info:
        bench.main(["--quick"] + (["--only", only] if only else []))
    assert "threadpoolctl" in str(exit_info.value.code) and ".[bench]" in str(exit_info.value.code)
