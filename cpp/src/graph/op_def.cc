#include "graph/op_def.h"

#include <unordered_map>

namespace webnn {

const char* param_kind_name(ParamKind kind) {
  switch (kind) {
    case ParamKind::kOperand: return "operand";
    case ParamKind::kOptionalOperand: return "operand?";
    case ParamKind::kOperandList: return "operands";
    case ParamKind::kUint: return "uint";
    case ParamKind::kInt: return "int";
    case ParamKind::kUintWrap: return "uint_wrap";
    case ParamKind::kUintList: return "uints";
    case ParamKind::kDouble: return "double";
    case ParamKind::kFloat: return "float";
    case ParamKind::kFloatList: return "floats";
    case ParamKind::kNumber: return "number";
    case ParamKind::kBool: return "bool";
    case ParamKind::kDataType: return "data_type";
    case ParamKind::kEnum: return "enum";
    case ParamKind::kEnumList: return "enums";
    case ParamKind::kUintOrUintList: return "uint_or_uints";
    case ParamKind::kUintWrapList: return "uints_wrap";
  }
  return "?";
}

PiecesLayout pieces_along_axis(PiecesLayout::Kind kind, const OperandDescriptor& whole, size_t axis,
                               const std::vector<uint32_t>& sizes) {
  for (size_t d = 0; d < axis; ++d)
    if (whole.shape[d] != 1) return {};
  const size_t bytes_per_index = whole.byte_length() / std::max<size_t>(whole.shape[axis], 1);
  PiecesLayout layout{kind, {}};
  size_t offset = 0;
  for (uint32_t size : sizes) {
    layout.offsets.push_back(offset);
    offset += size * bytes_per_index;
  }
  return layout;
}

const OperandLimit* OpDef::limit(const std::string& operand) const {
  for (const auto& l : limits)
    if (l.name == operand) return &l;
  return nullptr;
}

int OpDef::find_argument(const std::string& argument) const {
  size_t i = 0;
  for (const auto* specs : {&params, &options})
    for (const auto& p : *specs) {
      if (p.name == argument) return int(i);
      ++i;
    }
  return -1;
}

int OpDef::argument_index(const std::string& argument) const {
  const int index = find_argument(argument);
  if (index < 0) throw Error(ErrorKind::kUnknownError, str_cat("internal: ", name, " has no parameter ", argument));
  return index;
}

int OpView::index_of(const std::string& name) const { return def_.argument_index(name); }

void set_operand_argument(Node& node, const std::string& name, int id) {
  node.args[size_t(node.def->argument_index(name))] = OperandRef{id};
  rebuild_inputs(node);
}

std::vector<OperandDescriptor> revalidate(Node& node, const std::vector<OperandInfo>& operands) {
  OpView view(*node.def, node.args, operands, node.label);
  std::vector<OperandDescriptor> outputs = node.def->infer(view);
  node.attributes = view.kept();
  return outputs;
}

int64_t nhwc_axis(int64_t nchw_axis) {
  static const int64_t kAt[4] = {0, 3, 1, 2};
  return kAt[nchw_axis];
}

bool to_nhwc_along_axis(Node& node, const std::vector<OperandInfo>& operands) {
  Attr& axis = node.args[size_t(node.def->argument_index("axis"))];
  axis = nhwc_axis(std::get<int64_t>(axis));
  revalidate(node, operands);
  return true;
}

bool always_exact(const OpView&) { return true; }

OpDef with_exact_results(OpDef def) {
  def.exact_results = always_exact;
  return def;
}

void rebuild_inputs(Node& node) {
  node.inputs.clear();
  for (const Attr& a : node.args) {
    if (auto* ref = std::get_if<OperandRef>(&a)) node.inputs.push_back(ref->id);
    if (auto* list = std::get_if<OperandList>(&a)) node.inputs.insert(node.inputs.end(), list->ids.begin(), list->ids.end());
  }
}

bool OpView::has(const std::string& name) const { return !std::holds_alternative<std::monostate>(attr(name)); }
const Attr& OpView::attr(const std::string& name) const { return args_[index_of(name)]; }

const OperandInfo& OpView::info(const std::string& name) const {
  return operands_[std::get<OperandRef>(attr(name)).id];
}
std::vector<const OperandDescriptor*> OpView::operands(const std::string& name) const {
  std::vector<const OperandDescriptor*> out;
  for (int id : std::get<OperandList>(attr(name)).ids) out.push_back(&operands_[id].desc);
  return out;
}
std::vector<const OperandInfo*> OpView::infos(const std::string& name) const {
  std::vector<const OperandInfo*> out;
  for (int id : std::get<OperandList>(attr(name)).ids) out.push_back(&operands_[id]);
  return out;
}
int OpView::input_index(const std::string& name) const {
  int target = index_of(name);
  int flat = 0;
  for (int i = 0; i < int(args_.size()); ++i) {
    const Attr& a = args_[i];
    if (i == target) return std::holds_alternative<std::monostate>(a) ? -1 : flat;
    if (std::holds_alternative<OperandRef>(a)) ++flat;
    if (auto* list = std::get_if<OperandList>(&a)) flat += int(list->ids.size());
  }
  return -1;
}

int64_t OpView::integer(const std::string& name) const { return std::get<int64_t>(attr(name)); }
double OpView::real(const std::string& name) const { return std::get<double>(attr(name)); }
Number OpView::number(const std::string& name) const { return std::get<Number>(attr(name)); }
bool OpView::flag(const std::string& name) const { return std::get<bool>(attr(name)); }
const std::string& OpView::text(const std::string& name) const { return std::get<std::string>(attr(name)); }
DataType OpView::data_type(const std::string& name) const { return *parse_data_type(text(name)); }
const std::vector<int64_t>& OpView::integers(const std::string& name) const {
  return std::get<std::vector<int64_t>>(attr(name));
}
const std::vector<double>& OpView::reals(const std::string& name) const {
  return std::get<std::vector<double>>(attr(name));
}
const std::vector<std::string>& OpView::texts(const std::string& name) const {
  return std::get<std::vector<std::string>>(attr(name));
}

size_t OpView::axis(const std::string& name, size_t rank) const {
  const int64_t value = integer(name);
  if (uint64_t(value) >= rank) fail(str_cat(name, " ", value, " is out of range for rank ", rank));
  return size_t(value);
}

std::vector<bool> OpView::axes_mask(const std::string& name, size_t rank) const {
  std::vector<bool> marked(rank, false);
  for (int64_t value : integers(name)) {
    if (uint64_t(value) >= rank) fail(str_cat(name, " value ", value, " is out of range for rank ", rank));
    if (marked[value]) fail(str_cat(name, " contains ", value, " more than once"));
    marked[value] = true;
  }
  return marked;
}

std::string OpView::prefix() const {
  return label_.empty() ? def_.name + ": " : "[" + label_ + "] " + def_.name + ": ";
}
void OpView::fail(const std::string& message) const { throw_type_error(prefix() + message); }

// The registry.
#define WEBNN_OP(name) const OpDef& name##_op();
#include "graph/op_list.h"
#undef WEBNN_OP

std::vector<std::pair<std::string, TensorLimits>> operand_limits(const OpDef& def) {
  std::vector<std::pair<std::string, TensorLimits>> out;
  for (const OperandLimit& l : def.limits) {
    TensorLimits t;
    for (int i = 0; i < kDataTypeCount; ++i)
      if (l.types & type_bit(DataType(i))) t.data_types.push_back(DataType(i));
    t.rank_min = l.rank_min;
    t.rank_max = l.rank_max;
    out.emplace_back(l.name, std::move(t));
  }
  return out;
}

const std::vector<const OpDef*>& all_ops() {
  static const std::vector<const OpDef*> ops = {
#define WEBNN_OP(name) &name##_op(),
#include "graph/op_list.h"
#undef WEBNN_OP
  };
  return ops;
}

const OpDef* find_op(const std::string& name) {
  static const std::unordered_map<std::string, const OpDef*> by_name = [] {
    std::unordered_map<std::string, const OpDef*> map;
    for (const OpDef* op : all_ops()) map[op->name] = op;
    return map;
  }();
  auto it = by_name.find(name);
  return it == by_name.end() ? nullptr : it->second;
}

}  // namespace webnn
