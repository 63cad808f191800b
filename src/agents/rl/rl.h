// Deep reinforcement learning for pass ordering (LibTorch): PPO, A2C, TRPO and
// DQN trained on the gym, and the learned policy as an Agent.
//
// This header is the torch-free face of agents/rl: the CLI and the tests use
// it; only the .cc files of agents/rl include LibTorch.
//
// Defaults are the seed paper's: an MLP of [2048, 2048], minibatch 256,
// learning rate 3e-4, gamma 0.99, GAE lambda 0.95, clip 0.2; its two
// enhancements are options: potential-based reward shaping (the gym's
// "+shaped" reward, Phi(s) = -FLOPs(s) - 2 * transcendentals(s)) and a value
// function that also sees FLOPs and transcendentals.
//
// Networks: "mlp" reads the policy features of features.h (the op histogram,
// progress and action history); "gnn" also reads the module's graph (the
// gym's graph observation) through message passing over its edges, pooled
// into a vector that the actor learns and the critic reads (networks.h). DQN is
// mlp only.
//
// The trainers: trainer.h is the shared core (environments, encoding and
// stepping in trainer.cc, the on-policy rollout in rollout.cc, the curve,
// checkpoints and resume in checkpoint.cc); ppo.cc (PPO and A2C), trpo.cc and
// dqn.cc each hold one algorithm's loop and update.
//
// A training run lives in one output directory:
//   checkpoint.json                 the latest checkpoint: counters, random
//                                   state and the names of its archives,
//   checkpoint-net-<steps>.pt,      the network, its optimizer and (DQN) the
//   checkpoint-optimizer-<steps>.pt target network at <steps> environment
//   checkpoint-target-<steps>.pt    steps; renaming checkpoint.json commits a
//                                   checkpoint, then the previous archives go
//   policy.pt, policy.json          the policy alone (what `policy:DIR` loads)
//   curve.csv                       the learning curve, one row per update
// Training into a directory that holds a checkpoint resumes it (the options
// that shape the networks must match; the step target may grow).
#ifndef HLOGYM_AGENTS_RL_RL_H_
#define HLOGYM_AGENTS_RL_RL_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "gym/environment.h"

namespace hlogym::rl {

// PPO's own options (A2C is PPO's update with one epoch over the whole
// rollout and no clipping, so it has none of its own).
struct PpoOptions {
  double clip = 0.2;  // the probability ratio is clipped to [1 - clip, 1 + clip]
};

struct TrpoOptions {
  double max_kl = 0.01;     // the trust region: mean KL divergence per update
  int cg_iterations = 10;   // conjugate-gradient steps towards F^-1 g
  double cg_damping = 0.1;  // added to the Fisher matrix's diagonal
};

// Double DQN with a target network and a replay buffer.
struct DqnOptions {
  int replay_size = 50'000;
  int learning_starts = 1'000;  // environment steps before the first gradient step
  int target_update = 1'000;    // environment steps between target syncs
  int train_every = 4;          // environment steps per gradient step
  double epsilon_start = 1.0;
  double epsilon_end = 0.05;
  double epsilon_fraction = 0.3;  // of total_steps spent decaying epsilon
};

struct TrainOptions {
  std::string algo = "ppo";             // AlgorithmNames(): ppo, a2c, trpo, dqn
  std::vector<std::string> benchmarks;  // training benchmark specs (sampled per episode)
  std::string out_dir;
  int64_t total_steps = 200'000;  // environment steps in all

  // The environment. Rewards default to the op-count decrease normalized by
  // what xla-cpu-default achieves (an episode that matches the default earns
  // 1.0); env.reward_space may be any gym reward space.
  EnvOptions env = [] {
    EnvOptions e;
    e.reward_space = "op_count_decrease_normalized";
    e.observation_spaces = {"op_histogram", "cost", "action_history"};
    e.traj_limit = 20;
    return e;
  }();
  bool reward_shaping = false;   // paper enhancement 1 (adds "+shaped")
  bool value_sees_cost = false;  // paper enhancement 2
  bool action_masking = false;   // sample only passes that change the module
  // Where episodes start, comma-separated: "initial" (the benchmark's module,
  // the paper's) or an action run before the policy's first step, such as
  // "xla-cpu-default" (the episode starts at D: the policy learns what to do
  // beyond XLA's default), or "coreset" (the sequence action the shipped
  // coreset model predicts best for the graph: a learned start). With
  // several, episodes take them in turn, and the policy agent rolls out once
  // from the lowest of them (from each, with a budget).
  std::string start = "initial";
  std::string network = "mlp";  // NetworkNames(): mlp (op histogram) or gnn (also the graph)
  // The op histogram as log counts ("absolute") or as log shares of the op
  // count ("relative"; features.h).
  std::string features = "absolute";
  std::vector<int> hidden = {2048, 2048};
  int gnn_dim = 32;    // gnn: node embedding width
  int gnn_rounds = 2;  // gnn: message-passing rounds
  int num_envs = 8;
  int num_threads = 2;  // environment stepping and torch's intra-op threads

