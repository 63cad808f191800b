// PPO (clipped surrogate, Schulman et al. 2017) and A2C, which is PPO's update
// with one epoch over the whole rollout and the plain policy gradient in place
// of the clipped surrogate. One loss trains the actor and the critic:
//   policy loss + value_coef * value loss - entropy_coef * entropy.
#include <torch/torch.h>

#include <algorithm>
#include <vector>

#include "agents/rl/trainer.h"
#include "hlo/status_macros.h"

namespace hlogym::rl {
namespace {

struct PolicyGradientUpdate {
  int epochs = 1;
  int64_t minibatch = 0;
  bool clipped = false;
  double clip = 0;
};

UpdateLosses Update(TrainingRun& run, const Rollout& r, const PolicyGradientUpdate& u) {
  const TrainOptions& o = run.options();
  ActorCritic& net = run.net();
  torch::Tensor X = r.Features(), C = r.Cost(), M = r.Masks(), actions = r.Actions();
  torch::Tensor old_log_probs = r.LogProbs(), advantages = r.Advantages(), returns = r.Returns();
  UpdateLosses sums;
  int minibatches = 0;
  ForEachMinibatch(
      run, r.size(), u.epochs, u.minibatch,
      [&](const torch::Tensor& idx, const int64_t* rows, int64_t count) {
        torch::Tensor x = X.index_select(0, idx), c = C.index_select(0, idx),
                      m = M.index_select(0, idx);
        torch::Tensor a = actions.index_select(0, idx);
        torch::Tensor adv = advantages.index_select(0, idx);
        if (adv.numel() > 1) adv = (adv - adv.mean()) / (adv.std() + 1e-8);
        torch::Tensor state = net->Encode(x, r.Graphs(rows, count));
        torch::Tensor logits = MaskLogits(net->Logits(state), m);
        torch::Tensor log_probs_all = torch::log_softmax(logits, 1);
        torch::Tensor log_probs = log_probs_all.gather(1, a.unsqueeze(1)).squeeze(1);
        torch::Tensor entropy = -(torch::softmax(logits, 1) * log_probs_all).sum(1).mean();
        torch::Tensor policy_loss;
        if (u.clipped) {
          torch::Tensor ratio = torch::exp(log_probs - old_log_probs.index_select(0, idx));
          policy_loss =
              -torch::min(ratio * adv, torch::clamp(ratio, 1 - u.clip, 1 + u.clip) * adv).mean();
        } else {
          policy_loss = -(log_probs * adv).mean();
        }
        torch::Tensor value_loss =
            (net->Value(state, c) - returns.index_select(0, idx)).pow(2).mean();
        torch::Tensor loss = policy_loss + o.value_coef * value_loss - o.entropy_coef * entropy;
        run.optimizer().zero_grad();
        loss.backward();
        torch::nn::utils::clip_grad_norm_(net->parameters(), o.max_grad_norm);
        run.optimizer().step();
        sums.policy += policy_loss.item<double>();
        sums.value += value_loss.item<double>();
        sums.entropy += entropy.item<double>();
        ++minibatches;
      });
  const double n = std::max(1, minibatches);
  return {sums.policy / n, sums.value / n, sums.entropy / n, 0};
}

absl::Status TrainPolicyGradient(TrainingRun& run, bool a2c) {
  Rollout r;
  while (!run.reached_target()) {
    HLOGYM_RETURN_IF_ERROR(CollectRollout(run, r));
    PolicyGradientUpdate u;
    if (a2c) {
      u.minibatch = r.size();
    } else {
      u.epochs = run.options().epochs;
      u.minibatch = run.options().minibatch;
      u.clipped = true;
      u.clip = run.options().ppo.clip;
    }
    run.EmitRow(Update(run, r, u));
    HLOGYM_RETURN_IF_ERROR(run.MaybeCheckpoint());
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status TrainPpo(TrainingRun& run) { return TrainPolicyGradient(run, /*a2c=*/false); }
absl::Status TrainA2c(TrainingRun& run) { return TrainPolicyGradient(run, /*a2c=*/true); }

}  // namespace hlogym::rl
