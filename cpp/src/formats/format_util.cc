#include "formats/format_util.h"

#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

#if defined(__unix__)
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#endif

namespace webnn::formats {

namespace {

// The length of the UTF-8 sequence at s[i], or 0 when it is not valid UTF-8.
size_t utf8_length(const std::string& s, size_t i) {
  const auto byte = [&](size_t k) { return k < s.size() ? (unsigned char)s[k] : 0u; };
  unsigned c = byte(i);
  if (c < 0x80) return 1;
  size_t n = (c & 0xe0) == 0xc0 ? 2 : (c & 0xf0) == 0xe0 ? 3 : (c & 0xf8) == 0xf0 ? 4 : 0;
  if (n == 0 || i + n > s.size()) return 0;
  unsigned cp = c & (0x7f >> n);
  for (size_t k = 1; k < n; ++k) {
    if ((byte(i + k) & 0xc0) != 0x80) return 0;
    cp = (cp << 6) | (byte(i + k) & 0x3f);
  }
  const unsigned smallest[] = {0, 0, 0x80, 0x800, 0x10000};
  if (cp < smallest[n] || cp > 0x10ffff || (cp >= 0xd800 && cp < 0xe000)) return 0;
  return n;
}

std::string printable_utf8(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size();) {
    size_t n = utf8_length(s, i);
    if (n == 0) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", (unsigned char)s[i]);
      out += buf;
      ++i;
      continue;
    }
    out.append(s, i, n);
    i += n;
  }
  return out;
}

}  // namespace

bool is_valid_utf8(const std::string& s) {
  for (size_t i = 0; i < s.size();) {
    size_t n = utf8_length(s, i);
    if (n == 0) return false;
    i += n;
  }
  return true;
}

void fail(const std::string& where, const std::string& message) {
  throw Error(ErrorKind::kDataError, printable_utf8(where.empty() ? message : where + ": " + message));
}

std::string at_line(const std::string& source, int line) {
  return line > 0 ? str_cat(source, ", line ", line) : source;
}

const char* short_type_name(DataType type) {
  switch (type) {
    case DataType::kFloat32: return "f32";
    case DataType::kFloat16: return "f16";
    case DataType::kInt32: return "i32";
    case DataType::kUint32: return "u32";
    case DataType::kInt64: return "i64";
    case DataType::kUint64: return "u64";
    case DataType::kInt8: return "i8";
    case DataType::kUint8: return "u8";
    case DataType::kInt4: return "i4";
    case DataType::kUint4: return "u4";
  }
  return "?";
}

std::optional<DataType> parse_any_type_name(const std::string& name) {
  for (int i = 0; i < kDataTypeCount; ++i) {
    DataType t = DataType(i);
    std::string long_name = data_type_name(t);
    std::string capitalised = long_name;
    capitalised[0] = char(capitalised[0] - 'a' + 'A');
    if (name == short_type_name(t) || name == long_name || name == capitalised) return t;
  }
  return std::nullopt;
}

bool is_identifier(const std::string& s) {
  if (s.empty()) return false;
  auto first = [](char c) { return std::isalpha((unsigned char)c) || c == '_' || c == '/' || c == '$'; };
  auto rest = [](char c) { return std::isalnum((unsigned char)c) || c == '_' || c == '.' || c == '/'; };
  if (!first(s[0])) return false;
  for (size_t i = 1; i < s.size(); ++i)
    if (!rest(s[i])) return false;
  return true;
}

bool is_keyword(const std::string& s) {
  return s == "true" || s == "false" || s == "null" || s == "inf" || s == "nan" || s == "dyn";
}

std::string quote(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      case '\r': out += "\\r"; break;
      default:
        if (c < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out += buf;
        } else {
          out += char(c);
        }
    }
  }
  return out + "\"";
}

std::string name_token(const std::string& s) { return is_identifier(s) && !is_keyword(s) ? s : quote(s); }

