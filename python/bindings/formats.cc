// Bindings for reading and writing .webnn models (webnn/model.h). The Python API is in
// webnn/formats.py.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <webnn/model.h>

#include <fstream>
#include <sstream>

namespace py = pybind11;
using namespace webnn;

namespace {

LoadOptions load_options(const std::string& manifest, const std::string& weights,
                         const std::map<std::string, uint32_t>& dims, bool map_weights) {
  LoadOptions options;
  options.map_weights = map_weights;
  options.manifest_path = manifest;
  options.weights_path = weights;
  options.dims = dims;
  return options;
}

SaveOptions save_options(const std::string& format, const std::string& weights, const std::string& name) {
  SaveOptions options;
  if (format == "text") options.format = ModelFormat::kText;
  else if (format == "json") options.format = ModelFormat::kJson;
  else if (format != "auto") throw Error(ErrorKind::kTypeError, "save: format must be 'auto', 'text' or 'json'");
  if (weights == "headerless") options.weights = WeightsFormat::kHeaderlessBlob;
  else if (weights == "safetensors") options.weights = WeightsFormat::kSafetensors;
  else if (weights != "blob")
    throw Error(ErrorKind::kTypeError, "save: weights must be 'blob', 'headerless' or 'safetensors'");
  options.name = name;
  return options;
}

py::object dimension(const ModelDimension& d) {
  if (d.name.empty()) return py::int_(d.size);
  py::dict out;
  out["name"] = d.name;
  out["max"] = d.max;
  return std::move(out);
}

// The graph's structure, without its weights, as plain Python data.
py::dict summary(const Model& model) {
  py::dict out;
  out["name"] = model.name;
  out["version"] = model.version;
  py::list inputs;
  for (const ModelInput& in : model.inputs) {
    py::list shape;
    for (const ModelDimension& d : in.shape) shape.append(dimension(d));
    py::dict d;
    d["name"] = in.name;
    d["dataType"] = data_type_name(in.data_type);
    d["shape"] = shape;
    inputs.append(d);
  }
  out["inputs"] = inputs;
  py::list constants;
  for (const ModelConstant& c : model.constants) {
    py::dict d;
    d["name"] = c.name;
    d["dataType"] = data_type_name(c.descriptor.data_type);
    d["shape"] = c.descriptor.shape;
    d["init"] = c.init == ModelConstant::Init::kWeights ? "weights" : c.init == ModelConstant::Init::kScalar ? "scalar" : "bytes";
    constants.append(d);
  }
  out["consts"] = constants;
  py::list ops;
  for (const ModelNode& node : model.nodes) ops.append(node.op);
  out["ops"] = ops;
  py::dict outputs;
  for (const ModelOutput& o : model.outputs) outputs[py::str(o.name)] = o.operand;
  out["outputs"] = outputs;
  return out;
}

}  // namespace

void init_formats(py::module_& m) {
  m.def(
      "_load_model",
      [](const Context& context, const std::string& path, const std::string& manifest, const std::string& weights,
         const std::map<std::string, uint32_t>& dims, bool map_weights) {
        py::gil_scoped_release release;
        return load_model(context, path, load_options(manifest, weights, dims, map_weights));
      },
      py::arg("context"), py::arg("path"), py::arg("manifest"), py::arg("weights"), py::arg("dims"),
      py::arg("map_weights") = false);
  m.def(
      "_load_model_into",
      [](GraphBuilder& builder, const std::string& path, const std::string& manifest, const std::string& weights,
         const std::map<std::string, uint32_t>& dims, bool map_weights) {
        py::gil_scoped_release release;
        return load_model_into(builder, path, load_options(manifest, weights, dims, map_weights));
      },
      py::arg("builder"), py::arg("path"), py::arg("manifest"), py::arg("weights"), py::arg("dims"),
      py::arg("map_weights") = false);
  m.def(
      "_save_model",
      [](const std::string& path, const std::map<std::string, Operand>& outputs, const std::string& format,
         const std::string& weights, const std::string& name) {
        SaveOptions options = save_options(format, weights, name);
        py::gil_scoped_release release;
        save_model(path, outputs, options);
      },
      py::arg("path"), py::arg("outputs"), py::arg("format"), py::arg("weights"), py::arg("name"));
  m.def(
      "_model_summary",
      [](const std::string& path) {
        Model model;
        {
          py::gil_scoped_release release;
          std::ifstream in(path, std::ios::binary);
          if (!in) throw Error(ErrorKind::kDataError, path + ": cannot open the file");
          std::ostringstream text;
          text << in.rdbuf();
          model = parse_model(text.str(), path);  // the structure only: weights are not read
        }
        return summary(model);
      },
      py::arg("path"));
}
