// Batch split: a graph whose every value computed from the inputs carries the batch along axis 0,
// and whose every op keeps batch items apart, is compiled for a chunk of the batch. The executor
// runs that plan once per chunk, offsetting every input and output by the chunk's bytes: a chunk's
// activations stay in cache from op to op, and with several threads, whole chunks run at once, one
// per thread (no fork-join per op). Chunks stay large enough that each weight is read for enough
// items (weight bytes against activation bytes).
#include <algorithm>
#include <cstdlib>

#include "compiler/passes.h"

namespace webnn {

namespace {

// An op whose weights exceed this many times one item's values (inputs and outputs) rereads them
// from memory per chunk; those rereads may be this share of one chunk's values.
constexpr size_t kWeightsPerItemValues = 4;
constexpr double kRereadShare = 0.15;
// Below this many bytes of values per item, the work per chunk is too small to gain from either.
constexpr size_t kMinItemBytes = 64 << 10;

bool contains(const std::vector<int64_t>& values, int64_t v) {
  return std::find(values.begin(), values.end(), v) != values.end();
}

constexpr int kNoBatch = -1;

// One live node of the graph, some of whose inputs carry the batch (`batch_axis` per operand, or
// kNoBatch). Inside the graph the batch may move to another axis (attention's transposes); each
// item's values need not be contiguous there, only in the graph's inputs and outputs.
class ItemsApart {
 public:
  ItemsApart(Node& node, const std::vector<OperandInfo>& operands, const std::vector<int>& batch_axis, size_t batch,
             size_t chunk)
      : node_(node), operands_(operands), axis_(batch_axis), batch_(batch), chunk_(chunk) {}

