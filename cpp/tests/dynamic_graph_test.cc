// Dynamic input dimensions through the public C++ API: symbolic descriptors, one build run at many
// sizes (against a plain loop), a reshape whose newShape names a dimension, the plan cache, errors.
#include <webnn/webnn.h>

#include <cmath>
#include <cstring>

#include "tester.h"

using namespace webnn;
using webnn_test::expect;

namespace {

constexpr uint32_t kWidth = 6;

// y = relu(x * w) as [batch, width] -> [batch, 2, 3]; s = the sum over the batch.
Graph build(const Context& context, std::vector<float>& w) {
  GraphBuilder b(context);
  OperandDescriptor desc{DataType::kFloat32, {0, kWidth}, {{"batch", 32}, {}}};
  Operand x = b.input("x", desc);
  expect(x.descriptor().is_dynamic() && x.shape() == std::vector<uint32_t>{32, kWidth},
         "the input reports its bound: " + x.descriptor().to_string());
  w.resize(kWidth);
  for (uint32_t i = 0; i < kWidth; ++i) w[i] = float(i) - 2.5f;
  Operand wc = b.constant({DataType::kFloat32, {kWidth}}, w.data(), w.size() * sizeof(float));
  Operand y = b.call1("relu", {b.call1("mul", {x, wc})});
  std::vector<Number> new_shape{Number::from_dimension("batch"), Number::from_int(2), Number::from_int(3)};
  Operand r = b.call1("reshape", {y, new_shape});
  expect(r.descriptor().to_string() == "{dataType: float32, shape: [batch<=32, 2, 3]}", r.descriptor().to_string());
  Operand s = b.call1("reduceSum", {x}, {{"axes", std::vector<Number>{Number::from_int(0)}}});
  expect(!s.descriptor().is_dynamic(), "the sum over the batch is static");
  return b.build({{"r", r}, {"s", s}});
}

void run_at(Context& context, Graph& graph, const std::vector<float>& w, uint32_t batch) {
  std::vector<float> x(batch * kWidth);
  for (size_t i = 0; i < x.size(); ++i) x[i] = std::sin(float(i) * 0.7f + float(batch));
  auto outputs = graph.output_descriptors_for({{"x", {batch, kWidth}}});
  expect(outputs.at("r").shape == std::vector<uint32_t>{batch, 2, 3}, "r's shape at batch " + std::to_string(batch));
  Tensor in = context.create_tensor({{DataType::kFloat32, {batch, kWidth}}, false, true});
  Tensor r = context.create_tensor({{DataType::kFloat32, {batch, 2, 3}}, true, false});
  Tensor s = context.create_tensor({{DataType::kFloat32, {kWidth}}, true, false});
  context.write_tensor(in, x.data(), x.size() * sizeof(float));
  context.dispatch(graph, {{"x", in}}, {{"r", r}, {"s", s}});
  std::vector<float> got_r(batch * kWidth), got_s(kWidth);
  context.read_tensor_sync(r, got_r.data(), got_r.size() * sizeof(float));
  context.read_tensor_sync(s, got_s.data(), got_s.size() * sizeof(float));
  const std::string where = " at batch " + std::to_string(batch);
  for (uint32_t n = 0; n < batch; ++n)
    for (uint32_t i = 0; i < kWidth; ++i)
      webnn_test::near(got_r[n * kWidth + i], std::max(0.0, double(x[n * kWidth + i]) * w[i]), 1e-6, "r" + where);
  for (uint32_t i = 0; i < kWidth; ++i) {
    double sum = 0;
    for (uint32_t n = 0; n < batch; ++n) sum += x[n * kWidth + i];
    webnn_test::near(got_s[i], sum, 1e-5, "s" + where);
  }
}

template <class Fn>
void expect_error(ErrorKind kind, const std::string& fragment, const Fn& fn) {
  try {
    fn();
    expect(false, "no error; expected one with '" + fragment + "'");
  } catch (const Error& e) {
    expect(e.kind() == kind && std::string(e.what()).find(fragment) != std::string::npos,
           "error '" + std::string(e.what()) + "', expected '" + fragment + "'");
  }
}

}  // namespace

int main() {
  Context context = Context::create();
  std::vector<float> w;
  Graph graph = build(context, w);
  expect(graph.is_dynamic(), "the graph is dynamic");
  expect(graph.input_descriptors().at("x").dynamic.at(0) == DynamicDimension{"batch", 32}, "input descriptor");
  for (uint32_t batch : {1u, 7u, 32u, 7u, 2u}) run_at(context, graph, w, batch);
  Graph::PlanCacheInfo info = graph.plan_cache_info();
  expect(info.compilations == 4 && info.plans == 4, "one plan per size: " + std::to_string(info.compilations));
  graph.set_plan_cache_capacity(1);
  run_at(context, graph, w, 1);
  expect(graph.plan_cache_info().plans == 1 && graph.plan_cache_info().compilations == 5, "capacity 1");

  expect_error(ErrorKind::kTypeError, "outside [1, 32]", [&] { graph.output_descriptors_for({{"x", {33, kWidth}}}); });
  expect_error(ErrorKind::kTypeError, "dimension 1 is static", [&] { graph.output_descriptors_for({{"x", {3, 5}}}); });
  GraphBuilder b(context);
  Operand x = b.input("x", {DataType::kFloat32, {0, 4}, {{"n", 8}, {}}});
  expect_error(ErrorKind::kTypeError, "names the dynamic dimension 'm'", [&] {
    b.call1("reshape", {x, std::vector<Number>{Number::from_dimension("m"), Number::from_int(4)}});
  });
  expect_error(ErrorKind::kTypeError, "only allowed in graph inputs",
               [&] { context.create_tensor({{DataType::kFloat32, {0}, {{"n", 8}}}, true, false}); });
  graph.destroy();
  expect_error(ErrorKind::kInvalidStateError, "destroyed", [&] { run_at(context, graph, w, 1); });

  // Options from plain C++ values: integers, floats, vectors of them, string literals.
  GraphBuilder p(context);
  Operand image = p.input("image", {DataType::kFloat32, {1, 1, 5, 5}});
  Operand pooled = p.call1("maxPool2d", {image}, {{"windowDimensions", std::vector<uint32_t>{2, 2}},
                                                 {"strides", std::vector<int>{2, 2}}, {"outputShapeRounding", "ceil"}});
  Operand flat = p.call1("reshape", {pooled, std::vector<size_t>{9}});
  Operand scaled = p.call1("linear", {flat}, {{"alpha", 0.5}, {"beta", 1}});
  expect(scaled.shape() == std::vector<uint32_t>{9}, "plain option values: " + scaled.descriptor().to_string());
  expect_error(ErrorKind::kTypeError, "strides", [&] {
    p.call1("maxPool2d", {image}, {{"strides", std::vector<int>{-1, 2}}});
  });
  return webnn_test::tester_exit("dynamic_graph_test");
}
