// clamp: min(max(x, minValue), maxValue). The bounds are MLNumbers cast to the input's data type
// (CR-scalars; bigints stay exact for int64/uint64). An absent bound, or a NaN one (webnn#874),
// does not clamp.
#include <cmath>
#include <tuple>

#include "graph/op_def.h"
#include "kernels/kernel_util.h"
#include "kernels/unary/unary.h"

namespace webnn {

namespace {

struct Bound {
  uint8_t bytes[8] = {};  // one element of the input's data type
  std::string text;       // for messages
};

Bound cast_bound(const OpView& op, const char* name, double absent_value) {
  DataType type = op.operand("input").data_type;
  Number value = Number::from_double(absent_value);  // -/+Infinity: the type's lowest/highest
  if (op.has(name)) {
    Number given = op.number(name);
    if (!(given.kind == Number::Kind::kFloat && std::isnan(given.f))) value = given;
  }
  Bound bound;
  cast_number_to(value, type, bound.bytes);
  bound.text = visit_type(type, [&](auto tag) {
    decltype(tag) v;
    std::memcpy(&v, bound.bytes, sizeof(v));
    return str_cat(+load(v));  // unary + prints int8/uint8 as numbers
  });
  return bound;
}

bool less_than(DataType type, const Bound& a, const Bound& b) {
  return visit_type(type, [&](auto tag) {
    decltype(tag) x, y;
    std::memcpy(&x, a.bytes, sizeof(x));
    std::memcpy(&y, b.bytes, sizeof(y));
    return load(x) < load(y);
  });
}

std::vector<OperandDescriptor> infer_clamp(const OpView& op) {
  DataType type = op.operand("input").data_type;
  Bound lo = cast_bound(op, "minValue", -INFINITY), hi = cast_bound(op, "maxValue", INFINITY);
  if (less_than(type, hi, lo))
    op.fail(str_cat("minValue (", lo.text, ") is greater than maxValue (", hi.text, ") after casting to ",
                    data_type_name(type)));
  return {op.operand("input")};
}

Kernel lower_clamp(const OpView& op, const std::vector<OperandDescriptor>& outputs) {
  Bound lo = cast_bound(op, "minValue", -INFINITY), hi = cast_bound(op, "maxValue", INFINITY);
  return make_clamp_kernel(outputs[0].data_type, outputs[0].element_count(), lo.bytes, hi.bytes);
}

// The bounds as float32, for a clamp fused into a float32 kernel's epilogue.
std::pair<float, float> clamp_bounds_f32(const OpView& op) {
  auto bound = [&](const char* name, float absent) {
    if (!op.has(name)) return absent;
    const float value = float(number_to_double_as(op.number(name), DataType::kFloat32));
    return std::isnan(value) ? absent : value;
  };
  return {bound("minValue", -INFINITY), bound("maxValue", INFINITY)};
}

}  // namespace

const OpDef& clamp_op() {
  static const OpDef def = [] {
    OpDef d{"clamp",
            {{"input", ParamKind::kOperand}},
            {{"minValue", ParamKind::kNumber}, {"maxValue", ParamKind::kNumber}},
            {{"input", kAnyType, 0, kAnyRank}, {"output", kAnyType, 0, kAnyRank}},
            infer_clamp,
            lower_clamp};
    d.epilogue_role = EpilogueRole::kClamp;
    d.clamp_bounds = clamp_bounds_f32;
    d.element_wise = true;
    d.chain_step = [](const OpView& op, ChainStep& step) {
      step.kind = ChainStep::Kind::kClamp;
      std::tie(step.min, step.max) = clamp_bounds_f32(op);
      return true;
    };
    d.exact_results = always_exact;
    return d;
  }();
  return def;
}

}  // namespace webnn
