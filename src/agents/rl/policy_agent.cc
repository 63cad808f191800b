// The learned policy (rl.h's Policy) and the agents over it (see rl.h):
// "policy:DIR" and "policy-beam:DIR".
#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <numeric>
#include <random>

#include "absl/cleanup/cleanup.h"
#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "agents/agent.h"
#include "agents/auto_agent.h"
#include "agents/rl/features.h"
#include "agents/rl/networks.h"
#include "agents/rl/rl.h"
#include "hlo/status_macros.h"

namespace hlogym::rl {

struct Policy::Impl {
  LoadedPolicy loaded;
};

Policy::Policy(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Policy::~Policy() = default;

absl::StatusOr<std::unique_ptr<Policy>> Policy::Load(const std::string& dir) {
  absl::StatusOr<LoadedPolicy> loaded = LoadPolicy(dir);
  if (!loaded.ok()) return loaded.status();
  return std::unique_ptr<Policy>(new Policy(std::make_unique<Impl>(Impl{*std::move(loaded)})));
}

absl::Status Policy::Save(const std::string& dir) const {
  return SavePolicy(dir, impl_->loaded.config, impl_->loaded.net);
}

const std::vector<std::string>& Policy::actions() const { return impl_->loaded.config.actions; }
int Policy::traj_limit() const { return impl_->loaded.config.traj_limit; }
std::vector<int> Policy::start_actions() const {
  // Load checked them.
  return impl_->loaded.config.start_actions().value_or(std::vector<int>{-1});
}
const std::string& Policy::network() const { return impl_->loaded.config.network; }

std::vector<std::vector<float>> Policy::LogProbabilities(
    const std::vector<Environment*>& envs) const {
  const PolicyConfig& config = impl_->loaded.config;
  const FeatureLayout layout = config.layout();
  const int64_t n = static_cast<int64_t>(envs.size());
  const int F = layout.policy_size(), A = layout.num_actions;
  std::vector<float> features(static_cast<size_t>(n) * F);
  std::vector<uint8_t> mask(static_cast<size_t>(n) * A, 1);
  // gnn: environments in equal states share one graph of the batch.
  std::vector<GraphFeatures> graphs;
  std::vector<size_t> graph_of_env;
  absl::flat_hash_map<Fingerprint, size_t> graph_of_fingerprint;
  for (int64_t i = 0; i < n; ++i) {
    Environment& env = *envs[i];
    EncodePolicyFeatures(env.Observe(), env.initial_op_count(), env.episode_length(), layout,
                         &features[i * F]);
    if (config.gnn()) {
      auto [it, inserted] =
          graph_of_fingerprint.try_emplace(env.state()->fingerprint(), graphs.size());
      if (inserted) graphs.push_back(EncodeGraph(ComputeGraphObservation(env.module())));
      graph_of_env.push_back(it->second);
    }
    if (config.action_masking) {
      // The policy's actions come first (an agent's environment may add more).
      std::vector<bool> allowed = env.ActionMask();
      allowed.resize(A);
      if (std::any_of(allowed.begin(), allowed.end(), [](bool b) { return b; })) {
        std::copy(allowed.begin(), allowed.end(), &mask[i * A]);
      }
    }
  }
  std::vector<const GraphFeatures*> graph_of_state;
  for (size_t g : graph_of_env) graph_of_state.push_back(&graphs[g]);
  torch::NoGradGuard no_grad;
  // A batch of a few states is tiny: on one thread, without the thread
  // pool's hand-offs, which on a busy 2-core machine cost 50 ms a graph
  // against 0.3 ms. The caller's setting (PyTorch's, in Python) comes back.
  const int threads = torch::get_num_threads();
  if (threads != 1) torch::set_num_threads(1);
  absl::Cleanup restore_threads = [threads] {
    if (threads != 1) torch::set_num_threads(threads);
  };
  ActorCritic& net = impl_->loaded.net;
  torch::Tensor x = torch::from_blob(features.data(), {n, F}, torch::kFloat32);
  torch::Tensor m = torch::from_blob(mask.data(), {n, A}, torch::kUInt8).to(torch::kBool);
  torch::Tensor logits = MaskLogits(net->Logits(net->Encode(x, MakeGraphBatch(graph_of_state))), m);
  torch::Tensor log_probs = torch::log_softmax(logits, 1).contiguous();
  std::vector<std::vector<float>> rows(n);
  for (int64_t i = 0; i < n; ++i) {
    const float* row = log_probs.data_ptr<float>() + i * A;
    rows[i].assign(row, row + A);
  }
  return rows;
}

namespace {

// Policies are loaded once per process and shared by the agents made from them.
absl::StatusOr<std::shared_ptr<const Policy>> LoadShared(const std::string& dir) {
  static std::mutex mu;
  static auto* loaded = new std::map<std::string, std::shared_ptr<const Policy>>();
  std::lock_guard<std::mutex> lock(mu);
  auto it = loaded->find(dir);
  if (it != loaded->end()) return it->second;
  absl::StatusOr<std::unique_ptr<Policy>> policy = Policy::Load(dir);
  if (!policy.ok()) return policy.status();
  std::shared_ptr<const Policy> shared = *std::move(policy);
  (*loaded)[dir] = shared;
  return shared;
}

class PolicyAgent : public Agent {
 public:
  PolicyAgent(std::shared_ptr<const Policy> policy, AgentOptions options, bool beam)
      : Agent(std::move(options)), policy_(std::move(policy)), beam_(beam) {}
  std::string_view name() const override { return beam_ ? "policy-beam" : "policy"; }
  const Policy& policy() const { return *policy_; }

  // The best state of the most likely rollouts, one from each start,
  // unchecked (what a guide needs: more starting points than one rollout).
  absl::StatusOr<SearchResult> Unchecked(std::string_view benchmark) {
    rollouts_ = Rollouts::kFromEveryStart;
    return Agent::Optimize(benchmark, {});
  }

  absl::StatusOr<SearchResult> Optimize(std::string_view benchmark,
                                        const SearchBudget& budget) override {
    // Without a budget, one rollout; with one, sampled episodes follow the
    // most likely ones. The best state seen is the answer, D the fallback.
    rollouts_ = budget.limited() ? Rollouts::kSampledAfterEveryStart : Rollouts::kFromLowestStart;
    model_seconds_ = 0;
    starts_op_count_.reset();
    absl::StatusOr<SearchResult> result = Agent::Optimize(benchmark, budget);
    if (!result.ok()) return result;
    result->model_seconds = model_seconds_;
    result->starts_op_count = starts_op_count_;
    return NoWorseThanDefault(benchmark, *std::move(result));
  }

 protected:
  absl::Status Search(SearchContext& ctx) override {
    return beam_ ? SearchBeam(ctx) : SearchRollouts(ctx);
  }

 private:
  // Where the policy's episodes start: the initial state, or the state after
  // a start action it was trained with (policy.json's "start", where
  // "coreset" is the coreset model's choice for this graph); one per start.
  // Null for a start whose step the budget refused.
  absl::StatusOr<std::vector<std::unique_ptr<Environment>>> Starts(SearchContext& ctx) {
    std::vector<std::unique_ptr<Environment>> starts;
    for (int action : policy_->start_actions()) {
      if (action == kCoresetStart) {
        HLOGYM_ASSIGN(chosen, CoresetStartAction(ctx.root()));
        action = chosen;
      }
      std::unique_ptr<Environment> env = ctx.ForkStart();
      if (action >= 0 && !StepAction(ctx, *env, action)) env = nullptr;
      starts.push_back(std::move(env));
    }
    // What the starts reach before the policy's first step: its own steps
    // are judged against this.
    if (!starts_op_count_) starts_op_count_ = ctx.best_op_count();
    return starts;
  }

  // The policy's log-probabilities for each state, timed (model_seconds_).
  std::vector<std::vector<float>> LogProbabilities(const std::vector<Environment*>& envs) {
    const auto start = std::chrono::steady_clock::now();
    std::vector<std::vector<float>> log_probs = policy_->LogProbabilities(envs);
    model_seconds_ += SecondsSince(start);
    return log_probs;
  }

  // One episode from `env` until traj_limit steps: the most likely action each
  // step, or (sample) actions drawn from the policy.
  bool Rollout(SearchContext& ctx, std::unique_ptr<Environment> env, bool sample) {
    if (env == nullptr) return false;
    for (int step = env->episode_length(); step < policy_->traj_limit(); ++step) {
      std::vector<float> log_probs = std::move(LogProbabilities({env.get()}).front());
      int action;
      if (sample) {
        std::vector<double> weights(log_probs.size());
        std::transform(log_probs.begin(), log_probs.end(), weights.begin(),
                       [](float lp) { return std::exp(lp); });
        action = std::discrete_distribution<int>(weights.begin(), weights.end())(ctx.rng());
      } else {
        action = static_cast<int>(std::max_element(log_probs.begin(), log_probs.end()) -
                                  log_probs.begin());
      }
      if (!StepAction(ctx, *env, action)) return false;
    }
    return true;
  }

  // Steps `env` with the policy's `action`. A sequence (IsSequenceName) is
  // also stepped pass by pass on a fork, so that the states inside it are
  // candidates too, as they are for the coreset agent, whose answer is the
  // lowest state along its sequence.
  static bool StepAction(SearchContext& ctx, Environment& env, int action) {
    const std::string& name = env.actions()[action];
    if (IsSequenceName(name)) {
      std::unique_ptr<Environment> inside = env.Fork();
      for (const std::string& part : SequencePasses(name)) {
        const auto it = std::find(env.actions().begin(), env.actions().end(), part);
        // PolicyAgentOptions added every part to the action space.
        if (!ctx.Step(*inside, static_cast<int>(it - env.actions().begin()))) return false;
      }
    }
    return ctx.Step(env, action);
  }

  // kFromLowestStart: one rollout, the most likely episode from the lowest
  // start state (ties: the first start). Otherwise the most likely episode
  // from each start, then (kSampledAfterEveryStart) sampled episodes from the
  // starts in turn until the budget ends.
  absl::Status SearchRollouts(SearchContext& ctx) {
    if (rollouts_ == Rollouts::kFromLowestStart) {
      std::unique_ptr<Environment> lowest;
      HLOGYM_ASSIGN(starts, Starts(ctx));
      for (std::unique_ptr<Environment>& start : starts) {
        if (start != nullptr && (lowest == nullptr || start->op_count() < lowest->op_count())) {
          lowest = std::move(start);
        }
      }
      Rollout(ctx, std::move(lowest), /*sample=*/false);
      return absl::OkStatus();
    }
    HLOGYM_ASSIGN(starts, Starts(ctx));
    for (std::unique_ptr<Environment>& start : starts) {
      if (!Rollout(ctx, std::move(start), /*sample=*/false)) return absl::OkStatus();
    }
    while (rollouts_ == Rollouts::kSampledAfterEveryStart && !ctx.exhausted()) {
      bool stepped = false;
      HLOGYM_ASSIGN(sampled_starts, Starts(ctx));
      for (std::unique_ptr<Environment>& start : sampled_starts) {
        stepped = Rollout(ctx, std::move(start), /*sample=*/true);
        if (!stepped) break;
      }
      if (!stepped) break;
    }
    return absl::OkStatus();
  }

  absl::Status SearchBeam(SearchContext& ctx) {
    struct Node {
      std::unique_ptr<Environment> env;
      double log_prob = 0;
    };
    const int width = std::max(1, options_.beam_width);
    // The beam starts with every start state; a step counts from the start.
    std::vector<Node> beam;
    absl::flat_hash_set<Fingerprint> visited;
    HLOGYM_ASSIGN(starts, Starts(ctx));
    for (std::unique_ptr<Environment>& start : starts) {
      if (start == nullptr || !visited.insert(start->state()->fingerprint()).second) continue;
      beam.push_back({std::move(start), 0});
    }
    if (beam.empty()) return absl::OkStatus();
    const int first_step = beam.front().env->episode_length();
    for (int step = first_step; step < policy_->traj_limit() && !ctx.exhausted(); ++step) {
      std::vector<Environment*> parents;
      for (Node& parent : beam) parents.push_back(parent.env.get());
      const std::vector<std::vector<float>> parent_log_probs = LogProbabilities(parents);
      std::vector<Node> children;
      for (size_t p = 0; p < beam.size(); ++p) {
        Node& parent = beam[p];
        const std::vector<float>& log_probs = parent_log_probs[p];
        std::vector<int> order(log_probs.size());
        std::iota(order.begin(), order.end(), 0);
        std::stable_sort(order.begin(), order.end(),
                         [&](int a, int b) { return log_probs[a] > log_probs[b]; });
        for (int k = 0; k < std::min<int>(width, order.size()); ++k) {
          std::unique_ptr<Environment> child = parent.env->Fork();
          if (!StepAction(ctx, *child, order[k])) break;
          // A child equal to a state already in the search adds nothing.
          if (!visited.insert(child->state()->fingerprint()).second && step > first_step) continue;
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

  enum class Rollouts { kFromLowestStart, kFromEveryStart, kSampledAfterEveryStart };

  std::shared_ptr<const Policy> policy_;
  bool beam_;
  Rollouts rollouts_ = Rollouts::kFromLowestStart;
  double model_seconds_ = 0;                // in the policy's forward passes, this Optimize call
  std::optional<int64_t> starts_op_count_;  // the lowest state of the starts, this call
};

// The passes of `actions`, each sequence spelled out (its passes in order).
std::vector<std::string> SpellOut(const std::vector<std::string>& actions) {
  std::vector<std::string> passes;
  for (const std::string& action : actions) {
    for (std::string& pass : SequencePasses(action)) passes.push_back(std::move(pass));
  }
  return passes;
}

// A policy agent's options: the policy's own action space (passes, and
// pipelines and sequences as macro-actions), then the passes of its sequences
// and kSplitStartPasses that it lacks (stepped one by one inside a sequence or
// to split its start, never chosen), and the observations its features need.
AgentOptions PolicyAgentOptions(const Policy& policy, AgentOptions options) {
  if (options.registry == &PassRegistry::Builtin())
    options.registry = &PassRegistry::WithPipelines();
  options.env.actions = policy.actions();
  AddSequencePasses({SpellOut(policy.actions()),
                     std::vector<std::string>(kSplitStartPasses.begin(), kSplitStartPasses.end())},
                    options.env.actions);
  options.env.observation_spaces = PolicyObservationSpaces();
  return options;
}

AgentFactory MakeFactory(bool beam) {
  return
      [beam](std::string_view dir, AgentOptions options) -> absl::StatusOr<std::unique_ptr<Agent>> {
        absl::StatusOr<std::shared_ptr<const Policy>> policy = LoadShared(std::string(dir));
        if (!policy.ok()) return policy.status();
        AgentOptions policy_options = PolicyAgentOptions(**policy, std::move(options));
        return std::unique_ptr<Agent>(
            new PolicyAgent(*std::move(policy), std::move(policy_options), beam));
      };
}

// auto guided by a policy ("auto-policy:DIR"): the shipped auto's guide (its
// choice of sequence for the graph, then its other sequences) with the best
// state of the policy's most likely rollouts (unchecked: auto checks its own
// answer; its sequences spelled out pass by pass) second, one more start.
// (As the first start, in place of the guide's choice, it gained on 3
// held-out graphs and lost on 2; docs/agents.md.)
class PolicyGuide : public AutoGuide {
 public:
  PolicyGuide(std::shared_ptr<const Policy> policy, const AgentOptions& options,
              std::shared_ptr<AutoGuide> then)
      : agent_(policy, PolicyAgentOptions(*policy, options), /*beam=*/false),
        then_(std::move(then)) {}
  std::vector<std::string> Passes() const override {
    std::vector<std::string> passes = then_->Passes();
    AddSequencePasses({SpellOut(agent_.policy().actions())}, passes);
    return passes;
  }
  absl::StatusOr<std::vector<std::vector<std::string>>> Sequences(const Environment& initial,
                                                                  const Environment& d) override {
    HLOGYM_ASSIGN(rollouts, agent_.Unchecked(initial.benchmark().spec));
    HLOGYM_ASSIGN(sequences, then_->Sequences(initial, d));
    std::vector<std::string> policy_sequence = SpellOut(rollouts.passes);
    if (std::find(sequences.begin(), sequences.end(), policy_sequence) == sequences.end())
      sequences.insert(sequences.begin() + std::min<size_t>(1, sequences.size()), policy_sequence);
    return sequences;
  }

 private:
  PolicyAgent agent_;
  std::shared_ptr<AutoGuide> then_;
};

absl::StatusOr<std::unique_ptr<Agent>> MakeAutoGuidedByPolicy(std::string_view dir,
                                                              AgentOptions options) {
  absl::StatusOr<std::shared_ptr<const Policy>> policy = LoadShared(std::string(dir));
  if (!policy.ok()) return policy.status();
  absl::StatusOr<AutoPrior> prior = AutoPrior::Load(DefaultAutoPriorPath());
  if (!prior.ok()) return prior.status();
  absl::StatusOr<std::shared_ptr<AutoGuide>> shipped_guide = LoadShippedAutoGuide();
  if (!shipped_guide.ok()) return shipped_guide.status();
  // One step cache for the guide's rollouts and auto's search.
  if (!options.cache)
    options.cache = std::make_shared<StepCache>(options.env.cache_max_instructions);
  AutoOptions auto_options;
  auto_options.guide =
      std::make_shared<PolicyGuide>(*std::move(policy), options, *std::move(shipped_guide));
  return std::unique_ptr<Agent>(new AutoAgent(std::move(options), *std::move(prior), auto_options));
}

}  // namespace

void RegisterPolicyAgents() {
  RegisterAgentFactory("policy", "DIR", MakeFactory(/*beam=*/false));
  RegisterAgentFactory("policy-beam", "DIR", MakeFactory(/*beam=*/true));
  RegisterAgentFactory("auto-policy", "DIR", MakeAutoGuidedByPolicy);
}

}  // namespace hlogym::rl
