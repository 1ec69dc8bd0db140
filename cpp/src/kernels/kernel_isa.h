// Shared by the per-ISA family implementations (<family>_impl.h), which are compiled once per ISA
// level: <family>/<family>_ref.cc, <family>_avx2.cc and <family>_avx512.cc define WEBNN_KERNEL_ISA (the
// namespace) and WEBNN_KERNEL_ISA_LEVEL (0 ref, 1 AVX2, 2 AVX-512) and include them.
//
// Everything these headers define has internal linkage (an unnamed namespace) or lives in the
// ISA's namespace, and they avoid out-of-line inline functions of other headers (kernel_util.h's
// load/store): otherwise the linker could keep an AVX-built copy of a shared inline function for
// the ref level too.
#pragma once
#if !defined(WEBNN_KERNEL_ISA) || !defined(WEBNN_KERNEL_ISA_LEVEL)
#error "define WEBNN_KERNEL_ISA and WEBNN_KERNEL_ISA_LEVEL before including a per-ISA implementation"
#endif
#include <cstring>
#include <type_traits>

#include "kernels/kernel_util.h"
#if WEBNN_KERNEL_ISA_LEVEL >= 1
#include "kernels/vector_math_simd.h"
#endif

namespace webnn {
namespace WEBNN_KERNEL_ISA {
namespace {

// kernel_util.h's load/store (float16 computes in float32 and rounds once), built for this ISA.
template <class T>
inline compute_t<T> cload(const T& v) {
  if constexpr (std::is_same_v<T, float16>) {
#if WEBNN_KERNEL_ISA_LEVEL >= 1
    return _cvtsh_ss(v.bits);
#else
    return half_to_float(v.bits);
#endif
  } else {
    return v;
  }
}
template <class T>
inline void cstore(T* p, compute_t<T> v) {
  if constexpr (std::is_same_v<T, float16>) {
#if WEBNN_KERNEL_ISA_LEVEL >= 1
    p->bits = _cvtss_sh(v, _MM_FROUND_TO_NEAREST_INT);
#else
    p->bits = float_to_half(v);
#endif
  } else {
    *p = v;
  }
}

#if WEBNN_KERNEL_ISA_LEVEL >= 1
using simd::kLanes;
using simd::VF;
using simd::VI;

template <class T>
constexpr bool kIsFloat = std::is_same_v<T, float> || std::is_same_v<T, float16>;

// The vector of kLanes elements of T: float and float16 load as VF, other types as Vec<T>.
template <class T, bool = kIsFloat<T>>
struct LaneVecOf {
  using type = VF;
};
template <class T>
struct LaneVecOf<T, false> {
  using type = simd::Vec<T>;
};
template <class T>
using LaneVec = typename LaneVecOf<T>::type;

template <class T>
inline LaneVec<T> vload(const T* p) {
  if constexpr (std::is_same_v<T, float16>) return simd::load_half(reinterpret_cast<const uint16_t*>(p));
  else return simd::load<LaneVec<T>>(p);
}
// A LaneVec<T> of kLanes copies of the compute value v (keeps -0).
template <class T>
inline LaneVec<T> vsplat(compute_t<T> v) {
  if constexpr (kIsFloat<T>) return simd::splat(v);
  else return LaneVec<T>{} + v;
}

inline void vstore(float* p, VF v) { simd::store(p, v); }
inline void vstore(float16* p, VF v) { simd::store_half(reinterpret_cast<uint16_t*>(p), v); }
template <class T>
inline void vstore(T* p, simd::Vec<T> v) {
  simd::store(p, v);
}
// Stores lane masks (all ones / zero, any lane width) as uint8 0 / 1.
template <class M>
inline void vstore_mask(uint8_t* p, M mask) {
  if constexpr (sizeof(mask[0]) == 4) simd::narrow_u8(p, VI(mask) & 1);
  else if constexpr (sizeof(mask[0]) == 1) simd::store(p, simd::Vec<uint8_t>(mask) & 1);
  else simd::store(p, __builtin_convertvector(mask, simd::Vec<uint8_t>) & 1);
}

// Runs `body(i, count)` over [0, n) in steps of kLanes, the last step short (count < kLanes).
template <class Body>
inline void for_lanes(size_t n, const Body& body) {
  size_t i = 0;
  for (; i + kLanes <= n; i += kLanes) body(i, kLanes);
  if (i < n) body(i, n - i);
}

// kLanes elements from src (count < kLanes: zero-padded), as LaneVec<T>.
// float uses a masked load (staging through memory cost a failed store forward: rows of 120 floats
// ran at half NumPy's speed); other types are staged.
template <class T>
inline LaneVec<T> vload_part(const T* src, size_t count) {
  if (count == kLanes) return vload(src);
  if constexpr (std::is_same_v<T, float>) return simd::load(src, simd::first_lanes(count));
  T staged[kLanes] = {};
  std::memcpy(staged, src, count * sizeof(T));
  return vload(staged);
}
// Stores the first `count` lanes of v: a LaneVec<T>, or with kMask a lane mask as uint8 0 / 1.
template <bool kMask, class T, class V>
inline void vstore_part(T* dst, V v, size_t count) {
  const auto put = [&](T* p) {
    if constexpr (kMask) vstore_mask(p, v);
    else vstore(p, v);
  };
  if (count == kLanes) return put(dst);
  if constexpr (!kMask && std::is_same_v<T, float>) return simd::store(dst, v, simd::first_lanes(count));
  T staged[kLanes];
  put(staged);
  std::memcpy(dst, staged, count * sizeof(T));
}
#endif

}  // namespace
}  // namespace WEBNN_KERNEL_ISA
}  // namespace webnn