std::string format_double(double d) {
  if (std::isnan(d)) return "nan";
  if (std::isinf(d)) return d < 0 ? "-inf" : "inf";
  char buf[64];
  auto result = std::to_chars(buf, buf + sizeof buf, d);
  std::string s(buf, result.ptr);
  if (s.find_first_of(".en") == std::string::npos) s += ".0";
  return s;
}

std::string format_number(const Number& n) {
  switch (n.kind) {
    case Number::Kind::kInt: return std::to_string(n.i);
    case Number::Kind::kUint: return std::to_string(n.u);
    case Number::Kind::kFloat: return format_double(n.f);
    case Number::Kind::kDimension: return n.dimension;
  }
  return "0";
}

std::optional<Number> parse_number(const std::string& token) {
  if (token == "inf" || token == "Infinity" || token == "infinity") return Number::from_double(INFINITY);
  if (token == "-inf" || token == "-Infinity" || token == "-infinity") return Number::from_double(-INFINITY);
  if (token == "nan" || token == "NaN") return Number::from_double(NAN);
  // The grammar: -?digits(.digits)?([eE][+-]?digits)?
  size_t i = 0, n = token.size();
  if (i < n && token[i] == '-') ++i;
  size_t digits_start = i;
  while (i < n && std::isdigit((unsigned char)token[i])) ++i;
  if (i == digits_start) return std::nullopt;
  bool integral = true;
  if (i < n && token[i] == '.') {
    integral = false;
    size_t frac = ++i;
    while (i < n && std::isdigit((unsigned char)token[i])) ++i;
    if (i == frac) return std::nullopt;
  }
  if (i < n && (token[i] == 'e' || token[i] == 'E')) {
    integral = false;
    ++i;
    if (i < n && (token[i] == '+' || token[i] == '-')) ++i;
    size_t exp = i;
    while (i < n && std::isdigit((unsigned char)token[i])) ++i;
    if (i == exp) return std::nullopt;
  }
  if (i != n) return std::nullopt;
  const char* begin = token.data();
  const char* end = token.data() + n;
  if (integral) {
    int64_t v;
    auto r = std::from_chars(begin, end, v);
    if (r.ec == std::errc() && r.ptr == end) return Number::from_int(v);
    uint64_t u;
    r = std::from_chars(begin, end, u);
    if (r.ec == std::errc() && r.ptr == end) return Number::from_uint(u);
  }
  double d;
  auto r = std::from_chars(begin, end, d);
  if (r.ptr != end) return std::nullopt;
  if (r.ec == std::errc::result_out_of_range) {
    // Too large: infinity; too small: zero (as in JavaScript and JSON readers).
    bool negative = token[0] == '-';
    size_t e = token.find_first_of("eE");
    bool tiny = e != std::string::npos && token.find('-', e) != std::string::npos;
    d = tiny ? (negative ? -0.0 : 0.0) : (negative ? -INFINITY : INFINITY);
  } else if (r.ec != std::errc()) {
    return std::nullopt;
  }
  return Number::from_double(d);
}

std::optional<uint64_t> checked_byte_length(DataType type, const std::vector<uint32_t>& shape) {
  if (shape.size() > kMaxRank) return std::nullopt;
  uint64_t count = 1;
  for (uint32_t d : shape) {
    if (d == 0) return std::nullopt;
    count *= d;
    if (count > kMaxDimension) return std::nullopt;
  }
  return count * data_type_size(type);
}

bool is_4bit(DataType type) { return type == DataType::kInt4 || type == DataType::kUint4; }

std::optional<uint64_t> checked_stored_length(DataType type, const std::vector<uint32_t>& shape) {
  auto bytes = checked_byte_length(type, shape);
  if (bytes && is_4bit(type)) return (*bytes + 1) / 2;
  return bytes;
}

