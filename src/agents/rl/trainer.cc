// The shared core of the trainers: environments, encoding and stepping
// (trainer.h); the rollout is rollout.cc, the curve and checkpoints checkpoint.cc.
#include "agents/rl/trainer.h"

#include <algorithm>
#include <chrono>
#include <limits>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "agents/auto_agent.h"
#include "hlo/status_macros.h"

namespace hlogym::rl {
namespace {

constexpr Algorithm kAlgorithms[] = {
    {.name = "ppo",
     .optimizes = Algorithm::Optimizes::kActorAndCritic,
     .learning_rate = 3e-4,
     .train = &TrainPpo},
    {.name = "a2c",
     .optimizes = Algorithm::Optimizes::kActorAndCritic,
     .learning_rate = 7e-4,
     .rollout_steps_per_env = 5,
     .train = &TrainA2c},
    {.name = "trpo",
     .optimizes = Algorithm::Optimizes::kCritic,
     .learning_rate = 3e-4,
     .train = &TrainTrpo},
    // Its replay buffer would hold a graph per transition: mlp only.
    {.name = "dqn",
     .optimizes = Algorithm::Optimizes::kActor,
     .target_network = true,
     .supports_gnn = false,
     .learning_rate = 1e-4,
     .train = &TrainDqn},
};
constexpr int kDefaultRolloutSteps = 2048;

const Algorithm* FindAlgorithm(const std::string& name) {
  for (const Algorithm& a : kAlgorithms) {
    if (name == a.name) return &a;
  }
  return nullptr;
}

}  // namespace

std::vector<std::string> AlgorithmNames() {
  std::vector<std::string> names;
  for (const Algorithm& a : kAlgorithms) names.push_back(a.name);
  return names;
}
std::vector<std::string> NetworkNames() { return {"mlp", "gnn"}; }

// One environment of the run, with what its features need.
struct TrainingRun::Worker {
  Observation observation;
  std::vector<double> initial_cost;
  std::vector<uint8_t> mask;                   // 1 = the action changes the module (masking only)
  std::shared_ptr<const GraphFeatures> graph;  // gnn: the current state's
  double episode_return = 0;
  int64_t episodes_started = 0;
  absl::Status status;  // of the last parallel operation
};

torch::Tensor StateBatch::Features() {
  return torch::from_blob(features.data(), {envs, static_cast<int64_t>(features.size()) / envs},
                          torch::kFloat32);
}
torch::Tensor StateBatch::Cost() {
  return torch::from_blob(cost.data(), {envs, FeatureLayout::kCostSize}, torch::kFloat32);
}
torch::Tensor StateBatch::Masks() {
  return torch::from_blob(masks.data(), {envs, static_cast<int64_t>(masks.size()) / envs},
                          torch::kUInt8)
      .to(torch::kBool);
}

TrainingRun::TrainingRun(const TrainOptions& options) : o_(options) {}

absl::StatusOr<std::unique_ptr<TrainingRun>> TrainingRun::Start(const TrainOptions& options) {
  std::unique_ptr<TrainingRun> run(new TrainingRun(options));
  HLOGYM_RETURN_IF_ERROR(run->Setup());
  return run;
}

double TrainingRun::learning_rate() const {
  return o_.learning_rate.value_or(algorithm_->learning_rate);
}

int TrainingRun::rollout_steps() const {
  if (o_.rollout_steps) return *o_.rollout_steps;
  return algorithm_->rollout_steps_per_env > 0 ? algorithm_->rollout_steps_per_env * o_.num_envs
                                               : kDefaultRolloutSteps;
}

absl::Status TrainingRun::Validate() const {
  if (algorithm_ == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat("unknown algorithm '", o_.algo,
                                                   "' (expected one of ",
                                                   absl::StrJoin(AlgorithmNames(), ", "), ")"));
  }
  if (o_.benchmarks.empty()) return absl::InvalidArgumentError("no training benchmarks");
  if (o_.out_dir.empty()) return absl::InvalidArgumentError("no output directory (--out)");
  if (o_.total_steps < 1) return absl::InvalidArgumentError("--steps must be >= 1");
  if (o_.num_envs < 1) return absl::InvalidArgumentError("--envs must be >= 1");
  if (o_.env.traj_limit < 1) return absl::InvalidArgumentError("--traj-limit must be >= 1");
  if (rollout_steps() < o_.num_envs) {
    return absl::InvalidArgumentError("--rollout must be at least the number of environments");
  }
  if (o_.minibatch < 1 || o_.epochs < 1) {
    return absl::InvalidArgumentError("--minibatch and --epochs must be >= 1");
  }
  const std::vector<std::string> networks = NetworkNames();
  if (std::find(networks.begin(), networks.end(), o_.network) == networks.end()) {
    return absl::InvalidArgumentError(absl::StrCat("unknown network '", o_.network,
                                                   "' (expected one of ",
                                                   absl::StrJoin(networks, ", "), ")"));
  }
  const std::vector<std::string> features = FeatureNames();
  if (std::find(features.begin(), features.end(), o_.features) == features.end()) {
    return absl::InvalidArgumentError(absl::StrCat("unknown features '", o_.features,
                                                   "' (expected one of ",
                                                   absl::StrJoin(features, ", "), ")"));
  }
  if (o_.network != "mlp" && !algorithm_->supports_gnn) {
    std::vector<std::string> with_gnn;
    for (const Algorithm& a : kAlgorithms) {
      if (a.supports_gnn) with_gnn.push_back(a.name);
    }
    return absl::InvalidArgumentError(
        absl::StrCat(o_.algo, " supports only --network mlp; train a ", o_.network, " with ",
                     absl::StrJoin(with_gnn, ", ")));
  }
  if (o_.gnn_dim < 1 || o_.gnn_rounds < 0) {
    return absl::InvalidArgumentError("--gnn-dim must be >= 1 and --gnn-rounds >= 0");
  }
  for (int h : o_.hidden) {
    if (h < 1) return absl::InvalidArgumentError("hidden layer sizes must be >= 1");
  }
  return absl::OkStatus();
}

