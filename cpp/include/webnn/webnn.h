// webnn: a native CPU implementation of the W3C Web Neural Network API.
// Public C++ API. The same objects as the Python package, with no Python in the process.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

namespace webnn {

// ---------------------------------------------------------------- data types
// int4/uint4 (quantize/dequantize only) are stored unpacked, one value per byte, as int8/uint8.
enum class DataType : uint8_t { kFloat32, kFloat16, kInt32, kUint32, kInt64, kUint64, kInt8, kUint8, kInt4, kUint4 };
constexpr int kDataTypeCount = 10;

const char* data_type_name(DataType type);
std::optional<DataType> parse_data_type(const std::string& name);
size_t data_type_size(DataType type);

// A dynamic dimension of a graph input (the WebNN dynamic-shape explainer's MLDynamicDimension):
// its size is chosen at each dispatch, from 1 to max_size. Dimensions with the same name have the
// same size. An operand computed from dynamic inputs reports which of its dimensions are dynamic; one
// that follows no input dimension has an empty name.
struct DynamicDimension {
  std::string name;
  uint32_t max_size = 0;  // 0: a static dimension
  bool dynamic() const { return max_size != 0; }
  bool operator==(const DynamicDimension& other) const { return name == other.name && max_size == other.max_size; }
};
constexpr uint32_t kUnboundedDimension = 0x7fffffffu;  // max_size of a dimension with no bound but the tensor limits

struct OperandDescriptor {
  DataType data_type = DataType::kFloat32;
  std::vector<uint32_t> shape;  // [] is a scalar
  // Empty for a static descriptor; else one entry per dimension, max_size 0 for the static ones.
  // A dynamic dimension's entry in `shape` is its max_size in descriptors the API returns (inputs
  // given to GraphBuilder::input may hold anything there).
  std::vector<DynamicDimension> dynamic;

  bool is_dynamic() const { return !dynamic.empty(); }
  size_t element_count() const;
  size_t byte_length() const { return element_count() * data_type_size(data_type); }
  // Equal types and sizes (a dynamic dimension compares by its max_size).
  bool operator==(const OperandDescriptor& other) const {
    return data_type == other.data_type && shape == other.shape;
  }
  bool operator!=(const OperandDescriptor& other) const { return !(*this == other); }
  std::string to_string() const;
};

struct TensorDescriptor : OperandDescriptor {
  bool readable = false;
  bool writable = false;
};

// ---------------------------------------------------------------- errors
// The spec's error names. TypeError is the builtin Python TypeError; the others are
// DOMException names that the Python package maps onto webnn.MLError subclasses.
enum class ErrorKind { kTypeError, kDataError, kInvalidStateError, kNotSupportedError, kOperationError, kUnknownError };

class Error : public std::runtime_error {
 public:
  Error(ErrorKind kind, const std::string& message) : std::runtime_error(message), kind_(kind) {}
  ErrorKind kind() const { return kind_; }

 private:
  ErrorKind kind_;
};

// ---------------------------------------------------------------- futures
// The spec's promises. `wait()` blocks; `on_ready` runs the callback on the thread that settles
// the future (the context timeline) or at once when it is already settled.
namespace detail {
struct FutureStateBase {
  std::mutex mutex;
  std::condition_variable cv;
  bool settled = false;
  std::exception_ptr error;
  std::vector<std::function<void()>> callbacks;

  void settle_locked_and_notify(std::unique_lock<std::mutex>& lock);
  void wait();
  bool wait_for_ms(int64_t milliseconds);
};
}  // namespace detail

template <class T>
class Future {
 public:
  Future() : state_(std::make_shared<State>()) {}

  bool ready() const {
    std::lock_guard<std::mutex> lock(state_->mutex);
    return state_->settled;
  }
  void wait() const { state_->wait(); }
  bool wait_for_ms(int64_t ms) const { return state_->wait_for_ms(ms); }
  // Waits, then returns the value or throws the error.
  T get() const {
    state_->wait();
    if (state_->error) std::rethrow_exception(state_->error);
    if constexpr (!std::is_void_v<T>) return *state_->value;
  }
  void on_ready(std::function<void()> callback) const {
    std::unique_lock<std::mutex> lock(state_->mutex);
    if (state_->settled) {
      lock.unlock();
      callback();
      return;
    }
    state_->callbacks.push_back(std::move(callback));
  }

