// A per-channel affine map y = scale[c] * x + shift[c] along one axis of an op's input, with
// constant parameters: what batchNormalization, or a mul / add by a per-channel constant, computes.
// The scale folding pass (compiler/passes/scale_folding.cc) folds it into the constant weights of
// the op producing x (OpDef::channel_affine, OpDef::absorb_channel_affine).
#pragma once
#include <cstddef>
#include <vector>

#include "core/common.h"

namespace webnn {

struct OperandInfo;

struct ChannelAffine {
  size_t input = 0;           // which of the node's inputs is x
  size_t axis = 0;            // x's channel axis (ignored when uniform)
  std::vector<double> scale;  // one per channel, or one for every channel
  std::vector<double> shift;  // the same length as scale

  bool uniform() const { return scale.size() == 1; }
  double scale_at(size_t c) const { return scale[uniform() ? 0 : c]; }
  double shift_at(size_t c) const { return shift[uniform() ? 0 : c]; }
};

// A float32 / float16 constant's values, or empty when the operand is not such a constant.
std::vector<double> float_constant_values(const OperandInfo& info);
// A float32 / float16 constant (operand `source`) with each channel's elements multiplied by
// map.scale_at(channel), appended to `operands` as a new constant; its id, or -1 when `source` is
// not such a constant. Channel c's elements are the c-th block of `channels` equal blocks
// (channel_major: an OIHW filter), or every element whose index % channels == c (an HWIO filter).
int add_channel_scaled_constant(std::vector<OperandInfo>& operands, int source, const ChannelAffine& map,
                                size_t channels, bool channel_major);
// A new float32 / float16 constant of `desc` holding `values`, appended to `operands`; its id.
int add_float_constant(std::vector<OperandInfo>& operands, const OperandDescriptor& desc,
                       const std::vector<double>& values);

}  // namespace webnn
