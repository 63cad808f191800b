#include "agents/rl/networks.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "agents/coreset_agent.h"
#include "hlo/opcode.h"
#include "hlo/status_macros.h"
#include "nlohmann/json.hpp"
#include "passes/registry.h"
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
  j["network"] = network;
  j["features"] = features;
  if (gnn()) j["gnn"] = {{"dim", gnn_dim}, {"rounds", gnn_rounds}};
  j["traj_limit"] = traj_limit;
  j["value_sees_cost"] = value_sees_cost;
  j["action_masking"] = action_masking;
  j["start"] = start;
  j["reward_space"] = reward_space;
  j["trained_steps"] = trained_steps;
  j["trained_on"] = trained_on;
  return j.dump(2);
}

absl::StatusOr<std::vector<int>> PolicyConfig::start_actions() const {
  std::vector<int> starts;
  for (absl::string_view name : absl::StrSplit(start, ',', absl::SkipWhitespace())) {
    if (name == "initial" || name == "coreset") {
      starts.push_back(name == "initial" ? -1 : kCoresetStart);
      continue;
    }
    auto it = std::find(actions.begin(), actions.end(), name);
    if (it == actions.end()) {
      return absl::NotFoundError(absl::StrCat(
          "start ", name, ": neither \"initial\", \"coreset\" nor an action of the action space"));
    }
    starts.push_back(static_cast<int>(it - actions.begin()));
  }
  if (starts.empty())
    return absl::NotFoundError("no start (\"initial\", \"coreset\" or an action)");
  return starts;
}

absl::StatusOr<int> CoresetStartAction(const Environment& initial) {
  // Loaded once per process; the policy agents and the trainer's workers share it.
  static const absl::StatusOr<CoresetModel>* const model =
      new absl::StatusOr<CoresetModel>(CoresetModel::Load(DefaultCoresetPath()));
  if (!model->ok()) {
    return absl::Status(model->status().code(),
                        absl::StrCat("start coreset: ", model->status().message()));
  }
  const std::vector<std::string>& actions = initial.actions();
  auto index_of = [&](std::string_view name) -> int {
    auto it = std::find(actions.begin(), actions.end(), name);
    return it == actions.end() ? -1 : static_cast<int>(it - actions.begin());
  };
  const int pipeline = index_of(kDefaultPipeline);
  if (pipeline < 0) {
    return absl::FailedPreconditionError(
        "start coreset: needs xla-cpu-default among the actions (the predictor reads D)");
  }
  std::unique_ptr<Environment> d = initial.Fork();
  HLOGYM_ASSIGN(stepped, d->Step(pipeline));
  if (!stepped.info.error.empty()) {
    return absl::InternalError(
        absl::StrCat("start coreset: xla-cpu-default: ", stepped.info.error));
  }
  const std::vector<std::string>& chosen =
      (*model)->sequences[(*model)->Choose(CoresetFeatures(initial.module(), d->module()))];
  const int action = index_of(SequenceName(chosen));
  if (action < 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("start coreset: the coreset's sequence ", SequenceName(chosen),
                     " is not an action (train with --sequences coreset)"));
  }
  return action;
}

absl::StatusOr<PolicyConfig> PolicyConfig::FromJson(const std::string& text,
                                                    const std::string& origin) {
  nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) {
    return absl::InvalidArgumentError(absl::StrCat(origin, ": not a JSON object"));
  }
  if (j.value("format", "") != "hlogym-policy-1") {
    return absl::InvalidArgumentError(
        absl::StrCat(origin, ": not an hlogym policy (format ", j.value("format", "missing"), ")"));
  }
  PolicyConfig c;
  try {
    c.algo = j.at("algo").get<std::string>();
    c.actions = j.at("actions").get<std::vector<std::string>>();
    c.hidden = j.at("hidden").get<std::vector<int>>();
    c.network = j.value("network", "mlp");
    c.features = j.value("features", "absolute");
    if (c.gnn()) {
      c.gnn_dim = j.at("gnn").at("dim").get<int>();
      c.gnn_rounds = j.at("gnn").at("rounds").get<int>();
    }
    c.traj_limit = j.at("traj_limit").get<int>();
    c.value_sees_cost = j.at("value_sees_cost").get<bool>();
    c.action_masking = j.at("action_masking").get<bool>();
    c.start = j.value("start", "initial");  // policies written before starts existed
    c.reward_space = j.value("reward_space", "");
    c.trained_steps = j.value("trained_steps", int64_t{0});
    c.trained_on = j.value("trained_on", std::vector<std::string>{});
  } catch (const nlohmann::json::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat(origin, ": ", e.what()));
  }
  if (c.actions.empty() || c.traj_limit < 1) {
    return absl::InvalidArgumentError(absl::StrCat(origin, ": no actions or traj_limit < 1"));
  }
  if (absl::StatusOr<std::vector<int>> starts = c.start_actions(); !starts.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(origin, ": ", starts.status().message()));
  }
  for (int h : c.hidden) {
    if (h < 1)
      return absl::InvalidArgumentError(absl::StrCat(origin, ": hidden sizes must be >= 1"));
  }
  if (c.network != "mlp" && !c.gnn()) {
    return absl::InvalidArgumentError(absl::StrCat(origin, ": unknown network '", c.network, "'"));
  }
  if (const std::vector<std::string> kinds = FeatureNames();
      std::find(kinds.begin(), kinds.end(), c.features) == kinds.end()) {
    return absl::InvalidArgumentError(
        absl::StrCat(origin, ": unknown features '", c.features, "'"));
  }
  if (c.gnn_dim < 1 || c.gnn_rounds < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(origin, ": gnn dim must be >= 1 and rounds >= 0"));
  }
  return c;
}

