// A model description -> builder calls. Arguments are mapped through each op's signature:
// positional values fill its parameters in order, `key=value` fills the parameter or option of
// that name; operands or literals by the parameter's kind.
#include <mutex>
#include <set>
#include <unordered_map>

#include "formats/format_util.h"
#include "graph/builder_impl.h"
#include "formats/model_io.h"
#include "formats/origins.h"

namespace webnn {
namespace formats {
namespace {

// ---------------------------------------------------------------- the origins table
struct OriginsEntry {
  std::weak_ptr<detail::BuilderImpl> builder;
  ModelOrigins origins;
};
std::mutex g_origins_mutex;
std::unordered_map<const detail::BuilderImpl*, OriginsEntry>& origins_table() {
  static auto* table = new std::unordered_map<const detail::BuilderImpl*, OriginsEntry>();
  return *table;
}

// ---------------------------------------------------------------- model -> builder
// The names converters use for the target type of cast (ONNX's `to`, the spec's `type`) map to
// the op's data-type parameter.
const ParamSpec* data_type_alias(const OpDef& def, const std::string& key) {
  if (key != "to" && key != "type" && key != "dataType") return nullptr;
  for (const auto* list : {&def.params, &def.options})
    for (const ParamSpec& spec : *list)
      if (spec.kind == ParamKind::kDataType) return &spec;
  return nullptr;
}

bool is_numeric(ParamKind kind) {
  return kind == ParamKind::kDouble || kind == ParamKind::kFloat || kind == ParamKind::kNumber ||
         kind == ParamKind::kFloatList;
}

bool names_operand(const ModelValue& v) {
  return v.kind == ModelValue::Kind::kName || v.kind == ModelValue::Kind::kString;
}

class ModelBuilder {
 public:
  ModelBuilder(GraphBuilder& builder, const Model& model, const std::map<std::string, uint32_t>& dims)
      : builder_(builder), model_(model), dims_(dims) {}

  std::map<std::string, Operand> run() {
    names_.reserve(model_.inputs.size() + model_.constants.size() + model_.nodes.size());
    for (const ModelInput& input : model_.inputs) add_input(input);
    for (const ModelConstant& constant : model_.constants) add_constant(constant);
    for (const ModelNode& node : model_.nodes) add_node(node);
    std::map<std::string, Operand> outputs;
    for (const ModelOutput& out : model_.outputs) {
      line_ = out.line;
      if (outputs.count(out.name)) error(str_cat("the output '", out.name, "' is listed twice"));
      Operand operand = lookup(out.operand);
      if (names_.at(out.operand).kind != Kind::kNode) {
        // The engine outputs only computed operands (an input or constant goes through identity).
        if (!find_op("identity"))
          error(str_cat("the output '", out.name, "' is a graph input or constant, which cannot be an output"));
        operand = call("identity", {operand}, {}, out.name);
      }
      outputs[out.name] = operand;
    }
    ModelOrigins origins{model_.name, {}, std::move(origins_)};
    for (const ModelOutput& out : model_.outputs) origins.output_order.push_back(out.name);
    // (Only for a builder that can save its graph again: the loader's own is thrown away.)
    if (builder_.impl()->keep_graph_after_build) remember_origins(builder_.impl(), std::move(origins));
    return outputs;
  }

 private:
  enum class Kind { kInput, kConstant, kNode };

  [[noreturn]] void error(const std::string& message) const { fail(at_line(model_.source, line_), message); }

  void define(const std::string& name, const Operand& operand, Kind kind, OperandOrigin origin) {
    if (name.empty()) error("an operand's name is empty");
    auto [it, inserted] = names_.try_emplace(name, Named{operand, kind, line_});
    if (!inserted)
      error(it->second.line > 0 ? str_cat("'", name, "' is already defined on line ", it->second.line)
                                : str_cat("'", name, "' is already defined"));
    origin.name = name;
    origins_[operand.id()] = std::move(origin);
  }

  Operand lookup(const std::string& name) const {
    auto it = names_.find(name);
    if (it == names_.end()) error(str_cat("unknown operand '", name, "'"));
    return it->second.operand;
  }

  // Runs a builder call; its validation errors (TypeError) become DataErrors at the line.
  template <class F>
  auto checked(F&& f) -> decltype(f()) {
    try {
      return f();
    } catch (const Error& e) {
      if (e.kind() != ErrorKind::kTypeError) throw;
      error(e.what());
    }
  }

  Operand call(const std::string& op, const std::vector<Value>& args, const Options& options, const std::string& label) {
    return checked([&] { return builder_.call(op, args, options, label); })[0];
  }

