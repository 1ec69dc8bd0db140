// gru and gruCell: gated recurrent units (zrn/rzn layout, resetAfter, three directions).
#include "graph/ops/rnn_common.h"

namespace webnn {

namespace {

ParamSpec reset_after_option() {
  return {"resetAfter", ParamKind::kBool, true};
}
ParamSpec gru_layout_option() {
  return {"layout", ParamKind::kEnum, std::string("zrn"), {"zrn", "rzn"}};
}
ParamSpec gru_activations_option() {
  return {"activations", ParamKind::kEnumList, std::vector<std::string>{"sigmoid", "tanh"},
          {"relu", "sigmoid", "tanh"}};
}

}  // namespace

const OpDef& gru_op() {
  static const OpDef def{
      "gru",
      {{"input", ParamKind::kOperand},
       {"weight", ParamKind::kOperand},
       {"recurrentWeight", ParamKind::kOperand},
       {"steps", ParamKind::kUint},
       {"hiddenSize", ParamKind::kUint}},
      {{"bias", ParamKind::kOptionalOperand},
       {"recurrentBias", ParamKind::kOptionalOperand},
       {"initialHiddenState", ParamKind::kOptionalOperand},
       reset_after_option(),
       {"returnSequence", ParamKind::kBool, false},
       {"direction", ParamKind::kEnum, std::string("forward"), {"forward", "backward", "both"}},
       gru_layout_option(),
       gru_activations_option()},
      {{"input", kFloatTypes, 3, 3},
       {"weight", kFloatTypes, 3, 3, "input"},
       {"recurrentWeight", kFloatTypes, 3, 3, "input"},
       {"bias", kFloatTypes, 2, 2, "input"},
       {"recurrentBias", kFloatTypes, 2, 2, "input"},
       {"initialHiddenState", kFloatTypes, 3, 3, "input"},
       {"output0", kFloatTypes, 3, 3},
       {"output1", kFloatTypes, 4, 4}},
      rnn::infer_rnn<RnnCell::kGru, true>,
      rnn::lower_rnn<RnnCell::kGru, true>,
      0};
  return def;
}

const OpDef& gruCell_op() {
  static const OpDef def{
      "gruCell",
      {{"input", ParamKind::kOperand},
       {"weight", ParamKind::kOperand},
       {"recurrentWeight", ParamKind::kOperand},
       {"hiddenState", ParamKind::kOperand},
       {"hiddenSize", ParamKind::kUint}},
      {{"bias", ParamKind::kOptionalOperand}, {"recurrentBias", ParamKind::kOptionalOperand}, reset_after_option(),
       gru_layout_option(), gru_activations_option()},
      {{"input", kFloatTypes, 2, 2},
       {"weight", kFloatTypes, 2, 2, "input"},
       {"recurrentWeight", kFloatTypes, 2, 2, "input"},
       {"hiddenState", kFloatTypes, 2, 2, "input"},
       {"bias", kFloatTypes, 1, 1, "input"},
       {"recurrentBias", kFloatTypes, 1, 1, "input"},
       {"output", kFloatTypes, 2, 2}},
      rnn::infer_rnn<RnnCell::kGru, false>,
      rnn::lower_rnn<RnnCell::kGru, false>};
  return def;
}

}  // namespace webnn
