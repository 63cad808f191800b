#include "agents/auto_agent.h"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <map>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "gym/benchmark.h"
#include "hlo/status_macros.h"
#include "nlohmann/json.hpp"
#include "passes/pass.h"
#include "text/file_io.h"

namespace hlogym {
namespace fs = std::filesystem;

// ---------------------------------------------------------------------------
// The prior.

std::vector<std::string> AutoPrior::ActionNames() const {
  std::vector<std::string> names;
  for (const Entry& e : actions) names.push_back(e.action);
  return names;
}

std::string AutoPrior::ToJson() const {
  nlohmann::json j;
  j["format"] = "hlogym-auto-prior-1";
  j["command"] = command;
  j["trained_on"] = trained_on;
  j["training_graphs"] = training_graphs;
  nlohmann::json list = nlohmann::json::array();
  for (const Entry& e : actions) {
    list.push_back({{"action", e.action}, {"graphs", e.graphs}, {"op_reduction", e.op_reduction}});
  }
  j["actions"] = std::move(list);
  return j.dump(1);
}

absl::StatusOr<AutoPrior> AutoPrior::FromJson(std::string_view json, std::string_view source) {
  AutoPrior prior;
  try {
    nlohmann::json j = nlohmann::json::parse(json);
    if (!j.is_object() || !j.contains("actions") || !j["actions"].is_array()) {
      return absl::InvalidArgumentError(
          absl::StrCat(std::string(source), ": not an auto prior (no \"actions\" list)"));
    }
    prior.command = j.value("command", std::string());
    prior.training_graphs = j.value("training_graphs", 0);
    if (j.contains("trained_on"))
      prior.trained_on = j["trained_on"].get<std::vector<std::string>>();
    for (const nlohmann::json& e : j["actions"]) {
      Entry entry;
      entry.action = e.at("action").get<std::string>();
      entry.graphs = e.value("graphs", 0);
      entry.op_reduction = e.value("op_reduction", int64_t{0});
      prior.actions.push_back(std::move(entry));
    }
  } catch (const std::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat(std::string(source), ": ", e.what()));
  }
  return prior;
}

absl::StatusOr<AutoPrior> AutoPrior::Load(const std::string& path) {
  const std::string file = ModelFile(path, "prior.json");
  HLOGYM_ASSIGN(text, ReadTextFile(file));
  return FromJson(text, file);
}

std::string DefaultAutoPriorPath() {
  return (fs::path(DataRoot()) / "datasets/policies/auto").string();
}

std::string DefaultAutoGuidePath() {
  return (fs::path(DataRoot()) / "datasets/policies/auto-guide").string();
}

std::string DefaultAutoGuideAutoPathsModel() {
  return (fs::path(DefaultAutoGuidePath()) / "auto-paths.json").string();
}

namespace {
std::vector<std::string> PassesOf(const PassRegistry& registry, bool allow_excess_precision) {
  std::vector<std::string> actions;
  for (const PassInfo& info : registry.passes()) {
    if (!allow_excess_precision && ChangesNumericPrecision(info.name)) continue;
    actions.push_back(info.name);
  }
  return actions;
}
}  // namespace

std::vector<std::string> AutoActionSpace(bool allow_excess_precision) {
  return PassesOf(PassRegistry::WithPipelines(), allow_excess_precision);
}

std::vector<std::string> AutoSinglePassActions() {
  return PassesOf(PassRegistry::Builtin(), /*allow_excess_precision=*/false);
}

// ---------------------------------------------------------------------------
// The agent.