  // The batch axis of the outputs when the op computes each batch item from that item alone
  // (kNoBatch: it mixes items); rewrites the arguments that spell the batch size (reshape, expand,
  // slice) to the chunk's.
  int check_and_rewrite() {
    const OpDef& def = *node_.def;
    const std::string& op = def.name;
    const int out_rank = int(operands_[size_t(node_.outputs[0])].desc.shape.size());
    const int a = axis_of("input");
    if (def.element_wise || op == "where" || op == "cast" || op == "identity" || op == "prelu" ||
        op == "quantizeLinear" || op == "dequantizeLinear") {
      int out = kNoBatch;  // every carried operand's batch on the same output axis (right-aligned)
      for (int id : node_.inputs) {
        if (axis_[size_t(id)] == kNoBatch) continue;
        const int at = axis_[size_t(id)] + out_rank - int(operands_[size_t(id)].desc.shape.size());
        if (out != kNoBatch && at != out) return kNoBatch;
        out = at;
      }
      return out;
    }
    if (op == "conv2d" || op == "convTranspose2d")
      return a == 0 && !carried("filter") && !carried("bias") ? 0 : kNoBatch;
    if (op == "averagePool2d" || op == "maxPool2d" || op == "l2Pool2d") return a == 0 ? 0 : kNoBatch;
    if (op == "instanceNormalization") return a == 0 && !carried("scale") && !carried("bias") ? 0 : kNoBatch;
    if (op == "resample2d") return contains(ints_or("axes", {2, 3}), a) ? kNoBatch : a;
    if (op == "batchNormalization")
      return integer("axis") != a && !carried("mean") && !carried("variance") && !carried("scale") && !carried("bias")
                 ? a : kNoBatch;
    if (op == "layerNormalization") {
      const bool over_batch = has("axes") ? contains(ints("axes"), a) : a >= 1;  // default: axes 1..rank-1
      return !over_batch && !carried("scale") && !carried("bias") ? a : kNoBatch;
    }
    if (op == "softmax" || op == "cumulativeSum") return integer("axis") != a ? a : kNoBatch;
    if (op == "argMin" || op == "argMax") {
      const int64_t axis = integer("axis");
      if (axis == a) return kNoBatch;
      return flag("keepDimensions") || axis > a ? a : a - 1;
    }
    if (op.rfind("reduce", 0) == 0) {
      if (!has("axes") || contains(ints("axes"), a)) return kNoBatch;
      int out = a;
      if (!flag("keepDimensions"))
        for (int64_t r : ints("axes")) out -= r < a ? 1 : 0;
      return out;
    }
    if (op == "reverse") return has("axes") && !contains(ints("axes"), a) ? a : kNoBatch;
    if (op == "concat") {
      const int64_t axis = integer("axis");
      for (int id : node_.inputs)
        if (axis_[size_t(id)] != axis_[size_t(node_.inputs[0])]) return kNoBatch;
      const int first = axis_[size_t(node_.inputs[0])];
      return axis != first ? first : kNoBatch;
    }
    if (op == "split") return integer("axis") != a ? a : kNoBatch;
    if (op == "gather") {  // per-item data by shared indices, or a table lookup by per-item indices
      const int64_t g = integer("axis");
      if (a != kNoBatch) {
        if (g == a || carried("indices")) return kNoBatch;
        return a < g ? a : a - 1 + int(rank("indices"));
      }
      return int(g) + axis_of("indices");
    }
    if (op == "gatherElements") {
      if (integer("axis") == a) return kNoBatch;
      return !carried("indices") || axis_of("indices") == a ? a : kNoBatch;
    }
    if (op == "transpose") {
      const int rank_in = int(rank("input"));
      if (!has("permutation")) return rank_in - 1 - a;
      const std::vector<int64_t>& perm = ints("permutation");
      for (int j = 0; j < int(perm.size()); ++j)
        if (perm[size_t(j)] == a) return j;
      return kNoBatch;
    }
    if (op == "triangular") return a < int(rank("input")) - 2 ? a : kNoBatch;
    if (op == "pad") return ints("beginningPadding")[size_t(a)] == 0 && ints("endingPadding")[size_t(a)] == 0 ? a : kNoBatch;
    if (op == "tile") return ints("repetitions")[size_t(a)] == 1 ? a : kNoBatch;
    if (op == "slice") {
      if (ints("starts")[size_t(a)] != 0 || size_t(ints("sizes")[size_t(a)]) != batch_) return kNoBatch;
      if (has("strides") && ints("strides")[size_t(a)] != 1) return kNoBatch;
      return set_at("sizes", a);
    }
    if (op == "reshape") {  // the dims before the batch keep their product: items stay apart
      const std::vector<int64_t>& shape = ints("newShape");
      const std::vector<uint32_t>& in = operands_[size_t(node_.inputs[0])].desc.shape;
      size_t outer = 1, outer_out = 1;
      for (int d = 0; d < a; ++d) outer *= in[size_t(d)];
      for (size_t j = 0; j < shape.size() && outer_out <= outer; outer_out *= size_t(shape[j]), ++j)
        if (outer_out == outer && size_t(shape[j]) == batch_) return set_at("newShape", int(j));
      return kNoBatch;
    }
    if (op == "expand") {
      const std::vector<int64_t>& shape = ints("newShape");
      const int at = a + int(shape.size()) - int(rank("input"));
      if (operands_[size_t(node_.inputs[0])].desc.shape[size_t(a)] != batch_ || size_t(shape[size_t(at)]) != batch_)
        return kNoBatch;
      return set_at("newShape", at);
    }
    if (op == "matmul") {
      const int ra = int(rank("a")), rb = int(rank("b")), aa = axis_of("a"), ab = axis_of("b");
      if (ra < 2 || rb < 2) return kNoBatch;
      const int ro = std::max(ra, rb);
      int out_a = kNoBatch, out_b = kNoBatch;
      if (aa != kNoBatch) {
        if (aa < ra - 2) out_a = aa + ro - ra;       // a batch dim of the product
        else if (aa == ra - 2 && ab == kNoBatch) out_a = ro - 2;  // rows of a
        else return kNoBatch;
      }
      if (ab != kNoBatch) {
        if (ab < rb - 2) out_b = ab + ro - rb;
        else if (ab == rb - 1 && aa == kNoBatch) out_b = ro - 1;  // columns of b
        else return kNoBatch;
      }
      if (aa != kNoBatch && ab != kNoBatch) return out_a == out_b ? out_a : kNoBatch;
      return aa != kNoBatch ? out_a : out_b;
    }
    if (op == "gemm")
      return axis_of("a") == (flag("aTranspose") ? 1 : 0) && !carried("b") && !carried("c") ? 0 : kNoBatch;
    return kNoBatch;  // recurrent ops (batch on axis 1 of their own), gatherND, scatters: not split
  }

