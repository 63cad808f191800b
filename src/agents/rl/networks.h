// The networks of agents/rl and the policy files (LibTorch; include only from
// agents/rl .cc files).
//
// ActorCritic: an actor MLP from the state vector to one logit per action
// (for DQN: one Q-value per action) and a critic MLP from the state vector,
// plus the cost features when value_sees_cost, to a scalar. Tanh hidden layers.
// The state vector is the policy features (network "mlp"), or the policy
// features followed by a graph encoding of the module (network "gnn"; see
// GraphEncoderImpl): the encoder is the actor's, the critic reads its output.
#ifndef HLOGYM_AGENTS_RL_NETWORKS_H_
#define HLOGYM_AGENTS_RL_NETWORKS_H_

#include <torch/torch.h>

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "agents/rl/features.h"

namespace hlogym::rl {

// The start "coreset": the sequence the shipped coreset model
// (DefaultCoresetPath()) predicts best for the graph, one of the policy's
// sequence actions (CoresetStartAction).
inline constexpr int kCoresetStart = -2;

// Everything needed to rebuild a policy and feed it; policy.json holds it.
struct PolicyConfig {
  std::string algo;
  std::vector<std::string> actions;  // the action space, by pass name
  std::vector<int> hidden;
  std::string network = "mlp";        // mlp or gnn (policies written before gnn existed: mlp)
  std::string features = "absolute";  // FeatureNames() (policies written before: absolute)
  int gnn_dim = 32;                   // gnn: width of the node embeddings
  int gnn_rounds = 2;                 // gnn: message-passing rounds
  int traj_limit = 1;
  bool value_sees_cost = false;
  bool action_masking = false;
  std::string start = "initial";  // TrainOptions::start, comma-separated
  std::string reward_space;
  int64_t trained_steps = 0;
  std::vector<std::string> trained_on;  // benchmark specs

  // Per start: the action run before the policy's first step, -1 for
  // "initial", kCoresetStart for "coreset"; NotFound naming a start that is
  // none of these.
  absl::StatusOr<std::vector<int>> start_actions() const;
  FeatureLayout layout() const {
    return {static_cast<int>(actions.size()), traj_limit, features == "relative"};
  }
  bool gnn() const { return network == "gnn"; }
  // Width of the state vector (ActorCriticImpl::Encode).
  int64_t state_size() const { return layout().policy_size() + (gnn() ? 2 * gnn_dim : 0); }
  std::string ToJson() const;
  static absl::StatusOr<PolicyConfig> FromJson(const std::string& text, const std::string& origin);
};

// The action the start "coreset" runs on the graph at `initial` (its module as
// the benchmark gives it): the shipped coreset model's choice from the
// features of I and D (D by the xla-cpu-default action), which must be one of
// `initial`'s actions, as `--sequences coreset` makes them.
absl::StatusOr<int> CoresetStartAction(const Environment& initial);

// The graphs of a batch of states for the gnn: the distinct graphs among
// them, their nodes concatenated graph after graph.
struct GraphBatch {
  torch::Tensor opcodes, element_types;                 // [nodes] int64
  torch::Tensor node_values;                            // [nodes, GraphFeatures::kNodeValues]
  torch::Tensor edge_sources, edge_targets;             // [edges] int64, indices into the nodes
  torch::Tensor in_degree_inverse, out_degree_inverse;  // [nodes, 1]: 1 / max(1, degree)
  std::vector<int64_t> nodes_per_graph;                 // each graph's nodes are contiguous
  torch::Tensor graph_of_state;                         // [states] int64
};
// graphs[i] is state i's graph; states that share a pointer share one graph of
// the batch (rollouts revisit states often). No graphs: an empty batch (mlp).
GraphBatch MakeGraphBatch(const std::vector<const GraphFeatures*>& graphs);

// The gnn's graph encoder. Node embedding: tanh(opcode embedding + element
// type embedding + a linear map of the node values). Then `rounds` rounds of
// message passing in both directions of the edges, residual:
//   h += tanh(W [h, mean of h over the node's sources, mean over its targets])
// Readout: the mean and the max of h over each graph's nodes.
class GraphEncoderImpl : public torch::nn::Module {
 public:
  GraphEncoderImpl(int dim, int rounds);
  // -> [states, 2 * dim]
  torch::Tensor forward(const GraphBatch& batch);

 private:
  torch::nn::Embedding opcode_{nullptr}, element_type_{nullptr};
  torch::nn::Linear node_values_{nullptr};
  std::vector<torch::nn::Linear> rounds_;
};
TORCH_MODULE(GraphEncoder);

class ActorCriticImpl : public torch::nn::Module {
 public:
  explicit ActorCriticImpl(const PolicyConfig& config);
  // The state vector of a batch of states, [B, config.state_size()]: the
  // policy features [B, policy features], then (gnn) the graph encoding.
  torch::Tensor Encode(const torch::Tensor& features, const GraphBatch& graphs);
  // [B, state] -> [B, actions]
  torch::Tensor Logits(const torch::Tensor& state);
  // [B, state], [B, cost features] -> [B]
  torch::Tensor Value(const torch::Tensor& state, const torch::Tensor& cost);
  // The graph encoder is the actor's (the critic's loss does not reach it);
  // the critic's parameters are its MLP alone.
  std::vector<torch::Tensor> ActorParameters();
  std::vector<torch::Tensor> CriticParameters() { return critic_->parameters(); }

 private:
  bool value_sees_cost_;
  GraphEncoder graph_{nullptr};  // gnn only
  torch::nn::Sequential actor_{nullptr}, critic_{nullptr};
};
TORCH_MODULE(ActorCritic);

// Copies the parameters of `from` into `to` (same config).
void CopyParameters(ActorCritic& from, ActorCritic& to);

// Logits with the actions that `mask` (uint8 [B, A], 1 = allowed) forbids
// pushed far down (finite, so that entropies stay defined).
torch::Tensor MaskLogits(const torch::Tensor& logits, const torch::Tensor& mask);

// policy.json + policy.pt in `dir`, written atomically.
absl::Status SavePolicy(const std::string& dir, const PolicyConfig& config, ActorCritic& net);
struct LoadedPolicy {
  PolicyConfig config;
  ActorCritic net{nullptr};
};
absl::StatusOr<LoadedPolicy> LoadPolicy(const std::string& dir);

// Atomic file replacement for torch archives: saves to PATH.tmp, renames.
absl::Status SaveModuleAtomically(const std::string& path,
                                  const std::function<void(const std::string&)>& save);

}  // namespace hlogym::rl

#endif  // HLOGYM_AGENTS_RL_NETWORKS_H_
