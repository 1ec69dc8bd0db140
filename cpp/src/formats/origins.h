// What the operands of a builder were called in the model loaded into it, so that saving the
// builder's graph writes the same names, constant kinds and weight keys back.
#pragma once
#include <webnn/model.h>

#include <functional>
#include <memory>
#include <unordered_map>

#include "graph/builder_impl.h"

namespace webnn {
namespace formats {

struct OperandOrigin {
  std::string name;
  // Constants: how the model initialised them.
  bool is_constant = false;
  ModelConstant::Init init = ModelConstant::Init::kWeights;
  std::string key;
  Number scalar;
  // Inputs: the declared dimensions (dynamic ones included).
  std::vector<ModelDimension> dims;
};
using Origins = std::unordered_map<int, OperandOrigin>;  // by operand id

struct ModelOrigins {
  std::string model_name;
  std::vector<std::string> output_order;  // the graph outputs, as the file lists them
  Origins operands;
};

// The label a loaded node gets: its output names.
std::string default_label(const std::vector<std::string>& outputs);

// Adds to what is remembered for `builder` (a process-wide table that forgets dead builders).
void remember_origins(const std::shared_ptr<detail::BuilderImpl>& builder, ModelOrigins origins);
ModelOrigins recall_origins(const detail::BuilderImpl* builder);

// describe_model, with `name` or else the loaded model's name or else `fallback`.
Model describe(const std::map<std::string, Operand>& outputs, const std::string& name, const std::string& fallback);

}  // namespace formats
}  // namespace webnn