  // Producer side. The first settle wins; later ones are ignored and return false.
  template <class U = T>
  bool resolve(U&& value) const {
    std::unique_lock<std::mutex> lock(state_->mutex);
    if (state_->settled) return false;
    state_->value.emplace(std::forward<U>(value));
    state_->settle_locked_and_notify(lock);
    return true;
  }
  bool resolve() const {
    static_assert(std::is_void_v<T>);
    std::unique_lock<std::mutex> lock(state_->mutex);
    if (state_->settled) return false;
    state_->settle_locked_and_notify(lock);
    return true;
  }
  bool reject(std::exception_ptr error) const {
    std::unique_lock<std::mutex> lock(state_->mutex);
    if (state_->settled) return false;
    state_->error = std::move(error);
    state_->settle_locked_and_notify(lock);
    return true;
  }
  bool reject(ErrorKind kind, const std::string& message) const {
    return reject(std::make_exception_ptr(Error(kind, message)));
  }

 private:
  struct Empty {};
  using Stored = std::conditional_t<std::is_void_v<T>, Empty, T>;
  struct State : detail::FutureStateBase {
    std::optional<Stored> value;
  };
  std::shared_ptr<State> state_;
};

// ---------------------------------------------------------------- objects
namespace detail {
struct ContextImpl;
struct TensorImpl;
struct GraphImpl;
struct BuilderImpl;
}  // namespace detail

class Context;

class Operand {
 public:
  Operand() = default;
  const OperandDescriptor& descriptor() const;
  DataType data_type() const { return descriptor().data_type; }
  const std::vector<uint32_t>& shape() const { return descriptor().shape; }
  bool valid() const { return builder_ != nullptr; }

  // Internal identity: the builder that made it and its index in that builder's graph.
  detail::BuilderImpl* builder_impl() const { return builder_.get(); }
  int id() const { return id_; }
  Operand(std::shared_ptr<detail::BuilderImpl> builder, int id) : builder_(std::move(builder)), id_(id) {}

 private:
  std::shared_ptr<detail::BuilderImpl> builder_;
  int id_ = -1;
};

// A numeric argument (the spec's MLNumber): a double, or an exact 64-bit integer.
struct Number {
  // kDimension: a dynamic dimension's size, by name, in a shape argument (reshape's and expand's
  // newShape): the size that dimension has at each dispatch.
  enum class Kind { kFloat, kInt, kUint, kDimension } kind = Kind::kFloat;
  double f = 0;
  int64_t i = 0;
  uint64_t u = 0;
  std::string dimension;
  static Number from_double(double v) { Number n; n.kind = Kind::kFloat; n.f = v; return n; }
  static Number from_dimension(std::string name) { Number n; n.kind = Kind::kDimension; n.dimension = std::move(name); return n; }
  static Number from_int(int64_t v) { Number n; n.kind = Kind::kInt; n.i = v; return n; }
  static Number from_uint(uint64_t v) { Number n; n.kind = Kind::kUint; n.u = v; return n; }
  double as_double() const { return kind == Kind::kFloat ? f : kind == Kind::kInt ? double(i) : double(u); }
};

// A value passed to a builder method: positional arguments and options alike.
// Integers carry the exact value the caller gave; each op's schema converts them
// (WebIDL [EnforceRange] rules) and rejects what does not fit. Plain C++ values convert:
// integers and floating-point numbers to a Number, vectors of them to a list of Numbers, a string
// literal to a std::string (`{{"axes", std::vector<uint32_t>{1}}, {"roundingType", "ceil"}}`).
using ValueVariant = std::variant<std::monostate, bool, Number, std::string, std::vector<Number>, Operand,
                                  std::vector<Operand>, std::vector<std::string>>;
struct Value : ValueVariant {
  using ValueVariant::ValueVariant;
  using ValueVariant::operator=;
  Value() = default;
  Value(const ValueVariant& v) : ValueVariant(v) {}
  Value(const char* text) : ValueVariant(std::string(text)) {}
  template <class T, std::enable_if_t<std::is_integral_v<T> && !std::is_same_v<T, bool>, int> = 0>
  Value(T v) : ValueVariant(number_of(v)) {}
  template <class T, std::enable_if_t<std::is_floating_point_v<T>, int> = 0>
  Value(T v) : ValueVariant(Number::from_double(double(v))) {}
  template <class T, std::enable_if_t<std::is_arithmetic_v<T> && !std::is_same_v<T, bool>, int> = 0>
  Value(const std::vector<T>& values) : ValueVariant(numbers_of(values)) {}

