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
#include "agents/search.h"
#include "gym/benchmark.h"
#include "gym/spaces.h"
#include "gym/vec_env.h"
#include "hlo/status_macros.h"
#include "nlohmann/json.hpp"
#include "text/corpus.h"
#include "text/file_io.h"

namespace hlogym {
namespace fs = std::filesystem;
namespace {

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
      HLOGYM_RETURN_IF_ERROR(replay->Step(pass).status());
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
  AddSequencePasses(sequences, options.actions);
  options.traj_limit = 0;
  options.use_cache = true;
  return Environment::Create(options, PassRegistry::WithPipelines(), std::move(cache));
}

// Mean and standard deviation per feature over the rows listed in `use`; a
// feature constant there gets scale 0, which Nearest leaves out (it says
// nothing about which training graph is nearer).
void Standardize(const std::vector<std::vector<float>>& rows, const std::vector<int>& use,
                 std::vector<float>& mean, std::vector<float>& scale) {
  const size_t size = rows.empty() ? 0 : rows.front().size();
  const double n = static_cast<double>(std::max<size_t>(use.size(), 1));
  std::vector<double> sum(size, 0.0), squares(size, 0.0);
  for (int r : use) {
    for (size_t f = 0; f < size; ++f) sum[f] += rows[r][f];
  }
  mean.assign(size, 0.0f);
  scale.assign(size, 0.0f);
  for (size_t f = 0; f < size; ++f) mean[f] = static_cast<float>(sum[f] / n);
  for (int r : use) {
    for (size_t f = 0; f < size; ++f) squares[f] += (rows[r][f] - mean[f]) * (rows[r][f] - mean[f]);
  }
  for (size_t f = 0; f < size; ++f) {
    const float deviation = static_cast<float>(std::sqrt(squares[f] / n));
    scale[f] = deviation > 1e-6f ? deviation : 0.0f;
  }
}

// The rows listed in `use`, nearest to `x` first (standardized Euclidean
// distance over the features with a scale; ties by position in `use`).
std::vector<int> Nearest(const std::vector<std::vector<float>>& rows, const std::vector<int>& use,
                         const std::vector<float>& mean, const std::vector<float>& scale,
                         const std::vector<float>& x) {
  std::vector<std::pair<double, int>> distances;
  distances.reserve(use.size());
  for (int r : use) {
    double d2 = 0;
    for (size_t f = 0; f < x.size() && f < rows[r].size(); ++f) {
      if (scale[f] <= 0) continue;
      const double diff = (x[f] - rows[r][f]) / scale[f];
      d2 += diff * diff;
    }
    distances.emplace_back(d2, static_cast<int>(distances.size()));
  }
  std::stable_sort(distances.begin(), distances.end());
  std::vector<int> order;
  for (const auto& [d2, i] : distances) order.push_back(use[i]);
  return order;
}

// The mean of `values` over the first k rows of `nearest`, for the columns
// `columns`; the index (into `columns`) of the highest, the first on ties.
int ChooseAmongNearest(const std::vector<std::vector<float>>& values,
                       const std::vector<int>& nearest, int k, const std::vector<int>& columns,
                       std::vector<double>* predicted = nullptr) {
  std::vector<double> mean(columns.size(), 0.0);
  const int used = std::min<int>(std::max(k, 1), nearest.size());
  for (int j = 0; j < used; ++j) {
    for (size_t c = 0; c < columns.size(); ++c) mean[c] += values[nearest[j]][columns[c]] / used;
  }
  const int best = static_cast<int>(std::max_element(mean.begin(), mean.end()) - mean.begin());
  if (predicted != nullptr) *predicted = std::move(mean);
  return best;
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
  std::vector<int> all(features.size());
  std::iota(all.begin(), all.end(), 0);
  std::vector<int> columns(sequences.size());
  std::iota(columns.begin(), columns.end(), 0);
  std::vector<double> predicted;
  ChooseAmongNearest(values, Nearest(features, all, feature_mean, feature_scale, x), neighbors,
                     columns, &predicted);
  return predicted;
}

int CoresetModel::Choose(const std::vector<float>& x) const {
  const std::vector<double> predicted = Predict(x);
  return static_cast<int>(std::max_element(predicted.begin(), predicted.end()) - predicted.begin());
}

std::vector<CoresetFit> CrossValidateCoreset(const std::vector<std::vector<float>>& features,
                                             const std::vector<std::vector<float>>& values,
                                             const std::vector<std::string>& groups,
                                             const std::vector<int>& sizes,
                                             const std::vector<int>& neighbors) {
  std::vector<CoresetFit> fits;
  for (int size : sizes) {
    for (int k : neighbors) fits.push_back({size, k, 0.0});
  }
  const int n = static_cast<int>(features.size());
  if (n == 0 || fits.empty()) return fits;
  const int largest = *std::max_element(sizes.begin(), sizes.end());
  std::vector<std::string> distinct = groups;
  std::sort(distinct.begin(), distinct.end());
  distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
  std::vector<double> log_sums(fits.size(), 0.0);  // of max(0, log(D/R)), per fit
  for (const std::string& held_out : distinct) {
    std::vector<int> train, test;
    for (int i = 0; i < n; ++i) (groups[i] == held_out ? test : train).push_back(i);
    std::vector<std::vector<float>> train_values;
    for (int i : train) train_values.push_back(values[i]);
    // The greedy cover picks one sequence at a time: smaller coresets are its prefixes.
    const std::vector<int> picked = GreedyCoreset(train_values, largest);
    // No training graph left (one group), or nothing beats the default: D, log(D/R) = 0.
    if (train.empty() || picked.empty()) continue;
    std::vector<float> mean, scale;
    Standardize(features, train, mean, scale);
    for (int g : test) {
      const std::vector<int> nearest = Nearest(features, train, mean, scale, features[g]);
      for (size_t f = 0; f < fits.size(); ++f) {
        const size_t size = std::min<size_t>(fits[f].size, picked.size());
        const std::vector<int> columns(picked.begin(), picked.begin() + size);
        const int chosen = ChooseAmongNearest(values, nearest, fits[f].neighbors, columns);
        log_sums[f] += std::max(0.0f, values[g][columns[chosen]]);
      }
    }
  }
  for (size_t f = 0; f < fits.size(); ++f) fits[f].geomean_d_over_r = std::exp(log_sums[f] / n);
  return fits;
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
  nlohmann::json fits = nlohmann::json::array();
  for (const CoresetFit& fit : cross_validation) {
    fits.push_back({{"size", fit.size},
                    {"neighbors", fit.neighbors},
                    {"geomean_d_over_r", std::round(fit.geomean_d_over_r * 1e4) / 1e4}});
  }
  j["cross_validation"] = std::move(fits);
  j["sequences"] = sequences;
  j["feature_mean"] = rounded(feature_mean);
  j["feature_scale"] = rounded(feature_scale);
  j["graphs"] = nlohmann::json::array();
  std::string text = j.dump(1);
  std::string rows;
  for (size_t g = 0; g < graphs.size(); ++g) {
    const nlohmann::json row = {
        {"graph", graphs[g]}, {"features", rounded(features[g])}, {"values", rounded(values[g])}};
    absl::StrAppend(&rows, g == 0 ? "\n  " : ",\n  ", row.dump());
  }
  const std::string empty = "\"graphs\": []";
  text.replace(text.find(empty), empty.size(), absl::StrCat("\"graphs\": [", rows, "\n ]"));
  return text;
}

absl::StatusOr<CoresetModel> CoresetModel::FromJson(std::string_view json,
                                                    std::string_view source) {
  auto bad = [&](std::string_view why) {
    return absl::InvalidArgumentError(absl::StrCat(std::string(source), ": ", std::string(why)));
  };
  CoresetModel model;
  try {
    const nlohmann::json j = nlohmann::json::parse(json);
    if (!j.is_object() || j.value("format", std::string()) != kFormat) {
      return bad(
          absl::StrCat("not a coreset model (no \"format\": \"", std::string(kFormat), "\")"));
    }
    model.command = j.value("command", std::string());
    model.trained_on = j.value("trained_on", std::vector<std::string>{});
    model.neighbors = j.at("neighbors").get<int>();
    model.candidates = j.value("candidates", 0);
    for (const nlohmann::json& fit : j.value("cross_validation", nlohmann::json::array())) {
      model.cross_validation.push_back({fit.at("size").get<int>(), fit.at("neighbors").get<int>(),
                                        fit.at("geomean_d_over_r").get<double>()});
    }
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
                  [](float s) { return !(s >= 0) || !std::isfinite(s); })) {
    return bad("feature_scale entries must be finite and not negative (0: a feature left out)");
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
  const std::string file = ModelFile(path, "coreset.json");
  HLOGYM_ASSIGN(text, ReadTextFile(file));
  return FromJson(text, file);
}

std::string DefaultCoresetPath() {
  return (fs::path(DataRoot()) / "datasets/policies/coreset").string();
}

void AddSequencePasses(const std::vector<std::vector<std::string>>& sequences,
                       std::vector<std::string>& actions) {
  absl::flat_hash_set<std::string> known(actions.begin(), actions.end());
  for (const std::vector<std::string>& sequence : sequences) {
    for (const std::string& pass : sequence) {
      if (known.insert(pass).second) actions.push_back(pass);
    }
  }
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
  if (options.coreset_size < 1)
    return absl::InvalidArgumentError("coreset: the coreset size must be at least 1");
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
  HLOGYM_ASSIGN(prior, AutoPrior::Load(DefaultAutoPriorPath()));
  const int n = static_cast<int>(specs.size());
  ThreadPool pool(std::max(1, options.threads));
  auto cache = std::make_shared<StepCache>(EnvOptions{}.cache_max_instructions);

  // 1. Candidates: auto's path on each training graph.
  std::vector<std::vector<std::string>> paths(n);
  std::vector<absl::Status> errors(n);
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
  // Each search's path on training graph i goes to paths[offset + i] (one
  // agent a thread); the first error ends training.
  auto collect_paths = [&](const std::vector<std::unique_ptr<Agent>>& searches,
                           const SearchBudget& budget, int offset,
                           std::string_view phase) -> absl::Status {
    done = 0;
    for_each_benchmark([&](int t, int i) {
      absl::StatusOr<SearchResult> result = searches[t]->Optimize(specs[i], budget);
      if (result.ok()) {
        paths[offset + i] = result->passes;
      } else {
        errors[i] = result.status();
      }
      report(phase);
    });
    for (const absl::Status& e : errors) {
      if (!e.ok()) return e;
    }
    return absl::OkStatus();
  };
  std::vector<std::unique_ptr<Agent>> agents;
  for (int t = 0; t < threads; ++t) {
    AgentOptions agent_options;
    agent_options.seed = options.seed;
    agent_options.cache = cache;
    AutoOptions auto_options;
    auto_options.validate = false;
    agents.push_back(std::make_unique<AutoAgent>(agent_options, prior, auto_options));
  }
  HLOGYM_RETURN_IF_ERROR(
      collect_paths(agents, SearchBudget{options.auto_steps, 0}, /*offset=*/0, "candidates"));
  // Greedy search over the single passes walks cleanup chains (cse, algsimp, constant folding,
  // the barrier expander, transpose-folding, convert-mover) that auto's descents, which take a
  // pipeline's larger first drop, never reach; on rematerialized training steps they end up to
  // 13% lower than auto (docs/agents.md). Its path is a candidate beside auto's.
  if (options.greedy_paths) {
    std::vector<std::unique_ptr<Agent>> greedy;
    for (int t = 0; t < threads; ++t) {
      AgentOptions agent_options;
      agent_options.seed = options.seed;
      agent_options.cache = cache;
      agent_options.env.actions = AutoSinglePassActions();
      greedy.push_back(std::make_unique<GreedySearchAgent>(agent_options));
    }
    paths.resize(2 * n);
    HLOGYM_RETURN_IF_ERROR(collect_paths(greedy, SearchBudget{}, /*offset=*/n, "greedy paths"));
  }
  std::vector<std::vector<std::string>> candidates = {{std::string(kDefaultPipeline)},
                                                      {std::string(kExactPipeline)}};
  {
    std::vector<std::vector<std::string>> found;
    absl::flat_hash_set<std::string> seen = {std::string(kDefaultPipeline),
                                             std::string(kExactPipeline)};
    for (const std::vector<std::string>& path : paths) {
      if (!path.empty() && seen.insert(absl::StrJoin(path, ",")).second) found.push_back(path);
    }
    std::shuffle(found.begin(), found.end(), rng);
    const size_t room =
        std::max<int>(0, options.max_candidates - static_cast<int>(candidates.size()));
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
      errors[i] =
          absl::Status(r.status().code(), absl::StrCat(specs[i], ": ", r.status().message()));
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

  // 3. The coreset's size and the predictor's neighbours, by cross-validation
  // that leaves one family out at a time (one graph at a time when all are
  // of one family): what transfers to families it did not see.
  std::vector<std::vector<float>> features;
  std::vector<std::string> groups;
  for (int i = 0; i < n; ++i) {
    features.push_back(replays[i].features);
    const CorpusModule* module = Corpus::Default().Find(specs[i]);
    groups.push_back(module != nullptr ? module->family
                                       : fs::path(specs[i]).parent_path().string());
  }
  if (std::all_of(groups.begin(), groups.end(),
                  [&](const std::string& g) { return g == groups.front(); })) {
    groups = specs;
  }
  std::vector<int> sizes;
  for (int size = 1; size < options.coreset_size; size *= 2) sizes.push_back(size);
  sizes.push_back(options.coreset_size);
  CoresetModel model;
  model.cross_validation = CrossValidateCoreset(features, values, groups, sizes, options.neighbors);
  // The best fit; on ties the smaller coreset, then fewer neighbours (listed first).
  CoresetFit best = model.cross_validation.front();
  for (const CoresetFit& fit : model.cross_validation) {
    if (fit.geomean_d_over_r > best.geomean_d_over_r + 1e-9) best = fit;
  }

  // 4. The coreset (the default pipeline alone when nothing beats it anywhere)
  // and the predictor's data.
  std::vector<int> picked = GreedyCoreset(values, best.size);
  if (picked.empty()) picked = {0};
  model.neighbors = best.neighbors;
  model.candidates = static_cast<int>(candidates.size());
  for (int c : picked) model.sequences.push_back(candidates[c]);
  std::vector<int> all(n);
  std::iota(all.begin(), all.end(), 0);
  Standardize(features, all, model.feature_mean, model.feature_scale);
  for (int i = 0; i < n; ++i) {
    model.graphs.push_back(specs[i]);
    std::vector<float> row;
    for (int c : picked) row.push_back(values[i][c]);
    model.values.push_back(std::move(row));
  }
  model.features = std::move(features);
  return model;
}

// ---------------------------------------------------------------------------
// The agent.

CoresetAgent::CoresetAgent(AgentOptions options, CoresetModel model)
    : Agent(std::move(options)), model_(std::move(model)) {
  if (options_.registry == &PassRegistry::Builtin())
    options_.registry = &PassRegistry::WithPipelines();
  std::vector<std::string>& actions = options_.env.actions;
  if (actions.empty()) actions = AutoActionSpace(options_.allow_excess_precision);
  if (std::find(actions.begin(), actions.end(), kDefaultPipeline) == actions.end()) {
    actions.emplace_back(kDefaultPipeline);
  }
  AddSequencePasses(model_.sequences, actions);
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
  if (!info.error.empty())
    return absl::InternalError(absl::StrCat("xla-cpu-default: ", info.error));
  const int chosen = model_.Choose(CoresetFeatures(ctx.root().module(), d->module()));
  std::unique_ptr<Environment> env = ctx.ForkStart();
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
