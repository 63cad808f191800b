#include "gym/environment.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <map>
#include <mutex>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "analysis/verifier.h"
#include "eval/equivalence.h"
#include "hlo/query.h"
#include "hlo/status_macros.h"
#include "passes/expanders/dynamic_padder.h"
#include "passes/sharding/spmd_partitioner.h"
#include "passes/simplifiers/tree_reduction_rewriter.h"

namespace hlogym {
namespace {

std::mutex& CheckerMutex() {
  static std::mutex mu;
  return mu;
}
EquivalenceChecker& CheckerSlot() {
  static EquivalenceChecker* checker = new EquivalenceChecker(DefaultEquivalenceChecker());
  return *checker;
}
EquivalenceChecker CurrentChecker() {
  std::lock_guard<std::mutex> lock(CheckerMutex());
  return CheckerSlot();
}

double MillisecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
      .count();
}

// Runs a pass, turning exceptions into errors. (Its MayChange is the caller's:
// Apply asks before it clones; a pipeline asks each of its passes.)
absl::StatusOr<bool> RunGuarded(Pass& pass, Module& module) {
  try {
    return pass.Run(module);
  } catch (const std::exception& e) {
    return absl::InternalError(absl::StrCat("exception: ", e.what()));
  } catch (...) {
    return absl::InternalError("unknown exception");
  }
}

absl::StatusOr<std::unique_ptr<Pass>> CreateBaseline(std::string_view baseline,
                                                     const PassRegistry& registry) {
  constexpr std::string_view kPasses = "passes:";
  if (baseline.substr(0, kPasses.size()) == kPasses) {
    std::vector<std::unique_ptr<Pass>> passes;
    for (absl::string_view name : absl::StrSplit(
             absl::string_view(baseline.data() + kPasses.size(), baseline.size() - kPasses.size()),
             ',', absl::SkipWhitespace())) {
      HLOGYM_ASSIGN(pass, registry.Create(std::string_view(name.data(), name.size())));
      passes.push_back(std::move(pass));
    }
    return std::make_unique<PassPipeline>(std::string(baseline), std::move(passes));
  }
  return CreatePipeline(baseline);
}

// D per (initial module, baseline), process-wide.
absl::StatusOr<int64_t> BaselineFor(const ModuleState& initial, const std::string& baseline,
                                    const PassRegistry& registry) {
  static std::mutex mu;
  static auto* cache = new std::map<std::pair<Fingerprint, std::string>, absl::StatusOr<int64_t>>();
  const auto key = std::make_pair(initial.fingerprint(), baseline);
  {
    std::lock_guard<std::mutex> lock(mu);
    if (auto it = cache->find(key); it != cache->end()) return it->second;
  }
  absl::StatusOr<int64_t> result = [&]() -> absl::StatusOr<int64_t> {
    auto pipeline = CreateBaseline(baseline, registry);
    if (!pipeline.ok()) {
      return absl::FailedPreconditionError(absl::StrCat("the reward needs the baseline '", baseline,
                                                        "': ", pipeline.status().message()));
    }
    std::unique_ptr<Module> module = initial.module().Clone();
    absl::StatusOr<bool> ran = RunGuarded(**pipeline, *module);
    if (!ran.ok()) {
      return absl::InternalError(
          absl::StrCat("baseline '", baseline, "' failed: ", ran.status().message()));
    }
    return module->instruction_count();
  }();
  std::lock_guard<std::mutex> lock(mu);
  cache->emplace(key, result);
  return result;
}

}  // namespace

EquivalenceOptions WithPassHooks(EquivalenceOptions options) {
  if (!options.static_form) options.static_form = PaddedToStatic;
  if (!options.sums_reordered) options.sums_reordered = SumsReordered;
  return options;
}

EquivalenceChecker MakeEquivalenceChecker(EquivalenceOptions options) {
  options = WithPassHooks(std::move(options));
  return [options](const Module& original, const Module& optimized) -> absl::StatusOr<bool> {
    HLOGYM_ASSIGN(result, CheckEquivalent(original, optimized, options));
    if (!result.judged) return absl::FailedPreconditionError(result.message);
    if (!result.equivalent) return absl::InternalError(result.message);
    return true;
  };
}

EquivalenceChecker DefaultEquivalenceChecker() {
  EquivalenceOptions options;
  options.trials = 1;
  options.evaluator.num_threads = 1;
  return MakeEquivalenceChecker(options);
}

