#include "analysis/op_stats.h"

namespace hlogym {

OpStats ComputeOpStats(const Module& module) {
  OpStats stats;
  stats.computation_count = module.computation_count();
  for (const auto& computation : module.computations()) {
    for (const auto& instruction : computation->instructions()) {
      ++stats.opcode_histogram[static_cast<int>(instruction->opcode())];
      ++stats.op_count;
    }
  }
  return stats;
}

}  // namespace hlogym