 private:
  // The argument `name`, or an absent one when the op has no such parameter.
  const Attr& arg(const char* name) const {
    static const Attr kAbsent;
    const int index = node_.def->find_argument(name);
    return index < 0 ? kAbsent : node_.args[size_t(index)];
  }
  bool has(const char* name) const { return !std::holds_alternative<std::monostate>(arg(name)); }
  int axis_of(const char* name) const {
    const auto* ref = std::get_if<OperandRef>(&arg(name));
    return ref ? axis_[size_t(ref->id)] : kNoBatch;
  }
  bool carried(const char* name) const { return axis_of(name) != kNoBatch; }
  size_t rank(const char* name) const {
    const auto* ref = std::get_if<OperandRef>(&arg(name));
    return ref ? operands_[size_t(ref->id)].desc.shape.size() : 0;
  }
  int64_t integer(const char* name) const {
    const auto* v = std::get_if<int64_t>(&arg(name));
    return v ? *v : -1;
  }
  bool flag(const char* name) const {
    const auto* v = std::get_if<bool>(&arg(name));
    return v && *v;
  }
  // An integer list argument, validated against its operand's rank by the builder.
  const std::vector<int64_t>& ints(const char* name) const {
    static const std::vector<int64_t> kNone(kMaxRank, -1);
    const auto* v = std::get_if<std::vector<int64_t>>(&arg(name));
    return v && !v->empty() ? *v : kNone;
  }
  std::vector<int64_t> ints_or(const char* name, std::vector<int64_t> fallback) const {
    return has(name) ? ints(name) : fallback;
  }
  int set_at(const char* name, int index) {
    std::get<std::vector<int64_t>>(node_.args[size_t(node_.def->argument_index(name))])[size_t(index)] = int64_t(chunk_);
    return index;
  }

