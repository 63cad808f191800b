// Double DQN (van Hasselt et al. 2016) with a replay buffer and a target
// network synced every target_update steps; epsilon-greedy exploration decays
// linearly over the first epsilon_fraction of the run. The Q-network is the
// actor MLP (one Q-value per action) reading the policy features as they are
// (mlp only: the algorithm table refuses a gnn).
#include <torch/torch.h>

#include <algorithm>
#include <limits>
#include <vector>

#include "agents/rl/trainer.h"
#include "hlo/status_macros.h"

namespace hlogym::rl {
namespace {

// Transitions (s, a, r, s', done, mask of s') in a ring.
class ReplayBuffer {
 public:
  ReplayBuffer(size_t capacity, int features, int actions)
      : capacity_(capacity),
        F_(features),
        A_(actions),
        s_(capacity * features),
        s_next_(capacity * features),
        rewards_(capacity),
        next_masks_(capacity * actions),
        dones_(capacity),
        actions_(capacity) {}

  size_t size() const { return size_; }
  void Add(const float* s, int64_t action, float reward, const float* s_next,
           const uint8_t* next_mask, uint8_t done) {
    std::copy_n(s, F_, &s_[head_ * F_]);
    std::copy_n(s_next, F_, &s_next_[head_ * F_]);
    std::copy_n(next_mask, A_, &next_masks_[head_ * A_]);
    actions_[head_] = action;
    rewards_[head_] = reward;
    dones_[head_] = done;
    head_ = (head_ + 1) % capacity_;
    size_ = std::min(capacity_, size_ + 1);
  }

  struct Batch {
    torch::Tensor s, s_next, next_masks, actions, rewards, dones;
  };
  Batch Sample(int n, std::mt19937_64& rng) {
    std::vector<int64_t> picked(n);
    std::uniform_int_distribution<size_t> pick(0, size_ - 1);
    for (int64_t& b : picked) b = static_cast<int64_t>(pick(rng));
    torch::Tensor idx = torch::from_blob(picked.data(), {n}, torch::kInt64).clone();
    const int64_t c = static_cast<int64_t>(capacity_);
    Batch b;
    b.s = torch::from_blob(s_.data(), {c, F_}, torch::kFloat32).index_select(0, idx);
    b.s_next = torch::from_blob(s_next_.data(), {c, F_}, torch::kFloat32).index_select(0, idx);
    b.next_masks = torch::from_blob(next_masks_.data(), {c, A_}, torch::kUInt8)
                       .index_select(0, idx)
                       .to(torch::kBool);
    b.actions =
        torch::from_blob(actions_.data(), {c}, torch::kInt64).index_select(0, idx).unsqueeze(1);
    b.rewards = torch::from_blob(rewards_.data(), {c}, torch::kFloat32).index_select(0, idx);
    b.dones = torch::from_blob(dones_.data(), {c}, torch::kUInt8)
                  .index_select(0, idx)
                  .to(torch::kFloat32);
    return b;
  }

