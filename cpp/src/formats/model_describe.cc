// A builder's graph -> a model description, for saving.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <optional>
#include <set>

#include "core/float16.h"
#include "formats/format_util.h"
#include "formats/origins.h"

namespace webnn {
namespace {

using formats::OperandOrigin;

bool is_operand_kind(ParamKind kind) {
  return kind == ParamKind::kOperand || kind == ParamKind::kOptionalOperand || kind == ParamKind::kOperandList;
}

// The double nearest the shortest decimal of float(d): prints short and reads back as float(d).
double float_shortest(double d) {
  if (!std::isfinite(d)) return d;
  char buf[32];
  auto r = std::to_chars(buf, buf + sizeof buf, float(d));
  double out = d;
  std::from_chars(buf, r.ptr, out);
  return out;
}

bool numbers_equal(const Number& a, const Number& b) {
  if (a.kind != b.kind) return false;
  switch (a.kind) {
    case Number::Kind::kFloat: return a.f == b.f || (std::isnan(a.f) && std::isnan(b.f));
    case Number::Kind::kInt: return a.i == b.i;
    case Number::Kind::kUint: return a.u == b.u;
    case Number::Kind::kDimension: return a.dimension == b.dimension;
  }
  return false;
}

bool attrs_equal(const Attr& a, const Attr& b) {
  if (a.index() != b.index()) return false;
  return std::visit(
      [&](const auto& x) -> bool {
        using T = std::decay_t<decltype(x)>;
        const T& y = std::get<T>(b);
        if constexpr (std::is_same_v<T, Number>) return numbers_equal(x, y);
        else if constexpr (std::is_same_v<T, OperandRef>) return x.id == y.id;
        else if constexpr (std::is_same_v<T, OperandList>) return x.ids == y.ids;
        else if constexpr (std::is_same_v<T, std::monostate>) return true;
        else return x == y;
      },
      a);
}

// The value of a scalar constant's only element, exactly; nullopt when not finite.
std::optional<Number> scalar_value(DataType type, const uint8_t* p) {
  double d = 0;
  switch (type) {
    case DataType::kFloat32: { float f; std::memcpy(&f, p, 4); d = f; break; }
    case DataType::kFloat16: { uint16_t h; std::memcpy(&h, p, 2); d = half_to_float(h); break; }
    case DataType::kInt32: { int32_t v; std::memcpy(&v, p, 4); return Number::from_int(v); }
    case DataType::kUint32: { uint32_t v; std::memcpy(&v, p, 4); return Number::from_int(v); }
    case DataType::kInt64: { int64_t v; std::memcpy(&v, p, 8); return Number::from_int(v); }
    case DataType::kUint64: { uint64_t v; std::memcpy(&v, p, 8); return Number::from_uint(v); }
    case DataType::kInt8:
    case DataType::kInt4: { int8_t v; std::memcpy(&v, p, 1); return Number::from_int(v); }
    case DataType::kUint8:
    case DataType::kUint4: return Number::from_int(*p);
  }
  if (!std::isfinite(d) || (d == 0 && std::signbit(d))) return std::nullopt;
  return Number::from_double(float_shortest(d));
}

class Describer {
 public:
  Describer(const GraphIR& ir, const formats::Origins& origins) : ir_(ir), origins_(origins) {}

  Model run(const std::map<std::string, int>& outputs, const std::string& name) {
    Model model;
    model.name = name;
    find_live(outputs);
    assign_names(outputs);
    for (size_t id = 0; id < ir_.operands.size(); ++id) {
      if (!seen_[id]) continue;
      const OperandInfo& info = ir_.operands[id];
      if (info.kind == OperandInfo::Kind::kInput) model.inputs.push_back(describe_input(int(id)));
      if (info.kind == OperandInfo::Kind::kConstant) model.constants.push_back(describe_constant(int(id)));
    }
    for (size_t n = 0; n < ir_.nodes.size(); ++n)
      if (live_[n] && !skipped_.count(int(n))) model.nodes.push_back(describe_node(ir_.nodes[n]));
    for (const auto& [out_name, id] : outputs) {
      auto alias = output_alias_.find(out_name);
      if (alias != output_alias_.end()) {
        model.outputs.push_back({out_name, alias->second, 0});
        continue;
      }
      model.outputs.push_back({out_name, names_[id], 0});
    }
    for (auto& [out_name, source] : identities_) {
      ModelNode node{{out_name}, "identity", {{"", ModelValue::of_name(names_[source])}}, 0};
      model.nodes.push_back(std::move(node));
    }
    return model;
  }