absl::Status TrainingRun::Setup() {
  algorithm_ = FindAlgorithm(o_.algo);
  HLOGYM_RETURN_IF_ERROR(Validate());
  EnvOptions env = o_.env;
  env.observation_spaces = TrainerObservationSpaces();
  if (o_.reward_shaping && env.reward_space.find("+shaped") == std::string::npos) {
    env.reward_space += "+shaped";
  }
  env.use_cache = true;
  // The actions that make auto good are a policy's too: every pass but the
  // precision-changing ones, and the pipelines as macro-actions (the default
  // among them, so that an episode can start where XLA's default ends).
  if (env.actions.empty()) env.actions = AutoActionSpace(/*allow_excess_precision=*/false);
  o_.env = env;
  HLOGYM_ASSIGN(
      vec, VecEnvironment::Create(o_.num_envs, o_.num_threads, env, PassRegistry::WithPipelines()));
  vec_ = std::move(vec);
  workers_.resize(o_.num_envs);
  A_ = vec_->env(0).num_actions();
  o_.env.actions = vec_->env(0).actions();
  config_ = MakeConfig();
  absl::StatusOr<std::vector<int>> starts = config_.start_actions();
  if (!starts.ok())
    return absl::InvalidArgumentError(absl::StrCat("--", starts.status().message()));
  start_actions_ = *std::move(starts);
  layout_ = config_.layout();
  F_ = layout_.policy_size();
  torch::set_num_threads(std::max(1, o_.num_threads));
  torch::manual_seed(o_.seed);
  rng_.seed(o_.seed);

  net_ = ActorCritic(config_);
  std::vector<torch::Tensor> trained;
  switch (algorithm_->optimizes) {
    case Algorithm::Optimizes::kActorAndCritic:
      trained = net_->parameters();
      break;
    case Algorithm::Optimizes::kCritic:
      trained = net_->CriticParameters();
      break;
    case Algorithm::Optimizes::kActor:
      trained = net_->ActorParameters();
      break;
  }
  if (algorithm_->target_network) {
    target_ = ActorCritic(config_);
    CopyParameters(net_, target_);
  }
  optimizer_ = std::make_unique<torch::optim::Adam>(
      trained, torch::optim::AdamOptions(learning_rate()).eps(1e-5));
  HLOGYM_RETURN_IF_ERROR(MaybeResume());
  HLOGYM_RETURN_IF_ERROR(StartCurve());

  // Every worker starts an episode (in parallel: the first reset of a
  // benchmark also measures its default-pipeline op count D).
  std::vector<std::string> specs;
  for (size_t i = 0; i < workers_.size(); ++i) specs.push_back(DrawBenchmark());
  vec_->ParallelForEach([&](int i) { workers_[i].status = ResetWorker(i, specs[i]); });
  for (Worker& w : workers_) {
    if (!w.status.ok()) return w.status;
  }
  return absl::OkStatus();
}

