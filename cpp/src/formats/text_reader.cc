// The text form of a .webnn graph:
//
//   webnn_graph "name" v1 [@quantized] {
//     inputs  { x: f32[dyn("batch", 64), 4]; }
//     consts  { W: f32[4, 3] @weights("W"); two: f32[] @scalar(2.0); m: u8[2] @bytes([1, 2]); }
//     nodes   { h = matmul(x, W); [a, b] = split(h, 2, axis=1); y = softmax(a, axis=1); }
//     outputs { y; b; }
//   }
//
// `#` starts a comment. Names are identifiers ([A-Za-z_/$][A-Za-z0-9_./]*) or, as an extension
// for names that are not, string literals.
#include <cctype>
#include <cstdio>
#include <set>

#include "formats/format_util.h"
#include "formats/model_io.h"

namespace webnn::formats {
namespace {

enum class Tok { kIdent, kString, kNumber, kPunct, kAnnotation, kEnd };

struct Token {
  Tok kind;
  std::string text;  // kString: decoded; kAnnotation: the name after '@'
  int line;
};

class Tokenizer {
 public:
  Tokenizer(const std::string& text, const std::string& source) : s_(text), source_(source) {}

  std::vector<Token> run() {
    std::vector<Token> tokens;
    while (true) {
      skip_space_and_comments();
      if (pos_ >= s_.size()) {
        tokens.push_back({Tok::kEnd, "", line_});
        return tokens;
      }
      tokens.push_back(next());
    }
  }

 private:
  [[noreturn]] void error(const std::string& message) { fail(at_line(source_, line_), message); }

  static bool ident_start(char c) { return std::isalpha((unsigned char)c) || c == '_' || c == '/' || c == '$'; }
  static bool ident_char(char c) { return std::isalnum((unsigned char)c) || c == '_' || c == '.' || c == '/'; }

  void skip_space_and_comments() {
    while (pos_ < s_.size()) {
      char c = s_[pos_];
      if (c == '\n') {
        ++line_;
        ++pos_;
      } else if (c == ' ' || c == '\t' || c == '\r') {
        ++pos_;
      } else if (c == '#') {
        while (pos_ < s_.size() && s_[pos_] != '\n') ++pos_;
      } else {
        return;
      }
    }
  }

  std::string ident() {
    size_t start = pos_++;  // ident_start() was checked
    while (pos_ < s_.size() && ident_char(s_[pos_])) ++pos_;
    return s_.substr(start, pos_ - start);
  }

  Token next() {
    char c = s_[pos_];
    int line = line_;
    if (ident_start(c)) return {Tok::kIdent, ident(), line};
    if (c == '"') return {Tok::kString, string_literal(), line};
    if (std::isdigit((unsigned char)c) || c == '-') {
      size_t start = pos_++;
      while (pos_ < s_.size()) {
        char d = s_[pos_];
        bool sign_after_exponent = (d == '+' || d == '-') && (s_[pos_ - 1] == 'e' || s_[pos_ - 1] == 'E');
        if (!std::isalnum((unsigned char)d) && d != '.' && !sign_after_exponent) break;
        ++pos_;
      }
      std::string text = s_.substr(start, pos_ - start);
      if (!parse_number(text)) error(str_cat("malformed number '", text, "'"));
      return {Tok::kNumber, text, line};
    }
    if (c == '@') {
      ++pos_;
      if (pos_ >= s_.size() || !ident_start(s_[pos_])) error("expected an annotation name after '@'");
      return {Tok::kAnnotation, ident(), line};
    }
    if (std::string("{}[]();:,=").find(c) != std::string::npos) {
      ++pos_;
      return {Tok::kPunct, std::string(1, c), line};
    }
    unsigned char u = (unsigned char)c;
    char buf[16];
    if (u >= 0x20 && u < 0x7f) std::snprintf(buf, sizeof buf, "'%c'", c);
    else std::snprintf(buf, sizeof buf, "byte 0x%02x", u);
    error(str_cat("unexpected character ", buf));
  }