std::vector<uint8_t> pack_nibbles(const std::vector<uint8_t>& values) {
  std::vector<uint8_t> packed((values.size() + 1) / 2, 0);
  for (size_t i = 0; i < values.size(); ++i) packed[i / 2] |= uint8_t((values[i] & 0x0f) << (i % 2 ? 4 : 0));
  return packed;
}

std::vector<uint8_t> unpack_nibbles(DataType type, const uint8_t* packed, size_t count) {
  std::vector<uint8_t> values(count);
  for (size_t i = 0; i < count; ++i) {
    const int nibble = (packed[i / 2] >> (i % 2 ? 4 : 0)) & 0x0f;
    values[i] = uint8_t(type == DataType::kInt4 && nibble >= 8 ? nibble - 16 : nibble);  // sign-extended
  }
  return values;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail(path, str_cat("cannot open the file (", std::strerror(errno), ")"));
  std::ostringstream buffer;
  buffer << in.rdbuf();
  if (in.bad()) fail(path, "cannot read the file");
  return buffer.str();
}

MappedFile::~MappedFile() {
#if defined(__unix__)
  if (mapping) munmap(mapping, size);
#endif
}

std::shared_ptr<MappedFile> map_file(const std::string& path) {
  auto file = std::make_shared<MappedFile>();
#if defined(__unix__)
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) fail(path, str_cat("cannot open the file (", std::strerror(errno), ")"));
  struct stat info {};
  if (fstat(fd, &info) == 0 && S_ISREG(info.st_mode) && info.st_size > 0) {
    void* mapping = mmap(nullptr, size_t(info.st_size), PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
    if (mapping != MAP_FAILED) {
      close(fd);
      file->mapping = mapping;
      file->data = static_cast<uint8_t*>(mapping);
      file->size = size_t(info.st_size);
      return file;
    }
  }
  close(fd);
#endif
  file->copy = read_file(path);
  file->data = reinterpret_cast<uint8_t*>(file->copy.data());
  file->size = file->copy.size();
  return file;
}

std::shared_ptr<MappedFile> snapshot_file(const std::string& path) {
  auto file = std::make_shared<MappedFile>();
#if defined(__unix__)
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) fail(path, str_cat("cannot open the file (", std::strerror(errno), ")"));
  struct stat info {};
  if (fstat(fd, &info) != 0 || !S_ISREG(info.st_mode)) {
    close(fd);
    fail(path, "is not a regular file");
  }
  const size_t size = size_t(info.st_size);
  file->snapshot = std::make_shared<AlignedBuffer>(std::max<size_t>(size, 1));
  size_t done = 0;
  while (done < size) {
    const ssize_t got = read(fd, file->snapshot->data() + done, size - done);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) {
      const int error = errno;
      close(fd);
      fail(path, got == 0 ? str_cat("the file shrank to ", done, " bytes while it was read (it had ", size, ")")
                          : str_cat("cannot read the file (", std::strerror(error), ")"));
    }
    done += size_t(got);
  }
  close(fd);
  file->data = file->snapshot->data();
  file->size = size;
#else
  file->copy = read_file(path);
  file->data = reinterpret_cast<uint8_t*>(file->copy.data());
  file->size = file->copy.size();
#endif
  return file;
}

void write_file(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) throw Error(ErrorKind::kDataError, str_cat(path, ": cannot create the file (", std::strerror(errno), ")"));
  out.write(bytes.data(), std::streamsize(bytes.size()));
  out.close();
  if (!out) throw Error(ErrorKind::kDataError, str_cat(path, ": cannot write the file"));
}

bool file_exists(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return bool(in);
}

std::string dir_of(const std::string& path) {
  size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? "" : path.substr(0, slash + 1);
}

std::string stem_of(const std::string& path) {
  std::string base = path.substr(dir_of(path).size());
  size_t dot = base.find_last_of('.');
  return dot == std::string::npos || dot == 0 ? base : base.substr(0, dot);
}

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace webnn::formats
