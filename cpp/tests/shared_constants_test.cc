// Shared constants: identical bytes give one buffer while it is held, different bytes (or bytes
// that differ in one place) stay apart, small buffers are not shared, and an entry goes with its
// last holder.
#include <cstring>

#include "core/shared_constants.h"
#include "tester.h"

using namespace webnn;
using webnn_test::expect;

namespace {

BufferPtr filled(size_t bytes, uint8_t seed) {
  auto buffer = std::make_shared<AlignedBuffer>(bytes);
  for (size_t i = 0; i < bytes; ++i) buffer->data()[i] = uint8_t(i * 31 + seed);
  return buffer;
}

}  // namespace

int main() {
  const SharedConstantStats before = shared_constant_stats();
  BufferPtr a = share_constant(filled(1 << 16, 1));
  BufferPtr b = share_constant(filled(1 << 16, 1));
  expect(a == b, "identical bytes were not shared");
  BufferPtr c = filled(1 << 16, 1);
  c->data()[12345] ^= 1;
  expect(share_constant(c) == c, "bytes differing in one place were shared");
  BufferPtr d = share_constant(filled(1 << 16, 2));
  expect(d != a, "different bytes were shared");
  BufferPtr longer = share_constant(filled((1 << 16) + 4, 1));
  expect(longer != a, "a longer buffer with the same prefix was shared");
  BufferPtr small = filled(1000, 1);
  expect(share_constant(small) == small && share_constant(filled(1000, 1)) != small, "a small buffer was shared");
  expect(share_constant(a) == a, "sharing a shared buffer again did not return it");
  const SharedConstantStats held = shared_constant_stats();
  expect(held.buffers == before.buffers + 4 && held.bytes == before.bytes + 4 * (1 << 16) + 4,
         "the registry does not count the four live buffers");
  a.reset();
  b.reset();
  expect(shared_constant_stats().buffers == before.buffers + 3, "an entry outlived its last holder");
  BufferPtr again = filled(1 << 16, 1);
  expect(share_constant(again) == again, "a released entry was handed out");
  return webnn_test::tester_exit("shared_constants_test");
}
