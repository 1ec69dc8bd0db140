// Dynamic input dimensions in the builder. The graph IR holds every operand at representative sizes
// (each dynamic dimension at its probe-0 size), so validation and shape inference run unchanged.
// Two more probes (other sizes, and the maximum sizes) run each op's shape inference again; an
// output dimension that moves with a named input dimension takes its name, one that moves otherwise
// is dynamic with no name, and one that never moves is static. Sizes are checked again, exactly,
// when a dispatch brings concrete shapes (runtime/dynamic_plans.cc).
#pragma once
#include <string>
#include <vector>

#include "graph/op_def.h"

namespace webnn {

class DynamicShapes {
 public:
  bool active() const { return !names_.empty(); }

  // The representative size of the dynamic dimension `name` (TypeError naming `what` when no input
  // declares it).
  uint32_t representative(const std::string& name, const std::string& what) const;
  // "batch=64, seq=96": the representative sizes, for messages.
  std::string describe_sizes() const;
  // An input descriptor with dynamic entries: registers its names (one max_size per name) and returns
  // the descriptor at representative sizes, its dynamic entries kept.
  OperandDescriptor declare_input(const OperandDescriptor& declared, const std::string& what);
  // Every operand added to the IR (inputs after declare_input, constants, op outputs after infer_outputs).
  void add_operand(const std::vector<OperandInfo>& ir_operands);
  // After an op's shape inference at representative sizes: runs it at the other probes and sets the
  // `dynamic` entries of `outputs`.
  void infer_outputs(const OpDef& def, const std::vector<Attr>& args, const std::string& label,
                     const std::vector<int>& inputs, const std::vector<SymbolicSize>& symbolic,
                     const std::vector<OperandInfo>& ir_operands,
                     std::vector<OperandDescriptor>& outputs);

 private:
  struct Name {
    std::string name;
    uint32_t max_size;
    uint32_t probe[3];  // representative, second, maximum (0: unbounded, no maximum probe)
  };
  static constexpr int kProbes = 3;
  const Name* find(const std::string& name) const;
  DynamicDimension derive(const uint32_t value[kProbes], const bool known[kProbes]) const;

  std::vector<Name> names_;
  // Operand descriptors at probes 1 and 2 (probe 0 is the IR), and whether each is known there.
  std::vector<OperandInfo> at_[kProbes - 1];
  std::vector<bool> known_[kProbes - 1];
  // Op outputs inferred at probes 1 and 2, waiting for add_operand.
  std::vector<std::pair<OperandDescriptor, bool>> pending_[kProbes - 1];
};

// The descriptor the API reports for an IR descriptor: a dynamic dimension shows its max_size.
OperandDescriptor reported_descriptor(const OperandDescriptor& ir_descriptor);

}  // namespace webnn
