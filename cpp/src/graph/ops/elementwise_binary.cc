// Element-wise binary ops with bidirectional broadcasting: add, sub, mul, div, max, min, pow.
#include "graph/ops/broadcasting.h"
#include "kernels/elementwise/elementwise.h"

namespace webnn {

namespace {

std::vector<OperandDescriptor> infer_binary(const OpView& op) {
  return {{op.operand("a").data_type, broadcast_operand_shapes(op, {"a", "b"})}};
}

template <BinaryOp Op>
Kernel lower_binary(const OpView& op, const std::vector<OperandDescriptor>& outputs) {
  return make_binary_kernel(Op, outputs[0].data_type, op.operand("a").shape, op.operand("b").shape,
                            outputs[0].shape);
}

// Every binary op allows any dtype for a, b the same as a, and any rank.
template <BinaryOp Op>
OpDef binary_def(const char* name) {
  OpDef def{name,
            {{"a", ParamKind::kOperand}, {"b", ParamKind::kOperand}},
            {},
            {{"a", kAnyType, 0, kAnyRank}, {"b", kAnyType, 0, kAnyRank, "a"}, {"output", kAnyType, 0, kAnyRank}},
            infer_binary,
            lower_binary<Op>};
  def.element_wise = true;
  def.chain_step = [](const OpView&, ChainStep& step) {
    step.kind = ChainStep::Kind::kBinary;
    step.binary = Op;
    return true;
  };
  return def;
}

// x * c or x + c (either order) for a constant c that broadcasts into x along at most one axis.
template <bool kMul>
bool binary_channel_affine(const OpView& op, ChannelAffine& map) {
  const OperandInfo& a = op.info("a");
  const OperandInfo& b = op.info("b");
  const bool constant_b = b.kind == OperandInfo::Kind::kConstant;
  const OperandInfo& x = constant_b ? a : b;
  const OperandInfo& c = constant_b ? b : a;
  const std::vector<double> values = float_constant_values(c);
  if (values.empty() || c.desc.shape.size() > x.desc.shape.size()) return false;
  size_t axis = 0, non_unit = 0;
  const size_t lead = x.desc.shape.size() - c.desc.shape.size();
  for (size_t d = 0; d < c.desc.shape.size(); ++d) {
    if (c.desc.shape[d] == 1) continue;
    if (c.desc.shape[d] != x.desc.shape[lead + d]) return false;
    axis = lead + d;
    ++non_unit;
  }
  if (non_unit > 1) return false;
  map.input = constant_b ? 0 : 1;
  map.axis = axis;
  const std::vector<double> identity(values.size(), kMul ? 0.0 : 1.0);
  map.scale = kMul ? values : identity;
  map.shift = kMul ? identity : values;
  return true;
}

}  // namespace

const OpDef& add_op() {
  static const OpDef def = [] {
    OpDef d = binary_def<BinaryOp::kAdd>("add");
    d.epilogue_role = EpilogueRole::kAdd;
    d.channel_affine = binary_channel_affine<false>;
    return d;
  }();
  return def;
}
const OpDef& div_op() {
  static const OpDef def = binary_def<BinaryOp::kDiv>("div");
  return def;
}
const OpDef& max_op() {
  static const OpDef def = with_exact_results(binary_def<BinaryOp::kMax>("max"));
  return def;
}
const OpDef& min_op() {
  static const OpDef def = with_exact_results(binary_def<BinaryOp::kMin>("min"));
  return def;
}
const OpDef& mul_op() {
  static const OpDef def = [] {
    OpDef d = binary_def<BinaryOp::kMul>("mul");
    d.epilogue_role = EpilogueRole::kMul;
    d.channel_affine = binary_channel_affine<true>;
    return d;
  }();
  return def;
}
const OpDef& pow_op() {
  static const OpDef def = binary_def<BinaryOp::kPow>("pow");
  return def;
}
const OpDef& sub_op() {
  static const OpDef def = binary_def<BinaryOp::kSub>("sub");
  return def;
}

}  // namespace webnn
