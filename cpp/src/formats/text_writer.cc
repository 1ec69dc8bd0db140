// Writes the text form of a graph, in the layout of the webnn-graph tools.
#include <sstream>

#include "formats/format_util.h"
#include "formats/model_io.h"
#include "graph/op_def.h"

namespace webnn {
namespace {

std::string text_value(const ModelValue& v) {
  using formats::format_number;
  using formats::name_token;
  using formats::quote;
  switch (v.kind) {
    case ModelValue::Kind::kNull: return "null";
    case ModelValue::Kind::kBool: return v.boolean ? "true" : "false";
    case ModelValue::Kind::kNumber: return format_number(v.number);
    case ModelValue::Kind::kString: return quote(v.text);
    case ModelValue::Kind::kName: return name_token(v.text);
    case ModelValue::Kind::kList: {
      std::string out = "[";
      for (size_t i = 0; i < v.items.size(); ++i) out += (i ? ", " : "") + text_value(v.items[i]);
      return out + "]";
    }
  }
  return "null";
}

}  // namespace

std::string model_to_text(const Model& model) {
  using formats::name_token;
  using formats::quote;
  std::ostringstream out;
  out << "webnn_graph " << quote(model.name) << " v" << model.version << (model.quantized ? " @quantized" : "")
      << " {\n";
  if (!model.inputs.empty()) {
    out << "  inputs {\n";
    for (const ModelInput& in : model.inputs) {
      out << "    " << name_token(in.name) << ": " << formats::short_type_name(in.data_type) << "[";
      for (size_t d = 0; d < in.shape.size(); ++d) {
        const ModelDimension& dim = in.shape[d];
        out << (d ? ", " : "");
        if (dim.name.empty()) out << dim.size;
        else out << "dyn(" << quote(dim.name) << ", " << dim.max << ")";
      }
      out << "];\n";
    }
    out << "  }\n";
  }
  if (!model.constants.empty()) {
    out << "  consts {\n";
    for (const ModelConstant& c : model.constants) {
      out << "    " << name_token(c.name) << ": " << formats::short_type_name(c.descriptor.data_type)
          << shape_to_string(c.descriptor.shape) << " ";
      switch (c.init) {
        case ModelConstant::Init::kWeights: out << "@weights(" << quote(c.key) << ")"; break;
        case ModelConstant::Init::kScalar: out << "@scalar(" << formats::format_number(c.scalar) << ")"; break;
        case ModelConstant::Init::kBytes: {
          out << "@bytes([";
          const std::vector<uint8_t> bytes = formats::inline_bytes(c);
          for (size_t b = 0; b < bytes.size(); ++b) out << (b ? ", " : "") << int(bytes[b]);
          out << "])";
          break;
        }
      }
      out << ";\n";
    }
    out << "  }\n";
  }
  // The text form names outputs by their operands; an output under another name is an identity.
  std::vector<ModelNode> renames;
  for (const ModelOutput& o : model.outputs) {
    if (o.name == o.operand) continue;
    if (!find_op("identity"))
      throw Error(ErrorKind::kDataError, str_cat("output '", o.name, "' names the operand '", o.operand,
                                                 "': the text form cannot rename outputs; write JSON instead"));
    renames.push_back({{o.name}, "identity", {{"", ModelValue::of_name(o.operand)}}, 0});
  }
  auto write_node = [&](const ModelNode& node) {
    out << "    ";
    if (node.outputs.size() == 1) {
      out << name_token(node.outputs[0]);
    } else {
      out << "[";
      for (size_t i = 0; i < node.outputs.size(); ++i) out << (i ? ", " : "") << name_token(node.outputs[i]);
      out << "]";
    }
    out << " = " << node.op << "(";
    for (size_t i = 0; i < node.arguments.size(); ++i) {
      const ModelArgument& arg = node.arguments[i];
      out << (i ? ", " : "");
      if (!arg.key.empty()) out << name_token(arg.key) << "=";
      out << text_value(arg.value);
    }
    out << ");\n";
  };
  if (!model.nodes.empty() || !renames.empty()) {
    out << "  nodes {\n";
    for (const ModelNode& node : model.nodes) write_node(node);
    for (const ModelNode& node : renames) write_node(node);
    out << "  }\n";
  }
  out << "  outputs {";
  for (const ModelOutput& o : model.outputs) out << " " << name_token(o.name) << ";";
  out << " }\n}\n";
  return out.str();
}

}  // namespace webnn
