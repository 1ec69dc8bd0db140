// elementwise (made by the compiler, not a builder method: compiler/passes/elementwise_fusion.cc):
// a group of float32 element-wise ops run as one chain, block by block in L1. Its steps live in the
// node's kept attributes; its inputs are the group's operands from outside it.
#include "graph/op_def.h"
#include "kernels/elementwise/elementwise.h"

namespace webnn {

namespace {

std::vector<OperandDescriptor> infer_elementwise_chain(const OpView& op) {
  return {op.attributes<ElementwiseChain>().output};
}

Kernel lower_elementwise_chain(const OpView& op, const std::vector<OperandDescriptor>& outputs) {
  std::vector<std::vector<uint32_t>> shapes;
  std::vector<const void*> constants;
  for (const OperandInfo* input : op.infos("inputs")) {
    shapes.push_back(input->desc.shape);
    constants.push_back(input->constant_data ? input->constant_data->data() : nullptr);
  }
  return make_elementwise_chain_kernel(op.attributes<ElementwiseChain>().steps, outputs[0].shape, shapes, constants);
}

}  // namespace

const OpDef& elementwise_chain_op() {
  static const OpDef def = [] {
    OpDef d{"elementwise",
            {{"inputs", ParamKind::kOperandList}},
            {},
            {{"inputs", type_bit(DataType::kFloat32), 0, kAnyRank}, {"output", type_bit(DataType::kFloat32), 0, kAnyRank}},
            infer_elementwise_chain,
            lower_elementwise_chain};
    d.element_wise = true;  // every step reads an element before the last step writes it
    return d;
  }();
  return def;
}

}  // namespace webnn
