// The shared core of the trainers: environments, encoding, stepping, the
// on-policy rollout, the curve, checkpoints and resume (trainer.h).
#include "agents/rl/trainer.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "hlo/status_macros.h"
#include "nlohmann/json.hpp"
#include "text/file_io.h"

namespace hlogym::rl {
namespace {

namespace fs = std::filesystem;

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

double SecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

constexpr char kCurveHeader[] =
    "steps,updates,episodes,mean_return,mean_ratio,policy_loss,value_loss,entropy,epsilon,"
    "steps_per_second,cache_hit_rate,wall_seconds";

std::string ReadWholeFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

torch::Tensor CopyOf(const std::vector<float>& data, std::vector<int64_t> shape) {
  return torch::from_blob(const_cast<float*>(data.data()), shape, torch::kFloat32).clone();
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
  env.observation_spaces = RequiredObservationSpaces();
  if (o_.reward_shaping && env.reward_space.find("+shaped") == std::string::npos) {
    env.reward_space += "+shaped";
  }
  env.use_cache = true;
  o_.env = env;
  absl::StatusOr<std::unique_ptr<VecEnvironment>> vec =
      VecEnvironment::Create(o_.num_envs, o_.num_threads, env);
  if (!vec.ok()) return vec.status();
  vec_ = std::move(*vec);
  workers_.resize(o_.num_envs);
  A_ = vec_->env(0).num_actions();
  o_.env.actions = vec_->env(0).actions();
  config_ = MakeConfig();
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
  c.gnn_dim = o_.gnn_dim;
  c.gnn_rounds = o_.gnn_rounds;
  c.traj_limit = o_.env.traj_limit;
  c.value_sees_cost = o_.value_sees_cost;
  c.action_masking = o_.action_masking;
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

// ---------------------------------------------------------------------------
// The on-policy rollout (PPO, A2C, TRPO)

torch::Tensor Rollout::Features() const {
  return CopyOf(features, {size(), static_cast<int64_t>(features.size()) / size()});
}
torch::Tensor Rollout::Cost() const { return CopyOf(cost, {size(), FeatureLayout::kCostSize}); }
torch::Tensor Rollout::Masks() const {
  return torch::from_blob(const_cast<uint8_t*>(masks.data()),
                          {size(), static_cast<int64_t>(masks.size()) / size()}, torch::kUInt8)
      .to(torch::kBool);
}
torch::Tensor Rollout::Actions() const {
  return torch::from_blob(const_cast<int64_t*>(actions.data()), {size()}, torch::kInt64).clone();
}
torch::Tensor Rollout::LogProbs() const { return CopyOf(log_probs, {size()}); }
torch::Tensor Rollout::Advantages() const { return CopyOf(advantages, {size()}); }
torch::Tensor Rollout::Returns() const { return CopyOf(returns, {size()}); }

GraphBatch Rollout::Graphs(const int64_t* indices, int64_t n) const {
  std::vector<const GraphFeatures*> batch;
  if (!graphs.empty()) {
    for (int64_t i = 0; i < n; ++i) batch.push_back(graphs[indices[i]].get());
  }
  return MakeGraphBatch(batch);
}

namespace {

// GAE(lambda) over each environment's steps, backwards from the value of the
// state after the last one.
void ComputeAdvantages(Rollout& r, const std::vector<float>& last_values, double gamma,
                       double lambda) {
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
      const float delta =
          r.rewards[i] + static_cast<float>(gamma) * next_value * not_done - r.values[i];
      gae = delta + static_cast<float>(gamma * lambda) * not_done * gae;
      r.advantages[i] = gae;
      r.returns[i] = gae + r.values[i];
    }
  }
}

}  // namespace

absl::Status CollectRollout(TrainingRun& run, Rollout& r) {
  const int E = run.num_envs(), A = run.num_actions();
  const int T = std::max(1, run.rollout_steps() / E);
  r.envs = E;
  r.steps_per_env = T;
  r.features.clear();
  r.cost.clear();
  r.masks.clear();
  r.actions.clear();
  r.log_probs.clear();
  r.values.clear();
  r.rewards.assign(static_cast<size_t>(T) * E, 0);
  r.dones.assign(static_cast<size_t>(T) * E, 0);
  r.graphs.clear();
  // The previous rollout's graphs are gone (but for the workers' own).
  run.ForgetUnusedGraphs();
  ActorCritic& net = run.net();
  net->eval();
  StateBatch batch;
  for (int t = 0; t < T; ++t) {
    run.Observe(batch);
    std::vector<int64_t> actions(E);
    {
      torch::NoGradGuard no_grad;
      torch::Tensor state = net->Encode(batch.Features(), run.CurrentGraphs());
      torch::Tensor logits = MaskLogits(net->Logits(state), batch.Masks());
      torch::Tensor probs = torch::softmax(logits, 1).contiguous();
      torch::Tensor log_probs = torch::log_softmax(logits, 1).contiguous();
      torch::Tensor values = net->Value(state, batch.Cost()).contiguous();
      const float* p = probs.data_ptr<float>();
      const float* lp = log_probs.data_ptr<float>();
      const float* v = values.data_ptr<float>();
      for (int e = 0; e < E; ++e) {
        actions[e] = run.SampleAction(p + static_cast<size_t>(e) * A,
                                      &batch.masks[static_cast<size_t>(e) * A]);
        r.log_probs.push_back(lp[static_cast<size_t>(e) * A + actions[e]]);
        r.values.push_back(v[e]);
      }
    }
    r.features.insert(r.features.end(), batch.features.begin(), batch.features.end());
    r.cost.insert(r.cost.end(), batch.cost.begin(), batch.cost.end());
    r.masks.insert(r.masks.end(), batch.masks.begin(), batch.masks.end());
    r.actions.insert(r.actions.end(), actions.begin(), actions.end());
    if (run.gnn()) {
      for (int e = 0; e < E; ++e) r.graphs.push_back(run.GraphOf(e));
    }
    const size_t row = static_cast<size_t>(t) * E;
    HLOGYM_RETURN_IF_ERROR(run.Step(actions, &r.rewards[row], &r.dones[row]));
  }
  run.Observe(batch);
  std::vector<float> last_values(E);
  {
    torch::NoGradGuard no_grad;
    torch::Tensor v =
        net->Value(net->Encode(batch.Features(), run.CurrentGraphs()), batch.Cost()).contiguous();
    std::copy(v.data_ptr<float>(), v.data_ptr<float>() + E, last_values.begin());
  }
  ComputeAdvantages(r, last_values, run.options().gamma, run.options().gae_lambda);
  net->train();
  run.CountUpdate();
  return absl::OkStatus();
}

void ForEachMinibatch(TrainingRun& run, int64_t n, int epochs, int64_t minibatch,
                      const std::function<void(const torch::Tensor& indices, const int64_t* rows,
                                               int64_t count)>& fn) {
  std::vector<int64_t> order(n);
  for (int64_t i = 0; i < n; ++i) order[i] = i;
  for (int epoch = 0; epoch < epochs; ++epoch) {
    std::shuffle(order.begin(), order.end(), run.rng());
    for (int64_t begin = 0; begin < n; begin += minibatch) {
      const int64_t count = std::min<int64_t>(n, begin + minibatch) - begin;
      torch::Tensor indices =
          torch::from_blob(order.data() + begin, {count}, torch::kInt64).clone();
      fn(indices, order.data() + begin, count);
    }
  }
}

double FitValue(TrainingRun& run, const torch::Tensor& states, const torch::Tensor& cost,
                const torch::Tensor& returns) {
  const TrainOptions& o = run.options();
  ActorCritic& net = run.net();
  double total = 0;
  int count = 0;
  ForEachMinibatch(run, states.size(0), o.epochs, o.minibatch,
                   [&](const torch::Tensor& idx, const int64_t*, int64_t) {
                     torch::Tensor loss =
                         (net->Value(states.index_select(0, idx), cost.index_select(0, idx)) -
                          returns.index_select(0, idx))
                             .pow(2)
                             .mean();
                     run.optimizer().zero_grad();
                     loss.backward();
                     torch::nn::utils::clip_grad_norm_(net->CriticParameters(), o.max_grad_norm);
                     run.optimizer().step();
                     total += loss.item<double>();
                     ++count;
                   });
  return total / std::max(1, count);
}

// ---------------------------------------------------------------------------
// Curve, checkpoints, resume

absl::Status TrainingRun::StartCurve() {
  const std::string path = o_.out_dir + "/curve.csv";
  std::string kept = std::string(kCurveHeader) + "\n";
  if (resumed_from_ > 0) {
    // Keep the rows up to the checkpoint; rows written after it are replaced
    // by the resumed run's own.
    std::istringstream in(ReadWholeFile(path));
    std::string line;
    bool header = true;
    while (std::getline(in, line)) {
      if (header) {
        header = false;
        continue;
      }
      if (line.empty()) continue;
      int64_t step = std::atoll(line.c_str());
      if (step <= resumed_from_) kept += line + "\n";
    }
  }
  return WriteTextFileAtomically(path, kept);
}

void TrainingRun::EmitRow(const UpdateLosses& losses) {
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
  p.policy_loss = losses.policy;
  p.value_loss = losses.value;
  p.entropy = losses.entropy;
  p.epsilon = losses.epsilon;
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
  out << absl::StrFormat("%d,%d,%d,%.6g,%.6g,%.6g,%.6g,%.6g,%.4g,%.1f,%.4f,%.1f\n", p.steps,
                         p.updates, p.episodes, p.mean_return, p.mean_ratio, p.policy_loss,
                         p.value_loss, p.entropy, p.epsilon, p.steps_per_second, p.cache_hit_rate,
                         p.wall_seconds);
  if (o_.progress) o_.progress(p);
}

nlohmann::json TrainingRun::RunIdentity() const {
  nlohmann::json j;
  j["algo"] = o_.algo;
  j["actions"] = o_.env.actions;
  j["hidden"] = o_.hidden;
  j["network"] = o_.network;
  if (config_.gnn()) j["gnn"] = {{"dim", o_.gnn_dim}, {"rounds", o_.gnn_rounds}};
  j["traj_limit"] = o_.env.traj_limit;
  j["value_sees_cost"] = o_.value_sees_cost;
  j["action_masking"] = o_.action_masking;
  j["reward_space"] = o_.env.reward_space;
  return j;
}

absl::Status TrainingRun::MaybeCheckpoint() {
  if (steps_ < next_checkpoint_ && !reached_target()) return absl::OkStatus();
  return WriteCheckpoint();
}

absl::Status TrainingRun::WriteCheckpoint() {
  const std::string suffix = absl::StrCat("-", steps_, ".pt");
  const std::string net_file = "checkpoint-net" + suffix;
  const std::string optimizer_file = "checkpoint-optimizer" + suffix;
  const std::string target_file = "checkpoint-target" + suffix;
  auto save_net = [&](ActorCritic& net, const std::string& file) {
    return SaveModuleAtomically(o_.out_dir + "/" + file,
                                [&](const std::string& tmp) { torch::save(net, tmp); });
  };
  HLOGYM_RETURN_IF_ERROR(save_net(net_, net_file));
  if (absl::Status s =
          SaveModuleAtomically(o_.out_dir + "/" + optimizer_file,
                               [&](const std::string& tmp) { torch::save(*optimizer_, tmp); });
      !s.ok()) {
    return s;
  }
  if (target_) {
    HLOGYM_RETURN_IF_ERROR(save_net(target_, target_file));
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
  const std::string previous_json = ReadWholeFile(o_.out_dir + "/checkpoint.json");
  HLOGYM_RETURN_IF_ERROR(
      WriteTextFileAtomically(o_.out_dir + "/checkpoint.json", j.dump(2) + "\n"));
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
  HLOGYM_RETURN_IF_ERROR(SavePolicy(o_.out_dir, config_, net_));
  next_checkpoint_ = o_.checkpoint_every > 0 ? steps_ + o_.checkpoint_every : o_.total_steps;
  return absl::OkStatus();
}

absl::Status TrainingRun::MaybeResume() {
  std::error_code ec;
  fs::create_directories(o_.out_dir, ec);
  if (ec)
    return absl::InvalidArgumentError(absl::StrCat(o_.out_dir, ": cannot create: ", ec.message()));
  const std::string json_path = o_.out_dir + "/checkpoint.json";
  next_checkpoint_ = o_.checkpoint_every > 0 ? o_.checkpoint_every : o_.total_steps;
  if (!fs::exists(json_path)) {
    if (!fs::is_empty(o_.out_dir, ec)) {
      return absl::InvalidArgumentError(absl::StrCat(
          o_.out_dir,
          ": the directory is not empty and holds no training checkpoint; choose a new --out "
          "(nothing in it was changed)"));
    }
    return absl::OkStatus();
  }
  nlohmann::json j = nlohmann::json::parse(ReadWholeFile(json_path), nullptr, false);
  if (!j.is_object() || j.value("format", "") != "hlogym-train-checkpoint-1") {
    return absl::InvalidArgumentError(
        absl::StrCat(json_path, ": not an hlogym training checkpoint"));
  }
  // Checkpoints written before gnn existed are mlp runs.
  if (j["run"].is_object() && !j["run"].contains("network")) j["run"]["network"] = "mlp";
  const nlohmann::json identity = RunIdentity();
  for (auto& [key, value] : identity.items()) {
    if (!j["run"].contains(key) || j["run"][key] != value) {
      return absl::InvalidArgumentError(
          absl::StrCat(json_path, ": the checkpoint is of a different run (", key, " was ",
                       j["run"].contains(key) ? j["run"][key].dump() : "missing", ", now ",
                       value.dump(), "); resume with the same options or train into a new --out"));
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
    return absl::InvalidArgumentError(
        absl::StrCat(json_path, ": cannot resume: ", std::string(e.what()).substr(0, 300)));
  }
  resumed_from_ = steps_;
  resumed_row_ = true;
  next_checkpoint_ = o_.checkpoint_every > 0 ? steps_ + o_.checkpoint_every : o_.total_steps;
  return absl::OkStatus();
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
    absl::StatusOr<std::unique_ptr<TrainingRun>> run = TrainingRun::Start(options);
    if (!run.ok()) return run.status();
    return (*run)->Run();
  } catch (const std::exception& e) {
    // LibTorch reports misuse with exceptions; the caller gets a status.
    return absl::InternalError(
        absl::StrCat("training failed: ", std::string(e.what()).substr(0, 500)));
  }
}

}  // namespace hlogym::rl