PolicyConfig TrainingRun::MakeConfig() const {
  PolicyConfig c;
  c.algo = o_.algo;
  c.actions = o_.env.actions;
  c.hidden = o_.hidden;
  c.network = o_.network;
  c.features = o_.features;
  c.gnn_dim = o_.gnn_dim;
  c.gnn_rounds = o_.gnn_rounds;
  c.traj_limit = o_.env.traj_limit;
  c.value_sees_cost = o_.value_sees_cost;
  c.action_masking = o_.action_masking;
  c.start = o_.start;
  c.reward_space = o_.env.reward_space;
  c.trained_on = o_.benchmarks;
  return c;
}

const std::string& TrainingRun::DrawBenchmark() {
  std::uniform_int_distribution<size_t> pick(0, o_.benchmarks.size() - 1);
  return o_.benchmarks[pick(rng_)];
}

absl::Status TrainingRun::ResetWorker(int i, const std::string& spec) {
  Worker& w = workers_[i];
  Environment& env = vec_->env(i);
  absl::StatusOr<Observation> observation = env.Reset(spec);
  if (!observation.ok()) return observation.status();
  // The normalized reward needs D; computing it here reports a benchmark the
  // default pipeline cannot run as a training error rather than mid-episode.
  if (absl::StatusOr<int64_t> d = env.BaselineOpCount(); !d.ok()) {
    return absl::Status(d.status().code(),
                        absl::StrCat(spec, ": default pipeline: ", d.status().message()));
  }
  // The worker's episodes take the starts in turn (deterministic, and no
  // shared generator across the parallel resets).
  int start = start_actions_[w.episodes_started++ % start_actions_.size()];
  if (start == kCoresetStart) {
    HLOGYM_ASSIGN(chosen, CoresetStartAction(env));
    start = chosen;
  }
  if (start >= 0) {  // the episode starts after the start action
    HLOGYM_ASSIGN(started, env.Step(start));
    if (!started.info.error.empty()) {
      return absl::InternalError(
          absl::StrCat(spec, ": start ", o_.env.actions[start], ": ", started.info.error));
    }
    observation = std::move(started.observation);
  }
  w.observation = std::move(*observation);
  w.initial_cost = w.observation.cost;
  w.episode_return = 0;
  if (o_.action_masking) {
    std::vector<bool> mask = env.ActionMask();
    w.mask.assign(mask.begin(), mask.end());
  }
  return absl::OkStatus();
}

void TrainingRun::Observe(StateBatch& batch) {
  const int E = num_envs();
  batch.envs = E;
  batch.features.resize(static_cast<size_t>(E) * F_);
  batch.cost.resize(static_cast<size_t>(E) * FeatureLayout::kCostSize);
  batch.masks.resize(static_cast<size_t>(E) * A_);
  for (int e = 0; e < E; ++e) {
    const Worker& w = workers_[e];
    const Environment& env = vec_->env(e);
    EncodePolicyFeatures(w.observation, env.initial_op_count(), env.episode_length(), layout_,
                         &batch.features[static_cast<size_t>(e) * F_]);
    EncodeCostFeatures(w.observation, w.initial_cost,
                       &batch.cost[static_cast<size_t>(e) * FeatureLayout::kCostSize]);
    uint8_t* mask = &batch.masks[static_cast<size_t>(e) * A_];
    for (int a = 0; a < A_; ++a) {
      // With masking, a state where no pass changes anything allows every pass
      // (the episode runs on to its limit whatever is chosen).
      mask[a] = !o_.action_masking || w.mask.empty() ? 1 : w.mask[a];
    }
    if (o_.action_masking && std::none_of(mask, mask + A_, [](uint8_t m) { return m != 0; })) {
      std::fill(mask, mask + A_, 1);
    }
  }
  EncodeGraphs();
}

void TrainingRun::EncodeGraphs() {
  if (!config_.gnn()) return;
  std::vector<uint8_t> missing(workers_.size(), 0);
  for (size_t i = 0; i < workers_.size(); ++i) {
    auto it = graph_memo_.find(vec_->env(i).state()->fingerprint());
    workers_[i].graph = it != graph_memo_.end() ? it->second.lock() : nullptr;
    missing[i] = workers_[i].graph == nullptr;
  }
  vec_->ParallelForEach([&](int i) {
    if (!missing[i]) return;
    workers_[i].graph = std::make_shared<const GraphFeatures>(
        EncodeGraph(ComputeGraphObservation(vec_->env(i).module())));
  });
  for (size_t i = 0; i < workers_.size(); ++i) {
    if (!missing[i]) continue;
    // Two workers that reached one new state share the first one's graph.
    std::weak_ptr<const GraphFeatures>& memo = graph_memo_[vec_->env(i).state()->fingerprint()];
    if (std::shared_ptr<const GraphFeatures> kept = memo.lock()) {
      workers_[i].graph = kept;
    } else {
      memo = workers_[i].graph;
    }
  }
}

