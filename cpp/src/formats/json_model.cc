// The JSON twin of the text graph ("format": "webnn-graph-json"), read and written.
#include <cmath>
#include <sstream>

#include "formats/format_util.h"
#include "formats/json.h"
#include "formats/model_io.h"

namespace webnn::formats {
namespace {

using Type = JsonValue::Type;

class JsonModelReader {
 public:
  explicit JsonModelReader(const std::string& source) : source_(source) {}

  Model read(const JsonValue& root) {
    Model model;
    model.source = source_;
    require(root, Type::kObject, "the graph");
    const JsonValue* format = root.find("format");
    if (!format || format->type != Type::kString || format->text != "webnn-graph-json")
      error(root, "not a webnn-graph JSON file (\"format\" must be \"webnn-graph-json\")");
    const JsonValue* version = root.find("version");
    if (!version) error(root, "the graph has no \"version\"");
    require(*version, Type::kNumber, "\"version\"");
    if (version->text != "1" && version->text != "2")
      error(*version, str_cat("unsupported format version ", version->text, " (expected 1 or 2)"));
    model.version = uint32_t(version->text[0] - '0');
    if (const JsonValue* name = root.find("name"); name && name->type != Type::kNull) {
      require(*name, Type::kString, "\"name\"");
      model.name = name->text;
    }
    if (const JsonValue* quantized = root.find("quantized")) {
      require(*quantized, Type::kBool, "\"quantized\"");
      model.quantized = quantized->boolean;
    }
    if (const JsonValue* inputs = root.find("inputs")) {
      require(*inputs, Type::kObject, "\"inputs\"");
      for (const auto& [name, desc] : inputs->members) model.inputs.push_back(read_input(name, desc));
    }
    if (const JsonValue* consts = root.find("consts")) {
      require(*consts, Type::kObject, "\"consts\"");
      for (const auto& [name, decl] : consts->members) model.constants.push_back(read_constant(name, decl));
    }
    if (const JsonValue* nodes = root.find("nodes")) {
      require(*nodes, Type::kArray, "\"nodes\"");
      for (const JsonValue& node : nodes->items) model.nodes.push_back(read_node(node));
    }
    const JsonValue* outputs = root.find("outputs");
    if (!outputs) error(root, "the graph has no \"outputs\"");
    require(*outputs, Type::kObject, "\"outputs\"");
    for (const auto& [name, ref] : outputs->members) {
      require(ref, Type::kString, str_cat("output \"", name, "\""));
      model.outputs.push_back({name, ref.text, ref.line});
    }
    if (model.outputs.empty()) error(*outputs, "\"outputs\" names no operand");
    return model;
  }

 private:
  [[noreturn]] void error(const JsonValue& at, const std::string& message) const {
    fail(at_line(source_, at.line), message);
  }
  void require(const JsonValue& v, Type type, const std::string& what) const {
    if (v.type == type) return;
    JsonValue expected;
    expected.type = type;
    error(v, str_cat(what, " must be ", expected.type_name(), ", got ", v.type_name()));
  }
  const JsonValue& member(const JsonValue& object, const char* key, const std::string& what) const {
    const JsonValue* v = object.find(key);
    if (!v) error(object, str_cat(what, " has no \"", key, "\""));
    return *v;
  }

  DataType read_type(const JsonValue& object, const std::string& what) const {
    const JsonValue& v = member(object, "dataType", what);
    require(v, Type::kString, str_cat(what, ": \"dataType\""));
    auto type = parse_any_type_name(v.text);
    if (!type) error(v, str_cat(what, ": unknown data type '", v.text, "'"));
    return *type;
  }

  uint32_t read_uint32(const JsonValue& v, const std::string& what) const {
    auto n = v.type == Type::kNumber ? parse_number(v.text) : std::nullopt;
    if (!n || n->kind != Number::Kind::kInt || n->i < 0 || n->i > int64_t(UINT32_MAX))
      error(v, str_cat(what, " must be an integer in [0, 4294967295]"));
    return uint32_t(n->i);
  }