 private:
  void find_live(const std::map<std::string, int>& outputs) {
    seen_.assign(ir_.operands.size(), false);
    live_.assign(ir_.nodes.size(), false);
    std::vector<int> stack;
    for (const auto& [name, id] : outputs) stack.push_back(id);
    while (!stack.empty()) {
      int id = stack.back();
      stack.pop_back();
      if (seen_[id]) continue;
      seen_[id] = true;
      int producer = ir_.operands[id].producer;
      if (producer < 0 || live_[producer]) continue;
      live_[producer] = true;
      for (int in : ir_.nodes[producer].inputs) stack.push_back(in);
      for (int out : ir_.nodes[producer].outputs) stack.push_back(out);  // every output gets a name
    }
  }

  bool take(int id, const std::string& name) {
    if (name.empty() || names_.count(id) || used_.count(name)) return false;
    names_[id] = name;
    used_.insert(name);
    return true;
  }

  void assign_names(const std::map<std::string, int>& outputs) {
    // 1. Inputs keep their names.
    for (size_t id = 0; id < ir_.operands.size(); ++id)
      if (seen_[id] && ir_.operands[id].kind == OperandInfo::Kind::kInput) take(int(id), ir_.operands[id].name);
    // 2. Computed outputs are named after the graph outputs.
    std::map<int, int> uses;  // consumers among live nodes
    for (size_t n = 0; n < ir_.nodes.size(); ++n)
      if (live_[n])
        for (int in : ir_.nodes[n].inputs) ++uses[in];
    std::vector<std::pair<std::string, int>> pending;
    for (const auto& [out_name, id] : outputs) {
      const OperandInfo& info = ir_.operands[id];
      if (info.kind == OperandInfo::Kind::kIntermediate && take(id, out_name)) continue;
      // identity(x) made by the loader for an output naming the input or constant x: write `x` back.
      if (info.kind == OperandInfo::Kind::kIntermediate) {
        const Node& node = ir_.nodes[info.producer];
        int source = node.inputs.empty() ? -1 : node.inputs[0];
        if (node.def->name == "identity" && source >= 0 && uses[id] == 0 &&
            ir_.operands[source].kind != OperandInfo::Kind::kIntermediate && names_.count(source) &&
            names_[source] == out_name) {
          output_alias_[out_name] = out_name;
          skipped_.insert(info.producer);
          continue;
        }
      }
      if (names_.count(id) && names_[id] == out_name) continue;  // an input saved under its own name
      if (used_.count(out_name))
        throw_type_error(str_cat("save: the output name '", out_name, "' is already the name of another operand"));
      used_.insert(out_name);  // reserved for the identity below
      pending.emplace_back(out_name, id);
    }
    // 3. Names from the loaded model, 4. from node labels, 5. generated.
    for (size_t id = 0; id < ir_.operands.size(); ++id) {
      auto it = origins_.find(int(id));
      if (seen_[id] && it != origins_.end()) take(int(id), it->second.name);
    }
    for (size_t n = 0; n < ir_.nodes.size(); ++n) {
      const Node& node = ir_.nodes[n];
      if (live_[n] && node.outputs.size() == 1 && formats::is_identifier(node.label) && !formats::is_keyword(node.label))
        take(node.outputs[0], node.label);
    }
    std::map<std::string, int> counters;
    for (size_t id = 0; id < ir_.operands.size(); ++id) {
      if (!seen_[id] || names_.count(int(id))) continue;
      const OperandInfo& info = ir_.operands[id];
      std::string base = info.kind == OperandInfo::Kind::kConstant ? "const" : ir_.nodes[info.producer].def->name;
      while (!take(int(id), str_cat(base, "_", counters[base]++))) {
      }
    }
    // Outputs that are inputs, constants or another output's operand go through identity.
    for (const auto& [out_name, id] : pending) {
      if (!find_op("identity"))
        throw_type_error(str_cat("save: the output '", out_name, "' is not a computed operand of its own"));
      identities_.emplace_back(out_name, id);
      output_alias_[out_name] = out_name;
    }
  }

