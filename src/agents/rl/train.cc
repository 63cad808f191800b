// Training loops of agents/rl: rollouts on a pool of environments, PPO, A2C,
// TRPO and DQN updates, checkpoints and the learning curve.
#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <memory>
#include <numeric>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "agents/rl/features.h"
#include "agents/rl/networks.h"
#include "agents/rl/rl.h"
#include "gym/vec_env.h"
#include "nlohmann/json.hpp"
#include "text/file_io.h"

namespace hlogym::rl {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

double SecondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

constexpr char kCurveHeader[] =
    "steps,updates,episodes,mean_return,mean_ratio,policy_loss,value_loss,entropy,epsilon,"
    "steps_per_second,cache_hit_rate,wall_seconds";

// One environment of the run, with what its features need.
struct Worker {
  std::unique_ptr<Environment> env;
  Observation observation;
  std::vector<double> initial_cost;
  std::vector<uint8_t> mask;  // 1 = the action changes the module (masking only)
  std::shared_ptr<const GraphFeatures> graph;  // gnn: the current state's
  double episode_return = 0;
  absl::Status status;        // of the last parallel operation
};

// Loss sums over the minibatches of one update, for the curve.
struct LossRecord {
  double policy = 0, value = 0, entropy = 0;
  int n = 0;
};

struct FinishedEpisode {
  double episode_return = 0;
  double ratio = 0;  // (I - R) / (I - D)
};

// The collected experience of one policy-gradient update, flat row-major.
struct Rollout {
  int steps_per_env = 0, envs = 0;
  std::vector<float> features, cost, log_probs, values, rewards;
  std::vector<uint8_t> masks, dones;
  std::vector<int64_t> actions;
  std::vector<float> advantages, returns;
  // gnn: each step's graph; steps in equal states share one.
  std::vector<std::shared_ptr<const GraphFeatures>> graphs;
};

torch::Tensor FloatTensor(std::vector<float>& data, std::vector<int64_t> shape) {
  return torch::from_blob(data.data(), shape, torch::kFloat32).clone();
}

torch::Tensor FlatConcat(const std::vector<torch::Tensor>& tensors) {
  std::vector<torch::Tensor> flat;
  flat.reserve(tensors.size());
  for (const torch::Tensor& t : tensors) flat.push_back(t.reshape({-1}));
  return torch::cat(flat);
}

void AssignFlat(const std::vector<torch::Tensor>& params, const torch::Tensor& flat) {
  torch::NoGradGuard no_grad;
  int64_t offset = 0;
  for (const torch::Tensor& p : params) {
    int64_t n = p.numel();
    p.copy_(flat.slice(0, offset, offset + n).view_as(p));
    offset += n;
  }
}

class Trainer {
 public:
  explicit Trainer(const TrainOptions& options) : o_(options) {}
  absl::StatusOr<TrainSummary> Run();

 private:
  absl::Status Validate() const;
  absl::Status Setup();
  const std::string& DrawBenchmark();
  absl::Status ResetWorker(Worker& w, const std::string& spec);
  void Encode(const Worker& w, float* features, float* cost, uint8_t* mask) const;
  // gnn: points every worker at its state's graph features.
  void EncodeGraphs();
  // The graph batch of the workers' states, or of the rollout steps
  // `indices` (empty for mlp).
  GraphBatch WorkerGraphs() const;
  GraphBatch RolloutGraphs(const Rollout& r, const int64_t* indices, int64_t n) const;
  // Steps every worker with its action (in parallel); finished episodes are
  // recorded and their environments reset to a drawn benchmark.
  absl::Status StepAll(const std::vector<int64_t>& actions, float* rewards, uint8_t* dones);
  int64_t SampleAction(const float* probs, const uint8_t* mask);

  absl::Status RunPolicyGradient();
  absl::Status RunDqn();
  void Gae(Rollout& r, const std::vector<float>& last_values) const;
  void UpdatePpo(Rollout& r, int epochs, int minibatch, bool clipped);
  void UpdateTrpo(Rollout& r);
  void UpdateValue(const torch::Tensor& states, const torch::Tensor& c, const torch::Tensor& ret,
                   torch::optim::Optimizer& optimizer, const std::vector<torch::Tensor>& params);

  PolicyConfig MakeConfig() const;
  nlohmann::json RunIdentity() const;
  absl::Status MaybeResume();
  absl::Status WriteCheckpoint();
  absl::Status StartCurve();
  void EmitRow(double policy_loss, double value_loss, double entropy, double epsilon);

  TrainOptions o_;
  PolicyConfig config_;
  FeatureLayout layout_;
  int A_ = 0, F_ = 0;
  std::vector<Worker> workers_;
  std::unique_ptr<ThreadPool> pool_;
  std::mt19937_64 rng_;
  ActorCritic net_{nullptr}, target_{nullptr};
  std::unique_ptr<torch::optim::Adam> optimizer_;  // PPO/A2C: all; TRPO: critic; DQN: Q
  std::shared_ptr<StepCache> cache_;
  // gnn: graph features by state, computed once while a worker or a rollout
  // step holds them (so memory follows the rollout, not the run).
  absl::flat_hash_map<Fingerprint, std::weak_ptr<const GraphFeatures>> graph_memo_;