AutoAgent::AutoAgent(AgentOptions options, AutoPrior prior, AutoOptions auto_options)
    : Agent(std::move(options)), prior_(std::move(prior)), auto_options_(auto_options) {
  // The built-in passes plus the pipelines as macro-actions; a caller's own
  // registry (tests) must hold xla-cpu-default itself.
  if (options_.registry == &PassRegistry::Builtin())
    options_.registry = &PassRegistry::WithPipelines();
  std::vector<std::string>& actions = options_.env.actions;
  if (actions.empty()) actions = AutoActionSpace(options_.allow_excess_precision);
  if (std::find(actions.begin(), actions.end(), kDefaultPipeline) == actions.end()) {
    actions.emplace_back(kDefaultPipeline);
  }
  // The guide's passes are replayed, never chosen in the descent: they go
  // last, and only those already allowed join other_actions_ below.
  const size_t allowed = actions.size();
  if (auto_options_.guide) AddSequencePasses({auto_options_.guide->Passes()}, actions);
  auto index_of = [&](std::string_view name) { return ActionIndex(name); };
  pipeline_action_ = index_of(kDefaultPipeline);
  exact_pipeline_action_ = index_of(kExactPipeline);
  std::vector<bool> in_prior(actions.size(), false);
  if (!auto_options_.explore_all) {
    for (const AutoPrior::Entry& e : prior_.actions) {
      const int a = index_of(e.action);
      // Not allowed here (or listed twice).
      if (a < 0 || a >= static_cast<int>(allowed) || in_prior[a]) continue;
      in_prior[a] = true;
      prior_actions_.push_back(a);
    }
  }
  for (int a = 0; a < static_cast<int>(allowed); ++a) {
    if (!in_prior[a]) other_actions_.push_back(a);
  }
}

namespace {

class CoresetGuide : public AutoGuide {
 public:
  explicit CoresetGuide(std::vector<CoresetModel> models) : models_(std::move(models)) {}
  std::vector<std::string> Passes() const override {
    std::vector<std::string> passes;
    for (const CoresetModel& model : models_) AddSequencePasses(model.sequences, passes);
    return passes;
  }
  absl::StatusOr<std::vector<std::vector<std::string>>> Sequences(const Environment& initial,
                                                                  const Environment& d) override {
    const std::vector<float> features = CoresetFeatures(initial.module(), d.module());
    std::vector<std::vector<std::string>> sequences;
    auto add = [&](const std::vector<std::string>& sequence) {
      if (std::find(sequences.begin(), sequences.end(), sequence) == sequences.end())
        sequences.push_back(sequence);
    };
    for (const CoresetModel& model : models_) {
      const int chosen = model.Choose(features);
      add(model.sequences[chosen]);
      for (int i = 0; i < static_cast<int>(model.sequences.size()); ++i) {
        if (i != chosen) add(model.sequences[i]);
      }
    }
    return sequences;
  }

 private:
  std::vector<CoresetModel> models_;
};

}  // namespace

std::shared_ptr<AutoGuide> MakeCoresetGuide(std::vector<CoresetModel> models) {
  return std::make_shared<CoresetGuide>(std::move(models));
}

std::shared_ptr<AutoGuide> MakeCoresetGuide(CoresetModel model) {
  std::vector<CoresetModel> models;
  models.push_back(std::move(model));
  return MakeCoresetGuide(std::move(models));
}

absl::StatusOr<std::shared_ptr<AutoGuide>> LoadShippedAutoGuide() {
  std::vector<CoresetModel> models;
  for (const std::string& path : {DefaultAutoGuidePath(), DefaultAutoGuideAutoPathsModel()}) {
    HLOGYM_ASSIGN(model, CoresetModel::Load(path));
    models.push_back(std::move(model));
  }
  return MakeCoresetGuide(std::move(models));
}

int AutoAgent::ActionIndex(std::string_view name) const {
  const std::vector<std::string>& actions = options_.env.actions;
  auto it = std::find(actions.begin(), actions.end(), name);
  return it == actions.end() ? -1 : static_cast<int>(it - actions.begin());
}

std::unique_ptr<Environment> AutoAgent::LowestOnSequence(SearchContext& ctx,
                                                         const std::vector<std::string>& sequence) {
  std::unique_ptr<Environment> env = ctx.ForkStart();
  std::unique_ptr<Environment> lowest;
  for (const std::string& pass : sequence) {
    // Passes() named every pass a guide's sequence holds.
    const int action = ActionIndex(pass);
    if (action < 0 || !ctx.Step(*env, action)) break;
    if (!lowest || env->op_count() < lowest->op_count()) lowest = env->Fork();
  }
  return lowest;
}

