// averagePool2d, l2Pool2d, maxPool2d. The window defaults to the whole spatial extent; when
// outputSizes is given it must match the floor or the ceil output size, and padding still applies.
#include "graph/op_def.h"
#include "kernels/pool/pool.h"

namespace webnn {

namespace {

struct Pool2dShape {
  Pool2dParams params;
  std::vector<uint32_t> output;
};

Pool2dShape pool2d_shape(const OpView& op) {
  const auto& s = op.operand("input").shape;
  const bool nhwc = op.text("layout") == "nhwc";
  const uint32_t N = s[0], C = nhwc ? s[3] : s[1], H = nhwc ? s[1] : s[2], W = nhwc ? s[2] : s[3];
  const std::vector<int64_t> window = op.has("windowDimensions") ? op.integers("windowDimensions")
                                                                  : std::vector<int64_t>{H, W};
  const auto& padding = op.integers("padding");
  const auto& strides = op.integers("strides");
  const auto& dilations = op.integers("dilations");
  if (window.size() != 2) op.fail(str_cat("windowDimensions must have 2 values, got ", window.size()));
  if (window[0] == 0 || window[1] == 0) op.fail("windowDimensions must be at least 1");
  if (padding.size() != 4) op.fail(str_cat("padding must have 4 values, got ", padding.size()));
  if (strides.size() != 2) op.fail(str_cat("strides must have 2 values, got ", strides.size()));
  if (strides[0] == 0 || strides[1] == 0) op.fail("strides must be at least 1");
  if (dilations.size() != 2) op.fail(str_cat("dilations must have 2 values, got ", dilations.size()));
  if (dilations[0] == 0 || dilations[1] == 0) op.fail("dilations must be at least 1");

  // The floor and ceil output sizes along one axis.
  struct Sizes {
    int64_t floor, ceil;
  };
  auto sizes = [&](uint32_t in, int64_t win, int64_t stride, int64_t dilation, int64_t pad_begin, int64_t pad_end,
                   const char* axis) -> Sizes {
    const int64_t padded = int64_t(in) + pad_begin + pad_end;  // < 2^34: no overflow
    // The dilated window must fit in the padded input (the first test keeps the product small).
    if (win - 1 > padded / dilation || (win - 1) * dilation + 1 > padded)
      op.fail(str_cat("the dilated window is larger than the padded input ", axis, " (", padded, ")"));
    const int64_t span = padded - ((win - 1) * dilation + 1);
    return {span / stride + 1, (span + stride - 1) / stride + 1};
  };
  const Sizes h = sizes(H, window[0], strides[0], dilations[0], padding[0], padding[1], "height");
  const Sizes w = sizes(W, window[1], strides[1], dilations[1], padding[2], padding[3], "width");
  int64_t out_h, out_w;
  if (op.has("outputSizes")) {
    const auto& out = op.integers("outputSizes");
    if (out.size() != 2) op.fail(str_cat("outputSizes must have 2 values, got ", out.size()));
    if (out[0] == 0 || out[1] == 0) op.fail("outputSizes must be at least 1");
    const bool is_floor = out[0] == h.floor && out[1] == w.floor, is_ceil = out[0] == h.ceil && out[1] == w.ceil;
    if (!is_floor && !is_ceil)
      op.fail(str_cat("outputSizes [", out[0], ", ", out[1], "] must be the floor [", h.floor, ", ", w.floor,
                      "] or the ceil [", h.ceil, ", ", w.ceil, "] output size"));
    out_h = out[0];
    out_w = out[1];
  } else {
    const bool ceil = op.text("outputShapeRounding") == "ceil";
    out_h = ceil ? h.ceil : h.floor;
    out_w = ceil ? w.ceil : w.floor;
  }
  if (out_h > int64_t(kMaxDimension) || out_w > int64_t(kMaxDimension)) op.fail("the output size is too large");

  Pool2dShape r;
  r.params = {N, C, H, W, size_t(out_h), size_t(out_w), size_t(window[0]), size_t(window[1]),
              size_t(strides[0]), size_t(strides[1]), size_t(dilations[0]), size_t(dilations[1]),
              size_t(padding[0]), size_t(padding[2]), nhwc};
  const uint32_t OH = uint32_t(out_h), OW = uint32_t(out_w);
  r.output = nhwc ? std::vector<uint32_t>{N, OH, OW, C} : std::vector<uint32_t>{N, C, OH, OW};
  return r;
}

std::vector<OperandDescriptor> infer_pool2d(const OpView& op) {
  Pool2dShape shape = pool2d_shape(op);
  op.keep(shape.params);
  return {{op.operand("input").data_type, shape.output}};
}

template <PoolOp Op>
Kernel lower_pool2d(const OpView& op, const std::vector<OperandDescriptor>& outputs) {
  return make_pool2d_kernel(Op, outputs[0].data_type, op.attributes<Pool2dParams>());
}

template <PoolOp Op>
OpDef pool2d_def(const char* name, DataTypeSet types) {
  OpDef d{name,
          {{"input", ParamKind::kOperand}},
          {{"windowDimensions", ParamKind::kUintList},
           {"padding", ParamKind::kUintList, std::vector<int64_t>{0, 0, 0, 0}},
           {"strides", ParamKind::kUintList, std::vector<int64_t>{1, 1}},
           {"dilations", ParamKind::kUintList, std::vector<int64_t>{1, 1}},
           {"layout", ParamKind::kEnum, std::string("nchw"), {"nchw", "nhwc"}},
           {"outputShapeRounding", ParamKind::kEnum, std::string("floor"), {"floor", "ceil"}},
           {"outputSizes", ParamKind::kUintList}},
          {{"input", types, 4, 4}, {"output", types, 4, 4}},
          infer_pool2d,
          lower_pool2d<Op>};
  d.to_nhwc = [](Node& node, const std::vector<OperandInfo>& operands) {
    Attr& layout = node.args[size_t(node.def->argument_index("layout"))];
    if (std::get<std::string>(layout) != "nchw") return false;
    layout = std::string("nhwc");
    revalidate(node, operands);
    return true;
  };
  return d;
}

}  // namespace

const OpDef& averagePool2d_op() {
  static const OpDef def = pool2d_def<PoolOp::kAverage>("averagePool2d", kFloatTypes);
  return def;
}
const OpDef& l2Pool2d_op() {
  static const OpDef def = pool2d_def<PoolOp::kL2>("l2Pool2d", kFloatTypes);
  return def;
}
const OpDef& maxPool2d_op() {
  static const OpDef def = with_exact_results(pool2d_def<PoolOp::kMax>("maxPool2d", kAnyType));
  return def;
}

}  // namespace webnn
