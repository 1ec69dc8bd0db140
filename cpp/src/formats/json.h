// A small strict JSON reader (RFC 8259) that keeps member order and line numbers.
#pragma once
#include <string>
#include <utility>
#include <unordered_map>
#include <vector>

namespace webnn::formats {

struct JsonValue {
  enum class Type { kNull, kBool, kNumber, kString, kArray, kObject };
  Type type = Type::kNull;
  bool boolean = false;
  std::string text;  // kString: the decoded string; kNumber: the literal as written
  std::vector<JsonValue> items;
  std::vector<std::pair<std::string, JsonValue>> members;
  std::unordered_map<std::string, size_t> member_index;  // name -> position, for large objects
  int line = 0;

  const JsonValue* find(const std::string& key) const;
  const char* type_name() const;
};

// Throws DataError "<source>, line N: ..." on malformed input.
JsonValue parse_json(const std::string& text, const std::string& source);

}  // namespace webnn::formats
