#include "graph/dynamic_shapes.h"

#include <algorithm>

namespace webnn {

const DynamicShapes::Name* DynamicShapes::find(const std::string& name) const {
  for (const Name& n : names_)
    if (n.name == name) return &n;
  return nullptr;
}

uint32_t DynamicShapes::representative(const std::string& name, const std::string& what) const {
  const Name* n = find(name);
  if (!n) throw_type_error(str_cat(what, " names the dynamic dimension '", name, "', which no input declares"));
  return n->probe[0];
}

std::string DynamicShapes::describe_sizes() const {
  std::string out;
  for (const Name& n : names_) out += str_cat(out.empty() ? "" : ", ", n.name, "=", n.probe[0]);
  return out;
}

OperandDescriptor DynamicShapes::declare_input(const OperandDescriptor& declared, const std::string& what) {
  if (declared.dynamic.size() != declared.shape.size())
    throw_type_error(str_cat(what, ": ", declared.dynamic.size(), " dynamic entries for a rank-", declared.shape.size(),
                             " shape"));
  OperandDescriptor desc = declared;
  for (size_t i = 0; i < desc.shape.size(); ++i) {
    const DynamicDimension& d = desc.dynamic[i];
    if (!d.dynamic()) {
      if (!d.name.empty()) throw_type_error(str_cat(what, ": the dynamic dimension '", d.name, "' has max_size 0"));
      continue;
    }
    if (d.name.empty()) throw_type_error(str_cat(what, ": dimension ", i, " is dynamic but has no name"));
    if (d.max_size > kMaxDimension)
      throw_type_error(str_cat(what, ": the dynamic dimension '", d.name, "' has max_size ", d.max_size,
                               " (at most 2^31-1)"));
    const Name* known = find(d.name);
    if (known && known->max_size != d.max_size)
      throw_type_error(str_cat(what, ": the dynamic dimension '", d.name, "' has max_size ", d.max_size,
                               " here but ", known->max_size, " in an earlier input"));
    if (!known) {
      // Sizes that keep the divisibility models expect (multiples of 32) and differ between names.
      const uint32_t m = d.max_size;
      Name n{d.name, m, {}};
      n.probe[0] = std::min<uint32_t>(m, 64 + 32 * uint32_t(std::min<size_t>(names_.size(), 64)));
      n.probe[1] = m > n.probe[0] ? std::min<uint32_t>(m, 2 * n.probe[0]) : std::max<uint32_t>(1, m / 2);
      n.probe[2] = m == kUnboundedDimension ? 0 : m;
      names_.push_back(std::move(n));
      known = &names_.back();
    }
    desc.shape[i] = known->probe[0];
  }
  bool any = false;
  for (const DynamicDimension& d : desc.dynamic) any = any || d.dynamic();
  if (!any) desc.dynamic.clear();
  return desc;
}

void DynamicShapes::add_operand(const std::vector<OperandInfo>& ir_operands) {
  if (!active()) return;
  for (size_t id = at_[0].size(); id < ir_operands.size(); ++id) {
    const OperandInfo& info = ir_operands[id];
    for (int p = 1; p < kProbes; ++p) {
      OperandInfo copy = info;
      bool known = true;
      if (info.kind == OperandInfo::Kind::kInput && info.desc.is_dynamic()) {
        for (size_t i = 0; i < copy.desc.shape.size(); ++i)
          if (info.desc.dynamic[i].dynamic()) {
            uint32_t size = find(info.desc.dynamic[i].name)->probe[p];
            known = known && size != 0;
            copy.desc.shape[i] = size ? size : 1;
          }
      } else if (info.producer >= 0 && !pending_[p - 1].empty()) {
        copy.desc = std::move(pending_[p - 1].front().first);
        known = pending_[p - 1].front().second;
        pending_[p - 1].erase(pending_[p - 1].begin());
      }
      at_[p - 1].push_back(std::move(copy));
      known_[p - 1].push_back(known);
    }
  }
}

DynamicDimension DynamicShapes::derive(const uint32_t value[kProbes], const bool known[kProbes]) const {
  const uint32_t largest = std::max({value[0], known[1] ? value[1] : 0u, known[2] ? value[2] : 0u});
  const uint32_t bound = known[2] ? largest : kUnboundedDimension;
  if (!known[1]) return {"", bound};
  if (value[0] == value[1] && (!known[2] || value[2] == value[0])) return {};
  for (const Name& n : names_)
    if (n.probe[0] == value[0] && n.probe[1] == value[1] && (!known[2] || n.probe[2] == value[2]))
      return {n.name, n.max_size};
  return {"", bound};
}

void DynamicShapes::infer_outputs(const OpDef& def, const std::vector<Attr>& args, const std::string& label,
                                  const std::vector<int>& inputs, const std::vector<SymbolicSize>& symbolic,
                                  const std::vector<OperandInfo>& ir_operands,
                                  std::vector<OperandDescriptor>& outputs) {
  for (auto& o : outputs) o.dynamic.clear();
  if (!active()) return;
  bool moves = !symbolic.empty();
  for (int id : inputs) moves = moves || ir_operands[size_t(id)].desc.is_dynamic() || !known_[0][size_t(id)] || !known_[1][size_t(id)];
  std::vector<OperandDescriptor> at[kProbes];
  bool known[kProbes] = {true, true, true};
  at[0] = outputs;
  for (int p = 1; p < kProbes; ++p) {
    if (!moves) {
      at[p] = outputs;
      continue;
    }
    for (int id : inputs) known[p] = known[p] && known_[p - 1][size_t(id)];
    std::vector<Attr> probe_args;
    if (!symbolic.empty()) {
      probe_args = args;
      set_symbolic_sizes(probe_args, symbolic, [&](const std::string& name) {
        uint32_t size = find(name)->probe[p];
        known[p] = known[p] && size != 0;
        return size ? size : 1u;
      });
    }
    if (known[p]) {
      try {
        OpView view(def, symbolic.empty() ? args : probe_args, at_[p - 1], label);
        at[p] = def.infer(view);
        known[p] = at[p].size() == outputs.size();
        for (size_t o = 0; known[p] && o < outputs.size(); ++o) known[p] = at[p][o].shape.size() == outputs[o].shape.size();
      } catch (const std::exception&) {
        known[p] = false;  // not valid at these sizes: the dispatch at each size decides
      }
    }
    if (!known[p]) at[p] = outputs;
  }
  for (size_t o = 0; o < outputs.size(); ++o) {
    std::vector<DynamicDimension> dims(outputs[o].shape.size());
    bool any = false;
    for (size_t j = 0; j < dims.size(); ++j) {
      const uint32_t value[kProbes] = {at[0][o].shape[j], at[1][o].shape[j], at[2][o].shape[j]};
      dims[j] = derive(value, known);
      any = any || dims[j].dynamic();
    }
    if (any) outputs[o].dynamic = std::move(dims);
    for (int p = 1; p < kProbes; ++p) {
      at[p][o].dynamic.clear();
      pending_[p - 1].emplace_back(std::move(at[p][o]), known[p]);
    }
  }
}

OperandDescriptor reported_descriptor(const OperandDescriptor& ir_descriptor) {
  OperandDescriptor out = ir_descriptor;
  for (size_t i = 0; i < out.dynamic.size() && i < out.shape.size(); ++i)
    if (out.dynamic[i].dynamic()) out.shape[i] = out.dynamic[i].max_size;
  return out;
}

}  // namespace webnn
