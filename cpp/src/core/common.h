// Shared internals: error helpers, aligned buffers, shape arithmetic.
#pragma once
#include <webnn/webnn.h>

#include <cstdlib>
#include <cstring>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

namespace webnn {

constexpr uint32_t kMaxRank = 8;
constexpr uint64_t kMaxDimension = 2147483647ull;  // the spec's "valid dimension" bound
constexpr uint64_t kMaxTensorByteLength = uint64_t(1) << 34;  // 16 GiB
constexpr size_t kAlignment = 64;

[[noreturn]] inline void throw_error(ErrorKind kind, const std::string& message) { throw Error(kind, message); }
[[noreturn]] inline void throw_type_error(const std::string& message) { throw Error(ErrorKind::kTypeError, message); }

template <class... Args>
std::string str_cat(const Args&... args) {
  std::ostringstream out;
  (out << ... << args);
  return out.str();
}

std::string shape_to_string(const std::vector<uint32_t>& shape);

// 64-byte aligned, zero-initialised storage. Buffers of 2 MiB and more are mapped on their own,
// 2 MiB aligned and marked for transparent huge pages (Linux): weights and activations streamed from
// DRAM then cross no 4 KiB page boundaries, where the hardware prefetcher stops, and a first run
// takes one page fault per 2 MiB instead of 512.
class AlignedBuffer {
 public:
  explicit AlignedBuffer(size_t bytes);
  // A view of `bytes` bytes at `data`, kept valid by `owner` (a memory-mapped weights file): no copy.
  // Aligned only as its owner placed it (at least to the element size of what it holds).
  AlignedBuffer(std::shared_ptr<const void> owner, uint8_t* data, size_t bytes)
      : owner_(std::move(owner)), data_(data), size_(bytes) {}
  ~AlignedBuffer();
  AlignedBuffer(const AlignedBuffer&) = delete;
  AlignedBuffer& operator=(const AlignedBuffer&) = delete;
  uint8_t* data() { return data_; }
  const uint8_t* data() const { return data_; }
  size_t size() const { return size_; }

 private:
  std::shared_ptr<const void> owner_;  // a view's owner; then allocation_ is null
  void* allocation_ = nullptr;  // calloc's block (or the mapping); data_ is its first aligned byte
  size_t mapped_bytes_ = 0;     // > 0: allocation_ is a mapping of this length
  uint8_t* data_ = nullptr;
  size_t size_ = 0;
};
using BufferPtr = std::shared_ptr<AlignedBuffer>;

// Returns freed heap memory to the OS (glibc keeps it otherwise: after a model's import and
// packing, most of the process's RSS). A no-op elsewhere.
void release_free_memory();

// int4/uint4 data (one value per byte) must lie in [-8, 7] / [0, 15]; throws TypeError naming
// the first value outside. Other types accept every bit pattern.
void check_element_values(DataType type, const void* data, size_t byte_length, const std::string& what);

// Checks the spec's "check dimensions"; throws TypeError prefixed with `what`.
void check_dimensions(const OperandDescriptor& descriptor, const std::string& what);

// Element count as size_t; callers have already checked the descriptor.
inline size_t element_count(const std::vector<uint32_t>& shape) {
  size_t n = 1;
  for (uint32_t d : shape) n *= d;
  return n;
}

// Bidirectional (numpy) broadcast; returns false when incompatible.
bool broadcast_shapes(const std::vector<uint32_t>& a, const std::vector<uint32_t>& b, std::vector<uint32_t>* out);
// Unidirectional broadcast of `from` to `to`.
bool broadcastable_to(const std::vector<uint32_t>& from, const std::vector<uint32_t>& to);

// Row-major strides of `shape` aligned to the trailing dims of a rank-`rank` shape, with 0 on
// broadcast dims (size 1 in `shape` or missing).
std::vector<size_t> broadcast_strides(const std::vector<uint32_t>& shape, size_t rank);

// The spec's cast algorithm for scalar parameters (MLNumber -> dataType), written to `out`.
void cast_number_to(const Number& value, DataType type, void* out);
// The same, read back as double / exact int64 for kernels that take scalar parameters.
double number_to_double_as(const Number& value, DataType type);

}  // namespace webnn