 private:
  template <class T>
  static Number number_of(T v) {
    if constexpr (std::is_floating_point_v<T>) return Number::from_double(double(v));
    else if constexpr (std::is_signed_v<T>) return Number::from_int(int64_t(v));
    else return Number::from_uint(uint64_t(v));
  }
  template <class T>
  static std::vector<Number> numbers_of(const std::vector<T>& values) {
    std::vector<Number> out;
    out.reserve(values.size());
    for (const T& v : values) out.push_back(number_of(v));
    return out;
  }
};
using Options = std::map<std::string, Value>;  // keys use the spec's camelCase names

struct TensorLimits {
  std::vector<DataType> data_types;
  uint32_t rank_min = 0;
  uint32_t rank_max = 0;
};
struct OpLimits {
  std::string op;
  std::vector<std::pair<std::string, TensorLimits>> operands;  // in the spec's member order
};
struct SupportLimits {
  std::string preferred_input_layout;
  uint64_t max_tensor_byte_length = 0;
  TensorLimits input, constant, output;
  std::vector<OpLimits> ops;
};

class Tensor {
 public:
  Tensor() = default;
  explicit Tensor(std::shared_ptr<detail::TensorImpl> impl) : impl_(std::move(impl)) {}
  const TensorDescriptor& descriptor() const;
  bool readable() const { return descriptor().readable; }
  bool writable() const { return descriptor().writable; }
  bool constant() const;
  bool destroyed() const;
  void destroy();
  // Zero-copy access (DLPack export): waits for the work queued on the tensor's context before this
  // call, then returns the tensor's descriptor().byte_length() bytes, kept alive by the returned
  // pointer even after destroy() or the context's loss. Work queued later that writes the tensor
  // changes them. The tensor must be readable; TypeError when destroyed, InvalidStateError when the
  // context is lost.
  std::shared_ptr<void> export_storage() const;
  const std::shared_ptr<detail::TensorImpl>& impl() const { return impl_; }

 private:
  std::shared_ptr<detail::TensorImpl> impl_;
};

// One step of a compiled graph's plan: the op whose kernel runs (with the ops fused into it),
// its label, and its operands. Views (reshape) run no kernel.
struct PlanStep {
  std::string op;
  std::vector<std::string> fused;  // ops run inside this step's kernel ("add", "relu", ...)
  std::string label;
  std::vector<OperandDescriptor> inputs, outputs;
  bool is_view = false;
};
struct PlanDescription {
  std::vector<PlanStep> steps;
  std::vector<std::pair<std::string, std::string>> passes;  // (compiler pass, what it did), in order
  size_t arena_bytes = 0;     // intermediate values
  size_t constant_bytes = 0;  // raw constants kept (packed weights are held by their kernels)
};
// Time spent in one step over the runs profiled since profiling was (re)started.
struct StepProfile {
  size_t step;  // index into PlanDescription::steps
  double total_ms;
};
struct GraphProfile {
  uint64_t runs = 0;
  std::vector<StepProfile> steps;  // every step, in plan order
};

class Graph {
 public:
  Graph() = default;
  explicit Graph(std::shared_ptr<detail::GraphImpl> impl) : impl_(std::move(impl)) {}
  const std::map<std::string, OperandDescriptor>& input_descriptors() const;
  const std::map<std::string, OperandDescriptor>& output_descriptors() const;
  // Dynamic dimensions: whether the graph has any, and its output descriptors for concrete input
  // shapes (TypeError naming the op when the graph is not valid at those sizes).
  bool is_dynamic() const;
  std::map<std::string, OperandDescriptor> output_descriptors_for(
      const std::map<std::string, std::vector<uint32_t>>& input_shapes) const;
  // A dynamic graph keeps one compiled plan per concrete input shape, the most recently used first,
  // up to the cache capacity (default 8; WEBNN_PLAN_CACHE_SIZE). Static graphs have one plan.
  struct PlanCacheInfo {
    size_t plans = 0;         // plans held now
    size_t capacity = 1;
    uint64_t compilations = 0;  // plans compiled since build
    size_t arena_bytes = 0;   // the held plans' intermediate memory
  };
  PlanCacheInfo plan_cache_info() const;
  void set_plan_cache_capacity(size_t capacity);
  bool destroyed() const;
  void destroy();
  Context context() const;
  // What the compiler made of the graph (a dynamic graph: the plan of its last dispatch; InvalidStateError
  // before the first).
  PlanDescription describe_plan() const;
  // Profiling: while on, every dispatch times each step (a clock read per step). Turning it on
  // resets the counts.
  void set_profiling(bool on);
  GraphProfile profile() const;
  const std::shared_ptr<detail::GraphImpl>& impl() const { return impl_; }

