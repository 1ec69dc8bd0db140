// A native application using the installed webnn package: builds conv2d -> relu -> add, runs it
// on the context timeline with tensors, and checks the result against a hand-computed reference.
// Exits 0 when the result matches, 1 on a mismatch, 2 on an error.
#include <webnn/webnn.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <vector>

namespace {

constexpr uint32_t kChannelsIn = 2, kChannelsOut = 3, kSize = 5, kKernel = 3;
constexpr uint32_t kOutSize = kSize;  // padding 1 keeps 5x5

// The reference: the same conv2d (NCHW input, OIHW filter, padding 1, bias) -> relu -> add.
std::vector<float> reference(const std::vector<float>& x, const std::vector<float>& w, const std::vector<float>& bias,
                             const std::vector<float>& addend) {
  std::vector<float> out(kChannelsOut * kOutSize * kOutSize);
  for (uint32_t o = 0; o < kChannelsOut; ++o)
    for (uint32_t y = 0; y < kOutSize; ++y)
      for (uint32_t x0 = 0; x0 < kOutSize; ++x0) {
        double sum = bias[o];
        for (uint32_t c = 0; c < kChannelsIn; ++c)
          for (uint32_t ky = 0; ky < kKernel; ++ky)
            for (uint32_t kx = 0; kx < kKernel; ++kx) {
              int iy = int(y + ky) - 1, ix = int(x0 + kx) - 1;
              if (iy < 0 || ix < 0 || iy >= int(kSize) || ix >= int(kSize)) continue;
              sum += double(x[(c * kSize + iy) * kSize + ix]) * w[((o * kChannelsIn + c) * kKernel + ky) * kKernel + kx];
            }
        size_t i = (o * kOutSize + y) * kOutSize + x0;
        out[i] = float(std::max(sum, 0.0) + addend[i]);
      }
  return out;
}

std::vector<float> pattern(size_t count, int seed) {
  std::vector<float> v(count);
  for (size_t i = 0; i < count; ++i) v[i] = float(int((i * 7 + seed * 13) % 11) - 5) / 4.0f;  // -1.25 .. 1.25
  return v;
}

int run() {
  using namespace webnn;
  const std::vector<float> x = pattern(kChannelsIn * kSize * kSize, 1);
  const std::vector<float> w = pattern(kChannelsOut * kChannelsIn * kKernel * kKernel, 2);
  const std::vector<float> bias = {0.5f, -0.25f, 0.0f};
  const std::vector<float> addend = pattern(kChannelsOut * kOutSize * kOutSize, 3);

  Context context = Context::create();
  GraphBuilder builder(context);
  const OperandDescriptor x_desc{DataType::kFloat32, {1, kChannelsIn, kSize, kSize}};
  const OperandDescriptor w_desc{DataType::kFloat32, {kChannelsOut, kChannelsIn, kKernel, kKernel}};
  const OperandDescriptor b_desc{DataType::kFloat32, {kChannelsOut}};
  const OperandDescriptor out_desc{DataType::kFloat32, {1, kChannelsOut, kOutSize, kOutSize}};

  Operand input = builder.input("x", x_desc);
  Operand filter = builder.constant(w_desc, w.data(), w.size() * sizeof(float));
  Operand bias_op = builder.constant(b_desc, bias.data(), bias.size() * sizeof(float));
  Operand addend_op = builder.constant(out_desc, addend.data(), addend.size() * sizeof(float));
  std::vector<Number> padding(4, Number::from_int(1));
  Operand conv = builder.call1("conv2d", {input, filter}, {{"padding", padding}, {"bias", bias_op}}, "conv");
  Operand relu = builder.call1("relu", {conv});
  Operand sum = builder.call1("add", {relu, addend_op});
  Graph graph = builder.build({{"y", sum}});

  TensorDescriptor in_tensor_desc;
  static_cast<OperandDescriptor&>(in_tensor_desc) = x_desc;
  in_tensor_desc.writable = true;
  TensorDescriptor out_tensor_desc;
  static_cast<OperandDescriptor&>(out_tensor_desc) = out_desc;
  out_tensor_desc.readable = true;
  Tensor x_tensor = context.create_tensor(in_tensor_desc);
  Tensor y_tensor = context.create_tensor(out_tensor_desc);

  context.write_tensor(x_tensor, x.data(), x.size() * sizeof(float));
  context.dispatch(graph, {{"x", x_tensor}}, {{"y", y_tensor}});
  std::vector<float> result(out_desc.element_count());
  context.read_tensor_sync(y_tensor, result.data(), result.size() * sizeof(float));

  const std::vector<float> expected = reference(x, w, bias, addend);
  double max_error = 0;
  for (size_t i = 0; i < result.size(); ++i) max_error = std::max(max_error, double(std::fabs(result[i] - expected[i])));
  std::printf("webnn %s: conv2d -> relu -> add, output %s, max |error| = %.3g\n", version().c_str(),
              out_desc.to_string().c_str(), max_error);
  if (max_error > 1e-5) {
    std::printf("MISMATCH\n");
    return 1;
  }
  std::printf("OK\n");
  return 0;
}

}  // namespace

int main() {
  try {
    return run();
  } catch (const webnn::Error& e) {
    std::fprintf(stderr, "webnn error: %s\n", e.what());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
  }
  return 2;
}
