// Quantized ops: the spec's "dequantize, compute in float, quantize" run on integers where that gives
// the float path's result up to its final rounding (docs/quantization.md). The pattern
//   dequantizeLinear(x) -> conv2d(filter = dequantizeLinear(constant w), bias) [-> relu | clamp]
//   -> quantizeLinear
// with 8-bit x, w and output, single-value (per-tensor) scales and zero points for x and the output,
// per-tensor or per-output-channel ones for w, and a constant bias (float32, or dequantizeLinear of
// a constant) becomes one conv2d on integers (Conv2dParams::quantization, kernels/int8): the sums
// of (x - zx)(w - zw) are exact in int32 while K * 255 * 255 < 2^31, then the kernel computes
// v = sum * sx * sw + bias in float32, clamps, and quantizes as quantizeLinear does. Every other
// convolution between quantize ops stays in float; the log says why. Runs before constant folding
// (which would turn the filter into float32); removes what it leaves unread.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>

#include "compiler/passes.h"
#include "kernels/conv/conv.h"
#include "kernels/int8/int8_conv.h"

namespace webnn {

namespace {

bool is_8bit(DataType t) { return t == DataType::kUint8 || t == DataType::kInt8; }

size_t element_count(const OperandDescriptor& desc) {
  size_t count = 1;
  for (uint32_t d : desc.shape) count *= d;
  return count;
}

bool holds_constant(const OperandInfo& info) { return info.kind == OperandInfo::Kind::kConstant && info.constant_data; }

// A constant's elements as int64 (8- and 32-bit integer types), or empty.
std::vector<int64_t> integer_constant_values(const OperandInfo& info) {
  if (!holds_constant(info)) return {};
  const size_t count = element_count(info.desc);
  const uint8_t* data = info.constant_data->data();
  std::vector<int64_t> values(count);
  for (size_t i = 0; i < count; ++i) {
    switch (info.desc.data_type) {
      case DataType::kUint8: values[i] = data[i]; break;
      case DataType::kInt8: values[i] = int8_t(data[i]); break;
      case DataType::kInt32: values[i] = reinterpret_cast<const int32_t*>(data)[i]; break;
      case DataType::kUint32: values[i] = reinterpret_cast<const uint32_t*>(data)[i]; break;
      default: return {};
    }
  }
  return values;
}

class ConvMatcher {
 public:
  explicit ConvMatcher(const CompileState& state)
      : state_(state), ir_(state.graph), readers_(state.live_readers()), conv2d_(find_op("conv2d")),
        quantize_(find_op("quantizeLinear")), dequantize_(find_op("dequantizeLinear")), matmul_(find_op("matmul")),
        gemm_(find_op("gemm")) {}

  // The live node producing `id` (-1: none).
  int producer(int id) const {
    const int n = ir_.operands[size_t(id)].producer;
    return n >= 0 && state_.live_node[size_t(n)] ? n : -1;
  }
  bool only_read_once(int id) const { return readers_[size_t(id)] == 1 && !state_.is_graph_output(id); }

  // The constant float32 single value of operand `id`, or false.
  bool single_float(int id, float& value) const {
    const std::vector<double> v = float_constant_values(ir_.operands[size_t(id)]);
    if (v.size() != 1 || ir_.operands[size_t(id)].desc.data_type != DataType::kFloat32) return false;
    value = float(v[0]);
    return true;
  }
  bool single_integer(int id, int32_t& value) const {
    const std::vector<int64_t> v = integer_constant_values(ir_.operands[size_t(id)]);
    if (v.size() != 1) return false;
    value = int32_t(v[0]);
    return true;
  }