  const OperandOrigin* origin(int id) const {
    auto it = origins_.find(id);
    return it == origins_.end() ? nullptr : &it->second;
  }

  ModelInput describe_input(int id) {
    const OperandInfo& info = ir_.operands[id];
    ModelInput in;
    in.name = names_[id];
    in.data_type = info.desc.data_type;
    const OperandOrigin* o = origin(id);
    if (o && o->dims.size() == info.desc.shape.size()) {
      in.shape = o->dims;
      return in;
    }
    for (size_t i = 0; i < info.desc.shape.size(); ++i) {
      const DynamicDimension* d = i < info.desc.dynamic.size() && info.desc.dynamic[i].dynamic() ? &info.desc.dynamic[i] : nullptr;
      if (d) in.shape.push_back({0, d->name, d->max_size == kUnboundedDimension ? 0 : d->max_size});
      else in.shape.push_back({info.desc.shape[i], "", 0});
    }
    return in;
  }

  ModelConstant describe_constant(int id) {
    const OperandInfo& info = ir_.operands[id];
    ModelConstant c;
    c.name = names_[id];
    c.descriptor = info.desc;
    size_t bytes = info.desc.byte_length();
    c.data.assign(info.constant_data->data(), info.constant_data->data() + bytes);
    c.key = c.name;
    const OperandOrigin* o = origin(id);
    if (o && o->is_constant) {
      c.init = o->init;
      c.key = o->key;
      c.scalar = o->scalar;
      return c;
    }
    std::optional<Number> scalar = info.desc.shape.empty() ? scalar_value(info.desc.data_type, c.data.data()) : std::nullopt;
    if (scalar) {
      c.init = ModelConstant::Init::kScalar;
      c.scalar = *scalar;
    } else if (info.desc.shape.empty()) {
      c.init = ModelConstant::Init::kBytes;  // inf, nan and -0 have no portable @scalar form
    }
    return c;
  }

  ModelValue value_of(const Attr& a, ParamKind kind) {
    const bool as_float = kind == ParamKind::kFloat || kind == ParamKind::kFloatList;
    auto real = [&](double d) { return ModelValue::of_number(Number::from_double(as_float ? float_shortest(d) : d)); };
    if (auto* b = std::get_if<bool>(&a)) return ModelValue::of_bool(*b);
    if (auto* i = std::get_if<int64_t>(&a)) return ModelValue::of_number(Number::from_int(*i));
    if (auto* d = std::get_if<double>(&a)) return real(*d);
    if (auto* n = std::get_if<Number>(&a)) return ModelValue::of_number(*n);
    if (auto* s = std::get_if<std::string>(&a)) return ModelValue::of_string(*s);
    if (auto* r = std::get_if<OperandRef>(&a)) return ModelValue::of_name(names_[r->id]);
    std::vector<ModelValue> items;
    if (auto* v = std::get_if<std::vector<int64_t>>(&a))
      for (int64_t x : *v) items.push_back(ModelValue::of_number(Number::from_int(x)));
    if (auto* v = std::get_if<std::vector<double>>(&a))
      for (double x : *v) items.push_back(real(x));
    if (auto* v = std::get_if<OperandList>(&a))
      for (int id : v->ids) items.push_back(ModelValue::of_name(names_[id]));
    if (auto* v = std::get_if<std::vector<std::string>>(&a))
      for (const std::string& s : *v) items.push_back(ModelValue::of_string(s));
    return ModelValue::of_list(std::move(items));
  }

