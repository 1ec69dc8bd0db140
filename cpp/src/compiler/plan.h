// The execution plan: what the compiler makes of a graph IR, and what the executor runs.
#pragma once
#include <atomic>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "graph/op_def.h"

namespace webnn {

struct Step {
  Kernel kernel;  // empty for views
  std::vector<int> inputs, outputs;
  const OpDef* def;
  std::string label;
  std::vector<std::string> fused;  // ops of the graph that run inside this step's kernel (add, relu, ...)
  int node = -1;                   // the IR node it runs
};

struct Plan {
  std::vector<Step> steps;
  std::vector<void*> base_pointers;  // per operand: constants and arena slots, else null
  std::vector<BufferPtr> constants;  // keeps constant data alive
  BufferPtr arena;
  size_t arena_bytes = 0;
  struct Input {
    std::string name;
    int id;
  };
  struct Output {
    std::string name;
    int id;
    bool direct;  // computed straight into the caller's tensor
    size_t bytes;
  };
  // Operands that live inside another operand's bytes (compiler/passes/copy_elision.cc): the
  // executor points each at root's pointer + offset before the steps run. Roots are never placed.
  struct Placement {
    int operand, root;
    size_t offset;
  };
  std::vector<Placement> placements;
  std::vector<Input> inputs;    // sorted by name
  std::vector<Output> outputs;  // sorted by name

  // Intermediate values by arena offset (operand, byte offset): where a second arena places them.
  std::vector<std::pair<int, size_t>> arena_slots;

  // Batch split (compiler/passes/batch_split.cc): the steps compute one chunk of the graph's batch;
  // the executor runs them `chunks` times, every input and output offset by its chunk bytes, on
  // `workers` threads at once (each chunk's kernels then run on their thread alone).
  struct Split {
    size_t chunks = 1;
    int workers = 1;
    std::vector<size_t> input_bytes, output_bytes;  // per chunk, aligned with inputs / outputs
  };
  Split split;

  // execute_plan's working memory, kept between runs: like the arena, it is safe to share because
  // a plan runs only on its context's timeline, one run at a time. One per concurrent chunk; the
  // first uses `arena`.
  struct RunMemory {
    std::vector<const uint8_t*> chunk_inputs;  // where this run's chunk starts in each input
    std::vector<uint8_t*> chunk_outputs;       // and in each output
    std::vector<void*> pointers;
    std::vector<const void*> step_inputs;
    std::vector<void*> step_outputs;
    BufferPtr arena;
    std::atomic<bool> in_use{false};
  };
  std::vector<std::unique_ptr<RunMemory>> run_memory;

  // What each compiler pass did, in order: (pass, summary).
  struct PassRecord {
    std::string pass, summary;
  };
  std::vector<PassRecord> pass_log;
  std::vector<OperandDescriptor> operand_descs;  // per operand, for describing the plan

  // Profiling: while `profiling` is set, the executor adds each step's time (ns) to step_nanos.
  std::atomic<bool> profiling{false};
  std::unique_ptr<std::atomic<uint64_t>[]> step_nanos;  // one per step
  std::atomic<uint64_t> profiled_runs{0};
};

// Compiles a graph for the CPU: the passes of compiler/pipeline.cc, in order.
// `threads`: the context's thread count (batch split runs that many chunks at once).
// Takes the IR by value: a caller that no longer needs it moves it in (no copy of a huge graph).
std::shared_ptr<Plan> compile_plan(GraphIR ir, const std::map<std::string, int>& outputs, int threads = 1);
// The pipeline's pass names, in the order they run.
std::vector<std::string> compiler_pass_names();

}  // namespace webnn
