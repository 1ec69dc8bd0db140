// Reference recurrent kernels. Weights are transposed to float32 once per dispatch; every batch
// row recurs independently, so (direction, batch rows) blocks run in parallel, each step doing
// its matrix products with gemm_f32 and then the gate arithmetic.
#include <algorithm>
#include <cmath>

#include "kernels/gemm/gemm.h"
#include "kernels/gemm/pack_f32.h"
#include "kernels/rnn/rnn.h"
#include "core/thread_pool.h"

namespace webnn {

namespace {

inline float activate(RnnActivation a, float x) {
  switch (a) {
    case RnnActivation::kRelu: return x < 0 ? 0.0f : x;
    case RnnActivation::kSigmoid: return 1.0f / (1.0f + std::exp(-x));
    case RnnActivation::kTanh: return std::tanh(x);
  }
  return x;
}

template <class T>
class RnnRun {
 public:
  RnnRun(const RnnParams& p, const KernelArgs& args)
      : p_(p), args_(args), gates_(p.cell == RnnCell::kGru ? 3 : 4), width_(gates_ * p.hidden) {}

  void run() {
    const size_t D = p_.directions, I = p_.input_size, H = p_.hidden;
    // W^T [I][gates*H] and R^T [H][gates*H] per direction; absent biases and peephole are zeros.
    weight_t_.resize(D * I * width_);
    recurrent_t_.resize(D * H * width_);
    for (size_t d = 0; d < D; ++d) {
      transpose_to_f32(in(p_.weight) + d * width_ * I, width_, I, weight_t_.data() + d * I * width_);
      transpose_to_f32(in(p_.recurrent_weight) + d * width_ * H, width_, H, recurrent_t_.data() + d * H * width_);
    }
    bias_ = load_or_zeros(p_.bias, 0, D * width_);
    recurrent_bias_ = load_or_zeros(p_.recurrent_bias, 0, D * width_);
    peephole_ = load_or_zeros(p_.peephole, 0, D * 3 * H);

    const size_t B = p_.batch;
    const double work_per_row = double(p_.steps) * double(width_) * double(I + H);
    const size_t grain = std::clamp<size_t>(size_t(65536.0 / work_per_row), 1, B);
    args_.pool->parallel_for(D * B, grain, [&](size_t begin, size_t end) {
      for (size_t item = begin; item < end;) {
        const size_t d = item / B, b0 = item % B, rows = std::min(B - b0, end - item);
        run_block(d, b0, rows);
        item += rows;
      }
    });
  }

 private:
  const T* in(int index) const { return index < 0 ? nullptr : static_cast<const T*>(args_.inputs[index]); }
  T* out(int index) const { return index < 0 ? nullptr : static_cast<T*>(args_.outputs[index]); }

  // n values of input `index` from `offset` as float32; zeros when the input is absent.
  std::vector<float> load_or_zeros(int index, size_t offset, size_t n) const {
    std::vector<float> v(n, 0.0f);
    if (const T* src = in(index))
      for (size_t i = 0; i < n; ++i) v[i] = load(src[offset + i]);
    return v;
  }

  // The state and scratch of one block of batch rows.
  struct Block {
    size_t rows = 0;
    std::vector<float> h, c;    // [rows][H]
    std::vector<float> gx, gh;  // x W^T and h R^T, [rows][gates*H]
    std::vector<float> x;       // the step's input as float32 (float16 only)
    std::vector<float> r, rh;   // gru: the reset gate and r h, [rows][H]
  };

  // Batch rows [b0, b0 + rows) of direction d through every step.
  void run_block(size_t d, size_t b0, size_t rows) {
    const size_t B = p_.batch, I = p_.input_size, H = p_.hidden, S = p_.steps, D = p_.directions;
    const size_t state_offset = (d * B + b0) * H;
    Block k;
    k.rows = rows;
    k.h = load_or_zeros(p_.initial_hidden, state_offset, rows * H);
    if (p_.cell == RnnCell::kLstm) k.c = load_or_zeros(p_.initial_cell, state_offset, rows * H);
    k.gx.resize(rows * width_);
    k.gh.resize(rows * width_);
    if (p_.cell == RnnCell::kGru) k.r.resize(rows * H);
    if (p_.cell == RnnCell::kGru && !p_.reset_after) k.rh.resize(rows * H);

    const bool reverse = p_.backward || d == 1;
    T* sequence = out(p_.output_sequence);
    for (size_t s = 0; s < S; ++s) {
      const size_t t = reverse ? S - 1 - s : s;
      const float* x = as_f32(in(p_.input) + (t * B + b0) * I, rows * I, k.x);
      gemm_f32(rows, width_, I, x, I, weight_t_.data() + d * I * width_, width_, k.gx.data(), width_);
      if (p_.cell == RnnCell::kGru) gru_step(d, k);
      else lstm_step(d, k);
      if (sequence) store_all(k.h, sequence + ((t * D + d) * B + b0) * H);
    }
    if (T* final_hidden = out(p_.output_hidden)) store_all(k.h, final_hidden + state_offset);
    if (T* final_cell = out(p_.output_cell)) store_all(k.c, final_cell + state_offset);
  }

