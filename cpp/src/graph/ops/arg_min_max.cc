// argMax / argMin: the index of the first maximum (minimum) along one axis.
#include <limits>

#include "graph/op_def.h"
#include "kernels/reduce/reduce.h"

namespace webnn {

namespace {

constexpr DataTypeSet kOutputTypes = type_bit(DataType::kInt32) | type_bit(DataType::kInt64);

std::vector<OperandDescriptor> infer_arg_min_max(const OpView& op) {
  const auto& input = op.operand("input");
  const size_t axis = op.axis("axis", input.shape.size());
  const DataType output_type = op.data_type("outputDataType");
  if (!(kOutputTypes & type_bit(output_type)))
    op.fail(str_cat("outputDataType must be int32 or int64, got ", data_type_name(output_type)));
  const uint64_t max_index = output_type == DataType::kInt32 ? uint64_t(std::numeric_limits<int32_t>::max())
                                                             : uint64_t(std::numeric_limits<int64_t>::max());
  if (input.shape[axis] > max_index)
    op.fail(str_cat("input dim ", axis, " (", input.shape[axis], ") exceeds the range of ",
                    data_type_name(output_type)));
  std::vector<uint32_t> shape;
  for (size_t d = 0; d < input.shape.size(); ++d) {
    if (d != size_t(axis)) shape.push_back(input.shape[d]);
    else if (op.flag("keepDimensions")) shape.push_back(1);
  }
  return {{output_type, shape}};
}

template <bool IsMax>
Kernel lower_arg_min_max(const OpView& op, const std::vector<OperandDescriptor>& outputs) {
  const auto& input = op.operand("input");
  return make_arg_min_max_kernel(IsMax, input.data_type, outputs[0].data_type,
                                 split_at_axis(input.shape, size_t(op.integer("axis"))));
}

template <bool IsMax>
OpDef arg_min_max_def(const char* name) {
  return OpDef{name,
               {{"input", ParamKind::kOperand}, {"axis", ParamKind::kUint}},
               {{"keepDimensions", ParamKind::kBool, false},
                {"outputDataType", ParamKind::kDataType, std::string("int32")}},
               {{"input", kAnyType, 1, kAnyRank}, {"output", kOutputTypes, 0, kAnyRank}},
               infer_arg_min_max,
               lower_arg_min_max<IsMax>};
}

}  // namespace

const OpDef& argMax_op() {
  static const OpDef def = arg_min_max_def<true>("argMax");
  return def;
}
const OpDef& argMin_op() {
  static const OpDef def = arg_min_max_def<false>("argMin");
  return def;
}

}  // namespace webnn
