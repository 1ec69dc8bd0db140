// The compiler passes, in the order compiler/pipeline.cc runs them (docs/adding-a-pass.md).
// Each reads and writes the CompileState and logs one line of what it did in Plan::pass_log.
#pragma once
#include "compiler/compile_state.h"

namespace webnn {

// Batch split (before the pipeline, on the built graph): when every value computed from the inputs
// carries the batch along axis 0 and every live op keeps batch items apart, the graph rewritten for
// a chunk of the batch (the pipeline then compiles that), and how many chunks run at once
// (Plan::Split); `summary` says what was decided, or why the graph runs whole.
struct BatchChunks {
  GraphIR chunk_ir;
  size_t batch = 0, chunk = 0;  // chunk 0: not split
  int workers = 1;
  std::string summary;
  bool splits() const { return chunk > 0 && chunk < batch; }
};
BatchChunks split_batch(const GraphIR& ir, const std::map<std::string, int>& outputs, int threads);

// Marks the nodes and operands the graph outputs depend on (live_node, live_operand).
void remove_dead_code(CompileState& state);
// Runs dequantizeLinear -> conv2d [-> relu | clamp] -> quantizeLinear on integers where the result
// is the float path's up to its final rounding (docs/quantization.md): one conv2d with
// Conv2dParams::quantization. Before constant folding; removes what it leaves unread.
void run_quantized_ops(CompileState& state);
// Runs, at build time, each live node whose inputs are all constants, and turns its outputs into
// constants (a view of a constant becomes a constant sharing its bytes). Needs remove_dead_code
// after it. Leaves graph outputs and results much larger than their inputs alone.
void fold_constants(CompileState& state);
// Holds the float16 values between nodes in float32: the nodes computing them become float32 nodes
// that round their results to float16 values (Node::rounds_to_half); casts at the graph's float16
// inputs and outputs; float16 -> float32 copies dropped. After constant folding; runs dead-code
// removal before and after.
void widen_half_values(CompileState& state);
// Replaces element-wise chains that spell out an op (GELU with erf) by that op. Needs
// remove_dead_code after it.
void recognize_ops(CompileState& state);
// Composes a transpose of a transpose into one, and turns a transpose that moves no data into a
// reshape view. Needs remove_dead_code after it.
void fold_transposes(CompileState& state);
// Whether transposing a tensor of `in_shape` by `perm` keeps the order of its dimensions larger than
// 1 (the transpose is then a reshape: a view).
bool transpose_moves_no_data(const std::vector<int64_t>& perm, const std::vector<uint32_t>& in_shape);
// Folds a per-channel affine map with constant parameters (batchNormalization, mul / add by a
// per-channel constant) into the constant weights of the op producing its input (conv2d). Needs
// remove_dead_code after it.
void fold_scales(CompileState& state);
// Runs an NCHW graph's convolutions, and the ops between them that can follow, channels-last, with a
// transpose where each region is entered and left (a view where it moves no data).
void convert_to_nhwc(CompileState& state);
// Absorbs element-wise ops (an add, then a clamp) into the epilogue of the op producing their
// input, as far as that op's lowering accepts (OpDef::epilogue_support).
void fuse_epilogues(CompileState& state);
// Runs a transpose into channels-last inside the step of its only reader when that op's kernel can
// read the untransposed input (OpDef::absorbs_input_transpose; NodeFusion::untransposed_input).
void absorb_transposes(CompileState& state);
// Fuses matmul(softmax(matmul(Q, Kt) [/ or * a scalar constant] [+ mask]), V) into one attention
// node (graph/ops/attention.cc), reading transposes of Q, Kt, V in place. Needs remove_dead_code
// after it.
void fuse_attention(CompileState& state);
// Lets each node whose kernel can lay out its work more than one way choose, from the active
// kernels (OpDef::assign_layout: an NCHW conv2d's GEMM orientation).
void assign_layouts(CompileState& state);
// Runs each connected group of float32 element-wise ops of one shape (OpDef::chain_step) whose inner
// values nothing else reads as one elementwise node (graph/ops/elementwise_chain.cc); the other
// nodes of the group stop being live. After epilogue fusion: ops in a kernel's epilogue stay there.
void fuse_elementwise_chains(CompileState& state);
// Lowers every live node (or fused group) to a kernel, in topological order: the plan's steps.
void lower_to_kernels(CompileState& state);
// Drops the steps of ops that only move contiguous pieces (concat, split; OpDef::pieces_layout):
// their pieces are placed inside the whole (Plan::placements).
void elide_copies(CompileState& state);
// Lets an element-wise step write its output over a same-shape input that nothing reads later
// (OpDef::element_wise; Plan::placements).
void run_in_place(CompileState& state);
// Binds inputs, constants and outputs, and places intermediate values in one arena by lifetime.
void plan_memory(CompileState& state);

}  // namespace webnn
