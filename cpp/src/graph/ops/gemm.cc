// gemm: alpha * A' * B' + beta * C for 2-D a and b, optional transposes, c broadcast to [M, N].
#include "graph/op_def.h"
#include "kernels/gemm/gemm_op.h"
#include "kernels/int8/int8_conv.h"

namespace webnn {

namespace {

GemmOpParams gemm_params(const OpView& op) {
  const auto& a = op.operand("a").shape;
  const auto& b = op.operand("b").shape;
  GemmOpParams p{};
  p.a_transpose = op.flag("aTranspose");
  p.b_transpose = op.flag("bTranspose");
  p.m = p.a_transpose ? a[1] : a[0];
  p.k = p.a_transpose ? a[0] : a[1];
  const size_t b_rows = p.b_transpose ? b[1] : b[0];
  p.n = p.b_transpose ? b[0] : b[1];
  if (p.k != b_rows)
    op.fail(str_cat("the inner dimensions of a (", p.k, ") and b (", b_rows, ") must match, after the transposes"));
  p.has_c = op.has("c");
  if (p.has_c) {
    const auto& c = op.operand("c").shape;
    const std::vector<uint32_t> mn{uint32_t(p.m), uint32_t(p.n)};
    if (!broadcastable_to(c, mn))
      op.fail(str_cat("c ", shape_to_string(c), " is not broadcastable to ", shape_to_string(mn)));
    const auto strides = broadcast_strides(c, 2);
    p.c_stride_m = strides[0];
    p.c_stride_n = strides[1];
  }
  // CR-scalars: alpha and beta take the operand data type.
  const DataType type = op.operand("a").data_type;
  p.alpha = float(number_to_double_as(Number::from_double(op.real("alpha")), type));
  p.beta = float(number_to_double_as(Number::from_double(op.real("beta")), type));
  return p;
}

std::vector<OperandDescriptor> infer_gemm(const OpView& op) {
  const GemmOpParams p = gemm_params(op);
  op.keep(p);
  return {{op.operand("a").data_type, {uint32_t(p.m), uint32_t(p.n)}}};
}

Kernel lower_gemm(const OpView& op, const std::vector<OperandDescriptor>& outputs) {
  const OperandInfo& b = op.info("b");
  // The quantized_ops pass made it an integer product of 8-bit values: a 1x1 NHWC convolution
  // (alpha in its filter scales, c the float32 bias row beta * c).
  if (const auto* quantized = dynamic_cast<const KeptAs<Conv2dParams>*>(op.kept().get())) {
    if (!b.constant_data) op.fail("internal: a quantized gemm needs a constant b");
    op.mark_copied_constant("b");
    const float* bias = nullptr;
    if (op.has("c")) {
      const OperandInfo& c = op.info("c");
      if (!c.constant_data || c.desc.data_type != DataType::kFloat32) op.fail("internal: a quantized gemm's c is a float32 constant");
      bias = reinterpret_cast<const float*>(c.constant_data->data());
    }
    return make_int8_conv2d_kernel(quantized->value, b.constant_data->data(), bias);
  }
  if (b.constant_data) op.mark_copied_constant("b");  // packed at build
  return make_gemm_op_kernel(outputs[0].data_type, op.attributes<GemmOpParams>(), b.constant_data ? b.constant_data->data() : nullptr);
}

}  // namespace

const OpDef& gemm_op() {
  static const OpDef def{
      "gemm",
      {{"a", ParamKind::kOperand}, {"b", ParamKind::kOperand}},
      {{"c", ParamKind::kOptionalOperand},
       {"alpha", ParamKind::kDouble, 1.0},
       {"beta", ParamKind::kDouble, 1.0},
       {"aTranspose", ParamKind::kBool, false},
       {"bTranspose", ParamKind::kBool, false}},
      {{"a", kFloatTypes, 2, 2},
       {"b", kFloatTypes, 2, 2, "a"},
       {"c", kFloatTypes, 0, 2, "a"},
       {"output", kFloatTypes, 2, 2}},
      infer_gemm,
      lower_gemm};
  return def;
}

}  // namespace webnn
