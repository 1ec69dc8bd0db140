// The builder's state: the graph IR it records. graph/builder.cc records into it; the runtime
// (runtime/graph_build.cc) compiles it; formats/ read it to save a model.
#pragma once
#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <set>

#include "graph/dynamic_shapes.h"
#include "graph/op_def.h"

namespace webnn::detail {

struct BuilderImpl {
  std::shared_ptr<ContextImpl> context;        // kept alive; only the runtime looks inside
  const std::atomic<bool>* context_lost = nullptr;  // the context's lost flag
  std::mutex mutex;
  GraphIR ir;
  bool has_built = false;
  // Whether the operands and nodes stay readable after build (for MLOperand descriptors and saving);
  // off only for a builder nobody sees again (load_model's), so a huge graph is not copied.
  bool keep_graph_after_build = true;
  std::set<std::string> input_names;
  DynamicShapes dynamic;  // dynamic input dimensions, and how each operand's dimensions follow them

  void check_can_build(const std::string& what) const {
    if (has_built) throw_error(ErrorKind::kInvalidStateError, what + ": the builder has already built a graph");
    if (*context_lost) throw_error(ErrorKind::kInvalidStateError, what + ": the context is lost");
  }
  Operand add_operand(const std::shared_ptr<BuilderImpl>& self, OperandInfo info) {
    if (info.desc.is_dynamic()) info.reported = std::make_shared<const OperandDescriptor>(reported_descriptor(info.desc));
    ir.operands.push_back(std::move(info));
    dynamic.add_operand(ir.operands);
    return Operand(self, int(ir.operands.size()) - 1);
  }
};

// A constant whose bytes are `bytes` itself, not a copy (the model loader's memory-mapped weights).
Operand constant_in_place(GraphBuilder& builder, const OperandDescriptor& descriptor, BufferPtr bytes);

// Calls `visit` with the builder's graph under the builder's lock. The operands and nodes stay
// readable after build().
void visit_builder_graph(BuilderImpl* builder, const std::function<void(const GraphIR&)>& visit);

}  // namespace webnn::detail
