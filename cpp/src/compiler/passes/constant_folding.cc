// Constant folding: a node whose inputs are all constants runs once, at build time, with the same
// kernel it would run with at dispatch (so the result is bit-identical), and its outputs become
// constants. Dequantized or reshaped weights then reach the kernels that pack them as constants.
#include <algorithm>

#include "compiler/passes.h"
#include "core/thread_pool.h"

namespace webnn {

namespace {

// A folded result may be larger than its inputs (a dequantized int4 weight is 8x), but not by
// more, so that a constant broadcast to a huge shape stays a run-time op.
constexpr size_t kMaxGrowth = 8;
constexpr size_t kAlwaysFoldBytes = size_t(1) << 20;

bool is_constant(const OperandInfo& info) {
  return info.kind == OperandInfo::Kind::kConstant && info.constant_data;
}

}  // namespace

void fold_constants(CompileState& state) {
  GraphIR& ir = state.graph;
  ThreadPool caller_only(1);
  size_t folded = 0, bytes = 0;
  for (size_t n = 0; n < ir.nodes.size(); ++n) {
    if (!state.live_node[n]) continue;
    const Node& node = ir.nodes[n];
    if (node.inputs.empty() || node.outputs.empty()) continue;
    if (!std::all_of(node.inputs.begin(), node.inputs.end(), [&](int in) { return is_constant(ir.operands[in]); }))
      continue;
    if (std::any_of(node.outputs.begin(), node.outputs.end(), [&](int out) { return state.is_graph_output(out); }))
      continue;
    size_t in_bytes = 0, out_bytes = 0;
    for (int in : node.inputs) in_bytes += ir.operands[in].constant_data->size();
    for (int out : node.outputs) out_bytes += ir.operands[out].desc.byte_length();
    if (out_bytes > std::max(kAlwaysFoldBytes, kMaxGrowth * in_bytes)) continue;

    std::vector<BufferPtr> results;
    if (node.def->is_view) {
      results.push_back(ir.operands[node.inputs[0]].constant_data);  // the same bytes, another shape
    } else {
      std::vector<OperandDescriptor> out_descs;
      std::vector<const void*> in_ptrs;
      std::vector<void*> out_ptrs;
      for (int out : node.outputs) {
        out_descs.push_back(ir.operands[out].desc);
        results.push_back(std::make_shared<AlignedBuffer>(std::max<size_t>(out_descs.back().byte_length(), 1)));
        out_ptrs.push_back(results.back()->data());
      }
      for (int in : node.inputs) in_ptrs.push_back(ir.operands[in].constant_data->data());
      try {
        OpView view(node, ir.operands);
        Kernel kernel = node.def->lower(view, out_descs);
        kernel(KernelArgs{in_ptrs.data(), out_ptrs.data(), &caller_only});
      } catch (const std::exception&) {
        continue;  // left to run time, which reports it as it always has
      }
    }
    for (size_t k = 0; k < node.outputs.size(); ++k) {
      OperandInfo& out = ir.operands[node.outputs[k]];
      out.kind = OperandInfo::Kind::kConstant;
      out.constant_data = results[k];
      out.producer = -1;
      bytes += out.desc.byte_length();
    }
    ++folded;
  }
  state.log("constant_folding", str_cat(folded, " nodes folded into ", bytes, " bytes of constants"));
}

}  // namespace webnn