  int64_t steps_ = 0, updates_ = 0, episodes_ = 0, resumed_from_ = 0;
  int64_t next_checkpoint_ = 0;
  double wall_before_ = 0;  // wall seconds of the invocations before a resume
  Clock::time_point start_ = Clock::now();
  Clock::time_point row_start_ = Clock::now();
  int64_t row_steps_start_ = 0, row_cache_hits_ = 0, row_steps_ = 0;
  std::vector<FinishedEpisode> finished_;
  bool resumed_row_ = false;
  LossRecord losses_;
};

absl::Status Trainer::Validate() const {
  const std::vector<std::string> algos = AlgorithmNames();
  if (std::find(algos.begin(), algos.end(), o_.algo) == algos.end()) {
    return absl::InvalidArgumentError(absl::StrCat("unknown algorithm '", o_.algo, "' (expected one of ",
                                                   absl::StrJoin(algos, ", "), ")"));
  }
  if (o_.benchmarks.empty()) return absl::InvalidArgumentError("no training benchmarks");
  if (o_.out_dir.empty()) return absl::InvalidArgumentError("no output directory (--out)");
  if (o_.total_steps < 1) return absl::InvalidArgumentError("--steps must be >= 1");
  if (o_.num_envs < 1) return absl::InvalidArgumentError("--envs must be >= 1");
  if (o_.env.traj_limit < 1) return absl::InvalidArgumentError("--traj-limit must be >= 1");
  if (o_.rollout_steps < o_.num_envs) {
    return absl::InvalidArgumentError("--rollout must be at least the number of environments");
  }
  if (o_.minibatch < 1 || o_.epochs < 1) return absl::InvalidArgumentError("--minibatch and --epochs must be >= 1");
  const std::vector<std::string> networks = NetworkNames();
  if (std::find(networks.begin(), networks.end(), o_.network) == networks.end()) {
    return absl::InvalidArgumentError(absl::StrCat("unknown network '", o_.network, "' (expected one of ",
                                                   absl::StrJoin(networks, ", "), ")"));
  }
  if (o_.network == "gnn" && o_.algo == "dqn") {
    // Its replay buffer would hold a graph per transition.
    return absl::InvalidArgumentError("dqn supports only --network mlp; train a gnn with ppo, a2c or trpo");
  }
  if (o_.gnn_dim < 1 || o_.gnn_rounds < 0) {
    return absl::InvalidArgumentError("--gnn-dim must be >= 1 and --gnn-rounds >= 0");
  }
  for (int h : o_.hidden) {
    if (h < 1) return absl::InvalidArgumentError("hidden layer sizes must be >= 1");
  }
  return absl::OkStatus();
}

absl::Status Trainer::Setup() {
  if (absl::Status s = Validate(); !s.ok()) return s;
  EnvOptions env = o_.env;
  env.observation_spaces = RequiredObservationSpaces();
  if (o_.reward_shaping && env.reward_space.find("+shaped") == std::string::npos) {
    env.reward_space += "+shaped";
  }
  env.use_cache = true;
  o_.env = env;
  cache_ = std::make_shared<StepCache>(env.cache_max_instructions);
  workers_.resize(o_.num_envs);
  for (Worker& w : workers_) {
    absl::StatusOr<std::unique_ptr<Environment>> made = Environment::Create(env, PassRegistry::Builtin(), cache_);
    if (!made.ok()) return made.status();
    w.env = std::move(*made);
  }
  A_ = workers_[0].env->num_actions();
  o_.env.actions = workers_[0].env->actions();
  config_ = MakeConfig();
  layout_ = config_.layout();
  F_ = layout_.policy_size();
  pool_ = std::make_unique<ThreadPool>(std::max(1, o_.num_threads));
  torch::set_num_threads(std::max(1, o_.num_threads));
  torch::manual_seed(o_.seed);
  rng_.seed(o_.seed);

  net_ = ActorCritic(config_);
  if (o_.algo == "dqn") {
    target_ = ActorCritic(config_);
    CopyParameters(net_, target_);
    optimizer_ = std::make_unique<torch::optim::Adam>(
        net_->ActorParameters(), torch::optim::AdamOptions(o_.learning_rate).eps(1e-5));
  } else if (o_.algo == "trpo") {
    optimizer_ = std::make_unique<torch::optim::Adam>(
        net_->CriticParameters(), torch::optim::AdamOptions(o_.learning_rate).eps(1e-5));
  } else {
    optimizer_ = std::make_unique<torch::optim::Adam>(
        net_->parameters(), torch::optim::AdamOptions(o_.learning_rate).eps(1e-5));
  }
  if (absl::Status s = MaybeResume(); !s.ok()) return s;
  if (absl::Status s = StartCurve(); !s.ok()) return s;

  // Every worker starts an episode (in parallel: the first reset of a
  // benchmark also measures its default-pipeline op count D).
  std::vector<std::string> specs;
  for (size_t i = 0; i < workers_.size(); ++i) specs.push_back(DrawBenchmark());
  pool_->ParallelFor(static_cast<int>(workers_.size()),
                     [&](int i) { workers_[i].status = ResetWorker(workers_[i], specs[i]); });
  for (Worker& w : workers_) {
    if (!w.status.ok()) return w.status;
  }
  return absl::OkStatus();
}

PolicyConfig Trainer::MakeConfig() const {
  PolicyConfig c;
  c.algo = o_.algo;
  c.actions = o_.env.actions;
  c.hidden = o_.hidden;
  c.network = o_.network;
  c.gnn_dim = o_.gnn_dim;
  c.gnn_rounds = o_.gnn_rounds;
  c.traj_limit = o_.env.traj_limit;
  c.value_sees_cost = o_.value_sees_cost;
  c.action_masking = o_.action_masking;
  c.reward_space = o_.env.reward_space;
  c.trained_on = o_.benchmarks;
  return c;
}

const std::string& Trainer::DrawBenchmark() {
  std::uniform_int_distribution<size_t> pick(0, o_.benchmarks.size() - 1);
  return o_.benchmarks[pick(rng_)];
}

absl::Status Trainer::ResetWorker(Worker& w, const std::string& spec) {
  absl::StatusOr<Observation> observation = w.env->Reset(spec);
  if (!observation.ok()) return observation.status();
  // The normalized reward needs D; computing it here reports a benchmark the
  // default pipeline cannot run as a training error rather than mid-episode.
  if (absl::StatusOr<int64_t> d = w.env->BaselineOpCount(); !d.ok()) {
    return absl::Status(d.status().code(), absl::StrCat(spec, ": default pipeline: ", d.status().message()));
  }
  w.observation = std::move(*observation);
  w.initial_cost = w.observation.cost;
  w.episode_return = 0;
  if (o_.action_masking) {
    std::vector<bool> mask = w.env->ActionMask();
    w.mask.assign(mask.begin(), mask.end());
  }
  return absl::OkStatus();
}

void Trainer::Encode(const Worker& w, float* features, float* cost, uint8_t* mask) const {
  EncodePolicyFeatures(w.observation, w.env->initial_op_count(), w.env->episode_length(), layout_,
                       features);
  EncodeCostFeatures(w.observation, w.initial_cost, cost);
  for (int a = 0; a < A_; ++a) {
    // With masking, a state where no pass changes anything allows every pass
    // (the episode runs on to its limit whatever is chosen).
    mask[a] = !o_.action_masking || w.mask.empty() ? 1 : w.mask[a];
  }
  if (o_.action_masking && std::none_of(mask, mask + A_, [](uint8_t m) { return m != 0; })) {
    std::fill(mask, mask + A_, 1);
  }
}

void Trainer::EncodeGraphs() {
  if (!config_.gnn()) return;
  std::vector<int> missing;
  for (int i = 0; i < static_cast<int>(workers_.size()); ++i) {
    Worker& w = workers_[i];
    auto it = graph_memo_.find(w.env->state()->fingerprint());
    w.graph = it != graph_memo_.end() ? it->second.lock() : nullptr;
    if (!w.graph) missing.push_back(i);
  }
  pool_->ParallelFor(static_cast<int>(missing.size()), [&](int k) {
    Worker& w = workers_[missing[k]];
    w.graph = std::make_shared<const GraphFeatures>(EncodeGraph(ComputeGraphObservation(w.env->module())));
  });
  for (int i : missing) {
    // Two workers that reached one new state share the first one's graph.
    std::weak_ptr<const GraphFeatures>& memo = graph_memo_[workers_[i].env->state()->fingerprint()];
    if (std::shared_ptr<const GraphFeatures> kept = memo.lock()) {
      workers_[i].graph = kept;
    } else {
      memo = workers_[i].graph;
    }
  }
}

GraphBatch Trainer::WorkerGraphs() const {
  std::vector<const GraphFeatures*> graphs;
  if (config_.gnn()) {
    for (const Worker& w : workers_) graphs.push_back(w.graph.get());
  }
  return MakeGraphBatch(graphs);
}

GraphBatch Trainer::RolloutGraphs(const Rollout& r, const int64_t* indices, int64_t n) const {
  std::vector<const GraphFeatures*> graphs;
  if (config_.gnn()) {
    for (int64_t i = 0; i < n; ++i) graphs.push_back(r.graphs[indices[i]].get());
  }
  return MakeGraphBatch(graphs);
}

absl::Status Trainer::StepAll(const std::vector<int64_t>& actions, float* rewards, uint8_t* dones) {
  const int n = static_cast<int>(workers_.size());
  std::vector<std::string> next_specs;
  for (int i = 0; i < n; ++i) next_specs.push_back(DrawBenchmark());
  std::vector<FinishedEpisode> episodes(n);
  std::vector<uint8_t> hits(n, 0);
  pool_->ParallelFor(n, [&](int i) {
    Worker& w = workers_[i];
    absl::StatusOr<StepResult> result = w.env->Step(static_cast<int>(actions[i]));
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
        std::vector<bool> mask = w.env->ActionMask();
        w.mask.assign(mask.begin(), mask.end());
      }
      w.status = absl::OkStatus();
      return;
    }
    const int64_t I = w.env->initial_op_count();
    absl::StatusOr<int64_t> D = w.env->BaselineOpCount();
    const double gain_of_default = D.ok() ? static_cast<double>(I - *D) : 0;
    episodes[i].episode_return = w.episode_return;
    episodes[i].ratio = gain_of_default > 0 ? (I - w.env->op_count()) / gain_of_default
                                            : std::numeric_limits<double>::quiet_NaN();
    w.status = ResetWorker(w, next_specs[i]);
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

int64_t Trainer::SampleAction(const float* probs, const uint8_t* mask) {
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

// ---------------------------------------------------------------------------
// PPO, A2C, TRPO

void Trainer::Gae(Rollout& r, const std::vector<float>& last_values) const {
  const int E = r.envs, T = r.steps_per_env;
  r.advantages.assign(static_cast<size_t>(T) * E, 0);
  r.returns.assign(static_cast<size_t>(T) * E, 0);
  for (int e = 0; e < E; ++e) {
    float gae = 0;
    for (int t = T - 1; t >= 0; --t) {
      const size_t i = static_cast<size_t>(t) * E + e;
      // Episodes end at traj_limit and the step is part of the state, so an
      // ended episode is terminal: nothing follows it.
      const float not_done = r.dones[i] ? 0.0f : 1.0f;
      const float next_value = t == T - 1 ? last_values[e] : r.values[i + E];
      const float delta = r.rewards[i] + static_cast<float>(o_.gamma) * next_value * not_done - r.values[i];
      gae = delta + static_cast<float>(o_.gamma * o_.gae_lambda) * not_done * gae;
      r.advantages[i] = gae;
      r.returns[i] = gae + r.values[i];
    }
  }
}

absl::Status Trainer::RunPolicyGradient() {
  const int E = static_cast<int>(workers_.size());
  const int T = std::max(1, o_.rollout_steps / E);
  Rollout r;
  r.envs = E;
  r.steps_per_env = T;
  std::vector<float> step_features(static_cast<size_t>(E) * F_), step_cost(static_cast<size_t>(E) * 2);
  std::vector<uint8_t> step_masks(static_cast<size_t>(E) * A_);

  auto encode_all = [&] {
    for (int e = 0; e < E; ++e) {
      Encode(workers_[e], &step_features[static_cast<size_t>(e) * F_], &step_cost[static_cast<size_t>(e) * 2],
             &step_masks[static_cast<size_t>(e) * A_]);
    }
    EncodeGraphs();
  };

  while (steps_ < o_.total_steps) {
    r.features.clear(); r.cost.clear(); r.masks.clear(); r.actions.clear();
    r.log_probs.clear(); r.values.clear(); r.rewards.assign(static_cast<size_t>(T) * E, 0);
    r.dones.assign(static_cast<size_t>(T) * E, 0);
    r.graphs.clear();
    // The previous rollout's graphs are gone (but for the workers' own).
    absl::erase_if(graph_memo_, [](const auto& entry) { return entry.second.expired(); });
    net_->eval();
    for (int t = 0; t < T; ++t) {
      encode_all();
      std::vector<int64_t> actions(E);
      {
        torch::NoGradGuard no_grad;
        torch::Tensor x = torch::from_blob(step_features.data(), {E, F_}, torch::kFloat32);
        torch::Tensor c = torch::from_blob(step_cost.data(), {E, 2}, torch::kFloat32);
        torch::Tensor m = torch::from_blob(step_masks.data(), {E, A_}, torch::kUInt8).to(torch::kBool);
        torch::Tensor state = net_->Encode(x, WorkerGraphs());
        torch::Tensor logits = MaskLogits(net_->Logits(state), m);
        torch::Tensor probs = torch::softmax(logits, 1).contiguous();
        torch::Tensor log_probs = torch::log_softmax(logits, 1).contiguous();
        torch::Tensor values = net_->Value(state, c).contiguous();
        const float* p = probs.data_ptr<float>();
        const float* lp = log_probs.data_ptr<float>();
        const float* v = values.data_ptr<float>();
        for (int e = 0; e < E; ++e) {
          actions[e] = SampleAction(p + static_cast<size_t>(e) * A_, &step_masks[static_cast<size_t>(e) * A_]);
          r.log_probs.push_back(lp[static_cast<size_t>(e) * A_ + actions[e]]);
          r.values.push_back(v[e]);
        }
      }
      r.features.insert(r.features.end(), step_features.begin(), step_features.end());
      r.cost.insert(r.cost.end(), step_cost.begin(), step_cost.end());
      r.masks.insert(r.masks.end(), step_masks.begin(), step_masks.end());
      r.actions.insert(r.actions.end(), actions.begin(), actions.end());
      if (config_.gnn()) {
        for (const Worker& w : workers_) r.graphs.push_back(w.graph);
      }
      if (absl::Status s = StepAll(actions, &r.rewards[static_cast<size_t>(t) * E], &r.dones[static_cast<size_t>(t) * E]);
          !s.ok()) {
        return s;
      }
    }
    encode_all();
    std::vector<float> last_values(E);
    {
      torch::NoGradGuard no_grad;
      torch::Tensor x = torch::from_blob(step_features.data(), {E, F_}, torch::kFloat32);
      torch::Tensor c = torch::from_blob(step_cost.data(), {E, 2}, torch::kFloat32);
      torch::Tensor v = net_->Value(net_->Encode(x, WorkerGraphs()), c).contiguous();
      std::copy(v.data_ptr<float>(), v.data_ptr<float>() + E, last_values.begin());
    }
    Gae(r, last_values);
    net_->train();
    ++updates_;
    if (o_.algo == "ppo") {
      UpdatePpo(r, o_.epochs, o_.minibatch, /*clipped=*/true);
    } else if (o_.algo == "a2c") {
      UpdatePpo(r, /*epochs=*/1, /*minibatch=*/T * E, /*clipped=*/false);
    } else {
      UpdateTrpo(r);
    }
    if (steps_ >= next_checkpoint_ || steps_ >= o_.total_steps) {
      if (absl::Status s = WriteCheckpoint(); !s.ok()) return s;
    }
  }
  return absl::OkStatus();
}

void Trainer::UpdatePpo(Rollout& r, int epochs, int minibatch, bool clipped) {
  const int64_t N = static_cast<int64_t>(r.actions.size());
  torch::Tensor X = FloatTensor(r.features, {N, F_});
  torch::Tensor C = FloatTensor(r.cost, {N, 2});
  torch::Tensor M = torch::from_blob(r.masks.data(), {N, A_}, torch::kUInt8).to(torch::kBool);
  torch::Tensor actions = torch::from_blob(r.actions.data(), {N}, torch::kInt64).clone();
  torch::Tensor old_log_probs = FloatTensor(r.log_probs, {N});
  torch::Tensor advantages = FloatTensor(r.advantages, {N});
  torch::Tensor returns = FloatTensor(r.returns, {N});
  std::vector<int64_t> order(N);
  for (int64_t i = 0; i < N; ++i) order[i] = i;
  losses_ = {};
  for (int epoch = 0; epoch < epochs; ++epoch) {
    std::shuffle(order.begin(), order.end(), rng_);
    for (int64_t begin = 0; begin < N; begin += minibatch) {
      const int64_t end = std::min<int64_t>(N, begin + minibatch);
      torch::Tensor idx = torch::from_blob(order.data() + begin, {end - begin}, torch::kInt64).clone();
      torch::Tensor x = X.index_select(0, idx), c = C.index_select(0, idx), m = M.index_select(0, idx);
      torch::Tensor a = actions.index_select(0, idx);
      torch::Tensor adv = advantages.index_select(0, idx);
      if (adv.numel() > 1) adv = (adv - adv.mean()) / (adv.std() + 1e-8);
      torch::Tensor state = net_->Encode(x, RolloutGraphs(r, order.data() + begin, end - begin));
      torch::Tensor logits = MaskLogits(net_->Logits(state), m);
      torch::Tensor log_probs_all = torch::log_softmax(logits, 1);
      torch::Tensor log_probs = log_probs_all.gather(1, a.unsqueeze(1)).squeeze(1);
      torch::Tensor entropy = -(torch::softmax(logits, 1) * log_probs_all).sum(1).mean();
      torch::Tensor policy_loss;
      if (clipped) {
        torch::Tensor ratio = torch::exp(log_probs - old_log_probs.index_select(0, idx));
        policy_loss = -torch::min(ratio * adv, torch::clamp(ratio, 1 - o_.clip, 1 + o_.clip) * adv).mean();
      } else {
        policy_loss = -(log_probs * adv).mean();
      }
      torch::Tensor value_loss = (net_->Value(state, c) - returns.index_select(0, idx)).pow(2).mean();
      torch::Tensor loss = policy_loss + o_.value_coef * value_loss - o_.entropy_coef * entropy;
      optimizer_->zero_grad();
      loss.backward();
      torch::nn::utils::clip_grad_norm_(net_->parameters(), o_.max_grad_norm);
      optimizer_->step();
      losses_.policy += policy_loss.item<double>();
      losses_.value += value_loss.item<double>();
      losses_.entropy += entropy.item<double>();
      ++losses_.n;
    }
  }
  const double n = std::max(1, losses_.n);
  EmitRow(losses_.policy / n, losses_.value / n, losses_.entropy / n, 0);
}

void Trainer::UpdateValue(const torch::Tensor& states, const torch::Tensor& c_all, const torch::Tensor& ret_all,
                          torch::optim::Optimizer& optimizer, const std::vector<torch::Tensor>& params) {
  const int64_t N = states.size(0);
  std::vector<int64_t> order(N);
  for (int64_t i = 0; i < N; ++i) order[i] = i;
  double total = 0;
  int count = 0;
  for (int epoch = 0; epoch < o_.epochs; ++epoch) {
    std::shuffle(order.begin(), order.end(), rng_);
    for (int64_t begin = 0; begin < N; begin += o_.minibatch) {
      const int64_t end = std::min<int64_t>(N, begin + o_.minibatch);
      torch::Tensor idx = torch::from_blob(order.data() + begin, {end - begin}, torch::kInt64).clone();
      torch::Tensor loss =
          (net_->Value(states.index_select(0, idx), c_all.index_select(0, idx)) - ret_all.index_select(0, idx))
              .pow(2)
              .mean();
      optimizer.zero_grad();
      loss.backward();
      torch::nn::utils::clip_grad_norm_(params, o_.max_grad_norm);
      optimizer.step();
      total += loss.item<double>();
      ++count;
    }
  }
  losses_.value = total / std::max(1, count);
}

void Trainer::UpdateTrpo(Rollout& r) {
  const int64_t N = static_cast<int64_t>(r.actions.size());
  torch::Tensor X = FloatTensor(r.features, {N, F_});
  torch::Tensor C = FloatTensor(r.cost, {N, 2});
  torch::Tensor M = torch::from_blob(r.masks.data(), {N, A_}, torch::kUInt8).to(torch::kBool);
  torch::Tensor actions = torch::from_blob(r.actions.data(), {N}, torch::kInt64).clone().unsqueeze(1);
  torch::Tensor adv = FloatTensor(r.advantages, {N});
  adv = (adv - adv.mean()) / (adv.std() + 1e-8);
  torch::Tensor returns = FloatTensor(r.returns, {N});
  std::vector<torch::Tensor> params = net_->ActorParameters();
  std::vector<int64_t> all_steps(N);
  std::iota(all_steps.begin(), all_steps.end(), 0);
  const GraphBatch graphs = RolloutGraphs(r, all_steps.data(), N);
  auto masked_logits = [&] { return MaskLogits(net_->Logits(net_->Encode(X, graphs)), M); };

  torch::Tensor old_log_probs_all;
  {
    torch::NoGradGuard no_grad;
    old_log_probs_all = torch::log_softmax(masked_logits(), 1);
  }
  torch::Tensor old_probs = old_log_probs_all.exp();
  torch::Tensor old_log_probs = old_log_probs_all.gather(1, actions).squeeze(1);
  auto surrogate = [&] {
    torch::Tensor log_probs = torch::log_softmax(masked_logits(), 1).gather(1, actions).squeeze(1);
    return (torch::exp(log_probs - old_log_probs) * adv).mean();
  };
  auto kl = [&] {
    torch::Tensor log_probs_all = torch::log_softmax(masked_logits(), 1);
    return (old_probs * (old_log_probs_all - log_probs_all)).sum(1).mean();
  };
  auto fisher_vector = [&](const torch::Tensor& v) {
    torch::Tensor k = kl();
    std::vector<torch::Tensor> grads = torch::autograd::grad({k}, params, {}, /*retain_graph=*/true,
                                                             /*create_graph=*/true);
    torch::Tensor grad_v = (FlatConcat(grads) * v).sum();
    std::vector<torch::Tensor> hv = torch::autograd::grad({grad_v}, params);
    return FlatConcat(hv).detach() + o_.cg_damping * v;
  };

  torch::Tensor loss = surrogate();
  torch::Tensor g = FlatConcat(torch::autograd::grad({loss}, params)).detach();
  // Conjugate gradient: x ~= F^-1 g.
  torch::Tensor x = torch::zeros_like(g), residual = g.clone(), direction = g.clone();
  double rr = residual.dot(residual).item<double>();
  for (int i = 0; i < o_.cg_iterations && rr > 1e-10; ++i) {
    torch::Tensor fd = fisher_vector(direction);
    double alpha = rr / std::max(1e-12, direction.dot(fd).item<double>());
    x += alpha * direction;
    residual -= alpha * fd;
    double rr_next = residual.dot(residual).item<double>();
    direction = residual + (rr_next / rr) * direction;
    rr = rr_next;
  }
  const double shs = 0.5 * x.dot(fisher_vector(x)).item<double>();
  torch::Tensor full_step = x * std::sqrt(o_.max_kl / std::max(1e-12, shs));
  torch::Tensor old_params = FlatConcat(params).detach().clone();
  const double old_loss = loss.item<double>();
  double accepted_loss = old_loss;
  bool accepted = false;
  for (int k = 0; k < 10 && !accepted; ++k) {
    const double fraction = std::pow(0.5, k);
    AssignFlat(params, old_params + fraction * full_step);
    torch::NoGradGuard no_grad;
    const double new_loss = surrogate().item<double>();
    if (kl().item<double>() <= 1.5 * o_.max_kl && new_loss > old_loss) {
      accepted = true;
      accepted_loss = new_loss;
    }
  }
  if (!accepted) AssignFlat(params, old_params);

  double entropy;
  torch::Tensor states;  // encoded once: the critic does not train the encoder
  {
    torch::NoGradGuard no_grad;
    torch::Tensor log_probs_all = torch::log_softmax(masked_logits(), 1);
    entropy = -(log_probs_all.exp() * log_probs_all).sum(1).mean().item<double>();
    states = net_->Encode(X, graphs);
  }
  UpdateValue(states, C, returns, *optimizer_, net_->CriticParameters());
  EmitRow(-accepted_loss, losses_.value, entropy, 0);
}

// ---------------------------------------------------------------------------
// DQN

// mlp only (Validate): the Q-network reads the policy features as they are.
absl::Status Trainer::RunDqn() {
  const int E = static_cast<int>(workers_.size());
  const size_t capacity = static_cast<size_t>(std::max(o_.replay_size, o_.minibatch));
  // Ring buffer of transitions (s, a, r, s', done, mask of s').
  std::vector<float> s(capacity * F_), s_next(capacity * F_), rewards(capacity);
  std::vector<uint8_t> next_masks(capacity * A_), dones(capacity);
  std::vector<int64_t> actions(capacity);
  size_t size = 0, head = 0;

  std::vector<float> features(static_cast<size_t>(E) * F_), cost(static_cast<size_t>(E) * 2);
  std::vector<uint8_t> masks(static_cast<size_t>(E) * A_);
  std::vector<float> step_rewards(E);
  std::vector<uint8_t> step_dones(E);
  auto encode_all = [&] {
    for (int e = 0; e < E; ++e) {
      Encode(workers_[e], &features[static_cast<size_t>(e) * F_], &cost[static_cast<size_t>(e) * 2],
             &masks[static_cast<size_t>(e) * A_]);
    }
  };
  auto epsilon_at = [&](int64_t step) {
    const double decay_steps = std::max(1.0, o_.epsilon_fraction * static_cast<double>(o_.total_steps));
    const double f = std::min(1.0, static_cast<double>(step) / decay_steps);
    return o_.epsilon_start + f * (o_.epsilon_end - o_.epsilon_start);
  };
  int64_t since_train = 0, since_target = 0, since_row = 0;
  double loss_sum = 0;
  int loss_count = 0;
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  encode_all();
  while (steps_ < o_.total_steps) {
    const double epsilon = epsilon_at(steps_);
    std::vector<int64_t> chosen(E);
    {
      torch::NoGradGuard no_grad;
      torch::Tensor x = torch::from_blob(features.data(), {E, F_}, torch::kFloat32);
      torch::Tensor m = torch::from_blob(masks.data(), {E, A_}, torch::kUInt8).to(torch::kBool);
      torch::Tensor greedy = MaskLogits(net_->Logits(x), m).argmax(1).contiguous();
      for (int e = 0; e < E; ++e) {
        if (uniform(rng_) < epsilon) {
          std::vector<int> allowed;
          for (int a = 0; a < A_; ++a) {
            if (masks[static_cast<size_t>(e) * A_ + a]) allowed.push_back(a);
          }
          chosen[e] = allowed[std::uniform_int_distribution<size_t>(0, allowed.size() - 1)(rng_)];
        } else {
          chosen[e] = greedy.data_ptr<int64_t>()[e];
        }
      }
    }
    std::vector<float> before = features;
    if (absl::Status st = StepAll(chosen, step_rewards.data(), step_dones.data()); !st.ok()) return st;
    encode_all();
    for (int e = 0; e < E; ++e) {
      std::copy_n(&before[static_cast<size_t>(e) * F_], F_, &s[head * F_]);
      std::copy_n(&features[static_cast<size_t>(e) * F_], F_, &s_next[head * F_]);
      std::copy_n(&masks[static_cast<size_t>(e) * A_], A_, &next_masks[head * A_]);
      actions[head] = chosen[e];
      rewards[head] = step_rewards[e];
      dones[head] = step_dones[e];
      head = (head + 1) % capacity;
      size = std::min(capacity, size + 1);
    }
    since_train += E;
    since_target += E;
    since_row += E;
    net_->train();
    while (steps_ >= o_.learning_starts && since_train >= o_.train_every && size >= static_cast<size_t>(o_.minibatch)) {
      since_train -= o_.train_every;
      std::vector<int64_t> batch(o_.minibatch);
      std::uniform_int_distribution<size_t> pick(0, size - 1);
      for (int64_t& b : batch) b = static_cast<int64_t>(pick(rng_));
      torch::Tensor idx = torch::from_blob(batch.data(), {o_.minibatch}, torch::kInt64).clone();
      const int64_t n = static_cast<int64_t>(capacity);
      torch::Tensor S = torch::from_blob(s.data(), {n, F_}, torch::kFloat32).index_select(0, idx);
      torch::Tensor S2 = torch::from_blob(s_next.data(), {n, F_}, torch::kFloat32).index_select(0, idx);
      torch::Tensor M2 = torch::from_blob(next_masks.data(), {n, A_}, torch::kUInt8).index_select(0, idx).to(torch::kBool);
      torch::Tensor Acts = torch::from_blob(actions.data(), {n}, torch::kInt64).index_select(0, idx).unsqueeze(1);
      torch::Tensor R = torch::from_blob(rewards.data(), {n}, torch::kFloat32).index_select(0, idx);
      torch::Tensor Dn = torch::from_blob(dones.data(), {n}, torch::kUInt8).index_select(0, idx).to(torch::kFloat32);
      torch::Tensor target;
      {
        torch::NoGradGuard no_grad;
        // Double DQN: the online network picks, the target network values.
        torch::Tensor best = MaskLogits(net_->Logits(S2), M2).argmax(1, /*keepdim=*/true);
        torch::Tensor next_q = target_->Logits(S2).gather(1, best).squeeze(1);
        target = R + static_cast<float>(o_.gamma) * (1 - Dn) * next_q;
      }
      torch::Tensor q = net_->Logits(S).gather(1, Acts).squeeze(1);
      torch::Tensor loss = torch::smooth_l1_loss(q, target);
      optimizer_->zero_grad();
      loss.backward();
      torch::nn::utils::clip_grad_norm_(net_->ActorParameters(), 10.0);
      optimizer_->step();
      loss_sum += loss.item<double>();
      ++loss_count;
      ++updates_;
    }
    if (since_target >= o_.target_update) {
      since_target = 0;
      CopyParameters(net_, target_);
    }
    if (since_row >= o_.rollout_steps || steps_ >= o_.total_steps) {
      since_row = 0;
      EmitRow(0, loss_count ? loss_sum / loss_count : std::numeric_limits<double>::quiet_NaN(), 0, epsilon);
      loss_sum = 0;
      loss_count = 0;
    }
    if (steps_ >= next_checkpoint_ || steps_ >= o_.total_steps) {
      if (absl::Status st = WriteCheckpoint(); !st.ok()) return st;
    }
  }
  return absl::OkStatus();
}

// ---------------------------------------------------------------------------
// Curve, checkpoints, resume

absl::Status Trainer::StartCurve() {
  const std::string path = o_.out_dir + "/curve.csv";
  std::string kept = std::string(kCurveHeader) + "\n";
  if (resumed_from_ > 0) {
    // Keep the rows up to the checkpoint; rows written after it are replaced
    // by the resumed run's own.
    std::ifstream in(path);
    std::string line;
    bool header = true;
    while (std::getline(in, line)) {
      if (header) { header = false; continue; }
      if (line.empty()) continue;
      int64_t step = std::atoll(line.c_str());
      if (step <= resumed_from_) kept += line + "\n";
    }
  }
  return WriteTextFileAtomically(path, kept);
}

void Trainer::EmitRow(double policy_loss, double value_loss, double entropy, double epsilon) {
  TrainProgress p;
  p.steps = steps_;
  p.total_steps = o_.total_steps;
  p.updates = updates_;
  p.episodes = episodes_;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  p.mean_return = nan;
  p.mean_ratio = nan;
  if (!finished_.empty()) {
    double returns = 0, ratios = 0;
    int counted = 0;
    for (const FinishedEpisode& e : finished_) {
      returns += e.episode_return;
      if (!std::isnan(e.ratio)) {
        ratios += e.ratio;
        ++counted;
      }
    }
    p.mean_return = returns / finished_.size();
    if (counted > 0) p.mean_ratio = ratios / counted;
  }
  finished_.clear();
  p.policy_loss = policy_loss;
  p.value_loss = value_loss;
  p.entropy = entropy;
  p.epsilon = epsilon;
  const double row_seconds = SecondsSince(row_start_);
  p.steps_per_second = row_seconds > 0 ? row_steps_ / row_seconds : 0;
  p.cache_hit_rate = row_steps_ > 0 ? static_cast<double>(row_cache_hits_) / row_steps_ : 0;
  p.wall_seconds = wall_before_ + SecondsSince(start_);
  p.resumed = resumed_row_;
  resumed_row_ = false;
  row_start_ = Clock::now();
  row_steps_ = 0;
  row_cache_hits_ = 0;

  std::ofstream out(o_.out_dir + "/curve.csv", std::ios::app);
  out << absl::StrFormat("%d,%d,%d,%.6g,%.6g,%.6g,%.6g,%.6g,%.4g,%.1f,%.4f,%.1f\n", p.steps, p.updates,
                         p.episodes, p.mean_return, p.mean_ratio, p.policy_loss, p.value_loss, p.entropy,
                         p.epsilon, p.steps_per_second, p.cache_hit_rate, p.wall_seconds);
  if (o_.progress) o_.progress(p);
}

nlohmann::json Trainer::RunIdentity() const {
  nlohmann::json j;
  j["algo"] = o_.algo;
  j["actions"] = o_.env.actions;
  j["hidden"] = o_.hidden;
  j["network"] = o_.network;
  if (o_.network == "gnn") j["gnn"] = {{"dim", o_.gnn_dim}, {"rounds", o_.gnn_rounds}};
  j["traj_limit"] = o_.env.traj_limit;
  j["value_sees_cost"] = o_.value_sees_cost;
  j["action_masking"] = o_.action_masking;
  j["reward_space"] = o_.env.reward_space;
  return j;
}

absl::Status Trainer::WriteCheckpoint() {
  const std::string suffix = absl::StrCat("-", steps_, ".pt");
  const std::string net_file = "checkpoint-net" + suffix;
  const std::string optimizer_file = "checkpoint-optimizer" + suffix;
  const std::string target_file = "checkpoint-target" + suffix;
  auto save_net = [&](ActorCritic& net, const std::string& file) {
    return SaveModuleAtomically(o_.out_dir + "/" + file, [&](const std::string& tmp) { torch::save(net, tmp); });
  };
  if (absl::Status s = save_net(net_, net_file); !s.ok()) return s;
  if (absl::Status s = SaveModuleAtomically(o_.out_dir + "/" + optimizer_file,
                                            [&](const std::string& tmp) { torch::save(*optimizer_, tmp); });
      !s.ok()) {
    return s;
  }
  if (target_) {
    if (absl::Status s = save_net(target_, target_file); !s.ok()) return s;
  }
  std::ostringstream rng_state;
  rng_state << rng_;
  nlohmann::json j;
  j["format"] = "hlogym-train-checkpoint-1";
  j["run"] = RunIdentity();
  j["steps"] = steps_;
  j["updates"] = updates_;
  j["episodes"] = episodes_;
  j["rng"] = rng_state.str();
  j["wall_seconds"] = wall_before_ + SecondsSince(start_);
  j["files"] = {{"net", net_file}, {"optimizer", optimizer_file}};
  if (target_) j["files"]["target"] = target_file;
  // Renaming checkpoint.json commits the checkpoint; the files of the
  // previous one are removed only after that.
  std::string previous_json;
  {
    std::ifstream in(o_.out_dir + "/checkpoint.json");
    std::stringstream text;
    text << in.rdbuf();
    previous_json = text.str();
  }
  if (absl::Status s = WriteTextFileAtomically(o_.out_dir + "/checkpoint.json", j.dump(2) + "\n"); !s.ok()) {
    return s;
  }
  nlohmann::json previous = nlohmann::json::parse(previous_json, nullptr, false);
  if (previous.is_object() && previous.contains("files")) {
    for (auto& [key, file] : previous["files"].items()) {
      if (file.is_string() && file.get<std::string>() != j["files"].value(key, "")) {
        std::error_code ec;
        fs::remove(o_.out_dir + "/" + file.get<std::string>(), ec);
      }
    }
  }
  config_.trained_steps = steps_;
  if (absl::Status s = SavePolicy(o_.out_dir, config_, net_); !s.ok()) return s;
  next_checkpoint_ = o_.checkpoint_every > 0 ? steps_ + o_.checkpoint_every : o_.total_steps;
  return absl::OkStatus();
}

absl::Status Trainer::MaybeResume() {
  std::error_code ec;
  fs::create_directories(o_.out_dir, ec);
  if (ec) return absl::InvalidArgumentError(absl::StrCat(o_.out_dir, ": cannot create: ", ec.message()));
  const std::string json_path = o_.out_dir + "/checkpoint.json";
  next_checkpoint_ = o_.checkpoint_every > 0 ? o_.checkpoint_every : o_.total_steps;
  if (!fs::exists(json_path)) {
    for (const auto& entry : fs::directory_iterator(o_.out_dir)) {
      (void)entry;
      return absl::InvalidArgumentError(absl::StrCat(
          o_.out_dir, ": the directory is not empty and holds no training checkpoint; choose a new --out "
                      "(nothing in it was changed)"));
    }
    return absl::OkStatus();
  }
  std::ifstream in(json_path);
  std::stringstream text;
  text << in.rdbuf();
  nlohmann::json j = nlohmann::json::parse(text.str(), nullptr, false);
  if (!j.is_object() || j.value("format", "") != "hlogym-train-checkpoint-1") {
    return absl::InvalidArgumentError(absl::StrCat(json_path, ": not an hlogym training checkpoint"));
  }
  // Checkpoints written before gnn existed are mlp runs.
  if (j["run"].is_object() && !j["run"].contains("network")) j["run"]["network"] = "mlp";
  const nlohmann::json identity = RunIdentity();
  for (auto& [key, value] : identity.items()) {
    if (!j["run"].contains(key) || j["run"][key] != value) {
      return absl::InvalidArgumentError(absl::StrCat(
          json_path, ": the checkpoint is of a different run (", key, " was ",
          j["run"].contains(key) ? j["run"][key].dump() : "missing", ", now ", value.dump(),
          "); resume with the same options or train into a new --out"));
    }
  }
  try {
    torch::load(net_, o_.out_dir + "/" + j["files"]["net"].get<std::string>());
    torch::load(*optimizer_, o_.out_dir + "/" + j["files"]["optimizer"].get<std::string>());
    if (target_) torch::load(target_, o_.out_dir + "/" + j["files"]["target"].get<std::string>());
    steps_ = j.at("steps").get<int64_t>();
    updates_ = j.at("updates").get<int64_t>();
    episodes_ = j.at("episodes").get<int64_t>();
    wall_before_ = j.value("wall_seconds", 0.0);
    std::istringstream rng_state(j.at("rng").get<std::string>());
    rng_state >> rng_;
  } catch (const std::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat(json_path, ": cannot resume: ", std::string(e.what()).substr(0, 300)));
  }
  resumed_from_ = steps_;
  resumed_row_ = true;
  next_checkpoint_ = o_.checkpoint_every > 0 ? steps_ + o_.checkpoint_every : o_.total_steps;
  return absl::OkStatus();
}

absl::StatusOr<TrainSummary> Trainer::Run() {
  start_ = Clock::now();
  if (absl::Status s = Setup(); !s.ok()) return s;
  row_start_ = Clock::now();
  absl::Status trained = o_.algo == "dqn" ? RunDqn() : RunPolicyGradient();
  if (!trained.ok()) return trained;
  if (steps_ == resumed_from_) {
    // The checkpoint already had the steps: nothing was trained, but the
    // policy files are rewritten from it in case they were lost.
    config_.trained_steps = steps_;
    if (absl::Status s = SavePolicy(o_.out_dir, config_, net_); !s.ok()) return s;
  }
  TrainSummary summary;
  summary.steps = steps_;
  summary.episodes = episodes_;
  summary.resumed_from = resumed_from_;
  summary.wall_seconds = SecondsSince(start_);
  summary.policy_dir = o_.out_dir;
  return summary;
}

}  // namespace

std::vector<std::string> AlgorithmNames() { return {"ppo", "a2c", "trpo", "dqn"}; }
std::vector<std::string> NetworkNames() { return {"mlp", "gnn"}; }

absl::StatusOr<TrainSummary> Train(const TrainOptions& options) {
  try {
    Trainer trainer(options);
    return trainer.Run();
  } catch (const std::exception& e) {
    // LibTorch reports misuse with exceptions; the caller gets a status.
    return absl::InternalError(absl::StrCat("training failed: ", std::string(e.what()).substr(0, 500)));
  }
}

}  // namespace hlogym::rl
