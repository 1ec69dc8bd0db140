// How an operation is described: its signature, its capability limits (data that also backs
// opSupportLimits()), its validation/shape inference and its lowering to a kernel.
#pragma once
#include <functional>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "core/common.h"
#include "graph/channel_affine.h"
#include "graph/epilogue.h"
#include "kernels/elementwise/elementwise.h"
#include "kernels/kernel.h"

namespace webnn {

class ThreadPool;

// ---- data-type sets
using DataTypeSet = uint32_t;
constexpr DataTypeSet type_bit(DataType t) { return 1u << int(t); }
constexpr DataTypeSet kAnyType = 0xffu;
constexpr DataTypeSet kFloatTypes = type_bit(DataType::kFloat32) | type_bit(DataType::kFloat16);
constexpr DataTypeSet kIndexTypes =
    type_bit(DataType::kInt32) | type_bit(DataType::kUint32) | type_bit(DataType::kInt64);
constexpr DataTypeSet kSignedTypes = kFloatTypes | type_bit(DataType::kInt64) | type_bit(DataType::kInt32) |
                                     type_bit(DataType::kInt8);
constexpr DataTypeSet kUint8Only = type_bit(DataType::kUint8);
constexpr uint32_t kAnyRank = kMaxRank;

// ---- signatures
enum class ParamKind {
  kOperand,          // MLOperand
  kOptionalOperand,  // MLOperand option (absent allowed)
  kOperandList,      // sequence<MLOperand>
  kUint,             // [EnforceRange] unsigned long
  kInt,              // [EnforceRange] long
  kUintWrap,         // unsigned long without EnforceRange (wraps modulo 2^32)
  kUintList,         // sequence<[EnforceRange] unsigned long>
  kDouble,           // double (finite)
  kFloat,            // float (finite, within float32 range)
  kFloatList,        // sequence<float>
  kNumber,           // MLNumber (bigint or unrestricted double)
  kBool,             // boolean
  kDataType,         // MLOperandDataType
  kEnum,             // a string enum
  kEnumList,         // sequence of a string enum
  kUintOrUintList,   // ([EnforceRange] unsigned long or sequence<[EnforceRange] unsigned long>)
  kUintWrapList,     // sequence<unsigned long> without EnforceRange (each wraps modulo 2^32)
};
const char* param_kind_name(ParamKind kind);

struct OperandRef {
  int id;
};
struct OperandList {
  std::vector<int> ids;
};
// A normalized argument, after the WebIDL conversions of its ParamKind.
using Attr = std::variant<std::monostate, bool, int64_t, double, Number, std::string, std::vector<int64_t>,
                          std::vector<double>, OperandRef, OperandList, std::vector<std::string>>;

struct ParamSpec {
  std::string name;
  ParamKind kind;
  Attr default_value = {};  // monostate: optional with no default (or required, for arguments)
  std::vector<std::string> enum_values = {};
  bool takes_dimensions = false;  // a kUintList whose entries may name dynamic dimensions (newShape)
};

// One row of capability data: the allowed data types and ranks of one operand (inputs use
// their parameter name, outputs "output", "output0", "outputs", ...).
struct OperandLimit {
  std::string name;
  DataTypeSet types;
  uint32_t rank_min;
  uint32_t rank_max;
  std::string same_type_as = {};  // the dtype must equal this operand's
};

// ---- the IR
struct TensorImplRef;
struct OperandInfo {
  enum class Kind { kInput, kConstant, kIntermediate } kind = Kind::kIntermediate;
  OperandDescriptor desc;
  std::string name;          // graph inputs only
  BufferPtr constant_data;   // constants only
  std::shared_ptr<detail::TensorImpl> constant_tensor;  // constant(tensor) operands
  int producer = -1;         // node index
  // Operands with dynamic dimensions (graph/dynamic_shapes.h): `desc` holds representative sizes; this
  // is the descriptor the API reports.
  std::shared_ptr<const OperandDescriptor> reported;
};

// The typed attributes an op's validation derives (the kernel's parameter struct, an axis, a mask),
// kept on its IR node so that lowering reads them and never validates again.
struct KeptAttributes {
  virtual ~KeptAttributes() = default;
};
template <class T>
struct KeptAs final : KeptAttributes {
  explicit KeptAs(T v) : value(std::move(v)) {}
  T value;
};

// The axis an op validated against its input's rank (gather, scatter, ...).
struct ValidatedAxis {
  size_t axis;
};

// How an op's operands sit in each other's bytes when the op only moves contiguous pieces:
// concat lays each input at offsets[i] of its output; split cuts its input so that output i starts
// at offsets[i]. The copy elision pass then places them there and drops the op's step.
struct PiecesLayout {
  enum class Kind { kNone, kInputsInOutput, kOutputsInInput };
  Kind kind = Kind::kNone;
  std::vector<size_t> offsets;  // bytes
};

// Pieces of `sizes` along `axis` of `whole` (concat's output, split's input): contiguous, and so a
// layout, only when every dimension before the axis is 1.
PiecesLayout pieces_along_axis(PiecesLayout::Kind kind, const OperandDescriptor& whole, size_t axis,
                               const std::vector<uint32_t>& sizes);

// An entry of a shape argument that is a dynamic dimension's size (Number::Kind::kDimension): the node's
// argument holds the size at the IR's representative sizes, and each specialization its own.
struct SymbolicSize {
  size_t arg;      // index into Node::args
  size_t element;  // index into that integer list
  std::string name;
};

struct OpDef;
struct Node {
  const OpDef* def = nullptr;
  std::vector<Attr> args;  // aligned with def->params then def->options
  std::string label;
  std::vector<int> inputs;   // operand ids, in parameter order, lists flattened, absent skipped
  std::vector<int> outputs;  // operand ids
  std::shared_ptr<const KeptAttributes> attributes;  // what validation kept (OpView::keep), or null
  std::vector<SymbolicSize> symbolic_sizes;           // shape arguments' dynamic entries
  // Ops of the built graph that a compiler pass merged into this node (quantized_ops: the
  // dequantizeLinear and quantizeLinear around an integer conv2d), reported with its step.
  std::vector<std::string> absorbed_ops{};
  // The node computes float16 values held in float32 (compiler/passes/half_widening.cc): its lowered
  // step rounds its float32 results to float16 values.
  bool rounds_to_half = false;
};

// Sets a node's symbolic shape entries in `args` to the sizes `size_of(name)` gives.
template <class SizeOf>
void set_symbolic_sizes(std::vector<Attr>& args, const std::vector<SymbolicSize>& symbolic, const SizeOf& size_of) {
  for (const SymbolicSize& s : symbolic) std::get<std::vector<int64_t>>(args[s.arg])[s.element] = int64_t(size_of(s.name));
}

struct GraphIR {
  std::vector<OperandInfo> operands;
  std::vector<Node> nodes;
};

// Read access to one op call: used by validation (before the node exists) and by lowering.
class OpView {
 public:
  OpView(const OpDef& def, const std::vector<Attr>& args, const std::vector<OperandInfo>& operands,
         const std::string& label)
      : def_(def), args_(args), operands_(operands), label_(label) {}
  // A built node, with the attributes its validation kept (for compiler passes and lowering).
  OpView(const Node& node, const std::vector<OperandInfo>& operands)
      : def_(*node.def), args_(node.args), operands_(operands), label_(node.label), kept_(node.attributes) {}

