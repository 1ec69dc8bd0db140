// GEMM tester: every level's microkernel (edge tiles, accumulate, epilogues), indirect tile and GEMV against plain
// loops, then the driver at the active level (WEBNN_CPU_ISA picks it) over M/N/K around MR/NR/KC.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "core/thread_pool.h"
#include "kernels/gemm/gemm.h"
#include "kernels/platform.h"
#include "tester.h"

using namespace webnn;
using namespace webnn_test;

namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

enum class Bias { kNone, kColumn, kRow };

struct Case {
  size_t rows, cols, kc;
  bool accumulate;
  Bias bias;
  bool residual, clamp;
  std::string str(const char* kernel) const {
    return std::string(kernel) + " rows=" + std::to_string(rows) + " cols=" + std::to_string(cols) +
           " kc=" + std::to_string(kc) + " accumulate=" + std::to_string(accumulate) +
           " bias=" + std::to_string(int(bias)) + " residual=" + std::to_string(residual) +
           " clamp=" + std::to_string(clamp);
  }
};

void check_ukernel(const GemmUkernel& uk, const Case& t, std::mt19937& rng) {
  const size_t mr = uk.mr, nr = uk.nr, ldc = t.cols + 3, guard_rows = t.rows + 1;
  AlignedBuffer a_buffer(t.kc * mr * sizeof(float)), b_buffer(t.kc * nr * sizeof(float));
  float* a = reinterpret_cast<float*>(a_buffer.data());
  float* b = reinterpret_cast<float*>(b_buffer.data());
  const std::vector<float> av = random_floats(t.kc * mr, rng), bv = random_floats(t.kc * nr, rng);
  for (size_t k = 0; k < t.kc; ++k) {
    for (size_t i = 0; i < mr; ++i) a[k * mr + i] = i < t.rows ? av[k * mr + i] : 0.0f;
    for (size_t j = 0; j < nr; ++j) b[k * nr + j] = j < t.cols ? bv[k * nr + j] : 0.0f;
  }
  std::vector<float> c = random_floats(guard_rows * ldc, rng), c0 = c;
  const std::vector<float> bias = random_floats(std::max(mr, nr), rng), residual = random_floats(t.rows * ldc, rng);
  TileEpilogue ep{t.bias == Bias::kNone ? nullptr : bias.data(), t.bias == Bias::kRow, t.clamp ? -0.5f : -kInf,
                      t.clamp ? 0.5f : kInf, t.residual ? residual.data() : nullptr, ldc};
  const bool has_ep = t.bias != Bias::kNone || t.residual || t.clamp;
  uk.fn(t.rows, t.cols, t.kc, a, b, c.data(), ldc, t.accumulate, has_ep ? &ep : nullptr);
  const std::string where = t.str(uk.name);
  for (size_t i = 0; i < guard_rows; ++i)
    for (size_t j = 0; j < ldc; ++j) {
      if (i >= t.rows || j >= t.cols) {
        if (!expect(c[i * ldc + j] == c0[i * ldc + j], where + ": wrote outside the tile")) return;
        continue;
      }
      double want = t.accumulate ? c0[i * ldc + j] : 0.0;
      for (size_t k = 0; k < t.kc; ++k) want += double(a[k * mr + i]) * b[k * nr + j];
      if (t.bias == Bias::kColumn) want += bias[j];
      if (t.bias == Bias::kRow) want += bias[i];
      if (t.residual) want += residual[i * ldc + j];
      if (t.clamp) want = std::min(std::max(want, -0.5), 0.5);
      if (!near(c[i * ldc + j], want, 1e-5 * (t.kc + 2), where + " at (" + std::to_string(i) + "," +
                                                              std::to_string(j) + ")"))
        return;
    }
}

void check_gemv(const GemmUkernel& uk, size_t m, size_t kc, std::mt19937& rng) {
  const size_t nr = uk.nr, lda = kc + 1;
  AlignedBuffer b_buffer(kc * nr * sizeof(float));
  float* b = reinterpret_cast<float*>(b_buffer.data());
  const std::vector<float> a = random_floats(m * lda, rng), bv = random_floats(kc * nr, rng);
  std::copy(bv.begin(), bv.end(), b);
  std::vector<float> c(m * nr);
  uk.gemv(m, kc, a.data(), lda, b, c.data(), nr);
  for (size_t i = 0; i < m; ++i)
    for (size_t j = 0; j < nr; ++j) {
      double want = 0.0;
      for (size_t k = 0; k < kc; ++k) want += double(a[i * lda + k]) * b[k * nr + j];
      if (!near(c[i * nr + j], want, 1e-5 * (kc + 2),
                std::string(uk.name) + " gemv m=" + std::to_string(m) + " kc=" + std::to_string(kc)))
        return;
    }
}