void SetEquivalenceChecker(EquivalenceChecker checker) {
  std::lock_guard<std::mutex> lock(CheckerMutex());
  CheckerSlot() = std::move(checker);
}

absl::StatusOr<std::unique_ptr<Environment>> Environment::Create(EnvOptions options,
                                                                 const PassRegistry& registry,
                                                                 std::shared_ptr<StepCache> cache) {
  std::unique_ptr<Environment> env(new Environment());
  env->registry_ = &registry;
  if (options.actions.empty()) {
    for (const PassInfo& info : registry.passes()) options.actions.push_back(info.name);
  }
  if (options.actions.empty()) {
    return absl::FailedPreconditionError("the pass registry is empty: no actions");
  }
  for (const std::string& name : options.actions) {
    for (const std::string& seen : env->action_names_) {
      if (seen == name) {
        return absl::InvalidArgumentError(absl::StrCat("action '", name, "' listed twice"));
      }
    }
    absl::StatusOr<std::unique_ptr<Pass>> pass = registry.Create(name);
    if (!pass.ok()) return absl::InvalidArgumentError(pass.status().message());
    env->action_names_.push_back(name);
    env->passes_.push_back(std::move(*pass));
  }
  if (options.observation_spaces.empty()) {
    return absl::InvalidArgumentError("no observation space selected");
  }
  for (const std::string& name : options.observation_spaces) {
    HLOGYM_ASSIGN(kind, ParseObservationKind(name));
    env->observation_kinds_.push_back(kind);
  }
  HLOGYM_ASSIGN(reward, ParseRewardSpace(options.reward_space));
  env->reward_spec_ = reward;
  if (options.use_cache) {
    env->cache_ =
        cache ? std::move(cache) : std::make_shared<StepCache>(options.cache_max_instructions);
  }
  env->options_ = std::move(options);
  env->action_counts_.assign(env->action_names_.size(), 0);
  return env;
}

Environment::~Environment() = default;

absl::StatusOr<Observation> Environment::Reset(std::string_view benchmark_spec) {
  HLOGYM_ASSIGN(benchmark, LoadBenchmark(benchmark_spec));
  std::optional<int64_t> baseline;
  if (reward_spec_.kind == RewardKind::kOpCountDecreaseNormalized) {
    HLOGYM_ASSIGN(d, BaselineFor(*benchmark.initial, options_.baseline, *registry_));
    baseline = d;
  }
  benchmark_ = std::move(benchmark);
  initial_ = benchmark_.initial;
  state_ = initial_;
  baseline_op_count_ = baseline;
  history_.clear();
  pass_history_.clear();
  action_counts_.assign(action_names_.size(), 0);
  episode_reward_ = 0;
  lowest_op_count_ = state_->op_count();
  mask_fingerprint_.reset();
  potential_scale_ = 1;
  if (reward_spec_.shaped) {
    const CostFeatures& cost = initial_->cost();
    potential_scale_ = std::max(1.0, cost.flops + 2 * cost.transcendentals);
  }
  return Observe();
}

absl::StatusOr<int64_t> Environment::BaselineOpCount() {
  if (!initial_) return absl::FailedPreconditionError("call Reset first");
  if (baseline_op_count_) return *baseline_op_count_;
  absl::StatusOr<int64_t> d = BaselineFor(*initial_, options_.baseline, *registry_);
  if (d.ok()) baseline_op_count_ = *d;
  return d;
}

double Environment::Potential(const ModuleState& state) const {
  const CostFeatures& cost = state.cost();
  return -(cost.flops + 2 * cost.transcendentals) / potential_scale_;
}

int64_t Environment::MaxOpCount() const {
  if (options_.max_op_count_growth <= 0 || !initial_) return std::numeric_limits<int64_t>::max();
  const double limit =
      options_.max_op_count_growth * static_cast<double>(initial_->op_count()) +
      static_cast<double>(std::max<int64_t>(0, options_.op_count_growth_allowance));
  return limit >= 9e18 ? std::numeric_limits<int64_t>::max() : static_cast<int64_t>(limit);
}

StepOutcome Environment::LimitGrowth(StepOutcome outcome, std::string_view name) const {
  if (!outcome.changed || !outcome.next) return outcome;
  const int64_t limit = MaxOpCount();
  // Only growth past the limit is refused (a step that shrinks always passes).
  if (outcome.next->op_count() <= limit || outcome.next->op_count() <= state_->op_count()) {
    return outcome;
  }
  outcome.error = absl::StrCat(std::string(name), ": step rejected: the module would grow to ",
                               outcome.next->op_count(), " instructions, over the limit of ", limit,
                               " (max_op_count_growth ", options_.max_op_count_growth,
                               " x initial ", initial_->op_count(), " + op_count_growth_allowance ",
                               options_.op_count_growth_allowance, ")");
  outcome.next = state_;
  outcome.changed = false;
  return outcome;
}

