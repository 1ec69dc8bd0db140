#include "runtime/dynamic_plans.h"

#include <cstdlib>

namespace webnn::detail {

size_t default_plan_cache_capacity() {
  const char* text = std::getenv("WEBNN_PLAN_CACHE_SIZE");
  if (text && *text) {
    char* end = nullptr;
    long value = std::strtol(text, &end, 10);
    if (end && *end == '\0' && value >= 1 && value <= 4096) return size_t(value);
  }
  return 8;
}

std::shared_ptr<ShapePlan> DynamicPlans::plan_for(const InputShapes& shapes, const std::string& what, bool dispatch) {
  std::map<std::string, std::pair<uint32_t, std::string>> sizes;  // dimension -> (size, the input that set it)
  for (const auto& [name, declared] : inputs) {
    auto it = shapes.find(name);
    if (it == shapes.end()) throw_type_error(str_cat(what, ": missing input '", name, "'"));
    const std::vector<uint32_t>& shape = it->second;
    if (shape.size() != declared.shape.size())
      throw_type_error(str_cat(what, ": input '", name, "' has shape ", shape_to_string(shape), " but the graph expects ",
                               declared.to_string()));
    for (size_t i = 0; i < shape.size(); ++i) {
      const DynamicDimension* d = i < declared.dynamic.size() && declared.dynamic[i].dynamic() ? &declared.dynamic[i] : nullptr;
      if (!d) {
        if (shape[i] != declared.shape[i])
          throw_type_error(str_cat(what, ": input '", name, "' has shape ", shape_to_string(shape),
                                   " but the graph expects ", declared.to_string(), " (dimension ", i, " is static)"));
        continue;
      }
      if (shape[i] < 1 || shape[i] > d->max_size)
        throw_type_error(str_cat(what, ": input '", name, "' has size ", shape[i], " in its dynamic dimension '", d->name,
                                 "', outside [1, ", d->max_size, "]"));
      auto [at, inserted] = sizes.emplace(d->name, std::make_pair(shape[i], name));
      if (!inserted && at->second.first != shape[i])
        throw_type_error(str_cat(what, ": the dynamic dimension '", d->name, "' is ", at->second.first, " in input '",
                                 at->second.second, "' but ", shape[i], " in input '", name, "'"));
    }
  }
  std::vector<uint32_t> key;
  key.reserve(dimensions.size());
  for (const DynamicDimension& d : dimensions) key.push_back(sizes.at(d.name).first);
  auto find = [&]() -> std::shared_ptr<ShapePlan> {
    for (auto it = plans.begin(); it != plans.end(); ++it)
      if ((*it)->key == key) {
        plans.splice(plans.begin(), plans, it);
        if (dispatch) last = *it;
        return *it;
      }
    return nullptr;
  };
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (auto found = find()) return found;
  }
  // Specialize outside the lock: it may run a converter that takes other locks (the ONNX importer).
  auto made = std::make_shared<ShapePlan>();
  made->key = key;
  try {
    made->graph = specialize(shapes);
  } catch (const Error& e) {
    std::string at_sizes;  // "batch=3, seq=7"
    for (size_t i = 0; i < dimensions.size(); ++i)
      at_sizes += str_cat(i ? ", " : "", dimensions[i].name, "=", key[i]);
    throw Error(e.kind(), str_cat(what, ": at ", at_sizes, ": ", e.what()));
  }
  for (const auto& [name, shape] : shapes) made->inputs[name] = OperandDescriptor{inputs.at(name).data_type, shape};
  for (const auto& [name, id] : made->graph.outputs) {
    OperandDescriptor d = made->graph.ir->operands[size_t(id)].desc;
    d.dynamic.clear();
    made->outputs[name] = std::move(d);
  }
  std::lock_guard<std::mutex> lock(mutex);
  if (auto found = find()) return found;  // another thread made it meanwhile
  plans.push_front(made);
  if (dispatch) last = made;
  while (plans.size() > capacity) plans.pop_back();  // queued runs hold their own reference
  return made;
}

std::shared_ptr<Plan> PlanCompiler::compiled(ShapePlan& shape_plan) {
  std::shared_ptr<Plan> plan = std::atomic_load(&shape_plan.plan);
  if (plan) return plan;
  plan = compile_plan(*shape_plan.graph.ir, shape_plan.graph.outputs, threads);
  if (profiling) set_plan_profiling(*plan, true);
  std::atomic_store(&shape_plan.plan, plan);
  shape_plan.graph = ConcreteGraph{};
  compilations.fetch_add(1);
  return plan;
}

void DynamicPlans::set_capacity(size_t new_capacity) {
  if (new_capacity < 1) throw_type_error("plan cache capacity must be at least 1");
  std::lock_guard<std::mutex> lock(mutex);
  capacity = new_capacity;
  while (plans.size() > capacity) plans.pop_back();
}

std::list<std::shared_ptr<ShapePlan>> DynamicPlans::clear() {
  std::lock_guard<std::mutex> lock(mutex);
  std::list<std::shared_ptr<ShapePlan>> out;
  out.swap(plans);
  last.reset();
  return out;
}

Specializer specialize_by_inference(std::shared_ptr<const GraphIR> ir, std::map<std::string, int> outputs) {
  // Only the nodes the outputs need are revalidated (the compiler drops the rest).
  std::vector<bool> live(ir->nodes.size(), false);
  std::vector<int> stack;
  for (const auto& [name, id] : outputs) stack.push_back(id);
  std::vector<bool> seen(ir->operands.size(), false);
  while (!stack.empty()) {
    int id = stack.back();
    stack.pop_back();
    if (seen[size_t(id)]) continue;
    seen[size_t(id)] = true;
    int producer = ir->operands[size_t(id)].producer;
    if (producer < 0 || live[size_t(producer)]) continue;
    live[size_t(producer)] = true;
    for (int input : ir->nodes[size_t(producer)].inputs) stack.push_back(input);
  }
  return [ir, outputs, live](const InputShapes& shapes) {
    auto g = std::make_shared<GraphIR>(*ir);
    std::map<std::string, uint32_t> sizes;  // of each dynamic dimension
    for (OperandInfo& info : g->operands) {
      if (info.kind == OperandInfo::Kind::kInput) {
        auto it = shapes.find(info.name);
        if (it != shapes.end()) info.desc.shape = it->second;
        for (size_t i = 0; i < info.desc.dynamic.size() && i < info.desc.shape.size(); ++i)
          if (info.desc.dynamic[i].dynamic()) sizes[info.desc.dynamic[i].name] = info.desc.shape[i];
      }
      info.desc.dynamic.clear();
      info.reported.reset();
    }
    for (size_t n = 0; n < g->nodes.size(); ++n) {
      if (!live[n]) continue;
      Node& node = g->nodes[n];
      set_symbolic_sizes(node.args, node.symbolic_sizes, [&](const std::string& name) { return sizes.at(name); });
      std::vector<OperandDescriptor> outs = revalidate(node, g->operands);
      for (size_t k = 0; k < outs.size() && k < node.outputs.size(); ++k) {
        outs[k].dynamic.clear();
        check_dimensions(outs[k], (node.label.empty() ? node.def->name : "[" + node.label + "] " + node.def->name) + ": output");
        g->operands[size_t(node.outputs[k])].desc = std::move(outs[k]);
      }
    }
    return ConcreteGraph{g, outputs};
  };
}

}  // namespace webnn::detail
