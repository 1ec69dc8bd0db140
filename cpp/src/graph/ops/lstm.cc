// lstm and lstmCell: long short-term memory (iofg/ifgo layout, peepholes, three directions).
#include "graph/ops/rnn_common.h"

namespace webnn {

namespace {

ParamSpec lstm_layout_option() {
  return {"layout", ParamKind::kEnum, std::string("iofg"), {"iofg", "ifgo"}};
}
ParamSpec lstm_activations_option() {
  return {"activations", ParamKind::kEnumList,
          std::vector<std::string>{"sigmoid", "tanh", "tanh"}, {"relu", "sigmoid", "tanh"}};
}

}  // namespace

const OpDef& lstm_op() {
  static const OpDef def{
      "lstm",
      {{"input", ParamKind::kOperand},
       {"weight", ParamKind::kOperand},
       {"recurrentWeight", ParamKind::kOperand},
       {"steps", ParamKind::kUint},
       {"hiddenSize", ParamKind::kUint}},
      {{"bias", ParamKind::kOptionalOperand},
       {"recurrentBias", ParamKind::kOptionalOperand},
       {"peepholeWeight", ParamKind::kOptionalOperand},
       {"initialHiddenState", ParamKind::kOptionalOperand},
       {"initialCellState", ParamKind::kOptionalOperand},
       {"returnSequence", ParamKind::kBool, false},
       {"direction", ParamKind::kEnum, std::string("forward"), {"forward", "backward", "both"}},
       lstm_layout_option(),
       lstm_activations_option()},
      {{"input", kFloatTypes, 3, 3},
       {"weight", kFloatTypes, 3, 3, "input"},
       {"recurrentWeight", kFloatTypes, 3, 3, "input"},
       {"bias", kFloatTypes, 2, 2, "input"},
       {"recurrentBias", kFloatTypes, 2, 2, "input"},
       {"peepholeWeight", kFloatTypes, 2, 2, "input"},
       {"initialHiddenState", kFloatTypes, 3, 3, "input"},
       {"initialCellState", kFloatTypes, 3, 3, "input"},
       {"output0", kFloatTypes, 3, 3},
       {"output1", kFloatTypes, 3, 3},
       {"output2", kFloatTypes, 4, 4}},
      rnn::infer_rnn<RnnCell::kLstm, true>,
      rnn::lower_rnn<RnnCell::kLstm, true>,
      0};
  return def;
}

const OpDef& lstmCell_op() {
  static const OpDef def{
      "lstmCell",
      {{"input", ParamKind::kOperand},
       {"weight", ParamKind::kOperand},
       {"recurrentWeight", ParamKind::kOperand},
       {"hiddenState", ParamKind::kOperand},
       {"cellState", ParamKind::kOperand},
       {"hiddenSize", ParamKind::kUint}},
      {{"bias", ParamKind::kOptionalOperand},
       {"recurrentBias", ParamKind::kOptionalOperand},
       {"peepholeWeight", ParamKind::kOptionalOperand},
       lstm_layout_option(),
       lstm_activations_option()},
      {{"input", kFloatTypes, 2, 2},
       {"weight", kFloatTypes, 2, 2, "input"},
       {"recurrentWeight", kFloatTypes, 2, 2, "input"},
       {"hiddenState", kFloatTypes, 2, 2, "input"},
       {"cellState", kFloatTypes, 2, 2, "input"},
       {"bias", kFloatTypes, 1, 1, "input"},
       {"recurrentBias", kFloatTypes, 1, 1, "input"},
       {"peepholeWeight", kFloatTypes, 1, 1, "input"},
       {"output0", kFloatTypes, 2, 2},
       {"output1", kFloatTypes, 2, 2}},
      rnn::infer_rnn<RnnCell::kLstm, false>,
      rnn::lower_rnn<RnnCell::kLstm, false>,
      2};
  return def;
}

}  // namespace webnn
