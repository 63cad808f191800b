// The learned policy as an Agent (see rl.h): "policy:DIR" and "policy-beam:DIR".
#include <torch/torch.h>

#include <algorithm>
#include <map>
#include <memory>
#include <mutex>
#include <numeric>
#include <random>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "agents/agent.h"
#include "agents/rl/features.h"
#include "agents/rl/networks.h"
#include "agents/rl/rl.h"

namespace hlogym::rl {
namespace {

// Policies are loaded once per process and shared by the agents made from them.
absl::StatusOr<std::shared_ptr<LoadedPolicy>> LoadShared(const std::string& dir) {
  static std::mutex mu;
  static auto* loaded = new std::map<std::string, std::shared_ptr<LoadedPolicy>>();
  std::lock_guard<std::mutex> lock(mu);
  auto it = loaded->find(dir);
  if (it != loaded->end()) return it->second;
  absl::StatusOr<LoadedPolicy> policy = LoadPolicy(dir);
  if (!policy.ok()) return policy.status();
  auto shared = std::make_shared<LoadedPolicy>(std::move(*policy));
  (*loaded)[dir] = shared;
  return shared;
}

class PolicyAgent : public Agent {
 public:
  PolicyAgent(std::shared_ptr<LoadedPolicy> policy, AgentOptions options, bool beam)
      : Agent(std::move(options)), policy_(std::move(policy)), beam_(beam) {}
  std::string_view name() const override { return beam_ ? "policy-beam" : "policy"; }

  absl::StatusOr<SearchResult> Optimize(std::string_view benchmark, const SearchBudget& budget) override {
    // With a budget, sampled episodes follow the most likely one.
    sample_after_greedy_ = budget.limited();
    return Agent::Optimize(benchmark, budget);
  }

 protected:
  absl::Status Search(SearchContext& ctx) override {
    return beam_ ? SearchBeam(ctx) : SearchRollouts(ctx);
  }

 private:
  // The policy's log-probabilities in `env`'s state after `step` steps.
  std::vector<float> LogProbabilities(Environment& env, int step) {
    const FeatureLayout layout = policy_->config.layout();
    std::vector<float> features(layout.policy_size());
    EncodePolicyFeatures(env.Observe(), env.initial_op_count(), step, layout, features.data());
    torch::NoGradGuard no_grad;
    torch::Tensor x = torch::from_blob(features.data(), {1, layout.policy_size()}, torch::kFloat32);
    torch::Tensor logits = policy_->net->Logits(x);
    if (policy_->config.action_masking) {
      std::vector<bool> allowed = env.ActionMask();
      if (std::any_of(allowed.begin(), allowed.end(), [](bool b) { return b; })) {
        std::vector<uint8_t> mask(allowed.begin(), allowed.end());
        torch::Tensor m = torch::from_blob(mask.data(), {1, layout.num_actions}, torch::kUInt8).to(torch::kBool);
        logits = MaskLogits(logits, m);
      }
    }
    torch::Tensor log_probs = torch::log_softmax(logits, 1).contiguous();
    return std::vector<float>(log_probs.data_ptr<float>(), log_probs.data_ptr<float>() + layout.num_actions);
  }

  // One episode of traj_limit steps from the initial state: the most likely
  // action each step, or (sample) actions drawn from the policy.
  bool Rollout(SearchContext& ctx, bool sample) {
    std::unique_ptr<Environment> env = ctx.root().Fork();
    for (int step = 0; step < policy_->config.traj_limit; ++step) {
      std::vector<float> log_probs = LogProbabilities(*env, step);
      int action;
      if (sample) {
        std::vector<double> weights(log_probs.size());
        std::transform(log_probs.begin(), log_probs.end(), weights.begin(), [](float lp) { return std::exp(lp); });
        action = std::discrete_distribution<int>(weights.begin(), weights.end())(ctx.rng());
      } else {
        action = static_cast<int>(std::max_element(log_probs.begin(), log_probs.end()) - log_probs.begin());
      }
      if (!ctx.Step(*env, action)) return false;
    }
    return true;
  }

  absl::Status SearchRollouts(SearchContext& ctx) {
    if (!Rollout(ctx, /*sample=*/false)) return absl::OkStatus();
    while (sample_after_greedy_ && !ctx.exhausted()) {
      if (!Rollout(ctx, /*sample=*/true)) break;
    }
    return absl::OkStatus();
  }

  absl::Status SearchBeam(SearchContext& ctx) {
    struct Node {
      std::unique_ptr<Environment> env;
      double log_prob = 0;
    };
    const int width = std::max(1, options_.beam_width);
    std::vector<Node> beam;
    beam.push_back({ctx.root().Fork(), 0});
    absl::flat_hash_set<Fingerprint> visited = {beam.front().env->state()->fingerprint()};
    for (int step = 0; step < policy_->config.traj_limit && !ctx.exhausted(); ++step) {
      std::vector<Node> children;
      for (Node& parent : beam) {
        std::vector<float> log_probs = LogProbabilities(*parent.env, step);
        std::vector<int> order(log_probs.size());
        std::iota(order.begin(), order.end(), 0);
        std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return log_probs[a] > log_probs[b]; });
        for (int k = 0; k < std::min<int>(width, order.size()); ++k) {
          std::unique_ptr<Environment> child = parent.env->Fork();
          if (!ctx.Step(*child, order[k])) break;
          // A child equal to a state already in the search adds nothing.
          if (!visited.insert(child->state()->fingerprint()).second && step > 0) continue;
          children.push_back({std::move(child), parent.log_prob + log_probs[order[k]]});
        }
      }
      if (children.empty()) break;
      std::stable_sort(children.begin(), children.end(), [](const Node& x, const Node& y) {
        if (x.env->op_count() != y.env->op_count()) return x.env->op_count() < y.env->op_count();
        return x.log_prob > y.log_prob;
      });
      if (static_cast<int>(children.size()) > width) children.resize(width);
      beam = std::move(children);
    }
    return absl::OkStatus();
  }

  std::shared_ptr<LoadedPolicy> policy_;
  bool beam_;
  bool sample_after_greedy_ = false;
};

AgentFactory MakeFactory(bool beam) {
  return [beam](std::string_view dir, AgentOptions options) -> absl::StatusOr<std::unique_ptr<Agent>> {
    absl::StatusOr<std::shared_ptr<LoadedPolicy>> policy = LoadShared(std::string(dir));
    if (!policy.ok()) return policy.status();
    // The policy's own action space and the observations its features need.
    options.env.actions = (*policy)->config.actions;
    options.env.observation_spaces = RequiredObservationSpaces();
    return std::unique_ptr<Agent>(new PolicyAgent(*std::move(policy), std::move(options), beam));
  };
}

}  // namespace

void RegisterPolicyAgents() {
  RegisterAgentFactory("policy", "DIR", MakeFactory(/*beam=*/false));
  RegisterAgentFactory("policy-beam", "DIR", MakeFactory(/*beam=*/true));
}

}  // namespace hlogym::rl
