// The networks of agents/rl and the policy files (LibTorch; include only from
// agents/rl .cc files).
//
// ActorCritic: an actor MLP from the policy features to one logit per action
// (for DQN: one Q-value per action) and a critic MLP from the policy features,
// plus the cost features when value_sees_cost, to a scalar. Tanh hidden layers.
#ifndef HLOGYM_AGENTS_RL_NETWORKS_H_
#define HLOGYM_AGENTS_RL_NETWORKS_H_

#include <torch/torch.h>

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "agents/rl/features.h"

namespace hlogym::rl {

// Everything needed to rebuild a policy and feed it; policy.json holds it.
struct PolicyConfig {
  std::string algo;
  std::vector<std::string> actions;  // the action space, by pass name
  std::vector<int> hidden;
  int traj_limit = 1;
  bool value_sees_cost = false;
  bool action_masking = false;
  std::string reward_space;
  int64_t trained_steps = 0;
  std::vector<std::string> trained_on;  // benchmark specs

  FeatureLayout layout() const { return {static_cast<int>(actions.size()), traj_limit}; }
  std::string ToJson() const;
  static absl::StatusOr<PolicyConfig> FromJson(const std::string& text, const std::string& origin);
};

class ActorCriticImpl : public torch::nn::Module {
 public:
  explicit ActorCriticImpl(const PolicyConfig& config);
  // [B, policy features] -> [B, actions]
  torch::Tensor Logits(const torch::Tensor& features);
  // [B, policy features], [B, cost features] -> [B]
  torch::Tensor Value(const torch::Tensor& features, const torch::Tensor& cost);
  std::vector<torch::Tensor> ActorParameters() { return actor_->parameters(); }
  std::vector<torch::Tensor> CriticParameters() { return critic_->parameters(); }

 private:
  bool value_sees_cost_;
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
