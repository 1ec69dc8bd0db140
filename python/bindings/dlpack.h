// The DLPack ABI (https://dmlc.github.io/dlpack/latest/c_api.html, v1.1): the structs an exporter
// fills and hands to the consumer in a PyCapsule.
#pragma once
#include <cstdint>

namespace webnn_py::dlpack {

constexpr int32_t kDeviceCpu = 1;
constexpr uint8_t kInt = 0, kUInt = 1, kFloat = 2;
constexpr uint32_t kMajorVersion = 1, kMinorVersion = 1;
constexpr uint64_t kFlagReadOnly = uint64_t(1) << 0;

struct Device {
  int32_t device_type;
  int32_t device_id;
};
struct DataType {
  uint8_t code;
  uint8_t bits;
  uint16_t lanes;
};
struct Tensor {
  void* data;
  Device device;
  int32_t ndim;
  DataType dtype;
  int64_t* shape;
  int64_t* strides;  // in elements
  uint64_t byte_offset;
};
struct ManagedTensor {  // capsule "dltensor"
  Tensor dl_tensor;
  void* manager_ctx;
  void (*deleter)(ManagedTensor* self);
};
struct PackVersion {
  uint32_t major;
  uint32_t minor;
};
struct ManagedTensorVersioned {  // capsule "dltensor_versioned"
  PackVersion version;
  void* manager_ctx;
  void (*deleter)(ManagedTensorVersioned* self);
  uint64_t flags;
  Tensor dl_tensor;
};

}  // namespace webnn_py::dlpack