  // Unset: the algorithm's default, 3e-4 (PPO, TRPO's critic), 7e-4 (A2C), 1e-4 (DQN).
  std::optional<double> learning_rate;
  // Environment steps per update, all environments together (DQN: per row of
  // the curve). Unset: 2048, A2C 5 per environment.
  std::optional<int> rollout_steps;
  double gamma = 0.99;
  double gae_lambda = 0.95;    // PPO, A2C, TRPO
  double entropy_coef = 0.01;  // PPO, A2C
  double value_coef = 0.5;     // PPO, A2C
  double max_grad_norm = 0.5;  // PPO, A2C, TRPO's critic
  int minibatch = 256;         // of every gradient step (A2C: the whole rollout)
  int epochs = 10;             // passes over each rollout (PPO; TRPO's critic)
  PpoOptions ppo;
  TrpoOptions trpo;
  DqnOptions dqn;

  int64_t checkpoint_every = 10'000;  // environment steps; <= 0: only at the end
  uint64_t seed = 0;
  // Called after every update (progress bars, logs); may be empty.
  std::function<void(const struct TrainProgress&)> progress;
};

// One row of curve.csv.
struct TrainProgress {
  int64_t steps = 0;
  int64_t total_steps = 0;
  int64_t updates = 0;
  int64_t episodes = 0;
  // Over the episodes finished since the previous row (NaN when none):
  double mean_return = 0;
  // (I - R) / (I - D) at the end of the episode, D = xla-cpu-default; 1.0 =
  // matched the default. Its geometric mean is the paper's metric (+1).
  double mean_ratio = 0;
  double policy_loss = 0, value_loss = 0, entropy = 0;
  double epsilon = 0;  // DQN only
  double steps_per_second = 0;
  double cache_hit_rate = 0;
  double wall_seconds = 0;  // since the run (not the resume) started
  bool resumed = false;     // the first row after a resume
};

struct TrainSummary {
  int64_t steps = 0;
  int64_t episodes = 0;
  int64_t resumed_from = 0;  // the step count of the checkpoint resumed (0: fresh)
  double wall_seconds = 0;   // this invocation
  std::string policy_dir;
};

absl::StatusOr<TrainSummary> Train(const TrainOptions& options);

std::vector<std::string> AlgorithmNames();
std::vector<std::string> NetworkNames();

// A trained policy behind a torch-free face (the policy agents use it; so may
// tools and tests).
class Policy {
 public:
  // DIR holds policy.json and policy.pt (a training output directory).
  static absl::StatusOr<std::unique_ptr<Policy>> Load(const std::string& dir);
  ~Policy();
  // Writes policy.json and policy.pt into `dir`, as training does.
  absl::Status Save(const std::string& dir) const;
  const std::vector<std::string>& actions() const;
  int traj_limit() const;
  // The actions episodes start with (PolicyConfig::start_actions), -1 for the
  // initial module.
  std::vector<int> start_actions() const;
  const std::string& network() const;
  // The log-probabilities of the actions in each environment's current state
  // (its episode_length() counts as the step), evaluated as one batch. When
  // the policy was trained with masking, actions that change nothing are
  // masked (unless none changes anything).
  std::vector<std::vector<float>> LogProbabilities(const std::vector<Environment*>& envs) const;

 private:
  struct Impl;
  explicit Policy(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// Registers the learned-policy agents with MakeAgent:
//   "policy:DIR"        the policy's most likely action at each step (traj_limit
//                       steps), keeping the best state seen; with a budget it
//                       then samples more episodes from the policy until the
//                       budget ends (policy-guided search)
//   "policy-beam:DIR"   a beam over the policy's most likely actions, ranked by
//                       op count (width AgentOptions::beam_width)
//   "auto-policy:DIR"   the auto agent with the policy as its guide: the best
//                       state of the policy's most likely rollouts is where
//                       auto's first descent starts
// DIR holds policy.pt and policy.json (a training output directory).
void RegisterPolicyAgents();
// Their prefixes: a command that meets one loads the plugin.
inline constexpr std::string_view kPolicyAgentPrefixes[] = {"policy", "policy-beam", "auto-policy"};

}  // namespace hlogym::rl

#endif  // HLOGYM_AGENTS_RL_RL_H_
