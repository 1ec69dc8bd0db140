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

// One live node of the graph, some of whose inputs carry the batch.
class ItemsApart {
 public:
  ItemsApart(Node& node, const std::vector<OperandInfo>& operands, const std::vector<bool>& carries, size_t batch,
             size_t chunk)
      : node_(node), operands_(operands), carries_(carries), batch_(batch), chunk_(chunk) {}

  // Whether the op computes each batch item from that item alone; rewrites the arguments that
  // spell the batch size (reshape, expand, slice) to the chunk's.
  bool check_and_rewrite() {
    const OpDef& def = *node_.def;
    const std::string& op = def.name;
    const size_t out_rank = operands_[size_t(node_.outputs[0])].desc.shape.size();
    if (def.element_wise || op == "where" || op == "cast" || op == "identity" || op == "prelu" ||
        op == "quantizeLinear" || op == "dequantizeLinear") {
      for (int id : node_.inputs)  // a carried operand broadcast from fewer dims would mix items
        if (carries_[size_t(id)] && operands_[size_t(id)].desc.shape.size() != out_rank) return false;
      return true;
    }
    if (op == "conv2d" || op == "convTranspose2d") return !carried("filter") && !carried("bias");
    if (op == "averagePool2d" || op == "maxPool2d" || op == "l2Pool2d") return true;
    if (op == "resample2d") return !contains(ints_or("axes", {2, 3}), 0);
    if (op == "instanceNormalization") return !carried("scale") && !carried("bias");
    if (op == "batchNormalization")
      return integer("axis") != 0 && !carried("mean") && !carried("variance") && !carried("scale") && !carried("bias");
    if (op == "layerNormalization")
      return (!has("axes") || !contains(ints("axes"), 0)) && !carried("scale") && !carried("bias");
    if (op == "softmax" || op == "cumulativeSum" || op == "argMin" || op == "argMax" || op == "concat" ||
        op == "split" || op == "gatherElements")
      return integer("axis") != 0;
    if (op == "gather")  // a table lookup by per-item indices, or per-item data by shared indices
      return carried("input") ? integer("axis") != 0 && !carried("indices") : integer("axis") == 0;
    if (op.rfind("reduce", 0) == 0 || op == "reverse") return has("axes") && !contains(ints("axes"), 0);
    if (op == "transpose") return rank("input") == 1 || (has("permutation") && ints("permutation")[0] == 0);
    if (op == "triangular") return rank("input") >= 3;
    if (op == "pad") return ints("beginningPadding")[0] == 0 && ints("endingPadding")[0] == 0;
    if (op == "tile") return ints("repetitions")[0] == 1;
    if (op == "slice") {
      if (ints("starts")[0] != 0 || size_t(ints("sizes")[0]) != batch_) return false;
      if (has("strides") && ints("strides")[0] != 1) return false;
      return set_first("sizes");
    }
    if (op == "reshape" || op == "expand") {
      const std::vector<int64_t>& shape = ints("newShape");
      const std::vector<uint32_t>& in = operands_[size_t(node_.inputs[0])].desc.shape;
      if (shape.empty() || in.empty() || in[0] != batch_ || size_t(shape[0]) != batch_) return false;
      if (op == "expand" && shape.size() != in.size()) return false;
      return set_first("newShape");
    }
    if (op == "matmul") {
      const bool a = carried("a"), b = carried("b");
      const size_t ra = rank("a"), rb = rank("b");
      if (a && b) return ra == rb && ra >= 3;  // batched products, batch dims aligned
      if (a) return ra == 2 || (ra >= 3 && rb <= ra);
      return rb >= 3 && ra <= rb;
    }
    if (op == "gemm") return carried("a") && !flag("aTranspose") && !carried("b") && !carried("c");
    return false;  // recurrent ops (batch on axis 1), gatherND, scatters: not split
  }

