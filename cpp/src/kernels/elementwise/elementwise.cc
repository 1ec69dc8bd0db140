// The element-wise family's kernels: broadcast iteration and threading around the inner loops of
// the active ISA level (elementwise_impl.h).
#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <limits>

#include "kernels/elementwise/elementwise.h"
#include "kernels/int8/int8_gemm.h"
#include "kernels/quantize/quantize.h"
#include "kernels/kernel_util.h"
#include "kernels/platform.h"
#include "core/thread_pool.h"

namespace webnn {

namespace {

constexpr size_t kElementGrain = 1 << 15;
constexpr size_t kChainChunk = 512;  // elements per chain step buffer: a chunk's buffers stay in L1
constexpr size_t kMaxOperands = kMaxChainInputs;  // (binary ops and where: 2 and 3)

// Calls body(offsets, out_offset, count) over blocks of consecutive output elements, in
// parallel. offsets[k] is operand k's element offset at the block start; within the block,
// operand k advances by loop.strides[k].back() per element.
template <class Body>
void for_each_block(const BroadcastLoop& loop, ThreadPool* pool, const Body& body) {
  const size_t inner = loop.inner(), rows = loop.outer(), operands = loop.strides.size();
  const size_t block = std::min(inner, kElementGrain);
  const size_t blocks_per_row = (inner + block - 1) / block;
  const size_t grain = std::max<size_t>(1, kElementGrain / block);
  pool->parallel_for(rows * blocks_per_row, grain, [&](size_t begin, size_t end) {
    size_t off[kMaxOperands];
    size_t row = begin / blocks_per_row, row_block = begin % blocks_per_row;
    BroadcastLoop::RowWalk walk(loop, row);
    for (size_t t = begin; t < end; ++t) {
      const size_t start = row_block * block;
      for (size_t k = 0; k < operands; ++k) off[k] = walk.at()[k] + start * loop.strides[k].back();
      body(off, row * inner + start, std::min(block, inner - start));
      if (++row_block == blocks_per_row && t + 1 < end) {
        row_block = 0;
        ++row;
        walk.next();
      }
    }
  });
}

// A kernel running `fn` over the output in blocks, the operands (of element sizes in_sizes)
// broadcast to out_shape.
Kernel block_kernel(ElementwiseBlockFn fn, size_t out_size, const std::vector<size_t>& in_sizes,
                    const std::vector<uint32_t>& out_shape, const std::vector<std::vector<uint32_t>>& in_shapes) {
  if (!fn) throw_type_error("internal: no element-wise kernel for this data type");
  BroadcastLoop loop = make_broadcast_loop(out_shape, in_shapes);
  const size_t operands = in_shapes.size();
  std::array<size_t, kMaxOperands> stride{}, in_size{};
  for (size_t k = 0; k < operands; ++k) {
    stride[k] = loop.strides[k].back();
    in_size[k] = in_sizes[k];
  }
  return [loop = std::move(loop), fn, out_size, operands, stride, in_size](const KernelArgs& args) {
    char* out = static_cast<char*>(args.outputs[0]);
    for_each_block(loop, args.pool, [&](const size_t* off, size_t out_offset, size_t count) {
      const void* src[kMaxOperands];
      for (size_t k = 0; k < operands; ++k) src[k] = static_cast<const char*>(args.inputs[k]) + off[k] * in_size[k];
      fn(out + out_offset * out_size, count, src, stride.data());
    });
  };
}

const ElementwiseLoops& loops() { return *kernel_table().elementwise; }

}  // namespace

Kernel make_binary_kernel(BinaryOp op, DataType type, const std::vector<uint32_t>& a_shape,
                          const std::vector<uint32_t>& b_shape, const std::vector<uint32_t>& out_shape) {
  const size_t size = data_type_size(type);
  return block_kernel(loops().binary(op, type), size, {size, size}, out_shape, {a_shape, b_shape});
}

Kernel make_binary_predicate_kernel(BinaryPredicate op, DataType input_type, const std::vector<uint32_t>& a_shape,
                                    const std::vector<uint32_t>& b_shape, const std::vector<uint32_t>& out_shape) {
  const size_t size = data_type_size(input_type);
  return block_kernel(loops().binary_predicate(op, input_type), 1, {size, size}, out_shape, {a_shape, b_shape});
}

Kernel make_unary_predicate_kernel(UnaryPredicate op, DataType input_type, const std::vector<uint32_t>& shape) {
  return block_kernel(loops().unary_predicate(op, input_type), 1, {data_type_size(input_type)}, shape, {shape});
}

Kernel make_where_kernel(DataType type, const std::vector<uint32_t>& condition_shape,
                         const std::vector<uint32_t>& true_shape, const std::vector<uint32_t>& false_shape,
                         const std::vector<uint32_t>& out_shape) {
  const size_t size = data_type_size(type);
  return block_kernel(loops().where(type), size, {1, size, size}, out_shape,
                      {condition_shape, true_shape, false_shape});
}

namespace {

// dequantize(a) op dequantize(b) [-> relu | clamp] -> quantize, 8-bit in and out, as one
// Int8BinaryFn pass: its parameters, or false. It needs scales that keep every value finite
// (|dequantize scales| <= 2^100, and a quantize_inverse for the output's), so that no NaN arises and
// the fused loop computes the chain's bits. inputs: the chain inputs read as a and b.
bool int8_binary_chain(const std::vector<ChainStep>& steps, Int8Binary& p, std::array<size_t, 2>& inputs) {
  using Kind = ChainStep::Kind;
  // Two dequantized inputs (steps 0, 1), or one and a float32 input read by the op itself (b_float).
  p.b_float = steps.size() >= 3 && steps[1].kind == Kind::kBinary;
  const size_t op_step = p.b_float ? 1 : 2;
  if (steps.size() < op_step + 2 || steps.size() > op_step + 3 || steps[0].kind != Kind::kDequantize ||
      steps[0].a >= 0 || (!p.b_float && (steps[1].kind != Kind::kDequantize || steps[1].a >= 0)) ||
      steps[op_step].kind != Kind::kBinary || steps.back().kind != Kind::kQuantize)
    return false;
  const ChainStep& op = steps[op_step];
  const ChainStep& q = steps.back();
  // The op reads both operands; a commutative op in either order.
  const int first = 0, second = p.b_float ? (op.a == 0 ? op.b : op.a) : 1;
  const bool swapped = op.a == second && op.b == first && op.binary != BinaryOp::kSub;
  if (!swapped && (op.a != first || op.b != second)) return false;
  if (p.b_float && (second >= 0 || op.binary == BinaryOp::kMax || op.binary == BinaryOp::kMin)) return false;
  if (q.a != int(steps.size()) - 2) return false;
  const ChainStep &a = steps[swapped && !p.b_float ? 1 : 0], &b = steps[swapped && !p.b_float ? 0 : 1];
  inputs = {size_t(-1 - a.a), size_t(-1 - (p.b_float ? second : b.a))};
  switch (op.binary) {
    case BinaryOp::kAdd: p.op = Int8BinaryOp::kAdd; break;
    case BinaryOp::kSub: p.op = Int8BinaryOp::kSub; break;
    case BinaryOp::kMul: p.op = Int8BinaryOp::kMul; break;
    case BinaryOp::kMax: p.op = Int8BinaryOp::kMax; break;
    case BinaryOp::kMin: p.op = Int8BinaryOp::kMin; break;
    default: return false;
  }
  p.min = -std::numeric_limits<float>::infinity();
  p.max = std::numeric_limits<float>::infinity();
  if (steps.size() == op_step + 3) {
    const ChainStep& act = steps[op_step + 1];
    if (act.a != int(op_step)) return false;
    if (act.kind == Kind::kUnary && act.unary == UnaryOp::kRelu) {
      p.min = 0.0f;
    } else if (act.kind == Kind::kClamp && act.min <= act.max) {
      p.min = act.min;
      p.max = act.max;
    } else {
      return false;
    }
  }
  const auto bounded = [](float scale) { return std::fabs(scale) <= 0x1p100f; };
  if (!bounded(a.scale) || (!p.b_float && !bounded(b.scale))) return false;
  p.a_signed = a.is_signed;
  p.b_signed = b.is_signed;
  p.out_signed = q.is_signed;
  p.a_zero = a.zero_point;
  p.b_zero = b.zero_point;
  p.out_zero = q.zero_point;
  p.a_scale = a.scale;
  p.b_scale = b.scale;
  p.out_scale = q.scale;
  p.out_inverse = quantize_inverse(q.scale);
  if (!p.b_float) {
    // The largest |t| (each dequantized value is at most 255 steps from its zero point), with room
    // for the float32 roundings, against the output's quotient.
    const double da = 255.0 * std::fabs(double(a.scale)), db = 255.0 * std::fabs(double(b.scale));
    const bool sums = p.op == Int8BinaryOp::kAdd || p.op == Int8BinaryOp::kSub;
    const double largest = p.op == Int8BinaryOp::kMul ? da * db : sums ? da + db : std::max(da, db);
    p.finite = largest * double(p.out_inverse) < 0x1p120;
  }
  return p.out_inverse != 0.0f;
}

Kernel chain_kernel(const std::vector<ChainStep>& steps, const std::vector<uint32_t>& out_shape,
                    const std::vector<std::vector<uint32_t>>& input_shapes, const std::vector<const void*>& constants,
                    bool tabulate);

// A chain from one 8-bit input (its other inputs single constant values) has 256 possible results
// (8-bit, or float32 when it ends in a float32 step): its table, computed by running the chain
// itself over the 256 bytes (so that the lookups give its bits), as bytes; else empty. `input`: the
// 8-bit input's index.
std::vector<uint8_t> int8_chain_table(const std::vector<ChainStep>& steps,
                                      const std::vector<std::vector<uint32_t>>& input_shapes,
                                      const std::vector<const void*>& constants, size_t& input) {
  const size_t inputs = input_shapes.size();
  int varying = -1;
  for (size_t k = 0; k < inputs; ++k) {
    const bool constant = k < constants.size() && constants[k];
    if (constant && element_count(input_shapes[k]) == 1) continue;
    if (varying >= 0) return {};
    varying = int(k);
  }
  if (varying < 0) return {};
  for (const ChainStep& step : steps) {  // the varying input is 8-bit: only dequantize steps read it
    const bool reads = step.a == -1 - varying || (step.kind == ChainStep::Kind::kBinary && step.b == -1 - varying);
    if (reads && step.kind != ChainStep::Kind::kDequantize) return {};
  }
  input = size_t(varying);
  const size_t result_size = steps.back().kind == ChainStep::Kind::kQuantize ? 1 : sizeof(float);
  std::vector<uint8_t> bytes(256), table(256 * result_size);
  for (size_t v = 0; v < 256; ++v) bytes[v] = uint8_t(v);
  std::vector<std::vector<uint32_t>> shapes(inputs, std::vector<uint32_t>{1});
  shapes[input] = {256};
  std::vector<const void*> in(constants.begin(), constants.end());
  in.resize(inputs, nullptr);
  in[input] = bytes.data();
  const Kernel chain = chain_kernel(steps, {256}, shapes, {}, false);
  ThreadPool serial(1);
  void* out[1] = {table.data()};
  chain(KernelArgs{in.data(), out, &serial});
  return table;
}

Kernel chain_kernel(const std::vector<ChainStep>& steps, const std::vector<uint32_t>& out_shape,
                    const std::vector<std::vector<uint32_t>>& input_shapes, const std::vector<const void*>& constants,
                    bool tabulate) {
  const size_t inputs = input_shapes.size();
  if (inputs > kMaxOperands || steps.empty()) throw_type_error("internal: an element-wise chain the kernel cannot run");
  BroadcastLoop loop = make_broadcast_loop(out_shape, input_shapes);
  std::array<size_t, kMaxOperands> stride{};
  for (size_t k = 0; k < inputs; ++k) stride[k] = loop.strides[k].back();
  struct Loops {
    ElementwiseBlockFn binary = nullptr;
    UnaryLoopFn unary = nullptr;
    ClampLoopFn clamp = nullptr;
  };
  std::vector<Loops> fns(steps.size());
  for (size_t i = 0; i < steps.size(); ++i) {
    const ChainStep& step = steps[i];
    // 8-bit values: a quantize step reads a float32 value; its result is the chain's output or is
    // read only by dequantize steps, which read it or an input.
    const auto is_quantize = [&](int v) { return v >= 0 && steps[size_t(v)].kind == ChainStep::Kind::kQuantize; };
    if (step.kind == ChainStep::Kind::kQuantize && is_quantize(step.a))
      throw_type_error("internal: a chain quantizes only float32 values");
    if (step.kind == ChainStep::Kind::kDequantize && step.a >= 0 && !is_quantize(step.a))
      throw_type_error("internal: a chain dequantizes only its inputs or a quantize step's result");
    if (step.kind != ChainStep::Kind::kDequantize &&
        (is_quantize(step.a) || (step.kind == ChainStep::Kind::kBinary && is_quantize(step.b))))
      throw_type_error("internal: a chain's quantized values are read only by dequantize steps");
    if (step.kind == ChainStep::Kind::kDequantize || step.kind == ChainStep::Kind::kQuantize) continue;
    if (step.kind == ChainStep::Kind::kBinary) fns[i].binary = loops().binary(step.binary, DataType::kFloat32);
    else if (step.kind == ChainStep::Kind::kUnary) fns[i].unary = kernel_table().unary->unary(step.unary, DataType::kFloat32);
    else fns[i].clamp = kernel_table().unary->clamp(DataType::kFloat32);
    if (!fns[i].binary && !fns[i].unary && !fns[i].clamp) throw_type_error("internal: no float32 loop for a chain step");
  }
  if (tabulate) {
    size_t k = 0;
    std::vector<uint8_t> table = int8_chain_table(steps, input_shapes, constants, k);
    if (table.size() == 256 && stride[k] == 1)
      return [loop = std::move(loop), table = std::move(table), k](const KernelArgs& args) {
        for_each_block(loop, args.pool, [&](const size_t* off, size_t out_offset, size_t count) {
          kernel_table().int8.lookup(static_cast<const uint8_t*>(args.inputs[k]) + off[k], count, table.data(),
                                     static_cast<uint8_t*>(args.outputs[0]) + out_offset);
        });
      };
    if (table.size() == 256 * sizeof(float) && stride[k] == 1)
      return [loop = std::move(loop), table = std::move(table), k](const KernelArgs& args) {
        const float* values = reinterpret_cast<const float*>(table.data());
        for_each_block(loop, args.pool, [&](const size_t* off, size_t out_offset, size_t count) {
          const uint8_t* x = static_cast<const uint8_t*>(args.inputs[k]) + off[k];
          float* y = static_cast<float*>(args.outputs[0]) + out_offset;
          for (size_t i = 0; i < count; ++i) y[i] = values[x[i]];
        });
      };
  }
  std::vector<float> inverse_scales(steps.size(), 0.0f);
  for (size_t i = 0; i < steps.size(); ++i)
    if (steps[i].kind == ChainStep::Kind::kQuantize) inverse_scales[i] = quantize_inverse(steps[i].scale);
  // A quantize step whose one reader is a dequantize step (a QDQ pair inside float32 math) runs as
  // one loop at that reader, the bytes never stored: quantized_by[reader] = the quantize step.
  std::vector<int> quantized_by(steps.size(), -1), readers(steps.size(), 0);
  for (const ChainStep& step : steps) {
    if (step.a >= 0) ++readers[size_t(step.a)];
    if (step.kind == ChainStep::Kind::kBinary && step.b >= 0) ++readers[size_t(step.b)];
  }
  std::vector<bool> with_reader(steps.size(), false);  // a quantize step computed at its reader
  for (size_t i = 0; i < steps.size(); ++i)
    if (steps[i].kind == ChainStep::Kind::kDequantize && steps[i].a >= 0 && readers[size_t(steps[i].a)] == 1) {
      quantized_by[i] = steps[i].a;
      with_reader[size_t(steps[i].a)] = true;
    }
  Int8Binary int8_binary;
  std::array<size_t, 2> int8_inputs{};
  const bool fused_8bit = int8_binary_chain(steps, int8_binary, int8_inputs);
  return [loop = std::move(loop), steps, fns = std::move(fns), stride, inverse_scales, quantized_by, with_reader,
          fused_8bit, int8_binary, int8_inputs](const KernelArgs& args) {
    float* const out = static_cast<float*>(args.outputs[0]);
    uint8_t* const out_8bit = static_cast<uint8_t*>(args.outputs[0]);  // when the last step quantizes
    for_each_block(loop, args.pool, [&](const size_t* off, size_t out_offset, size_t count) {
      if (fused_8bit) {
        const auto [ka, kb] = int8_inputs;
        if (stride[ka] == 1 && stride[kb] == 1)
          return kernel_table().int8.binary(
              static_cast<const uint8_t*>(args.inputs[ka]) + off[ka],
              int8_binary.b_float ? reinterpret_cast<const uint8_t*>(static_cast<const float*>(args.inputs[kb]) + off[kb])
                                  : static_cast<const uint8_t*>(args.inputs[kb]) + off[kb],
              count, int8_binary, out_8bit + out_offset);
      }
      thread_local std::vector<float> buffers;
      if (buffers.size() < steps.size() * kChainChunk) buffers.resize(steps.size() * kChainChunk);
      for (size_t s = 0; s < count; s += kChainChunk) {
        const size_t n = std::min(kChainChunk, count - s);
        // Operand v at this chunk, and its element stride.
        const auto source = [&](int v, size_t* step_stride) -> const float* {
          if (v >= 0) {
            *step_stride = 1;
            return buffers.data() + size_t(v) * kChainChunk;
          }
          const size_t k = size_t(-1 - v);
          *step_stride = stride[k];
          return static_cast<const float*>(args.inputs[k]) + off[k] + s * stride[k];
        };
        for (size_t i = 0; i < steps.size(); ++i) {
          const ChainStep& step = steps[i];
          const bool last = i + 1 == steps.size();
          // 8-bit values: an input (element offsets are bytes) or a quantize step's buffer, as bytes.
          if (step.kind == ChainStep::Kind::kDequantize) {
            float* const dst = last ? out + out_offset + s : buffers.data() + i * kChainChunk;
            if (const int q = quantized_by[i]; q >= 0) {
              const ChainStep& quantize = steps[size_t(q)];
              size_t unit;
              kernel_table().int8.quantize_dequantize(source(quantize.a, &unit), quantize.scale,
                                                      inverse_scales[size_t(q)], quantize.zero_point,
                                                      quantize.is_signed, step.scale, step.zero_point, dst, n);
              continue;
            }
            if (step.a >= 0) {
              const uint8_t* x = reinterpret_cast<const uint8_t*>(buffers.data() + size_t(step.a) * kChainChunk);
              dequantize_8bit(x, 1, step.is_signed, step.scale, step.zero_point, dst, n);
              continue;
            }
            const size_t k = size_t(-1 - step.a);
            const uint8_t* x = static_cast<const uint8_t*>(args.inputs[k]) + off[k] + s * stride[k];
            dequantize_8bit(x, stride[k], step.is_signed, step.scale, step.zero_point, dst, n);
            continue;
          }
          if (step.kind == ChainStep::Kind::kQuantize) {
            if (with_reader[i]) continue;
            size_t unit;
            uint8_t* const dst =
                last ? out_8bit + out_offset + s : reinterpret_cast<uint8_t*>(buffers.data() + i * kChainChunk);
            quantize_8bit(source(step.a, &unit), step.scale, inverse_scales[i], step.zero_point, step.is_signed, dst,
                          n);
            continue;
          }
          float* const dst = last ? out + out_offset + s : buffers.data() + i * kChainChunk;
          size_t strides[2];
          const float* a = source(step.a, &strides[0]);
          if (step.kind == ChainStep::Kind::kBinary) {
            const void* src[2] = {a, source(step.b, &strides[1])};
            fns[i].binary(dst, n, src, strides);
          } else if (step.kind == ChainStep::Kind::kUnary) {
            fns[i].unary(a, dst, n, step.params);
          } else {
            fns[i].clamp(a, dst, n, &step.min, &step.max);
          }
        }
      }
    });
  };
}

}  // namespace

Kernel make_elementwise_chain_kernel(const std::vector<ChainStep>& steps, const std::vector<uint32_t>& out_shape,
                                     const std::vector<std::vector<uint32_t>>& input_shapes,
                                     const std::vector<const void*>& constants) {
  return chain_kernel(steps, out_shape, input_shapes, constants, true);
}

}  // namespace webnn
