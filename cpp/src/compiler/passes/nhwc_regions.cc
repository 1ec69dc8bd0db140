// NHWC regions: an NCHW graph's convolutions run channels-last (the indirect GEMM reads NHWC rows in
// place, no im2col), and so do the ops between them that can follow (element-wise ops, pooling,
// resample, concat and split along channels), with one transpose where a region is entered and one
// where NCHW is read again, instead of a pair around each convolution. Converted nodes get new
// NHWC output operands; each old output is then produced by a transpose back to NCHW, which dead-code
// removal (run here) drops where nothing reads it. A transpose that moves no data is a reshape view.
#include <algorithm>
#include <memory>

#include "compiler/passes.h"

namespace webnn {

namespace {

const std::vector<int64_t> kToNhwc = {0, 2, 3, 1}, kToNchw = {0, 3, 1, 2};

OperandDescriptor permuted(const OperandDescriptor& desc, const std::vector<int64_t>& perm) {
  OperandDescriptor out = desc;
  for (size_t i = 0; i < perm.size(); ++i) out.shape[i] = desc.shape[size_t(perm[i])];
  return out;
}

// A single value (a scalar constant): the same in any layout, never transposed.
bool single_value(int id, const GraphIR& ir) {
  size_t count = 1;
  for (uint32_t d : ir.operands[size_t(id)].desc.shape) count *= d;
  return count == 1;
}

bool all_rank4(const std::vector<int>& ids, const GraphIR& ir) {
  size_t rank4 = 0;
  for (int id : ids) {
    if (ir.operands[size_t(id)].desc.shape.size() == 4) ++rank4;
    else if (!single_value(id, ir)) return false;
  }
  return rank4 > 0;
}

std::vector<int> values(const std::vector<int*>& ids) {
  std::vector<int> out;
  for (const int* id : ids) out.push_back(*id);
  return out;
}

// The operands that follow the layout: every input of an element-wise op, the first parameter's
// (input, or concat's inputs) of the others.
std::vector<int*> layout_operands(Node& node) {
  std::vector<int*> ids;
  for (size_t i = 0; i < (node.def->element_wise ? node.args.size() : std::min<size_t>(1, node.args.size())); ++i) {
    if (auto* ref = std::get_if<OperandRef>(&node.args[i])) ids.push_back(&ref->id);
    if (auto* list = std::get_if<OperandList>(&node.args[i]))
      for (int& id : list->ids) ids.push_back(&id);
  }
  return ids;
}

bool is_seed(const Node& node, const GraphIR& ir) {
  return node.def->nhwc_seed && node.def->nhwc_seed(node, ir.operands);
}

}  // namespace

void convert_to_nhwc(CompileState& state) {
  GraphIR& ir = state.graph;
  const OpDef* transpose = find_op("transpose");
  const OpDef* reshape = find_op("reshape");
  size_t seeds = 0;
  for (size_t n = 0; n < ir.nodes.size(); ++n) seeds += state.live_node[n] && is_seed(ir.nodes[n], ir);
  // A lone convolution gains nothing: its kernel transposes around itself where that pays (kViaNhwc).
  if (seeds < 2) {
    state.log("nhwc_regions", str_cat("0 nodes run channels-last (", seeds, " NCHW convolutions: too few to pay)"));
    return;
  }

  std::vector<int> twin(ir.operands.size(), -1);  // an NCHW operand -> the NHWC operand holding it
  std::vector<Node> nodes;
  size_t converted = 0;
  std::vector<int> entered, nchw_again;  // transposes into NHWC; old outputs, now transposes of their twins
  const size_t operand_count = ir.operands.size();
  const auto add_operand = [&](const OperandDescriptor& desc) {
    OperandInfo info;
    info.desc = desc;
    ir.operands.push_back(std::move(info));
    twin.push_back(-1);
    return int(ir.operands.size()) - 1;
  };
  const auto emit_transpose = [&](int x, int y, const std::vector<int64_t>& perm, const std::string& of) {
    const std::string label = (of.empty() ? "" : of + " ") + (perm == kToNhwc ? "(to NHWC)" : "(to NCHW)");
    if (transpose_moves_no_data(perm, ir.operands[size_t(x)].desc.shape)) {
      const std::vector<uint32_t>& shape = ir.operands[size_t(y)].desc.shape;
      nodes.push_back(Node{reshape, {OperandRef{x}, std::vector<int64_t>(shape.begin(), shape.end())}, label, {x}, {y},
                           nullptr});
      return;
    }
    nodes.push_back(Node{transpose, {OperandRef{x}, perm}, label, {x}, {y},
                         std::make_shared<KeptAs<std::vector<int64_t>>>(perm)});
  };
  const auto nhwc_input = [&](int x, const std::string& label) {
    if (twin[size_t(x)] < 0) {
      const int y = add_operand(permuted(ir.operands[size_t(x)].desc, kToNhwc));
      emit_transpose(x, y, kToNhwc, label);
      twin[size_t(x)] = y;
      entered.push_back(y);
    }
    return twin[size_t(x)];
  };

  for (size_t n = 0; n < ir.nodes.size(); ++n) {
    // Dead nodes are dropped: an earlier pass may have given a live node one of their outputs.
    if (!state.live_node[n]) continue;
    Node node = ir.nodes[n];
    const std::vector<int*> laid_out = layout_operands(node);
    const std::vector<int> inputs = values(laid_out);
    bool follow = is_seed(node, ir);
    if (!follow && (node.def->element_wise || node.def->to_nhwc) && all_rank4(inputs, ir) &&
        all_rank4(node.outputs, ir))
      for (int in : inputs) follow = follow || twin[size_t(in)] >= 0;  // an input is already NHWC
    if (!follow) {
      nodes.push_back(std::move(node));
      continue;
    }
    for (int* id : laid_out)  // a single value ([1, 1, 1, 1]) reads the same in either layout
      if (ir.operands[size_t(*id)].desc.shape.size() == 4 && !single_value(*id, ir)) *id = nhwc_input(*id, node.label);
    rebuild_inputs(node);
    if (node.def->to_nhwc ? !node.def->to_nhwc(node, ir.operands) : (revalidate(node, ir.operands), false)) {
      nodes.push_back(ir.nodes[n]);  // it cannot: it reads NCHW (the transposes made for it go unread)
      continue;
    }
    ++converted;
    const std::vector<int> old_outputs = node.outputs;
    for (size_t i = 0; i < old_outputs.size(); ++i) {
      node.outputs[i] = add_operand(permuted(ir.operands[size_t(old_outputs[i])].desc, kToNhwc));
      twin[size_t(old_outputs[i])] = node.outputs[i];
    }
    const std::string label = node.label;
    const std::vector<int> new_outputs = node.outputs;
    nodes.push_back(std::move(node));
    // The NCHW values, for whatever still reads them (dropped by dead-code removal otherwise).
    for (size_t i = 0; i < old_outputs.size(); ++i) {
      emit_transpose(new_outputs[i], old_outputs[i], kToNchw, label);
      nchw_again.push_back(old_outputs[i]);
    }
  }
  if (converted == 0) {
    ir.operands.resize(operand_count);
    state.log("nhwc_regions", "0 nodes run channels-last");
    return;
  }
  ir.nodes = std::move(nodes);
  for (OperandInfo& operand : ir.operands) operand.producer = -1;
  for (size_t n = 0; n < ir.nodes.size(); ++n)
    for (int out : ir.nodes[n].outputs) ir.operands[size_t(out)].producer = int(n);
  remove_dead_code(state);
  state.plan->pass_log.pop_back();  // the dead-code line: this pass logs its own
  size_t entries = 0, exits = 0;
  for (int id : entered) entries += state.live_operand[size_t(id)];
  for (int id : nchw_again) exits += state.live_operand[size_t(id)];
  state.log("nhwc_regions", str_cat(converted, " nodes run channels-last, ", entries, " transposes into NHWC, ",
                                    exits, " back to NCHW"));
}

}  // namespace webnn
