// The on-policy rollout of the trainers (PPO, A2C, TRPO; trainer.h): collecting
// experience, GAE(lambda), minibatches and the critic's regression.
#include <torch/torch.h>

#include <algorithm>
#include <vector>

#include "agents/rl/trainer.h"
#include "hlo/status_macros.h"

namespace hlogym::rl {
namespace {

torch::Tensor CopyOf(const std::vector<float>& data, std::vector<int64_t> shape) {
  return torch::from_blob(const_cast<float*>(data.data()), shape, torch::kFloat32).clone();
}

}  // namespace

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

}  // namespace hlogym::rl