  const OpDef& def() const { return def_; }
  const std::string& label() const { return label_; }
  bool has(const std::string& name) const;
  const Attr& attr(const std::string& name) const;

  const OperandDescriptor& operand(const std::string& name) const { return info(name).desc; }
  const OperandInfo& info(const std::string& name) const;
  std::vector<const OperandDescriptor*> operands(const std::string& name) const;
  std::vector<const OperandInfo*> infos(const std::string& name) const;  // an operand list's, whole
  // Index of an operand argument in the node's flattened input list, -1 when absent.
  int input_index(const std::string& name) const;

  int64_t integer(const std::string& name) const;
  double real(const std::string& name) const;
  Number number(const std::string& name) const;
  bool flag(const std::string& name) const;
  const std::string& text(const std::string& name) const;
  DataType data_type(const std::string& name) const;
  const std::vector<int64_t>& integers(const std::string& name) const;
  const std::vector<double>& reals(const std::string& name) const;
  const std::vector<std::string>& texts(const std::string& name) const;

  // The integer argument `name` as an axis of a rank-`rank` operand (TypeError unless < rank).
  size_t axis(const std::string& name, size_t rank) const;
  // The axes list `name`: every value < rank, none repeated; returns which dims it marks.
  std::vector<bool> axes_mask(const std::string& name, size_t rank) const;

