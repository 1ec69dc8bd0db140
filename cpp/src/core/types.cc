#include <webnn/webnn.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <new>
#if defined(__GLIBC__)
#include <malloc.h>
#endif
#if defined(__linux__)
#include <sys/mman.h>
#endif

#include "core/common.h"

namespace webnn {

namespace {
struct DataTypeRow {
  const char* name;
  size_t size;
};
constexpr DataTypeRow kDataTypes[kDataTypeCount] = {
    {"float32", 4}, {"float16", 2}, {"int32", 4}, {"uint32", 4},
    {"int64", 8},   {"uint64", 8},  {"int8", 1},  {"uint8", 1},
    {"int4", 1},    {"uint4", 1},
};
}  // namespace

const char* data_type_name(DataType type) { return kDataTypes[int(type)].name; }
size_t data_type_size(DataType type) { return kDataTypes[int(type)].size; }

std::optional<DataType> parse_data_type(const std::string& name) {
  for (int i = 0; i < kDataTypeCount; ++i)
    if (name == kDataTypes[i].name) return DataType(i);
  return std::nullopt;
}

size_t OperandDescriptor::element_count() const { return webnn::element_count(shape); }

std::string shape_to_string(const std::vector<uint32_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

std::string OperandDescriptor::to_string() const {
  if (!is_dynamic())
    return str_cat("{dataType: ", data_type_name(data_type), ", shape: ", shape_to_string(shape), "}");
  std::string dims = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    dims += i ? ", " : "";
    const DynamicDimension* d = i < dynamic.size() && dynamic[i].dynamic() ? &dynamic[i] : nullptr;
    if (!d) dims += std::to_string(shape[i]);
    else dims += str_cat(d->name.empty() ? "?" : d->name, d->max_size == kUnboundedDimension ? "" : str_cat("<=", d->max_size));
  }
  return str_cat("{dataType: ", data_type_name(data_type), ", shape: ", dims, "]}");
}

// Zeroed by calloc, which skips the memset for fresh pages from the OS (large buffers): their pages
// are then touched once, by whoever fills them, not twice.
AlignedBuffer::AlignedBuffer(size_t bytes) : size_(bytes) {
#if defined(__linux__)
  constexpr size_t kHugePage = size_t(2) << 20;
  if (bytes >= kHugePage) {
    const size_t huge_bytes = (bytes + kHugePage - 1) / kHugePage * kHugePage;
    mapped_bytes_ = huge_bytes + kHugePage;  // room to start on a huge-page boundary
    allocation_ = mmap(nullptr, mapped_bytes_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (allocation_ == MAP_FAILED) {
      allocation_ = nullptr;
      mapped_bytes_ = 0;
      throw Error(ErrorKind::kUnknownError, str_cat("out of memory allocating ", bytes, " bytes"));
    }
    const uintptr_t address = reinterpret_cast<uintptr_t>(allocation_);
    data_ = reinterpret_cast<uint8_t*>((address + kHugePage - 1) / kHugePage * kHugePage);
    madvise(data_, huge_bytes, MADV_HUGEPAGE);  // a hint: without THP the pages stay 4 KiB
    return;
  }
#endif
  const size_t rounded = std::max<size_t>((bytes + kAlignment - 1) / kAlignment * kAlignment, kAlignment);
  allocation_ = std::calloc(1, rounded + kAlignment);
  if (!allocation_) throw Error(ErrorKind::kUnknownError, str_cat("out of memory allocating ", bytes, " bytes"));
  const uintptr_t address = reinterpret_cast<uintptr_t>(allocation_);
  data_ = reinterpret_cast<uint8_t*>((address + kAlignment - 1) / kAlignment * kAlignment);
}
AlignedBuffer::~AlignedBuffer() {
#if defined(__linux__)
  if (mapped_bytes_) {
    munmap(allocation_, mapped_bytes_);
    return;
  }
#endif
  std::free(allocation_);
}

void release_free_memory() {
#if defined(__GLIBC__)
  malloc_trim(0);
#endif
}

void check_element_values(DataType type, const void* data, size_t byte_length, const std::string& what) {
  if (type != DataType::kInt4 && type != DataType::kUint4) return;
  const int lo = type == DataType::kInt4 ? -8 : 0, hi = type == DataType::kInt4 ? 7 : 15;
  const auto* bytes = static_cast<const uint8_t*>(data);
  for (size_t i = 0; i < byte_length; ++i) {
    const int v = type == DataType::kInt4 ? int(int8_t(bytes[i])) : int(bytes[i]);
    if (v < lo || v > hi)
      throw_type_error(str_cat(what, ": element ", i, " is ", v, ", outside the ", data_type_name(type), " range [",
                               lo, ", ", hi, "]"));
  }
}

void check_dimensions(const OperandDescriptor& descriptor, const std::string& what) {
  if (descriptor.is_dynamic()) throw_type_error(what + ": dynamic dimensions are only allowed in graph inputs");
  if (descriptor.shape.size() > kMaxRank)
    throw_type_error(str_cat(what, ": rank ", descriptor.shape.size(), " exceeds the maximum rank ", kMaxRank));
  uint64_t count = 1;
  for (uint32_t d : descriptor.shape) {
    if (d == 0) throw_type_error(str_cat(what, ": shape ", shape_to_string(descriptor.shape), " has a zero dimension"));
    count *= d;
    if (count > kMaxDimension)
      throw_type_error(str_cat(what, ": shape ", shape_to_string(descriptor.shape),
                               " has more than 2^31-1 elements"));
  }
  if (count * data_type_size(descriptor.data_type) > kMaxTensorByteLength)
    throw_type_error(str_cat(what, ": byte length exceeds the maximum of ", kMaxTensorByteLength));
}

bool broadcast_shapes(const std::vector<uint32_t>& a, const std::vector<uint32_t>& b, std::vector<uint32_t>* out) {
  size_t rank = std::max(a.size(), b.size());
  std::vector<uint32_t> result(rank);
  for (size_t i = 0; i < rank; ++i) {
    uint32_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    uint32_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (da != db && da != 1 && db != 1) return false;
    result[i] = da == 1 ? db : da;
  }
  *out = std::move(result);
  return true;
}

bool broadcastable_to(const std::vector<uint32_t>& from, const std::vector<uint32_t>& to) {
  if (from.size() > to.size()) return false;
  size_t offset = to.size() - from.size();
  for (size_t i = 0; i < from.size(); ++i)
    if (from[i] != 1 && from[i] != to[i + offset]) return false;
  return true;
}

std::vector<size_t> broadcast_strides(const std::vector<uint32_t>& shape, size_t rank) {
  std::vector<size_t> strides(rank, 0);
  size_t stride = 1;
  for (size_t i = 0; i < shape.size(); ++i) {
    size_t src = shape.size() - 1 - i;
    size_t dst = rank - 1 - i;
    strides[dst] = shape[src] == 1 ? 0 : stride;
    stride *= shape[src];
  }
  return strides;
}

std::string version() { return WEBNN_VERSION_STRING; }

}  // namespace webnn
