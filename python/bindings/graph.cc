// MLGraph: a compiled graph.
#include "convert.h"
#include "runtime/objects.h"

namespace py = pybind11;
using namespace webnn;
using namespace webnn_py;

namespace {

py::list descriptor_list(const std::vector<OperandDescriptor>& descs) {
  py::list out;
  for (const auto& d : descs) out.append(descriptor_dict(d));
  return out;
}

py::dict plan_dict(const PlanDescription& plan) {
  py::list steps;
  for (const PlanStep& step : plan.steps) {
    py::dict s;
    s["op"] = step.op;
    s["fused"] = step.fused;
    s["label"] = step.label;
    s["inputs"] = descriptor_list(step.inputs);
    s["outputs"] = descriptor_list(step.outputs);
    s["view"] = step.is_view;
    steps.append(s);
  }
  py::list passes;
  for (const auto& [pass, summary] : plan.passes) passes.append(py::make_tuple(pass, summary));
  py::dict out;
  out["steps"] = steps;
  out["passes"] = passes;
  out["arena_bytes"] = plan.arena_bytes;
  out["constant_bytes"] = plan.constant_bytes;
  return out;
}

}  // namespace

namespace {
// A graph whose plans come from a Python function (the ONNX importer): specialize({input: shape})
// returns (builder, {output: operand}) for those shapes, unbuilt.
Graph dynamic_graph(const Context& context, const py::dict& inputs, const py::dict& outputs, const py::function& fn) {
  auto descriptors = [](const py::dict& d) {
    std::map<std::string, OperandDescriptor> out;
    for (auto item : d) {
      auto pair = item.second.cast<py::tuple>();
      out[utf8(item.first, "a name")] = input_descriptor(pair[0].cast<std::string>(), pair[1]);
    }
    return out;
  };
  std::map<std::string, OperandDescriptor> ins = descriptors(inputs), outs = descriptors(outputs);
  // The function may be dropped on the timeline thread: it takes the GIL to go.
  std::shared_ptr<py::function> held(new py::function(fn), [](py::function* f) {
    if (!Py_IsInitialized()) return;  // at exit: leave it
    py::gil_scoped_acquire gil;
    delete f;
  });
  detail::Specializer specialize = [held, outs](const detail::InputShapes& shapes) {
    py::gil_scoped_acquire gil;
    py::dict arg;
    for (const auto& [name, shape] : shapes) arg[py::str(name)] = py::tuple(shape_list(shape));
    py::tuple result = (*held)(arg).cast<py::tuple>();
    GraphBuilder builder = result[0].cast<GraphBuilder>();
    std::map<std::string, Operand> operands;
    for (auto item : result[1].cast<py::dict>()) operands[utf8(item.first, "an output name")] = item.second.cast<Operand>();
    for (const auto& [name, desc] : outs)
      if (!operands.count(name)) throw Error(ErrorKind::kTypeError, "the converted graph has no output '" + name + "'");
    return detail::take_builder_graph(builder, operands);
  };
  return detail::make_dynamic_graph(context, ins, outs, std::move(specialize));
}
}  // namespace

void init_graph(py::module_& m) {
  m.def("_dynamic_graph", &dynamic_graph, py::arg("context"), py::arg("inputs"), py::arg("outputs"),
        py::arg("specialize"));
  py::class_<Graph>(m, "MLGraph", "A compiled graph, dispatched on its context's timeline.", py::dynamic_attr())
      .def_property_readonly("context", &Graph::context)
      .def_property_readonly("input_descriptors",
                             [](const Graph& g) {
                               py::dict d;
                               for (auto& [k, v] : g.input_descriptors()) d[py::str(k)] = descriptor_dict(v);
                               return d;
                             })
      .def_property_readonly("output_descriptors",
                             [](const Graph& g) {
                               py::dict d;
                               for (auto& [k, v] : g.output_descriptors()) d[py::str(k)] = descriptor_dict(v);
                               return d;
                             })
      .def_property_readonly("is_dynamic", &Graph::is_dynamic,
                             "Whether the graph has dynamic input dimensions (compiled per input shape).")
      .def(
          "_output_descriptors_for",
          [](const Graph& g, const py::dict& input_shapes, const std::string& what) {
            std::map<std::string, std::vector<uint32_t>> shapes;
            for (auto item : input_shapes) shapes[utf8(item.first, "an input name")] = to_shape(item.second);
            py::dict d;
            for (auto& [k, v] : detail::output_descriptors_for(*g.impl(), shapes, what)) d[py::str(k)] = descriptor_dict(v);
            return d;
          },
          py::arg("input_shapes"), py::arg("what"))
      .def(
          "plan_cache_info",
          [](const Graph& g) {
            Graph::PlanCacheInfo info = g.plan_cache_info();
            py::dict d;
            d["plans"] = info.plans;
            d["capacity"] = info.capacity;
            d["compilations"] = info.compilations;
            d["arena_bytes"] = info.arena_bytes;
            return d;
          },
          "{'plans', 'capacity', 'compilations', 'arena_bytes'}: a dynamic graph's plans per input shape "
          "(held now, at most, compiled since build) and their intermediate memory.")
      .def_property(
          "plan_cache_capacity", [](const Graph& g) { return g.plan_cache_info().capacity; },
          [](Graph& g, size_t capacity) { g.set_plan_cache_capacity(capacity); },
          "How many per-shape plans a dynamic graph keeps (default 8, or WEBNN_PLAN_CACHE_SIZE); the least "
          "recently used goes first.")
      .def_property_readonly("destroyed", &Graph::destroyed)
      .def("destroy", &Graph::destroy, "Releases the graph; later dispatches raise InvalidStateError.")
      .def(
          "describe_plan", [](const Graph& g) { return plan_dict(g.describe_plan()); },
          "What the compiler made of the graph: {'steps': [{'op', 'fused', 'label', 'inputs', 'outputs', "
          "'view'}, ...] in run order, 'passes': [(pass, what it did), ...], 'arena_bytes', "
          "'constant_bytes'}.")
      .def("set_profiling", &Graph::set_profiling, py::arg("on"),
           "While on, each dispatch times every plan step; turning it on resets the counts.")
      .def(
          "profile",
          [](const Graph& g) {
            GraphProfile p = g.profile();
            py::list steps;
            for (const StepProfile& s : p.steps) steps.append(py::make_tuple(s.step, s.total_ms));
            py::dict out;
            out["runs"] = p.runs;
            out["steps"] = steps;
            return out;
          },
          "{'runs': dispatches profiled, 'steps': [(step index, total ms), ...]} since profiling started.");
}
