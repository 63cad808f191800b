// The shared core of the trainers (LibTorch; include only from agents/rl .cc
// files). A TrainingRun owns what every algorithm needs: the environments (a
// VecEnvironment) and the encoding of their states for the networks, stepping
// with automatic resets to drawn benchmarks, the network and its optimizer,
// the learning curve, checkpoints and resume (checkpoint.cc). An algorithm is
// one function that drives a run to its step target (ppo.cc, trpo.cc,
// dqn.cc); the on-policy ones collect their experience with CollectRollout
// (rollout.cc).
#ifndef HLOGYM_AGENTS_RL_TRAINER_H_
#define HLOGYM_AGENTS_RL_TRAINER_H_

#include <torch/torch.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "agents/rl/features.h"
#include "agents/rl/networks.h"
#include "agents/rl/rl.h"
#include "gym/vec_env.h"
#include "nlohmann/json.hpp"

namespace hlogym::rl {

class TrainingRun;

// One algorithm: its name, what its optimizer trains, its defaults, its loop.
struct Algorithm {
  enum class Optimizes { kActorAndCritic, kCritic, kActor };
  const char* name = "";
  Optimizes optimizes = Optimizes::kActorAndCritic;  // what TrainingRun::optimizer() trains
  bool target_network = false;  // a second network, checkpointed with the first (DQN)
  bool supports_gnn = true;
  double learning_rate = 3e-4;    // when TrainOptions::learning_rate is unset
  int rollout_steps_per_env = 0;  // > 0: the default rollout, per environment
  absl::Status (*train)(TrainingRun& run) = nullptr;
};

// Each runs until the step target, ending on a whole update.
absl::Status TrainPpo(TrainingRun& run);
absl::Status TrainA2c(TrainingRun& run);
absl::Status TrainTrpo(TrainingRun& run);
absl::Status TrainDqn(TrainingRun& run);

// The environments' current states as the networks read them, row-major.
struct StateBatch {
  int envs = 0;
  std::vector<float> features;  // [envs, policy features]
  std::vector<float> cost;      // [envs, FeatureLayout::kCostSize]
  std::vector<uint8_t> masks;   // [envs, actions]; 1 = allowed
  // Views of the vectors (valid while they are unchanged).
  torch::Tensor Features();
  torch::Tensor Cost();
  torch::Tensor Masks();  // bool
};

// The losses of one row of the curve (NaN: not measured).
struct UpdateLosses {
  double policy = 0, value = 0, entropy = 0;
  double epsilon = 0;  // DQN
};

class TrainingRun {
 public:
  // Validates the options, makes the environments and networks, resumes a
  // checkpoint in options.out_dir (or refuses a directory that holds
  // something else) and starts an episode in every environment.
  static absl::StatusOr<std::unique_ptr<TrainingRun>> Start(const TrainOptions& options);
  // Trains to the step target, and writes the policy even when the resumed
  // checkpoint had reached it already.
  absl::StatusOr<TrainSummary> Run();

  const TrainOptions& options() const { return o_; }
  const Algorithm& algorithm() const { return *algorithm_; }
  bool gnn() const { return config_.gnn(); }
  int num_envs() const { return vec_->num_envs(); }
  int num_actions() const { return A_; }
  int feature_size() const { return F_; }
  double learning_rate() const;
  int rollout_steps() const;
  int64_t steps() const { return steps_; }
  bool reached_target() const { return steps_ >= o_.total_steps; }
  std::mt19937_64& rng() { return rng_; }
  ActorCritic& net() { return net_; }
  ActorCritic& target() { return target_; }
  torch::optim::Optimizer& optimizer() { return *optimizer_; }

  // Encodes the environments' current states into `batch` (gnn: also their
  // graphs, for CurrentGraphs and GraphOf).
  void Observe(StateBatch& batch);
  // gnn: the graph batch of the observed states (empty for mlp).
  GraphBatch CurrentGraphs() const;
  std::shared_ptr<const GraphFeatures> GraphOf(int env) const;
  // gnn: drops the graphs that no worker or rollout holds any more.
  void ForgetUnusedGraphs();

  // Steps every environment with its action (in parallel); a finished episode
  // is recorded for the curve and its environment reset to a drawn benchmark.
  absl::Status Step(const std::vector<int64_t>& actions, float* rewards, uint8_t* dones);
  // An action drawn from `probs` among those `mask` allows.
  int64_t SampleAction(const float* probs, const uint8_t* mask);

