"""Quantized convolutions run on integers (compiler pass quantized_ops).

dequantizeLinear(xq) -> conv2d(filter = dequantizeLinear(int8/uint8 constant), bias = float32 constant or
dequantizeLinear(int32 constant)) [-> relu | clamp] -> quantizeLinear becomes one conv2d step on integers:
acc = sum (xq - zx)(wq - zw) exactly in int32, v = acc * (sx * sw[o]) + bias[o] in float32, clamped, then
q = saturate(roundHalfEven(v / sy) + zy).

Every case is checked against a float64 NumPy form of the spec's float path (dequantize, conv2d, bias,
clamp, quantize with round half to even and saturation): every element within one quantization step,
almost all equal. "Exact" cases use power-of-two scales and sums below 2^24 units, so that the float32
path, the integer path and the float64 reference compute the same values: there every element must be
equal, and equal across kernel variants.

The integer kernels are chosen by ISA level (WEBNN_CPU_ISA=ref|avx2|avx512) and CPU features
(WEBNN_CPU_DISABLE=amx,avx512vnni,avxvnni forces AMX and VNNI off); both are read once per process, so the kernel
variants run a subset of the cases in subprocesses (this file run as a script). The uint8 x int8
dot-product (VNNI) kernels take filters whose w - zw all fit int8; other filters run on the level's
16-bit (s16) kernel, depthwise convolutions (channel multiplier 1, either layout) on the int8
depthwise loops.

Graphs that must stay in float (the conv's float output read elsewhere, a per-channel input scale,
float16, quantizeLinear to int32, a filter that is not a constant, K above the int32-safe 33025) are still
correct, and the pass counts them as left in float.
"""
import argparse
import functools
import json
import os
import re
import subprocess
import sys
import tempfile
import zlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

import webnn

PASS = "quantized_ops"
K_LIMIT = 33025  # 33025 * 255 * 255 <= 2^31 - 1
FILTER_FROM_OIHW = {"oihw": (0, 1, 2, 3), "hwio": (2, 3, 1, 0), "ohwi": (0, 2, 3, 1), "ihwo": (1, 2, 3, 0)}
OUTPUT_CHANNEL_AXIS = {"oihw": 0, "hwio": 3, "ohwi": 0, "ihwo": 3}


def value_range(data_type):
    info = np.iinfo(data_type)
    return int(info.min), int(info.max)


