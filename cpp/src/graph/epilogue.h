// What the compiler fuses into an op's kernel epilogue, applied while the output tile is in cache:
// an addend (a residual of the output's shape, or a row of N values added to every output row),
// then a clamp (relu is [0, +inf]), then an activation (sigmoid, SiLU, hardSwish, gelu, ...). The epilogue fusion pass builds one per fused op; lowering
// hands it to the kernel.
#pragma once
#include <cstdint>
#include <limits>

#include "kernels/unary/unary.h"

namespace webnn {

// What an op's kernel can apply in its epilogue (a bit set), as reported by OpDef::epilogue_support.
enum EpilogueSupport : uint32_t {
  kEpilogueNone = 0,
  kEpilogueClamp = 1u << 0,
  kEpilogueResidual = 1u << 1,
  kEpilogueColumnBias = 1u << 2,
  kEpilogueActivation = 1u << 3,
  // Rounds its float32 results to float16 values (Epilogue::activation.round_to_half) without an
  // activation: float16 values held in float32 (compiler/passes/half_widening.cc). Implied by
  // kEpilogueActivation.
  kEpilogueRoundToHalf = 1u << 4,
};

struct Epilogue {
  enum class Addend { kNone, kResidual, kColumnBias };
  Addend addend = Addend::kNone;  // the addend is the kernel's last input
  float clamp_min = -std::numeric_limits<float>::infinity();
  float clamp_max = std::numeric_limits<float>::infinity();
  FusedActivation activation{};

  bool has_residual() const { return addend == Addend::kResidual; }
  bool has_column_bias() const { return addend == Addend::kColumnBias; }
  bool clamps() const {
    return clamp_min > -std::numeric_limits<float>::infinity() || clamp_max < std::numeric_limits<float>::infinity();
  }
};

// How an element-wise op can be absorbed into the epilogue of the op that produces its input.
enum class EpilogueRole {
  kNone,
  kClamp,  // relu, clamp: OpDef::clamp_bounds gives the bounds
  kAdd,    // add: a residual or a column bias
  kActivation,  // a float unary op: OpDef::fused_activation gives it
  kMul,         // mul: x * sigmoid(x) after a sigmoid of x is SiLU
};

}  // namespace webnn
