// Observation and reward spaces of the gym, and the features behind them.
//
// Observation spaces (selectable and combinable, by name):
//   "op_histogram"   instructions per opcode (kOpcodeCount entries, the paper's state)
//   "cost"           [flops, transcendentals, bytes_accessed] (HloCostAnalysis conventions)
//   "autophase"      a fixed-size summary of the graph (AutophaseFeatureNames())
//   "action_history" how often each action was applied this episode (one entry per action)
//   "graph"          nodes (GraphNodeFeatureNames()) and edges (operand, control, call)
// Reward spaces (by name, optionally with the suffix "+shaped"):
//   "op_count"                      -(op count) / (initial op count)        (the paper's)
//   "op_count_decrease"             previous op count - new op count
//   "op_count_decrease_normalized"  the decrease / max(1, I - D), D = op count after the
//                                   baseline pipeline (xla-cpu-default): an episode's
//                                   rewards sum to 1.0 when it matches the default
//   "op_count_log_ratio"            log(previous op count / new op count): scale-free;
//                                   an episode's rewards sum to log(I / R), and from D
//                                   to log(D / R), the term of geomean(D/R)
//   "lowest_op_count_log_ratio"     the same for the episode's lowest op count so far
//                                   (0 unless a step reaches a new lowest): an episode
//                                   sums to log(I / its lowest state), what an agent
//                                   that answers with the best state seen is judged by
//   "+shaped" adds gamma * Phi(s') - Phi(s) with Phi(s) = -(FLOPs(s) + 2 * transcendentals(s))
//   divided by max(1, FLOPs(s0) + 2 * transcendentals(s0)) of the episode's initial state s0
//   (potential-based shaping; it keeps optimal policies when gamma is the agent's discount).
#ifndef HLOGYM_GYM_SPACES_H_
#define HLOGYM_GYM_SPACES_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "hlo/module.h"

namespace hlogym {

enum class ObservationKind { kOpHistogram, kCost, kAutophase, kActionHistory, kGraph };
std::string_view ObservationKindName(ObservationKind kind);
absl::StatusOr<ObservationKind> ParseObservationKind(std::string_view name);
std::vector<std::string> ObservationSpaceNames();

enum class RewardKind {
  kOpCount,
  kOpCountDecrease,
  kOpCountDecreaseNormalized,
  kOpCountLogRatio,
  kLowestOpCountLogRatio
};
struct RewardSpec {
  RewardKind kind = RewardKind::kOpCount;
  bool shaped = false;
};
absl::StatusOr<RewardSpec> ParseRewardSpace(std::string_view name);
std::string RewardSpaceName(const RewardSpec& spec);
std::vector<std::string> RewardSpaceNames();  // the base names (each also with "+shaped")

// The fixed-size summary ("autophase").
std::vector<std::string> AutophaseFeatureNames();
std::vector<int64_t> ComputeAutophaseFeatures(const Module& module);

// The graph: one node per instruction (computations in module order,
// instructions in list order). Edge kinds: 0 operand (operand -> user, feature
// = operand index), 1 control (predecessor -> successor, feature 0), 2 call
// (root of the called computation -> calling instruction, feature = position
// among the called computations).
struct GraphObservation {
  static constexpr int kNodeFeatures = 12;
  static constexpr int kEdgeFeatures = 2;
  int64_t num_nodes = 0;
  int64_t num_edges = 0;
  std::vector<int64_t> node_features;  // num_nodes x kNodeFeatures, row-major
  std::vector<int64_t> edge_links;     // num_edges x 2 (source, target), row-major
  std::vector<int64_t> edge_features;  // num_edges x kEdgeFeatures: kind, operand index
};
std::vector<std::string> GraphNodeFeatureNames();
GraphObservation ComputeGraphObservation(const Module& module);

}  // namespace hlogym

#endif  // HLOGYM_GYM_SPACES_H_
