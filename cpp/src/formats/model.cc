// The public entry points of the .webnn reader and writer.
#include <cmath>
#include <cstring>

#include "formats/format_util.h"
#include "formats/model_io.h"
#include "formats/origins.h"

namespace webnn {

ModelValue ModelValue::of_bool(bool b) {
  ModelValue v;
  v.kind = Kind::kBool;
  v.boolean = b;
  return v;
}
ModelValue ModelValue::of_number(const Number& n) {
  ModelValue v;
  v.kind = Kind::kNumber;
  v.number = n;
  return v;
}
ModelValue ModelValue::of_string(const std::string& s) {
  ModelValue v;
  v.kind = Kind::kString;
  v.text = s;
  return v;
}
ModelValue ModelValue::of_name(const std::string& s) {
  ModelValue v;
  v.kind = Kind::kName;
  v.text = s;
  return v;
}
ModelValue ModelValue::of_list(std::vector<ModelValue> items) {
  ModelValue v;
  v.kind = Kind::kList;
  v.items = std::move(items);
  return v;
}

bool ModelValue::operator==(const ModelValue& other) const {
  if (kind != other.kind) return false;
  switch (kind) {
    case Kind::kNull: return true;
    case Kind::kBool: return boolean == other.boolean;
    case Kind::kNumber:
      if (number.kind != other.number.kind) return false;
      if (number.kind == Number::Kind::kFloat)
        return number.f == other.number.f || (std::isnan(number.f) && std::isnan(other.number.f));
      return number.kind == Number::Kind::kInt ? number.i == other.number.i : number.u == other.number.u;
    case Kind::kString:
    case Kind::kName: return text == other.text;
    case Kind::kList: return items == other.items;
  }
  return false;
}

namespace formats {

std::vector<uint8_t> scalar_fill(const OperandDescriptor& descriptor, const Number& value, const std::string& where) {
  auto bytes = checked_byte_length(descriptor.data_type, descriptor.shape);
  if (!bytes) fail(where, "the shape has more than 2^31-1 elements");
  if (*bytes > kMaxScalarFillBytes)
    fail(where, str_cat("@scalar would expand to ", *bytes, " bytes (the limit is ", kMaxScalarFillBytes, ")"));
  const size_t size = data_type_size(descriptor.data_type);
  uint8_t element[8] = {};
  cast_number_to(value, descriptor.data_type, element);
  std::vector<uint8_t> data(static_cast<size_t>(*bytes));
  for (size_t at = 0; at < data.size(); at += size) std::memcpy(data.data() + at, element, size);
  return data;
}

void decode_inline_bytes(ModelConstant& constant, const std::string& where) {
  const DataType type = constant.descriptor.data_type;
  auto bytes = checked_stored_length(type, constant.descriptor.shape);
  if (!bytes || constant.data.size() != *bytes)
    fail(where, str_cat("constant '", constant.name, "': @bytes holds ", constant.data.size(), " bytes but ",
                        short_type_name(type), shape_to_string(constant.descriptor.shape), " needs ",
                        bytes ? std::to_string(*bytes) : std::string("more"), is_4bit(type) ? " (nibble-packed)" : ""));
  if (is_4bit(type))
    constant.data = unpack_nibbles(type, constant.data.data(), element_count(constant.descriptor.shape));
}

std::vector<uint8_t> inline_bytes(const ModelConstant& constant) {
  return is_4bit(constant.descriptor.data_type) ? pack_nibbles(constant.data) : constant.data;
}

}  // namespace formats

Model parse_model(const std::string& text, const std::string& source) {
  size_t start = text.compare(0, 3, "\xEF\xBB\xBF") == 0 ? 3 : 0;  // a UTF-8 byte order mark
  size_t first = text.find_first_not_of(" \t\r\n", start);
  if (first != std::string::npos && text[first] == '{') return formats::parse_json_model(text, source);
  return formats::parse_text_model(start ? text.substr(start) : text, source);
}

Model read_model(const std::string& path, const LoadOptions& options) {
  Model model = parse_model(formats::read_file(path), path);
  formats::read_weights(model, formats::find_weights(path, options));
  return model;
}

void write_model(const Model& model, const std::string& path, const SaveOptions& options) {
  Model named = model;
  if (!options.name.empty()) named.name = options.name;
  const bool json = options.format == ModelFormat::kJson ||
                    (options.format == ModelFormat::kAuto && formats::ends_with(path, ".json"));
  std::string graph = json ? model_to_json(named) : model_to_text(named);
  formats::write_weights(named, path, options.weights);
  formats::write_file(path, graph);
}

Graph load_model(const Context& context, const std::string& path, const LoadOptions& options) {
  GraphBuilder builder(context);
  builder.impl()->keep_graph_after_build = false;  // nobody sees this builder again
  auto outputs = load_model_into(builder, path, options);
  return builder.build(outputs);
}

std::map<std::string, Operand> load_model_into(GraphBuilder& builder, const std::string& path,
                                               const LoadOptions& options) {
  Model model = read_model(path, options);
  return build_model(builder, model, options.dims);
}

void save_model(const std::string& path, const std::map<std::string, Operand>& outputs, const SaveOptions& options) {
  Model model = formats::describe(outputs, options.name, formats::stem_of(path));
  write_model(model, path, options);
}

}  // namespace webnn