  std::string string_literal() {
    ++pos_;
    std::string out;
    while (true) {
      if (pos_ >= s_.size()) error("unterminated string");
      char c = s_[pos_++];
      if (c == '"') {
        if (!is_valid_utf8(out)) error("a string is not valid UTF-8");
        return out;
      }
      if (c == '\n') error("unterminated string (a newline inside quotes)");
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
        case 'n': out += '\n'; break;
        case 't': out += '\t'; break;
        case 'r': out += '\r'; break;
        case 'u': {
          unsigned cp = 0;
          for (int i = 0; i < 4; ++i) {
            if (pos_ >= s_.size() || !std::isxdigit((unsigned char)s_[pos_])) error("bad \\u escape");
            char h = s_[pos_++];
            cp = cp * 16 + unsigned(std::isdigit((unsigned char)h) ? h - '0' : (std::tolower(h) - 'a' + 10));
          }
          if (cp < 0x80) {
            out += char(cp);
          } else if (cp < 0x800) {
            out += char(0xc0 | (cp >> 6));
            out += char(0x80 | (cp & 0x3f));
          } else {
            out += char(0xe0 | (cp >> 12));
            out += char(0x80 | ((cp >> 6) & 0x3f));
            out += char(0x80 | (cp & 0x3f));
          }
          break;
        }
        default: error("bad escape in a string");
      }
    }
  }

  const std::string& s_;
  const std::string& source_;
  size_t pos_ = 0;
  int line_ = 1;
};

class TextParser {
 public:
  TextParser(std::vector<Token> tokens, const std::string& source) : t_(std::move(tokens)), source_(source) {}

  Model parse() {
    Model model;
    model.source = source_;
    expect_word("webnn_graph", "the file must start with 'webnn_graph \"name\" v1 {'");
    if (peek().kind != Tok::kString) error("expected the graph's name in quotes after 'webnn_graph'");
    model.name = take().text;
    model.version = parse_version();
    while (peek().kind == Tok::kAnnotation) {
      if (peek().text != "quantized") error(str_cat("unknown header annotation '@", peek().text, "'"));
      take();
      model.quantized = true;
    }
    expect_punct("{", "'{' after the graph header");
    std::set<std::string> seen_blocks;
    while (!is_punct("}")) {
      const Token& word = peek();
      if (word.kind == Tok::kEnd) error("the file ends before the graph's closing '}'");
      if (word.kind != Tok::kIdent) error(str_cat("expected a block (inputs, consts, nodes or outputs), got ", describe(word)));
      std::string block = word.text;
      if (block != "inputs" && block != "consts" && block != "nodes" && block != "outputs")
        error(str_cat("unknown block '", block, "' (expected inputs, consts, nodes or outputs)"));
      if (!seen_blocks.insert(block).second) error(str_cat("a second '", block, "' block"));
      take();
      expect_punct("{", "'{' after '", block, "'");
      while (!is_punct("}")) {
        if (peek().kind == Tok::kEnd) error(str_cat("the file ends inside the '", block, "' block"));
        if (block == "inputs") model.inputs.push_back(parse_input());
        else if (block == "consts") model.constants.push_back(parse_constant());
        else if (block == "nodes") model.nodes.push_back(parse_node());
        else parse_outputs(model);
      }
      take();
    }
    const int closing_line = take().line;
    if (peek().kind != Tok::kEnd) error(str_cat("unexpected ", describe(peek()), " after the graph's closing '}'"));
    if (!seen_blocks.count("outputs")) error_at(closing_line, "the graph has no 'outputs' block");
    if (model.outputs.empty()) error_at(closing_line, "the 'outputs' block names no operand");
    return model;
  }

 private:
  const Token& peek(size_t ahead = 0) const { return t_[std::min(pos_ + ahead, t_.size() - 1)]; }
  const Token& take() {
    const Token& t = t_[pos_];
    if (pos_ + 1 < t_.size()) ++pos_;
    return t;
  }
  bool is_punct(const char* p, size_t ahead = 0) const {
    return peek(ahead).kind == Tok::kPunct && peek(ahead).text == p;
  }
  [[noreturn]] void error(const std::string& message) const { error_at(peek().line, message); }
  [[noreturn]] void error_at(int line, const std::string& message) const { fail(at_line(source_, line), message); }

  static std::string describe(const Token& t) {
    switch (t.kind) {
      case Tok::kEnd: return "the end of the file";
      case Tok::kString: return str_cat("the string ", quote(t.text));
      case Tok::kAnnotation: return str_cat("'@", t.text, "'");
      default: return str_cat("'", t.text, "'");
    }
  }

  // `what...` names what was expected; formatted only for the error.
  template <class... What>
  void expect_punct(const char* p, const What&... what) {
    if (!is_punct(p)) error(str_cat("expected ", what..., ", got ", describe(peek())));
    take();
  }
  void expect_word(const char* word, const std::string& message) {
    if (peek().kind != Tok::kIdent || peek().text != word) error(message);
    take();
  }