 private:
  const Attr& arg(const char* name) const { return node_.args[size_t(node_.def->argument_index(name))]; }
  bool has(const char* name) const { return !std::holds_alternative<std::monostate>(arg(name)); }
  bool carried(const char* name) const {
    const auto* ref = std::get_if<OperandRef>(&arg(name));
    return ref && carries_[size_t(ref->id)];
  }
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
  const std::vector<int64_t>& ints(const char* name) const {
    static const std::vector<int64_t> kNone{-1};
    const auto* v = std::get_if<std::vector<int64_t>>(&arg(name));
    return v && !v->empty() ? *v : kNone;
  }
  std::vector<int64_t> ints_or(const char* name, std::vector<int64_t> fallback) const {
    return has(name) ? ints(name) : fallback;
  }
  bool set_first(const char* name) {
    std::get<std::vector<int64_t>>(node_.args[size_t(node_.def->argument_index(name))])[0] = int64_t(chunk_);
    return true;
  }

  Node& node_;
  const std::vector<OperandInfo>& operands_;
  const std::vector<bool>& carries_;
  size_t batch_, chunk_;
};

// `graph`, a copy of `ir`, rewritten for `chunk` of its `batch` items; false when a live op mixes items.
bool rewrite_for_chunk(const GraphIR& ir, GraphIR& graph, const std::vector<bool>& live, size_t batch, size_t chunk,
                       std::string& why) {
  std::vector<bool> carries(graph.operands.size(), false);
  for (size_t i = 0; i < graph.operands.size(); ++i) {
    OperandInfo& info = graph.operands[i];
    if (info.kind != OperandInfo::Kind::kInput) continue;
    carries[i] = true;
    info.desc.shape[0] = uint32_t(chunk);
  }
  for (size_t n = 0; n < graph.nodes.size(); ++n) {
    Node& node = graph.nodes[n];
    if (!live[n]) continue;
    bool any = false;
    for (int id : node.inputs) any = any || carries[size_t(id)];
    if (!any) continue;
    std::vector<OperandDescriptor> expected;
    bool ok = false;
    for (int out : node.outputs) {
      OperandDescriptor desc = graph.operands[size_t(out)].desc;
      if (desc.shape.empty() || desc.shape[0] != batch) {
        why = str_cat(node.def->name, " '", node.label, "' drops the batch axis");
        return false;
      }
      desc.shape[0] = uint32_t(chunk);
      expected.push_back(desc);
    }
    ItemsApart check(node, ir.operands, carries, batch, chunk);  // judged at the batch shapes
    if (!check.check_and_rewrite()) {
      why = str_cat(node.def->name, " '", node.label, "' mixes batch items");
      return false;
    }
    try {
      if (revalidate(node, graph.operands) == expected) ok = true;
    } catch (const std::exception&) {
    }
    if (!ok) {
      why = str_cat(node.def->name, " '", node.label, "' does not keep its shape per item");
      return false;
    }
    for (int out : node.outputs) carries[size_t(out)] = true;
    for (size_t k = 0; k < node.outputs.size(); ++k) graph.operands[size_t(node.outputs[k])].desc = expected[k];
  }
  return true;
}

}  // namespace

BatchSplit split_batch(const GraphIR& ir, const std::map<std::string, int>& outputs, int threads) {
  BatchSplit split;
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
  GraphIR one = ir;
  std::string why;
  if (!rewrite_for_chunk(ir, one, live, batch, 1, why)) {
    split.summary = "none: " + why;
    return split;
  }
  for (const auto& [name, id] : outputs)
    if (ir.operands[size_t(id)].desc.shape == one.operands[size_t(id)].desc.shape) {
      split.summary = str_cat("none: output '", name, "' has no batch axis");
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
  for (size_t n = 0; n < one.nodes.size(); ++n) {
    const Node& node = one.nodes[n];
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
  if (!rewrite_for_chunk(ir, split.chunk_ir, live, batch, split.chunk, why)) {  // as for 1 item: cannot fail
    split.chunk = 0;
    split.summary = "none: " + why;
  }
  return split;
}

}  // namespace webnn
