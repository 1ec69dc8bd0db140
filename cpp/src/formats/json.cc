#include "formats/json.h"

#include <cctype>
#include <cstdio>
#include <cstring>

#include "formats/format_util.h"

namespace webnn::formats {

const JsonValue* JsonValue::find(const std::string& key) const {
  if (!member_index.empty()) {
    auto it = member_index.find(key);
    return it == member_index.end() ? nullptr : &members[it->second].second;
  }
  for (const auto& [k, v] : members)
    if (k == key) return &v;
  return nullptr;
}

const char* JsonValue::type_name() const {
  switch (type) {
    case Type::kNull: return "null";
    case Type::kBool: return "a boolean";
    case Type::kNumber: return "a number";
    case Type::kString: return "a string";
    case Type::kArray: return "an array";
    case Type::kObject: return "an object";
  }
  return "?";
}

namespace {

class JsonParser {
 public:
  JsonParser(const std::string& text, const std::string& source) : s_(text), source_(source) {}

  JsonValue parse_document() {
    JsonValue v = parse_value(0);
    skip_space();
    if (pos_ != s_.size()) error("unexpected text after the JSON value");
    return v;
  }

 private:
  [[noreturn]] void error(const std::string& message) { fail(at_line(source_, line_), message); }

  void skip_space() {
    while (pos_ < s_.size()) {
      char c = s_[pos_];
      if (c == '\n') ++line_;
      if (c != ' ' && c != '\t' && c != '\n' && c != '\r') break;
      ++pos_;
    }
  }

