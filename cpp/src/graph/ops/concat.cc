// concat: joins 1..8192 tensors along an axis (one strided copy per input).
#include "graph/op_def.h"
#include "kernels/data_movement/data_movement.h"

namespace webnn {

namespace {

constexpr size_t kMaxConcatInputs = 8192;

std::vector<OperandDescriptor> infer_concat(const OpView& op) {
  const auto inputs = op.operands("inputs");
  if (inputs.empty() || inputs.size() > kMaxConcatInputs)
    op.fail(str_cat("the number of inputs must be in [1, ", kMaxConcatInputs, "], got ", inputs.size()));
  const OperandDescriptor& first = *inputs[0];
  const size_t axis = op.axis("axis", first.shape.size());
  std::vector<uint32_t> shape = first.shape;
  uint64_t axis_size = 0;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const OperandDescriptor& in = *inputs[i];
    if (in.data_type != first.data_type)
      op.fail(str_cat("inputs[", i, "] has data type ", data_type_name(in.data_type), " but inputs[0] has ",
                      data_type_name(first.data_type)));
    if (in.shape.size() != first.shape.size())
      op.fail(str_cat("inputs[", i, "] has rank ", in.shape.size(), " but inputs[0] has rank ", first.shape.size()));
    for (size_t d = 0; d < shape.size(); ++d)
      if (d != axis && in.shape[d] != shape[d])
        op.fail(str_cat("inputs[", i, "] has shape ", shape_to_string(in.shape), ", which differs from inputs[0] ",
                        shape_to_string(shape), " outside axis ", axis));
    axis_size += in.shape[axis];
  }
  if (axis_size > kMaxDimension) op.fail(str_cat("the output size along axis ", axis, " exceeds 2^31-1"));
  shape[axis] = uint32_t(axis_size);
  return {{first.data_type, shape}};
}

Kernel lower_concat(const OpView& op, const std::vector<OperandDescriptor>& outputs) {
  const auto inputs = op.operands("inputs");
  const size_t axis = size_t(op.integer("axis"));
  const std::vector<int64_t> out_strides = row_major_strides(outputs[0].shape);
  std::vector<StridedCopy> copies;
  int64_t offset = 0;
  for (size_t i = 0; i < inputs.size(); ++i) {
    StridedCopy c = contiguous_copy(inputs[i]->shape);
    c.input = int(i);
    c.dst_strides = out_strides;
    c.dst_offset = offset * out_strides[axis];
    offset += inputs[i]->shape[axis];
    copies.push_back(std::move(c));
  }
  return make_strided_copy_kernel(outputs[0].data_type, std::move(copies));
}

PiecesLayout concat_pieces(const OpView& op) {
  const auto inputs = op.operands("inputs");
  const size_t axis = size_t(op.integer("axis"));
  std::vector<uint32_t> sizes;
  OperandDescriptor whole = *inputs[0];
  whole.shape[axis] = 0;
  for (const OperandDescriptor* in : inputs) {
    sizes.push_back(in->shape[axis]);
    whole.shape[axis] += in->shape[axis];
  }
  return pieces_along_axis(PiecesLayout::Kind::kInputsInOutput, whole, axis, sizes);
}

}  // namespace

const OpDef& concat_op() {
  static const OpDef def = [] {
    OpDef d{"concat",
            {{"inputs", ParamKind::kOperandList}, {"axis", ParamKind::kUint}},
            {},
            {{"inputs", kAnyType, 1, kAnyRank}, {"output", kAnyType, 1, kAnyRank}},
            infer_concat,
            lower_concat};
    d.pieces_layout = concat_pieces;
    d.to_nhwc = to_nhwc_along_axis;
    d.exact_results = always_exact;
    return d;
  }();
  return def;
}

}  // namespace webnn