absl::Status AutoAgent::Search(SearchContext& ctx) {
  std::unique_ptr<Environment> d = ctx.root().Fork();
  StepInfo info;
  // D's own run says whether the exact default can differ from it: only where
  // a pass the exact pipeline omits changed the module (float normalization
  // on bf16 graphs). A cache hit ran no pass to tell.
  bool exact_may_differ = true;
  {
    PassTimer d_passes;
    if (!ctx.Step(*d, pipeline_action_, &info)) {
      return absl::InternalError("the xla-cpu-default step was refused");
    }
    exact_may_differ =
        info.cache_hit || std::any_of(d_passes.changes().begin(), d_passes.changes().end(),
                                      [](const PassTimer::Change& change) {
                                        return ExactPipelineOmits(change.name);
                                      });
  }
  if (!info.error.empty())
    return absl::InternalError(absl::StrCat("xla-cpu-default: ", info.error));
  candidates_.push_back(d->Fork());
  absl::flat_hash_set<Fingerprint> visited = {FingerprintOf(ctx.root()), FingerprintOf(*d)};
  int64_t lowest = d->op_count();
  // Where the default grows the module, the module as it is beats D, and a
  // candidate must beat it.
  AddCandidateIfLowest(ctx, ctx.root(), lowest);

  // The starts: the lowest state on each of the guide's sequences, D, the exact
  // default (no precision-changing passes; on bf16 graphs D carries float
  // normalization's converts, which only precision-changing passes remove)
  // where that differs, and I itself (where the default expands what XLA
  // would expand anyway, PyTorch's batch norms, the lowest states are off
  // both defaults).
  std::vector<std::vector<std::string>> guide_sequences;
  if (auto_options_.guide) {
    absl::StatusOr<std::vector<std::vector<std::string>>> sequences =
        auto_options_.guide->Sequences(ctx.root(), *d);
    if (sequences.ok()) guide_sequences = *std::move(sequences);
  }
  std::vector<std::unique_ptr<Environment>> starts;
  for (const std::vector<std::string>& sequence : guide_sequences) {
    std::unique_ptr<Environment> guided = LowestOnSequence(ctx, sequence);
    if (guided && visited.insert(FingerprintOf(*guided)).second)
      starts.push_back(std::move(guided));
  }
  starts.push_back(std::move(d));
  if (exact_pipeline_action_ >= 0 && exact_may_differ) {
    std::unique_ptr<Environment> exact = ctx.root().Fork();
    if (ctx.Step(*exact, exact_pipeline_action_, &info) && info.error.empty() &&
        visited.insert(FingerprintOf(*exact)).second) {
      starts.push_back(std::move(exact));
    }
  }
  starts.push_back(ctx.root().Fork());
  // Compiled for several partitions, the root split too: descents from the
  // root that split later, after simplifying, can end lower than from it.
  if (!ctx.IsAnswer(ctx.root())) starts.push_back(ctx.ForkStart());
  for (const auto& start : starts) AddCandidateIfLowest(ctx, *start, lowest);

  // From every start, a descent over the prior's actions alone (a move costs
  // a handful of steps); then, from the lowest state they reached, a descent
  // that also tries every other allowed action when its own find nothing
  // lower. Where the budget binds (large graphs), the later starts go
  // unsearched: the guide's come first.
  std::unique_ptr<Environment> lowest_end;
  for (std::unique_ptr<Environment>& start : starts) {
    if (ctx.exhausted()) break;
    std::unique_ptr<Environment> end =
        Descend(ctx, std::move(start), visited, lowest, /*widen=*/false);
    if (!lowest_end || end->op_count() < lowest_end->op_count()) lowest_end = std::move(end);
  }
  if (lowest_end && !ctx.exhausted()) {
    std::unique_ptr<Environment> end =
        Descend(ctx, std::move(lowest_end), visited, lowest, /*widen=*/true);
    // Where the widening stops, escapes (step 5), each followed by another.
    while (!ctx.exhausted()) {
      std::unique_ptr<Environment> escaped = Escape(ctx, *end, visited);
      if (!escaped) break;
      AddCandidateIfLowest(ctx, *escaped, lowest);
      visited.insert(FingerprintOf(*escaped));
      end = Descend(ctx, std::move(escaped), visited, lowest, /*widen=*/true);
    }
  }
  return absl::OkStatus();
}

