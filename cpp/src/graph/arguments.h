// WebIDL-style conversion of builder arguments (Value) into normalized attributes (Attr).
#pragma once
#include <functional>

#include "graph/op_def.h"

namespace webnn {

// `operand_id` maps an Operand to its id in the builder, throwing TypeError when it belongs to
// another builder. Throws TypeError (prefixed with `prefix`) when the value does not convert.
Attr convert_argument(const ParamSpec& spec, const Value& value, const std::string& prefix,
                      const std::function<int(const Operand&, const std::string&)>& operand_id);

// [EnforceRange] conversion of one number to an integer in [lo, hi].
bool enforce_range(const Number& n, int64_t lo, int64_t hi, int64_t* out);

}  // namespace webnn
