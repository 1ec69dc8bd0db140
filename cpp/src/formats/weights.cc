// Weights files: a manifest (wg-weights-manifest) with a blob, or one safetensors file.
#include <cstring>
#include <map>
#include <set>
#include <sstream>

#include "formats/format_util.h"
#include "formats/json.h"
#include "formats/model_io.h"

namespace webnn::formats {
namespace {

constexpr char kMagic[4] = {'W', 'G', 'W', 'T'};
constexpr size_t kHeaderBytes = 8;

using Type = JsonValue::Type;

// One tensor's place in a weights file, checked against the file.
struct TensorSlice {
  DataType data_type;
  std::vector<uint32_t> shape;
  uint64_t offset;  // absolute in the file
  uint64_t length;
};

uint32_t read_u32(std::string_view bytes, size_t at) {
  uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = (v << 8) | uint8_t(bytes[at + i]);
  return v;
}
uint64_t read_u64(std::string_view bytes, size_t at) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | uint8_t(bytes[at + i]);
  return v;
}
void append_le(std::string& out, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) out += char((v >> (8 * i)) & 0xff);
}

const char* safetensors_type_name(DataType type) {
  switch (type) {
    case DataType::kFloat32: return "F32";
    case DataType::kFloat16: return "F16";
    case DataType::kInt32: return "I32";
    case DataType::kUint32: return "U32";
    case DataType::kInt64: return "I64";
    case DataType::kUint64: return "U64";
    case DataType::kInt8: return "I8";
    case DataType::kUint8: return "U8";
    case DataType::kInt4:
    case DataType::kUint4: break;  // safetensors has no 4-bit integers
  }
  return "";
}

class WeightsReader {
 public:
  explicit WeightsReader(const std::string& path) : path_(path) {}

  [[noreturn]] void error(const std::string& tensor, const std::string& message) const {
    fail(tensor.empty() ? path_ : str_cat(path_, ": tensor '", tensor, "'"), message);
  }

  uint64_t integer(const JsonValue& object, const char* key, const std::string& tensor) const {
    const JsonValue* v = object.find(key);
    if (!v) error(tensor, str_cat("has no \"", key, "\""));
    auto n = v->type == Type::kNumber ? parse_number(v->text) : std::nullopt;
    if (!n || n->kind == Number::Kind::kFloat || (n->kind == Number::Kind::kInt && n->i < 0))
      error(tensor, str_cat("\"", key, "\" must be a non-negative integer"));
    return n->kind == Number::Kind::kInt ? uint64_t(n->i) : n->u;
  }

  std::vector<uint32_t> shape(const JsonValue* v, const std::string& tensor) const {
    if (!v || v->type != Type::kArray) error(tensor, "\"shape\" must be an array of dimensions");
    if (v->items.size() > kMaxRank) error(tensor, str_cat("the shape has more than ", kMaxRank, " dimensions"));
    std::vector<uint32_t> out;
    for (const JsonValue& d : v->items) {
      auto n = d.type == Type::kNumber ? parse_number(d.text) : std::nullopt;
      if (!n || n->kind != Number::Kind::kInt || n->i <= 0 || n->i > int64_t(UINT32_MAX))
        error(tensor, "a dimension must be an integer in [1, 4294967295]");
      out.push_back(uint32_t(n->i));
    }
    return out;
  }

  // Checks a slice's length against dtype x shape and its bytes against the file.
  void check(const std::string& tensor, const TensorSlice& s, uint64_t data_start, uint64_t file_size) const {
    auto expected = checked_stored_length(s.data_type, s.shape);
    if (!expected) error(tensor, "the shape has more than 2^31-1 elements");
    if (s.length != *expected)
      error(tensor, str_cat("byteLength ", s.length, " does not match ", data_type_name(s.data_type), " ",
                            shape_to_string(s.shape), " (", *expected, " bytes", is_4bit(s.data_type) ? ", nibble-packed" : "",
                            ")"));
    if (s.offset < data_start)
      error(tensor, str_cat("byteOffset ", s.offset, " points into the file's ", data_start, "-byte header"));
    if (s.offset > file_size || s.length > file_size - s.offset)
      error(tensor, str_cat("bytes [", s.offset, ", ", s.offset + s.length, ") lie outside the file (", file_size,
                            " bytes; is it truncated?)"));
  }

