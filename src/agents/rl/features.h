// What the networks see of a gym state: fixed-size float vectors built from the
// gym's observations (no LibTorch here, so it is testable on its own).
//
// Policy features (what the policy and, always, the value function see):
//   log(1 + instructions of each opcode)   kOpcodeCount entries (the paper's
//                                          state, log-scaled so that graphs of
//                                          any size share one scale)
//   log(op count / initial op count)       how far the episode has come
//   step / traj_limit                      the time left (episodes are finite)
//   times each action was applied / 4      one per action; without it a policy
//                                          over histograms alone repeats a pass
//                                          that changed nothing forever
// With "relative" features (TrainOptions::features) each opcode's entry is its
// log share of the module instead, log(1 + n) - log(1 + op count): graphs of
// any size and frontend that are built alike look alike.
// Cost features (the paper's second enhancement: the value function also sees
// them): log((1 + FLOPs) / (1 + initial FLOPs)) and the same for
// transcendentals.
//
// Graph features (the "gnn" network; see GraphFeatures) come from the gym's
// graph observation (ComputeGraphObservation).
#ifndef HLOGYM_AGENTS_RL_FEATURES_H_
#define HLOGYM_AGENTS_RL_FEATURES_H_

#include <cstdint>
#include <vector>

#include "gym/environment.h"
#include "hlo/primitive_type.h"

namespace hlogym::rl {

// The policy features' kinds: "absolute" (the default) and "relative".
std::vector<std::string> FeatureNames();

// The observation spaces the policy's features read (EncodePolicyFeatures),
// and those a trainer reads: also the cost, for the critic (EncodeCostFeatures)
// and reward shaping. A policy agent observes only the first: the cost
// analysis of every state it visits would be most of its model time.
std::vector<std::string> PolicyObservationSpaces();
std::vector<std::string> TrainerObservationSpaces();

struct FeatureLayout {
  int num_actions = 0;
  int traj_limit = 1;
  bool relative_histogram = false;  // "relative" features: log shares of the op count
  int policy_size() const;
  static constexpr int kCostSize = 2;
};

// Writes layout.policy_size() floats. `step` counts the steps taken so far.
void EncodePolicyFeatures(const Observation& observation, int64_t initial_op_count, int step,
                          const FeatureLayout& layout, float* out);
// Writes FeatureLayout::kCostSize floats; `initial` is the cost observation of
// the episode's first state.
void EncodeCostFeatures(const Observation& observation, const std::vector<double>& initial,
                        float* out);

// What the gnn sees of a graph observation. Per node: its opcode and element
// type (the network embeds them) and kNodeValues numbers: rank / 4,
// log(1 + size) of the first four dimensions (0 when absent), log(1 +
// elements), log(1 + operands), log(1 + users), is-root. Edges: the operand
// and call edges (data flows source -> target); control edges carry no data
// and are left out. Compact types: a rollout holds one per distinct state.
struct GraphFeatures {
  static constexpr int kNodeValues = 9;
  static constexpr int kElementTypes = static_cast<int>(PrimitiveType::kOpaque) + 1;
  int64_t num_nodes = 0;
  std::vector<int16_t> opcodes, element_types;  // num_nodes each
  std::vector<float> node_values;               // num_nodes x kNodeValues, row-major
  std::vector<int32_t> edge_sources, edge_targets;
};
GraphFeatures EncodeGraph(const GraphObservation& graph);

}  // namespace hlogym::rl

#endif  // HLOGYM_AGENTS_RL_FEATURES_H_
