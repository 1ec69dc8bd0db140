// Recurrent family: gru/gruCell and lstm/lstmCell. A cell is a one-step, one-direction sequence.
#pragma once
#include "kernels/kernel.h"

namespace webnn {

enum class RnnActivation { kRelu, kSigmoid, kTanh };
enum class RnnCell { kGru, kLstm };

struct RnnParams {
  RnnCell cell;
  size_t steps, directions, batch, input_size, hidden;
  bool backward;  // direction "backward"; with 2 directions, direction 1 always runs backward
  // The gate blocks' positions (in units of `hidden` rows) in weights and biases:
  // gru z, r, n; lstm i, o, f, g.
  size_t gate_block[4];
  bool reset_after;                        // gru only
  std::vector<RnnActivation> activations;  // gru: f, g; lstm: f0, f1, f2
  // Positions in KernelArgs::inputs, -1 when absent. Operand shapes: input [steps, batch, I],
  // weight [D, gates*H, I], recurrentWeight [D, gates*H, H], biases [D, gates*H], peephole
  // [D, 3H] (i, o, f), initial states [D, batch, H] (cells: the same without the leading 1s).
  int input, weight, recurrent_weight, bias, recurrent_bias, peephole, initial_hidden, initial_cell;
  // Positions in KernelArgs::outputs, -1 when absent: final states [D, batch, H], the hidden
  // sequence [steps, D, batch, H] (indexed by original time step).
  int output_hidden, output_cell, output_sequence;
};

// float32 or float16 (computed in float32, the state kept in float32 across steps).
Kernel make_rnn_kernel(DataType type, const RnnParams& params);

}  // namespace webnn
