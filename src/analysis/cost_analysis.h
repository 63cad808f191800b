// Cost features of a module following the conventions of XLA's
// HloCostAnalysis: floating-point operations, transcendental operations and
// bytes accessed (operands read plus result written, per instruction).
//
// Implemented: elementwise ops (one flop or one transcendental per output
// element, with XLA's list of transcendental opcodes), dot and convolution
// (two flops per multiply-add), reduce / reduce-window / map / sort /
// scatter / select-and-scatter (the applied computation's cost per
// application), and call-like ops (fusion, call, while, conditional, async)
// that add their callees' costs once (XLA does not know trip counts either;
// a conditional counts its most expensive branch). Parameters, constants,
// tuples, get-tuple-element and bitcasts access no bytes, as in XLA.
// Left out: XLA's per-backend adjustments and utilization tracking.
#ifndef HLOGYM_ANALYSIS_COST_ANALYSIS_H_
#define HLOGYM_ANALYSIS_COST_ANALYSIS_H_

#include <cstdint>

#include "hlo/module.h"

namespace hlogym {

struct CostFeatures {
  double flops = 0;
  double transcendentals = 0;
  double bytes_accessed = 0;

  CostFeatures& operator+=(const CostFeatures& other) {
    flops += other.flops;
    transcendentals += other.transcendentals;
    bytes_accessed += other.bytes_accessed;
    return *this;
  }
};

// The cost of running the entry computation once.
CostFeatures ComputeModuleCost(const Module& module);

// The cost of one instruction, with callees' costs included as described above.
CostFeatures ComputeInstructionCost(const Instruction& instruction);

}  // namespace hlogym

#endif  // HLOGYM_ANALYSIS_COST_ANALYSIS_H_