  std::vector<ModelDimension> read_shape(const JsonValue& object, const std::string& what, bool allow_dynamic) const {
    const JsonValue& v = member(object, "shape", what);
    require(v, Type::kArray, str_cat(what, ": \"shape\""));
    if (v.items.size() > kMaxRank) error(v, str_cat(what, ": the shape has more than ", kMaxRank, " dimensions"));
    std::vector<ModelDimension> shape;
    for (const JsonValue& d : v.items) {
      ModelDimension dim;
      if (d.type == Type::kObject && allow_dynamic) {
        const JsonValue& name = member(d, "name", str_cat(what, ": a dynamic dimension"));
        require(name, Type::kString, str_cat(what, ": a dynamic dimension's \"name\""));
        if (name.text.empty()) error(name, str_cat(what, ": a dynamic dimension's name is empty"));
        dim.name = name.text;
        dim.max = read_uint32(member(d, "max", str_cat(what, ": a dynamic dimension")), str_cat(what, ": \"max\""));
      } else {
        dim.size = read_uint32(d, str_cat(what, ": a dimension"));
        if (dim.size == 0) error(d, str_cat(what, ": a dimension is 0"));
      }
      shape.push_back(std::move(dim));
    }
    return shape;
  }

  ModelInput read_input(const std::string& name, const JsonValue& desc) const {
    std::string what = str_cat("input '", name, "'");
    require(desc, Type::kObject, what);
    ModelInput input;
    input.name = name;
    input.line = desc.line;
    input.data_type = read_type(desc, what);
    input.shape = read_shape(desc, what, true);
    return input;
  }

  ModelConstant read_constant(const std::string& name, const JsonValue& decl) const {
    std::string what = str_cat("constant '", name, "'");
    require(decl, Type::kObject, what);
    ModelConstant c;
    c.name = name;
    c.line = decl.line;
    c.descriptor.data_type = read_type(decl, what);
    for (const ModelDimension& d : read_shape(decl, what, false)) c.descriptor.shape.push_back(d.size);
    if (!checked_byte_length(c.descriptor.data_type, c.descriptor.shape))
      error(decl, str_cat(what, ": the shape has more than 2^31-1 elements"));
    const JsonValue& init = member(decl, "init", what);
    require(init, Type::kObject, str_cat(what, ": \"init\""));
    const JsonValue& kind = member(init, "kind", str_cat(what, ": \"init\""));
    require(kind, Type::kString, str_cat(what, ": \"kind\""));
    std::string where = str_cat(at_line(source_, decl.line), ": ", what);
    if (kind.text == "weights") {
      c.init = ModelConstant::Init::kWeights;
      const JsonValue& ref = member(init, "ref", what);
      require(ref, Type::kString, str_cat(what, ": \"ref\""));
      c.key = ref.text;
    } else if (kind.text == "scalar") {
      c.init = ModelConstant::Init::kScalar;
      const JsonValue& value = member(init, "value", what);
      auto n = value.type == Type::kNumber || value.type == Type::kString ? parse_number(value.text) : std::nullopt;
      if (!n) error(value, str_cat(what, ": the scalar \"value\" must be a number"));
      c.scalar = *n;
      c.data = scalar_fill(c.descriptor, c.scalar, where);
    } else if (kind.text == "inlineBytes") {
      c.init = ModelConstant::Init::kBytes;
      const JsonValue& bytes = member(init, "bytes", what);
      require(bytes, Type::kArray, str_cat(what, ": \"bytes\""));
      for (const JsonValue& b : bytes.items) {
        auto n = b.type == Type::kNumber ? parse_number(b.text) : std::nullopt;
        if (!n || n->kind != Number::Kind::kInt || n->i < 0 || n->i > 255)
          error(b, str_cat(what, ": \"bytes\" holds integers in [0, 255]"));
        c.data.push_back(uint8_t(n->i));
      }
      decode_inline_bytes(c, at_line(source_, decl.line));
    } else {
      error(kind, str_cat(what, ": unknown init kind '", kind.text, "' (expected weights, scalar or inlineBytes)"));
    }
    return c;
  }

