// quantizedMatmul (made by the compiler, not a builder method: compiler/passes/quantized_ops.cc):
// matmul(dequantizeLinear(a, aScale, aZeroPoint), dequantizeLinear(b, bScale, bZeroPoint)) with a
// float32 result, on integers. a is 8-bit [..., M, K] with one scale and one zero point, constants or
// values computed at run time (a dynamically quantized input: read at each dispatch); b is an 8-bit
// constant [K, N] with constant per-tensor or per-column parameters. The kernel (kernels/int8) sums
// (a - za)(b - zb) exactly in int32 and multiplies each sum by sa * sb once: the float path's product,
// rounded once instead of at each of its K steps (docs/quantization.md).
#include <cmath>

#include "graph/op_def.h"
#include "kernels/int8/int8_conv.h"

namespace webnn {

namespace {

size_t elements(const OperandDescriptor& desc) {
  size_t count = 1;
  for (uint32_t d : desc.shape) count *= d;
  return count;
}

// A constant 8-bit or float32 operand's values (as double), checked to hold `count` of them or one.
std::vector<double> constant_values(const OpView& op, const char* name, size_t count) {
  const OperandInfo& info = op.info(name);
  if (info.kind != OperandInfo::Kind::kConstant || !info.constant_data) op.fail(str_cat(name, " must be a constant"));
  const size_t n = elements(info.desc);
  if (n != 1 && n != count) op.fail(str_cat(name, " must hold one value or one per column (", count, ")"));
  std::vector<double> values(n);
  const uint8_t* data = info.constant_data->data();
  for (size_t i = 0; i < n; ++i) {
    switch (info.desc.data_type) {
      case DataType::kFloat32: values[i] = reinterpret_cast<const float*>(data)[i]; break;
      case DataType::kInt8: values[i] = int8_t(data[i]); break;
      default: values[i] = data[i]; break;
    }
  }
  return values;
}

std::vector<OperandDescriptor> infer_quantized_matmul(const OpView& op) {
  const OperandDescriptor& a = op.operand("a");
  const OperandDescriptor& b = op.operand("b");
  if (elements(op.operand("aScale")) != 1 || elements(op.operand("aZeroPoint")) != 1)
    op.fail("aScale and aZeroPoint must hold one value each");
  if (b.shape.size() != 2) op.fail("b must be a matrix");
  const size_t K = b.shape[0], N = b.shape[1];
  if (a.shape.back() != K) op.fail(str_cat("a's last dim (", a.shape.back(), ") must equal b's rows (", K, ")"));
  if (K > kInt8MaxExactK) op.fail("K is too large for exact int32 sums");
  if (!op.info("b").constant_data) op.fail("b must be a constant");
  size_t rows = 1;
  for (size_t d = 0; d + 1 < a.shape.size(); ++d) rows *= a.shape[d];
  // [rows, K] x [K, N]: a 1x1 NHWC convolution of a rows x 1 image with K channels by an hwio filter.
  Conv2dParams params{1, K, rows, 1, N, rows, 1, 1, 1, 1, 1, 1, 1, 0, 0, 1, true, "hwio", false};
  Conv2dQuantization q;
  q.input_type = a.data_type;
  q.filter_type = b.data_type;
  q.input_scale = 1.0f;  // (read at each dispatch)
  q.input_zero = 0;
  const std::vector<double> scales = constant_values(op, "bScale", N), zeros = constant_values(op, "bZeroPoint", N);
  for (size_t o = 0; o < N; ++o) {
    q.filter_scale.push_back(float(scales[scales.size() == 1 ? 0 : o]));
    q.filter_zero.push_back(int32_t(zeros[zeros.size() == 1 ? 0 : o]));
  }
  q.output_type = DataType::kFloat32;
  q.output_scale = 1.0f;
  q.output_zero = 0;
  q.float_output = true;
  q.runtime_input_parameters = true;
  params.quantization = std::make_shared<const Conv2dQuantization>(std::move(q));
  op.keep(params);
  std::vector<uint32_t> shape(a.shape.begin(), a.shape.end() - 1);
  shape.push_back(uint32_t(N));
  return {{DataType::kFloat32, shape}};
}

Kernel lower_quantized_matmul(const OpView& op, const std::vector<OperandDescriptor>&) {
  for (const char* name : {"b", "bScale", "bZeroPoint"}) op.mark_copied_constant(name);
  Conv2dParams params = op.attributes<Conv2dParams>();
  // What epilogue fusion gave the float result: an addend (the kernel's last input), a clamp, an activation.
  Conv2dQuantization q = *params.quantization;
  const Epilogue& epilogue = op.epilogue();
  q.addend = epilogue.has_residual()      ? Conv2dQuantization::Addend::kResidual
             : epilogue.has_column_bias() ? Conv2dQuantization::Addend::kRow
                                          : Conv2dQuantization::Addend::kNone;
  q.addend_input = 6;  // after a, aScale, aZeroPoint, b, bScale, bZeroPoint
  q.min = epilogue.clamp_min;
  q.max = epilogue.clamp_max;
  q.activation = epilogue.activation;
  params.quantization = std::make_shared<const Conv2dQuantization>(std::move(q));
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
