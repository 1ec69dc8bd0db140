// MLGraph: a compiled graph.
#include "convert.h"

namespace py = pybind11;
using namespace webnn;
using namespace webnn_py;

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
      .def("destroy", &Graph::destroy, "Releases the graph; later dispatches raise InvalidStateError.");
}
