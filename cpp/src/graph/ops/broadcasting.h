// Shape inference shared by the broadcasting element-wise ops (spec §2.4).
#pragma once
#include <initializer_list>
#include <string>

#include "graph/op_def.h"

namespace webnn {

// The bidirectional broadcast of the named operands' shapes, or a TypeError naming them.
inline std::vector<uint32_t> broadcast_operand_shapes(const OpView& op, std::initializer_list<const char*> names) {
  std::vector<uint32_t> shape;
  bool ok = true;
  std::string listed;
  for (const char* name : names) {
    const auto& operand_shape = op.operand(name).shape;
    ok = ok && broadcast_shapes(shape, operand_shape, &shape);
    listed += str_cat(listed.empty() ? "" : ", ", name, " ", shape_to_string(operand_shape));
  }
  if (!ok) op.fail("the shapes do not broadcast: " + listed);
  return shape;
}

}  // namespace webnn
