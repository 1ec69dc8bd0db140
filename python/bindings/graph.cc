// MLGraph: a compiled graph.
#include "convert.h"

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

void init_graph(py::module_& m) {
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
