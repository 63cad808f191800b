#include "agents/rl/networks.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "nlohmann/json.hpp"
#include "text/file_io.h"

namespace hlogym::rl {
namespace {

torch::nn::Sequential MakeMlp(int64_t inputs, const std::vector<int>& hidden, int64_t outputs) {
  torch::nn::Sequential mlp;
  int64_t width = inputs;
  for (int h : hidden) {
    mlp->push_back(torch::nn::Linear(width, h));
    mlp->push_back(torch::nn::Tanh());
    width = h;
  }
  mlp->push_back(torch::nn::Linear(width, outputs));
  return mlp;
}

}  // namespace

std::string PolicyConfig::ToJson() const {
  nlohmann::json j;
  j["format"] = "hlogym-policy-1";
  j["algo"] = algo;
  j["actions"] = actions;
  j["hidden"] = hidden;
  j["traj_limit"] = traj_limit;
  j["value_sees_cost"] = value_sees_cost;
  j["action_masking"] = action_masking;
  j["reward_space"] = reward_space;
  j["trained_steps"] = trained_steps;
  j["trained_on"] = trained_on;
  return j.dump(2);
}

absl::StatusOr<PolicyConfig> PolicyConfig::FromJson(const std::string& text, const std::string& origin) {
  nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) {
    return absl::InvalidArgumentError(absl::StrCat(origin, ": not a JSON object"));
  }
  if (j.value("format", "") != "hlogym-policy-1") {
    return absl::InvalidArgumentError(absl::StrCat(origin, ": not an hlogym policy (format ",
                                                   j.value("format", "missing"), ")"));
  }
  PolicyConfig c;
  try {
    c.algo = j.at("algo").get<std::string>();
    c.actions = j.at("actions").get<std::vector<std::string>>();
    c.hidden = j.at("hidden").get<std::vector<int>>();
    c.traj_limit = j.at("traj_limit").get<int>();
    c.value_sees_cost = j.at("value_sees_cost").get<bool>();
    c.action_masking = j.at("action_masking").get<bool>();
    c.reward_space = j.value("reward_space", "");
    c.trained_steps = j.value("trained_steps", int64_t{0});
    c.trained_on = j.value("trained_on", std::vector<std::string>{});
  } catch (const nlohmann::json::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat(origin, ": ", e.what()));
  }
  if (c.actions.empty() || c.traj_limit < 1) {
    return absl::InvalidArgumentError(absl::StrCat(origin, ": no actions or traj_limit < 1"));
  }
  for (int h : c.hidden) {
    if (h < 1) return absl::InvalidArgumentError(absl::StrCat(origin, ": hidden sizes must be >= 1"));
  }
  return c;
}

ActorCriticImpl::ActorCriticImpl(const PolicyConfig& config)
    : value_sees_cost_(config.value_sees_cost) {
  const int64_t inputs = config.layout().policy_size();
  const int64_t actions = static_cast<int64_t>(config.actions.size());
  actor_ = register_module("actor", MakeMlp(inputs, config.hidden, actions));
  critic_ = register_module(
      "critic", MakeMlp(inputs + (value_sees_cost_ ? FeatureLayout::kCostSize : 0), config.hidden, 1));
  // Small last layers: the initial policy is close to uniform, the initial
  // values close to zero.
  torch::NoGradGuard no_grad;
  for (torch::nn::Sequential* mlp : {&actor_, &critic_}) {
    auto last = (*mlp)->ptr(static_cast<int64_t>((*mlp)->size()) - 1)->as<torch::nn::Linear>();
    last->weight.mul_(0.01);
    last->bias.zero_();
  }
}

torch::Tensor ActorCriticImpl::Logits(const torch::Tensor& features) { return actor_->forward(features); }

torch::Tensor ActorCriticImpl::Value(const torch::Tensor& features, const torch::Tensor& cost) {
  torch::Tensor input = value_sees_cost_ ? torch::cat({features, cost}, 1) : features;
  return critic_->forward(input).squeeze(1);
}

void CopyParameters(ActorCritic& from, ActorCritic& to) {
  torch::NoGradGuard no_grad;
  auto source = from->parameters();
  auto target = to->parameters();
  for (size_t i = 0; i < source.size(); ++i) target[i].copy_(source[i]);
}

torch::Tensor MaskLogits(const torch::Tensor& logits, const torch::Tensor& mask) {
  return logits.masked_fill(mask.logical_not(), -1e9);
}

absl::Status SaveModuleAtomically(const std::string& path,
                                  const std::function<void(const std::string&)>& save) {
  const std::string tmp = path + ".tmp";
  try {
    save(tmp);
  } catch (const std::exception& e) {
    std::remove(tmp.c_str());
    return absl::InternalError(absl::StrCat("cannot write ", path, ": ", e.what()));
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) return absl::InternalError(absl::StrCat("cannot rename ", tmp, " to ", path, ": ", ec.message()));
  return absl::OkStatus();
}

absl::Status SavePolicy(const std::string& dir, const PolicyConfig& config, ActorCritic& net) {
  absl::Status saved = SaveModuleAtomically(
      dir + "/policy.pt", [&](const std::string& tmp) { torch::save(net, tmp); });
  if (!saved.ok()) return saved;
  return WriteTextFileAtomically(dir + "/policy.json", config.ToJson() + "\n");
}

absl::StatusOr<LoadedPolicy> LoadPolicy(const std::string& dir) {
  const std::string json_path = dir + "/policy.json";
  std::ifstream in(json_path);
  if (!in) {
    return absl::NotFoundError(absl::StrCat(
        json_path, ": no policy here (a policy directory holds policy.json and policy.pt, as written by "
                   "`hlogym train --out DIR`)"));
  }
  std::stringstream text;
  text << in.rdbuf();
  absl::StatusOr<PolicyConfig> config = PolicyConfig::FromJson(text.str(), json_path);
  if (!config.ok()) return config.status();
  LoadedPolicy policy{*config, ActorCritic(*config)};
  try {
    torch::load(policy.net, dir + "/policy.pt");
  } catch (const std::exception& e) {
    return absl::InvalidArgumentError(
        absl::StrCat(dir, "/policy.pt: cannot load it for the network policy.json describes: ",
                     std::string(e.what()).substr(0, 300)));
  }
  policy.net->eval();
  return policy;
}

}  // namespace hlogym::rl