  ModelValue value_of(const JsonValue& v, bool strings_are_names, int depth = 0) const {
    switch (v.type) {
      case Type::kNull: return ModelValue::null_value();
      case Type::kBool: return ModelValue::of_bool(v.boolean);
      case Type::kNumber: return ModelValue::of_number(*parse_number(v.text));
      case Type::kString: return strings_are_names ? ModelValue::of_name(v.text) : ModelValue::of_string(v.text);
      case Type::kArray: {
        std::vector<ModelValue> items;
        for (const JsonValue& item : v.items) items.push_back(value_of(item, strings_are_names, depth + 1));
        return ModelValue::of_list(std::move(items));
      }
      case Type::kObject: break;
    }
    error(v, "an argument cannot be an object");
  }

  ModelNode read_node(const JsonValue& v) const {
    require(v, Type::kObject, "a node");
    ModelNode node;
    node.line = v.line;
    const JsonValue& op = member(v, "op", "a node");
    require(op, Type::kString, "a node's \"op\"");
    node.op = op.text;
    const JsonValue* outputs = v.find("outputs");
    if (outputs && outputs->type != Type::kNull) {
      require(*outputs, Type::kArray, str_cat("node '", node.op, "': \"outputs\""));
      for (const JsonValue& o : outputs->items) {
        require(o, Type::kString, str_cat("node '", node.op, "': an output name"));
        node.outputs.push_back(o.text);
      }
      if (node.outputs.empty()) error(*outputs, str_cat("node '", node.op, "': \"outputs\" is empty"));
    } else {
      const JsonValue& id = member(v, "id", "a node");
      require(id, Type::kString, "a node's \"id\"");
      node.outputs.push_back(id.text);
    }
    if (const JsonValue* inputs = v.find("inputs")) {
      require(*inputs, Type::kArray, str_cat("node '", node.outputs[0], "': \"inputs\""));
      for (const JsonValue& in : inputs->items) node.arguments.push_back({"", value_of(in, true)});
    }
    if (const JsonValue* options = v.find("options")) {
      require(*options, Type::kObject, str_cat("node '", node.outputs[0], "': \"options\""));
      for (const auto& [key, value] : options->members) node.arguments.push_back({key, value_of(value, false)});
    }
    return node;
  }

  const std::string& source_;
};

// ---------------------------------------------------------------- writing
std::string json_number(const Number& n) {
  if (n.kind == Number::Kind::kFloat && !std::isfinite(n.f)) return quote(format_number(n));
  return format_number(n);
}

std::string json_value(const ModelValue& v) {
  switch (v.kind) {
    case ModelValue::Kind::kNull: return "null";
    case ModelValue::Kind::kBool: return v.boolean ? "true" : "false";
    case ModelValue::Kind::kNumber: return json_number(v.number);
    case ModelValue::Kind::kString:
    case ModelValue::Kind::kName: return quote(v.text);
    case ModelValue::Kind::kList: {
      std::string out = "[";
      for (size_t i = 0; i < v.items.size(); ++i) out += (i ? ", " : "") + json_value(v.items[i]);
      return out + "]";
    }
  }
  return "null";
}

std::string json_shape(const std::vector<uint32_t>& shape) {
  std::string out = "[";
  for (size_t i = 0; i < shape.size(); ++i) out += (i ? ", " : "") + std::to_string(shape[i]);
  return out + "]";
}

}  // namespace

Model parse_json_model(const std::string& text, const std::string& source) {
  return JsonModelReader(source).read(parse_json(text, source));
}

}  // namespace webnn::formats

