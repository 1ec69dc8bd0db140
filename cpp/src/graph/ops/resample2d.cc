// resample2d: resizes two axes of a 4-D input, by `sizes` or else by `scales`.
#include <cmath>

#include "graph/op_def.h"
#include "kernels/resample/resample.h"

namespace webnn {

namespace {

constexpr DataTypeSet kResampleTypes = kFloatTypes | type_bit(DataType::kInt8) | type_bit(DataType::kUint8);

struct Resample2dShape {
  Resample2dParams params;
  std::vector<uint32_t> output;
};

Resample2dShape resample2d_shape(const OpView& op) {
  const auto& input = op.operand("input");
  const auto& scales = op.reals("scales");
  const auto& axes = op.integers("axes");
  if (scales.size() != 2) op.fail(str_cat("scales must have 2 values, got ", scales.size()));
  if (scales[0] <= 0 || scales[1] <= 0) op.fail("scales must be greater than 0");
  if (axes.size() != 2) op.fail(str_cat("axes must have 2 values, got ", axes.size()));
  if (axes[0] >= 4 || axes[1] >= 4) op.fail("axes values must be less than 4 (the input rank)");
  if (axes[0] == axes[1]) op.fail(str_cat("axes contains ", axes[0], " twice"));
  const bool has_sizes = op.has("sizes");
  if (has_sizes) {
    const auto& sizes = op.integers("sizes");
    if (sizes.size() != 2) op.fail(str_cat("sizes must have 2 values, got ", sizes.size()));
    if (sizes[0] == 0 || sizes[1] == 0) op.fail("sizes must be at least 1");
  }

  Resample2dShape r;
  r.output = input.shape;
  for (size_t i = 0; i < 2; ++i) {
    const uint32_t in = input.shape[axes[i]];
    // The spec maps coordinates with outputSize / inputSize, whether the size came from `sizes` or
    // from floor(inputSize * scales[i]) (scales 1.5 on 3 elements maps with 4 / 3, not 1.5).
    const double size = has_sizes ? double(op.integers("sizes")[i]) : std::floor(double(in) * scales[i]);
    if (size < 1 || size > double(kMaxDimension))
      op.fail(str_cat("the output size along axis ", axes[i], " (", size, ") is not a valid dimension"));
    r.output[axes[i]] = uint32_t(size);
    r.params.axes[i] = size_t(axes[i]);
    r.params.scales[i] = size / double(in);
  }
  r.params.input_shape = input.shape;
  r.params.output_shape = r.output;
  r.params.linear = op.text("mode") == "linear";
  return r;
}

std::vector<OperandDescriptor> infer_resample2d(const OpView& op) {
  Resample2dShape shape = resample2d_shape(op);
  op.keep(shape.params);
  return {{op.operand("input").data_type, shape.output}};
}

Kernel lower_resample2d(const OpView& op, const std::vector<OperandDescriptor>& outputs) {
  return make_resample2d_kernel(outputs[0].data_type, op.attributes<Resample2dParams>());
}

}  // namespace

const OpDef& resample2d_op() {
  static const OpDef def = [] {
    OpDef d{"resample2d",
            {{"input", ParamKind::kOperand}},
            {{"mode", ParamKind::kEnum, std::string("nearest-neighbor"), {"nearest-neighbor", "linear"}},
             {"scales", ParamKind::kFloatList, std::vector<double>{1.0, 1.0}},
             {"sizes", ParamKind::kUintList},
             {"axes", ParamKind::kUintList, std::vector<int64_t>{2, 3}}},
            {{"input", kResampleTypes, 4, 4}, {"output", kResampleTypes, 4, 4}},
            infer_resample2d,
            lower_resample2d};
    d.to_nhwc = [](Node& node, const std::vector<OperandInfo>& operands) {
      // The spatial axes (H, W) only: they stay in order in NHWC.
      Attr& axes = node.args[size_t(node.def->argument_index("axes"))];
      const auto* given = std::get_if<std::vector<int64_t>>(&axes);
      if (given && *given != std::vector<int64_t>{2, 3}) return false;
      axes = std::vector<int64_t>{1, 2};
      revalidate(node, operands);
      return true;
    };
    return d;
  }();
  return def;
}

}  // namespace webnn
