// BatchRunner through the public API: every item's result lands in its place whatever the split,
// a partial last batch included; a bad item is named; a cancelled runner takes new jobs.
#include <webnn/batch.h>

#include <cstring>

#include "tester.h"

using namespace webnn;
using webnn_test::expect;

namespace {

constexpr uint32_t kWidth = 8;

// y[i] = relu(x[i] * 2 - 1) per element; s = sum of the item.
Graph build(const Context& context, uint32_t batch) {
  GraphBuilder b(context);
  Operand x = b.input("x", {DataType::kFloat32, {batch, kWidth}});
  Operand two = b.constant(DataType::kFloat32, Number::from_double(2));
  Operand one = b.constant(DataType::kFloat32, Number::from_double(1));
  Operand y = b.call1("relu", {b.call1("sub", {b.call1("mul", {x, two}), one})});
  Operand s = b.call1("reduceSum", {x}, {{"axes", std::vector<Number>{Number::from_int(1)}}});
  return b.build({{"y", y}, {"s", s}});
}

void check_split(uint32_t batch, int workers, int threads, size_t items) {
  BatchOptions options;
  options.batch_size = batch;
  options.workers = workers;
  options.threads_per_worker = threads;
  BatchRunner runner = BatchRunner::create(build, options, items);
  std::vector<float> x(items * kWidth), y(items * kWidth, -7.f), s(items, -7.f);
  for (size_t i = 0; i < x.size(); ++i) x[i] = float(i % 97) * 0.25f - 3.f;
  size_t last_done = 0;
  runner.run(items, {{"x", x.data()}}, {{"y", y.data()}, {"s", s.data()}},
             [&](size_t done, size_t total) { last_done = done + (total == items ? 0 : 1u << 30); });
  const std::string where = " (batch " + std::to_string(batch) + ", " + std::to_string(workers) + " workers, " +
                            std::to_string(items) + " items)";
  expect(last_done == items, "progress did not end at the total" + where);
  size_t wrong = 0;
  for (size_t i = 0; i < items; ++i) {
    float sum = 0;
    for (uint32_t k = 0; k < kWidth; ++k) {
      const float v = x[i * kWidth + k];
      sum += v;
      wrong += y[i * kWidth + k] != std::max(v * 2 - 1, 0.f);
    }
    wrong += std::fabs(s[i] - sum) > 1e-4f;
  }
  expect(wrong == 0, std::to_string(wrong) + " wrong values" + where);
}

}  // namespace

int main() {
  for (size_t items : {1, 3, 16, 17, 250})
    for (auto [batch, workers, threads] : {std::tuple{1u, 1, 1}, {4u, 2, 1}, {5u, 3, 1}, {16u, 1, 2}})
      check_split(batch, workers, threads, items);

  // The split it chooses.
  BatchSplit split = choose_batch_split({}, 0, 0, 2);
  expect(split.batch_size == 8 && split.workers == 2 && split.threads_per_worker == 1, "default split");
  split = choose_batch_split({}, 1, 0, 4);
  expect(split.batch_size == 1 && split.workers == 1 && split.threads_per_worker == 4, "one item: one worker");

  // A bad int4 item is named; the runner goes on.
  BatchOptions options;
  options.batch_size = 2;
  options.workers = 2;
  BatchRunner q = BatchRunner::create(
      [](const Context& context, uint32_t batch) {
        GraphBuilder b(context);
        Operand in = b.input("q", {DataType::kInt4, {batch, 2}});
        int8_t zeros[2] = {0, 0};
        float ones[2] = {1, 1};
        Operand zero = b.constant({DataType::kInt4, {1, 2}}, zeros, 2);
        Operand scale = b.constant({DataType::kFloat32, {1, 2}}, ones, sizeof ones);
        return b.build({{"y", b.call1("dequantizeLinear", {in, scale, zero})}});
      },
      options);
  std::vector<int8_t> data(14, 3);
  std::vector<float> out(14);
  data[11] = 8;  // item 5
  bool named = false;
  try {
    q.run(7, {{"q", data.data()}}, {{"y", out.data()}});
  } catch (const Error& e) {
    named = std::strstr(e.what(), "item 5 of input 'q'") != nullptr && e.kind() == ErrorKind::kTypeError;
    if (!named) std::fprintf(stderr, "message: %s\n", e.what());
  }
  expect(named, "the bad int4 item was not named");
  data[11] = 7;
  q.run(7, {{"q", data.data()}}, {{"y", out.data()}});
  expect(out[11] == 7 && out[0] == 3, "the runner did not go on after a bad item");

  // Cancel drops what has not started; wait reports it once, then the runner takes new jobs.
  std::vector<int8_t> many(2 * 4000, 1);
  std::vector<float> many_out(2 * 4000);
  const uint64_t job = q.submit(4000, {{"q", many.data()}}, {{"y", many_out.data()}});
  q.cancel();
  bool cancelled = false;
  try {
    q.wait(job);
    cancelled = q.items_done() >= 4000 + 7 + 7;  // it had all finished first: nothing to cancel
  } catch (const Error& e) {
    cancelled = e.kind() == ErrorKind::kOperationError && std::strstr(e.what(), "cancelled") != nullptr;
  }
  expect(cancelled, "cancel was not reported");
  q.run(7, {{"q", data.data()}}, {{"y", out.data()}});
  expect(out[11] == 7, "the runner did not go on after a cancel");
  return webnn_test::tester_exit("batch_runner_test");
}
