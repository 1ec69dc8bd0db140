// Reading and writing models in the `.webnn` format of the webnn-graph project: a text graph
// (or its JSON twin), a weights manifest and a weights blob (or one `.safetensors` file).
//
//   webnn::Graph graph = webnn::load_model(context, "model.webnn");
//
//   webnn::GraphBuilder builder(context);
//   auto outputs = webnn::load_model_into(builder, "model.webnn");   // {output name: Operand}
//   webnn::save_model("copy.webnn", outputs);   // writes copy.webnn, copy.manifest.json, copy.weights
//
// Malformed files throw Error(ErrorKind::kDataError) naming the file, the line (graph) or the
// tensor (weights) and the reason.
#pragma once
#include <webnn/webnn.h>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace webnn {

// ---------------------------------------------------------------- the model description
// A value in a node's argument list, as written in the file.
struct ModelValue {
  enum class Kind { kNull, kBool, kNumber, kString, kName, kList };
  Kind kind = Kind::kNull;
  bool boolean = false;
  Number number;                  // kNumber: Kind::kInt/kUint for integer literals, kFloat otherwise
  std::string text;               // kString; kName: an operand's name (or a bare word such as an enum value)
  std::vector<ModelValue> items;  // kList

  static ModelValue null_value() { return {}; }
  static ModelValue of_bool(bool b);
  static ModelValue of_number(const Number& n);
  static ModelValue of_string(const std::string& s);
  static ModelValue of_name(const std::string& s);
  static ModelValue of_list(std::vector<ModelValue> items);
  bool operator==(const ModelValue& other) const;
  bool operator!=(const ModelValue& other) const { return !(*this == other); }
};

struct ModelArgument {
  std::string key;  // empty: a positional argument
  ModelValue value;
};

// `name = op(args)`, or `[a, b] = op(args)` for ops with several outputs.
struct ModelNode {
  std::vector<std::string> outputs;
  std::string op;
  std::vector<ModelArgument> arguments;
  int line = 0;  // where it was read; 0 when not read from a file
};

// One dimension of a graph input: a size, or a dynamic dimension `dyn("batch", 64)` whose size is
// chosen when the model is loaded (LoadOptions::dims).
struct ModelDimension {
  uint32_t size = 0;
  std::string name;  // empty: static
  uint32_t max = 0;  // dynamic dimensions: the largest allowed size
};

struct ModelInput {
  std::string name;
  DataType data_type = DataType::kFloat32;
  std::vector<ModelDimension> shape;
  int line = 0;
};

struct ModelConstant {
  enum class Init { kWeights, kScalar, kBytes };  // @weights("key"), @scalar(v), @bytes([...])
  std::string name;
  OperandDescriptor descriptor;
  Init init = Init::kWeights;
  std::string key;            // kWeights: the tensor's key in the weights file
  Number scalar;              // kScalar: the value of every element
  std::vector<uint8_t> data;  // little-endian row-major bytes; empty for kWeights until weights are read
  // kWeights read by read_model: the bytes in place in the weights file's private copy or mapping
  // (LoadOptions::map_weights), kept alive by this pointer; `data` stays empty.
  // Weights that cannot be used in place (4-bit, or not aligned to their element size) are copied
  // into `data` instead.
  std::shared_ptr<const uint8_t> mapped;
  size_t mapped_length = 0;
  int line = 0;

  const uint8_t* bytes() const { return mapped ? mapped.get() : data.data(); }
  size_t byte_length() const { return mapped ? mapped_length : data.size(); }
};

struct ModelOutput {
  std::string name;     // the graph output's name
  std::string operand;  // the operand it names (the same in the text form)
  int line = 0;
};

struct Model {
  std::string name = "model";
  uint32_t version = 1;
  bool quantized = false;
  std::vector<ModelInput> inputs;
  std::vector<ModelConstant> constants;
  std::vector<ModelNode> nodes;
  std::vector<ModelOutput> outputs;
  std::string source = "<model>";  // the file it came from, for messages
};

// ---------------------------------------------------------------- options
struct LoadOptions {
  std::string manifest_path;  // default: <stem>.manifest.json, then manifest.json, beside the graph
  std::string weights_path;   // default: <stem>.weights (or model.weights with manifest.json);
                              // a path ending in .safetensors replaces manifest and blob
  std::map<std::string, uint32_t> dims;  // sizes of dynamic input dimensions, by name
  // false (the default): the weights file is read into private memory at load, so nothing another
  // process does to the file afterwards (truncating, rewriting, replacing, deleting it) can change
  // or break the loaded model. true: the file is memory-mapped and its pages used in place (no copy,
  // shared with other processes through the page cache); the file must then stay unchanged while the
  // model is loaded: truncating it makes the next read of a lost page kill the process (SIGBUS), and
  // rewriting it in place changes the weights the model computes with.
  bool map_weights = false;
};

enum class ModelFormat { kAuto, kText, kJson };  // kAuto: JSON for a path ending in .json
enum class WeightsFormat {
  kBlob,            // <stem>.manifest.json + <stem>.weights with the 8-byte WGWT header
  kHeaderlessBlob,  // the same without the header (offsets start at 0)
  kSafetensors,     // <stem>.safetensors
};

struct SaveOptions {
  ModelFormat format = ModelFormat::kAuto;
  WeightsFormat weights = WeightsFormat::kBlob;
  std::string name;  // the graph's name; default: the loaded model's, or the file's stem
};

// ---------------------------------------------------------------- reading and writing files
// Reads a model: the graph (text, or JSON when the file starts with '{') and its weights.
Model read_model(const std::string& path, const LoadOptions& options = {});
// Parses a graph from memory. @weights constants get no data (read_model loads them).
Model parse_model(const std::string& text, const std::string& source = "<string>");
// Writes the graph and, when it has @weights constants, the weights beside it.
void write_model(const Model& model, const std::string& path, const SaveOptions& options = {});
// The text form of a graph.
std::string model_to_text(const Model& model);
// The JSON twin of a graph.
std::string model_to_json(const Model& model);

// ---------------------------------------------------------------- models and builders
// Adds the model's inputs, constants and nodes to `builder` (node labels are their output names)
// and returns the graph outputs by name. `dims` sizes the dynamic input dimensions.
std::map<std::string, Operand> build_model(GraphBuilder& builder, const Model& model,
                                           const std::map<std::string, uint32_t>& dims = {});
// Describes what `outputs` depend on in their builder, before or after build(). Operands a
// model was loaded into keep their names and constant kinds (and the graph its name, unless
// `name` is given); others get names from their node labels or generated ones.
Model describe_model(const std::map<std::string, Operand>& outputs, const std::string& name = "");

// read_model + build_model + build.
Graph load_model(const Context& context, const std::string& path, const LoadOptions& options = {});
// read_model + build_model.
std::map<std::string, Operand> load_model_into(GraphBuilder& builder, const std::string& path,
                                               const LoadOptions& options = {});
// describe_model + write_model.
void save_model(const std::string& path, const std::map<std::string, Operand>& outputs,
                const SaveOptions& options = {});

}  // namespace webnn
