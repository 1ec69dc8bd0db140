// The compiler's working state, handed from pass to pass (compiler/pipeline.cc runs them in order).
#pragma once
#include <map>
#include <set>
#include <string>
#include <vector>

#include "compiler/plan.h"
#include "graph/epilogue.h"

namespace webnn {

// What epilogue fusion (and transpose absorption) decided for one node.
struct NodeFusion {
  int runs_in = -1;   // absorbed: the node whose kernel runs this node's op (-1: it runs itself)
  Epilogue epilogue;  // for a node that absorbs others: what its kernel applies
  int output = -1;    // the node's new output operand (the last absorbed node's), -1: unchanged
  int addend = -1;    // the absorbed add's other operand: the kernel's extra (last) input
  int emit_at = -1;   // with an addend: the add's position, where the addend exists
  bool absorbed_clamp = false;
  int untransposed_input = -1;  // transpose_absorption: the operand its kernel reads as input 0
  std::vector<std::string> absorbed_ops;  // what its kernel runs besides its own op
};

struct CompileState {
  CompileState(GraphIR ir, const std::map<std::string, int>& outputs) : graph(std::move(ir)), outputs(outputs) {
    for (const auto& [name, id] : outputs) output_ids.insert(id);
  }

  // The working graph: a copy of the built one. Constant folding turns folded nodes' outputs into
  // constants (producer -1), so later passes see a smaller graph.
  GraphIR graph;
  const std::map<std::string, int> outputs;  // name -> operand id
  std::set<int> output_ids;                  // the operands named in `outputs`

  // dead_code: what the outputs depend on.
  std::vector<bool> live_node, live_operand;
  // epilogue_fusion: one entry per node.
  std::vector<NodeFusion> fusion;
  // lowering: the operand whose storage each operand uses (views alias their input), and which
  // operands are read at run time (constants only copied into a kernel's packed form are not).
  std::vector<int> alias_root;
  std::vector<bool> read_at_run_time;

  std::shared_ptr<Plan> plan = std::make_shared<Plan>();

  // Per operand, how many live nodes read it (a node reading it twice counts twice).
  std::vector<int> live_readers() const {
    std::vector<int> readers(graph.operands.size(), 0);
    for (size_t n = 0; n < graph.nodes.size(); ++n)
      if (live_node[n])
        for (int in : graph.nodes[n].inputs) ++readers[size_t(in)];
    return readers;
  }
  // Whether operand `id` is one of the graph outputs.
  bool is_graph_output(int id) const { return output_ids.count(id) != 0; }
  // Where each operand's bytes live: (root operand, byte offset). A view lives in its input's bytes,
  // a placed operand (Plan::placements) in its root's; every other operand is its own root.
  struct Storage {
    int root;
    size_t offset;
  };
  std::vector<Storage> storage() const {
    std::vector<Storage> at(graph.operands.size());
    for (size_t i = 0; i < at.size(); ++i) at[i] = {alias_root.empty() ? int(i) : alias_root[i], 0};
    for (const Plan::Placement& p : plan->placements) at[size_t(p.operand)] = {p.root, p.offset};
    for (size_t i = 0; i < at.size(); ++i)  // a root may itself be placed: follow to the end
      while (at[size_t(at[i].root)].root != at[i].root) at[i] = {at[size_t(at[i].root)].root, at[i].offset + at[size_t(at[i].root)].offset};
    return at;
  }
  // Rewrites Plan::placements so that no root is itself placed.
  void flatten_placements() {
    const std::vector<Storage> at = storage();
    for (Plan::Placement& p : plan->placements) {
      p.root = at[size_t(p.operand)].root;
      p.offset = at[size_t(p.operand)].offset;
    }
  }
  void log(const char* pass, std::string summary) { plan->pass_log.push_back({pass, std::move(summary)}); }
};

}  // namespace webnn
