// Environment: the pass-ordering gym. reset(benchmark) loads an initial module,
// step(action) applies one pass (an action is an index into the action space,
// a list of registered pass names) and returns the observation, the reward,
// terminated/truncated and info, Gymnasium-style. The gym sees passes only
// through a PassRegistry.
//
// Guarantees:
//  - never crashes the caller: a pass that fails (error status or C++
//    exception) leaves the state unchanged and reports the error in
//    StepInfo::error; bad benchmark names and files are errors from Reset;
//  - steps are memoized by (module fingerprint, pass) in a StepCache that
//    environments may share (forks and VecEnvironment do);
//  - episodes are truncated after traj_limit steps (the paper's name), never
//    terminated (there is no terminal state in pass ordering);
//  - the state record (benchmark + passes) replays to the same module; Validate()
//    replays it without the cache and checks op count, fingerprint, the verifier
//    and, when an equivalence checker is installed, equivalence with the
//    initial module.
#ifndef HLOGYM_GYM_ENVIRONMENT_H_
#define HLOGYM_GYM_ENVIRONMENT_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "eval/equivalence.h"
#include "gym/benchmark.h"
#include "gym/module_state.h"
#include "gym/spaces.h"
#include "gym/state_record.h"
#include "gym/step_cache.h"
#include "passes/registry.h"

namespace hlogym {

struct EnvOptions {
  // Pass names forming the action space; empty = every registered pass, in
  // registration order.
  std::vector<std::string> actions;
  // Observation spaces (names from ObservationSpaceNames()), at least one.
  std::vector<std::string> observation_spaces = {"op_histogram"};
  // Reward space (RewardSpaceNames(), optionally with "+shaped").
  std::string reward_space = "op_count";
  // Steps per episode before truncation; <= 0 means no limit.
  int traj_limit = 10;
  // Discount used by the shaping term gamma * Phi(s') - Phi(s).
  double gamma = 0.99;
  // What D (for op_count_decrease_normalized) is measured with: a pipeline
  // name ("xla-cpu-default"), or "passes:a,b,c" for passes of the registry run
  // in that order.
  std::string baseline = "xla-cpu-default";
  // Memoize steps (and share the cache given to Create, if any).
  bool use_cache = true;
  // Budget of the cache Create makes when none is given (instructions held).
  int64_t cache_max_instructions = 2'000'000;
  // Run the verifier after every uncached step; a module that fails it is
  // treated as a failed pass (state unchanged, error in info).
  bool verify_each_step = false;
  // Growth guard: a step whose result would have more than
  //   max_op_count_growth * I + op_count_growth_allowance
  // instructions (I = the episode's initial op count) is rejected like a
  // failing pass: the state stays, StepInfo::error says why, and ActionMask
  // counts the pass as changing nothing. It keeps a pass cycle that grows the
  // module a little each round (e.g. topk-decomposer-all, topk-rewriter, dce on
  // smoke/topk_sort: +3 per round) from growing it without bound in long or
  // unlimited episodes. The allowance lets small modules expand (the RNG
  // expander turns 14 instructions into 653). max_op_count_growth <= 0
  // disables the guard.
  double max_op_count_growth = 16;
  int64_t op_count_growth_allowance = 10'000;
};

struct Observation {
  // Only the requested spaces are filled.
  std::vector<int64_t> op_histogram;    // kOpcodeCount
  std::vector<double> cost;             // flops, transcendentals, bytes_accessed
  std::vector<int64_t> autophase;       // AutophaseFeatureNames().size()
  std::vector<int64_t> action_history;  // one count per action
  std::optional<GraphObservation> graph;
};

struct StepInfo {
  std::string action;    // the pass name
  bool changed = false;  // the module changed
  bool cache_hit = false;
  // The pass ran on the module (false on a cache hit and where its pre-check,
  // MayChange, ruled out a change): what a step's cost scales with.
  bool ran = false;
  std::string error;     // non-empty when the pass failed (state unchanged)
  int64_t op_count = 0;  // after the step
  int64_t previous_op_count = 0;
  double pass_ms = 0;  // pass time (0 on a cache hit)
};

struct StepResult {
  Observation observation;
  double reward = 0;
  bool terminated = false;
  bool truncated = false;
  StepInfo info;
};

struct ValidationResult {
  bool ok = false;              // everything checked passed
  bool replay_ok = false;       // the record replayed without pass errors
  bool op_count_ok = false;     // replayed op count == the state's
  bool fingerprint_ok = false;  // replayed module structurally identical
  bool verifier_ok = false;     // the final module verifies
  // "equivalent", "not equivalent: ...", "undecided: ..." (the evaluator
  // could not run it) or "not available: ..." (checking disabled); the last
  // two do not count against ok.
  std::string equivalence;
  std::vector<std::string> errors;  // what failed, readable
};

// The checker Validate uses. Returns OK(true) when `optimized` computes what
// `original` does, OK(false) or Internal(reason) when not, another error when
// it cannot decide (then Validate reports "undecided: ..." without failing).
// The default runs src/eval's CheckEquivalent (one seeded random input, its
// default tolerances); nullptr disables checking ("not available").
using EquivalenceChecker =
    std::function<absl::StatusOr<bool>(const Module& original, const Module& optimized)>;
EquivalenceChecker DefaultEquivalenceChecker();
// A checker running CheckEquivalent with `options`: InternalError(reason) for
// a mismatch, FailedPrecondition for a comparison it could not judge.
EquivalenceChecker MakeEquivalenceChecker(EquivalenceOptions options);
// `options` with the check's hooks that run passes set where they are unset: the static form of
// a dynamic module (EquivalenceOptions::static_form, PaddedToStatic) and the original summing in
// another order (sums_reordered, SumsReordered). Every checker of optimized modules wants both.
EquivalenceOptions WithPassHooks(EquivalenceOptions options);
void SetEquivalenceChecker(EquivalenceChecker checker);

class Environment {
 public:
  // InvalidArgument for an unknown pass, observation or reward space.
  // `registry` must outlive the environment; `cache` is shared when given.
  static absl::StatusOr<std::unique_ptr<Environment>> Create(
      EnvOptions options, const PassRegistry& registry = PassRegistry::Builtin(),
      std::shared_ptr<StepCache> cache = nullptr);
  ~Environment();
  Environment(const Environment&) = delete;  // Fork() copies
  Environment& operator=(const Environment&) = delete;