GraphBatch MakeGraphBatch(const std::vector<const GraphFeatures*>& graphs) {
  GraphBatch batch;
  if (graphs.empty()) return batch;
  absl::flat_hash_map<const GraphFeatures*, int64_t> index_of;
  std::vector<const GraphFeatures*> distinct;
  batch.graph_of_state = torch::empty({static_cast<int64_t>(graphs.size())}, torch::kInt64);
  int64_t* graph_of_state = batch.graph_of_state.data_ptr<int64_t>();
  int64_t num_nodes = 0, num_edges = 0;
  for (size_t i = 0; i < graphs.size(); ++i) {
    auto [it, inserted] = index_of.try_emplace(graphs[i], static_cast<int64_t>(distinct.size()));
    if (inserted) {
      distinct.push_back(graphs[i]);
      num_nodes += graphs[i]->num_nodes;
      num_edges += static_cast<int64_t>(graphs[i]->edge_sources.size());
    }
    graph_of_state[i] = it->second;
  }
  constexpr int64_t K = GraphFeatures::kNodeValues;
  batch.opcodes = torch::empty({num_nodes}, torch::kInt64);
  batch.element_types = torch::empty({num_nodes}, torch::kInt64);
  batch.node_values = torch::empty({num_nodes, K}, torch::kFloat32);
  batch.edge_sources = torch::empty({num_edges}, torch::kInt64);
  batch.edge_targets = torch::empty({num_edges}, torch::kInt64);
  batch.in_degree_inverse = torch::zeros({num_nodes, 1}, torch::kFloat32);
  batch.out_degree_inverse = torch::zeros({num_nodes, 1}, torch::kFloat32);
  int64_t* opcodes = batch.opcodes.data_ptr<int64_t>();
  int64_t* element_types = batch.element_types.data_ptr<int64_t>();
  float* node_values = batch.node_values.data_ptr<float>();
  int64_t* sources = batch.edge_sources.data_ptr<int64_t>();
  int64_t* targets = batch.edge_targets.data_ptr<int64_t>();
  float* in_degree = batch.in_degree_inverse.data_ptr<float>();
  float* out_degree = batch.out_degree_inverse.data_ptr<float>();
  int64_t node_offset = 0, edge = 0;
  for (const GraphFeatures* distinct_graph : distinct) {
    const GraphFeatures& graph = *distinct_graph;
    batch.nodes_per_graph.push_back(graph.num_nodes);
    std::copy(graph.opcodes.begin(), graph.opcodes.end(), opcodes + node_offset);
    std::copy(graph.element_types.begin(), graph.element_types.end(), element_types + node_offset);
    std::copy(graph.node_values.begin(), graph.node_values.end(), node_values + node_offset * K);
    for (size_t e = 0; e < graph.edge_sources.size(); ++e, ++edge) {
      sources[edge] = node_offset + graph.edge_sources[e];
      targets[edge] = node_offset + graph.edge_targets[e];
      ++out_degree[sources[edge]];
      ++in_degree[targets[edge]];
    }
    node_offset += graph.num_nodes;
  }
  for (int64_t n = 0; n < num_nodes; ++n) {
    in_degree[n] = 1.0f / std::max(1.0f, in_degree[n]);
    out_degree[n] = 1.0f / std::max(1.0f, out_degree[n]);
  }
  return batch;
}

GraphEncoderImpl::GraphEncoderImpl(int dim, int rounds) {
  opcode_ = register_module("opcode", torch::nn::Embedding(kOpcodeCount, dim));
  element_type_ =
      register_module("element_type", torch::nn::Embedding(GraphFeatures::kElementTypes, dim));
  node_values_ = register_module("node_values", torch::nn::Linear(GraphFeatures::kNodeValues, dim));
  for (int r = 0; r < rounds; ++r) {
    rounds_.push_back(register_module(absl::StrCat("round", r), torch::nn::Linear(3 * dim, dim)));
  }
}