StepOutcome Environment::Apply(std::string_view name, Pass& pass, bool* cache_hit) {
  *cache_hit = false;
  if (cache_) {
    if (std::optional<StepOutcome> hit = cache_->Lookup(state_->fingerprint(), name)) {
      *cache_hit = true;
      return LimitGrowth(*std::move(hit), name);
    }
  }
  const auto start = std::chrono::steady_clock::now();
  StepOutcome outcome;
  outcome.next = state_;
  // Most passes have nothing to do on most modules: then no clone is needed.
  if (!pass.MayChange(state_->module())) {
    outcome.pass_ms = MillisecondsSince(start);
    if (cache_) cache_->Insert(state_->fingerprint(), name, outcome, false);
    return outcome;
  }
  outcome.ran = true;
  std::unique_ptr<Module> clone = state_->module().Clone();
  // LimitGrowth refuses a result past the limit; a pass that would build far past it (an unroll
  // of nested loops) stops there instead. That refusal is not cached: the cache holds unguarded
  // results, and the environments sharing it may have other limits.
  const int64_t limit = std::max(MaxOpCount(), state_->op_count());
  OpCountLimit op_count_limit(limit);
  absl::StatusOr<bool> changed = RunGuarded(pass, *clone);
  if (op_count_limit.reached()) {
    outcome.error = absl::StrCat(std::string(name), ": step rejected: ", changed.status().message(),
                                 " (max_op_count_growth x initial + op_count_growth_allowance)");
    outcome.pass_ms = MillisecondsSince(start);
    return outcome;
  }
  if (!changed.ok()) {
    outcome.error = absl::StrCat(std::string(name), ": ", changed.status().ToString());
  } else if (*changed) {
    absl::Status verified = options_.verify_each_step ? VerifyModule(*clone) : absl::OkStatus();
    if (!verified.ok()) {
      outcome.error = absl::StrCat(
          std::string(name), ": the module does not verify after the pass: ", verified.message());
    } else {
      StatePtr next = ModuleState::Make(std::move(clone));
      // A "change" that leaves the structure as it was (a renaming) counts as
      // none, with or without the cache, so cached and uncached episodes (and
      // Validate's uncached replay) agree.
      if (!(next->fingerprint() == state_->fingerprint())) {
        outcome.next = std::move(next);
        outcome.changed = true;
      }
    }
  }
  outcome.pass_ms = MillisecondsSince(start);
  if (cache_) cache_->Insert(state_->fingerprint(), name, outcome, outcome.next != state_);
  return LimitGrowth(std::move(outcome), name);
}

absl::StatusOr<StepResult> Environment::Step(int action) {
  if (!state_) return absl::FailedPreconditionError("call reset before step");
  if (action < 0 || action >= num_actions()) {
    return absl::OutOfRangeError(
        absl::StrCat("action ", action, " is out of range [0, ", num_actions(), ")"));
  }
  if (options_.traj_limit > 0 && episode_length() >= options_.traj_limit) {
    return absl::FailedPreconditionError(absl::StrCat(
        "the episode ended (traj_limit ", options_.traj_limit, " reached); call reset"));
  }
  return StepWith(action, action_names_[action], PassAt(action));
}

Pass& Environment::PassAt(int action) {
  std::unique_ptr<Pass>& pass = passes_[action];
  // The names were checked in Create, so the registry makes every one.
  if (pass == nullptr) pass = *registry_->Create(action_names_[action]);
  return *pass;
}

absl::StatusOr<StepResult> Environment::Step(std::string_view pass_name) {
  for (int i = 0; i < num_actions(); ++i) {
    if (action_names_[i] == pass_name) return Step(i);
  }
  return absl::InvalidArgumentError(
      absl::StrCat("pass '", std::string(pass_name),
                   "' is not in the action space: ", absl::StrJoin(action_names_, ", ")));
}