// The indirect tile: rows read through per-tap pointers (some at a shared row of zeros, as padding).
void check_igemm(const GemmUkernel& uk, size_t rows, size_t cols, size_t taps, size_t channels, bool accumulate,
                 bool with_epilogue, std::mt19937& rng) {
  const size_t mr = uk.mr, nr = uk.nr, ldc = cols + 2, kc = taps * channels;
  const std::vector<float> input = random_floats(taps * mr * (channels + 1), rng), zeros(channels, 0.0f);
  AlignedBuffer b_buffer(kc * nr * sizeof(float));
  float* b = reinterpret_cast<float*>(b_buffer.data());
  const std::vector<float> bv = random_floats(kc * nr, rng), bias = random_floats(nr, rng);
  for (size_t k = 0; k < kc; ++k)
    for (size_t j = 0; j < nr; ++j) b[k * nr + j] = j < cols ? bv[k * nr + j] : 0.0f;
  std::vector<const float*> a(taps * mr, nullptr);
  for (size_t t = 0; t < taps; ++t)
    for (size_t i = 0; i < rows; ++i)
      a[t * mr + i] = (t + i) % 3 == 2 ? zeros.data() : input.data() + (t * mr + i) * (channels + 1);
  const std::vector<float> residual = random_floats(rows * ldc, rng);
  std::vector<float> c = random_floats((rows + 1) * ldc, rng), c0 = c;
  TileEpilogue ep{bias.data(), false, -0.5f, 0.5f, residual.data(), ldc};
  uk.igemm(rows, cols, taps, channels, a.data(), b, c.data(), ldc, accumulate, with_epilogue ? &ep : nullptr);
  const std::string where = std::string(uk.name) + " igemm rows=" + std::to_string(rows) + " cols=" +
                            std::to_string(cols) + " taps=" + std::to_string(taps) + " channels=" +
                            std::to_string(channels) + " accumulate=" + std::to_string(accumulate) +
                            " epilogue=" + std::to_string(with_epilogue);
  for (size_t i = 0; i <= rows; ++i)
    for (size_t j = 0; j < ldc; ++j) {
      if (i >= rows || j >= cols) {
        if (!expect(c[i * ldc + j] == c0[i * ldc + j], where + ": wrote outside the tile")) return;
        continue;
      }
      double want = accumulate ? c0[i * ldc + j] : 0.0;
      for (size_t t = 0; t < taps; ++t)
        for (size_t k = 0; k < channels; ++k) want += double(a[t * mr + i][k]) * b[(t * channels + k) * nr + j];
      if (with_epilogue) want = std::min(std::max(want + bias[j] + residual[i * ldc + j], -0.5), 0.5);
      if (!near(c[i * ldc + j], want, 1e-5 * (kc + 2), where + " at (" + std::to_string(i) + "," + std::to_string(j) + ")"))
        return;
    }
}

void sweep_ukernel(const GemmUkernel& uk, std::mt19937& rng) {
  // Column counts at each tile shape's edges: one vector, two, the full tile, and last vectors of a
  // quarter tile and one more.
  const size_t nr = uk.nr, half = nr / 2, quarter = nr / 4;
  std::vector<size_t> cols = {1, quarter, quarter + 1, half - 1, half,
                              half + 1, half + quarter, half + quarter + 1, nr - 1, nr};
  for (size_t rows = 1; rows <= uk.mr; ++rows)
    for (size_t c : cols)
      for (size_t kc : {size_t(1), size_t(2), size_t(17)})
        for (bool accumulate : {false, true}) check_ukernel(uk, {rows, c, kc, accumulate, Bias::kNone, false, false}, rng);
  // Epilogues on the full tile and the smallest and a ragged edge tile.
  for (size_t rows : {size_t(1), uk.mr - 1, uk.mr})
    for (size_t c : {size_t(1), half + 1, half + quarter, nr})
      for (Bias bias : {Bias::kNone, Bias::kColumn, Bias::kRow})
        for (bool residual : {false, true})
          for (bool clamp : {false, true})
            for (bool accumulate : {false, true})
              check_ukernel(uk, {rows, c, 5, accumulate, bias, residual, clamp}, rng);
  for (size_t m = 1; m <= kGemvMaxRows; ++m)
    for (size_t kc : {size_t(1), size_t(2), size_t(7), size_t(64)}) check_gemv(uk, m, kc, rng);
  for (size_t rows = 1; rows <= uk.mr; ++rows)
    for (size_t c : cols)
      for (size_t taps : {size_t(1), size_t(9)})
        for (size_t channels : {size_t(1), size_t(3), size_t(20)})
          for (bool accumulate : {false, true})
            for (bool with_epilogue : {false, true})
              check_igemm(uk, rows, c, taps, channels, accumulate, with_epilogue, rng);
}