  std::map<std::string, TensorSlice> read_manifest(const std::string& manifest_path, std::string_view blob) {
    const std::string text = read_file(manifest_path);
    JsonValue root = parse_json(text, manifest_path);
    auto bad = [&](const std::string& message) { fail(manifest_path, message); };
    if (root.type != Type::kObject) bad("the manifest must be a JSON object");
    const JsonValue* format = root.find("format");
    if (!format || format->type != Type::kString || format->text != "wg-weights-manifest")
      bad("not a weights manifest (\"format\" must be \"wg-weights-manifest\")");
    const JsonValue* version = root.find("version");
    if (!version || version->type != Type::kNumber || version->text != "1") bad("unsupported manifest version (expected 1)");
    if (const JsonValue* endian = root.find("endianness"))
      if (endian->type != Type::kString || endian->text != "little")
        bad("only little-endian weights are supported (\"endianness\": \"little\")");
    const JsonValue* tensors = root.find("tensors");
    if (!tensors || tensors->type != Type::kObject) bad("the manifest has no \"tensors\" object");

    // The 8-byte header is optional: with it, offsets are absolute and start at 8.
    uint64_t data_start = 0;
    if (blob.size() >= 4 && std::memcmp(blob.data(), kMagic, 4) == 0) {
      if (blob.size() < kHeaderBytes) error("", "the WGWT header is truncated");
      uint32_t version_number = read_u32(blob, 4);
      if (version_number != 1) error("", str_cat("unsupported weights version ", version_number, " (expected 1)"));
      data_start = kHeaderBytes;
    }
    std::map<std::string, TensorSlice> out;
    for (const auto& [name, entry] : tensors->members) {
      if (entry.type != Type::kObject) error(name, "the manifest entry must be an object");
      const JsonValue* type = entry.find("dataType");
      if (!type || type->type != Type::kString) error(name, "has no \"dataType\"");
      auto data_type = parse_any_type_name(type->text);
      if (!data_type) error(name, str_cat("unknown data type '", type->text, "'"));
      if (const JsonValue* layout = entry.find("layout"))
        if (layout->type != Type::kString || layout->text != "row-major")
          error(name, "only the \"row-major\" layout is supported");
      TensorSlice s{*data_type, shape(entry.find("shape"), name), integer(entry, "byteOffset", name),
                    integer(entry, "byteLength", name)};
      check(name, s, data_start, blob.size());
      out.emplace(name, std::move(s));
    }
    return out;
  }

  std::map<std::string, TensorSlice> read_safetensors(std::string_view file) {
    if (file.size() < 8) error("", str_cat("the file is truncated (", file.size(), " bytes; a safetensors file starts with an 8-byte header length)"));
    uint64_t header_length = read_u64(file, 0);
    if (header_length > file.size() - 8)
      error("", str_cat("the header length ", header_length, " exceeds the file (", file.size(), " bytes)"));
    JsonValue root = parse_json(std::string(file.substr(8, size_t(header_length))), path_ + " (header)");
    if (root.type != Type::kObject) error("", "the header must be a JSON object");
    const uint64_t data_start = 8 + header_length;
    std::map<std::string, TensorSlice> out;
    for (const auto& [name, entry] : root.members) {
      if (name == "__metadata__") continue;
      if (entry.type != Type::kObject) error(name, "the header entry must be an object");
      const JsonValue* type = entry.find("dtype");
      if (!type || type->type != Type::kString) error(name, "has no \"dtype\"");
      std::optional<DataType> data_type;
      for (int i = 0; i < kDataTypeCount; ++i)
        if (!is_4bit(DataType(i)) && type->text == safetensors_type_name(DataType(i))) data_type = DataType(i);
      if (!data_type) error(name, str_cat("unsupported dtype '", type->text, "'"));
      const JsonValue* offsets = entry.find("data_offsets");
      if (!offsets || offsets->type != Type::kArray || offsets->items.size() != 2)
        error(name, "\"data_offsets\" must be [begin, end]");
      JsonValue pair;
      pair.type = Type::kObject;
      pair.members = {{"begin", offsets->items[0]}, {"end", offsets->items[1]}};
      uint64_t begin = integer(pair, "begin", name), end = integer(pair, "end", name);
      if (end < begin) error(name, str_cat("data_offsets [", begin, ", ", end, "] end before they begin"));
      if (begin > file.size() - data_start)
        error(name, str_cat("data_offsets [", begin, ", ", end, "] lie outside the file (is it truncated?)"));
      TensorSlice s{*data_type, shape(entry.find("shape"), name), data_start + begin, end - begin};
      check(name, s, data_start, file.size());
      out.emplace(name, std::move(s));
    }
    return out;
  }