absl::StatusOr<StepResult> Environment::StepWith(int action, std::string_view name, Pass& pass) {
  StepResult result;
  const StatePtr previous = state_;
  bool cache_hit = false;
  StepOutcome outcome = Apply(name, pass, &cache_hit);
  state_ = outcome.next ? outcome.next : previous;
  history_.push_back(action);
  pass_history_.emplace_back(name);
  if (action >= 0) ++action_counts_[action];

  const double p = static_cast<double>(previous->op_count());
  const double n = static_cast<double>(state_->op_count());
  const double initial = std::max<double>(1, initial_->op_count());
  switch (reward_spec_.kind) {
    case RewardKind::kOpCount:
      result.reward = -n / initial;
      break;
    case RewardKind::kOpCountDecrease:
      result.reward = p - n;
      break;
    case RewardKind::kOpCountDecreaseNormalized:
      result.reward =
          (p - n) / std::max<double>(1, initial_->op_count() - baseline_op_count_.value_or(0));
      break;
    case RewardKind::kOpCountLogRatio:
      result.reward = std::log(std::max(1.0, p) / std::max(1.0, n));
      break;
    case RewardKind::kLowestOpCountLogRatio: {
      const double lowest = static_cast<double>(lowest_op_count_);
      result.reward = std::log(std::max(1.0, lowest) / std::max(1.0, std::min(lowest, n)));
      break;
    }
  }
  lowest_op_count_ = std::min(lowest_op_count_, state_->op_count());
  if (reward_spec_.shaped) {
    result.reward += options_.gamma * Potential(*state_) - Potential(*previous);
  }
  episode_reward_ += result.reward;
  result.terminated = false;
  result.truncated = options_.traj_limit > 0 && episode_length() >= options_.traj_limit;
  result.info.action = std::string(name);
  result.info.changed = outcome.changed;
  result.info.cache_hit = cache_hit;
  result.info.ran = outcome.ran && !cache_hit;
  result.info.error = outcome.error;
  result.info.op_count = state_->op_count();
  result.info.previous_op_count = previous->op_count();
  result.info.pass_ms = cache_hit ? 0 : outcome.pass_ms;
  result.observation = Observe();
  return result;
}

std::unique_ptr<Environment> Environment::Fork() const {
  std::unique_ptr<Environment> env(new Environment());
  env->options_ = options_;
  env->registry_ = registry_;
  env->cache_ = cache_;
  env->action_names_ = action_names_;
  env->passes_.resize(action_names_.size());  // made on first use (PassAt)
  env->observation_kinds_ = observation_kinds_;
  env->reward_spec_ = reward_spec_;
  env->benchmark_ = benchmark_;
  env->initial_ = initial_;
  env->state_ = state_;
  env->history_ = history_;
  env->pass_history_ = pass_history_;
  env->action_counts_ = action_counts_;
  env->episode_reward_ = episode_reward_;
  env->lowest_op_count_ = lowest_op_count_;
  env->potential_scale_ = potential_scale_;
  env->baseline_op_count_ = baseline_op_count_;
  env->mask_fingerprint_ = mask_fingerprint_;
  env->mask_ = mask_;
  return env;
}

std::vector<bool> Environment::ActionMask() {
  if (!state_) return std::vector<bool>(action_names_.size(), false);
  if (mask_fingerprint_ && *mask_fingerprint_ == state_->fingerprint()) return mask_;
  mask_.assign(action_names_.size(), false);
  for (int i = 0; i < num_actions(); ++i) {
    bool hit = false;
    mask_[i] = Apply(action_names_[i], PassAt(i), &hit).changed;
  }
  mask_fingerprint_ = state_->fingerprint();
  return mask_;
}

StateRecord Environment::record() const {
  StateRecord record;
  record.benchmark = benchmark_.spec;
  record.passes = pass_history_;
  if (state_) {
    record.initial_op_count = initial_->op_count();
    record.op_count = state_->op_count();
    record.fingerprint = state_->fingerprint().ToString();
  }
  return record;
}

absl::Status Environment::Replay(const StateRecord& record) {
  HLOGYM_RETURN_IF_ERROR(Reset(record.benchmark).status());
  if (record.initial_op_count >= 0 && record.initial_op_count != initial_->op_count()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "benchmark '", record.benchmark, "' has ", initial_->op_count(),
        " instructions but the record says ", record.initial_op_count, " (a different file?)"));
  }
  for (const std::string& name : record.passes) {
    int action = -1;
    for (int i = 0; i < num_actions(); ++i) {
      if (action_names_[i] == name) action = i;
    }
    absl::StatusOr<StepResult> step;
    if (action >= 0) {
      step = StepWith(action, name, PassAt(action));
    } else {
      HLOGYM_ASSIGN(pass, registry_->Create(name));
      step = StepWith(-1, name, *pass);
    }
    if (!step.ok()) return step.status();
  }
  return absl::OkStatus();
}

