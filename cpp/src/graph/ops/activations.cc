// Activations: elu, gelu, hardSigmoid, hardSwish, leakyRelu, linear, relu, sigmoid, softplus,
// softsign, tanh. alpha/beta are `double` options, cast to the input's data type when lowered.
#include <cmath>

#include "graph/op_def.h"
#include "graph/ops/unary_common.h"

namespace webnn {

namespace {

ParamSpec real_option(const char* name, double default_value) { return {name, ParamKind::kDouble, default_value}; }

}  // namespace

const OpDef& elu_op() {
  static const OpDef def = unary_op_def<UnaryOp::kElu>("elu", kFloatTypes, {real_option("alpha", 1.0)});
  return def;
}
const OpDef& gelu_op() {
  static const OpDef def = unary_op_def<UnaryOp::kGelu>("gelu", kFloatTypes);
  return def;
}
const OpDef& hardSigmoid_op() {
  static const OpDef def = unary_op_def<UnaryOp::kHardSigmoid>(
      "hardSigmoid", kFloatTypes, {real_option("alpha", 0.2), real_option("beta", 0.5)});
  return def;
}
const OpDef& hardSwish_op() {
  static const OpDef def = unary_op_def<UnaryOp::kHardSwish>("hardSwish", kFloatTypes);
  return def;
}
const OpDef& leakyRelu_op() {
  static const OpDef def =
      unary_op_def<UnaryOp::kLeakyRelu>("leakyRelu", kFloatTypes, {real_option("alpha", 0.01)});
  return def;
}
const OpDef& linear_op() {
  static const OpDef def = unary_op_def<UnaryOp::kLinear>("linear", kFloatTypes,
                                                          {real_option("alpha", 1.0), real_option("beta", 0.0)});
  return def;
}
const OpDef& relu_op() {
  static const OpDef def = [] {
    OpDef d = unary_op_def<UnaryOp::kRelu>("relu", kSignedTypes);
    d.epilogue_role = EpilogueRole::kClamp;
    d.clamp_bounds = [](const OpView&) { return std::pair<float, float>(0.0f, INFINITY); };
    return d;
  }();
  return def;
}
const OpDef& sigmoid_op() {
  static const OpDef def = unary_op_def<UnaryOp::kSigmoid>("sigmoid", kFloatTypes);
  return def;
}
const OpDef& softplus_op() {
  static const OpDef def = unary_op_def<UnaryOp::kSoftplus>("softplus", kFloatTypes);
  return def;
}
const OpDef& softsign_op() {
  static const OpDef def = unary_op_def<UnaryOp::kSoftsign>("softsign", kFloatTypes);
  return def;
}
const OpDef& tanh_op() {
  static const OpDef def = unary_op_def<UnaryOp::kTanh>("tanh", kFloatTypes);
  return def;
}

}  // namespace webnn
