#include "agents/rl/features.h"

#include <algorithm>
#include <cmath>

#include "hlo/opcode.h"

namespace hlogym::rl {

std::vector<std::string> RequiredObservationSpaces() {
  return {"op_histogram", "cost", "action_history"};
}

int FeatureLayout::policy_size() const { return kOpcodeCount + 2 + num_actions; }

void EncodePolicyFeatures(const Observation& observation, int64_t initial_op_count, int step,
                          const FeatureLayout& layout, float* out) {
  int64_t op_count = 0;
  for (int i = 0; i < kOpcodeCount; ++i) {
    int64_t n = i < static_cast<int>(observation.op_histogram.size()) ? observation.op_histogram[i] : 0;
    op_count += n;
    out[i] = static_cast<float>(std::log1p(static_cast<double>(n)));
  }
  out[kOpcodeCount] = static_cast<float>(
      std::log(std::max<double>(1, op_count) / std::max<double>(1, initial_op_count)));
  out[kOpcodeCount + 1] = static_cast<float>(step) / static_cast<float>(std::max(1, layout.traj_limit));
  float* history = out + kOpcodeCount + 2;
  for (int a = 0; a < layout.num_actions; ++a) {
    int64_t n = a < static_cast<int>(observation.action_history.size()) ? observation.action_history[a] : 0;
    history[a] = static_cast<float>(n) / 4.0f;
  }
}

void EncodeCostFeatures(const Observation& observation, const std::vector<double>& initial,
                        float* out) {
  for (int i = 0; i < FeatureLayout::kCostSize; ++i) {
    double now = i < static_cast<int>(observation.cost.size()) ? observation.cost[i] : 0;
    double start = i < static_cast<int>(initial.size()) ? initial[i] : 0;
    out[i] = static_cast<float>(std::log1p(std::max(0.0, now)) - std::log1p(std::max(0.0, start)));
  }
}

}  // namespace hlogym::rl