  void add_input(const ModelInput& input) {
    line_ = input.line;
    OperandDescriptor desc{input.data_type, {}};
    std::vector<DynamicDimension> dynamic;
    for (const ModelDimension& dim : input.shape) {
      if (dim.name.empty()) {
        desc.shape.push_back(dim.size);
        dynamic.push_back({});
        continue;
      }
      auto it = dims_.find(dim.name);
      if (it == dims_.end()) {  // stays dynamic: sized at each dispatch
        dynamic.push_back({dim.name, dim.max ? dim.max : kUnboundedDimension});
        desc.shape.push_back(dynamic.back().max_size);
        desc.dynamic = dynamic;  // completed below
        continue;
      }
      dynamic.push_back({});
      if (it->second == 0 || (dim.max > 0 && it->second > dim.max))
        error(str_cat("input '", input.name, "': the size ", it->second, " of the dynamic dimension '", dim.name,
                      "' is outside [1, ", dim.max, "]"));
      desc.shape.push_back(it->second);
    }
    if (!desc.dynamic.empty()) desc.dynamic = dynamic;
    Operand operand = checked([&] { return builder_.input(input.name, desc); });
    OperandOrigin origin;
    origin.dims = input.shape;
    define(input.name, operand, Kind::kInput, std::move(origin));
  }

  void add_constant(const ModelConstant& c) {
    line_ = c.line;
    auto bytes = checked_byte_length(c.descriptor.data_type, c.descriptor.shape);
    if (!bytes) error(str_cat("constant '", c.name, "': the shape has more than 2^31-1 elements"));
    if (c.byte_length() != *bytes) {
      if (c.init == ModelConstant::Init::kWeights && c.byte_length() == 0)
        error(str_cat("constant '", c.name, "' has no data: its weights were not read"));
      error(str_cat("constant '", c.name, "' has ", c.byte_length(), " bytes but ",
                    data_type_name(c.descriptor.data_type), " ", shape_to_string(c.descriptor.shape), " needs ", *bytes));
    }
    Operand operand = checked([&] {
      if (!c.mapped) return builder_.constant(c.descriptor, c.data.data(), c.data.size());
      // In place in the mapped weights file (copy-on-write: nothing writes constants).
      auto view = std::make_shared<AlignedBuffer>(c.mapped, const_cast<uint8_t*>(c.mapped.get()), c.mapped_length);
      return detail::constant_in_place(builder_, c.descriptor, std::move(view));
    });
    OperandOrigin origin;
    origin.is_constant = true;
    origin.init = c.init;
    origin.key = c.key;
    origin.scalar = c.scalar;
    define(c.name, operand, Kind::kConstant, std::move(origin));
  }

  Value literal(const ModelValue& v, const ParamSpec& spec, int depth = 0) const {
    switch (v.kind) {
      case ModelValue::Kind::kNull: return std::monostate{};
      case ModelValue::Kind::kBool: return v.boolean;
      case ModelValue::Kind::kNumber: return v.number;
      case ModelValue::Kind::kString:
      case ModelValue::Kind::kName: {
        if (is_numeric(spec.kind))
          if (auto n = parse_number(v.text)) return *n;  // inf and nan, written as words or strings
        if (spec.kind == ParamKind::kDataType) {
          auto type = parse_any_type_name(v.text);
          if (!type) error(str_cat("'", spec.name, "': unknown data type '", v.text, "'"));
          return std::string(data_type_name(*type));
        }
        return v.text;
      }
      case ModelValue::Kind::kList: {
        if (depth > 0) error(str_cat("'", spec.name, "' cannot hold nested arrays"));
        bool all_text = !v.items.empty();
        for (const ModelValue& item : v.items) all_text = all_text && names_operand(item);
        if (all_text) {
          std::vector<std::string> out;
          for (const ModelValue& item : v.items) out.push_back(item.text);
          return out;
        }
        std::vector<Number> out;
        for (const ModelValue& item : v.items) {
          if (spec.takes_dimensions && names_operand(item) && !parse_number(item.text)) {
            // A dynamic dimension's size (reshape's newShape): its size when loaded with dims.
            auto pinned = dims_.find(item.text);
            out.push_back(pinned != dims_.end() ? Number::from_uint(pinned->second) : Number::from_dimension(item.text));
            continue;
          }
          Value x = literal(item, spec, depth + 1);
          if (auto* n = std::get_if<Number>(&x)) out.push_back(*n);
          else if (auto* b = std::get_if<bool>(&x)) out.push_back(Number::from_int(*b));
          else error(str_cat("'", spec.name, "' mixes numbers and other values"));
        }
        return out;
      }
    }
    return std::monostate{};
  }

  Value argument(const ModelValue& v, const ParamSpec& spec) const {
    switch (spec.kind) {
      case ParamKind::kOperand:
      case ParamKind::kOptionalOperand:
        if (v.kind == ModelValue::Kind::kNull) return std::monostate{};
        if (!names_operand(v)) error(str_cat("'", spec.name, "' must name an operand"));
        return lookup(v.text);
      case ParamKind::kOperandList: {
        if (names_operand(v)) return std::vector<Operand>{lookup(v.text)};
        if (v.kind != ModelValue::Kind::kList) error(str_cat("'", spec.name, "' must be a list of operands"));
        std::vector<Operand> list;
        for (const ModelValue& item : v.items) {
          if (!names_operand(item)) error(str_cat("'", spec.name, "' must be a list of operand names"));
          list.push_back(lookup(item.text));
        }
        return list;
      }
      default: return literal(v, spec);
    }
  }