std::unique_ptr<Environment> AutoAgent::Escape(SearchContext& ctx, const Environment& from,
                                               const absl::flat_hash_set<Fingerprint>& visited) {
  if (prior_actions_.empty()) return nullptr;  // no cleanups (training explores every action)
  std::vector<int> actions = prior_actions_;
  actions.insert(actions.end(), other_actions_.begin(), other_actions_.end());
  for (int a : actions) {
    std::unique_ptr<Environment> child = from.Fork();
    StepInfo step;
    if (!ctx.Step(*child, a, &step)) return nullptr;  // budget used up
    if (!step.changed) continue;
    for (int cleanup : prior_actions_) {
      std::unique_ptr<Environment> grandchild = child->Fork();
      if (!ctx.Step(*grandchild, cleanup, &step)) return nullptr;
      if (step.changed && grandchild->op_count() < from.op_count() &&
          !visited.contains(FingerprintOf(*grandchild)))
        return grandchild;
    }
  }
  return nullptr;
}

void AutoAgent::AddCandidateIfLowest(const SearchContext& ctx, const Environment& state,
                                     int64_t& lowest) {
  if (state.op_count() >= lowest || !ctx.IsAnswer(state)) return;
  lowest = state.op_count();
  candidates_.push_back(state.Fork());
}

std::unique_ptr<Environment> AutoAgent::Descend(SearchContext& ctx,
                                                std::unique_ptr<Environment> current,
                                                absl::flat_hash_set<Fingerprint>& visited,
                                                int64_t& best_overall, bool widen) {
  // Moves count as improving against this descent's own lowest; candidates
  // are states below every earlier one.
  int64_t lowest = current->op_count();
  std::unique_ptr<Environment> lowest_state = current->Fork();
  int non_improving = 0;
  // The best child of `current` over `actions`: lowest op count, first in
  // order on ties; null when none changes the module to an unvisited state.
  // `chosen`, when given, gets the action that made it. With `first_lower`,
  // the first child below the descent's lowest ends the round.
  auto best_child = [&](const std::vector<int>& actions, int* chosen = nullptr,
                        bool first_lower = false) -> std::unique_ptr<Environment> {
    std::unique_ptr<Environment> best;
    for (int a : actions) {
      std::unique_ptr<Environment> child = current->Fork();
      StepInfo step;
      if (!ctx.Step(*child, a, &step)) break;  // budget used up
      if (!step.changed || visited.contains(FingerprintOf(*child))) continue;
      if (!best || child->op_count() < best->op_count()) {
        best = std::move(child);
        if (chosen != nullptr) *chosen = a;
        if (first_lower && best->op_count() < lowest) break;
      }
    }
    return best;
  };
  // The descent's own actions: the prior's, and each action that made a move
  // in a round over the rest. With `widen`, a round over the rest (every
  // other allowed action) runs only when the descent's own actions find no
  // lower state, so most moves cost a handful of steps, not one per action;
  // and it ends at the first action that goes lower (the next rounds take
  // what else there is), so that only rounds finding nothing lower run over
  // all of the rest.
  std::vector<int> actions = prior_actions_.empty() ? other_actions_ : prior_actions_;
  std::vector<int> rest = prior_actions_.empty() || !widen ? std::vector<int>() : other_actions_;
  while (!ctx.exhausted()) {
    std::unique_ptr<Environment> best = best_child(actions);
    if ((!best || best->op_count() >= lowest) && !rest.empty() && !ctx.exhausted()) {
      int other_action = -1;
      std::unique_ptr<Environment> other = best_child(rest, &other_action, /*first_lower=*/true);
      if (other && (!best || other->op_count() < best->op_count())) {
        best = std::move(other);
        // It made the move: it joins the descent's own actions.
        actions.push_back(other_action);
        rest.erase(std::find(rest.begin(), rest.end(), other_action));
      }
    }
    if (!best) break;
    AddCandidateIfLowest(ctx, *best, best_overall);
    if (best->op_count() < lowest) {
      lowest = best->op_count();
      lowest_state = best->Fork();
      non_improving = 0;
    } else if (++non_improving > auto_options_.non_improving_moves) {
      break;
    }
    visited.insert(FingerprintOf(*best));
    current = std::move(best);
  }
  return lowest_state;
}