  // For quantizeLinear node q: the conv2d node to run on integers and its rewritten form, or a
  // reason it stays in float (empty when q follows no convolution).
  std::string match(size_t q, Node& fused, std::vector<size_t>& absorbed) const {
    const Node& quant = ir_.nodes[q];
    if (quant.def != quantize_) return "";
    const int y = quant.inputs[0];
    int n = producer(y);
    if (n < 0) return "";
    float min = -std::numeric_limits<float>::infinity(), max = std::numeric_limits<float>::infinity();
    const Node* clamp = nullptr;
    if (ir_.nodes[size_t(n)].def->epilogue_role == EpilogueRole::kClamp && only_read_once(y)) {
      clamp = &ir_.nodes[size_t(n)];
      std::tie(min, max) = clamp->def->clamp_bounds(OpView(*clamp, ir_.operands));
      absorbed.push_back(size_t(n));
      n = producer(clamp->inputs[0]);
      if (n < 0) return "";
    }
    const Node& conv = ir_.nodes[size_t(n)];
    if (conv.def != conv2d_ && conv.def != matmul_ && conv.def != gemm_) return "";
    const int conv_out = conv.outputs[0];
    if (!only_read_once(conv_out) || (!clamp && conv_out != y)) return "its float result has other readers";
    if (ir_.operands[size_t(conv_out)].desc.data_type != DataType::kFloat32) return "not float32";
    Conv2dParams params;
    size_t weight_rank = 4, o_axis = 0;
    if (conv.def == conv2d_) {
      params = OpView(conv, ir_.operands).attributes<Conv2dParams>();
      if (params.quantization || !params.filter_scale.empty()) return "already rewritten";
      o_axis = params.filter_layout == "oihw" || params.filter_layout == "ohwi" ? 0 : 3;
    } else {
      // [rows, K] x [K, N] (a's leading dims flattened into rows) is a 1x1 NHWC convolution of a
      // rows x 1 image with K channels by an hwio filter: the same bytes in and out. gemm's b
      // transposed ([N, K]) is an ohwi filter; its alpha scales the filter, beta * c is the bias.
      const OpView view(conv, ir_.operands);
      const bool gemm = conv.def == gemm_;
      const bool b_transposed = gemm && view.flag("bTranspose");
      if (gemm && view.flag("aTranspose")) return "gemm's a is transposed";
      if (gemm && !(view.real("alpha") > 0 && std::isfinite(view.real("alpha")))) return "gemm's alpha is not positive";
      const std::vector<uint32_t>& a = ir_.operands[size_t(conv.inputs[0])].desc.shape;
      const std::vector<uint32_t>& b = ir_.operands[size_t(conv.inputs[1])].desc.shape;
      if (b.size() != 2) return "its second operand is not a matrix";
      size_t rows = 1;
      for (size_t d = 0; d + 1 < a.size(); ++d) rows *= a[d];
      const uint32_t k = b_transposed ? b[1] : b[0], n = b_transposed ? b[0] : b[1];
      params = Conv2dParams{1, k, rows, 1, n, rows, 1, 1, 1, 1, 1, 1, 1, 0, 0, 1, true,
                            b_transposed ? "ohwi" : "hwio", false};
      params.has_bias = gemm && view.has("c");
      if (params.has_bias) {  // a bias row: [N] or [1, N]
        const std::vector<uint32_t>& c = ir_.operands[size_t(conv.inputs[2])].desc.shape;
        if (c.empty() || c.back() != n || (c.size() == 2 && c[0] != 1)) return "gemm's c is not a row";
      }
      weight_rank = 2;
      o_axis = b_transposed ? 0 : 1;
    }

    Conv2dQuantization quantization;
    // The output's quantization.
    quantization.output_type = ir_.operands[size_t(quant.outputs[0])].desc.data_type;
    if (!is_8bit(quantization.output_type)) return "it quantizes to more than 8 bits";
    if (!single_float(quant.inputs[1], quantization.output_scale) ||
        !single_integer(quant.inputs[2], quantization.output_zero))
      return "the output's scale or zero point is not one constant";
    // The input's.
    const int input_dq = producer(conv.inputs[0]);
    if (input_dq < 0 || ir_.nodes[size_t(input_dq)].def != dequantize_) return "its input is not dequantized";
    const Node& in_dq = ir_.nodes[size_t(input_dq)];
    quantization.input_type = ir_.operands[size_t(in_dq.inputs[0])].desc.data_type;
    if (!is_8bit(quantization.input_type)) return "its input is not 8-bit";
    if (!single_float(in_dq.inputs[1], quantization.input_scale) ||
        !single_integer(in_dq.inputs[2], quantization.input_zero))
      return "the input's scale or zero point is not one constant";
    // The filter's: per tensor or per output channel.
    const int filter_dq = producer(conv.inputs[1]);
    if (filter_dq < 0 || ir_.nodes[size_t(filter_dq)].def != dequantize_) return "its filter is not dequantized";
    const Node& f_dq = ir_.nodes[size_t(filter_dq)];
    const OperandInfo& filter = ir_.operands[size_t(f_dq.inputs[0])];
    quantization.filter_type = filter.desc.data_type;
    if (!holds_constant(filter) || !is_8bit(filter.desc.data_type)) return "its filter is not an 8-bit constant";
    const size_t O = params.out_channels;
    if (!per_channel(f_dq.inputs[1], weight_rank, o_axis, O) || !per_channel(f_dq.inputs[2], weight_rank, o_axis, O))
      return "the filter's scales are not per tensor or per output channel";
    const std::vector<double> scales = float_constant_values(ir_.operands[size_t(f_dq.inputs[1])]);
    const std::vector<int64_t> zeros = integer_constant_values(ir_.operands[size_t(f_dq.inputs[2])]);
    if (scales.empty() || zeros.empty() || ir_.operands[size_t(f_dq.inputs[1])].desc.data_type != DataType::kFloat32)
      return "the filter's scales are not float32 constants";
    const double alpha = conv.def == gemm_ ? OpView(conv, ir_.operands).real("alpha") : 1.0;
    for (size_t o = 0; o < O; ++o) {
      quantization.filter_scale.push_back(float(scales[scales.size() == 1 ? 0 : o] * alpha));
      quantization.filter_zero.push_back(int32_t(zeros[zeros.size() == 1 ? 0 : o]));
    }
    // The kernel works in units of the output scale (multiplies by sx * sw / sy).
    const auto usable = [](float scale) { return std::isfinite(scale) && scale > 0; };
    if (!usable(quantization.input_scale) || !usable(quantization.output_scale) ||
        !std::all_of(quantization.filter_scale.begin(), quantization.filter_scale.end(),
                     [](float scale) { return std::isfinite(scale) && scale >= 0; }))
      return "a scale is not positive and finite";
    // ... by factors that must be finite float32 values (then no NaN can arise on the way).
    const auto finite_in_output_units = [&](double value) {
      return std::isfinite(float(value / double(quantization.output_scale)));
    };
    for (float filter_scale : quantization.filter_scale)
      if (!finite_in_output_units(double(quantization.input_scale) * double(filter_scale)))
        return "input scale x filter scale / output scale overflows float32";
    if (params.kernel_h * params.kernel_w * (params.in_channels / params.groups) > kInt8MaxExactK)
      return "K is too large for exact int32 sums";
    quantization.min = min;
    quantization.max = max;

    fused = conv;
    fused.args[0] = OperandRef{in_dq.inputs[0]};  // input, a
    fused.args[1] = OperandRef{f_dq.inputs[0]};   // filter, b
    if (params.has_bias) {
      const bool gemm = conv.def == gemm_;
      const size_t bias_arg = size_t(conv.def->argument_index(gemm ? "c" : "bias"));
      std::vector<double> bias;
      if (!bias_values(conv.inputs[2], O, bias)) return gemm ? "gemm's c is not a constant row" : "its bias is not constant";
      if (gemm)
        for (double& value : bias) value *= OpView(conv, ir_.operands).real("beta");
      if (!std::all_of(bias.begin(), bias.end(), finite_in_output_units))
        return "bias / output scale is not a finite float32";
      fused.args[bias_arg] = OperandRef{-1 - int(bias_values_.size())};  // resolved by the caller
      bias_values_.push_back(std::move(bias));
    }
    params.quantization = std::make_shared<const Conv2dQuantization>(std::move(quantization));
    fused.attributes = std::make_shared<KeptAs<Conv2dParams>>(params);
    fused.outputs = quant.outputs;
    fused.absorbed_ops = {"dequantizeLinear"};
    if (clamp) fused.absorbed_ops.push_back(clamp->def->name);
    fused.absorbed_ops.push_back("quantizeLinear");
    absorbed.push_back(q);
    return "ok";
  }