  static void store_all(const std::vector<float>& src, T* dst) {
    for (size_t i = 0; i < src.size(); ++i) store(dst + i, src[i]);
  }

  // z = f(x Wz^T + h Rz^T + bz + rbz), r likewise, n = g(x Wn^T + bn + r (h Rn^T + rbn)) with
  // resetAfter, else g(x Wn^T + bn + rbn + (r h) Rn^T); h' = z h + (1 - z) n.
  void gru_step(size_t d, Block& k) const {
    const size_t H = p_.hidden, W = width_, rows = k.rows;
    float* h = k.h.data();
    const size_t z_at = p_.gate_block[0] * H, r_at = p_.gate_block[1] * H, n_at = p_.gate_block[2] * H;
    const float* R = recurrent_t_.data() + d * H * W;
    const float* b = bias_.data() + d * W;
    const float* rb = recurrent_bias_.data() + d * W;
    const RnnActivation f = p_.activations[0], g = p_.activations[1];
    // With resetAfter the whole h R^T is needed now; otherwise only the z and r blocks, which are
    // the first two in both layouts (n is always last).
    gemm_f32(rows, p_.reset_after ? W : 2 * H, H, h, H, R, W, k.gh.data(), W);
    float* r_gate = k.r.data();
    for (size_t i = 0; i < rows; ++i) {
      const float* gx = k.gx.data() + i * W;
      const float* gh = k.gh.data() + i * W;
      for (size_t j = 0; j < H; ++j)
        r_gate[i * H + j] = activate(f, gx[r_at + j] + b[r_at + j] + gh[r_at + j] + rb[r_at + j]);
    }
    if (!p_.reset_after) {
      for (size_t i = 0; i < rows * H; ++i) k.rh[i] = r_gate[i] * h[i];
      gemm_f32(rows, H, H, k.rh.data(), H, R + n_at, W, k.gh.data() + n_at, W);
    }
    for (size_t i = 0; i < rows; ++i) {
      const float* gx = k.gx.data() + i * W;
      const float* gh = k.gh.data() + i * W;
      for (size_t j = 0; j < H; ++j) {
        const float z = activate(f, gx[z_at + j] + b[z_at + j] + gh[z_at + j] + rb[z_at + j]);
        const float r = r_gate[i * H + j];
        const float n = p_.reset_after
                            ? activate(g, gx[n_at + j] + b[n_at + j] + r * (gh[n_at + j] + rb[n_at + j]))
                            : activate(g, gx[n_at + j] + b[n_at + j] + rb[n_at + j] + gh[n_at + j]);
        float& hj = h[i * H + j];
        hj = z * hj + (1.0f - z) * n;
      }
    }
  }

  // i = f0(.. + Pi c), f = f0(.. + Pf c), g = f1(..), o = f0(.. + Po c) with c the previous cell
  // state; c' = f c + i g; h' = o f2(c').
  void lstm_step(size_t d, Block& k) const {
    const size_t H = p_.hidden, W = width_, rows = k.rows;
    float* h = k.h.data();
    float* c = k.c.data();
    const size_t i_at = p_.gate_block[0] * H, o_at = p_.gate_block[1] * H, f_at = p_.gate_block[2] * H,
                 g_at = p_.gate_block[3] * H;
    gemm_f32(rows, W, H, h, H, recurrent_t_.data() + d * H * W, W, k.gh.data(), W);
    const float* b = bias_.data() + d * W;
    const float* rb = recurrent_bias_.data() + d * W;
    const float* peep = peephole_.data() + d * 3 * H;  // i, o, f
    const bool has_peephole = p_.peephole >= 0;
    const RnnActivation f0 = p_.activations[0], f1 = p_.activations[1], f2 = p_.activations[2];
    for (size_t i = 0; i < rows; ++i) {
      const float* gx = k.gx.data() + i * W;
      const float* gh = k.gh.data() + i * W;
      auto pre = [&](size_t at) { return gx[at] + gh[at] + b[at] + rb[at]; };
      for (size_t j = 0; j < H; ++j) {
        const float prev = c[i * H + j];
        float pi = pre(i_at + j), pf = pre(f_at + j), po = pre(o_at + j);
        if (has_peephole) {
          pi += peep[j] * prev;
          po += peep[H + j] * prev;
          pf += peep[2 * H + j] * prev;
        }
        const float in_gate = activate(f0, pi), forget = activate(f0, pf), out_gate = activate(f0, po);
        const float cell = activate(f1, pre(g_at + j));
        const float next = forget * prev + in_gate * cell;
        c[i * H + j] = next;
        h[i * H + j] = out_gate * activate(f2, next);
      }
    }
  }

  const RnnParams& p_;
  const KernelArgs& args_;
  const size_t gates_, width_;
  std::vector<float> weight_t_, recurrent_t_, bias_, recurrent_bias_, peephole_;  // read-only once run() starts
};

}  // namespace

Kernel make_rnn_kernel(DataType type, const RnnParams& params) {
  if (type == DataType::kFloat16) return [params](const KernelArgs& a) { RnnRun<float16>(params, a).run(); };
  return [params](const KernelArgs& a) { RnnRun<float>(params, a).run(); };
}

}  // namespace webnn