torch::Tensor GraphEncoderImpl::forward(const GraphBatch& b) {
  torch::Tensor h = torch::tanh(opcode_(b.opcodes) + element_type_(b.element_types) +
                                node_values_(b.node_values));
  for (torch::nn::Linear& round : rounds_) {
    torch::Tensor from_sources =
        torch::zeros_like(h).index_add(0, b.edge_targets, h.index_select(0, b.edge_sources)) *
        b.in_degree_inverse;
    torch::Tensor from_targets =
        torch::zeros_like(h).index_add(0, b.edge_sources, h.index_select(0, b.edge_targets)) *
        b.out_degree_inverse;
    h = h + torch::tanh(round(torch::cat({h, from_sources, from_targets}, 1)));
  }
  // Per graph rather than segment_reduce, which TRPO cannot differentiate twice.
  std::vector<torch::Tensor> pooled;
  for (const torch::Tensor& nodes : h.split_with_sizes(b.nodes_per_graph)) {
    pooled.push_back(torch::cat({nodes.mean(0), nodes.amax(0)}));
  }
  return torch::stack(pooled).index_select(0, b.graph_of_state);
}

ActorCriticImpl::ActorCriticImpl(const PolicyConfig& config)
    : value_sees_cost_(config.value_sees_cost) {
  // Registered only for gnn, so that mlp policy files stay as they were.
  if (config.gnn())
    graph_ = register_module("graph", GraphEncoder(config.gnn_dim, config.gnn_rounds));
  const int64_t inputs = config.state_size();
  const int64_t actions = static_cast<int64_t>(config.actions.size());
  actor_ = register_module("actor", MakeMlp(inputs, config.hidden, actions));
  critic_ = register_module(
      "critic",
      MakeMlp(inputs + (value_sees_cost_ ? FeatureLayout::kCostSize : 0), config.hidden, 1));
  // Small last layers: the initial policy is close to uniform, the initial
  // values close to zero.
  torch::NoGradGuard no_grad;
  for (torch::nn::Sequential* mlp : {&actor_, &critic_}) {
    auto last = (*mlp)->ptr(static_cast<int64_t>((*mlp)->size()) - 1)->as<torch::nn::Linear>();
    last->weight.mul_(0.01);
    last->bias.zero_();
  }
}

torch::Tensor ActorCriticImpl::Encode(const torch::Tensor& features, const GraphBatch& graphs) {
  if (!graph_) return features;
  return torch::cat({features, graph_->forward(graphs)}, 1);
}

torch::Tensor ActorCriticImpl::Logits(const torch::Tensor& state) { return actor_->forward(state); }

torch::Tensor ActorCriticImpl::Value(const torch::Tensor& state, const torch::Tensor& cost) {
  // The critic reads the graph encoding but does not train it: the returns
  // are heavy-tailed, and their gradients would drown the actor's in it.
  const torch::Tensor seen = state.detach();
  torch::Tensor input = value_sees_cost_ ? torch::cat({seen, cost}, 1) : seen;
  return critic_->forward(input).squeeze(1);
}

std::vector<torch::Tensor> ActorCriticImpl::ActorParameters() {
  std::vector<torch::Tensor> params = actor_->parameters();
  if (graph_) {
    std::vector<torch::Tensor> encoder = graph_->parameters();
    params.insert(params.end(), encoder.begin(), encoder.end());
  }
  return params;
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
  if (ec)
    return absl::InternalError(
        absl::StrCat("cannot rename ", tmp, " to ", path, ": ", ec.message()));
  return absl::OkStatus();
}

absl::Status SavePolicy(const std::string& dir, const PolicyConfig& config, ActorCritic& net) {
  HLOGYM_RETURN_IF_ERROR(SaveModuleAtomically(
      dir + "/policy.pt", [&](const std::string& tmp) { torch::save(net, tmp); }));
  return WriteTextFileAtomically(dir + "/policy.json", config.ToJson() + "\n");
}

absl::StatusOr<LoadedPolicy> LoadPolicy(const std::string& dir) {
  const std::string json_path = dir + "/policy.json";
  std::ifstream in(json_path);
  if (!in) {
    return absl::NotFoundError(absl::StrCat(
        json_path,
        ": no policy here (a policy directory holds policy.json and policy.pt, as written by "
        "`hlogym train --out DIR`)"));
  }
  std::stringstream text;
  text << in.rdbuf();
  HLOGYM_ASSIGN(config, PolicyConfig::FromJson(text.str(), json_path));
  LoadedPolicy policy{config, ActorCritic(config)};
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
