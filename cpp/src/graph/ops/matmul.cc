// matmul: batched matrix product with broadcast batch dims.
#include "graph/op_def.h"
#include "kernels/gemm/gemm.h"
#include "kernels/int8/int8_conv.h"

namespace webnn {

namespace {

std::vector<OperandDescriptor> infer_matmul(const OpView& op) {
  const auto& a = op.operand("a");
  const auto& b = op.operand("b");
  const size_t ra = a.shape.size(), rb = b.shape.size();
  if (a.shape[ra - 1] != b.shape[rb - 2])
    op.fail(str_cat("a.shape[-1] (", a.shape[ra - 1], ") must equal b.shape[-2] (", b.shape[rb - 2], ")"));
  std::vector<uint32_t> batch;
  if (!broadcast_shapes({a.shape.begin(), a.shape.end() - 2}, {b.shape.begin(), b.shape.end() - 2}, &batch))
    op.fail(str_cat("the batch dims of ", shape_to_string(a.shape), " and ", shape_to_string(b.shape),
                    " do not broadcast"));
  batch.push_back(a.shape[ra - 2]);
  batch.push_back(b.shape[rb - 1]);
  return {{a.data_type, batch}};
}

Kernel lower_matmul(const OpView& op, const std::vector<OperandDescriptor>& outputs) {
  const OperandInfo& b = op.info("b");
  // The quantized_ops pass made it an integer product of 8-bit values: a 1x1 NHWC convolution.
  if (const auto* quantized = dynamic_cast<const KeptAs<Conv2dParams>*>(op.kept().get())) {
    if (!b.constant_data) op.fail("internal: a quantized matmul needs a constant b");
    op.mark_copied_constant("b");
    return make_int8_conv2d_kernel(quantized->value, b.constant_data->data(), nullptr);
  }
  MatmulEpilogue epilogue;
  epilogue.residual = op.epilogue().has_residual();
  epilogue.column_bias = op.epilogue().has_column_bias();
  epilogue.min = op.epilogue().clamp_min;
  epilogue.max = op.epilogue().clamp_max;
  epilogue.activation = op.epilogue().activation;
  if (b.constant_data) op.mark_copied_constant("b");  // packed at build
  return make_matmul_kernel(outputs[0].data_type, op.operand("a").shape, b.desc.shape, outputs[0].shape,
                            b.constant_data ? b.constant_data->data() : nullptr, epilogue);
}

uint32_t matmul_epilogue_support(const OpView& op) {
  return op.operand("a").data_type == DataType::kFloat32
             ? kEpilogueClamp | kEpilogueResidual | kEpilogueColumnBias | kEpilogueActivation
             : kEpilogueNone;
}

}  // namespace

const OpDef& matmul_op() {
  static const OpDef def{
      "matmul",
      {{"a", ParamKind::kOperand}, {"b", ParamKind::kOperand}},
      {},
      {{"a", kFloatTypes, 2, kAnyRank}, {"b", kFloatTypes, 2, kAnyRank, "a"}, {"output", kFloatTypes, 2, kAnyRank}},
      infer_matmul,
      lower_matmul,
      1,
      false,
      matmul_epilogue_support};
  return def;
}

}  // namespace webnn
