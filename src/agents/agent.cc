#include "agents/agent.h"

#include <algorithm>
#include <filesystem>
#include <limits>
#include <mutex>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "agents/auto_agent.h"
#include "agents/coreset_agent.h"
#include "agents/search.h"
#include "hlo/query.h"
#include "hlo/status_macros.h"
#include "passes/sharding/spmd_partitioner.h"
#include "text/module_locator.h"

namespace hlogym {
namespace fs = std::filesystem;

SearchContext::SearchContext(Environment& root, const AgentOptions& options,
                             const SearchBudget& budget)
    : root_(root),
      options_(options),
      budget_(budget),
      rng_(options.seed),
      start_(std::chrono::steady_clock::now()),
      split_initial_(SplitForPartitions(root.module())) {
  if (budget_.work > 0 && budget_.min_work_steps > 0) {
    budget_.work = std::max(budget_.work, budget_.min_work_steps * root.op_count());
  }
}

bool SearchContext::exhausted() {
  if (budget_hit_) return true;
  if (budget_.steps > 0 && steps_ >= budget_.steps) budget_hit_ = true;
  if (budget_.work > 0 && work_ >= budget_.work) budget_hit_ = true;
  if (budget_.seconds > 0) {
    double elapsed =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    if (elapsed >= budget_.seconds) budget_hit_ = true;
  }
  return budget_hit_;
}

bool SearchContext::Step(Environment& env, int action, StepInfo* info) {
  if (exhausted()) return false;
  absl::StatusOr<StepResult> result = env.Step(action);
  if (!result.ok()) return false;  // out of range or episode ended: a bug in the search
  ++steps_;
  if (result->info.cache_hit) ++cache_hits_;
  if (result->info.ran) work_ += result->info.previous_op_count;
  if (!result->info.error.empty()) ++pass_errors_;
  if (env.op_count() < best_op_count() && IsAnswer(env)) best_ = env.Fork();
  if (info != nullptr) *info = std::move(result->info);
  return true;
}

int64_t SearchContext::best_op_count() const {
  if (best_) return best_->op_count();
  // An unsplit root is no answer: the first split state is better.
  return split_initial_ ? std::numeric_limits<int64_t>::max() : root_.op_count();
}

bool SearchContext::IsAnswer(const Environment& state) const {
  return !split_initial_ || SameEntrySignature(*split_initial_, state.module());
}

std::unique_ptr<Environment> SearchContext::ForkStart() {
  std::unique_ptr<Environment> root = root_.Fork();
  if (IsAnswer(*root)) return root;
  std::unique_ptr<Environment> split = root_.Fork();
  const std::vector<std::string>& actions = root_.actions();
  for (std::string_view pass : kSplitStartPasses) {
    auto it = std::find(actions.begin(), actions.end(), pass);
    if (it == actions.end() || !Step(*split, static_cast<int>(it - actions.begin()))) return root;
  }
  return IsAnswer(*split) ? std::move(split) : std::move(root);
}

Agent::Agent(AgentOptions options) : options_(std::move(options)) {
  if (!options_.cache) {
    options_.cache = std::make_shared<StepCache>(options_.env.cache_max_instructions);
  }
  if (options_.registry == nullptr) options_.registry = &PassRegistry::Builtin();
  // A pipeline named among the actions is a macro-action, as it is for auto
  // and the policies: it lives in the registry that holds the pipelines.
  if (options_.registry == &PassRegistry::Builtin()) {
    for (const std::string& action : options_.env.actions) {
      if (!PassRegistry::Builtin().Knows(action) && PassRegistry::WithPipelines().Knows(action)) {
        options_.registry = &PassRegistry::WithPipelines();
        break;
      }
    }
  }
}

absl::StatusOr<std::unique_ptr<Environment>> Agent::MakeEnvironment() const {
  EnvOptions env_options = options_.env;
  env_options.traj_limit = 0;  // searches choose their own lengths
  env_options.use_cache = true;
  return Environment::Create(env_options, *options_.registry, options_.cache);
}

absl::StatusOr<SearchResult> Agent::NoWorseThanDefault(std::string_view benchmark,
                                                       SearchResult result) const {
  HLOGYM_ASSIGN(d, DefaultPipelineAgent(options_).Optimize(benchmark, {}));
  result.seconds += d.seconds;  // finding D is part of the search
  const auto validate_start = std::chrono::steady_clock::now();
  if (result.op_count <= d.op_count) {
    ValidationResult own = result.env->Validate();
    if (own.ok) {
      result.validation = std::move(own);
      result.validate_seconds += SecondsSince(validate_start);
      result.seconds += SecondsSince(validate_start);
      return result;
    }
    ++result.rejected_candidates;
    result.fallback = absl::StrCat("failed its check: ", absl::StrJoin(own.errors, "; "));
  } else {
    result.fallback = absl::StrCat("above D (", result.op_count, " > ", d.op_count, ")");
  }
  result.own_passes = result.passes;
  result.own_op_count = result.op_count;
  ValidationResult checked = d.env->Validate();
  std::shared_ptr<Environment> chosen = d.env;
  if (!checked.ok) {  // even D failed: the initial module, untouched
    HLOGYM_ASSIGN(root, MakeEnvironment());
    if (absl::StatusOr<Observation> reset = (root)->Reset(benchmark); !reset.ok()) {
      return reset.status();
    }
    checked = (root)->Validate();
    chosen = std::move(root);
    absl::StrAppend(&result.fallback, "; D failed its check too: the initial module");
  }
  result.env = std::move(chosen);
  result.passes = result.env->record().passes;
  result.op_count = result.env->op_count();
  result.validation = std::move(checked);
  result.validate_seconds += SecondsSince(validate_start);
  result.seconds += SecondsSince(validate_start);
  return result;
}

absl::StatusOr<SearchResult> Agent::Optimize(std::string_view benchmark,
                                             const SearchBudget& budget) {
  if (needs_budget() && !budget.limited()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the ", std::string(name()), " search needs a budget (steps, seconds or work)"));
  }
  auto start = std::chrono::steady_clock::now();
  HLOGYM_ASSIGN(root, MakeEnvironment());
  HLOGYM_RETURN_IF_ERROR((root)->Reset(benchmark).status());

  SearchContext ctx(*root, options_, budget);
  absl::Status searched = Search(ctx);
  if (!searched.ok()) {
    return absl::Status(searched.code(),
                        absl::StrCat(std::string(benchmark), ": ", std::string(name()),
                                     " search: ", searched.message()));
  }
  SearchResult result;
  result.agent = std::string(name());
  result.benchmark = std::string(benchmark);
  std::unique_ptr<Environment> best = ctx.TakeBest();
  result.env = best ? std::shared_ptr<Environment>(std::move(best))
                    : std::shared_ptr<Environment>((root)->Fork());
  result.passes = result.env->record().passes;
  result.initial_op_count = result.env->initial_op_count();
  result.op_count = result.env->op_count();
  result.steps = ctx.steps();
  result.work = ctx.work();
  result.cache_hits = ctx.cache_hits();
  result.pass_errors = ctx.pass_errors();
  result.budget_exhausted = ctx.budget_hit();
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result;
}

namespace {

struct RegisteredFactory {
  std::string prefix;
  std::string help;
  AgentFactory factory;
};

std::mutex& FactoriesMutex() {
  static std::mutex mu;
  return mu;
}

std::vector<RegisteredFactory>& Factories() {
  static auto* factories = new std::vector<RegisteredFactory>();
  return *factories;
}

AgentFactoryLoader& FactoryLoader() {
  static auto* loader = new AgentFactoryLoader();
  return *loader;
}

AgentFactory FindFactory(std::string_view prefix) {
  std::lock_guard<std::mutex> lock(FactoriesMutex());
  for (const RegisteredFactory& f : Factories()) {
    if (f.prefix == prefix) return f.factory;
  }
  return nullptr;
}

}  // namespace

void RegisterAgentFactory(std::string prefix, std::string help, AgentFactory factory) {
  std::lock_guard<std::mutex> lock(FactoriesMutex());
  std::vector<RegisteredFactory>& factories = Factories();
  for (RegisteredFactory& f : factories) {
    if (f.prefix == prefix) {
      f = {std::move(prefix), std::move(help), std::move(factory)};
      return;
    }
  }
  factories.push_back({std::move(prefix), std::move(help), std::move(factory)});
}

void SetAgentFactoryLoader(AgentFactoryLoader loader) {
  std::lock_guard<std::mutex> lock(FactoriesMutex());
  FactoryLoader() = std::move(loader);
}

std::vector<std::string> AgentNames() {
  std::vector<std::string> names = {"auto",   "auto:PRIOR", "coreset", "coreset:DIR", "default",
                                    "random", "greedy",     "beam",    "evo"};
  std::lock_guard<std::mutex> lock(FactoriesMutex());
  for (const RegisteredFactory& f : Factories()) names.push_back(f.prefix + ":" + f.help);
  return names;
}

std::string LocatePolicy(std::string_view path_in) {
  namespace fs = std::filesystem;
  const fs::path path(path_in);
  std::error_code ec;
  if (fs::exists(path, ec) || path.is_absolute()) return std::string(path_in);
  const fs::path root(DataRoot());
  for (const fs::path& candidate : {root / path, root / "datasets" / "policies" / path}) {
    if (fs::exists(candidate, ec)) return candidate.string();
  }
  return std::string(path_in);
}

std::string ModelFile(const std::string& path, std::string_view file_name) {
  std::error_code ec;
  return fs::is_directory(path, ec) ? (fs::path(path) / file_name).string() : path;
}

absl::StatusOr<std::unique_ptr<Agent>> MakeAgent(std::string_view name, AgentOptions options) {
  if (name == "default" || name == "xla-cpu-default") {
    return std::make_unique<DefaultPipelineAgent>(std::move(options));
  }
  if (name == "auto" || name.rfind("auto:", 0) == 0) {
    const std::string path = name == "auto" ? DefaultAutoPriorPath() : LocatePolicy(name.substr(5));
    absl::StatusOr<AutoPrior> prior = AutoPrior::Load(path);
    if (!prior.ok()) {
      return absl::Status(prior.status().code(), absl::StrCat("agent ", std::string(name), ": ",
                                                              prior.status().message()));
    }
    // The guide: the shipped one for "auto"; for "auto:DIR", DIR/coreset.json
    // when DIR holds one (a prior alone, such as auto:datasets/policies/auto,
    // has none).
    AutoOptions auto_options;
    std::error_code ec;
    std::string guide_file;
    if (name == "auto") {
      absl::StatusOr<std::shared_ptr<AutoGuide>> guide = LoadShippedAutoGuide();
      if (!guide.ok()) {
        return absl::Status(guide.status().code(),
                            absl::StrCat("agent auto: ", guide.status().message()));
      }
      auto_options.guide = *std::move(guide);
    } else if (fs::is_directory(path, ec)) {
      guide_file = (fs::path(path) / "coreset.json").string();
    }
    if (!guide_file.empty() && fs::exists(guide_file, ec)) {
      absl::StatusOr<CoresetModel> guide = CoresetModel::Load(guide_file);
      if (!guide.ok()) {
        return absl::Status(guide.status().code(), absl::StrCat("agent ", std::string(name), ": ",
                                                                guide.status().message()));
      }
      auto_options.guide = MakeCoresetGuide(*std::move(guide));
    }
    return std::make_unique<AutoAgent>(std::move(options), std::move(*prior), auto_options);
  }
  if (name == "coreset" || name.rfind("coreset:", 0) == 0) {
    const std::string path =
        name == "coreset" ? DefaultCoresetPath() : LocatePolicy(name.substr(8));
    absl::StatusOr<CoresetModel> model = CoresetModel::Load(path);
    if (!model.ok()) {
      return absl::Status(model.status().code(), absl::StrCat("agent ", std::string(name), ": ",
                                                              model.status().message()));
    }
    return std::make_unique<CoresetAgent>(std::move(options), std::move(*model));
  }
  if (name == "random") return std::make_unique<RandomSearchAgent>(std::move(options));
  if (name == "greedy") return std::make_unique<GreedySearchAgent>(std::move(options));
  if (name == "beam") return std::make_unique<BeamSearchAgent>(std::move(options));
  if (name == "evo" || name == "evolutionary") {
    return std::make_unique<EvolutionarySearchAgent>(std::move(options));
  }
  if (size_t colon = name.find(':'); colon != std::string_view::npos) {
    std::string_view prefix = name.substr(0, colon);
    AgentFactory factory = FindFactory(prefix);
    if (!factory) {
      AgentFactoryLoader loader;
      {
        std::lock_guard<std::mutex> lock(FactoriesMutex());
        loader = FactoryLoader();
      }
      if (loader) {
        if (absl::Status loaded = loader(prefix); !loaded.ok()) {
          return absl::Status(loaded.code(),
                              absl::StrCat("agent ", std::string(name), ": ", loaded.message()));
        }
        factory = FindFactory(prefix);
      }
    }
    if (factory) return factory(LocatePolicy(name.substr(colon + 1)), std::move(options));
  }
  return absl::InvalidArgumentError(absl::StrCat("unknown agent '", std::string(name),
                                                 "' (expected one of ",
                                                 absl::StrJoin(AgentNames(), ", "), ")"));
}

}  // namespace hlogym
