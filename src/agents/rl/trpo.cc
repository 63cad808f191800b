// TRPO (Schulman et al. 2015): the actor takes the natural-gradient step of
// largest surrogate gain whose mean KL divergence from the rollout's policy
// stays within max_kl (conjugate gradient on Fisher-vector products, then a
// backtracking line search); the critic is fitted by regression afterwards.
#include <torch/torch.h>

#include <cmath>
#include <numeric>
#include <vector>

#include "agents/rl/trainer.h"
#include "hlo/status_macros.h"

namespace hlogym::rl {
namespace {

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

UpdateLosses Update(TrainingRun& run, const Rollout& r) {
  const TrpoOptions& o = run.options().trpo;
  ActorCritic& net = run.net();
  const int64_t N = r.size();
  torch::Tensor X = r.Features(), C = r.Cost(), M = r.Masks();
  torch::Tensor actions = r.Actions().unsqueeze(1);
  torch::Tensor adv = r.Advantages();
  adv = (adv - adv.mean()) / (adv.std() + 1e-8);
  torch::Tensor returns = r.Returns();
  std::vector<torch::Tensor> params = net->ActorParameters();
  std::vector<int64_t> all_steps(N);
  std::iota(all_steps.begin(), all_steps.end(), 0);
  const GraphBatch graphs = r.Graphs(all_steps.data(), N);
  auto masked_logits = [&] { return MaskLogits(net->Logits(net->Encode(X, graphs)), M); };

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
    return FlatConcat(hv).detach() + o.cg_damping * v;
  };

  torch::Tensor loss = surrogate();
  torch::Tensor g = FlatConcat(torch::autograd::grad({loss}, params)).detach();
  // Conjugate gradient: x ~= F^-1 g.
  torch::Tensor x = torch::zeros_like(g), residual = g.clone(), direction = g.clone();
  double rr = residual.dot(residual).item<double>();
  for (int i = 0; i < o.cg_iterations && rr > 1e-10; ++i) {
    torch::Tensor fd = fisher_vector(direction);
    double alpha = rr / std::max(1e-12, direction.dot(fd).item<double>());
    x += alpha * direction;
    residual -= alpha * fd;
    double rr_next = residual.dot(residual).item<double>();
    direction = residual + (rr_next / rr) * direction;
    rr = rr_next;
  }
  const double shs = 0.5 * x.dot(fisher_vector(x)).item<double>();
  torch::Tensor full_step = x * std::sqrt(o.max_kl / std::max(1e-12, shs));
  torch::Tensor old_params = FlatConcat(params).detach().clone();
  const double old_loss = loss.item<double>();
  double accepted_loss = old_loss;
  bool accepted = false;
  for (int k = 0; k < 10 && !accepted; ++k) {
    const double fraction = std::pow(0.5, k);
    AssignFlat(params, old_params + fraction * full_step);
    torch::NoGradGuard no_grad;
    const double new_loss = surrogate().item<double>();
    if (kl().item<double>() <= 1.5 * o.max_kl && new_loss > old_loss) {
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
    states = net->Encode(X, graphs);
  }
  const double value_loss = FitValue(run, states, C, returns);
  return {-accepted_loss, value_loss, entropy, 0};
}

}  // namespace

absl::Status TrainTrpo(TrainingRun& run) {
  Rollout r;
  while (!run.reached_target()) {
    HLOGYM_RETURN_IF_ERROR(CollectRollout(run, r));
    run.EmitRow(Update(run, r));
    HLOGYM_RETURN_IF_ERROR(run.MaybeCheckpoint());
  }
  return absl::OkStatus();
}

}  // namespace hlogym::rl
