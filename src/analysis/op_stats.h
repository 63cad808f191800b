// Counting what a module holds: op count, computations, per-opcode histogram.
#ifndef HLOGYM_ANALYSIS_OP_STATS_H_
#define HLOGYM_ANALYSIS_OP_STATS_H_

#include <array>
#include <cstdint>

#include "hlo/module.h"
#include "hlo/opcode.h"

namespace hlogym {

struct OpStats {
  int64_t op_count = 0;  // Module::instruction_count()
  int64_t computation_count = 0;
  // Instructions per opcode, indexed by static_cast<int>(Opcode).
  std::array<int64_t, kOpcodeCount> opcode_histogram{};
};

OpStats ComputeOpStats(const Module& module);

}  // namespace hlogym

#endif  // HLOGYM_ANALYSIS_OP_STATS_H_
