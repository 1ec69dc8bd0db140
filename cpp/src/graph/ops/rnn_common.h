// Validation, shape inference and lowering shared by gru, gruCell, lstm and lstmCell. A cell op
// is the one-step, one-direction case of its sequence op, with the leading direction dim dropped.
#pragma once
#include "graph/op_def.h"
#include "kernels/rnn/rnn.h"

namespace webnn {
namespace rnn {

inline size_t gate_count(RnnCell cell) { return cell == RnnCell::kGru ? 3 : 4; }

// Fails unless the operand `name`, when present, has exactly the shape `expected`.
inline void expect_shape(const OpView& op, const std::string& name, const std::vector<uint32_t>& expected) {
  if (!op.has(name)) return;
  const auto& shape = op.operand(name).shape;
  if (shape != expected)
    op.fail(str_cat(name, " must have shape ", shape_to_string(expected), ", got ", shape_to_string(shape)));
}

inline RnnActivation activation_of(const std::string& name) {
  if (name == "relu") return RnnActivation::kRelu;
  if (name == "tanh") return RnnActivation::kTanh;
  return RnnActivation::kSigmoid;
}

struct RnnShape {
  RnnParams params;  // the operand and output positions are set by lower_rnn
  std::vector<OperandDescriptor> outputs;
};

inline RnnShape rnn_shape(const OpView& op, RnnCell cell, bool sequence) {
  const bool lstm = cell == RnnCell::kLstm;
  const uint64_t gates = gate_count(cell);
  const auto& input = op.operand("input");
  uint32_t steps = 1, directions = 1;
  if (sequence) {
    if (op.integer("steps") == 0) op.fail("steps must be at least 1");
    if (input.shape[0] != op.integer("steps"))
      op.fail(str_cat("input.shape[0] (", input.shape[0], ") must equal steps (", op.integer("steps"), ")"));
    steps = input.shape[0];
    directions = op.text("direction") == "both" ? 2 : 1;
  }
  const uint32_t batch = input.shape[sequence ? 1 : 0], input_size = input.shape[sequence ? 2 : 1];
  const int64_t hidden_size = op.integer("hiddenSize");
  if (hidden_size == 0 || uint64_t(hidden_size) * gates * 2 > kMaxDimension)
    op.fail(str_cat(gates * 2, " * hiddenSize (", hidden_size, ") must be a valid dimension"));
  const uint32_t H = uint32_t(hidden_size), GH = uint32_t(gates) * H;

  // Per-direction shapes gain a leading [directions] dim in the sequence ops.
  auto per_direction = [&](std::vector<uint32_t> dims) {
    if (sequence) dims.insert(dims.begin(), directions);
    return dims;
  };
  expect_shape(op, "weight", per_direction({GH, input_size}));
  expect_shape(op, "recurrentWeight", per_direction({GH, H}));
  expect_shape(op, "bias", per_direction({GH}));
  expect_shape(op, "recurrentBias", per_direction({GH}));
  if (lstm) expect_shape(op, "peepholeWeight", per_direction({3 * H}));
  const std::vector<uint32_t> state = per_direction({batch, H});
  expect_shape(op, sequence ? "initialHiddenState" : "hiddenState", state);
  if (lstm) expect_shape(op, sequence ? "initialCellState" : "cellState", state);
  const auto& names = op.texts("activations");
  if (names.size() != gates - 1)
    op.fail(str_cat("activations must have ", gates - 1, " values, got ", names.size()));

  RnnShape r;
  RnnParams& p = r.params;
  p.cell = cell;
  p.steps = steps;
  p.directions = directions;
  p.batch = batch;
  p.input_size = input_size;
  p.hidden = H;
  p.backward = sequence && op.text("direction") == "backward";
  const std::string& layout = op.text("layout");
  const std::vector<size_t> blocks = lstm ? (layout == "ifgo" ? std::vector<size_t>{0, 3, 1, 2}   // i, o, f, g
                                                              : std::vector<size_t>{0, 1, 2, 3})
                                          : (layout == "rzn" ? std::vector<size_t>{1, 0, 2, 0}   // z, r, n
                                                             : std::vector<size_t>{0, 1, 2, 0});
  std::copy(blocks.begin(), blocks.end(), p.gate_block);
  p.reset_after = !lstm && op.flag("resetAfter");
  for (const auto& name : names) p.activations.push_back(activation_of(name));

  const DataType type = input.data_type;
  r.outputs.push_back({type, state});
  if (lstm) r.outputs.push_back({type, state});
  if (sequence && op.flag("returnSequence")) r.outputs.push_back({type, {steps, directions, batch, H}});
  return r;
}

template <RnnCell cell, bool sequence>
std::vector<OperandDescriptor> infer_rnn(const OpView& op) {
  RnnShape shape = rnn_shape(op, cell, sequence);
  op.keep(shape.params);
  return shape.outputs;
}

template <RnnCell cell, bool sequence>
Kernel lower_rnn(const OpView& op, const std::vector<OperandDescriptor>& outputs) {
  const bool lstm = cell == RnnCell::kLstm;
  RnnParams p = op.attributes<RnnParams>();
  p.input = op.input_index("input");
  p.weight = op.input_index("weight");
  p.recurrent_weight = op.input_index("recurrentWeight");
  p.bias = op.input_index("bias");
  p.recurrent_bias = op.input_index("recurrentBias");
  p.peephole = lstm ? op.input_index("peepholeWeight") : -1;
  p.initial_hidden = op.input_index(sequence ? "initialHiddenState" : "hiddenState");
  p.initial_cell = lstm ? op.input_index(sequence ? "initialCellState" : "cellState") : -1;
  p.output_hidden = 0;
  p.output_cell = lstm ? 1 : -1;
  const int sequence_output = lstm ? 2 : 1;
  p.output_sequence = int(outputs.size()) > sequence_output ? sequence_output : -1;
  return make_rnn_kernel(outputs[0].data_type, p);
}

}  // namespace rnn
}  // namespace webnn
