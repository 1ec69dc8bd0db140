#include "graph/arguments.h"

#include <cmath>
#include <limits>

namespace webnn {

bool enforce_range(const Number& n, int64_t lo, int64_t hi, int64_t* out) {
  switch (n.kind) {
    case Number::Kind::kDimension: return false;  // resolved by the builder before conversion
    case Number::Kind::kInt:
      if (n.i < lo || n.i > hi) return false;
      *out = n.i;
      return true;
    case Number::Kind::kUint:
      if (hi < 0 || n.u > uint64_t(hi)) return false;
      *out = int64_t(n.u);
      return true;
    case Number::Kind::kFloat: {
      if (!std::isfinite(n.f)) return false;
      double t = std::trunc(n.f);
      if (t < double(lo) || t > double(hi)) return false;
      *out = int64_t(t);
      return true;
    }
  }
  return false;
}

namespace {

const char* value_type_name(const Value& v) {
  switch (v.index()) {
    case 0: return "None";
    case 1: return "bool";
    case 2: return "number";
    case 3: return "string";
    case 4: return "sequence of numbers";
    case 5: return "MLOperand";
    case 6: return "sequence of MLOperand";
    case 7: return "sequence of strings";
  }
  return "?";
}

std::vector<Number> as_numbers(const Value& v, bool* ok) {
  if (auto* list = std::get_if<std::vector<Number>>(&v)) return *list;
  // An empty sequence may arrive as any list kind.
  if (auto* ops = std::get_if<std::vector<Operand>>(&v); ops && ops->empty()) return {};
  if (auto* strs = std::get_if<std::vector<std::string>>(&v); strs && strs->empty()) return {};
  *ok = false;
  return {};
}

bool wrap_uint32(const Number& n, int64_t* out) {
  // WebIDL unsigned long without [EnforceRange]: NaN/Inf -> 0, truncate, modulo 2^32.
  double x;
  switch (n.kind) {
    case Number::Kind::kDimension: return false;
    case Number::Kind::kInt: *out = int64_t(uint32_t(uint64_t(n.i))); return true;
    case Number::Kind::kUint: *out = int64_t(uint32_t(n.u)); return true;
    case Number::Kind::kFloat:
      x = n.f;
      if (!std::isfinite(x)) { *out = 0; return true; }
      x = std::fmod(std::trunc(x), 4294967296.0);
      if (x < 0) x += 4294967296.0;
      *out = int64_t(x);
      return true;
  }
  return false;
}

}  // namespace

Attr convert_argument(const ParamSpec& spec, const Value& value, const std::string& prefix,
                      const std::function<int(const Operand&, const std::string&)>& operand_id) {
  const std::string& name = spec.name;
  auto wrong = [&](const std::string& expected) -> Attr {
    throw_type_error(str_cat(prefix, name, " must be ", expected, ", got ", value_type_name(value)));
  };
  const bool absent = std::holds_alternative<std::monostate>(value);
  if (absent) {
    if (spec.kind == ParamKind::kOptionalOperand) return std::monostate{};
    return spec.default_value;  // monostate for optional options without default
  }
  switch (spec.kind) {
    case ParamKind::kOperand:
    case ParamKind::kOptionalOperand: {
      auto* op = std::get_if<Operand>(&value);
      if (!op) return wrong("an MLOperand");
      return OperandRef{operand_id(*op, name)};
    }
    case ParamKind::kOperandList: {
      OperandList list;
      if (auto* ops = std::get_if<std::vector<Operand>>(&value)) {
        for (const Operand& op : *ops) list.ids.push_back(operand_id(op, name));
        return list;
      }
      if (auto* nums = std::get_if<std::vector<Number>>(&value); nums && nums->empty()) return list;
      return wrong("a sequence of MLOperand");
    }
    case ParamKind::kUint:
    case ParamKind::kInt:
    case ParamKind::kUintWrap: {
      const Number* n = std::get_if<Number>(&value);
      Number from_bool;
      if (auto* b = std::get_if<bool>(&value)) {
        from_bool = Number::from_int(*b ? 1 : 0);
        n = &from_bool;
      }
      if (!n) return wrong("an integer");
      int64_t out;
      if (spec.kind == ParamKind::kUintWrap) {
        wrap_uint32(*n, &out);
        return out;
      }
      int64_t lo = spec.kind == ParamKind::kUint ? 0 : -2147483648ll;
      int64_t hi = spec.kind == ParamKind::kUint ? 4294967295ll : 2147483647ll;
      if (!enforce_range(*n, lo, hi, &out))
        throw_type_error(str_cat(prefix, name, " is out of range [", lo, ", ", hi, "]"));
      return out;
    }
    case ParamKind::kUintOrUintList:
      if (std::holds_alternative<Number>(value) || std::holds_alternative<bool>(value))
        return convert_argument({name, ParamKind::kUint}, value, prefix, operand_id);  // an int64_t
      [[fallthrough]];  // a std::vector<int64_t>
    case ParamKind::kUintList: {
      bool ok = true;
      std::vector<Number> nums = as_numbers(value, &ok);
      if (!ok) return wrong("a sequence of unsigned integers");
      std::vector<int64_t> out(nums.size());
      for (size_t i = 0; i < nums.size(); ++i)
        if (!enforce_range(nums[i], 0, 4294967295ll, &out[i]))
          throw_type_error(str_cat(prefix, name, "[", i, "] is not an unsigned 32-bit integer"));
      return out;
    }
    case ParamKind::kUintWrapList: {
      bool ok = true;
      std::vector<Number> nums = as_numbers(value, &ok);
      if (!ok) return wrong("a sequence of numbers");
      std::vector<int64_t> out(nums.size());
      for (size_t i = 0; i < nums.size(); ++i) wrap_uint32(nums[i], &out[i]);
      return out;
    }
    case ParamKind::kDouble:
    case ParamKind::kFloat: {
      auto* n = std::get_if<Number>(&value);
      if (!n) return wrong("a number");
      double d = n->as_double();
      if (!std::isfinite(d)) throw_type_error(str_cat(prefix, name, " must be finite"));
      if (spec.kind == ParamKind::kFloat) {
        if (std::fabs(d) > double(std::numeric_limits<float>::max()))
          throw_type_error(str_cat(prefix, name, " is outside the float32 range"));
        d = double(float(d));
      }
      return d;
    }
    case ParamKind::kFloatList: {
      bool ok = true;
      std::vector<Number> nums = as_numbers(value, &ok);
      if (!ok) return wrong("a sequence of numbers");
      std::vector<double> out(nums.size());
      for (size_t i = 0; i < nums.size(); ++i) {
        double d = nums[i].as_double();
        if (!std::isfinite(d) || std::fabs(d) > double(std::numeric_limits<float>::max()))
          throw_type_error(str_cat(prefix, name, "[", i, "] must be a finite float32 value"));
        out[i] = double(float(d));
      }
      return out;
    }
    case ParamKind::kNumber: {
      if (auto* n = std::get_if<Number>(&value)) return *n;
      if (auto* b = std::get_if<bool>(&value)) return Number::from_int(*b);
      return wrong("a number");
    }
    case ParamKind::kBool: {
      if (auto* b = std::get_if<bool>(&value)) return *b;
      return wrong("a boolean");
    }
    case ParamKind::kDataType: {
      auto* s = std::get_if<std::string>(&value);
      if (!s) return wrong("a data type name");
      if (!parse_data_type(*s)) throw_type_error(str_cat(prefix, name, ": '", *s, "' is not an MLOperandDataType"));
      return *s;
    }
    case ParamKind::kEnum: {
      auto* s = std::get_if<std::string>(&value);
      if (!s) return wrong("a string");
      for (const auto& e : spec.enum_values)
        if (e == *s) return *s;
      std::string allowed;
      for (const auto& e : spec.enum_values) allowed += (allowed.empty() ? "'" : ", '") + e + "'";
      throw_type_error(str_cat(prefix, name, ": '", *s, "' is not one of ", allowed));
    }
    case ParamKind::kEnumList: {
      std::vector<std::string> out;
      if (auto* strs = std::get_if<std::vector<std::string>>(&value)) {
        out = *strs;
      } else {
        bool ok = true;
        as_numbers(value, &ok);  // accepts only an empty sequence
        if (!ok) return wrong("a sequence of strings");
      }
      for (const auto& s : out) {
        bool found = false;
        for (const auto& e : spec.enum_values) found = found || e == s;
        if (!found) throw_type_error(str_cat(prefix, name, ": '", s, "' is not an allowed value"));
      }
      return out;
    }
  }
  return wrong("a valid value");
}

}  // namespace webnn
