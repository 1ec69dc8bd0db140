// attention (made by the compiler, not a builder method: compiler/passes/attention_fusion.cc):
// softmax(scale * (query x keysTransposed) + mask) x values over matching batch dims. Each of the
// three operands may be read through a permutation of its dims (a transpose the pass absorbed).
#include "graph/op_def.h"
#include "kernels/attention/attention.h"
#include "kernels/data_movement/data_movement.h"

namespace webnn {

namespace {

// The operand `name` seen through its permutation option: the permuted shape and element strides.
struct PermutedView {
  std::vector<uint32_t> shape;
  std::vector<size_t> strides;
};
PermutedView permuted(const OpView& op, const std::string& name, const std::string& permutation) {
  const OperandDescriptor& desc = op.operand(name);
  if (desc.data_type != DataType::kFloat32) op.fail(name + " must be float32");
  const std::vector<int64_t> base = row_major_strides(desc.shape);
  const size_t rank = desc.shape.size();
  std::vector<int64_t> perm(rank);
  for (size_t i = 0; i < rank; ++i) perm[i] = int64_t(i);
  if (op.has(permutation)) perm = op.integers(permutation);
  std::vector<bool> seen(rank, false);
  if (perm.size() != rank) op.fail(permutation + " does not match the rank of " + name);
  PermutedView view{std::vector<uint32_t>(rank), std::vector<size_t>(rank)};
  for (size_t i = 0; i < rank; ++i) {
    if (perm[i] < 0 || size_t(perm[i]) >= rank || seen[size_t(perm[i])]) op.fail(permutation + " is not a permutation");
    seen[size_t(perm[i])] = true;
    view.shape[i] = desc.shape[size_t(perm[i])];
    view.strides[i] = size_t(base[size_t(perm[i])]);
  }
  return view;
}

// Each batch matrix's offset (leading dims row-major) and the last two dims' strides.
StridedMatrices matrices(const std::vector<uint32_t>& lead, const std::vector<size_t>& strides) {
  StridedMatrices m;
  const size_t rank = strides.size(), lead_rank = lead.size();
  m.row_stride = strides[rank - 2];
  m.col_stride = strides[rank - 1];
  size_t batch = 1;
  for (uint32_t d : lead) batch *= d;
  m.batch_offsets.resize(batch);
  for (size_t b = 0; b < batch; ++b) {
    size_t rest = b, offset = 0;
    for (size_t d = lead_rank; d-- > 0;) {
      offset += rest % lead[d] * strides[d];
      rest /= lead[d];
    }
    m.batch_offsets[b] = offset;
  }
  return m;
}

std::vector<OperandDescriptor> infer_attention(const OpView& op) {
  const PermutedView q = permuted(op, "query", "queryPermutation");
  const PermutedView kt = permuted(op, "keysTransposed", "keysPermutation");
  const PermutedView v = permuted(op, "values", "valuesPermutation");
  const size_t rank = q.shape.size();
  if (rank < 2 || kt.shape.size() != rank || v.shape.size() != rank) op.fail("the operands' ranks differ or are below 2");
  const std::vector<uint32_t> lead(q.shape.begin(), q.shape.end() - 2);
  if (!std::equal(lead.begin(), lead.end(), kt.shape.begin()) || !std::equal(lead.begin(), lead.end(), v.shape.begin()))
    op.fail("the operands' batch dims differ");
  AttentionParams p;
  p.queries = q.shape[rank - 2];
  p.depth = q.shape[rank - 1];
  p.keys = kt.shape[rank - 1];
  p.value_depth = v.shape[rank - 1];
  if (kt.shape[rank - 2] != p.depth || v.shape[rank - 2] != p.keys) op.fail("the operands' matrix dims do not chain");
  if (p.queries == 0 || p.depth == 0 || p.keys == 0 || p.value_depth == 0) op.fail("an operand is empty");
  p.scale = float(op.real("scale"));
  p.query = matrices(lead, q.strides);
  p.keys_t = matrices(lead, kt.strides);
  p.values = matrices(lead, v.strides);
  p.batch = p.query.batch_offsets.size();
  if (op.has("mask")) {
    const OperandDescriptor& mask = op.operand("mask");
    if (mask.data_type != DataType::kFloat32) op.fail("mask must be float32");
    const size_t mask_rank = mask.shape.size();
    std::vector<uint32_t> scores(lead);
    scores.push_back(uint32_t(p.queries));
    scores.push_back(uint32_t(p.keys));
    if (mask_rank > rank || mask_rank == 0 || mask.shape.back() != p.keys)
      op.fail("mask must end with the keys dim and not outrank the scores");
    // Right-aligned against the scores' dims: stride 0 where the mask broadcasts.
    const std::vector<int64_t> base = row_major_strides(mask.shape);
    std::vector<size_t> strides(rank, 0);
    for (size_t i = 0; i < mask_rank; ++i) {
      const size_t d = rank - mask_rank + i;
      if (mask.shape[i] != 1 && mask.shape[i] != scores[d]) op.fail("mask does not broadcast to the scores");
      if (mask.shape[i] != 1) strides[d] = size_t(base[i]);
    }
    p.has_mask = true;
    p.mask = matrices(lead, strides);
    p.mask.col_stride = 1;
  }
  op.keep(p);
  std::vector<uint32_t> shape(lead);
  shape.push_back(uint32_t(p.queries));
  shape.push_back(uint32_t(p.value_depth));
  return {{DataType::kFloat32, shape}};
}

Kernel lower_attention(const OpView& op, const std::vector<OperandDescriptor>&) {
  return make_attention_kernel(op.attributes<AttentionParams>());
}

}  // namespace

const OpDef& attention_op() {
  static const OpDef def{"attention",
                         {{"query", ParamKind::kOperand},
                          {"keysTransposed", ParamKind::kOperand},
                          {"values", ParamKind::kOperand}},
                         {{"mask", ParamKind::kOptionalOperand},
                          {"scale", ParamKind::kDouble, 1.0},
                          {"queryPermutation", ParamKind::kUintList},
                          {"keysPermutation", ParamKind::kUintList},
                          {"valuesPermutation", ParamKind::kUintList}},
                         {{"query", type_bit(DataType::kFloat32), 2, kAnyRank},
                          {"keysTransposed", type_bit(DataType::kFloat32), 2, kAnyRank},
                          {"values", type_bit(DataType::kFloat32), 2, kAnyRank},
                          {"mask", type_bit(DataType::kFloat32), 1, kAnyRank},
                          {"output", type_bit(DataType::kFloat32), 2, kAnyRank}},
                         infer_attention,
                         lower_attention};
  return def;
}

}  // namespace webnn