 private:
  std::shared_ptr<detail::GraphImpl> impl_;
};

struct ContextOptions {
  std::string power_preference = "default";  // "default" | "high-performance" | "low-power"
  bool accelerated = true;                     // a request; this CPU engine reports false
  int num_threads = 0;                         // 0: all cores
};

using NamedTensors = std::map<std::string, Tensor>;

class Context {
 public:
  Context() = default;
  explicit Context(std::shared_ptr<detail::ContextImpl> impl) : impl_(std::move(impl)) {}
  static Context create(const ContextOptions& options = {});

  bool accelerated() const;
  const std::string& power_preference() const;
  int num_threads() const;
  SupportLimits op_support_limits() const;

  Tensor create_tensor(const TensorDescriptor& descriptor);
  Tensor create_constant_tensor(const OperandDescriptor& descriptor, const void* data, size_t byte_length);
  // Copies `data` before it returns.
  void write_tensor(const Tensor& tensor, const void* data, size_t byte_length);
  // Copies the tensor into `destination` on the timeline. The caller keeps `destination` alive
  // until the future settles; once it is rejected, nothing more is written to it.
  Future<void> read_tensor(const Tensor& tensor, void* destination, size_t byte_length);
  // Blocking forms: they run this context's queued work on the calling thread while they wait
  // (no thread hand-off), and throw the read's error.
  void read_tensor_sync(const Tensor& tensor, void* destination, size_t byte_length);
  std::vector<uint8_t> read_tensor(const Tensor& tensor);
  // Validates now, runs later, in order with every other call on this context.
  void dispatch(const Graph& graph, const NamedTensors& inputs, const NamedTensors& outputs);
  void destroy();
  bool lost_now() const;
  Future<std::string> lost() const;  // resolves with the loss message

  const std::shared_ptr<detail::ContextImpl>& impl() const { return impl_; }

 private:
  std::shared_ptr<detail::ContextImpl> impl_;
};

class GraphBuilder {
 public:
  explicit GraphBuilder(const Context& context);

  Operand input(const std::string& name, const OperandDescriptor& descriptor);
  Operand constant(const OperandDescriptor& descriptor, const void* data, size_t byte_length);
  Operand constant(DataType data_type, const Number& value);
  Operand constant(const Tensor& tensor);

  // Any operation by its spec name ("conv2d", "add", ...), with positional arguments and options.
  // Returns the op's outputs (one for most ops).
  std::vector<Operand> call(const std::string& op, const std::vector<Value>& arguments,
                            const Options& options = {}, const std::string& label = "");
  Operand call1(const std::string& op, const std::vector<Value>& arguments, const Options& options = {},
                const std::string& label = "");

  Context context() const;
  Future<Graph> build_async(const std::map<std::string, Operand>& outputs);
  Graph build(const std::map<std::string, Operand>& outputs) { return build_async(outputs).get(); }

  const std::shared_ptr<detail::BuilderImpl>& impl() const { return impl_; }

 private:
  std::shared_ptr<detail::BuilderImpl> impl_;
};

// Every op the builder knows, with its signature, for bindings and tools.
struct ParamInfo {
  std::string name;
  std::string kind;  // "operand", "operand?", "operands", "uint", "int", "uints", "double", ...
  bool has_default = false;
  Value default_value;
  std::vector<std::string> enum_values;
};
struct OpInfo {
  std::string name;
  std::vector<ParamInfo> arguments;
  std::vector<ParamInfo> options;
  size_t output_count;  // 0: decided per call (split, gru, lstm)
  // Data types and ranks of the operands and outputs, as Context::op_support_limits() gives them.
  std::vector<std::pair<std::string, TensorLimits>> operands;
};
std::vector<OpInfo> op_infos();

std::string version();
// CPU dispatch: the best ISA level this machine supports and the one kernels use ("ref", "avx2",
// "avx512"; WEBNN_CPU_ISA forces a lower level), the float32 GEMM microkernel in use, and the uint8 x
// int8 one (AMX or VNNI; the level's int16 one where the CPU has neither).
std::string detected_cpu_isa();
std::string active_cpu_isa();
std::string gemm_kernel_name();
std::string int8_kernel_name();
// The CPU features the kernel table was picked by ("avx2", "avx512", "avx512vnni", "avxvnni",
// "avx512vbmi", "amx"): the active level's and the extensions it allows (WEBNN_CPU_DISABLE removes some).
std::vector<std::string> cpu_feature_names();

}  // namespace webnn