namespace webnn {

std::string model_to_json(const Model& model) {
  using namespace formats;
  std::ostringstream out;
  out << "{\n  \"format\": \"webnn-graph-json\",\n  \"version\": " << model.version << ",\n  \"name\": "
      << quote(model.name) << ",\n";
  if (model.quantized) out << "  \"quantized\": true,\n";
  out << "  \"inputs\": {";
  for (size_t i = 0; i < model.inputs.size(); ++i) {
    const ModelInput& in = model.inputs[i];
    out << (i ? ",\n" : "\n") << "    " << quote(in.name) << ": {\"dataType\": \"" << data_type_name(in.data_type)
        << "\", \"shape\": [";
    for (size_t d = 0; d < in.shape.size(); ++d) {
      const ModelDimension& dim = in.shape[d];
      out << (d ? ", " : "");
      if (dim.name.empty()) out << dim.size;
      else out << "{\"name\": " << quote(dim.name) << ", \"max\": " << dim.max << "}";
    }
    out << "]}";
  }
  out << (model.inputs.empty() ? "},\n" : "\n  },\n") << "  \"consts\": {";
  for (size_t i = 0; i < model.constants.size(); ++i) {
    const ModelConstant& c = model.constants[i];
    out << (i ? ",\n" : "\n") << "    " << quote(c.name) << ": {\"dataType\": \""
        << data_type_name(c.descriptor.data_type) << "\", \"shape\": " << json_shape(c.descriptor.shape)
        << ", \"init\": ";
    switch (c.init) {
      case ModelConstant::Init::kWeights: out << "{\"kind\": \"weights\", \"ref\": " << quote(c.key) << "}"; break;
      case ModelConstant::Init::kScalar: out << "{\"kind\": \"scalar\", \"value\": " << json_number(c.scalar) << "}"; break;
      case ModelConstant::Init::kBytes: {
        out << "{\"kind\": \"inlineBytes\", \"bytes\": [";
        const std::vector<uint8_t> bytes = inline_bytes(c);
        for (size_t b = 0; b < bytes.size(); ++b) out << (b ? ", " : "") << int(bytes[b]);
        out << "]}";
        break;
      }
    }
    out << "}";
  }
  out << (model.constants.empty() ? "},\n" : "\n  },\n") << "  \"nodes\": [";
  for (size_t i = 0; i < model.nodes.size(); ++i) {
    const ModelNode& node = model.nodes[i];
    out << (i ? ",\n" : "\n") << "    {\"id\": " << quote(node.outputs[0]) << ", \"op\": " << quote(node.op)
        << ", \"inputs\": [";
    // Positional arguments; a leading list of names is flattened, as converters write concat's inputs.
    size_t count = 0;
    for (const ModelArgument& arg : node.arguments) {
      if (!arg.key.empty()) continue;
      bool flatten = count == 0 && arg.value.kind == ModelValue::Kind::kList && !arg.value.items.empty();
      for (const ModelValue& item : arg.value.items) flatten = flatten && item.kind == ModelValue::Kind::kName;
      if (flatten) {
        for (const ModelValue& item : arg.value.items) out << (count++ ? ", " : "") << json_value(item);
      } else {
        out << (count++ ? ", " : "") << json_value(arg.value);
      }
    }
    out << "], \"options\": {";
    count = 0;
    for (const ModelArgument& arg : node.arguments) {
      if (arg.key.empty()) continue;
      out << (count++ ? ", " : "") << quote(arg.key) << ": " << json_value(arg.value);
    }
    out << "}";
    if (node.outputs.size() > 1) {
      out << ", \"outputs\": [";
      for (size_t o = 0; o < node.outputs.size(); ++o) out << (o ? ", " : "") << quote(node.outputs[o]);
      out << "]";
    }
    out << "}";
  }
  out << (model.nodes.empty() ? "],\n" : "\n  ],\n") << "  \"outputs\": {";
  for (size_t i = 0; i < model.outputs.size(); ++i)
    out << (i ? ", " : "") << quote(model.outputs[i].name) << ": " << quote(model.outputs[i].operand);
  out << "}\n}\n";
  return out.str();
}

}  // namespace webnn
