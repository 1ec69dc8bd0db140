// The compiler-made quantized products' shared validation (graph/ops/quantized_common.h).
#include "graph/ops/quantized_common.h"

namespace webnn {

namespace {

size_t elements(const OperandDescriptor& desc) {
  size_t count = 1;
  for (uint32_t d : desc.shape) count *= d;
  return count;
}

// A constant 8-bit or float32 operand's values (as double), checked to hold one or `count`.
std::vector<double> constant_values(const OpView& op, const char* name, size_t count) {
  const OperandInfo& info = op.info(name);
  if (info.kind != OperandInfo::Kind::kConstant || !info.constant_data) op.fail(str_cat(name, " must be a constant"));
  const size_t n = elements(info.desc);
  if (n != 1 && n != count) op.fail(str_cat(name, " must hold one value or one per output channel (", count, ")"));
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

}  // namespace

Conv2dQuantization float_product_quantization(const OpView& op, const char* weight, const char* scale,
                                              const char* zero, size_t channels) {
  const std::string input = op.def().params[0].name;
  if (elements(op.operand(input + "Scale")) != 1 || elements(op.operand(input + "ZeroPoint")) != 1)
    op.fail(str_cat(input, "Scale and ", input, "ZeroPoint must hold one value each"));
  if (!op.info(weight).constant_data) op.fail(str_cat(weight, " must be a constant"));
  Conv2dQuantization q;
  q.input_type = op.operand(input).data_type;
  q.filter_type = op.operand(weight).data_type;
  q.input_scale = 1.0f;  // (read at each dispatch)
  q.input_zero = 0;
  const std::vector<double> scales = constant_values(op, scale, channels), zeros = constant_values(op, zero, channels);
  for (size_t o = 0; o < channels; ++o) {
    q.filter_scale.push_back(float(scales[scales.size() == 1 ? 0 : o]));
    q.filter_zero.push_back(int32_t(zeros[zeros.size() == 1 ? 0 : o]));
  }
  q.output_type = DataType::kFloat32;
  q.output_scale = 1.0f;
  q.output_zero = 0;
  q.float_output = true;
  q.runtime_input_parameters = true;
  return q;
}

void take_float_epilogue(const OpView& op, size_t addend_input, Conv2dParams& params) {
  Conv2dQuantization q = *params.quantization;
  const Epilogue& epilogue = op.epilogue();
  q.addend = epilogue.has_residual()      ? Conv2dQuantization::Addend::kResidual
             : epilogue.has_column_bias() ? Conv2dQuantization::Addend::kRow
                                          : Conv2dQuantization::Addend::kNone;
  q.addend_input = addend_input;
  q.min = epilogue.clamp_min;
  q.max = epilogue.clamp_max;
  q.activation = epilogue.activation;
  params.quantization = std::make_shared<const Conv2dQuantization>(std::move(q));
}

}  // namespace webnn