void TrainingRun::ForgetUnusedGraphs() {
  absl::erase_if(graph_memo_, [](const auto& entry) { return entry.second.expired(); });
}

GraphBatch TrainingRun::CurrentGraphs() const {
  std::vector<const GraphFeatures*> graphs;
  if (config_.gnn()) {
    for (const Worker& w : workers_) graphs.push_back(w.graph.get());
  }
  return MakeGraphBatch(graphs);
}

std::shared_ptr<const GraphFeatures> TrainingRun::GraphOf(int env) const {
  return workers_[env].graph;
}

absl::Status TrainingRun::Step(const std::vector<int64_t>& actions, float* rewards,
                               uint8_t* dones) {
  const int n = num_envs();
  std::vector<std::string> next_specs;
  for (int i = 0; i < n; ++i) next_specs.push_back(DrawBenchmark());
  std::vector<FinishedEpisode> episodes(n);
  std::vector<uint8_t> hits(n, 0);
  vec_->ParallelForEach([&](int i) {
    Worker& w = workers_[i];
    Environment& env = vec_->env(i);
    absl::StatusOr<StepResult> result = env.Step(static_cast<int>(actions[i]));
    if (!result.ok()) {
      w.status = result.status();
      return;
    }
    hits[i] = result->info.cache_hit;
    rewards[i] = static_cast<float>(result->reward);
    w.episode_return += result->reward;
    const bool done = result->terminated || result->truncated;
    dones[i] = done;
    if (!done) {
      w.observation = std::move(result->observation);
      if (o_.action_masking) {
        std::vector<bool> mask = env.ActionMask();
        w.mask.assign(mask.begin(), mask.end());
      }
      w.status = absl::OkStatus();
      return;
    }
    const int64_t I = env.initial_op_count();
    absl::StatusOr<int64_t> D = env.BaselineOpCount();
    const double gain_of_default = D.ok() ? static_cast<double>(I - *D) : 0;
    episodes[i].episode_return = w.episode_return;
    episodes[i].ratio = gain_of_default > 0 ? (I - env.op_count()) / gain_of_default
                                            : std::numeric_limits<double>::quiet_NaN();
    w.status = ResetWorker(i, next_specs[i]);
  });
  for (int i = 0; i < n; ++i) {
    if (!workers_[i].status.ok()) return workers_[i].status;
    if (dones[i]) {
      finished_.push_back(episodes[i]);
      ++episodes_;
    }
    row_cache_hits_ += hits[i];
  }
  steps_ += n;
  row_steps_ += n;
  return absl::OkStatus();
}

int64_t TrainingRun::SampleAction(const float* probs, const uint8_t* mask) {
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  double total = 0;
  for (int a = 0; a < A_; ++a) total += mask[a] ? probs[a] : 0;
  double u = uniform(rng_) * total;
  int64_t last_allowed = 0;
  for (int a = 0; a < A_; ++a) {
    if (!mask[a]) continue;
    last_allowed = a;
    u -= probs[a];
    if (u <= 0) return a;
  }
  return last_allowed;  // rounding
}

double TrainingRun::SecondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

absl::StatusOr<TrainSummary> TrainingRun::Run() {
  row_start_ = Clock::now();
  HLOGYM_RETURN_IF_ERROR(algorithm_->train(*this));
  if (steps_ == resumed_from_) {
    // The checkpoint already had the steps: nothing was trained, but the
    // policy files are rewritten from it in case they were lost.
    config_.trained_steps = steps_;
    HLOGYM_RETURN_IF_ERROR(SavePolicy(o_.out_dir, config_, net_));
  }
  TrainSummary summary;
  summary.steps = steps_;
  summary.episodes = episodes_;
  summary.resumed_from = resumed_from_;
  summary.wall_seconds = SecondsSince(start_);
  summary.policy_dir = o_.out_dir;
  return summary;
}

absl::StatusOr<TrainSummary> Train(const TrainOptions& options) {
  try {
    HLOGYM_ASSIGN(run, TrainingRun::Start(options));
    return (run)->Run();
  } catch (const std::exception& e) {
    // LibTorch reports misuse with exceptions; the caller gets a status.
    return absl::InternalError(
        absl::StrCat("training failed: ", std::string(e.what()).substr(0, 500)));
  }
}

}  // namespace hlogym::rl
