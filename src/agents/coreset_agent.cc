#include "agents/coreset_agent.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <filesystem>
#include <memory>
#include <mutex>
#include <numeric>
#include <random>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "agents/auto_agent.h"
#include "gym/benchmark.h"
#include "gym/spaces.h"
#include "gym/vec_env.h"
#include "nlohmann/json.hpp"
#include "text/file_io.h"

namespace hlogym {
namespace fs = std::filesystem;
namespace {

constexpr std::string_view kDefaultPipeline = "xla-cpu-default";
constexpr std::string_view kExactPipeline = "xla-cpu-default-exact";
constexpr std::string_view kFormat = "hlogym-coreset-1";

// Appends one module's half of CoresetFeatures.
void AppendModuleFeatures(const Module& module, std::vector<float>& out) {
  const std::vector<int64_t> autophase = ComputeAutophaseFeatures(module);
  // Feature 0 of the autophase summary is the op count.
  const double log_ops = std::log1p(static_cast<double>(autophase[0]));
  out.push_back(static_cast<float>(log_ops));
  for (size_t i = 1; i < autophase.size(); ++i) {
    out.push_back(static_cast<float>(std::log1p(static_cast<double>(autophase[i])) - log_ops));
  }
}

// The op counts of one benchmark's replays: D and, per sequence, the lowest
// op count on its replay from I.
struct Replays {
  int64_t d = 0;
  std::vector<int64_t> lowest;
  std::vector<float> features;
};

absl::StatusOr<Replays> ReplayAll(Environment& env, std::string_view spec,
                                  const std::vector<std::vector<std::string>>& sequences) {
  if (absl::StatusOr<Observation> reset = env.Reset(spec); !reset.ok()) return reset.status();
  std::unique_ptr<Environment> d = env.Fork();
  if (absl::StatusOr<StepResult> step = d->Step(kDefaultPipeline); !step.ok()) return step.status();
  Replays replays;
  replays.d = d->op_count();
  replays.features = CoresetFeatures(env.module(), d->module());
  for (const std::vector<std::string>& sequence : sequences) {
    std::unique_ptr<Environment> replay = env.Fork();
    int64_t lowest = replay->op_count();
    for (const std::string& pass : sequence) {
      absl::StatusOr<StepResult> step = replay->Step(pass);
      if (!step.ok()) return step.status();
      lowest = std::min(lowest, replay->op_count());
    }
    replays.lowest.push_back(lowest);
  }
  return replays;
}

float NormalizedValue(int64_t d, int64_t r) {
  return static_cast<float>(std::log(static_cast<double>(std::max<int64_t>(d, 1)) /
                                     static_cast<double>(std::max<int64_t>(r, 1))));
}

// The replay environment: auto's actions (the passes and the pipelines) plus
// any pass a sequence names; Create rejects an unknown one.
absl::StatusOr<std::unique_ptr<Environment>> MakeReplayEnvironment(
    const std::vector<std::vector<std::string>>& sequences, std::shared_ptr<StepCache> cache) {
  EnvOptions options;
  options.actions = AutoActionSpace(/*allow_excess_precision=*/false);
  absl::flat_hash_set<std::string> known(options.actions.begin(), options.actions.end());
  for (const std::vector<std::string>& sequence : sequences) {
    for (const std::string& pass : sequence) {
      if (known.insert(pass).second) options.actions.push_back(pass);
    }
  }
  options.traj_limit = 0;
  options.use_cache = true;
  return Environment::Create(options, PassRegistry::WithPipelines(), std::move(cache));
}

}  // namespace

// ---------------------------------------------------------------------------
// Features and the model.

int CoresetFeatureSize() { return 2 * static_cast<int>(AutophaseFeatureNames().size()) + 1; }

std::vector<float> CoresetFeatures(const Module& initial, const Module& d) {
  std::vector<float> features;
  features.reserve(CoresetFeatureSize());
  AppendModuleFeatures(initial, features);
  const float log_i = features.front();
  AppendModuleFeatures(d, features);
  const float log_d = features[features.size() - AutophaseFeatureNames().size()];
  features.push_back(log_d - log_i);
  return features;
}

std::vector<double> CoresetModel::Predict(const std::vector<float>& x) const {
  const size_t n = features.size();
  std::vector<std::pair<double, size_t>> distances;
  distances.reserve(n);
  for (size_t g = 0; g < n; ++g) {
    double d2 = 0;
    for (size_t i = 0; i < x.size() && i < features[g].size(); ++i) {
      const double a = (x[i] - feature_mean[i]) / feature_scale[i];
      const double b = (features[g][i] - feature_mean[i]) / feature_scale[i];
      d2 += (a - b) * (a - b);
    }
    distances.emplace_back(d2, g);
  }
  const size_t k = std::min<size_t>(std::max(neighbors, 1), n);
  std::partial_sort(distances.begin(), distances.begin() + k, distances.end());
  std::vector<double> predicted(sequences.size(), 0.0);
  for (size_t j = 0; j < k; ++j) {
    const std::vector<float>& row = values[distances[j].second];
    for (size_t s = 0; s < predicted.size(); ++s) predicted[s] += row[s] / static_cast<double>(k);
  }
  return predicted;
}

int CoresetModel::Choose(const std::vector<float>& x) const {
  const std::vector<double> predicted = Predict(x);
  return static_cast<int>(std::max_element(predicted.begin(), predicted.end()) - predicted.begin());
}

std::string CoresetModel::ToJson() const {
  // Four decimals are far below what separates graphs or sequences, and keep
  // the shipped file small; one line per training graph keeps it readable.
  auto rounded = [](const std::vector<float>& xs) {
    std::vector<double> out;
    for (float x : xs) out.push_back(std::round(static_cast<double>(x) * 1e4) / 1e4);
    return out;
  };
  nlohmann::json j;
  j["format"] = kFormat;
  j["command"] = command;
  j["trained_on"] = trained_on;
  j["neighbors"] = neighbors;
  j["candidates"] = candidates;
  j["sequences"] = sequences;
  j["feature_mean"] = rounded(feature_mean);
  j["feature_scale"] = rounded(feature_scale);
  j["graphs"] = nlohmann::json::array();
  std::string text = j.dump(1);
  std::string rows;
  for (size_t g = 0; g < graphs.size(); ++g) {
    const nlohmann::json row = {{"graph", graphs[g]}, {"features", rounded(features[g])}, {"values", rounded(values[g])}};
    absl::StrAppend(&rows, g == 0 ? "\n  " : ",\n  ", row.dump());
  }
  const std::string empty = "\"graphs\": []";
  text.replace(text.find(empty), empty.size(), absl::StrCat("\"graphs\": [", rows, "\n ]"));
  return text;
}

absl::StatusOr<CoresetModel> CoresetModel::FromJson(std::string_view json, std::string_view source) {
  auto bad = [&](std::string_view why) {
    return absl::InvalidArgumentError(absl::StrCat(std::string(source), ": ", std::string(why)));
  };
  CoresetModel model;
  try {
    const nlohmann::json j = nlohmann::json::parse(json);
    if (!j.is_object() || j.value("format", std::string()) != kFormat) {
      return bad(absl::StrCat("not a coreset model (no \"format\": \"", std::string(kFormat), "\")"));
    }
    model.command = j.value("command", std::string());
    model.trained_on = j.value("trained_on", std::vector<std::string>{});
    model.neighbors = j.at("neighbors").get<int>();
    model.candidates = j.value("candidates", 0);
    model.sequences = j.at("sequences").get<std::vector<std::vector<std::string>>>();
    model.feature_mean = j.at("feature_mean").get<std::vector<float>>();
    model.feature_scale = j.at("feature_scale").get<std::vector<float>>();
    for (const nlohmann::json& row : j.at("graphs")) {
      model.graphs.push_back(row.at("graph").get<std::string>());
      model.features.push_back(row.at("features").get<std::vector<float>>());
      model.values.push_back(row.at("values").get<std::vector<float>>());
    }
  } catch (const std::exception& e) {
    return bad(e.what());
  }
  const size_t size = CoresetFeatureSize();
  if (model.sequences.empty()) return bad("no sequences");
  if (model.graphs.empty()) return bad("no training graphs");
  if (model.neighbors < 1) return bad("\"neighbors\" must be at least 1");
  if (model.feature_mean.size() != size || model.feature_scale.size() != size) {
    return bad(absl::StrCat("feature_mean and feature_scale must have ", size,
                            " entries (the features of this hlogym)"));
  }
  if (std::any_of(model.feature_scale.begin(), model.feature_scale.end(),
                  [](float s) { return !(s > 0); })) {
    return bad("feature_scale entries must be positive");
  }
  for (size_t g = 0; g < model.graphs.size(); ++g) {
    if (model.features[g].size() != size || model.values[g].size() != model.sequences.size()) {
      return bad(absl::StrCat("graph ", model.graphs[g], ": expected ", size, " features and ",
                              model.sequences.size(), " values"));
    }
  }
  return model;
}

absl::StatusOr<CoresetModel> CoresetModel::Load(const std::string& path) {
  std::error_code ec;
  const std::string file =
      fs::is_directory(path, ec) ? (fs::path(path) / "coreset.json").string() : path;
  absl::StatusOr<std::string> text = ReadTextFile(file);
  if (!text.ok()) return text.status();
  return FromJson(*text, file);
}

std::string DefaultCoresetPath() {
  return (fs::path(DataRoot()) / "datasets/policies/coreset").string();
}

std::vector<int> GreedyCoreset(const std::vector<std::vector<float>>& values, int k) {
  if (values.empty()) return {};
  const size_t columns = values.front().size();
  std::vector<float> covered(values.size(), 0.0f);  // max(0, best picked value) per graph
  std::vector<int> picked;
  std::vector<bool> taken(columns, false);
  while (static_cast<int>(picked.size()) < k) {
    int best = -1;
    double best_gain = 0;
    for (size_t c = 0; c < columns; ++c) {
      if (taken[c]) continue;
      double gain = 0;
      for (size_t g = 0; g < values.size(); ++g) gain += std::max(0.0f, values[g][c] - covered[g]);
      if (gain > best_gain) {
        best_gain = gain;
        best = static_cast<int>(c);
      }
    }
    if (best < 0) break;  // nothing adds anything
    taken[best] = true;
    picked.push_back(best);
    for (size_t g = 0; g < values.size(); ++g) covered[g] = std::max(covered[g], values[g][best]);
  }
  return picked;
}

// ---------------------------------------------------------------------------
// Training.

absl::StatusOr<CoresetModel> TrainCoreset(
    const std::vector<std::string>& all_specs, const CoresetTrainOptions& options,
    const std::function<void(const CoresetTrainProgress&)>& progress) {
  if (all_specs.empty()) return absl::InvalidArgumentError("coreset: no training benchmarks");
  if (options.coreset_size < 1) return absl::InvalidArgumentError("coreset: the coreset size must be at least 1");
  if (!(options.graph_fraction > 0 && options.graph_fraction <= 1)) {
    return absl::InvalidArgumentError("coreset: the graph fraction must be in (0, 1]");
  }
  std::mt19937_64 rng(options.seed);
  std::vector<std::string> specs = all_specs;
  if (options.graph_fraction < 1) {
    std::vector<size_t> order(all_specs.size());
    std::iota(order.begin(), order.end(), 0);
    std::shuffle(order.begin(), order.end(), rng);
    order.resize(std::max<size_t>(1, std::lround(options.graph_fraction * all_specs.size())));
    std::sort(order.begin(), order.end());
    specs.clear();
    for (size_t i : order) specs.push_back(all_specs[i]);
  }
  absl::StatusOr<AutoPrior> prior = AutoPrior::Load(DefaultAutoPriorPath());
  if (!prior.ok()) return prior.status();
  const int n = static_cast<int>(specs.size());
  ThreadPool pool(std::max(1, options.threads));
  auto cache = std::make_shared<StepCache>(EnvOptions{}.cache_max_instructions);

  // 1. Candidates: auto's path on each training graph.
  std::vector<std::vector<std::string>> paths(n);
  std::vector<absl::Status> errors(n);
  std::vector<std::unique_ptr<AutoAgent>> agents;
  for (int t = 0; t < pool.num_threads(); ++t) {
    AgentOptions agent_options;
    agent_options.seed = options.seed;
    agent_options.cache = cache;
    AutoOptions auto_options;
    auto_options.validate = false;
    agents.push_back(std::make_unique<AutoAgent>(agent_options, *prior, auto_options));
  }
  std::atomic<int> done = 0;
  std::mutex progress_mutex;
  auto report = [&](std::string_view phase) {
    const int now = ++done;
    if (!progress) return;
    std::lock_guard<std::mutex> lock(progress_mutex);
    progress({std::string(phase), now, n});
  };
  // Agents and environments are not thread-safe: thread t takes every
  // threads-th benchmark with its own.
  const int threads = pool.num_threads();
  auto for_each_benchmark = [&](const std::function<void(int thread, int i)>& fn) {
    pool.ParallelFor(threads, [&](int t) {
      for (int i = t; i < n; i += threads) fn(t, i);
    });
  };
  for_each_benchmark([&](int t, int i) {
    absl::StatusOr<SearchResult> result = agents[t]->Optimize(specs[i], SearchBudget{options.auto_steps, 0});
    if (result.ok()) {
      paths[i] = result->passes;
    } else {
      errors[i] = result.status();
    }
    report("candidates");
  });
  for (const absl::Status& e : errors) {
    if (!e.ok()) return e;
  }
  std::vector<std::vector<std::string>> candidates = {{std::string(kDefaultPipeline)},
                                                      {std::string(kExactPipeline)}};
  {
    std::vector<std::vector<std::string>> found;
    absl::flat_hash_set<std::string> seen = {std::string(kDefaultPipeline), std::string(kExactPipeline)};
    for (const std::vector<std::string>& path : paths) {
      if (!path.empty() && seen.insert(absl::StrJoin(path, ",")).second) found.push_back(path);
    }
    std::shuffle(found.begin(), found.end(), rng);
    const size_t room = std::max<int>(0, options.max_candidates - static_cast<int>(candidates.size()));
    if (found.size() > room) found.resize(room);
    candidates.insert(candidates.end(), found.begin(), found.end());
  }

  // 2. Every candidate on every training graph.
  std::vector<Replays> replays(n);
  std::vector<std::unique_ptr<Environment>> envs;
  for (int t = 0; t < threads; ++t) {
    absl::StatusOr<std::unique_ptr<Environment>> env = MakeReplayEnvironment(candidates, cache);
    if (!env.ok()) return env.status();
    envs.push_back(*std::move(env));
  }
  done = 0;
  for_each_benchmark([&](int t, int i) {
    absl::StatusOr<Replays> r = ReplayAll(*envs[t], specs[i], candidates);
    if (r.ok()) {
      replays[i] = *std::move(r);
    } else {
      errors[i] = absl::Status(r.status().code(), absl::StrCat(specs[i], ": ", r.status().message()));
    }
    report("values");
  });
  for (const absl::Status& e : errors) {
    if (!e.ok()) return e;
  }
  std::vector<std::vector<float>> values(n);
  for (int i = 0; i < n; ++i) {
    for (int64_t r : replays[i].lowest) values[i].push_back(NormalizedValue(replays[i].d, r));
  }

  // 3. The coreset (the default pipeline alone when nothing beats it anywhere).
  std::vector<int> picked = GreedyCoreset(values, options.coreset_size);
  if (picked.empty()) picked = {0};

  // 4. The predictor's data.
  CoresetModel model;
  model.neighbors = options.neighbors;
  model.candidates = static_cast<int>(candidates.size());
  for (int c : picked) model.sequences.push_back(candidates[c]);
  const size_t size = CoresetFeatureSize();
  model.feature_mean.assign(size, 0.0f);
  model.feature_scale.assign(size, 0.0f);
  for (int i = 0; i < n; ++i) {
    model.graphs.push_back(specs[i]);
    model.features.push_back(replays[i].features);
    std::vector<float> row;
    for (int c : picked) row.push_back(values[i][c]);
    model.values.push_back(std::move(row));
    for (size_t f = 0; f < size; ++f) model.feature_mean[f] += replays[i].features[f] / n;
  }
  for (int i = 0; i < n; ++i) {
    for (size_t f = 0; f < size; ++f) {
      const float centered = replays[i].features[f] - model.feature_mean[f];
      model.feature_scale[f] += centered * centered / n;
    }
  }
  // A feature constant over the training graphs carries no distance.
  for (float& s : model.feature_scale) s = std::max(std::sqrt(s), 1e-3f);
  return model;
}

// ---------------------------------------------------------------------------
// The agent.

CoresetAgent::CoresetAgent(AgentOptions options, CoresetModel model)
    : Agent(std::move(options)), model_(std::move(model)) {
  if (options_.registry == &PassRegistry::Builtin()) options_.registry = &PassRegistry::WithPipelines();
  std::vector<std::string>& actions = options_.env.actions;
  if (actions.empty()) actions = AutoActionSpace(options_.allow_excess_precision);
  absl::flat_hash_set<std::string> known(actions.begin(), actions.end());
  known.insert(std::string(kDefaultPipeline));
  if (std::find(actions.begin(), actions.end(), kDefaultPipeline) == actions.end()) {
    actions.emplace_back(kDefaultPipeline);
  }
  for (const std::vector<std::string>& sequence : model_.sequences) {
    for (const std::string& pass : sequence) {
      if (known.insert(pass).second) actions.push_back(pass);
    }
  }
}

absl::Status CoresetAgent::Search(SearchContext& ctx) {
  const std::vector<std::string>& actions = ctx.root().actions();
  auto action_of = [&](std::string_view pass) {
    return static_cast<int>(std::find(actions.begin(), actions.end(), pass) - actions.begin());
  };
  std::unique_ptr<Environment> d = ctx.root().Fork();
  StepInfo info;
  if (!ctx.Step(*d, action_of(kDefaultPipeline), &info)) {
    return absl::InternalError("the xla-cpu-default step was refused");
  }
  if (!info.error.empty()) return absl::InternalError(absl::StrCat("xla-cpu-default: ", info.error));
  const int chosen = model_.Choose(CoresetFeatures(ctx.root().module(), d->module()));
  std::unique_ptr<Environment> env = ctx.root().Fork();
  for (const std::string& pass : model_.sequences[chosen]) {
    if (!ctx.Step(*env, action_of(pass))) break;
  }
  return absl::OkStatus();
}

absl::StatusOr<SearchResult> CoresetAgent::Optimize(std::string_view benchmark,
                                                    const SearchBudget& budget) {
  absl::StatusOr<SearchResult> result = Agent::Optimize(benchmark, budget);
  if (!result.ok()) return result;
  return NoWorseThanDefault(benchmark, *std::move(result));
}

}  // namespace hlogym