absl::StatusOr<SearchResult> AutoAgent::Optimize(std::string_view benchmark,
                                                 const SearchBudget& budget) {
  const auto start = std::chrono::steady_clock::now();
  SearchBudget used = budget;
  if (!used.limited()) {
    used.work = kDefaultAutoWork;
    used.min_work_steps = kDefaultAutoWorkSteps;
  }
  candidates_.clear();
  absl::StatusOr<SearchResult> result = Agent::Optimize(benchmark, used);
  std::vector<std::unique_ptr<Environment>> candidates = std::move(candidates_);
  candidates_.clear();
  if (!result.ok()) return result;
  if (!auto_options_.validate) return result;

  // Best first; D (the first candidate) is tried last whatever the limit.
  const auto validate_start = std::chrono::steady_clock::now();
  std::vector<Environment*> order;
  for (size_t i = candidates.size(); i-- > 1;) {
    if (static_cast<int>(order.size()) < auto_options_.max_validations) {
      order.push_back(candidates[i].get());
    }
  }
  if (!candidates.empty()) order.push_back(candidates.front().get());
  std::shared_ptr<Environment> chosen;
  for (Environment* candidate : order) {
    ValidationResult v = candidate->Validate();
    if (v.ok) {
      chosen = candidate->Fork();
      result->validation = std::move(v);
      break;
    }
    ++result->rejected_candidates;
  }
  if (chosen == nullptr) {
    // Even D failed its check: hand back the initial module untouched.
    HLOGYM_ASSIGN(root, MakeEnvironment());
    if (absl::StatusOr<Observation> reset = (root)->Reset(benchmark); !reset.ok()) {
      return reset.status();
    }
    result->validation = (root)->Validate();
    chosen = std::move(root);
  }
  result->env = std::move(chosen);
  result->passes = result->env->record().passes;
  result->op_count = result->env->op_count();
  result->validate_seconds = SecondsSince(validate_start);
  result->seconds = SecondsSince(start);
  return result;
}

// ---------------------------------------------------------------------------
// Training.

absl::StatusOr<AutoPrior> TrainAutoPrior(
    const std::vector<std::string>& specs, int64_t steps_per_graph, uint64_t seed,
    const std::function<void(int, int, const SearchResult&)>& progress) {
  AgentOptions options;
  options.seed = seed;
  AutoOptions auto_options;
  auto_options.explore_all = true;
  auto_options.validate = false;
  AutoAgent agent(options, AutoPrior{}, auto_options);
  std::map<std::string, AutoPrior::Entry> tally;
  AutoPrior prior;
  for (size_t i = 0; i < specs.size(); ++i) {
    HLOGYM_ASSIGN(result, agent.Optimize(specs[i], SearchBudget{steps_per_graph, 0}));
    // Replay the path to attribute each move's op-count change to its action.
    StateRecord record = result.env->record();
    absl::flat_hash_set<std::string> used;
    {
      EnvOptions env_options = result.env->options();
      HLOGYM_ASSIGN(replay,
                    Environment::Create(env_options, result.env->registry(), agent.cache()));
      if (absl::StatusOr<Observation> r = (replay)->Reset(specs[i]); !r.ok()) return r.status();
      for (const std::string& pass : record.passes) {
        const int64_t before = (replay)->op_count();
        HLOGYM_RETURN_IF_ERROR((replay)->Step(pass).status());
        if ((pass == kDefaultPipeline || pass == kExactPipeline) && used.empty()) {
          used.insert(pass);  // the start, not a learned move
          continue;
        }
        AutoPrior::Entry& e = tally[pass];
        e.action = pass;
        e.op_reduction += before - (replay)->op_count();
        if (used.insert(pass).second) ++e.graphs;
      }
    }
    if (progress) progress(static_cast<int>(i), static_cast<int>(specs.size()), result);
  }
  for (auto& [name, entry] : tally) prior.actions.push_back(entry);
  std::stable_sort(prior.actions.begin(), prior.actions.end(),
                   [](const AutoPrior::Entry& a, const AutoPrior::Entry& b) {
                     if (a.graphs != b.graphs) return a.graphs > b.graphs;
                     return a.op_reduction > b.op_reduction;
                   });
  prior.training_graphs = static_cast<int>(specs.size());
  return prior;
}

}  // namespace hlogym