  uint32_t parse_version() {
    // "v1" is one identifier token; "v 1" is two.
    const Token& t = peek();
    std::string digits;
    if (t.kind == Tok::kIdent && t.text.size() > 1 && t.text[0] == 'v') {
      digits = t.text.substr(1);
      take();
    } else if (t.kind == Tok::kIdent && t.text == "v" && peek(1).kind == Tok::kNumber) {
      take();
      digits = take().text;
    } else {
      error(str_cat("expected the format version (v1 or v2) after the graph's name, got ", describe(t)));
    }
    if (digits != "1" && digits != "2") error(str_cat("unsupported format version 'v", digits, "' (expected v1 or v2)"));
    return uint32_t(digits[0] - '0');
  }

  std::string parse_name(const char* what) {
    const Token& t = peek();
    if (t.kind == Tok::kString || (t.kind == Tok::kIdent && !is_keyword(t.text))) return take().text;
    error(str_cat("expected ", what, ", got ", describe(t)));
  }

  uint32_t parse_uint32(const char* what) {
    const Token& t = peek();
    auto n = t.kind == Tok::kNumber ? parse_number(t.text) : std::nullopt;
    if (!n || n->kind == Number::Kind::kFloat) error(str_cat("expected ", what, " (an integer), got ", describe(t)));
    if (n->kind == Number::Kind::kInt && (n->i < 0 || n->i > int64_t(UINT32_MAX)))
      error(str_cat(what, " ", t.text, " is out of range [0, 4294967295]"));
    if (n->kind == Number::Kind::kUint) error(str_cat(what, " ", t.text, " is out of range [0, 4294967295]"));
    take();
    return uint32_t(n->i);
  }

  DataType parse_type_name() {
    const Token& t = peek();
    if (t.kind != Tok::kIdent) error(str_cat("expected a data type (f32, f16, i32, ...), got ", describe(t)));
    auto type = parse_any_type_name(t.text);
    if (!type) error(str_cat("unknown data type '", t.text, "' (expected f32, f16, i32, u32, i64, u64, i8, u8, i4 or u4)"));
    take();
    return *type;
  }

  std::vector<ModelDimension> parse_shape(bool allow_dynamic) {
    expect_punct("[", "'[' to start the shape");
    std::vector<ModelDimension> shape;
    while (!is_punct("]")) {
      if (!shape.empty()) expect_punct(",", "',' or ']' in the shape");
      ModelDimension dim;
      if (peek().kind == Tok::kIdent && peek().text == "dyn") {
        if (!allow_dynamic) error("dynamic dimensions are only allowed in inputs");
        take();
        expect_punct("(", "'(' after 'dyn'");
        if (peek().kind != Tok::kString) error("expected the dynamic dimension's name in quotes");
        dim.name = take().text;
        if (dim.name.empty()) error("a dynamic dimension's name is empty");
        expect_punct(",", "',' after the dynamic dimension's name");
        dim.max = parse_uint32("the dynamic dimension's maximum");
        expect_punct(")", "')' after the dynamic dimension");
      } else {
        dim.size = parse_uint32("a dimension");
        if (dim.size == 0) error("a dimension is 0");
      }
      shape.push_back(std::move(dim));
      if (shape.size() > kMaxRank) error(str_cat("the shape has more than ", kMaxRank, " dimensions"));
    }
    take();
    return shape;
  }

  ModelInput parse_input() {
    ModelInput input;
    input.line = peek().line;
    input.name = parse_name("an input's name");
    expect_punct(":", "':' after the input '", input.name, "'");
    input.data_type = parse_type_name();
    input.shape = parse_shape(true);
    expect_punct(";", "';' after the input '", input.name, "'");
    return input;
  }

