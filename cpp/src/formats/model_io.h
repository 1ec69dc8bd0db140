// The pieces of the .webnn reader and writer (internal).
#pragma once
#include <webnn/model.h>

#include <string>
#include <vector>

namespace webnn::formats {

// The graph in its two forms. Parsers fill @scalar and @bytes data; @weights data stays empty.
Model parse_text_model(const std::string& text, const std::string& source);
Model parse_json_model(const std::string& text, const std::string& source);

// The bytes of a @scalar constant: `value` cast to the constant's type, repeated.
std::vector<uint8_t> scalar_fill(const OperandDescriptor& descriptor, const Number& value, const std::string& where);
// Checks a constant's @bytes length against its type; unpacks nibble-packed int4/uint4.
void decode_inline_bytes(ModelConstant& constant, const std::string& where);
// The bytes a constant's @bytes/inlineBytes form holds (int4/uint4 packed).
std::vector<uint8_t> inline_bytes(const ModelConstant& constant);

// Weights files. `resolve` fills the data of every @weights constant of `model`.
struct WeightsLocation {
  std::string manifest_path;  // empty with safetensors
  std::string weights_path;
  bool map_weights = false;  // LoadOptions::map_weights
};
WeightsLocation find_weights(const std::string& graph_path, const LoadOptions& options);
void read_weights(Model& model, const WeightsLocation& location);
void write_weights(const Model& model, const std::string& graph_path, WeightsFormat format);

}  // namespace webnn::formats