  // "[label] op: message" as a TypeError.
  [[noreturn]] void fail(const std::string& message) const;
  std::string prefix() const;

  // Validation keeps what it derived; the builder stores it on the node, and lowering reads it.
  template <class T>
  void keep(T attributes) const {
    kept_ = std::make_shared<KeptAs<T>>(std::move(attributes));
  }
  template <class T>
  const T& attributes() const {
    auto* held = dynamic_cast<const KeptAs<T>*>(kept_.get());
    if (!held) throw std::logic_error(prefix() + "lowering found no validated attributes");
    return held->value;
  }
  const std::shared_ptr<const KeptAttributes>& kept() const { return kept_; }

  // What the compiler fused into this op's kernel epilogue (none during validation).
  const Epilogue& epilogue() const { return epilogue_; }
  void set_epilogue(const Epilogue& epilogue) { epilogue_ = epilogue; }
  // Whether the compiler absorbed the transpose into channels-last that produces this op's first
  // input (OpDef::absorbs_input_transpose): its kernel reads that transpose's NCHW input instead.
  bool input_untransposed() const { return input_untransposed_; }
  void set_input_untransposed(bool absorbed) { input_untransposed_ = absorbed; }
  // Constant operands the lowered kernel copied into its own (packed) form and never reads at run
  // time; lowering marks them, and the plan then keeps no raw copy of one that nothing else reads.
  void mark_copied_constant(const std::string& name) const { copied_constants_.push_back(input_index(name)); }
  const std::vector<int>& copied_constants() const { return copied_constants_; }

 private:
  int index_of(const std::string& name) const;
  const OpDef& def_;
  const std::vector<Attr>& args_;
  const std::vector<OperandInfo>& operands_;
  const std::string& label_;
  Epilogue epilogue_;
  bool input_untransposed_ = false;
  mutable std::shared_ptr<const KeptAttributes> kept_;
  mutable std::vector<int> copied_constants_;  // input indices
};

using InferFn = std::vector<OperandDescriptor> (*)(const OpView& op);
using LowerFn = Kernel (*)(const OpView& op, const std::vector<OperandDescriptor>& outputs);

struct OpDef {
  std::string name;
  std::vector<ParamSpec> params;   // positional arguments
  std::vector<ParamSpec> options;  // the options dictionary (label is implicit)
  std::vector<OperandLimit> limits;
  InferFn infer;
  LowerFn lower;        // null for views
  size_t output_count = 1;  // 0: decided by infer
  bool is_view = false;     // output aliases input 0 (reshape); no kernel runs
  // Epilogue fusion (compiler/passes/epilogue_fusion.cc). What this op's lowering can apply in its
  // kernel's epilogue for this call (EpilogueSupport bits; null: nothing), and how this op can itself
  // be absorbed into the epilogue of the op producing its input (a kClamp op gives its bounds).
  uint32_t (*epilogue_support)(const OpView& op) = nullptr;
  // Whether this call's kernel may write its output over its epilogue's residual addend: it reads
  // each addend element before writing that output element, and writes each output element once.
  bool (*writes_over_addend)(const OpView& op) = nullptr;
  EpilogueRole epilogue_role = EpilogueRole::kNone;
  std::pair<float, float> (*clamp_bounds)(const OpView& op) = nullptr;
  // Copy elision (compiler/passes/copy_elision.cc): for an op that only moves whole contiguous
  // pieces, where each piece sits in the other side's bytes for this call (empty: it copies).
  PiecesLayout (*pieces_layout)(const OpView& op) = nullptr;
  // Scale folding (compiler/passes/scale_folding.cc): this call as a per-channel affine map of one
  // input with constant parameters (false: it is not one), and an op that can absorb such a map of
  // its output into its constant weights (new constants appended to `operands`; false: it cannot).
  bool (*channel_affine)(const OpView& op, ChannelAffine& map) = nullptr;
  bool (*absorb_channel_affine)(Node& node, std::vector<OperandInfo>& operands, const ChannelAffine& map) = nullptr;
  // Each output element depends only on the input elements at its own index (or broadcast ones),
  // read before it is written: the output may take the storage of a same-shape input that is not
  // read afterwards (compiler/passes/in_place.cc).
  bool element_wise = false;
  // Layout (compiler/passes/layout.cc): decides how this node's kernel lays out its work on the
  // active kernels (conv2d: an NCHW convolution's GEMM orientation), in its kept attributes; returns
  // whether it chose other than the default.
  bool (*assign_layout)(Node& node, const std::vector<OperandInfo>& operands) = nullptr;
  // NHWC regions (compiler/passes/nhwc_regions.cc): rewrites this call, whose first parameter's
  // operands (every operand of an element-wise op) the pass has replaced by their NHWC versions, to produce NHWC results: its layout arguments and its
  // kept attributes (revalidate() re-derives them); false, and the node untouched, when it cannot.
  // Element-wise ops need none. A region grows from the ops that prefer NHWC (nhwc_seed).
  bool (*to_nhwc)(Node& node, const std::vector<OperandInfo>& operands) = nullptr;
  bool (*nhwc_seed)(const Node& node, const std::vector<OperandInfo>& operands) = nullptr;
  // Transpose absorption (compiler/passes/transpose_absorption.cc): whether this call's kernel can
  // read its first input as it was before a transpose into channels-last (permutation 0, 2, 3, 1).
  bool (*absorbs_input_transpose)(const OpView& op) = nullptr;
  // Epilogue fusion of a kActivation op: this call as the activation a kernel applies in place.
  FusedActivation (*fused_activation)(const OpView& op) = nullptr;
  // Element-wise fusion (compiler/passes/elementwise_fusion.cc): this float32 call as one step of
  // a fused chain (its op and options; the pass sets the operands); false: it cannot be one.
  bool (*chain_step)(const OpView& op, ChainStep& step) = nullptr;
  // Half widening (compiler/passes/half_widening.cc): whether this call's float results are exactly
  // representable in its inputs' float type (it moves, selects or orders values, or rounds them to
  // integers), so float16 results computed in float32 need no rounding (null: they may not be).
  bool (*exact_results)(const OpView& op) = nullptr;