  void add_node(const ModelNode& node) {
    line_ = node.line;
    const OpDef* def = find_op(node.op);
    if (!def) error(str_cat("unknown operation '", node.op, "'"));
    const auto& params = def->params;
    std::vector<Value> args(params.size());
    std::vector<bool> given(params.size(), false);
    Options options;
    std::string label;
    bool has_label = false;

    std::vector<const ModelValue*> positional;
    for (const ModelArgument& a : node.arguments)
      if (a.key.empty()) positional.push_back(&a.value);
    size_t next = 0, p = 0;
    // concat(a, b, axis=0): leading names fill a leading list-of-operands parameter.
    if (!params.empty() && params[0].kind == ParamKind::kOperandList && !positional.empty() &&
        names_operand(*positional[0])) {
      std::vector<Operand> list;
      while (next < positional.size() && names_operand(*positional[next])) list.push_back(lookup(positional[next++]->text));
      args[0] = list;
      given[0] = true;
      p = 1;
    }
    for (; next < positional.size(); ++next, ++p) {
      if (p >= params.size())
        error(str_cat(node.op, " takes at most ", params.size(), " positional arguments, got ", positional.size()));
      args[p] = argument(*positional[next], params[p]);
      given[p] = true;
    }
    for (const ModelArgument& a : node.arguments) {
      if (a.key.empty()) continue;
      if (a.key == "label") {
        if (a.value.kind != ModelValue::Kind::kString) error("'label' must be a string");
        label = a.value.text;
        has_label = true;
        continue;
      }
      bool known = false;
      for (const auto* list : {&params, &def->options})
        for (const ParamSpec& spec : *list) known = known || spec.name == a.key;
      const ParamSpec* alias = known ? nullptr : data_type_alias(*def, a.key);
      const std::string key = alias ? alias->name : a.key;
      bool found = false;
      for (size_t i = 0; i < params.size() && !found; ++i) {
        if (params[i].name != key) continue;
        if (given[i]) error(str_cat("'", key, "' is given both by position and by name"));
        args[i] = argument(a.value, params[i]);
        given[i] = found = true;
      }
      for (const ParamSpec& spec : def->options) {
        if (found || spec.name != key) continue;
        options[key] = argument(a.value, spec);
        found = true;
      }
      if (!found) {
        std::string known;
        for (const auto* list : {&params, &def->options})
          for (const ParamSpec& spec : *list) known += (known.empty() ? "" : ", ") + spec.name;
        error(str_cat("unknown option '", a.key, "' for ", node.op, known.empty() ? "" : " (it takes: " + known + ")"));
      }
    }
    // Trailing absent arguments are dropped so that the builder reports a missing required one.
    while (!args.empty() && !given[args.size() - 1]) args.pop_back();
    if (!has_label) label = default_label(node.outputs);
    std::vector<Operand> outs = checked([&] { return builder_.call(node.op, args, options, label); });
    if (outs.size() != node.outputs.size())
      error(str_cat(node.op, " returns ", outs.size(), " operand", outs.size() == 1 ? "" : "s", " but the statement names ",
                    node.outputs.size()));
    for (size_t i = 0; i < outs.size(); ++i) define(node.outputs[i], outs[i], Kind::kNode, {});
  }

  GraphBuilder& builder_;
  const Model& model_;
  const std::map<std::string, uint32_t>& dims_;
  struct Named {  // what a name in the model stands for
    Operand operand;
    Kind kind;
    int line;  // where it was defined
  };
  std::unordered_map<std::string, Named> names_;
  Origins origins_;
  int line_ = 0;
};

}  // namespace

std::string default_label(const std::vector<std::string>& outputs) {
  std::string label;
  for (const std::string& name : outputs) label += (label.empty() ? "" : ", ") + name;
  return label;
}

void remember_origins(const std::shared_ptr<detail::BuilderImpl>& builder, ModelOrigins origins) {
  std::lock_guard<std::mutex> lock(g_origins_mutex);
  auto& table = origins_table();
  for (auto it = table.begin(); it != table.end();)
    it = it->second.builder.expired() ? table.erase(it) : std::next(it);
  OriginsEntry& entry = table[builder.get()];
  entry.builder = builder;
  entry.origins.model_name = std::move(origins.model_name);
  entry.origins.output_order = std::move(origins.output_order);
  if (entry.origins.operands.empty()) entry.origins.operands = std::move(origins.operands);
  else
    for (auto& [id, origin] : origins.operands) entry.origins.operands[id] = std::move(origin);
}

ModelOrigins recall_origins(const detail::BuilderImpl* builder) {
  std::lock_guard<std::mutex> lock(g_origins_mutex);
  auto& table = origins_table();
  auto it = table.find(builder);
  if (it == table.end() || it->second.builder.lock().get() != builder) return {};
  return it->second.origins;
}

}  // namespace formats

std::map<std::string, Operand> build_model(GraphBuilder& builder, const Model& model,
                                           const std::map<std::string, uint32_t>& dims) {
  return formats::ModelBuilder(builder, model, dims).run();
}

}  // namespace webnn
