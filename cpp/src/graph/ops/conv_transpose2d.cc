// convTranspose2d: 2-D transposed convolution, nchw/nhwc input, iohw/hwoi/ohwi filter, groups,
// strides, dilations, padding (crops), outputPadding or explicit outputSizes, bias.
#include "graph/op_def.h"
#include "kernels/conv/conv_transpose.h"

namespace webnn {

namespace {

// The filter's (C, Og, kH, kW) dims and element strides for a layout.
struct FilterGeometry {
  uint32_t c, og, h, w;
  size_t stride_c, stride_o, stride_h, stride_w;
};
FilterGeometry filter_geometry(const std::vector<uint32_t>& s, const std::string& layout) {
  if (layout == "hwoi") {  // [kH, kW, Og, C]
    return {s[3], s[2], s[0], s[1], 1, s[3], size_t(s[1]) * s[2] * s[3], size_t(s[2]) * s[3]};
  }
  if (layout == "ohwi") {  // [Og, kH, kW, C]
    return {s[3], s[0], s[1], s[2], 1, size_t(s[1]) * s[2] * s[3], size_t(s[2]) * s[3], s[3]};
  }
  // iohw: [C, Og, kH, kW]
  return {s[0], s[1], s[2], s[3], size_t(s[1]) * s[2] * s[3], size_t(s[2]) * s[3], s[3], 1};
}

struct ConvTranspose2dShape {
  ConvTranspose2dParams params;
  std::vector<uint32_t> output;
};

ConvTranspose2dShape conv_transpose2d_shape(const OpView& op) {
  const auto& input = op.operand("input");
  const auto& padding = op.integers("padding");
  const auto& strides = op.integers("strides");
  const auto& dilations = op.integers("dilations");
  const auto& output_padding = op.integers("outputPadding");
  const int64_t groups = op.integer("groups");
  const bool nhwc = op.text("inputLayout") == "nhwc";

  if (padding.size() != 4) op.fail(str_cat("padding must have 4 values, got ", padding.size()));
  if (strides.size() != 2) op.fail(str_cat("strides must have 2 values, got ", strides.size()));
  if (dilations.size() != 2) op.fail(str_cat("dilations must have 2 values, got ", dilations.size()));
  if (output_padding.size() != 2) op.fail(str_cat("outputPadding must have 2 values, got ", output_padding.size()));
  if (strides[0] == 0 || strides[1] == 0) op.fail("strides must be at least 1");
  if (dilations[0] == 0 || dilations[1] == 0) op.fail("dilations must be at least 1");
  const bool has_sizes = op.has("outputSizes");
  if (has_sizes) {
    if (op.integers("outputSizes").size() != 2)
      op.fail(str_cat("outputSizes must have 2 values, got ", op.integers("outputSizes").size()));
  } else {
    for (int i = 0; i < 2; ++i)
      if (output_padding[i] >= strides[i])
        op.fail(str_cat("outputPadding[", i, "] (", output_padding[i], ") must be smaller than strides[", i, "] (",
                        strides[i], ")"));
  }
  if (groups == 0) op.fail("groups must be at least 1");

  const auto& s = input.shape;
  const uint32_t N = s[0], C = nhwc ? s[3] : s[1], H = nhwc ? s[1] : s[2], W = nhwc ? s[2] : s[3];
  const FilterGeometry f = filter_geometry(op.operand("filter").shape, op.text("filterLayout"));
  if (C != f.c) op.fail(str_cat("input channels (", C, ") must equal the filter's input channels (", f.c, ")"));
  if (C % groups != 0) op.fail(str_cat("input channels (", C, ") must be a multiple of groups (", groups, ")"));
  const uint64_t O = uint64_t(f.og) * uint64_t(groups);
  if (O > kMaxDimension) op.fail(str_cat("the output channels (", O, ") are not a valid dimension"));
  if (op.has("bias")) {
    const auto& bias = op.operand("bias");
    if (bias.shape.size() != 1 || bias.shape[0] != O)
      op.fail(str_cat("bias must have shape [", O, "], got ", shape_to_string(bias.shape)));
  }

  auto out_size = [&](int axis, uint32_t in, uint32_t k, const char* name) -> uint32_t {
    // (in - 1) * stride + (k - 1) * dilation + 1 - padBegin - padEnd, kept far from int64 overflow.
    const int64_t spread = int64_t(in - 1) * strides[axis], extent = int64_t(k - 1) * dilations[axis];
    const int64_t limit = int64_t(1) << 61;
    if (spread > limit || extent > limit) op.fail(str_cat("the output ", name, " is too large"));
    const int64_t calc = spread + extent + 1 - padding[2 * axis] - padding[2 * axis + 1];
    int64_t out = calc + output_padding[axis];
    if (has_sizes) {
      out = op.integers("outputSizes")[axis];
      if (out < calc || out >= calc + strides[axis])
        op.fail(str_cat("outputSizes[", axis, "] (", out, ") must be in [", calc, ", ", calc + strides[axis], ")"));
    }
    if (out <= 0 || out > int64_t(kMaxDimension))
      op.fail(str_cat("the output ", name, " (", out, ") is not a valid dimension"));
    return uint32_t(out);
  };
  const uint32_t OH = out_size(0, H, f.h, "height");
  const uint32_t OW = out_size(1, W, f.w, "width");

  ConvTranspose2dShape r;
  r.params = {N,
              C,
              H,
              W,
              size_t(O),
              OH,
              OW,
              f.h,
              f.w,
              size_t(strides[0]),
              size_t(strides[1]),
              size_t(dilations[0]),
              size_t(dilations[1]),
              size_t(padding[0]),
              size_t(padding[2]),
              size_t(groups),
              nhwc,
              f.stride_c,
              f.stride_o,
              f.stride_h,
              f.stride_w,
              op.has("bias")};
  r.output = nhwc ? std::vector<uint32_t>{N, OH, OW, uint32_t(O)} : std::vector<uint32_t>{N, uint32_t(O), OH, OW};
  return r;
}

std::vector<OperandDescriptor> infer_conv_transpose2d(const OpView& op) {
  ConvTranspose2dShape shape = conv_transpose2d_shape(op);
  op.keep(shape.params);
  return {{op.operand("input").data_type, shape.output}};
}

Kernel lower_conv_transpose2d(const OpView& op, const std::vector<OperandDescriptor>& outputs) {
  const OperandInfo& filter = op.info("filter");
  if (filter.constant_data) op.mark_copied_constant("filter");  // packed by the kernel at build
  return make_conv_transpose2d_kernel(outputs[0].data_type, op.attributes<ConvTranspose2dParams>(),
                                      filter.constant_data ? filter.constant_data->data() : nullptr);
}

}  // namespace

const OpDef& convTranspose2d_op() {
  static const OpDef def = [] {
    OpDef d{
      "convTranspose2d",
      {{"input", ParamKind::kOperand}, {"filter", ParamKind::kOperand}},
      {{"padding", ParamKind::kUintList, std::vector<int64_t>{0, 0, 0, 0}},
       {"strides", ParamKind::kUintList, std::vector<int64_t>{1, 1}},
       {"dilations", ParamKind::kUintList, std::vector<int64_t>{1, 1}},
       {"outputPadding", ParamKind::kUintList, std::vector<int64_t>{0, 0}},
       {"outputSizes", ParamKind::kUintList},
       {"groups", ParamKind::kUint, int64_t(1)},
       {"inputLayout", ParamKind::kEnum, std::string("nchw"), {"nchw", "nhwc"}},
       {"filterLayout", ParamKind::kEnum, std::string("iohw"), {"iohw", "hwoi", "ohwi"}},
       {"bias", ParamKind::kOptionalOperand}},
      {{"input", kFloatTypes, 4, 4},
       {"filter", kFloatTypes, 4, 4, "input"},
       {"bias", kFloatTypes, 1, 1, "input"},
       {"output", kFloatTypes, 4, 4}},
      infer_conv_transpose2d,
      lower_conv_transpose2d};
    // Inside a channels-last region it reads NHWC in place (the filter layout is independent of it).
    d.to_nhwc = [](Node& node, const std::vector<OperandInfo>& operands) {
      Attr& layout = node.args[size_t(node.def->argument_index("inputLayout"))];
      if (std::get<std::string>(layout) != "nchw") return false;
      layout = std::string("nhwc");
      revalidate(node, operands);
      return true;
    };
    return d;
  }();
  return def;
}

}  // namespace webnn