  mutable std::vector<std::vector<double>> bias_values_;

 private:
  // Whether constant `id` holds one value, or `count` values along `axis` of a rank-`rank` shape
  // (every other dim 1).
  bool per_channel(int id, size_t rank, size_t axis, size_t count) const {
    const OperandDescriptor& desc = ir_.operands[size_t(id)].desc;
    const size_t elements = element_count(desc);
    if (elements == 1) return true;
    if (elements != count || desc.shape.size() != rank) return false;
    return desc.shape[axis] == count;
  }

  // The bias as float values: a float32 constant, or a dequantizeLinear of a constant with constant
  // parameters (one, or one per channel), computed as its kernel does: (b - zero) * scale, the
  // difference exact and the product in double, rounded to float32.
  bool bias_values(int id, size_t count, std::vector<double>& out) const {
    const OperandInfo& info = ir_.operands[size_t(id)];
    if (holds_constant(info)) {
      if (info.desc.data_type != DataType::kFloat32) return false;
      out = float_constant_values(info);
      return out.size() == count;
    }
    const int n = producer(id);
    if (n < 0 || ir_.nodes[size_t(n)].def != dequantize_) return false;
    const Node& dq = ir_.nodes[size_t(n)];
    const std::vector<int64_t> b = integer_constant_values(ir_.operands[size_t(dq.inputs[0])]);
    const std::vector<double> scale = float_constant_values(ir_.operands[size_t(dq.inputs[1])]);
    const std::vector<int64_t> zero = integer_constant_values(ir_.operands[size_t(dq.inputs[2])]);
    if (ir_.operands[size_t(dq.outputs[0])].desc.data_type != DataType::kFloat32) return false;
    if (b.size() != count || (scale.size() != 1 && scale.size() != count) || (zero.size() != 1 && zero.size() != count))
      return false;
    out.resize(count);
    for (size_t o = 0; o < count; ++o)
      out[o] = double(float(double(b[o] - zero[zero.size() == 1 ? 0 : o]) * scale[scale.size() == 1 ? 0 : o]));
    return true;
  }

