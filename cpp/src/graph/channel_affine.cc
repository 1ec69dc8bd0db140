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

namespace {

template <class T, class Load, class Store>
void scale_channels(const T* src, T* dst, size_t count, const ChannelAffine& map, size_t channels,
                    bool channel_major, Load load, Store store) {
  std::vector<float> scale(channels);
  for (size_t c = 0; c < channels; ++c) scale[c] = float(map.scale_at(c));
  if (channel_major) {
    const size_t block = count / channels;
    for (size_t c = 0; c < channels; ++c)
      for (size_t j = 0; j < block; ++j) dst[c * block + j] = store(load(src[c * block + j]) * scale[c]);
  } else {
    for (size_t i = 0; i < count; i += channels)
      for (size_t c = 0; c < channels; ++c) dst[i + c] = store(load(src[i + c]) * scale[c]);
  }
}

}  // namespace

int add_channel_scaled_constant(std::vector<OperandInfo>& operands, int source, const ChannelAffine& map,
                                size_t channels, bool channel_major) {
  const OperandInfo& info = operands[size_t(source)];
  const DataType type = info.desc.data_type;
  const size_t count = info.desc.element_count();
  if (info.kind != OperandInfo::Kind::kConstant || !info.constant_data || channels == 0 || count % channels != 0 ||
      (type != DataType::kFloat32 && type != DataType::kFloat16))
    return -1;
  OperandInfo scaled;
  scaled.kind = OperandInfo::Kind::kConstant;
  scaled.desc = info.desc;
  scaled.constant_data = std::make_shared<AlignedBuffer>(std::max<size_t>(info.desc.byte_length(), 1));
  if (type == DataType::kFloat32) {
    scale_channels(reinterpret_cast<const float*>(info.constant_data->data()),
                   reinterpret_cast<float*>(scaled.constant_data->data()), count, map, channels, channel_major,
                   [](float v) { return v; }, [](float v) { return v; });
  } else {
    scale_channels(reinterpret_cast<const uint16_t*>(info.constant_data->data()),
                   reinterpret_cast<uint16_t*>(scaled.constant_data->data()), count, map, channels, channel_major,
                   half_to_float, float_to_half);
  }
  operands.push_back(std::move(scaled));
  return int(operands.size()) - 1;
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