# ---------------------------------------------------------------- cases
@dataclass(frozen=True)
class Spec:
    x: str = "uint8"  # activations
    w: str = "int8"  # weights
    n: int = 1
    c: int = 8
    size: tuple = (7, 5)  # input height, width
    o: int = 17
    kernel: tuple = (3, 3)
    strides: tuple = (1, 1)
    dilations: tuple = (1, 1)
    padding: tuple = (1, 1, 1, 1)  # top, bottom, left, right
    groups: int = 1
    layout: str = "nchw"
    filter_layout: str = "oihw"
    per_channel: bool = True  # weight scale and zero point per output channel, else single values
    x_zero: str = "random"  # random | low | high (the type's ends)
    w_zero: str = "random"  # random | zero | middle (128 for uint8) | low | high | ends (low, high, ... per channel)
    values: str = "random"  # random | extremes (only the type's ends) | small (zero point +-3) | max_sum
    bias: str = "float"  # none | float | int32 (dequantizeLinear of int32) | int32_zero_point
    act: str = "none"  # none | relu | relu6 | clamp (bounds inside the value range)
    exact: bool = False  # power-of-two scales: float32, integer and float64 paths compute the same values
    out: str = ""  # the quantized output type; "" = the input's
    # graphs that must stay in float
    dtype: str = "float32"
    x_per_channel: bool = False  # input scale and zero point per channel
    filter_input: bool = False  # the filter's quantized values are a graph input
    also: str = ""  # conv_output | conv_reader | act_output: the float value is read elsewhere

    @property
    def out_type(self):
        return self.out or self.x

    @property
    def k(self):
        return self.kernel[0] * self.kernel[1] * (self.c // self.groups)

    @property
    def integer(self):
        """Whether the pass should run this graph on integers."""
        return (self.dtype == "float32" and self.out_type in ("uint8", "int8") and not self.x_per_channel
                and not self.filter_input and not self.also and self.k <= K_LIMIT)


CASES = {}


def case(name, **fields):
    assert name not in CASES, name
    CASES[name] = Spec(**fields)


# activation and weight types, per-tensor / per-channel, symmetric / asymmetric, zero points at the ends
case("u8_s8_per_tensor_symmetric", per_channel=False, w_zero="zero")
case("u8_s8_per_channel_symmetric", w_zero="zero", bias="int32")
case("u8_s8_per_channel_asymmetric")
case("u8_s8_weight_zero_low", per_channel=False, w_zero="low")
case("u8_s8_weight_zero_high", per_channel=False, w_zero="high")
case("u8_s8_weight_zeros_at_both_ends", w_zero="ends")
case("u8_u8_per_tensor", w="uint8", per_channel=False)
case("u8_u8_symmetric", w="uint8", w_zero="zero")
case("u8_u8_weight_zeros_at_both_ends", w="uint8", w_zero="ends")
case("u8_u8_weight_zero_high", w="uint8", per_channel=False, w_zero="high")
case("s8_s8_per_channel_symmetric", x="int8", w_zero="zero")
case("s8_s8_per_tensor_asymmetric", x="int8", per_channel=False)
case("s8_s8_weight_zeros_at_both_ends", x="int8", w_zero="ends")
case("s8_u8_per_channel", x="int8", w="uint8")
case("s8_u8_weight_zero_high", x="int8", w="uint8", per_channel=False, w_zero="high")
for _x in ("uint8", "int8"):
    for _end in ("low", "high"):
        case(f"{_x}_input_zero_{_end}", x=_x, x_zero=_end)
    for _w in ("uint8", "int8"):
        case(f"extremes_{_x}_{_w}", x=_x, w=_w, values="extremes", w_zero="ends")
case("extremes_u8_s8_zeros_high", values="extremes", x_zero="high", per_channel=False, w_zero="high")
case("extremes_s8_u8_zeros_low", x="int8", w="uint8", values="extremes", x_zero="low", per_channel=False,
     w_zero="low")
case("u8_in_s8_out", out="int8")
case("s8_in_u8_out", x="int8", out="uint8")

# shapes: output channels, odd pixel counts, large K, batch, groups, depthwise, strides, dilations,
# padding, layouts, 1x1 images
for _o in (1, 3, 17, 33, 64):
    case(f"out_channels_{_o}", o=_o, size=(5, 7))
case("odd_pixels_1x1", c=24, o=33, size=(3, 5), kernel=(1, 1), padding=(0, 0, 0, 0))
case("k_3x3x512", x="int8", w="uint8", c=512, size=(4, 3), o=17)
case("k_1x1x4096", c=4096, size=(3, 3), kernel=(1, 1), padding=(0, 0, 0, 0), o=33, values="extremes",
     w_zero="ends")
case("k_1x1x4096_symmetric", x="int8", c=4096, size=(3, 3), kernel=(1, 1), padding=(0, 0, 0, 0), o=17,
     values="extremes", w_zero="zero")
# K at the int32 limit: one pixel sums K products of 255 * 255, + on even channels, - on odd ones
case("k_limit_u8_u8", w="uint8", c=K_LIMIT, size=(2, 2), kernel=(1, 1), padding=(0, 0, 0, 0), o=4,
     values="max_sum", bias="none")
case("k_limit_s8_s8", x="int8", c=K_LIMIT, size=(2, 2), kernel=(1, 1), padding=(0, 0, 0, 0), o=3,
     values="max_sum", bias="int32")
case("batch_2", n=2)
case("groups_2", c=8, o=6, groups=2)
case("groups_4_nhwc", c=16, o=12, groups=4, layout="nhwc", filter_layout="ohwi")
case("depthwise_8", c=8, o=8, groups=8)
case("depthwise_13_nhwc", c=13, o=13, groups=13, layout="nhwc", filter_layout="ihwo")
case("depthwise_32_stride_2_relu6", c=32, o=32, groups=32, strides=(2, 2), size=(9, 8), layout="nhwc",
     filter_layout="ihwo", act="relu6")
case("depthwise_multiplier_2", c=8, o=16, groups=8, x="int8")
case("stride_2", strides=(2, 2), size=(9, 7))
case("dilation_2", dilations=(2, 2), padding=(2, 2, 2, 2))
case("stride_2_dilation_2_asymmetric_padding", strides=(2, 2), dilations=(2, 2), padding=(0, 2, 1, 0),
     size=(9, 8))
case("asymmetric_padding_3x2_kernel", kernel=(3, 2), padding=(0, 1, 2, 0))
case("kernel_1x5", kernel=(1, 5), padding=(0, 0, 2, 2), x="int8")
for _layout in ("nchw", "nhwc"):
    for _filter_layout in FILTER_FROM_OIHW:
        case(f"{_layout}_{_filter_layout}", c=6, layout=_layout, filter_layout=_filter_layout)
        case(f"{_layout}_{_filter_layout}_groups_2", c=8, o=6, groups=2, layout=_layout,
             filter_layout=_filter_layout, per_channel=False)
case("image_1x1_kernel_1x1_one_channel", c=1, o=1, size=(1, 1), kernel=(1, 1), padding=(0, 0, 0, 0))
case("image_1x1_kernel_3x3", c=16, o=3, size=(1, 1))
case("image_1x1_depthwise", c=8, o=8, groups=8, size=(1, 1), layout="nhwc", filter_layout="ihwo")

# epilogues
case("no_bias", bias="none")
case("float_bias", bias="float")
case("int32_bias", bias="int32")
case("int32_bias_per_tensor_weights", bias="int32", per_channel=False)
case("int32_bias_with_zero_point", bias="int32_zero_point")
case("relu_u8", act="relu")
case("relu_s8", x="int8", act="relu")
case("relu_no_bias", act="relu", bias="none")
case("relu6", act="relu6")
case("clamp_s8_nhwc", x="int8", act="clamp", layout="nhwc", filter_layout="hwio")

# exact: every path computes the same values, so all elements equal the reference
case("exact_u8_s8_relu", exact=True, c=16, o=33, bias="int32", act="relu", w_zero="zero")
case("exact_s8_s8_nhwc_clamp", exact=True, x="int8", c=16, layout="nhwc", filter_layout="ohwi", act="clamp",
     w_zero="zero")
case("exact_u8_s8_extremes_symmetric", exact=True, c=16, values="extremes", w_zero="zero", x_zero="high")
case("exact_u8_u8_weight_zero_128", exact=True, w="uint8", c=16, o=17, per_channel=False, w_zero="middle")
case("exact_u8_s8_random_zero_points", exact=True, c=16, o=33, act="relu")
case("exact_u8_u8_extremes", exact=True, w="uint8", c=16, values="extremes", w_zero="ends")
case("exact_s8_u8_extremes", exact=True, x="int8", w="uint8", c=16, values="extremes", w_zero="ends",
     x_zero="high")
case("exact_depthwise_13_nhwc_relu6", exact=True, c=13, o=13, groups=13, layout="nhwc", filter_layout="ihwo",
     act="relu6")
case("exact_groups_2_stride_2_dilation_2_batch_2", exact=True, n=2, c=8, o=6, groups=2, strides=(2, 2),
     dilations=(2, 2), padding=(2, 1, 0, 2), size=(9, 8))
case("exact_image_1x1", exact=True, c=16, o=3, size=(1, 1), x="int8", w="uint8")
case("exact_o64_per_tensor", exact=True, c=16, o=64, per_channel=False, w_zero="high", bias="none")
# pointwise NHWC uint8 (A's rows read in place, the last partial tile gathered) and depthwise channel
# counts that leave a partial vector at every level
case("exact_pointwise_nhwc_rows_in_place", exact=True, c=32, o=40, size=(7, 9), kernel=(1, 1),
     padding=(0, 0, 0, 0), layout="nhwc", filter_layout="hwio", w_zero="zero", act="relu")
case("exact_pointwise_nhwc_groups_2", exact=True, c=32, o=20, groups=2, size=(5, 5), kernel=(1, 1),
     padding=(0, 0, 0, 0), layout="nhwc", filter_layout="ohwi", w_zero="zero")
# rows read in place past their K bytes (AMX pads K to 64-byte rows: the extra bytes are the next
# pixel's or the next group's, against zero weights), and a full last tile whose padded rows would
# read past the input's end (gathered instead)
case("exact_pointwise_nhwc_groups_2_rows_past_k", exact=True, c=48, o=20, groups=2, size=(8, 9), kernel=(1, 1),
     padding=(0, 0, 0, 0), layout="nhwc", filter_layout="ohwi", w_zero="zero")
case("exact_pointwise_nhwc_24ch_64_pixels", exact=True, c=24, o=40, size=(8, 8), kernel=(1, 1),
     padding=(0, 0, 0, 0), layout="nhwc", filter_layout="hwio", w_zero="zero", act="relu")
case("exact_depthwise_40_nhwc", exact=True, c=40, o=40, groups=40, size=(6, 5), layout="nhwc",
     filter_layout="ihwo", x="int8")
# depthwise filters whose w - zw leave int8, and blocks of 32 channels whole, partial and past a first
# block, with int8 input
case("depthwise_70_weights_past_int8", c=70, o=70, groups=70, size=(5, 6), layout="nhwc", filter_layout="ihwo",
     w="uint8", w_zero="ends")
case("exact_depthwise_130_s8_3x3_stride_2_nhwc", exact=True, x="int8", c=130, o=130, groups=130, size=(7, 8),
     strides=(2, 2), layout="nhwc", filter_layout="ihwo", w_zero="zero", act="relu")
# NHWC uint8 stems (each kernel row's taps gathered as one run of bytes: runs of 9, 15, 24 and 84 bytes,
# at the image's edges and its last bytes) and depthwise shapes: a full and a half block of 32
# channels, fewer channels than a vector, odd and even tap counts, dilation, stride
case("exact_stem_3ch_stride_2_nhwc", exact=True, c=3, o=32, size=(11, 9), strides=(2, 2), layout="nhwc",
     filter_layout="hwio", w_zero="zero")
case("exact_stem_5x5_nhwc_relu", exact=True, c=3, o=24, size=(8, 8), kernel=(5, 5), padding=(2, 2, 2, 2),
     layout="nhwc", filter_layout="hwio", w_zero="zero", act="relu")
case("exact_3x3x8_nhwc", exact=True, c=8, o=24, size=(6, 7), layout="nhwc", filter_layout="ohwi", w_zero="zero")
case("exact_7x7x12_nhwc_stride_2", exact=True, c=12, o=20, size=(9, 10), kernel=(7, 7), strides=(2, 2),
     padding=(3, 3, 3, 3), layout="nhwc", filter_layout="hwio", w_zero="zero")
case("exact_depthwise_48_5x5_dilation_2_nhwc", exact=True, c=48, o=48, groups=48, kernel=(5, 5),
     dilations=(2, 2), padding=(4, 4, 4, 4), size=(9, 11), layout="nhwc", filter_layout="ihwo")
case("exact_depthwise_3_2x2_stride_2_nhwc", exact=True, c=3, o=3, groups=3, kernel=(2, 2), strides=(2, 2),
     padding=(0, 1, 0, 1), size=(7, 7), layout="nhwc", filter_layout="ihwo", w="uint8", w_zero="ends")
case("exact_depthwise_144_s8_nhwc", exact=True, x="int8", c=144, o=144, groups=144, size=(5, 6), layout="nhwc",
     filter_layout="ihwo", values="extremes", w_zero="ends")

INTEGER_CASES = [name for name, spec in CASES.items() if spec.integer]
assert INTEGER_CASES == list(CASES)

# graphs that must stay in float
case("conv_output_is_graph_output", also="conv_output")
case("conv_output_read_by_another_op", also="conv_reader")
case("conv_output_is_graph_output_before_relu", act="relu", also="conv_output")
case("relu_output_is_graph_output", act="relu", also="act_output")
case("per_channel_input_scale", x_per_channel=True)
case("per_channel_input_scale_nhwc", x_per_channel=True, layout="nhwc", filter_layout="ohwi")
case("float16", dtype="float16", values="small", exact=True, c=4, o=5)
case("quantize_to_int32", out="int32")
case("filter_not_constant", filter_input=True)
case("k_over_limit", w="uint8", c=K_LIMIT + 1, size=(2, 2), kernel=(1, 1), padding=(0, 0, 0, 0), o=2,
     values="max_sum", bias="none")
FLOAT_CASES = [name for name in CASES if not CASES[name].integer]

# the subset run under every kernel variant (in subprocesses)
VARIANT_CASES = ["exact_u8_s8_relu", "exact_s8_s8_nhwc_clamp", "exact_u8_s8_extremes_symmetric",
                 "exact_u8_u8_weight_zero_128", "exact_u8_s8_random_zero_points", "exact_u8_u8_extremes",
                 "exact_s8_u8_extremes", "exact_depthwise_13_nhwc_relu6", "exact_groups_2_stride_2_dilation_2_batch_2",
                 "exact_image_1x1", "exact_o64_per_tensor", "odd_pixels_1x1", "k_1x1x4096", "k_1x1x4096_symmetric",
                 "depthwise_8", "depthwise_32_stride_2_relu6", "exact_pointwise_nhwc_rows_in_place",
                 "exact_pointwise_nhwc_groups_2", "exact_pointwise_nhwc_groups_2_rows_past_k",
                 "exact_pointwise_nhwc_24ch_64_pixels", "exact_depthwise_40_nhwc", "depthwise_70_weights_past_int8",
                 "exact_depthwise_130_s8_3x3_stride_2_nhwc",
                 "exact_stem_3ch_stride_2_nhwc", "exact_depthwise_48_5x5_dilation_2_nhwc",
                 "exact_depthwise_3_2x2_stride_2_nhwc"]


# ---------------------------------------------------------------- float64 reference
def conv64(x, w, strides, dilations, padding, groups):
    """float64 conv2d: NCHW input, OIHW filter, padding [top, bottom, left, right]."""
    n, c, _, _ = x.shape
    o, cg, kh, kw = w.shape
    x = np.pad(x, ((0, 0), (0, 0), (padding[0], padding[1]), (padding[2], padding[3])))
    oh = (x.shape[2] - (kh - 1) * dilations[0] - 1) // strides[0] + 1
    ow = (x.shape[3] - (kw - 1) * dilations[1] - 1) // strides[1] + 1
    out = np.zeros((n, o, oh, ow))
    og = o // groups
    for g in range(groups):
        xs = x[:, g * cg:(g + 1) * cg]
        for i in range(kh):
            for j in range(kw):
                patch = xs[:, :, i * dilations[0]:i * dilations[0] + strides[0] * (oh - 1) + 1:strides[0],
                           j * dilations[1]:j * dilations[1] + strides[1] * (ow - 1) + 1:strides[1]]
                out[:, g * og:(g + 1) * og] += np.einsum("nchw,oc->nohw", patch, w[g * og:(g + 1) * og, :, i, j])
    return out


def per_channel(values, axis, rank=4):
    """values (size 1 or one per channel) shaped to broadcast along axis."""
    shape = [1] * rank
    shape[axis] = np.size(values)
    return np.asarray(values).reshape(shape)


def power_of_two(value):
    return float(2.0 ** np.round(np.log2(value)))


@dataclass
class Case:
    spec: Spec
    xq: np.ndarray  # NCHW
    zx: np.ndarray  # [1] or [C]
    sx: np.ndarray
    wq: np.ndarray  # OIHW
    zw: np.ndarray  # [1] or [O]
    sw: np.ndarray
    bias: dict  # {} or {"float": [O]} or {"q": int32 [O], "scale": [O], "zero": int32 [O]}
    clamp: tuple  # (low, high) or None
    sy: np.ndarray
    zy: np.ndarray
    conv: np.ndarray  # float64 reference of the conv2d output (with bias), NCHW
    activated: np.ndarray  # after relu / clamp
    expected: np.ndarray  # quantized, NCHW

    def to_layout(self, a):
        return a.transpose(0, 2, 3, 1) if self.spec.layout == "nhwc" else a

    @property
    def x_in(self):
        return np.ascontiguousarray(self.to_layout(self.xq))

    @property
    def w_in(self):
        return np.ascontiguousarray(self.wq.transpose(FILTER_FROM_OIHW[self.spec.filter_layout]))

    @property
    def feeds(self):
        feeds = {"x": self.x_in}
        if self.spec.filter_input:
            feeds["w"] = self.w_in
        return feeds


def seed(name):
    return zlib.crc32(name.encode())


def generate(spec, rng_seed):
    """Random quantized data for spec, its scales and the float64 reference."""
    rng = np.random.default_rng(rng_seed)
    xlo, xhi = value_range(spec.x)
    wlo, whi = value_range(spec.w)
    c, o, groups = spec.c, spec.o, spec.groups
    x_shape, w_shape = (spec.n, c, *spec.size), (o, c // groups, *spec.kernel)
    ftype = np.dtype(spec.dtype)

    x_count = c if spec.x_per_channel else 1
    zx = {"low": np.full(x_count, xlo), "high": np.full(x_count, xhi),
          "random": rng.integers(xlo, xhi, x_count, endpoint=True)}[spec.x_zero]
    w_count = o if spec.per_channel else 1
    zw = {"zero": np.zeros(w_count, np.int64), "middle": np.full(w_count, (wlo + whi + 1) // 2),
          "low": np.full(w_count, wlo), "high": np.full(w_count, whi),
          "ends": np.where(np.arange(w_count) % 2 == 0, wlo, whi),
          "random": rng.integers(wlo, whi, w_count, endpoint=True)}[spec.w_zero]
    zw_o = np.broadcast_to(zw, (o,))
    if spec.values == "random":
        xq = rng.integers(xlo, xhi, x_shape, endpoint=True)
        wq = rng.integers(wlo, whi, w_shape, endpoint=True)
    elif spec.values == "extremes":  # only the ends; one pixel at the top, weights of two channels at the ends
        xq = rng.choice([xlo, xhi], x_shape)
        xq[:, :, 0, 0] = xhi
        wq = rng.choice([wlo, whi], w_shape)
        wq[0] = whi
        if o > 1:
            wq[1] = wlo
    elif spec.values == "small":  # |q - zero point| <= 3
        zx = np.clip(zx, xlo + 3, xhi - 3)
        zw = np.clip(zw, wlo + 3, whi - 3)
        zw_o = np.broadcast_to(zw, (o,))
        xq = per_channel(zx, 1) + rng.integers(-3, 3, x_shape, endpoint=True)
        wq = zw_o.reshape(-1, 1, 1, 1) + rng.integers(-3, 3, w_shape, endpoint=True)
    elif spec.values == "max_sum":
        # zx at the low end, each channel's weights at the end opposite its zero point (low, high, low,
        # ...): pixel 0 (all at the high end) sums K * 255 * 255 on even channels, its negation on odd ones;
        # the other pixels sum 255 * 255 times their count of high values.
        assert spec.per_channel
        zx = np.full(x_count, xlo)
        zw = zw_o = np.where(np.arange(o) % 2 == 0, wlo, whi)
        xq = rng.choice([xlo, xhi], x_shape)
        xq[:, :, 0, 0] = xhi
        wq = np.broadcast_to(np.where(zw == wlo, whi, wlo).reshape(-1, 1, 1, 1), w_shape).copy()
    else:
        raise ValueError(spec.values)
    xq, wq = xq.astype(spec.x), wq.astype(spec.w)
    zx, zw = zx.astype(spec.x), zw.astype(spec.w)

    # integer sums (for choosing scales that spread the values over the output range)
    acc = conv64(xq - per_channel(zx, 1).astype(np.float64), wq - zw_o.reshape(-1, 1, 1, 1).astype(np.float64),
                 spec.strides, spec.dilations, spec.padding, groups)
    if spec.exact:
        relative = 2.0 ** rng.integers(-2, 3, w_count)
    else:
        relative = 2.0 ** rng.uniform(-1, 1, w_count)
    spread = float(np.std(acc * per_channel(np.broadcast_to(relative, (o,)), 1))) or 1.0
    base = 3.0 / spread  # sx * sw: the conv's values about N(0, 3)
    if spec.exact:
        sx = power_of_two(np.sqrt(base))
        sw = (power_of_two(base / sx) * relative)
    else:
        sx = np.sqrt(base) * rng.uniform(0.7, 1.4)
        sw = base / sx * relative
    sx = np.full(x_count, sx)
    if spec.x_per_channel:
        sx = sx * 2.0 ** rng.integers(-1, 2, x_count)
    sx, sw = sx.astype(ftype), sw.astype(ftype)

    unit = np.float64(sx[0]) * np.broadcast_to(sw, (o,)).astype(np.float64)  # one step of the sums
    bias, bias64 = {}, np.zeros(o)
    target = rng.normal(0, 1.5, o)
    if spec.exact:  # whole units of sx * sw, few enough to keep the sums below 2^24 units
        target = np.clip(np.rint(target / unit), -2 ** 21, 2 ** 21) * unit
    if spec.bias == "float":
        bias = {"float": target.astype(ftype)}
        bias64 = bias["float"].astype(np.float64)
    elif spec.bias.startswith("int32"):
        zero = rng.integers(-50, 50, o) if spec.bias == "int32_zero_point" else np.zeros(o)
        q = np.rint(target / unit) + zero
        bias = {"q": q.astype(np.int32), "scale": unit.astype(ftype), "zero": zero.astype(np.int32)}
        bias64 = (bias["q"].astype(np.float64) - bias["zero"]) * bias["scale"].astype(np.float64)
    if spec.exact:  # every partial sum (integer units of sx * sw) representable in the float type
        bound = (spec.k * float(np.max(np.abs(xq - per_channel(zx, 1).astype(np.int64)))) *
                 float(np.max(np.abs(wq - zw_o.reshape(-1, 1, 1, 1).astype(np.int64)))) +
                 float(np.max(np.abs(bias64 / unit))) + 1)
        assert bound < 2 ** (np.finfo(ftype).nmant + 1), f"not exact: {bound}"

    dx = (xq.astype(np.float64) - per_channel(zx, 1)) * per_channel(sx.astype(np.float64), 1)
    dw = (wq.astype(np.float64) - zw_o.reshape(-1, 1, 1, 1)) * \
        np.broadcast_to(sw.astype(np.float64), (o,)).reshape(-1, 1, 1, 1)
    conv = conv64(dx, dw, spec.strides, spec.dilations, spec.padding, groups) + per_channel(bias64, 1)
    clamp = None
    if spec.act == "relu":
        clamp = (0.0, np.inf)
    elif spec.act == "relu6":
        clamp = (0.0, 6.0)
    elif spec.act == "clamp":
        low, high = np.percentile(conv, [20, 80]) if conv.size > 1 else (-1.0, 1.0)
        clamp = (float(ftype.type(low)), float(ftype.type(max(high, low + 0.5))))
    activated = conv if clamp is None else np.clip(conv, *clamp)

    # output scale and zero point: the range (holding 0), a tenth cut off to saturate at the ends
    out_signed = np.iinfo(spec.out_type).min < 0
    low, high = 0.9 * min(float(activated.min()), 0.0), 0.9 * max(float(activated.max()), 0.0)
    sy = (high - low) / 255 or 1.0
    sy = ftype.type(2.0 ** np.ceil(np.log2(sy)) if spec.exact else sy)
    qlo, qhi = value_range(spec.out_type)
    zy = np.asarray(np.clip(np.rint((-128 if out_signed else 0) - low / np.float64(sy)), qlo, qhi), spec.out_type)
    expected = np.clip(np.rint(activated / np.float64(sy)) + np.float64(zy), qlo, qhi).astype(spec.out_type)
    return Case(spec, xq, zx, sx, wq, zw, sw, bias, clamp, np.asarray(sy), zy, conv, activated, expected)


# ---------------------------------------------------------------- building and checking
def build(builder, case):
    """The graph: dequantizeLinear -> conv2d (label "qconv") [-> relu / clamp] -> quantizeLinear."""
    spec = case.spec
    ftype = spec.dtype
    x = builder.input("x", data_type=spec.x, shape=list(case.x_in.shape))
    channel_axis = 3 if spec.layout == "nhwc" else 1
    x_params = (per_channel(case.sx, channel_axis), per_channel(case.zx, channel_axis))
    dx = builder.dequantize_linear(x, builder.constant(x_params[0]), builder.constant(x_params[1]))
    w_in = case.w_in
    w = (builder.input("w", data_type=spec.w, shape=list(w_in.shape)) if spec.filter_input
         else builder.constant(w_in))
    axis = OUTPUT_CHANNEL_AXIS[spec.filter_layout]
    dw = builder.dequantize_linear(w, builder.constant(per_channel(case.sw, axis)),
                                   builder.constant(per_channel(case.zw, axis)))
    options = dict(padding=list(spec.padding), strides=list(spec.strides), dilations=list(spec.dilations),
                   groups=spec.groups, input_layout=spec.layout, filter_layout=spec.filter_layout, label="qconv")
    if "float" in case.bias:
        options["bias"] = builder.constant(case.bias["float"])
    elif case.bias:
        options["bias"] = builder.dequantize_linear(builder.constant(case.bias["q"]),
                                                    builder.constant(case.bias["scale"]),
                                                    builder.constant(case.bias["zero"]))
    y = builder.conv2d(dx, dw, **options)
    z = y
    if spec.act == "relu":
        z = builder.relu(y)
    elif spec.act in ("relu6", "clamp"):
        z = builder.clamp(y, min_value=case.clamp[0], max_value=case.clamp[1])
    sy = builder.constant(np.full([1, 1, 1, 1], case.sy, ftype))
    zy = builder.constant(np.full([1, 1, 1, 1], case.zy, spec.out_type))
    outputs = {"q": builder.quantize_linear(z, sy, zy)}
    if spec.also == "conv_output":
        outputs["conv"] = y
    elif spec.also == "conv_reader":
        outputs["neg"] = builder.neg(y)
    elif spec.also == "act_output":
        outputs["act"] = z
    return builder.build(outputs)


def within_one_step(actual, expected, exact, what):
    """Every element within one step of the reference (equal in exact cases), about 99% equal."""
    assert actual.dtype == expected.dtype and actual.shape == expected.shape, \
        (what, actual.dtype, actual.shape, expected.dtype, expected.shape)
    difference = np.abs(actual.astype(np.int64) - expected.astype(np.int64))
    limit = 0 if exact else 1
    assert difference.max() <= limit, \
        f"{what}: {difference.max()} steps off at {np.argwhere(difference > limit)[:5].tolist()}"
    unequal = int(np.count_nonzero(difference))
    assert unequal <= max(1, difference.size // 100), f"{what}: {unequal} of {difference.size} differ"


def check_outputs(case, outputs, what=""):
    spec = case.spec
    what = what or str(spec)
    within_one_step(outputs["q"], case.to_layout(case.expected), spec.exact, what)
    floats = {"conv": case.conv, "neg": -case.conv, "act": case.activated}
    for name, reference in floats.items():
        if name in outputs:
            reference = case.to_layout(reference)
            tolerance = 1e-5 * max(1.0, float(np.max(np.abs(reference))))
            np.testing.assert_allclose(outputs[name].astype(np.float64), reference, rtol=0, atol=tolerance,
                                       err_msg=f"{what}: {name}")


def run_case(context, name):
    case = generate(CASES[name], seed(name))
    graph = build(webnn.MLGraphBuilder(context), case)
    return case, graph, context.compute(graph, case.feeds)


# The pass's summary line names the kernel and counts the convolutions left in float, e.g.
# "2 conv2d run on integers (u8s8_gemm_12x32_avx512vnni), 1 left in float". Only the counts before
# "run on integers" / "left in float" and the parenthesized kernel names are read.
INTEGER_COUNT = re.compile(r"(\d+)(?:\s+[A-Za-z][\w-]*)*?\s+run on integers")
FLOAT_COUNT = re.compile(r"(\d+)(?:\s+[A-Za-z][\w/-]*)*?\s+left in float")
KERNEL = re.compile(r"run on integers\s*\(([^)]*)\)")


def summary(graph):
    passes = dict(graph.describe_plan()["passes"])
    assert PASS in passes, f"no {PASS} pass in the plan: {list(passes)}"
    return passes[PASS]


def counts(text):
    """(convs run on integers, convs left in float, the kernel names) in a summary line."""
    integer, floating, kernel = INTEGER_COUNT.search(text), FLOAT_COUNT.search(text), KERNEL.search(text)
    assert integer and floating, f"unexpected {PASS} summary: {text!r}"
    return int(integer.group(1)), int(floating.group(1)), kernel.group(1) if kernel else ""


def assert_integer_plan(graph, spec):
    """The whole pattern is one conv2d step on uint8/int8 with the dequantize, quantize and
    activation fused; the summary counts it and names a kernel."""
    steps = [s for s in graph.describe_plan()["steps"] if not s["view"]]
    convs = [s for s in steps if s["op"] == "conv2d"]
    assert len(convs) == 1, steps
    conv = convs[0]
    assert "dequantizeLinear" in conv["fused"] and "quantizeLinear" in conv["fused"], conv
    if spec.act != "none":
        assert ("relu" if spec.act == "relu" else "clamp") in conv["fused"], conv
    assert conv["inputs"][0]["dataType"] == spec.x, conv
    assert conv["outputs"][0]["dataType"] == spec.out_type, conv
    assert conv["label"] == "qconv", conv
    assert not [s for s in steps if s["op"] in ("dequantizeLinear", "quantizeLinear")], steps
    integer, floating, kernel = counts(summary(graph))
    assert (integer, floating) == (1, 0) and kernel, summary(graph)
    return kernel


def assert_float_plan(graph):
    """The convolution's result is not quantized in its step: a float conv2d step, or a quantizedConv2d
    (dequantized input and filter on integers) with a float32 result; its quantizeLinear in a step of
    its own or at the end of an element-wise chain (elementwise_fusion)."""
    steps = [s for s in graph.describe_plan()["steps"] if not s["view"]]
    convs = [s for s in steps if s["op"] in ("conv2d", "quantizedConv2d")]
    assert convs and all(s["outputs"][0]["dataType"] in ("float32", "float16") for s in convs), steps
    assert not [s for s in convs if "quantizeLinear" in s["fused"]], steps
    assert [s for s in steps if s["op"] == "quantizeLinear" or "quantizeLinear" in s["fused"]], steps


# ---------------------------------------------------------------- CPU features and kernel variants
LEVELS = ["ref", "avx2", "avx512"]


def cpu_flags():
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return None
    for line in text.splitlines():
        if line.startswith("flags"):
            return set(line.split(":", 1)[1].split())
    return None


@functools.lru_cache(maxsize=None)
def amx_usable():
    """Whether webnn runs its AMX kernel here at the best level with nothing disabled: the CPU has
    AMX-INT8 and Linux granted the tile state (asked for in a fresh process, whatever this one's
    WEBNN_CPU_ISA and WEBNN_CPU_DISABLE)."""
    env = {k: v for k, v in os.environ.items() if k not in ("WEBNN_CPU_ISA", "WEBNN_CPU_DISABLE")}
    result = subprocess.run([sys.executable, "-c", "import webnn; print(webnn._core.int8_kernel())"], env=env,
                            capture_output=True, text=True, timeout=60, check=True)
    return "amx" in result.stdout


def level_supported(level):
    if LEVELS.index(level) > LEVELS.index(webnn._core.detected_isa()):
        return False
    flags = cpu_flags()
    needs = {"ref": None, "avx2": "avx2", "avx512": "avx512bw"}[level]
    return flags is None or needs is None or needs in flags


FEATURE_FLAGS = {"avx512vnni": ("avx512_vnni", "avx512"), "avxvnni": ("avx_vnni", "avx2"),
                 "avx512vbmi": ("avx512vbmi", "avx512")}


@pytest.mark.parametrize("level", LEVELS)
@pytest.mark.parametrize("disabled", ["", "avx512vnni,amx", "avxvnni,avx512vbmi"])
def test_cpu_features_follow_the_level_and_the_disabled_list(level, disabled):
    """The kernel table is picked by feature bits: a level brings its own (avx2, avx512) and allows
    the extensions that need it, minus those WEBNN_CPU_DISABLE names (a fresh process each)."""
    if not level_supported(level):
        pytest.skip(f"this CPU has no {level}")
    flags = cpu_flags()
    if flags is None:
        pytest.skip("no /proc/cpuinfo to check against")
    env = dict(os.environ, WEBNN_CPU_ISA=level, WEBNN_CPU_DISABLE=disabled)
    result = subprocess.run([sys.executable, "-c", "import json, webnn; print(json.dumps(webnn._core.cpu_features()))"],
                            env=env, capture_output=True, text=True, timeout=60, check=True)
    rank = LEVELS.index(level)
    expected = [name for name in ("avx2", "avx512") if LEVELS.index(name) <= rank]
    off = disabled.split(",")
    for name, (flag, needs) in FEATURE_FLAGS.items():
        if flag in flags and LEVELS.index(needs) <= rank and name not in off:
            expected.append(name)
    if rank == 2 and amx_usable() and "amx" not in off:
        expected.append("amx")
    assert sorted(json.loads(result.stdout)) == sorted(expected)


def weights_fit_int8(case):
    """Whether every w - zw fits int8: the uint8 x int8 dot-product (VNNI) kernels' domain; other
    filters run on the 16-bit (s16) kernel of the level."""
    centered = case.wq.astype(np.int64) - np.broadcast_to(case.zw, (case.spec.o,)).reshape(-1, 1, 1, 1)
    return bool(centered.min() >= -128 and centered.max() <= 127)


def depthwise_loops(spec):
    return spec.groups == spec.c == spec.o


def expected_kernels(case, level, disabled):
    """The kernel names acceptable for case at an ISA level with WEBNN_CPU_DISABLE's features off, on
    this CPU: a list of (substrings the name must hold, substrings it must not)."""
    if depthwise_loops(case.spec):  # channel multiplier 1, either layout: the int8 depthwise loops
        return [(["depthwise"], [])]
    flags = cpu_flags() or set()
    if level == "ref":
        return [(["ref"], ["vnni"])]
    fits = weights_fit_int8(case)
    avxvnni = fits and "avx_vnni" in flags and "avxvnni" not in disabled
    if level == "avx2":
        return [(["avxvnni"], ["avx512"])] if avxvnni else [(["s16", "avx2"], ["avx512", "vnni"])]
    if fits and amx_usable() and "amx" not in disabled:
        return [(["amx"], ["s16"])]
    if fits and "avx512_vnni" in flags and "avx512vnni" not in disabled:
        return [(["avx512vnni"], ["s16"])]
    s16 = (["s16", "avx512"], ["vnni"])
    # AVX-512 VNNI off but AVX-VNNI on: the 256-bit dot-product kernel is as good an answer as s16
    return [s16, (["avxvnni"], [])] if avxvnni else [s16]


def assert_kernel(kernel, case, level, disabled, what=""):
    options = expected_kernels(case, level, disabled)
    if not any(all(p in kernel for p in present) and not any(a in kernel for a in absent)
               for present, absent in options):
        raise AssertionError(f"{what}: kernel {kernel!r} at {level} (off: {sorted(disabled)}) is not one of "
                             f"{options} (weights fit int8: {weights_fit_int8(case)})")


# name -> (WEBNN_CPU_ISA, WEBNN_CPU_DISABLE)
VARIANTS = {
    "ref": ("ref", ""),
    "avx2": ("avx2", ""),
    "avx2_without_avxvnni": ("avx2", "avxvnni"),
    "avx512": ("avx512", ""),
    "avx512_without_amx": ("avx512", "amx"),
    "avx512_without_avx512vnni": ("avx512", "amx,avx512vnni"),
    "avx512_without_vnni": ("avx512", "amx,avx512vnni,avxvnni"),
}


@functools.lru_cache(maxsize=None)
def run_variant(variant):
    """(outputs by case, {"isa": active level, "summaries": {case: summary}}) of VARIANT_CASES run by
    this file as a script with the variant's environment."""
    level, disabled = VARIANTS[variant]
    env = {k: v for k, v in os.environ.items() if k != "WEBNN_CPU_DISABLE"}
    env["WEBNN_CPU_ISA"] = level
    if disabled:
        env["WEBNN_CPU_DISABLE"] = disabled
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "outputs.npz"
        result = subprocess.run([sys.executable, __file__, str(path)], env=env, capture_output=True, text=True,
                                timeout=120)
        assert result.returncode == 0, result.stdout + result.stderr
        with np.load(path) as data:
            outputs = {name: data[name] for name in data.files}
        info = json.loads(path.with_suffix(".json").read_text())
    return outputs, info


def variant_main(path):
    """Runs VARIANT_CASES; writes their outputs (npz) and the active level and summaries (json)."""
    context = webnn.ml.create_context()
    outputs, summaries = {}, {}
    for name in VARIANT_CASES:
        case, graph, result = run_case(context, name)
        outputs[name] = result["q"]
        summaries[name] = dict(graph.describe_plan()["passes"]).get(PASS, "")
    np.savez(path, **outputs)
    Path(path).with_suffix(".json").write_text(json.dumps({"isa": webnn._core.active_isa(),
                                                           "summaries": summaries}))
    return 0


# ---------------------------------------------------------------- tests
@pytest.mark.parametrize("name", INTEGER_CASES)
def test_quantized_conv_runs_on_integers(context, name):
    case, graph, outputs = run_case(context, name)
    check_outputs(case, outputs, name)
    assert_integer_plan(graph, case.spec)


@pytest.mark.parametrize("name", FLOAT_CASES)
def test_left_in_float(context, name):
    case, graph, outputs = run_case(context, name)
    check_outputs(case, outputs, name)
    assert_float_plan(graph)
    integer, floating, _ = counts(summary(graph))
    products = [s for s in graph.describe_plan()["steps"] if s["op"] == "quantizedConv2d"]
    assert integer == len(products), summary(graph)  # only products with a float32 result, if any
    if CASES[name].also != "act_output":  # (a relu read elsewhere need not make the conv a candidate)
        assert floating >= 1, summary(graph)


def test_counts_integer_and_float_convs_in_one_graph(context):
    """Two quantized convs in a row (the first's output dequantized for the second) run on integers;
    a third whose float output is also a graph output is not quantized in its step: a product on
    integers with a float32 result (quantizedConv2d), quantized by a step of its own."""
    rng = np.random.default_rng(11)
    b = webnn.MLGraphBuilder(context)
    one = lambda v, dtype: b.constant(np.full([1, 1, 1, 1], v, dtype))  # noqa: E731
    x = rng.integers(0, 255, (1, 8, 6, 6), endpoint=True).astype(np.uint8)
    w1, w2, w3 = (rng.integers(-128, 127, s, endpoint=True).astype(np.int8)
                  for s in ((8, 8, 3, 3), (8, 8, 1, 1), (4, 8, 1, 1)))

    def qconv(inp, w, scale_in, zero_in, scale_out, zero_out, label):
        d = b.dequantize_linear(inp, one(scale_in, np.float32), one(zero_in, np.uint8))
        f = b.dequantize_linear(b.constant(w), one(2.0 ** -7, np.float32), one(0, np.int8))
        y = b.conv2d(d, f, padding=[w.shape[2] // 2] * 4, label=label)
        return y, b.quantize_linear(b.relu(y), one(scale_out, np.float32), one(zero_out, np.uint8))

    inp = b.input("x", data_type="uint8", shape=[1, 8, 6, 6])
    _, q1 = qconv(inp, w1, 2.0 ** -6, 128, 2.0 ** -3, 0, "first")
    _, q2 = qconv(q1, w2, 2.0 ** -3, 0, 2.0 ** -2, 0, "second")
    y3, q3 = qconv(q2, w3, 2.0 ** -2, 0, 2.0 ** -1, 0, "third")
    graph = b.build({"q": q3, "float": y3})
    out = context.compute(graph, {"x": x})

    def ref(xq, w, scale_in, zero_in, scale_out, pad):
        y = conv64((xq.astype(np.float64) - zero_in) * scale_in, w * 2.0 ** -7, (1, 1), (1, 1), [pad] * 4, 1)
        return y, np.clip(np.rint(np.maximum(y, 0) / scale_out), 0, 255).astype(np.uint8)

    _, r1 = ref(x, w1, 2.0 ** -6, 128, 2.0 ** -3, 1)
    _, r2 = ref(r1, w2, 2.0 ** -3, 0, 2.0 ** -2, 0)
    f3, r3 = ref(r2, w3, 2.0 ** -2, 0, 2.0 ** -1, 0)
    np.testing.assert_array_equal(out["q"], r3)  # power-of-two scales: exact
    np.testing.assert_allclose(out["float"], f3, rtol=0, atol=1e-6 * max(1, np.abs(f3).max()))
    integer, floating, _ = counts(summary(graph))
    assert (integer, floating) == (3, 1), summary(graph)
    assert "quantizedConv2d" in summary(graph), summary(graph)


@pytest.mark.parametrize("scales", [(2.0 ** 60, 2.0 ** 60, 2.0 ** -60), (1.0, 1.0, 2.0 ** -126)],
                         ids=["scales", "bias"])
def test_scale_ratio_overflowing_float32_quantizes_in_float(context, scales):
    """The kernel multiplies by sx * sw / sy and adds bias / sy; when either is not a finite float32,
    the conv's result is not quantized in its step: a product with a float32 result (sx * sw and the
    bias are finite), then the float path's quantize (its infinities quantize as the spec says)."""
    scale_in, scale_w, scale_out = scales
    b = webnn.MLGraphBuilder(context)
    one = lambda v, dtype: b.constant(np.full([1, 1, 1, 1], v, dtype))  # noqa: E731
    x = np.array([0, 1, 2, 255], np.uint8).reshape(1, 1, 2, 2)
    d = b.dequantize_linear(b.input("x", data_type="uint8", shape=[1, 1, 2, 2]), one(scale_in, np.float32),
                            one(1, np.uint8))
    f = b.dequantize_linear(b.constant(np.array([1, -1], np.int8).reshape(2, 1, 1, 1)), one(scale_w, np.float32),
                            one(0, np.int8))
    bias = np.array([0, 2.0 ** 100], np.float32) if scale_out < 2.0 ** -100 else np.zeros(2, np.float32)
    y = b.conv2d(d, f, bias=b.constant(bias))
    graph = b.build({"q": b.quantize_linear(y, one(scale_out, np.float32), one(3, np.uint8))})
    out = context.compute(graph, {"x": x})["q"]
    ref = (x.astype(np.float64) - 1) * scale_in * scale_w * np.array([1, -1]).reshape(1, 2, 1, 1)
    ref = ref + bias.astype(np.float64).reshape(1, 2, 1, 1)
    with np.errstate(over="ignore"):  # the float32 path's infinities
        expected = np.clip(np.rint(np.float32(ref / scale_out)) + 3, 0, 255)
    np.testing.assert_array_equal(out, expected.astype(np.uint8))
    integer, floating, _ = counts(summary(graph))
    assert (integer, floating) == (1, 1) and "quantizedConv2d" in summary(graph), summary(graph)
    assert "overflows float32" in summary(graph) or "not a finite float32" in summary(graph), summary(graph)


@pytest.mark.parametrize("layout", ["nchw", "nhwc"])
@pytest.mark.parametrize("shape", ["3x3_pad_stride_2", "1x1", "5x5_groups_2_dilation_2", "3x3_many_channels"])
@pytest.mark.parametrize("types", [("uint8", "int8"), ("int8", "int8"), ("uint8", "uint8")])
def test_float_result_convolutions_run_on_integers_exactly(context, layout, shape, types):
    """dequantizeLinear(x) -> conv2d(dequantizeLinear(constant w)) whose float32 result is the output
    (a dynamically quantized model's ConvInteger: x's scale and zero point are graph inputs here):
    one quantizedConv2d step computing float32(float32(exact sum) * float32(sx * sw)), bit for bit.
    Padding reads the zero point, which changes per dispatch."""
    kh, stride, dilation, groups, channels, out = {
        "3x3_pad_stride_2": (3, 2, 1, 1, 5, 7), "1x1": (1, 1, 1, 1, 16, 40),
        "5x5_groups_2_dilation_2": (5, 1, 2, 2, 6, 10), "3x3_many_channels": (3, 1, 1, 1, 72, 33)}[shape]
    x_type, w_type = types
    rng = np.random.default_rng(zlib.crc32(f"{layout}{shape}{types}".encode()))
    lo, hi = (0, 255) if x_type == "uint8" else (-128, 127)
    w_lo, w_hi = (0, 255) if w_type == "uint8" else (-128, 127)
    x = rng.integers(lo, hi, (2, channels, 9, 11), endpoint=True).astype(x_type)
    w = rng.integers(w_lo, w_hi, (out, channels // groups, kh, kh), endpoint=True).astype(w_type)
    sw = (rng.random(out) * 0.01 + 0.001).astype(np.float32)
    zw = rng.integers(w_lo, w_hi, out, endpoint=True).astype(w_type)
    pad = (kh // 2) * dilation
    b = webnn.MLGraphBuilder(context)
    given = x if layout == "nchw" else x.transpose(0, 2, 3, 1).copy()
    inp = b.input("x", data_type=x_type, shape=list(given.shape))
    d = b.dequantize_linear(inp, b.input("sx", data_type="float32", shape=[1, 1, 1, 1]),
                            b.input("zx", data_type=x_type, shape=[1, 1, 1, 1]))
    f = b.dequantize_linear(b.constant(w), b.constant(sw.reshape(out, 1, 1, 1)), b.constant(zw.reshape(out, 1, 1, 1)))
    y = b.conv2d(d, f, padding=[pad] * 4, strides=[stride] * 2, dilations=[dilation] * 2, groups=groups,
                 input_layout=layout)
    graph = b.build({"y": y})
    steps = [s for s in graph.describe_plan()["steps"] if not s["view"]]
    assert [s["op"] for s in steps] == ["quantizedConv2d"], steps
    for sx, zx in ((0.013, lo + 3), (2.5, hi), (2.0 ** -20, lo)):
        feeds = {"x": given, "sx": np.full([1, 1, 1, 1], sx, np.float32), "zx": np.full([1, 1, 1, 1], zx, x_type)}
        sums = conv64(x.astype(np.float64) - zx, w.astype(np.float64) - zw.reshape(out, 1, 1, 1).astype(np.float64),
                      (stride, stride), (dilation, dilation), [pad] * 4, groups)
        multiplier = (np.float64(np.float32(sx)) * sw.astype(np.float64)).astype(np.float32).reshape(1, out, 1, 1)
        want = sums.astype(np.float32) * multiplier
        got = context.compute(graph, feeds)["y"]
        if layout == "nhwc":
            got = got.transpose(0, 3, 1, 2)
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("name", ["exact_u8_s8_relu", "exact_u8_s8_random_zero_points", "depthwise_8"])
def test_kernel_matches_this_cpu(context, name):
    """In this process: the kernel named for the level in use, the features not disabled and the
    weights (int8-range after their zero point: the dot-product kernels; else 16-bit)."""
    case, graph, _ = run_case(context, name)
    kernel = assert_integer_plan(graph, case.spec)
    disabled = {f.strip() for f in os.environ.get("WEBNN_CPU_DISABLE", "").split(",") if f.strip()}
    assert_kernel(kernel, case, webnn._core.active_isa(), disabled, name)


def _variant_or_skip(variant):
    level, _ = VARIANTS[variant]
    if not level_supported(level):
        pytest.skip(f"this CPU does not support {level}")
    return run_variant(variant)


@pytest.mark.parametrize("variant", VARIANTS)
def test_kernel_variant_results(variant):
    """Within one step of the reference in every variant; exact cases equal, and equal to ref's."""
    outputs, info = _variant_or_skip(variant)
    assert info["isa"] == VARIANTS[variant][0]
    ref_outputs, _ = run_variant("ref")
    for name in VARIANT_CASES:
        case = generate(CASES[name], seed(name))
        within_one_step(outputs[name], case.to_layout(case.expected), case.spec.exact, f"{variant} {name}")
        if case.spec.exact:
            np.testing.assert_array_equal(outputs[name], ref_outputs[name], err_msg=f"{variant} vs ref: {name}")


@pytest.mark.parametrize("variant", VARIANTS)
def test_kernel_variant_names(variant):
    _, info = _variant_or_skip(variant)
    level, disabled = VARIANTS[variant]
    for name in VARIANT_CASES:
        text = info["summaries"][name]
        assert text, f"{variant} {name}: no {PASS} pass"
        integer, floating, kernel = counts(text)
        assert (integer, floating) == (1, 0), f"{variant} {name}: {text}"
        case = generate(CASES[name], seed(name))
        assert_kernel(kernel, case, level, set(disabled.split(",")) - {""}, f"{variant} {name}")


# ---------------------------------------------------------------- validation is unchanged
def _quantized_conv_operands(b, c=8, o=6, cg=8):
    x = b.input("x", data_type="uint8", shape=[1, c, 5, 5])
    dx = b.dequantize_linear(x, b.constant(np.full([1, 1, 1, 1], 0.02, np.float32)),
                             b.constant(np.full([1, 1, 1, 1], 128, np.uint8)))
    w = np.ones((o, cg, 3, 3), np.int8)
    dw = b.dequantize_linear(b.constant(w), b.constant(np.full([o, 1, 1, 1], 0.01, np.float32)),
                             b.constant(np.zeros([o, 1, 1, 1], np.int8)))
    return dx, dw


@pytest.mark.parametrize("problem", ["filter input channels", "groups", "bias length", "filter rank"])
def test_invalid_quantized_conv_still_raises(context, problem):
    b = webnn.MLGraphBuilder(context)
    options = {"label": "qconv"}
    if problem == "filter input channels":
        dx, dw = _quantized_conv_operands(b, cg=5)
    elif problem == "groups":
        dx, dw = _quantized_conv_operands(b, o=6, cg=8)
        options["groups"] = 3  # 8 channels do not split into 3 groups
    elif problem == "bias length":
        dx, dw = _quantized_conv_operands(b)
        options["bias"] = b.dequantize_linear(b.constant(np.zeros(5, np.int32)),
                                              b.constant(np.full([5], 2e-4, np.float32)),
                                              b.constant(np.zeros(5, np.int32)))
    else:
        dx, _ = _quantized_conv_operands(b)
        dw = b.dequantize_linear(b.constant(np.ones((6, 8, 9), np.int8)),
                                 b.constant(np.full([1, 1, 1], 0.01, np.float32)),
                                 b.constant(np.zeros([1, 1, 1], np.int8)))
    with pytest.raises(TypeError, match=r"\[qconv\]"):
        b.conv2d(dx, dw, **options)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="Runs VARIANT_CASES at the level WEBNN_CPU_ISA forces.")
    parser.add_argument("output", help="the .npz file for the outputs (a .json beside it gets the summaries)")
    sys.exit(variant_main(parser.parse_args().output))


def test_dynamically_quantized_block_runs_channels_last_with_its_batch_norm(context):
    """A dynamically quantized network's block: quantizedConv2d steps start a channels-last region, a
    batch normalization after one folds into its filter scales and bias, and a clamp joins its epilogue."""
    rng = np.random.default_rng(21)
    x = rng.integers(0, 255, (1, 8, 10, 10), endpoint=True).astype(np.uint8)
    w1 = rng.integers(-128, 127, (16, 8, 3, 3), endpoint=True).astype(np.int8)
    w2 = rng.integers(-128, 127, (8, 16, 1, 1), endpoint=True).astype(np.int8)
    gamma, beta = rng.uniform(0.5, 1.5, 16).astype(np.float32), rng.standard_normal(16).astype(np.float32)
    mean, var = rng.standard_normal(16).astype(np.float32), rng.uniform(0.5, 2.0, 16).astype(np.float32)
    b = webnn.MLGraphBuilder(context)
    one = lambda v, dtype: b.constant(np.full([1, 1, 1, 1], v, dtype))  # noqa: E731
    scale = b.input("s", data_type="float32", shape=[1, 1, 1, 1])
    zero = b.input("z", data_type="uint8", shape=[1, 1, 1, 1])
    d = b.dequantize_linear(b.input("x", data_type="uint8", shape=[1, 8, 10, 10]), scale, zero)
    f1 = b.dequantize_linear(b.constant(w1), one(0.002, np.float32), one(0, np.int8))
    y = b.batch_normalization(b.conv2d(d, f1, padding=[1, 1, 1, 1]), b.constant(mean), b.constant(var),
                              scale=b.constant(gamma), bias=b.constant(beta))
    y = b.clamp(y, min_value=0.0, max_value=6.0)
    q = b.quantize_linear(y, one(0.03, np.float32), one(0, np.uint8))
    f2 = b.dequantize_linear(b.constant(w2), one(0.004, np.float32), one(0, np.int8))
    out = b.conv2d(b.dequantize_linear(q, one(0.03, np.float32), one(0, np.uint8)), f2)
    graph = b.build({"out": out})
    plan = graph.describe_plan()
    steps = [(s["op"], s["fused"]) for s in plan["steps"] if not s["view"]]
    assert ("quantizedConv2d", ["dequantizeLinear", "conv2d", "clamp"]) in steps, steps
    passes = dict(plan["passes"])
    assert passes["scale_folding"].startswith("1 "), passes["scale_folding"]
    # both convolutions, the quantize and the dequantize between them; one transpose in, one out
    assert passes["nhwc_regions"] == "4 nodes run channels-last, 1 transposes into NHWC, 1 back to NCHW", passes
    feeds = {"x": x, "s": np.full([1, 1, 1, 1], 0.05, np.float32), "z": np.full([1, 1, 1, 1], 128, np.uint8)}
    conv1 = conv64((x.astype(np.float64) - 128) * 0.05, w1 * 0.002, (1, 1), (1, 1), [1] * 4, 1)
    bn = (conv1 - mean.reshape(1, -1, 1, 1)) / np.sqrt(var.reshape(1, -1, 1, 1) + 1e-5) * gamma.reshape(1, -1, 1, 1)
    q64 = np.clip(np.rint(np.clip(bn + beta.reshape(1, -1, 1, 1), 0, 6) / 0.03), 0, 255)
    want = conv64(q64 * 0.03, w2 * 0.004, (1, 1), (1, 1), [0] * 4, 1)
    got = context.compute(graph, feeds)["out"]
    # one quantization step of the middle tensor at most, where the float path lands on a half
    assert np.abs(got - want).max() <= 0.03 * 0.004 * 127 * 16 * 1.01
    assert np.mean(np.abs(got - want) < 1e-4) > 0.95
