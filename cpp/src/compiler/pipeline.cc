// The compiler: the passes of compiler/passes.h in a fixed order (docs/adding-a-pass.md).
// WEBNN_DISABLE_PASSES (a comma-separated list of pass names) skips optional passes, to compare
// a graph's results with and without them.
#include <cstdlib>
#include <sstream>

#include "compiler/passes.h"

namespace webnn {

namespace {

struct Pass {
  const char* name;
  void (*run)(CompileState&);
  bool optional;  // the plan is correct without it
};

const Pass kPipeline[] = {
    {"dead_code", remove_dead_code, false},
    {"quantized_ops", run_quantized_ops, true},
    {"constant_folding", fold_constants, true},
    {"half_widening", widen_half_values, true},
    {"op_recognition", recognize_ops, true},
    {"transpose_folding", fold_transposes, true},
    {"scale_folding", fold_scales, true},
    {"attention_fusion", fuse_attention, true},
    {"dead_code", remove_dead_code, false},  // what folding left unread
    {"nhwc_regions", convert_to_nhwc, true},
    {"epilogue_fusion", fuse_epilogues, true},
    {"transpose_absorption", absorb_transposes, true},
    {"layout", assign_layouts, true},
    {"elementwise_fusion", fuse_elementwise_chains, true},
    {"lowering", lower_to_kernels, false},
    {"copy_elision", elide_copies, true},
    {"in_place", run_in_place, true},
    {"memory_plan", plan_memory, false},
};

bool disabled(const char* name) {
  const char* list = std::getenv("WEBNN_DISABLE_PASSES");
  if (!list) return false;
  std::stringstream names(list);
  for (std::string item; std::getline(names, item, ',');)
    if (item == name) return true;
  return false;
}

}  // namespace

std::vector<std::string> compiler_pass_names() {
  std::vector<std::string> names{"batch_split"};
  for (const Pass& pass : kPipeline) names.push_back(pass.name);
  return names;
}

std::shared_ptr<Plan> compile_plan(GraphIR ir, const std::map<std::string, int>& outputs, int threads) {
  BatchChunks split;
  if (disabled("batch_split"))
    split.summary = "disabled (WEBNN_DISABLE_PASSES)";
  else
    split = split_batch(ir, outputs, threads);
  CompileState state(split.splits() ? std::move(split.chunk_ir) : std::move(ir), outputs);
  split.chunk_ir = GraphIR{};
  state.log("batch_split", split.summary);
  for (const Pass& pass : kPipeline) {
    if (pass.optional && disabled(pass.name)) {
      state.log(pass.name, "disabled (WEBNN_DISABLE_PASSES)");
      continue;
    }
    pass.run(state);
  }
  Plan& plan = *state.plan;
  for (const OperandInfo& info : state.graph.operands) plan.operand_descs.push_back(info.desc);
  plan.step_nanos.reset(new std::atomic<uint64_t>[plan.steps.size()]());
  if (split.splits()) {
    plan.split.chunks = split.batch / split.chunk;
    plan.split.workers = split.workers;
  }
  for (const Plan::Input& in : plan.inputs) plan.split.input_bytes.push_back(state.graph.operands[size_t(in.id)].desc.byte_length());
  for (const Plan::Output& out : plan.outputs) plan.split.output_bytes.push_back(out.bytes);
  return state.plan;
}

}  // namespace webnn