ValidationResult Environment::Validate() const {
  ValidationResult result;
  if (!state_) {
    result.errors.push_back("nothing to validate: call reset first");
    result.equivalence = "not available: no state";
    return result;
  }
  EnvOptions options = options_;
  options.use_cache = false;
  options.actions = action_names_;
  absl::StatusOr<std::unique_ptr<Environment>> fresh = Create(options, *registry_);
  if (!fresh.ok()) {
    result.errors.push_back(std::string(fresh.status().message()));
    result.equivalence = "not available: replay failed";
    return result;
  }
  const StateRecord rec = record();
  absl::Status replayed = (*fresh)->Replay(rec);
  result.replay_ok = replayed.ok();
  if (!replayed.ok()) {
    result.errors.push_back(absl::StrCat("replay: ", replayed.message()));
    result.equivalence = "not available: replay failed";
    return result;
  }
  const Environment& replay = **fresh;
  result.op_count_ok = replay.op_count() == op_count();
  if (!result.op_count_ok) {
    result.errors.push_back(absl::StrCat("replay gives ", replay.op_count(),
                                         " instructions, the state has ", op_count()));
  }
  result.fingerprint_ok = replay.state_->fingerprint() == state_->fingerprint();
  if (!result.fingerprint_ok) {
    result.errors.push_back(absl::StrCat(
        "replay gives module ", replay.state_->fingerprint().ToString(), ", the state is ",
        state_->fingerprint().ToString(), " (a pass is not deterministic?)"));
  }
  absl::Status verified = VerifyModule(replay.module());
  result.verifier_ok = verified.ok();
  if (!verified.ok()) {
    result.errors.push_back(absl::StrCat("verifier: ", verified.message()));
  }
  bool equivalence_ok = true;
  if (EquivalenceChecker checker = CurrentChecker()) {
    // A module compiled for several partitions is checked per partition, as
    // XLA runs it: split, against the original split the same way. Not yet
    // split, it is no answer: XLA would split it again (adding its
    // collectives), so its op count is not one partition's.
    const Module& initial = initial_->module();
    const std::unique_ptr<Module> split = SplitForPartitions(initial);
    const bool unsplit = split != nullptr && SameEntrySignature(initial, replay.module());
    absl::StatusOr<bool> same =
        unsplit ? absl::InternalError(absl::StrCat(
                      "not split for its ", NumPartitions(initial),
                      " partitions: XLA would split it again, so its op count is not one "
                      "partition's"))
                : checker(split ? *split : initial, replay.module());
    if (!same.ok() && same.status().code() == absl::StatusCode::kInternal) {
      // The default checker's way of saying "not equivalent", with the reason.
      result.equivalence = absl::StrCat("not equivalent: ", same.status().message());
      result.errors.push_back(absl::StrCat("equivalence: ", same.status().message()));
      equivalence_ok = false;
    } else if (!same.ok()) {
      // The evaluator cannot run the module (an unsupported op, say): reported,
      // not counted as a failure.
      result.equivalence = absl::StrCat("undecided: ", same.status().message());
    } else if (*same) {
      result.equivalence = "equivalent";
    } else {
      result.equivalence = "not equivalent";
      result.errors.push_back(
          "equivalence: the module no longer computes what the initial one did");
      equivalence_ok = false;
    }
  } else {
    result.equivalence = "not available: equivalence checking is disabled";
  }
  result.ok = result.replay_ok && result.op_count_ok && result.fingerprint_ok &&
              result.verifier_ok && equivalence_ok;
  return result;
}

Observation Environment::Observe() const {
  Observation obs;
  if (!state_) return obs;
  for (ObservationKind kind : observation_kinds_) {
    switch (kind) {
      case ObservationKind::kOpHistogram:
        obs.op_histogram.assign(state_->stats().opcode_histogram.begin(),
                                state_->stats().opcode_histogram.end());
        break;
      case ObservationKind::kCost: {
        const CostFeatures& cost = state_->cost();
        obs.cost = {cost.flops, cost.transcendentals, cost.bytes_accessed};
        break;
      }
      case ObservationKind::kAutophase:
        obs.autophase = ComputeAutophaseFeatures(state_->module());
        break;
      case ObservationKind::kActionHistory:
        obs.action_history = action_counts_;
        break;
      case ObservationKind::kGraph:
        obs.graph = ComputeGraphObservation(state_->module());
        break;
    }
  }
  return obs;
}

}  // namespace hlogym