  void CountUpdate() { ++updates_; }
  // Appends a row to the curve (and calls options().progress).
  void EmitRow(const UpdateLosses& losses);
  // Writes a checkpoint when one is due (every checkpoint_every steps, and at
  // the step target).
  absl::Status MaybeCheckpoint();

 private:
  struct Worker;
  explicit TrainingRun(const TrainOptions& options);
  absl::Status Validate() const;
  absl::Status Setup();
  const std::string& DrawBenchmark();
  absl::Status ResetWorker(int i, const std::string& spec);
  void EncodeGraphs();
  PolicyConfig MakeConfig() const;
  nlohmann::json RunIdentity() const;
  absl::Status MaybeResume();
  absl::Status WriteCheckpoint();
  absl::Status StartCurve();

  using Clock = std::chrono::steady_clock;
  static double SecondsSince(Clock::time_point start);
  TrainOptions o_;
  const Algorithm* algorithm_ = nullptr;
  PolicyConfig config_;
  std::vector<int> start_actions_;  // config_.start_actions()
  FeatureLayout layout_;
  int A_ = 0, F_ = 0;
  std::unique_ptr<VecEnvironment> vec_;
  std::vector<Worker> workers_;
  std::mt19937_64 rng_;
  ActorCritic net_{nullptr}, target_{nullptr};
  std::unique_ptr<torch::optim::Adam> optimizer_;
  // gnn: graph features by state, computed once while a worker or a rollout
  // step holds them (so memory follows the rollout, not the run).
  absl::flat_hash_map<Fingerprint, std::weak_ptr<const GraphFeatures>> graph_memo_;

  int64_t steps_ = 0, updates_ = 0, episodes_ = 0, resumed_from_ = 0;
  int64_t next_checkpoint_ = 0;
  double wall_before_ = 0;  // wall seconds of the invocations before a resume
  Clock::time_point start_ = Clock::now();
  Clock::time_point row_start_ = Clock::now();
  int64_t row_cache_hits_ = 0, row_steps_ = 0;
  struct FinishedEpisode {
    double episode_return = 0;
    double ratio = 0;  // (I - R) / (I - D)
  };
  std::vector<FinishedEpisode> finished_;
  bool resumed_row_ = false;
};

// The experience of one on-policy update (PPO, A2C, TRPO), flat row-major,
// step after step: row t * envs + e is environment e at step t.
struct Rollout {
  int steps_per_env = 0, envs = 0;
  std::vector<float> features, cost, log_probs, values, rewards;
  std::vector<uint8_t> masks, dones;
  std::vector<int64_t> actions;
  std::vector<float> advantages, returns;  // GAE(lambda)
  // gnn: each step's graph; steps in equal states share one.
  std::vector<std::shared_ptr<const GraphFeatures>> graphs;

  int64_t size() const { return static_cast<int64_t>(actions.size()); }
  // Copies of the rollout's columns (the update may outlive the vectors' reuse).
  torch::Tensor Features() const;
  torch::Tensor Cost() const;
  torch::Tensor Masks() const;  // bool
  torch::Tensor Actions() const;
  torch::Tensor LogProbs() const;
  torch::Tensor Advantages() const;
  torch::Tensor Returns() const;
  // gnn: the graphs of the steps `indices` (empty for mlp).
  GraphBatch Graphs(const int64_t* indices, int64_t n) const;
};

// Runs the run's policy for rollout_steps() steps (in eval mode, sampling),
// then computes advantages and returns; counts one update.
absl::Status CollectRollout(TrainingRun& run, Rollout& rollout);

// Calls fn(indices, rows, count) for the minibatches of `minibatch` rows of
// [0, n), over `epochs` passes, each in a fresh order drawn from the run's
// rng; `indices` holds the same rows as a tensor.
void ForEachMinibatch(TrainingRun& run, int64_t n, int epochs, int64_t minibatch,
                      const std::function<void(const torch::Tensor& indices, const int64_t* rows,
                                               int64_t count)>& fn);

// Fits the critic to `returns` by minibatch regression over `epochs` passes
// (TRPO's critic; PPO fits it inside its own loss). `states` are encoded.
double FitValue(TrainingRun& run, const torch::Tensor& states, const torch::Tensor& cost,
                const torch::Tensor& returns);

}  // namespace hlogym::rl

#endif  // HLOGYM_AGENTS_RL_TRAINER_H_
