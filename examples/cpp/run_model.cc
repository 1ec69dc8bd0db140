// Loads a .webnn model with the C++ API, runs it once on generated inputs and prints its outputs.
//
//   run_model python/webnn/models/digits.webnn batch=4
//
// Arguments after the model size its dynamic dimensions (`name=N`); unnamed ones default to 1.
#include <webnn/model.h>
#include <webnn/webnn.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

namespace {

// Element i of a generated input: a small deterministic pattern in the input's type.
void fill(webnn::DataType type, std::vector<uint8_t>& bytes) {
  const size_t size = webnn::data_type_size(type);
  for (size_t i = 0; i < bytes.size() / size; ++i) {
    const double value = double(int(i % 7) - 3) / 2;  // -1.5 .. 1.5
    uint8_t* out = bytes.data() + i * size;
    switch (type) {
      case webnn::DataType::kFloat32: { float v = float(value); std::memcpy(out, &v, 4); break; }
      case webnn::DataType::kFloat16: {  // 0, +-0.5, +-1, +-1.5 exactly
        static const uint16_t halves[] = {0xBE00, 0xBC00, 0xB800, 0x0000, 0x3800, 0x3C00, 0x3E00};
        std::memcpy(out, &halves[i % 7], 2);
        break;
      }
      case webnn::DataType::kInt32: { int32_t v = int32_t(i % 4); std::memcpy(out, &v, 4); break; }
      case webnn::DataType::kUint32: { uint32_t v = uint32_t(i % 4); std::memcpy(out, &v, 4); break; }
      case webnn::DataType::kInt64: { int64_t v = int64_t(i % 4); std::memcpy(out, &v, 8); break; }
      case webnn::DataType::kUint64: { uint64_t v = uint64_t(i % 4); std::memcpy(out, &v, 8); break; }
      case webnn::DataType::kInt8: { int8_t v = int8_t(i % 4); std::memcpy(out, &v, 1); break; }
      case webnn::DataType::kUint8: *out = uint8_t(i % 4); break;
    }
  }
}

// The first few elements of an output, as text.
std::string preview(webnn::DataType type, const std::vector<uint8_t>& bytes) {
  std::string out;
  const size_t size = webnn::data_type_size(type);
  for (size_t i = 0; i < bytes.size() / size && i < 6; ++i) {
    const uint8_t* p = bytes.data() + i * size;
    char text[32];
    switch (type) {
      case webnn::DataType::kFloat32: { float v; std::memcpy(&v, p, 4); std::snprintf(text, sizeof text, "%.5g", v); break; }
      case webnn::DataType::kInt32: { int32_t v; std::memcpy(&v, p, 4); std::snprintf(text, sizeof text, "%d", v); break; }
      case webnn::DataType::kInt64: { int64_t v; std::memcpy(&v, p, 8); std::snprintf(text, sizeof text, "%lld", (long long)v); break; }
      default: std::snprintf(text, sizeof text, "0x%02x..", p[0]); break;
    }
    out += (i ? " " : "") + std::string(text);
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s MODEL.webnn [dimension=N ...]\n", argv[0]);
    return 2;
  }
  try {
    // The graph and its weights; then sizes for its dynamic dimensions (1 unless given).
    webnn::Model model = webnn::read_model(argv[1]);
    std::map<std::string, uint32_t> dims;
    for (const webnn::ModelInput& input : model.inputs)
      for (const webnn::ModelDimension& dim : input.shape)
        if (!dim.name.empty()) dims[dim.name] = 1;
    for (int i = 2; i < argc; ++i) {
      const char* eq = std::strchr(argv[i], '=');
      if (!eq) throw webnn::Error(webnn::ErrorKind::kTypeError, std::string("expected name=N, got ") + argv[i]);
      dims[std::string(argv[i], size_t(eq - argv[i]))] = uint32_t(std::strtoul(eq + 1, nullptr, 10));
    }

    // webnn::load_model(context, path, options) does these steps in one call.
    webnn::Context context = webnn::Context::create();
    webnn::GraphBuilder builder(context);
    webnn::Graph graph = builder.build(webnn::build_model(builder, model, dims));

    webnn::NamedTensors inputs, outputs;
    for (const auto& [name, desc] : graph.input_descriptors()) {
      webnn::TensorDescriptor td;
      static_cast<webnn::OperandDescriptor&>(td) = desc;
      td.writable = true;
      inputs[name] = context.create_tensor(td);
      std::vector<uint8_t> bytes(desc.byte_length());
      fill(desc.data_type, bytes);
      context.write_tensor(inputs[name], bytes.data(), bytes.size());
      std::printf("input  %s: %s\n", name.c_str(), desc.to_string().c_str());
    }
    for (const auto& [name, desc] : graph.output_descriptors()) {
      webnn::TensorDescriptor td;
      static_cast<webnn::OperandDescriptor&>(td) = desc;
      td.readable = true;
      outputs[name] = context.create_tensor(td);
    }
    context.dispatch(graph, inputs, outputs);
    for (const auto& [name, tensor] : outputs) {
      std::vector<uint8_t> bytes = context.read_tensor(tensor);
      const webnn::OperandDescriptor& desc = tensor.descriptor();
      std::printf("output %s: %s  [%s ...]\n", name.c_str(), desc.to_string().c_str(),
                  preview(desc.data_type, bytes).c_str());
    }
    return 0;
  } catch (const webnn::Error& error) {
    std::fprintf(stderr, "run_model: %s\n", error.what());
    return 1;
  }
}
