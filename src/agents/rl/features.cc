#include "agents/rl/features.h"

#include <algorithm>
#include <cmath>

#include "hlo/opcode.h"

namespace hlogym::rl {

std::vector<std::string> FeatureNames() { return {"absolute", "relative"}; }

std::vector<std::string> PolicyObservationSpaces() { return {"op_histogram", "action_history"}; }

std::vector<std::string> TrainerObservationSpaces() {
  return {"op_histogram", "cost", "action_history"};
}

int FeatureLayout::policy_size() const { return kOpcodeCount + 2 + num_actions; }

void EncodePolicyFeatures(const Observation& observation, int64_t initial_op_count, int step,
                          const FeatureLayout& layout, float* out) {
  int64_t op_count = 0;
  for (int i = 0; i < kOpcodeCount; ++i) {
    int64_t n =
        i < static_cast<int>(observation.op_histogram.size()) ? observation.op_histogram[i] : 0;
    op_count += n;
    out[i] = static_cast<float>(std::log1p(static_cast<double>(n)));
  }
  if (layout.relative_histogram) {
    const float total = static_cast<float>(std::log1p(static_cast<double>(op_count)));
    for (int i = 0; i < kOpcodeCount; ++i) out[i] -= total;
  }
  out[kOpcodeCount] = static_cast<float>(
      std::log(std::max<double>(1, op_count) / std::max<double>(1, initial_op_count)));
  out[kOpcodeCount + 1] =
      static_cast<float>(step) / static_cast<float>(std::max(1, layout.traj_limit));
  float* history = out + kOpcodeCount + 2;
  for (int a = 0; a < layout.num_actions; ++a) {
    int64_t n =
        a < static_cast<int>(observation.action_history.size()) ? observation.action_history[a] : 0;
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

GraphFeatures EncodeGraph(const GraphObservation& graph) {
  // Columns of GraphObservation::node_features (GraphNodeFeatureNames()).
  enum Column {
    kOpcode,
    kElementType,
    kRank,
    kDim0,
    kElementCount = kDim0 + 4,
    kOperands,
    kUsers,
    kIsRoot
  };
  static_assert(GraphObservation::kNodeFeatures == 12,
                "the graph observation's node columns changed");
  constexpr int64_t kControlEdge =
      1;  // GraphObservation's edge kinds: 0 operand, 1 control, 2 call
  auto log1p = [](int64_t n) {
    return static_cast<float>(std::log1p(static_cast<double>(std::max<int64_t>(0, n))));
  };
  GraphFeatures g;
  g.num_nodes = graph.num_nodes;
  g.opcodes.reserve(g.num_nodes);
  g.element_types.reserve(g.num_nodes);
  g.node_values.reserve(g.num_nodes * GraphFeatures::kNodeValues);
  for (int64_t n = 0; n < graph.num_nodes; ++n) {
    const int64_t* row = &graph.node_features[n * GraphObservation::kNodeFeatures];
    g.opcodes.push_back(
        static_cast<int16_t>(std::clamp<int64_t>(row[kOpcode], 0, kOpcodeCount - 1)));
    g.element_types.push_back(static_cast<int16_t>(
        std::clamp<int64_t>(row[kElementType], 0, GraphFeatures::kElementTypes - 1)));
    g.node_values.push_back(static_cast<float>(row[kRank]) / 4.0f);
    for (int d = 0; d < 4; ++d) g.node_values.push_back(log1p(row[kDim0 + d]));
    g.node_values.push_back(log1p(row[kElementCount]));
    g.node_values.push_back(log1p(row[kOperands]));
    g.node_values.push_back(log1p(row[kUsers]));
    g.node_values.push_back(static_cast<float>(row[kIsRoot]));
  }
  for (int64_t e = 0; e < graph.num_edges; ++e) {
    const int64_t kind = graph.edge_features[e * GraphObservation::kEdgeFeatures];
    if (kind == kControlEdge) continue;
    g.edge_sources.push_back(static_cast<int32_t>(graph.edge_links[2 * e]));
    g.edge_targets.push_back(static_cast<int32_t>(graph.edge_links[2 * e + 1]));
  }
  return g;
}

}  // namespace hlogym::rl