// The driver at the active level: packed B (GEMV and blocked paths) and packed A.
void check_driver(size_t M, size_t N, size_t K, bool transposed_a, Bias bias_kind, bool with_residual,
                  ThreadPool* pool, std::mt19937& rng) {
  const std::vector<float> A = random_floats(M * K, rng), B = random_floats(K * N, rng);
  const std::vector<float> bias = random_floats(std::max(M, N), rng), residual = random_floats(M * N, rng);
  GemmEpilogue ep;
  if (bias_kind != Bias::kNone) ep.bias = bias.data(), ep.bias_per_row = bias_kind == Bias::kRow;
  if (with_residual) ep.residual = residual.data(), ep.residual_ld = N, ep.min = -2.0f, ep.max = 2.0f;
  // With a bias, an activation too: SiLU after a column bias, tanh after a row bias.
  const UnaryOp activation = bias_kind == Bias::kColumn ? UnaryOp::kSilu : UnaryOp::kTanh;
  if (bias_kind != Bias::kNone) ep.activation = activation_loop(FusedActivation{true, activation, {}});
  std::vector<double> want(M * N);
  for (size_t i = 0; i < M; ++i)
    for (size_t j = 0; j < N; ++j) {
      double v = 0.0;
      for (size_t k = 0; k < K; ++k) v += double(transposed_a ? A[k * M + i] : A[i * K + k]) * B[k * N + j];
      if (ep.bias) v += ep.bias[ep.bias_per_row ? i : j];
      if (ep.residual) v += ep.residual[i * N + j];
      v = std::min(std::max(v, double(ep.min)), double(ep.max));
      if (ep.activation) v = activation == UnaryOp::kSilu ? v / (1.0 + std::exp(-v)) : std::tanh(v);
      want[i * N + j] = v;
    }
  const std::string shape = " M=" + std::to_string(M) + " N=" + std::to_string(N) + " K=" + std::to_string(K) +
                            " transposed_a=" + std::to_string(transposed_a) + " bias=" + std::to_string(!!ep.bias) +
                            (ep.bias_per_row ? "(row)" : "") + " residual+clamp=" + std::to_string(with_residual) +
                            " activation=" + (ep.activation ? activation == UnaryOp::kSilu ? "silu" : "tanh" : "none") +
                            " level=" + kernel_table().gemm_f32.name;
  std::vector<float> C(M * N);
  gemm_f32_packed(M, N, K, A.data(), transposed_a ? M : K, transposed_a, pack_b_f32(K, N, B.data(), N), C.data(), N,
                  ep, pool);
  for (size_t i = 0; i < M * N; ++i)
    if (!near(C[i], want[i], 1e-5 * (K + 2), "gemm_f32_packed" + shape + " at " + std::to_string(i))) break;
  if (transposed_a) return;
  std::fill(C.begin(), C.end(), 0.0f);
  const PackedA packed_a = pack_a_f32(M, K, A.data(), K);
  gemm_f32_packed_a(
      M, N, K, packed_a,
      [&](size_t k0, size_t kc, size_t n0, size_t nc, float* dst) { pack_b_block_rows(B.data(), N, k0, kc, n0, nc, dst); },
      C.data(), N, ep, pool);
  for (size_t i = 0; i < M * N; ++i)
    if (!near(C[i], want[i], 1e-5 * (K + 2), "gemm_f32_packed_a" + shape + " at " + std::to_string(i))) break;
}

}  // namespace

int main() {
  std::mt19937 rng(42);
  for (CpuIsa isa : levels()) sweep_ukernel(kernel_table_for(isa).gemm_f32, rng);

  const size_t mr = kernel_table().gemm_f32.mr, nr = kernel_table().gemm_f32.nr, kc = 384;
  ThreadPool pool(2);
  for (size_t M : {size_t(1), size_t(4), mr + 1, 2 * mr + 3, size_t(150)})
    for (size_t N : {size_t(1), nr - 1, nr + 1, 3 * nr + 5})
      for (size_t K : {size_t(1), size_t(7), kc, kc + 1})
        for (Bias bias : {Bias::kNone, Bias::kColumn, Bias::kRow})
          for (bool transposed_a : {false, true})
            check_driver(M, N, K, transposed_a, bias, bias == Bias::kColumn, &pool, rng);
  check_driver(300, 700, 2 * kc + 5, false, Bias::kColumn, true, &pool, rng);  // several M, N and K blocks
  return tester_exit("gemm_test");
}