 private:
  std::string path_;
};

}  // namespace

WeightsLocation find_weights(const std::string& graph_path, const LoadOptions& options) {
  const std::string dir = dir_of(graph_path), stem = stem_of(graph_path);
  WeightsLocation where;
  where.map_weights = options.map_weights;
  if (ends_with(options.weights_path, ".safetensors")) {
    where.weights_path = options.weights_path;
    return where;
  }
  where.manifest_path = options.manifest_path;
  if (where.manifest_path.empty()) {
    for (const std::string& candidate : {dir + stem + ".manifest.json", dir + "manifest.json"})
      if (file_exists(candidate)) {
        where.manifest_path = candidate;
        break;
      }
  }
  if (where.manifest_path.empty() && options.weights_path.empty()) {
    if (file_exists(dir + stem + ".safetensors")) where.weights_path = dir + stem + ".safetensors";
    return where;
  }
  where.weights_path = options.weights_path;
  if (where.weights_path.empty()) {
    std::vector<std::string> candidates = {dir + stem + ".weights"};
    if (ends_with(where.manifest_path, ".manifest.json")) {
      const std::string base = where.manifest_path.substr(0, where.manifest_path.size() - 14);
      candidates.push_back(base + ".weights");
    }
    candidates.push_back(dir + "model.weights");
    where.weights_path = candidates[0];
    for (const std::string& candidate : candidates)
      if (file_exists(candidate)) {
        where.weights_path = candidate;
        break;
      }
  }
  return where;
}

void read_weights(Model& model, const WeightsLocation& location) {
  std::vector<ModelConstant*> wanted;
  for (ModelConstant& c : model.constants)
    if (c.init == ModelConstant::Init::kWeights) wanted.push_back(&c);
  if (wanted.empty()) return;
  if (location.weights_path.empty())
    fail(at_line(model.source, wanted[0]->line),
         str_cat("constant '", wanted[0]->name, "' reads weights, but no manifest (", stem_of(model.source),
                 ".manifest.json or manifest.json) or ", stem_of(model.source), ".safetensors is beside the graph"));
  const std::shared_ptr<MappedFile> mapped =
      location.map_weights ? map_file(location.weights_path) : snapshot_file(location.weights_path);
  const std::string_view file = mapped->view();
  WeightsReader reader(location.weights_path);
  const bool safetensors = location.manifest_path.empty();
  std::map<std::string, TensorSlice> slices =
      safetensors ? reader.read_safetensors(file) : reader.read_manifest(location.manifest_path, file);
  const std::string& listing = safetensors ? location.weights_path : location.manifest_path;
  for (ModelConstant* c : wanted) {
    const std::string where = str_cat(at_line(model.source, c->line), ": constant '", c->name, "'");
    auto it = slices.find(c->key);
    if (it == slices.end()) fail(where, str_cat(listing, " has no tensor '", c->key, "'"));
    const TensorSlice& s = it->second;
    auto declared = checked_stored_length(c->descriptor.data_type, c->descriptor.shape);
    if (s.data_type != c->descriptor.data_type || !declared || s.length != *declared)
      fail(where, str_cat("the graph declares ", data_type_name(c->descriptor.data_type), " ",
                          shape_to_string(c->descriptor.shape), " but ", listing, " has tensor '", c->key, "' as ",
                          data_type_name(s.data_type), " ", shape_to_string(s.shape)));
    const uint8_t* bytes = mapped->data + s.offset;
    if (is_4bit(s.data_type)) {
      c->data = unpack_nibbles(s.data_type, bytes, element_count(s.shape));
    } else if (mapped->in_place() && reinterpret_cast<uintptr_t>(bytes) % data_type_size(s.data_type) == 0) {
      c->mapped = std::shared_ptr<const uint8_t>(mapped, bytes);  // in place: the mapping or snapshot stays
      c->mapped_length = size_t(s.length);
      c->data.clear();
    } else {
      c->data.assign(bytes, bytes + s.length);
    }
  }
}