  // Loads the benchmark (see benchmark.h) and starts an episode. On error the
  // environment keeps its previous state.
  absl::StatusOr<Observation> Reset(std::string_view benchmark);
  // Applies action `action` (an index into actions()). Errors only for an
  // out-of-range action, or a step before Reset or after the episode ended;
  // a failing pass is a successful step that reports the failure in info.
  absl::StatusOr<StepResult> Step(int action);
  // As Step, by pass name (must be in the action space).
  absl::StatusOr<StepResult> Step(std::string_view pass_name);

  // An independent copy of the current state (sharing the cache and the
  // immutable modules, so it is cheap).
  std::unique_ptr<Environment> Fork() const;

  // Which actions would change the module in the current state (true = it
  // changes something). Computed lazily by running the passes through the
  // cache (so an agent stepping afterwards gets cache hits) and remembered for
  // the current state.
  std::vector<bool> ActionMask();

  // The record of the current episode, and replaying one (a Reset plus a step
  // per pass, by name; passes need not be in the action space).
  StateRecord record() const;
  absl::Status Replay(const StateRecord& record);
  // Replays this environment's record from scratch without the cache and
  // checks the result (see ValidationResult).
  ValidationResult Validate() const;

  Observation Observe() const;

  // Accessors.
  bool has_state() const { return state_ != nullptr; }
  const Module& module() const { return state_->module(); }
  const Module& initial_module() const { return initial_->module(); }
  StatePtr state() const { return state_; }
  const Benchmark& benchmark() const { return benchmark_; }
  int64_t op_count() const { return state_ ? state_->op_count() : 0; }
  int64_t initial_op_count() const { return initial_ ? initial_->op_count() : 0; }
  // D for the current benchmark (computed with options().baseline on first use,
  // cached per process); an error when the baseline cannot run.
  absl::StatusOr<int64_t> BaselineOpCount();
  double episode_reward() const { return episode_reward_; }
  int episode_length() const { return static_cast<int>(history_.size()); }
  const std::vector<int>& action_history() const { return history_; }
  const std::vector<std::string>& actions() const { return action_names_; }
  int num_actions() const { return static_cast<int>(action_names_.size()); }
  const EnvOptions& options() const { return options_; }
  const std::vector<ObservationKind>& observation_kinds() const { return observation_kinds_; }
  const RewardSpec& reward_spec() const { return reward_spec_; }
  const std::shared_ptr<StepCache>& cache() const { return cache_; }
  const PassRegistry& registry() const { return *registry_; }

 private:
  Environment() = default;
  // Runs `pass` on the current state (through the cache), then applies the
  // growth guard (the cache holds the unguarded outcome).
  StepOutcome Apply(std::string_view name, Pass& pass, bool* cache_hit);
  StepOutcome LimitGrowth(StepOutcome outcome, std::string_view name) const;
  // The most instructions a state may have in this episode (INT64_MAX when
  // the guard is off).
  int64_t MaxOpCount() const;
  double Potential(const ModuleState& state) const;
  absl::StatusOr<StepResult> StepWith(int action_or_minus_one, std::string_view name, Pass& pass);
  // The pass of `action`, made on first use.
  Pass& PassAt(int action);

  EnvOptions options_;
  const PassRegistry* registry_ = nullptr;
  std::shared_ptr<StepCache> cache_;
  std::vector<std::string> action_names_;
  // One instance per action, made when the action is first taken: a fork
  // (a search makes one per action it tries) then builds one pass, not all.
  std::vector<std::unique_ptr<Pass>> passes_;
  std::vector<ObservationKind> observation_kinds_;
  RewardSpec reward_spec_;

  Benchmark benchmark_;
  StatePtr initial_;
  StatePtr state_;
  std::vector<int> history_;               // action indices (-1: a pass outside the space)
  std::vector<std::string> pass_history_;  // pass names, for the record
  std::vector<int64_t> action_counts_;
  double episode_reward_ = 0;
  int64_t lowest_op_count_ = 0;  // of the episode's states so far
  double potential_scale_ = 1;
  std::optional<int64_t> baseline_op_count_;
  // The mask for mask_fingerprint_.
  std::optional<Fingerprint> mask_fingerprint_;
  std::vector<bool> mask_;
};

}  // namespace hlogym

#endif  // HLOGYM_GYM_ENVIRONMENT_H_