  const OperandLimit* limit(const std::string& operand) const;
  // The position of a parameter or option in Node::args: -1 when the op has none by that name.
  int find_argument(const std::string& argument) const;
  // The same, for a name the caller knows the op has (throws when it does not).
  int argument_index(const std::string& argument) const;
};

// OpDef::exact_results for an op whose results always are.
bool always_exact(const OpView& op);
// `def` with exact_results = always_exact.
OpDef with_exact_results(OpDef def);

// Points a node's operand argument `name` at operand `id` (a rewrite by a compiler pass), and
// rebuilds its flattened inputs.
void set_operand_argument(Node& node, const std::string& name, int id);
// Rebuilds a node's flattened inputs from its operand arguments (after a pass rewrote them).
void rebuild_inputs(Node& node);
// Runs the node's validation again on its (rewritten) arguments: its kept attributes and output
// descriptors.
std::vector<OperandDescriptor> revalidate(Node& node, const std::vector<OperandInfo>& operands);
// Where an NCHW axis sits in NHWC (0, 3, 1, 2).
int64_t nhwc_axis(int64_t nchw_axis);
// OpDef::to_nhwc for an op whose only layout argument is its "axis" (concat, split).
bool to_nhwc_along_axis(Node& node, const std::vector<OperandInfo>& operands);

// The registry: every op, in the spec's alphabetical order.
const std::vector<const OpDef*>& all_ops();
const OpDef* find_op(const std::string& name);
// An op's operand limits as op_support_limits() and op_infos() report them.
std::vector<std::pair<std::string, TensorLimits>> operand_limits(const OpDef& def);

// What elementwise_chain_op's node keeps: its steps (operands: step results or the node's inputs)
// and its output.
struct ElementwiseChain {
  std::vector<ChainStep> steps;
  OperandDescriptor output;
};

// Ops the compiler creates from patterns of builder ops (no builder method, not in the registry).
const OpDef& attention_op();          // graph/ops/attention.cc
const OpDef& elementwise_chain_op();  // graph/ops/elementwise_chain.cc
const OpDef& quantized_matmul_op();   // graph/ops/quantized_matmul.cc
const OpDef& quantized_conv2d_op();   // graph/ops/quantized_conv2d.cc

}  // namespace webnn
