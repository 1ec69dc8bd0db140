// Element-wise unary ops: abs, ceil, cos, erf, exp, floor, identity, log, neg, reciprocal,
// roundEven, sign, sin, sqrt, tan.
#include "graph/op_def.h"
#include "graph/ops/unary_common.h"

namespace webnn {

namespace {

Kernel lower_identity(const OpView&, const std::vector<OperandDescriptor>& outputs) {
  // A real copy: the output may be a graph output while the input is an input or constant.
  DataType type = outputs[0].data_type;
  return make_cast_kernel(type, type, outputs[0].element_count());
}

}  // namespace

#define WEBNN_UNARY_OP(name, Op, types)                                           \
  const OpDef& name##_op() {                                                      \
    static const OpDef def = unary_op_def<UnaryOp::Op>(#name, types);             \
    return def;                                                                   \
  }

WEBNN_UNARY_OP(abs, kAbs, kSignedTypes)
WEBNN_UNARY_OP(ceil, kCeil, kFloatTypes)
WEBNN_UNARY_OP(cos, kCos, kFloatTypes)
WEBNN_UNARY_OP(erf, kErf, kFloatTypes)
WEBNN_UNARY_OP(exp, kExp, kFloatTypes)
WEBNN_UNARY_OP(floor, kFloor, kFloatTypes)
WEBNN_UNARY_OP(log, kLog, kFloatTypes)
WEBNN_UNARY_OP(neg, kNeg, kSignedTypes)
WEBNN_UNARY_OP(reciprocal, kReciprocal, kFloatTypes)
WEBNN_UNARY_OP(roundEven, kRoundEven, kFloatTypes)
WEBNN_UNARY_OP(sign, kSign, kSignedTypes)
WEBNN_UNARY_OP(sin, kSin, kFloatTypes)
WEBNN_UNARY_OP(sqrt, kSqrt, kFloatTypes)
WEBNN_UNARY_OP(tan, kTan, kFloatTypes)

#undef WEBNN_UNARY_OP

const OpDef& identity_op() {
  static const OpDef def = with_exact_results(OpDef{"identity",
                                                    {{"input", ParamKind::kOperand}},
                                                    {},
                                                    {{"input", kAnyType, 0, kAnyRank}, {"output", kAnyType, 0, kAnyRank}},
                                                    infer_same_as_input,
                                                    lower_identity});
  return def;
}

}  // namespace webnn
