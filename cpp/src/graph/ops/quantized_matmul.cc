// quantizedMatmul (made by the compiler, not a builder method: compiler/passes/quantized_ops.cc):
// matmul(dequantizeLinear(a, aScale, aZeroPoint), dequantizeLinear(b, bScale, bZeroPoint)) with a
// float32 result, on integers. a is 8-bit [..., M, K] with one scale and one zero point, constants or
// values computed at run time (a dynamically quantized input: read at each dispatch); b is an 8-bit
// constant [K, N] with constant per-tensor or per-column parameters. The kernel (kernels/int8) sums
// (a - za)(b - zb) exactly in int32 and multiplies each sum by sa * sb once: the float path's product,
// rounded once instead of at each of its K steps (docs/quantization.md).
#include "graph/ops/quantized_common.h"
#include "kernels/int8/int8_conv.h"

namespace webnn {

namespace {

std::vector<OperandDescriptor> infer_quantized_matmul(const OpView& op) {
  const OperandDescriptor& a = op.operand("a");
  const OperandDescriptor& b = op.operand("b");
  if (b.shape.size() != 2) op.fail("b must be a matrix");
  const size_t K = b.shape[0], N = b.shape[1];
  if (a.shape.back() != K) op.fail(str_cat("a's last dim (", a.shape.back(), ") must equal b's rows (", K, ")"));
  if (K > kInt8MaxExactK) op.fail("K is too large for exact int32 sums");
  size_t rows = 1;
  for (size_t d = 0; d + 1 < a.shape.size(); ++d) rows *= a.shape[d];
  // [rows, K] x [K, N]: a 1x1 NHWC convolution of a rows x 1 image with K channels by an hwio filter.
  Conv2dParams params{1, K, rows, 1, N, rows, 1, 1, 1, 1, 1, 1, 1, 0, 0, 1, true, "hwio", false};
  Conv2dQuantization q = float_product_quantization(op, "b", "bScale", "bZeroPoint", N);
  params.quantization = std::make_shared<const Conv2dQuantization>(std::move(q));
  op.keep(params);
  std::vector<uint32_t> shape(a.shape.begin(), a.shape.end() - 1);
  shape.push_back(uint32_t(N));
  return {{DataType::kFloat32, shape}};
}

Kernel lower_quantized_matmul(const OpView& op, const std::vector<OperandDescriptor>&) {
  for (const char* name : {"b", "bScale", "bZeroPoint"}) op.mark_copied_constant(name);
  Conv2dParams params = op.attributes<Conv2dParams>();
  take_float_epilogue(op, 6, params);  // the addend after a, aScale, aZeroPoint, b, bScale, bZeroPoint
  return make_int8_conv2d_kernel(params, op.info("b").constant_data->data(), nullptr);
}

}  // namespace

const OpDef& quantized_matmul_op() {
  constexpr DataTypeSet k8bit = type_bit(DataType::kUint8) | type_bit(DataType::kInt8);
  constexpr DataTypeSet kFloat32 = type_bit(DataType::kFloat32);
  static const OpDef def{"quantizedMatmul",
                         {{"a", ParamKind::kOperand},
                          {"aScale", ParamKind::kOperand},
                          {"aZeroPoint", ParamKind::kOperand},
                          {"b", ParamKind::kOperand},
                          {"bScale", ParamKind::kOperand},
                          {"bZeroPoint", ParamKind::kOperand}},
                         {},
                         {{"a", k8bit, 2, kAnyRank},
                          {"aScale", kFloat32, 0, kAnyRank},
                          {"aZeroPoint", k8bit, 0, kAnyRank, "a"},
                          {"b", k8bit, 2, 2},
                          {"bScale", kFloat32, 0, 2},
                          {"bZeroPoint", k8bit, 0, 2, "b"},
                          {"output", kFloat32, 2, kAnyRank}},
                         infer_quantized_matmul,
                         lower_quantized_matmul,
                         1,
                         false,
                         // the float32 result's epilogue, as matmul's
                         [](const OpView&) {
                           return uint32_t(kEpilogueClamp | kEpilogueResidual | kEpilogueColumnBias |
                                           kEpilogueActivation);
                         }};
  return def;
}

}  // namespace webnn