  bool consume(char c) {
    skip_space();
    if (pos_ < s_.size() && s_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }

  void expect(char c, const char* what) {
    if (!consume(c)) error(str_cat("expected ", what, pos_ < s_.size() ? "" : " (the file ends early)"));
  }

  JsonValue parse_value(int depth) {
    if (depth > kMaxNesting) error("JSON nesting is too deep");
    skip_space();
    JsonValue v;
    v.line = line_;
    if (pos_ >= s_.size()) error("unexpected end of the file");
    char c = s_[pos_];
    if (c == '{') {
      ++pos_;
      v.type = JsonValue::Type::kObject;
      if (consume('}')) return v;
      do {
        skip_space();
        if (pos_ >= s_.size() || s_[pos_] != '"') error("expected a member name in quotes");
        std::string key = parse_string();
        if (v.find(key)) error(str_cat("duplicate member ", quote(key)));
        expect(':', "':'");
        JsonValue member = parse_value(depth + 1);
        v.members.emplace_back(std::move(key), std::move(member));
        // Beyond a few members, look names up in a hash index (a weights manifest can have 10^6).
        constexpr size_t kIndexFrom = 16;
        if (v.members.size() == kIndexFrom)
          for (size_t i = 0; i < kIndexFrom; ++i) v.member_index.emplace(v.members[i].first, i);
        else if (v.members.size() > kIndexFrom)
          v.member_index.emplace(v.members.back().first, v.members.size() - 1);
      } while (consume(','));
      expect('}', "',' or '}'");
      return v;
    }
    if (c == '[') {
      ++pos_;
      v.type = JsonValue::Type::kArray;
      if (consume(']')) return v;
      do v.items.push_back(parse_value(depth + 1));
      while (consume(','));
      expect(']', "',' or ']'");
      return v;
    }
    if (c == '"') {
      v.type = JsonValue::Type::kString;
      v.text = parse_string();
      return v;
    }
    if (c == '-' || (c >= '0' && c <= '9')) {
      size_t start = pos_;
      while (pos_ < s_.size() && is_number_char(s_[pos_])) ++pos_;
      v.type = JsonValue::Type::kNumber;
      v.text = s_.substr(start, pos_ - start);
      if (!parse_number(v.text)) error(str_cat("malformed number '", v.text, "'"));
      return v;
    }
    for (const char* word : {"true", "false", "null"}) {
      size_t n = std::strlen(word);
      if (s_.compare(pos_, n, word) == 0) {
        pos_ += n;
        v.type = word[0] == 'n' ? JsonValue::Type::kNull : JsonValue::Type::kBool;
        v.boolean = word[0] == 't';
        return v;
      }
    }
    error(str_cat("unexpected character '", printable(c), "'"));
  }

  static bool is_number_char(char c) {
    return std::isdigit((unsigned char)c) || c == '+' || c == '-' || c == '.' || c == 'e' || c == 'E';
  }

  static std::string printable(char c) {
    unsigned char u = (unsigned char)c;
    if (u >= 0x20 && u < 0x7f) return std::string(1, c);
    char buf[8];
    std::snprintf(buf, sizeof buf, "\\x%02x", u);
    return buf;
  }

  unsigned hex4() {
    if (pos_ + 4 > s_.size()) error("truncated \\u escape");
    unsigned v = 0;
    for (int i = 0; i < 4; ++i) {
      char c = s_[pos_++];
      v <<= 4;
      if (c >= '0' && c <= '9') v |= unsigned(c - '0');
      else if (c >= 'a' && c <= 'f') v |= unsigned(c - 'a' + 10);
      else if (c >= 'A' && c <= 'F') v |= unsigned(c - 'A' + 10);
      else error("bad \\u escape");
    }
    return v;
  }

  static void append_utf8(std::string& out, unsigned cp) {
    if (cp < 0x80) {
      out += char(cp);
    } else if (cp < 0x800) {
      out += char(0xc0 | (cp >> 6));
      out += char(0x80 | (cp & 0x3f));
    } else if (cp < 0x10000) {
      out += char(0xe0 | (cp >> 12));
      out += char(0x80 | ((cp >> 6) & 0x3f));
      out += char(0x80 | (cp & 0x3f));
    } else {
      out += char(0xf0 | (cp >> 18));
      out += char(0x80 | ((cp >> 12) & 0x3f));
      out += char(0x80 | ((cp >> 6) & 0x3f));
      out += char(0x80 | (cp & 0x3f));
    }
  }

  std::string parse_string() {
    ++pos_;  // the opening quote
    std::string out;
    while (true) {
      if (pos_ >= s_.size()) error("unterminated string");
      char c = s_[pos_++];
      if (c == '"') {
        if (!is_valid_utf8(out)) error("a string is not valid UTF-8");
        return out;
      }
      if ((unsigned char)c < 0x20) error("control character in a string");
      if (c != '\\') {
        out += c;
        continue;
      }
      if (pos_ >= s_.size()) error("unterminated string");
      char e = s_[pos_++];
      switch (e) {
        case '"': out += '"'; break;
        case '\\': out += '\\'; break;
        case '/': out += '/'; break;
        case 'b': out += '\b'; break;
        case 'f': out += '\f'; break;
        case 'n': out += '\n'; break;
        case 'r': out += '\r'; break;
        case 't': out += '\t'; break;
        case 'u': {
          unsigned cp = hex4();
          if (cp >= 0xd800 && cp < 0xdc00 && pos_ + 6 <= s_.size() && s_[pos_] == '\\' && s_[pos_ + 1] == 'u') {
            pos_ += 2;
            unsigned low = hex4();
            if (low < 0xdc00 || low >= 0xe000) error("bad surrogate pair");
            cp = 0x10000 + ((cp - 0xd800) << 10) + (low - 0xdc00);
          }
          append_utf8(out, cp);
          break;
        }
        default: error(str_cat("bad escape '\\", printable(e), "'"));
      }
    }
  }

  const std::string& s_;
  const std::string& source_;
  size_t pos_ = 0;
  int line_ = 1;
};

}  // namespace

JsonValue parse_json(const std::string& text, const std::string& source) {
  return JsonParser(text, source).parse_document();
}

}  // namespace webnn::formats