void write_weights(const Model& model, const std::string& graph_path, WeightsFormat format) {
  // Each key once, in the order the constants come.
  std::vector<const ModelConstant*> tensors;
  std::map<std::string, const ModelConstant*> by_key;
  for (const ModelConstant& c : model.constants) {
    if (c.init != ModelConstant::Init::kWeights) continue;
    auto bytes = checked_byte_length(c.descriptor.data_type, c.descriptor.shape);
    if (!bytes || c.byte_length() != *bytes)
      throw Error(ErrorKind::kDataError, str_cat("save: constant '", c.name, "' has ", c.byte_length(),
                                                 " bytes, which does not match its type"));
    auto [it, inserted] = by_key.emplace(c.key, &c);
    if (inserted) {
      tensors.push_back(&c);
    } else if (it->second->descriptor != c.descriptor ||
               std::memcmp(it->second->bytes(), c.bytes(), c.byte_length()) != 0) {
      throw Error(ErrorKind::kDataError, str_cat("save: constants '", it->second->name, "' and '", c.name,
                                                 "' use the weight key '", c.key, "' but hold different tensors"));
    }
  }
  if (tensors.empty()) return;
  const std::string base = dir_of(graph_path) + stem_of(graph_path);
  if (format == WeightsFormat::kSafetensors) {
    for (const ModelConstant* c : tensors)
      if (is_4bit(c->descriptor.data_type))
        throw Error(ErrorKind::kDataError, str_cat("save: constant '", c->name, "' is ", data_type_name(c->descriptor.data_type),
                                                   ", which safetensors cannot hold; save its weights as \"blob\""));
    std::ostringstream header;
    header << "{";
    uint64_t offset = 0;
    for (size_t i = 0; i < tensors.size(); ++i) {
      const ModelConstant& c = *tensors[i];
      header << (i ? ", " : "") << quote(c.key) << ": {\"dtype\": \"" << safetensors_type_name(c.descriptor.data_type)
             << "\", \"shape\": " << shape_to_string(c.descriptor.shape) << ", \"data_offsets\": [" << offset << ", "
             << offset + c.byte_length() << "]}";
      offset += c.byte_length();
    }
    header << "}";
    std::string head = header.str();
    head.append((8 - head.size() % 8) % 8, ' ');
    std::string file;
    append_le(file, head.size(), 8);
    file += head;
    for (const ModelConstant* c : tensors) file.append(reinterpret_cast<const char*>(c->bytes()), c->byte_length());
    write_file(base + ".safetensors", file);
    return;
  }
  std::string blob;
  if (format == WeightsFormat::kBlob) {
    blob.append(kMagic, 4);
    append_le(blob, 1, 4);
  }
  std::ostringstream manifest;
  manifest << "{\n  \"format\": \"wg-weights-manifest\",\n  \"version\": 1,\n  \"endianness\": \"little\",\n"
           << "  \"tensors\": {";
  for (size_t i = 0; i < tensors.size(); ++i) {
    const ModelConstant& c = *tensors[i];
    const std::vector<uint8_t> stored = is_4bit(c.descriptor.data_type)
                                            ? pack_nibbles(c.data)
                                            : std::vector<uint8_t>(c.bytes(), c.bytes() + c.byte_length());
    manifest << (i ? ",\n" : "\n") << "    " << quote(c.key) << ": {\"dataType\": \""
             << data_type_name(c.descriptor.data_type) << "\", \"shape\": " << shape_to_string(c.descriptor.shape)
             << ", \"byteOffset\": " << blob.size() << ", \"byteLength\": " << stored.size()
             << ", \"layout\": \"row-major\"}";
    blob.append(reinterpret_cast<const char*>(stored.data()), stored.size());
  }
  manifest << "\n  }\n}\n";
  write_file(base + ".manifest.json", manifest.str());
  write_file(base + ".weights", blob);
}

}  // namespace webnn::formats