  ModelConstant parse_constant() {
    ModelConstant c;
    c.line = peek().line;
    c.name = parse_name("a constant's name");
    expect_punct(":", "':' after the constant '", c.name, "'");
    c.descriptor.data_type = parse_type_name();
    for (const ModelDimension& d : parse_shape(false)) c.descriptor.shape.push_back(d.size);
    if (!checked_byte_length(c.descriptor.data_type, c.descriptor.shape))
      error_at(c.line, str_cat("constant '", c.name, "': the shape has more than 2^31-1 elements"));
    bool has_init = false;
    c.key = c.name;  // a constant with no annotation reads the weight named after it
    while (peek().kind == Tok::kAnnotation) {
      if (has_init) error(str_cat("constant '", c.name, "' has a second initializer"));
      has_init = true;
      std::string kind = take().text;
      expect_punct("(", "'(' after '@", kind, "'");
      if (kind == "weights") {
        c.init = ModelConstant::Init::kWeights;
        if (peek().kind != Tok::kString) error("expected the weight's key in quotes in @weights(...)");
        c.key = take().text;
      } else if (kind == "scalar") {
        c.init = ModelConstant::Init::kScalar;
        ModelValue v = parse_value(0);
        if (v.kind != ModelValue::Kind::kNumber) error("@scalar(...) takes a number");
        c.scalar = v.number;
        c.data = scalar_fill(c.descriptor, c.scalar, str_cat(at_line(source_, c.line), ": constant '", c.name, "'"));
      } else if (kind == "bytes") {
        c.init = ModelConstant::Init::kBytes;
        expect_punct("[", "'[' in @bytes([...])");
        while (!is_punct("]")) {
          if (!c.data.empty()) expect_punct(",", "',' or ']' in @bytes([...])");
          const Token& t = peek();
          auto n = t.kind == Tok::kNumber ? parse_number(t.text) : std::nullopt;
          if (!n || n->kind != Number::Kind::kInt || n->i < 0 || n->i > 255)
            error(str_cat("@bytes([...]) holds integers in [0, 255], got ", describe(t)));
          c.data.push_back(uint8_t(n->i));
          take();
        }
        take();
        decode_inline_bytes(c, at_line(source_, c.line));
      } else {
        error(str_cat("unknown constant annotation '@", kind, "' (expected @weights, @scalar or @bytes)"));
      }
      expect_punct(")", "')' after @", kind, "(...)");
    }
    expect_punct(";", "';' after the constant '", c.name, "'");
    return c;
  }

  ModelValue parse_value(int depth) {
    if (depth > kMaxNesting) error("arrays are nested too deeply");
    const Token& t = peek();
    switch (t.kind) {
      case Tok::kNumber: return ModelValue::of_number(*parse_number(take().text));
      case Tok::kString: return ModelValue::of_string(take().text);
      case Tok::kIdent: {
        std::string word = take().text;
        if (word == "true" || word == "false") return ModelValue::of_bool(word == "true");
        if (word == "null") return ModelValue::null_value();
        if (word == "inf" || word == "nan") return ModelValue::of_number(*parse_number(word));
        return ModelValue::of_name(word);
      }
      case Tok::kPunct:
        if (t.text == "[") {
          take();
          std::vector<ModelValue> items;
          while (!is_punct("]")) {
            if (!items.empty()) expect_punct(",", "',' or ']' in an array");
            if (peek().kind == Tok::kEnd) error("the file ends inside an array");
            items.push_back(parse_value(depth + 1));
          }
          take();
          return ModelValue::of_list(std::move(items));
        }
        break;
      default: break;
    }
    error(str_cat("expected a value (a name, number, string, boolean, null or array), got ", describe(t)));
  }

  ModelNode parse_node() {
    ModelNode node;
    node.line = peek().line;
    if (is_punct("[")) {
      take();
      while (!is_punct("]")) {
        if (!node.outputs.empty()) expect_punct(",", "',' or ']' in the list of outputs");
        node.outputs.push_back(parse_name("an output name"));
      }
      take();
      if (node.outputs.empty()) error("a statement assigns to an empty list");
    } else {
      node.outputs.push_back(parse_name("a statement 'name = op(...);'"));
    }
    expect_punct("=", "'=' in the statement");
    if (peek().kind != Tok::kIdent) error(str_cat("expected an operation name, got ", describe(peek())));
    node.op = take().text;
    expect_punct("(", "'(' after '", node.op, "'");
    while (!is_punct(")")) {
      if (!node.arguments.empty()) expect_punct(",", "',' or ')' in the argument list");
      if (peek().kind == Tok::kEnd) error("the file ends inside an argument list");
      ModelArgument arg;
      if ((peek().kind == Tok::kIdent || peek().kind == Tok::kString) && is_punct("=", 1)) {
        arg.key = take().text;
        take();
        for (const auto& other : node.arguments)
          if (other.key == arg.key) error(str_cat("the option '", arg.key, "' is given twice"));
      } else if (!node.arguments.empty() && !node.arguments.back().key.empty()) {
        error("a positional argument follows a named one");
      }
      arg.value = parse_value(0);
      node.arguments.push_back(std::move(arg));
    }
    take();
    expect_punct(";", "';' after the statement");
    return node;
  }

  void parse_outputs(Model& model) {
    // `a; b, c;` : names separated by ',' or ';'.
    int line = peek().line;
    std::string name = parse_name("an output name");
    model.outputs.push_back({name, name, line});
    if (is_punct(",") || is_punct(";")) take();
  }

  std::vector<Token> t_;
  const std::string& source_;
  size_t pos_ = 0;
};

}  // namespace

Model parse_text_model(const std::string& text, const std::string& source) {
  return TextParser(Tokenizer(text, source).run(), source).parse();
}

}  // namespace webnn::formats