 private:
  size_t capacity_, size_ = 0, head_ = 0;
  int64_t F_, A_;
  std::vector<float> s_, s_next_, rewards_;
  std::vector<uint8_t> next_masks_, dones_;
  std::vector<int64_t> actions_;
};

// The epsilon-greedy choice of every environment.
std::vector<int64_t> ChooseActions(TrainingRun& run, StateBatch& batch, double epsilon) {
  const int E = run.num_envs(), A = run.num_actions();
  std::vector<int64_t> chosen(E);
  torch::NoGradGuard no_grad;
  torch::Tensor greedy =
      MaskLogits(run.net()->Logits(batch.Features()), batch.Masks()).argmax(1).contiguous();
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  for (int e = 0; e < E; ++e) {
    if (uniform(run.rng()) < epsilon) {
      std::vector<int> allowed;
      for (int a = 0; a < A; ++a) {
        if (batch.masks[static_cast<size_t>(e) * A + a]) allowed.push_back(a);
      }
      chosen[e] = allowed[std::uniform_int_distribution<size_t>(0, allowed.size() - 1)(run.rng())];
    } else {
      chosen[e] = greedy.data_ptr<int64_t>()[e];
    }
  }
  return chosen;
}

// One gradient step on a sampled minibatch; returns the loss.
double GradientStep(TrainingRun& run, ReplayBuffer& replay) {
  ActorCritic& net = run.net();
  ReplayBuffer::Batch b = replay.Sample(run.options().minibatch, run.rng());
  torch::Tensor target;
  {
    torch::NoGradGuard no_grad;
    // Double DQN: the online network picks, the target network values.
    torch::Tensor best =
        MaskLogits(net->Logits(b.s_next), b.next_masks).argmax(1, /*keepdim=*/true);
    torch::Tensor next_q = run.target()->Logits(b.s_next).gather(1, best).squeeze(1);
    target = b.rewards + static_cast<float>(run.options().gamma) * (1 - b.dones) * next_q;
  }
  torch::Tensor q = net->Logits(b.s).gather(1, b.actions).squeeze(1);
  torch::Tensor loss = torch::smooth_l1_loss(q, target);
  run.optimizer().zero_grad();
  loss.backward();
  torch::nn::utils::clip_grad_norm_(net->ActorParameters(), 10.0);
  run.optimizer().step();
  return loss.item<double>();
}

}  // namespace

absl::Status TrainDqn(TrainingRun& run) {
  const TrainOptions& o = run.options();
  const DqnOptions& d = o.dqn;
  const int E = run.num_envs(), F = run.feature_size(), A = run.num_actions();
  ReplayBuffer replay(static_cast<size_t>(std::max(d.replay_size, o.minibatch)), F, A);
  auto epsilon_at = [&](int64_t step) {
    const double decay_steps =
        std::max(1.0, d.epsilon_fraction * static_cast<double>(o.total_steps));
    const double f = std::min(1.0, static_cast<double>(step) / decay_steps);
    return d.epsilon_start + f * (d.epsilon_end - d.epsilon_start);
  };
  StateBatch batch;
  std::vector<float> rewards(E);
  std::vector<uint8_t> dones(E);
  int64_t since_train = 0, since_target = 0, since_row = 0;
  double loss_sum = 0;
  int loss_count = 0;
  run.Observe(batch);
  while (!run.reached_target()) {
    const double epsilon = epsilon_at(run.steps());
    std::vector<int64_t> chosen = ChooseActions(run, batch, epsilon);
    const std::vector<float> before = batch.features;
    HLOGYM_RETURN_IF_ERROR(run.Step(chosen, rewards.data(), dones.data()));
    run.Observe(batch);
    for (int e = 0; e < E; ++e) {
      replay.Add(&before[static_cast<size_t>(e) * F], chosen[e], rewards[e],
                 &batch.features[static_cast<size_t>(e) * F],
                 &batch.masks[static_cast<size_t>(e) * A], dones[e]);
    }
    since_train += E;
    since_target += E;
    since_row += E;
    run.net()->train();
    while (run.steps() >= d.learning_starts && since_train >= d.train_every &&
           replay.size() >= static_cast<size_t>(o.minibatch)) {
      since_train -= d.train_every;
      loss_sum += GradientStep(run, replay);
      ++loss_count;
      run.CountUpdate();
    }
    if (since_target >= d.target_update) {
      since_target = 0;
      CopyParameters(run.net(), run.target());
    }
    if (since_row >= run.rollout_steps() || run.reached_target()) {
      since_row = 0;
      const double nan = std::numeric_limits<double>::quiet_NaN();
      run.EmitRow({0, loss_count ? loss_sum / loss_count : nan, 0, epsilon});
      loss_sum = 0;
      loss_count = 0;
    }
    HLOGYM_RETURN_IF_ERROR(run.MaybeCheckpoint());
  }
  return absl::OkStatus();
}

}  // namespace hlogym::rl