  ModelNode describe_node(const Node& node) {
    ModelNode out;
    out.op = node.def->name;
    for (int id : node.outputs) out.outputs.push_back(names_[id]);
    const auto& params = node.def->params;
    // Operands by position; other parameters and options by name, defaults left out.
    size_t gap = 0;
    for (size_t i = 0; i < params.size(); ++i) {
      const Attr& a = node.args[i];
      if (!is_operand_kind(params[i].kind)) continue;
      if (std::holds_alternative<std::monostate>(a)) {
        ++gap;
        continue;
      }
      for (; gap > 0; --gap) out.arguments.push_back({"", ModelValue::null_value()});
      out.arguments.push_back({"", value_of(a, params[i].kind)});
    }
    for (size_t i = 0; i < node.args.size(); ++i) {
      const ParamSpec& spec = i < params.size() ? params[i] : node.def->options[i - params.size()];
      const Attr& a = node.args[i];
      if (i < params.size() && is_operand_kind(spec.kind)) continue;
      if (std::holds_alternative<std::monostate>(a) || (i >= params.size() && attrs_equal(a, spec.default_value))) continue;
      ModelValue value = value_of(a, spec.kind);
      for (const SymbolicSize& s : node.symbolic_sizes)
        if (s.arg == i && s.element < value.items.size()) value.items[s.element] = ModelValue::of_name(s.name);
      out.arguments.push_back({spec.name, std::move(value)});
    }
    if (!node.label.empty() && node.label != formats::default_label(out.outputs))
      out.arguments.push_back({"label", ModelValue::of_string(node.label)});
    return out;
  }

  const GraphIR& ir_;
  const formats::Origins& origins_;
  std::vector<bool> seen_, live_;
  std::map<int, std::string> names_;
  std::set<std::string> used_;
  std::set<int> skipped_;
  std::map<std::string, std::string> output_alias_;
  std::vector<std::pair<std::string, int>> identities_;
};

}  // namespace

Model formats::describe(const std::map<std::string, Operand>& outputs, const std::string& name,
                        const std::string& fallback) {
  if (outputs.empty()) throw_type_error("save: at least one output is required");
  detail::BuilderImpl* builder = outputs.begin()->second.builder_impl();
  std::map<std::string, int> ids;
  for (const auto& [out_name, operand] : outputs) {
    if (!operand.valid()) throw_type_error(str_cat("save: output '", out_name, "' is not a valid MLOperand"));
    if (operand.builder_impl() != builder)
      throw_type_error("save: the outputs come from different MLGraphBuilders");
    if (out_name.empty()) throw_type_error("save: an output name is empty");
    ids[out_name] = operand.id();
  }
  formats::ModelOrigins origins = formats::recall_origins(builder);
  std::string model_name = !name.empty() ? name : !origins.model_name.empty() ? origins.model_name : fallback;
  Model model;
  detail::visit_builder_graph(builder, [&](const GraphIR& ir) {
    for (const auto& [out_name, id] : ids)
      if (id < 0 || size_t(id) >= ir.operands.size()) throw_type_error("save: an output is not in its builder's graph");
    for (const auto& [out_name, id] : ids)
      if (ir.operands[id].producer >= 0 && size_t(ir.operands[id].producer) >= ir.nodes.size())
        throw_error(ErrorKind::kInvalidStateError, "save: the builder's graph is no longer available");
    model = Describer(ir, origins.operands).run(ids, model_name);
  });
  // Outputs in the loaded file's order, then the others by name.
  auto rank = [&](const ModelOutput& o) {
    auto it = std::find(origins.output_order.begin(), origins.output_order.end(), o.name);
    return it - origins.output_order.begin();
  };
  std::stable_sort(model.outputs.begin(), model.outputs.end(),
                   [&](const ModelOutput& a, const ModelOutput& b) { return rank(a) < rank(b); });
  return model;
}

Model describe_model(const std::map<std::string, Operand>& outputs, const std::string& name) {
  return formats::describe(outputs, name, "model");
}

}  // namespace webnn