  const CompileState& state_;
  const GraphIR& ir_;
  std::vector<int> readers_;
  const OpDef *conv2d_, *quantize_, *dequantize_, *matmul_, *gemm_;
};

// A matmul or conv2d of dequantizeLinear(a) by dequantizeLinear(constant b) whose float32 result is
// not quantized again (a dynamically quantized model's MatMulInteger | ConvInteger -> Cast -> Mul, or a
// QDQ model's last product): a quantizedMatmul or quantizedConv2d node (graph/ops/) on integers. a:
// 8-bit, one float32 scale and one zero point, constant or computed at run time; b: an 8-bit constant
// with per-tensor or per-output-channel constant parameters. Returns the rewritten node count; a
// product of two dequantized values that stays in float adds its reason to `left`.
size_t quantize_float_products(CompileState& state, std::map<std::string, size_t>& kernels,
                               std::map<std::string, size_t>& left) {
  GraphIR& ir = state.graph;
  const OpDef* matmul = find_op("matmul");
  const OpDef* conv2d = find_op("conv2d");
  const OpDef* dequantize = find_op("dequantizeLinear");
  const auto dequantized = [&](int id) {
    const int n = ir.operands[size_t(id)].producer;
    return n >= 0 && state.live_node[size_t(n)] && ir.nodes[size_t(n)].def == dequantize ? n : -1;
  };
  const auto type = [&](int id) { return ir.operands[size_t(id)].desc.data_type; };
  size_t rewritten = 0;
  for (size_t n = 0; n < ir.nodes.size(); ++n) {
    const Node& node = ir.nodes[n];
    if (!state.live_node[n] || (node.def != matmul && node.def != conv2d) || type(node.outputs[0]) != DataType::kFloat32)
      continue;
    const int da = dequantized(node.inputs[0]), db = dequantized(node.inputs[1]);
    if (da < 0 || db < 0) continue;
    const Node& a = ir.nodes[size_t(da)];
    const Node& b = ir.nodes[size_t(db)];
    const std::vector<uint32_t>& b_shape = ir.operands[size_t(b.inputs[0])].desc.shape;
    std::string why;
    if (!is_8bit(type(a.inputs[0])) || !is_8bit(type(b.inputs[0]))) why = "a float product of values not 8-bit";
    else if (type(a.inputs[1]) != DataType::kFloat32 || element_count(ir.operands[size_t(a.inputs[1])].desc) != 1 ||
             element_count(ir.operands[size_t(a.inputs[2])].desc) != 1)
      why = "a float product whose input has more than one scale";
    else if (!holds_constant(ir.operands[size_t(b.inputs[0])]) || (node.def == matmul && b_shape.size() != 2))
      why = "a float product by a dequantized value that is not a constant matrix";
    else if (node.def == conv2d && int8_conv2d_is_depthwise(OpView(node, ir.operands).attributes<Conv2dParams>()))
      why = "a depthwise convolution with a float result (its float loops are as fast)";
    else if (type(b.inputs[1]) != DataType::kFloat32)
      why = "a float product by a matrix whose scales are not float32";
    if (!why.empty()) {
      ++left[why];
      continue;
    }
    Node fused{node.def == matmul ? &quantized_matmul_op() : &quantized_conv2d_op(),
               {OperandRef{a.inputs[0]}, OperandRef{a.inputs[1]}, OperandRef{a.inputs[2]}, OperandRef{b.inputs[0]},
                OperandRef{b.inputs[1]}, OperandRef{b.inputs[2]}},
               node.label, {}, node.outputs, nullptr};
    fused.args.insert(fused.args.end(), node.args.begin() + 2, node.args.end());  // conv2d's options
    fused.absorbed_ops = {"dequantizeLinear", node.def->name};
    rebuild_inputs(fused);
    try {
      const std::vector<OperandDescriptor> out = revalidate(fused, ir.operands);
      if (out.size() != 1 || out[0] != ir.operands[size_t(node.outputs[0])].desc) {
        ++left["a float product the integer kernel does not take"];
        continue;
      }
    } catch (const Error& error) {  // b's parameters not constants, or per something other than columns, K too large
      ++left[str_cat("a float product: ", error.what())];
      continue;
    }
    const Conv2dParams& params = OpView(fused, ir.operands).attributes<Conv2dParams>();
    ++kernels[str_cat(fused.def->name, " ",
                      int8_conv2d_ukernel(params, ir.operands[size_t(b.inputs[0])].constant_data->data()).name)];
    ir.nodes[n] = std::move(fused);
    ++rewritten;
  }
  return rewritten;
}

// The per-tensor 8-bit parameters of a quantize or dequantize node: a float32 scale and an 8-bit zero
// point, each one constant value; false otherwise.
bool per_tensor_8bit(const GraphIR& ir, const Node& node, float& scale, int32_t& zero, DataType& type) {
  const OperandInfo& scale_info = ir.operands[size_t(node.inputs[1])];
  const OperandInfo& zero_info = ir.operands[size_t(node.inputs[2])];
  type = zero_info.desc.data_type;
  if (!is_8bit(type) || scale_info.desc.data_type != DataType::kFloat32 || !holds_constant(scale_info) ||
      !holds_constant(zero_info) || element_count(scale_info.desc) != 1 || element_count(zero_info.desc) != 1)
    return false;
  std::memcpy(&scale, scale_info.constant_data->data(), sizeof(float));
  const uint8_t z = zero_info.constant_data->data()[0];
  zero = type == DataType::kInt8 ? int32_t(int8_t(z)) : int32_t(z);
  return true;
}

// dequantizeLinear(x_i) -> concat | transpose | reshape -> quantizeLinear, every x_i and the output
// with one and the same per-tensor scale and zero point: the op runs on the 8-bit values. It only
// moves values, and quantizing a dequantized value gives it back exactly while the scale is a
// normal float32 far from overflow (|x - z| * s is within 2^-22 of its exact value, relatively).
// A concat input with other parameters is requantized first: a dequantizeLinear -> quantizeLinear
// pair of its own (the same float32 operations as the float path, which elementwise_fusion makes a
// table lookup), then moved. (maxPool2d and nearest resample2d would be exact too, but their 8-bit
// loops are slower than the float32 ones.) Counts the ops rewritten and the inputs requantized.
struct Moved8bit {
  size_t ops = 0, requantized = 0;
};

Moved8bit move_8bit_values(CompileState& state) {
  GraphIR& ir = state.graph;
  const std::vector<int> readers = state.live_readers();
  const OpDef* quantize = find_op("quantizeLinear");
  const OpDef* dequantize = find_op("dequantizeLinear");
  const auto producer = [&](int id) {
    const int n = ir.operands[size_t(id)].producer;
    return n >= 0 && state.live_node[size_t(n)] ? n : -1;
  };
  const auto add_operand = [&](const OperandDescriptor& desc) {
    OperandInfo info;
    info.desc = desc;
    ir.operands.push_back(std::move(info));
    return int(ir.operands.size()) - 1;
  };
  Moved8bit moved;
  std::map<size_t, std::vector<Node>> inserted;  // node -> the requantize pairs to place before it
  for (size_t q = 0; q < ir.nodes.size(); ++q) {
    if (!state.live_node[q] || ir.nodes[q].def != quantize) continue;
    float scale;
    int32_t zero;
    DataType type;
    if (!per_tensor_8bit(ir, ir.nodes[q], scale, zero, type) || !(scale >= 1e-30f && scale <= 1e30f)) continue;
    const int y = ir.nodes[q].inputs[0];
    const int p = producer(y);
    if (p < 0 || readers[size_t(y)] != 1 || state.is_graph_output(y)) continue;
    const std::string name = ir.nodes[size_t(p)].def->name;
    if ((name != "concat" && name != "transpose" && name != "reshape") || ir.nodes[size_t(p)].outputs.size() != 1 ||
        ir.operands[size_t(y)].desc.data_type != DataType::kFloat32)
      continue;
    std::vector<int*> data;  // the op's data operands: concat's list, the others' first argument
    Node& op = ir.nodes[size_t(p)];
    if (auto* list = std::get_if<OperandList>(&op.args[0]))
      for (int& id : list->ids) data.push_back(&id);
    else if (auto* ref = std::get_if<OperandRef>(&op.args[0]))
      data.push_back(&ref->id);
    std::vector<int> sources, requantize;  // per input: its 8-bit value, or the dequantize to requantize
    for (int* id : data) {
      const int d = producer(*id);
      float s;
      int32_t z;
      DataType t;
      if (d < 0 || ir.nodes[size_t(d)].def != dequantize || !per_tensor_8bit(ir, ir.nodes[size_t(d)], s, z, t) ||
          ir.operands[size_t(ir.nodes[size_t(d)].inputs[0])].desc.data_type != t)
        break;
      const bool same = s == scale && z == zero && t == type;
      if (!same && name != "concat") break;
      sources.push_back(same ? ir.nodes[size_t(d)].inputs[0] : -1);
      requantize.push_back(same ? -1 : d);
    }
    if (data.empty() || sources.size() != data.size()) continue;
    for (size_t i = 0; i < data.size(); ++i) {
      if (requantize[i] >= 0) {
        Node dq = ir.nodes[size_t(requantize[i])];
        const OperandDescriptor shape_of = ir.operands[size_t(dq.outputs[0])].desc;
        dq.outputs = {add_operand(shape_of)};
        Node requantized = ir.nodes[q];
        requantized.args[0] = OperandRef{dq.outputs[0]};
        rebuild_inputs(requantized);
        requantized.outputs = {add_operand({type, shape_of.shape})};
        requantized.label = dq.label + " (requantized)";
        sources[i] = requantized.outputs[0];
        inserted[size_t(p)].push_back(std::move(dq));
        inserted[size_t(p)].push_back(std::move(requantized));
        ++moved.requantized;
      }
      *data[i] = sources[i];
    }
    Node& rewritten = ir.nodes[size_t(p)];
    rebuild_inputs(rewritten);
    rewritten.outputs = ir.nodes[q].outputs;
    rewritten.absorbed_ops = {"dequantizeLinear", "quantizeLinear"};
    ir.operands[size_t(rewritten.outputs[0])].producer = p;
    ir.operands[size_t(y)].producer = -1;
    state.live_node[q] = false;
    ++moved.ops;
  }
  if (!inserted.empty()) {  // the live nodes again, each requantize pair before its concat
    std::vector<Node> nodes;
    for (size_t n = 0; n < ir.nodes.size(); ++n) {
      if (!state.live_node[n]) continue;
      if (auto it = inserted.find(n); it != inserted.end())
        for (Node& node : it->second) nodes.push_back(std::move(node));
      nodes.push_back(std::move(ir.nodes[n]));
    }
    ir.nodes = std::move(nodes);
    for (OperandInfo& operand : ir.operands) operand.producer = -1;
    for (size_t n = 0; n < ir.nodes.size(); ++n)
      for (int out : ir.nodes[n].outputs) ir.operands[size_t(out)].producer = int(n);
    state.live_node.assign(ir.nodes.size(), true);
  }
  return moved;
}

}  // namespace

void run_quantized_ops(CompileState& state) {
  GraphIR& ir = state.graph;
  size_t integer = 0;
  std::map<std::string, size_t> kernels, left;
  std::vector<std::pair<size_t, Node>> rewrites;
  std::vector<size_t> removed;
  {
    const ConvMatcher matcher(state);
    for (size_t q = 0; q < ir.nodes.size(); ++q) {
      if (!state.live_node[q]) continue;
      Node fused;
      std::vector<size_t> absorbed;
      const std::string result = matcher.match(q, fused, absorbed);
      if (result.empty()) continue;
      if (result != "ok") {
        ++left[result];
        continue;
      }
      // Bias placeholders become new float32 constants.
      const std::string kind = fused.def->name;
      const size_t bias_arg =
          kind == "conv2d" ? size_t(fused.def->argument_index("bias")) : kind == "gemm" ? size_t(fused.def->argument_index("c")) : 0;
      if (auto* ref = std::get_if<OperandRef>(&fused.args[bias_arg]); bias_arg && ref && ref->id < 0) {
        const std::vector<double>& values = matcher.bias_values_[size_t(-1 - ref->id)];
        ref->id = add_float_constant(ir.operands, {DataType::kFloat32, {uint32_t(values.size())}}, values);
      }
      rebuild_inputs(fused);
      const Conv2dParams& params = OpView(fused, ir.operands).attributes<Conv2dParams>();
      const void* filter = ir.operands[size_t(fused.inputs[1])].constant_data->data();
      ++kernels[str_cat(fused.def->name, " ",
                        int8_conv2d_is_depthwise(params) ? "int8 depthwise loops" : int8_conv2d_ukernel(params, filter).name)];
      rewrites.emplace_back(q, std::move(fused));
      removed.insert(removed.end(), absorbed.begin(), absorbed.end());
      ++integer;
    }
  }
  // Each conv2d node is replaced in place by its integer form, which produces the quantize's output.
  for (auto& [q, fused] : rewrites) {
    // The conv2d is the producer of the chain's first float value: find it through the removed nodes.
    size_t n = q;
    while (ir.nodes[n].def != fused.def) n = size_t(ir.operands[size_t(ir.nodes[n].inputs[0])].producer);
    for (int out : fused.outputs) ir.operands[size_t(out)].producer = int(n);
    ir.nodes[n] = std::move(fused);
  }
  for (size_t n : removed) state.live_node[n] = false;
  integer += quantize_float_products(state, kernels, left);
  const Moved8bit moved = move_8bit_values(state);
  if (integer + moved.ops > 0) {
    remove_dead_code(state);
    state.plan->pass_log.pop_back();  // the dead-code line: this pass logs its own
  }
  std::string summary = str_cat(integer, " ops run on integers");
  if (!kernels.empty()) {
    summary += " (";
    bool first = true;
    for (const auto& [name, count] : kernels) summary += str_cat(first ? "" : ", ", name, " x", count), first = false;
    summary += ")";
  }
  size_t float_count = 0;
  for (const auto& [reason, count] : left) float_count += count;
  summary += str_cat(", ", float_count, " left in float");
  if (moved.ops) summary += str_cat(", ", moved.ops, " data movements on 8-bit values");
  if (moved.requantized) summary += str_cat(" (", moved.requantized, " concat inputs requantized)");
  if (!left.empty()) {
    summary += ":";
    bool first = true;
    for (const auto& [reason, count] : left) summary += str_cat(first ? " " : "; ", reason, " (", count, ")"), first = false;
  }
  state.log("quantized_ops", summary);
}

}  // namespace webnn
