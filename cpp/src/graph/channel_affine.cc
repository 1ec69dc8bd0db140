#include "graph/channel_affine.h"

#include "core/float16.h"
#include "graph/op_def.h"

namespace webnn {

std::vector<double> float_constant_values(const OperandInfo& info) {
  if (info.kind != OperandInfo::Kind::kConstant || !info.constant_data) return {};
  const size_t count = info.desc.element_count();
  std::vector<double> values(count);
  if (info.desc.data_type == DataType::kFloat32) {
    const float* data = reinterpret_cast<const float*>(info.constant_data->data());
    for (size_t i = 0; i < count; ++i) values[i] = data[i];
  } else if (info.desc.data_type == DataType::kFloat16) {
    const uint16_t* data = reinterpret_cast<const uint16_t*>(info.constant_data->data());
    for (size_t i = 0; i < count; ++i) values[i] = half_to_float(data[i]);
  } else {
    return {};
  }
  return values;
}

int add_float_constant(std::vector<OperandInfo>& operands, const OperandDescriptor& desc,
                       const std::vector<double>& values) {
  OperandInfo info;
  info.kind = OperandInfo::Kind::kConstant;
  info.desc = desc;
  info.constant_data = std::make_shared<AlignedBuffer>(std::max<size_t>(desc.byte_length(), 1));
  if (desc.data_type == DataType::kFloat32) {
    float* data = reinterpret_cast<float*>(info.constant_data->data());
    for (size_t i = 0; i < values.size(); ++i) data[i] = float(values[i]);
  } else {
    uint16_t* data = reinterpret_cast<uint16_t*>(info.constant_data->data());
    for (size_t i = 0; i < values.size(); ++i) data[i] = float_to_half(float(values[i]));
  }
  operands.push_back(std::move(info));
  return int(operands.size()) - 1;
}

}  // namespace webnn
