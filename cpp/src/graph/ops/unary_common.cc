#include "graph/ops/unary_common.h"

namespace webnn {

namespace {
// The value as the spec's cast algorithm gives it in `type` (CR-scalars), held as a float.
float cast_scalar(double value, DataType type) { return float(number_to_double_as(Number::from_double(value), type)); }
}  // namespace

UnaryParams unary_params(const OpView& op, DataType type) {
  UnaryParams params;
  for (const ParamSpec& spec : op.def().options) {
    if (spec.name == "alpha") params.alpha = cast_scalar(op.real("alpha"), type);
    if (spec.name == "beta") params.beta = cast_scalar(op.real("beta"), type);
  }
  return params;
}

}  // namespace webnn
