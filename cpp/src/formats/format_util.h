// Helpers shared by the .webnn readers and writers.
#pragma once
#include <webnn/model.h>

#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "core/common.h"

namespace webnn::formats {

// Nesting limit for arrays and JSON values, so that hostile files cannot exhaust the stack.
constexpr int kMaxNesting = 64;
// The most bytes one @scalar constant may expand to.
constexpr uint64_t kMaxScalarFillBytes = uint64_t(1) << 28;

// A DataError whose message starts with where the problem is. Bytes that are not UTF-8 (from a
// corrupt file) are shown as \xNN.
[[noreturn]] void fail(const std::string& where, const std::string& message);
// "file, line N" (or just the file when the line is unknown).
std::string at_line(const std::string& source, int line);

// Data type names: the text form's short ones (f32, i8, ...) and the long ones (float32, ...).
const char* short_type_name(DataType type);
// Accepts short names, long names and the capitalised forms some converters write ("Float32").
std::optional<DataType> parse_any_type_name(const std::string& name);

bool is_valid_utf8(const std::string& s);

// Identifiers of the text form: [A-Za-z_/$][A-Za-z0-9_./]*.
bool is_identifier(const std::string& s);
bool is_keyword(const std::string& s);
// `s` quoted and escaped as a string literal (JSON-compatible).
std::string quote(const std::string& s);
// An identifier as is, anything else quoted.
std::string name_token(const std::string& s);

// Numbers that read back exactly: integers as integers, floats in their shortest round-trip
// form with a '.' or exponent, `inf`, `-inf` and `nan` for the others.
std::string format_number(const Number& n);
std::string format_double(double d);
// Parses a decimal literal (the text form's and JSON's): integers exactly, others as doubles.
std::optional<Number> parse_number(const std::string& token);

// Element count and byte length with overflow checks; nullopt when the shape is not valid for
// this engine (zero dimension, too many elements).
std::optional<uint64_t> checked_byte_length(DataType type, const std::vector<uint32_t>& shape);

// In files (weights, @bytes, inlineBytes), int4/uint4 are nibble-packed: element 2i in the low
// nibble of byte i, element 2i+1 in its high nibble. In memory they take a byte each.
bool is_4bit(DataType type);
std::optional<uint64_t> checked_stored_length(DataType type, const std::vector<uint32_t>& shape);
std::vector<uint8_t> pack_nibbles(const std::vector<uint8_t>& values);
std::vector<uint8_t> unpack_nibbles(DataType type, const uint8_t* packed, size_t count);

// Whole-file read and write; throws DataError naming the file.
std::string read_file(const std::string& path);
// A whole file's bytes: memory-mapped privately (copy-on-write: the pages are the page cache's until
// written) by map_file where the system can, else read; read into aligned private memory by
// snapshot_file. Its bytes can be used in place (in_place()) unless they are the fallback copy.
struct MappedFile {
  uint8_t* data = nullptr;
  size_t size = 0;
  void* mapping = nullptr;  // munmap'ed with the object
  BufferPtr snapshot;       // snapshot_file's bytes
  std::string copy;         // the bytes when the file could not be mapped
  bool in_place() const { return mapping != nullptr || snapshot != nullptr; }
  std::string_view view() const { return {reinterpret_cast<const char*>(data), size}; }
  MappedFile() = default;
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  ~MappedFile();
};
std::shared_ptr<MappedFile> map_file(const std::string& path);
// The file read whole into a 64-byte aligned private buffer; DataError naming the file when it
// cannot be read or changes size while it is read.
std::shared_ptr<MappedFile> snapshot_file(const std::string& path);
void write_file(const std::string& path, const std::string& bytes);
bool file_exists(const std::string& path);

// Path helpers: the directory (with a trailing '/', or empty) and the stem without extension.
std::string dir_of(const std::string& path);
std::string stem_of(const std::string& path);
bool ends_with(const std::string& s, const std::string& suffix);

}  // namespace webnn::formats