  Node& node_;
  const std::vector<OperandInfo>& operands_;
  const std::vector<int>& axis_;
  size_t batch_, chunk_;
};

// `graph`, a copy of `ir`, rewritten for `chunk` of its `batch` items (the inputs' and outputs'
// batch on axis 0); false, with the op that prevents it, when a live op mixes items. With
// `graph.nodes` empty only the operands are rewritten (each node is checked on a copy of its own).
bool rewrite_for_chunk(const GraphIR& ir, GraphIR& graph, const std::vector<bool>& live, size_t batch, size_t chunk,
                       std::string& why, std::vector<int>& batch_axis) {
  const bool operands_only = graph.nodes.empty();
  Node scratch;
  batch_axis.assign(graph.operands.size(), kNoBatch);
  for (size_t i = 0; i < graph.operands.size(); ++i) {
    OperandInfo& info = graph.operands[i];
    if (info.kind != OperandInfo::Kind::kInput) continue;
    batch_axis[i] = 0;
    info.desc.shape[0] = uint32_t(chunk);
  }
  for (size_t n = 0; n < ir.nodes.size(); ++n) {
    if (!live[n]) continue;
    bool any = false;
    for (int id : ir.nodes[n].inputs) any = any || batch_axis[size_t(id)] != kNoBatch;
    if (!any) continue;
    if (operands_only) scratch = ir.nodes[n];
    Node& node = operands_only ? scratch : graph.nodes[n];
    auto op = [&] { return str_cat(node.def->name, " '", node.label, "'"); };
    ItemsApart check(node, ir.operands, batch_axis, batch, chunk);  // judged at the batch shapes
    const int axis = check.check_and_rewrite();
    if (axis == kNoBatch) {
      why = op() + " mixes batch items";
      return false;
    }
    std::vector<OperandDescriptor> expected;
    for (int out : node.outputs) {
      OperandDescriptor desc = graph.operands[size_t(out)].desc;
      if (size_t(axis) >= desc.shape.size() || desc.shape[size_t(axis)] != batch) {
        why = op() + " drops the batch axis";
        return false;
      }
      desc.shape[size_t(axis)] = uint32_t(chunk);
      expected.push_back(desc);
    }
    bool ok = false;
    try {
      ok = revalidate(node, graph.operands) == expected;
    } catch (const std::exception&) {
    }
    if (!ok) {
      why = op() + " does not keep its shape per item";
      return false;
    }
    for (size_t k = 0; k < node.outputs.size(); ++k) {
      batch_axis[size_t(node.outputs[k])] = axis;
      graph.operands[size_t(node.outputs[k])].desc = expected[k];
    }
  }
  return true;
}

}  // namespace

BatchChunks split_batch(const GraphIR& ir, const std::map<std::string, int>& outputs, int threads) {
  BatchChunks split;
  for (const OperandInfo& info : ir.operands) {
    if (info.kind != OperandInfo::Kind::kInput) continue;
    if (info.desc.shape.empty() || (split.batch && info.desc.shape[0] != split.batch)) {
      split.summary = "none: the inputs share no batch axis";
      return split;
    }
    split.batch = info.desc.shape[0];
  }
  const size_t batch = split.batch;
  if (batch < 2) {
    split.summary = "none: no batch";
    return split;
  }
  // Live nodes: what the outputs depend on.
  std::vector<bool> live(ir.nodes.size(), false), needed(ir.operands.size(), false);
  for (const auto& [name, id] : outputs) needed[size_t(id)] = true;
  for (size_t n = ir.nodes.size(); n-- > 0;) {
    for (int out : ir.nodes[n].outputs) live[n] = live[n] || needed[size_t(out)];
    if (live[n])
      for (int in : ir.nodes[n].inputs) needed[size_t(in)] = true;
  }
  GraphIR one;  // the operands at one item (the nodes are only checked)
  one.operands = ir.operands;
  std::string why;
  std::vector<int> batch_axis;
  if (!rewrite_for_chunk(ir, one, live, batch, 1, why, batch_axis)) {
    split.summary = "none: " + why;
    return split;
  }
  for (const auto& [name, id] : outputs)
    if (batch_axis[size_t(id)] != 0) {
      split.summary = str_cat("none: output '", name, "' has no batch on axis 0");
      return split;
    }
  // Each chunk reads every weight again. An op whose weights outweigh one item's values by far (a
  // classifier, a squeeze-excite FC, a convolution at the last 7x7 stage) reads them from memory
  // per chunk instead of once; chunks must hold enough items that those reads stay small beside
  // the item values they keep in cache. A gather's table is looked up, not read whole.
  size_t item_bytes = 0, reread_bytes = 0;
  for (size_t i = 0; i < one.operands.size(); ++i)
    if (needed[i] && one.operands[i].kind != OperandInfo::Kind::kConstant &&
        ir.operands[i].desc.shape != one.operands[i].desc.shape)
      item_bytes += one.operands[i].desc.byte_length();
  for (size_t n = 0; n < ir.nodes.size(); ++n) {
    const Node& node = ir.nodes[n];  // (inputs and outputs as in `one`)
    if (!live[n] || node.def->name == "gather") continue;
    size_t weights = 0, values = 0;
    for (int id : node.inputs) {
      const OperandInfo& info = one.operands[size_t(id)];
      (info.kind == OperandInfo::Kind::kConstant ? weights : values) += info.desc.byte_length();
    }
    for (int id : node.outputs) values += one.operands[size_t(id)].desc.byte_length();
    if (weights > kWeightsPerItemValues * values) reread_bytes += weights;
  }
  if (item_bytes < kMinItemBytes) {
    split.summary = str_cat("none: one item's values are ", item_bytes, " bytes");
    return split;
  }
  const double min_chunk = double(reread_bytes) / (kRereadShare * double(std::max<size_t>(item_bytes, 1)));
  std::vector<size_t> chunks;  // the divisors of the batch from the smallest large enough
  for (size_t c = 1; c <= batch; ++c)
    if (batch % c == 0 && (double(c) >= min_chunk || c == batch)) chunks.push_back(c);
  // WEBNN_BATCH_CHUNK forces a chunk size (one that divides the batch), to compare and to test.
  if (const char* forced = std::getenv("WEBNN_BATCH_CHUNK")) {
    const size_t c = size_t(std::strtoul(forced, nullptr, 10));
    if (c > 0 && batch % c == 0) chunks.assign(1, c);
  }
  // With several threads, whole chunks run at once when they divide evenly among the threads.
  split.chunk = chunks.front();
  if (threads > 1)
    for (size_t c : chunks)
      if (batch / c >= size_t(threads) && batch / c % size_t(threads) == 0) {
        split.chunk = c;
        split.workers = threads;
        break;
      }
  const std::string sizes =
      str_cat(" (one item's values ", item_bytes >> 10, " KB, weights reread per chunk ", reread_bytes >> 10, " KB)");
  if (split.chunk == batch) {
    split.summary = "none: chunks would read the weights for too few items" + sizes;
    return split;
  }
  split.summary = str_cat("batch ", batch, ": ", batch / split.chunk, " chunks of ", split.chunk, " on ", split.workers,
                          split.workers > 1 ? " threads at once" : " thread, one at a time", sizes);
  split.chunk_ir = ir;
  if (!rewrite_for_chunk(ir, split.chunk_ir, live, batch, split.chunk, why, batch_axis)) {  // as for 1 item: cannot fail
    split.chunk = 0;
    split.summary = "none: " + why;
  }
  return split;
}

}  // namespace webnn
