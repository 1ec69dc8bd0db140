// MLGraphBuilder: every call validates at once and records a node in the graph IR.
#include <set>

#include "graph/arguments.h"
#include "graph/op_def.h"
#include "graph/builder_impl.h"

namespace webnn {

using detail::BuilderImpl;

const OperandDescriptor& Operand::descriptor() const {
  if (!builder_) throw_type_error("invalid MLOperand");
  const OperandInfo& info = builder_->ir.operands[id_];
  return info.reported ? *info.reported : info.desc;
}

namespace {
// Dynamic dimensions at size 1: the limits they must meet at every size (each dispatch checks its own).
OperandDescriptor smallest_sizes(const OperandDescriptor& desc) {
  if (!desc.is_dynamic()) return desc;
  OperandDescriptor out = desc;
  for (size_t i = 0; i < out.shape.size(); ++i)
    if (out.dynamic[i].dynamic()) out.shape[i] = 1;
  out.dynamic.clear();
  return out;
}

}  // namespace

Operand GraphBuilder::input(const std::string& name, const OperandDescriptor& descriptor) {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  impl_->check_can_build("input");
  std::string what = "input '" + name + "'";
  if (name.empty()) throw_type_error("input: the name must not be empty");
  if (impl_->input_names.count(name)) throw_type_error(what + ": the name is already used by another input");
  OperandInfo info;
  info.kind = OperandInfo::Kind::kInput;
  info.desc = descriptor.is_dynamic() ? impl_->dynamic.declare_input(descriptor, what) : descriptor;
  check_dimensions(smallest_sizes(info.desc), what);
  impl_->input_names.insert(name);
  info.name = name;
  return impl_->add_operand(impl_, std::move(info));
}

namespace {
Operand add_constant(const std::shared_ptr<BuilderImpl>& impl, const OperandDescriptor& descriptor, const void* data,
                     size_t byte_length, BufferPtr adopted) {
  std::lock_guard<std::mutex> lock(impl->mutex);
  impl->check_can_build("constant");
  check_dimensions(descriptor, "constant");
  if (byte_length != descriptor.byte_length())
    throw_type_error(str_cat("constant: the buffer has ", byte_length, " bytes but ", descriptor.to_string(),
                             " needs ", descriptor.byte_length()));
  check_element_values(descriptor.data_type, data, byte_length, "constant");
  OperandInfo info;
  info.kind = OperandInfo::Kind::kConstant;
  info.desc = descriptor;
  if (adopted) {
    info.constant_data = std::move(adopted);
  } else {
    info.constant_data = std::make_shared<AlignedBuffer>(byte_length);
    std::memcpy(info.constant_data->data(), data, byte_length);
  }
  return impl->add_operand(impl, std::move(info));
}
}  // namespace

Operand GraphBuilder::constant(const OperandDescriptor& descriptor, const void* data, size_t byte_length) {
  return add_constant(impl_, descriptor, data, byte_length, nullptr);
}

namespace detail {
Operand constant_in_place(GraphBuilder& builder, const OperandDescriptor& descriptor, BufferPtr bytes) {
  const void* data = bytes->data();
  const size_t length = bytes->size();
  return add_constant(builder.impl(), descriptor, data, length, std::move(bytes));
}
}  // namespace detail

Operand GraphBuilder::constant(DataType data_type, const Number& value) {
  if (value.kind == Number::Kind::kDimension) throw_type_error("constant: a dynamic dimension is not a value");
  OperandDescriptor desc{data_type, {}};
  uint8_t bytes[8] = {};
  cast_number_to(value, data_type, bytes);
  return constant(desc, bytes, data_type_size(data_type));
}

std::vector<Operand> GraphBuilder::call(const std::string& op_name, const std::vector<Value>& arguments,
                                        const Options& options, const std::string& label) {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  const OpDef* def = find_op(op_name);
  if (!def) throw_type_error(str_cat("MLGraphBuilder has no operation '", op_name, "'"));
  const std::string prefix = label.empty() ? def->name + ": " : "[" + label + "] " + def->name + ": ";
  if (impl_->has_built) throw_error(ErrorKind::kInvalidStateError, prefix + "the builder has already built a graph");
  if (*impl_->context_lost) throw_error(ErrorKind::kInvalidStateError, prefix + "the context is lost");

  if (arguments.size() > def->params.size())
    throw_type_error(str_cat(prefix, "takes ", def->params.size(), " arguments, got ", arguments.size()));
  for (const auto& [key, value] : options) {
    bool known = false;
    for (const auto& spec : def->options) known = known || spec.name == key;
    if (!known) throw_type_error(str_cat(prefix, "unknown option '", key, "'"));
  }

  auto operand_id = [&](const Operand& op, const std::string& param) -> int {
    if (op.builder_impl() != impl_.get())
      throw_type_error(str_cat(prefix, param, " is an MLOperand from another MLGraphBuilder"));
    return op.id();
  };
  // Dynamic dimensions named in shape arguments: their representative sizes, and where they sit.
  std::vector<SymbolicSize> symbolic;
  Value resolved;
  auto with_sizes = [&](const ParamSpec& spec, size_t arg_index, const Value& v) -> const Value& {
    if (auto* n = std::get_if<Number>(&v); n && n->kind == Number::Kind::kDimension)
      throw_type_error(str_cat(prefix, spec.name, " cannot be a dynamic dimension"));
    auto* list = std::get_if<std::vector<Number>>(&v);
    if (!list) return v;
    bool any = false;
    for (const Number& n : *list) any = any || n.kind == Number::Kind::kDimension;
    if (!any) return v;
    if (!spec.takes_dimensions) throw_type_error(str_cat(prefix, spec.name, " cannot hold dynamic dimensions"));
    std::vector<Number> sizes = *list;
    for (size_t e = 0; e < sizes.size(); ++e) {
      if (sizes[e].kind != Number::Kind::kDimension) continue;
      uint32_t size = impl_->dynamic.representative(sizes[e].dimension, str_cat(prefix, spec.name, "[", e, "]"));
      symbolic.push_back({arg_index, e, sizes[e].dimension});
      sizes[e] = Number::from_uint(size);
    }
    resolved = std::move(sizes);
    return resolved;
  };
  std::vector<Attr> args;
  args.reserve(def->params.size() + def->options.size());
  for (size_t i = 0; i < def->params.size(); ++i) {
    const ParamSpec& spec = def->params[i];
    Value absent;
    const Value& v = with_sizes(spec, i, i < arguments.size() ? arguments[i] : absent);
    Attr a = convert_argument(spec, v, prefix, operand_id);
    if (std::holds_alternative<std::monostate>(a) && spec.kind != ParamKind::kOptionalOperand)
      throw_type_error(str_cat(prefix, "the argument '", spec.name, "' is required"));
    args.push_back(std::move(a));
  }
  for (const ParamSpec& spec : def->options) {
    auto it = options.find(spec.name);
    Value absent;
    const Value& v = with_sizes(spec, args.size(), it == options.end() ? absent : it->second);
    args.push_back(convert_argument(spec, v, prefix, operand_id));
  }

  // CR-types and CR-ranks, from the capability data.
  const auto& operands = impl_->ir.operands;
  auto check_limit = [&](const OperandLimit& limit, const OperandDescriptor& d, const std::string& what) {
    if (!(limit.types & type_bit(d.data_type)))
      throw_type_error(str_cat(prefix, what, " has unsupported data type ", data_type_name(d.data_type)));
    if (d.shape.size() < limit.rank_min || d.shape.size() > limit.rank_max)
      throw_type_error(str_cat(prefix, what, " has rank ", d.shape.size(), ", but the rank must be in [",
                               limit.rank_min, ", ", limit.rank_max, "]"));
  };
  std::vector<int> inputs;
  size_t index = 0;
  auto spec_at = [&](size_t i) -> const ParamSpec& {
    return i < def->params.size() ? def->params[i] : def->options[i - def->params.size()];
  };
  for (const Attr& a : args) {
    const ParamSpec& spec = spec_at(index++);
    const OperandLimit* limit = def->limit(spec.name);
    std::vector<int> ids;
    if (auto* ref = std::get_if<OperandRef>(&a)) ids.push_back(ref->id);
    if (auto* list = std::get_if<OperandList>(&a)) ids = list->ids;
    for (int id : ids) {
      if (limit) check_limit(*limit, operands[id].desc, spec.name);
      inputs.push_back(id);
    }
  }
  OpView view(*def, args, operands, label);
  for (const OperandLimit& limit : def->limits) {
    if (limit.same_type_as.empty() || !def->limit(limit.name)) continue;
    bool is_param = false;
    for (size_t i = 0; i < args.size(); ++i) is_param = is_param || spec_at(i).name == limit.name;
    if (!is_param || !view.has(limit.name)) continue;
    auto types_of = [&](const std::string& name) {
      std::vector<DataType> out;
      const Attr& attr = view.attr(name);
      if (auto* ref = std::get_if<OperandRef>(&attr)) out.push_back(operands[ref->id].desc.data_type);
      if (auto* list = std::get_if<OperandList>(&attr))
        for (int id : list->ids) out.push_back(operands[id].desc.data_type);
      return out;
    };
    auto mine = types_of(limit.name);
    auto theirs = types_of(limit.same_type_as);
    if (theirs.empty()) continue;
    for (DataType t : mine)
      if (t != theirs[0])
        throw_type_error(str_cat(prefix, limit.name, " has data type ", data_type_name(t), " but ",
                                 limit.same_type_as, " has ", data_type_name(theirs[0])));
  }

  std::vector<OperandDescriptor> out_descs;
  try {
    out_descs = def->infer(view);
  } catch (const Error& e) {
    bool dynamic = !symbolic.empty();
    for (int id : inputs) dynamic = dynamic || operands[size_t(id)].desc.is_dynamic();
    if (!dynamic || e.kind() != ErrorKind::kTypeError) throw;
    throw Error(e.kind(), str_cat(e.what(), " (dynamic dimensions at their representative sizes ",
                                  impl_->dynamic.describe_sizes(), "; an op must be valid at every size: "
                                  "shape arguments can name dynamic dimensions)"));
  }
  impl_->dynamic.infer_outputs(*def, args, label, inputs, symbolic, operands, out_descs);
  for (size_t i = 0; i < out_descs.size(); ++i) {
    check_dimensions(smallest_sizes(out_descs[i]), prefix + "output");
    const OperandLimit* limit = def->limit(out_descs.size() == 1 ? "output" : "output" + std::to_string(i));
    if (!limit) limit = def->limit("outputs");
    if (!limit) limit = def->limit("output");
    if (limit && (out_descs[i].shape.size() < limit->rank_min || out_descs[i].shape.size() > limit->rank_max))
      throw_type_error(str_cat(prefix, "the output rank ", out_descs[i].shape.size(), " is outside [",
                               limit->rank_min, ", ", limit->rank_max, "]"));
  }

  Node node;
  node.def = def;
  node.args = std::move(args);
  node.label = label;
  node.inputs = std::move(inputs);
  node.attributes = view.kept();
  node.symbolic_sizes = std::move(symbolic);
  int node_index = int(impl_->ir.nodes.size());
  std::vector<Operand> result;
  for (auto& d : out_descs) {
    OperandInfo info;
    info.desc = std::move(d);
    info.producer = node_index;
    result.push_back(impl_->add_operand(impl_, std::move(info)));
    node.outputs.push_back(result.back().id());
  }
  impl_->ir.nodes.push_back(std::move(node));
  return result;
}

Operand GraphBuilder::call1(const std::string& op, const std::vector<Value>& arguments, const Options& options,
                            const std::string& label) {
  auto outs = call(op, arguments, options, label);
  if (outs.size() != 1) throw_type_error(str_cat(op, " returns ", outs.size(), " operands; use call()"));
  return outs[0];
}

std::vector<OpInfo> op_infos() {
  std::vector<OpInfo> out;
  auto convert = [](const ParamSpec& spec) {
    ParamInfo p;
    p.name = spec.name;
    p.kind = param_kind_name(spec.kind);
    p.enum_values = spec.enum_values;
    const Attr& d = spec.default_value;
    p.has_default = !std::holds_alternative<std::monostate>(d);
    if (auto* b = std::get_if<bool>(&d)) p.default_value = *b;
    if (auto* i = std::get_if<int64_t>(&d)) p.default_value = Number::from_int(*i);
    if (auto* f = std::get_if<double>(&d)) p.default_value = Number::from_double(*f);
    if (auto* n = std::get_if<Number>(&d)) p.default_value = *n;
    if (auto* s = std::get_if<std::string>(&d)) p.default_value = *s;
    if (auto* v = std::get_if<std::vector<int64_t>>(&d)) {
      std::vector<Number> nums;
      for (int64_t x : *v) nums.push_back(Number::from_int(x));
      p.default_value = nums;
    }
    if (auto* v = std::get_if<std::vector<double>>(&d)) {
      std::vector<Number> nums;
      for (double x : *v) nums.push_back(Number::from_double(x));
      p.default_value = nums;
    }
    if (auto* v = std::get_if<std::vector<std::string>>(&d)) p.default_value = *v;
    return p;
  };
  for (const OpDef* def : all_ops()) {
    OpInfo info;
    info.name = def->name;
    for (auto& p : def->params) info.arguments.push_back(convert(p));
    for (auto& p : def->options) info.options.push_back(convert(p));
    info.output_count = def->output_count;
    info.operands = operand_limits(*def);
    out.push_back(std::move(info));
  }
  return out;
}

// Read access to a builder's graph, for the model writer (formats/model_describe.cc).
void detail::visit_builder_graph(BuilderImpl* builder, const std::function<void(const GraphIR&)>& visit) {
  std::lock_guard<std::mutex> lock(builder->mutex);
  visit(builder->ir);
}

}  // namespace webnn
