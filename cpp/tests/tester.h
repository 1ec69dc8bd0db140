// A tiny test harness for the kernel testers (no framework): CHECK records a failure with its
// context, tester_exit() reports and returns the exit status.
#pragma once
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "core/cpu_features.h"

namespace webnn_test {

inline size_t& failures() {
  static size_t count = 0;
  return count;
}
inline size_t& checks() {
  static size_t count = 0;
  return count;
}

// Whether got is within tolerance of want (NaN matches NaN); prints the first few mismatches.
inline bool near(float got, double want, double tolerance, const std::string& where) {
  ++checks();
  const bool ok = (std::isnan(got) && std::isnan(want)) || std::fabs(double(got) - want) <= tolerance;
  if (!ok && ++failures() <= 20)
    std::fprintf(stderr, "FAIL %s: got %.9g, want %.9g (tolerance %.3g)\n", where.c_str(), got, want, tolerance);
  return ok;
}
inline bool expect(bool ok, const std::string& what) {
  ++checks();
  if (!ok && ++failures() <= 20) std::fprintf(stderr, "FAIL %s\n", what.c_str());
  return ok;
}

inline std::vector<float> random_floats(size_t n, std::mt19937& rng) {
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

// The ISA levels this CPU runs (ref up to the detected one).
inline std::vector<webnn::CpuIsa> levels() {
  std::vector<webnn::CpuIsa> out;
  for (int i = 0; i <= int(webnn::detected_isa()); ++i) out.push_back(webnn::CpuIsa(i));
  return out;
}

inline int tester_exit(const char* name) {
  if (failures()) {
    std::fprintf(stderr, "%s: %zu of %zu checks FAILED\n", name, failures(), checks());
    return 1;
  }
  std::printf("%s: %zu checks passed\n", name, checks());
  return 0;
}

}  // namespace webnn_test
