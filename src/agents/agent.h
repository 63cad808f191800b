// Agents: what orders passes. An agent optimizes one benchmark within a
// budget and returns the pass sequence it found and the op count it reaches
// (R). Search agents (search.h) see the gym only through its public API
// (Environment::Create/Reset/Step/Fork, the StepCache shared by forks, the
// state record); the reference "agent" runs the default pipeline as one step.
//
// Budgets are counted in environment steps (every Environment::Step call,
// cache hits included, so a search with a step budget is deterministic given
// its seed) or in wall-clock seconds (not deterministic), or both (whichever
// runs out first). The result is the best state seen during the search (the
// lowest op count; the earliest found on ties), so an agent never returns
// something worse than the benchmark's initial module.
#ifndef HLOGYM_AGENTS_AGENT_H_
#define HLOGYM_AGENTS_AGENT_H_

#include <array>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "gym/environment.h"
#include "gym/step_cache.h"
#include "passes/registry.h"

namespace hlogym {

struct SearchBudget {
  int64_t steps = 0;   // Environment::Step calls; <= 0: no step limit
  double seconds = 0;  // wall-clock per benchmark; <= 0: no time limit
  // Instructions stepped over: a step that runs a pass costs the op count of
  // the module it starts from (what a pass's run and the module's copy scale
  // with); a cache hit, or a pass whose pre-check rules out a change, costs
  // nothing (StepInfo::ran); <= 0: no work limit. Deterministic like steps,
  // but a search on a shrinking module gets more steps from it.
  int64_t work = 0;
  // With a work limit: at least this many steps' worth of work on the initial
  // module (work >= min_work_steps * I), so that a large graph keeps the steps
  // its search needs; 0: the work limit as given.
  int64_t min_work_steps = 0;
  bool limited() const { return steps > 0 || seconds > 0 || work > 0; }
};

struct AgentOptions {
  uint64_t seed = 0;
  // The environment the agent searches in. actions: pass names (empty = every
  // pass of the registry); traj_limit is ignored (searches pick their own
  // lengths); observation_spaces is kept minimal by default.
  EnvOptions env;
  // Must outlive the agent.
  const PassRegistry* registry = &PassRegistry::Builtin();
  // Shared across benchmarks and forks; made on first use when null.
  std::shared_ptr<StepCache> cache;

  // auto: also choose passes that change numeric precision (float
  // normalization, simplify-fp-conversions; ChangesNumericPrecision), as XLA's
  // xla_allow_excess_precision allows.
  bool allow_excess_precision = false;

  // Random search: episode length L. Evolutionary search: individual length.
  int trajectory_length = 10;
  // Greedy: moves that do not lower the op count (taken only when no pass
  // lowers it, never to an already visited module) allowed in a row.
  int greedy_non_improving_moves = 2;
  // Beam search.
  int beam_width = 4;
  int beam_depth = 12;
  // Evolutionary search.
  int population = 16;
  int tournament = 3;
  int elite = 2;
  double crossover_rate = 0.7;
  double mutation_rate = -1;  // per gene; < 0: 1 / trajectory_length
};

struct SearchResult {
  std::string agent;
  std::string benchmark;            // the spec searched
  std::vector<std::string> passes;  // the sequence reaching `op_count`
  int64_t initial_op_count = 0;     // I
  int64_t op_count = 0;             // R
  int64_t steps = 0;                // Environment::Step calls made
  int64_t work = 0;                 // instructions stepped over (SearchBudget::work)
  int64_t cache_hits = 0;           // of those, answered by the step cache
  int64_t pass_errors = 0;          // steps whose pass failed (state unchanged)
  bool budget_exhausted = false;    // stopped by the budget, not by itself
  double seconds = 0;               // the whole Optimize call (validation included)
  double model_seconds = 0;         // of those, in a learned model (a policy's forward passes)
  // Set by agents that validate their own answer (auto): the result of
  // env->Validate() for the returned state, so that callers need not repeat
  // it, the time it took (part of `seconds`), and how many better candidates
  // failed their check before it.
  std::optional<ValidationResult> validation;
  double validate_seconds = 0;
  int rejected_candidates = 0;
  // Set when the agent's own answer was replaced by the default's (see
  // Agent::NoWorseThanDefault): why ("above D", "failed its check: ..."), and
  // that answer (what a learned policy did on its own).
  std::string fallback;
  std::vector<std::string> own_passes;
  int64_t own_op_count = 0;
  // Set by a policy: the lowest op count its start states reached (the fixed
  // sequences it begins from, inside them included) before its first step,
  // so that a report can tell what the policy's own steps added.
  std::optional<int64_t> starts_op_count;
  // An environment at the result state: module(), record(), Validate(),
  // BaselineOpCount().
  std::shared_ptr<Environment> env;
};

// The passes that split a module compiled for several partitions, in the
// order XLA's spmd-partitioner pipeline runs them (SearchContext::ForkStart).
inline constexpr std::array<std::string_view, 2> kSplitStartPasses = {"call-inliner",
                                                                      "spmd-partitioning"};

// What a search sees while it runs: the environment at the benchmark's
// initial state (fork it, do not step it), the seeded generator, the budget,
// and the best state seen so far. Every step goes through Step() so that the
// budget is charged and the best state is kept.
class SearchContext {
 public:
  SearchContext(Environment& root, const AgentOptions& options, const SearchBudget& budget);

  Environment& root() { return root_; }
  const AgentOptions& options() const { return options_; }
  std::mt19937_64& rng() { return rng_; }
  const SearchBudget& budget() const { return budget_; }
  int num_actions() const { return root_.num_actions(); }

  // True once the budget is used up.
  bool exhausted();
  // Steps `env` with `action` and records the state if it is the best so far.
  // Returns false without stepping when the budget is used up (or the step is
  // refused, which the search treats the same way).
  bool Step(Environment& env, int action, StepInfo* info = nullptr);

  // The best state's op count; the root's while none is better, or the
  // largest int64_t where the root is no answer (IsAnswer).
  int64_t best_op_count() const;
  // Whether `state` may be an answer: for a module compiled for several
  // partitions that spmd-partitioning splits, only a split state (an unsplit
  // one fails its validation: XLA would split it again). Step() keeps only
  // such states as the best.
  bool IsAnswer(const Environment& state) const;
  // A fork of the root to search from: where the root is no answer, split as
  // XLA's pipeline first splits it (kSplitStartPasses, stepped here when they
  // are actions), so that a search or a replayed sequence does not start on a
  // module it can never return.
  std::unique_ptr<Environment> ForkStart();
  // Makes `env` the result whatever its op count (for agents whose answer is
  // not a minimum, like the default pipeline).
  void SetResult(std::unique_ptr<Environment> env) { best_ = std::move(env); }
  // The best environment (null while the initial state is the best).
  std::unique_ptr<Environment> TakeBest() { return std::move(best_); }

  int64_t steps() const { return steps_; }
  int64_t work() const { return work_; }
  int64_t cache_hits() const { return cache_hits_; }
  int64_t pass_errors() const { return pass_errors_; }
  bool budget_hit() const { return budget_hit_; }

 private:
  Environment& root_;
  const AgentOptions& options_;
  SearchBudget budget_;
  std::mt19937_64 rng_;
  std::chrono::steady_clock::time_point start_;
  std::unique_ptr<Environment> best_;
  // The initial module split for its partitions, where it is compiled for
  // several and spmd-partitioning splits it; null otherwise.
  std::unique_ptr<const Module> split_initial_;
  int64_t steps_ = 0, work_ = 0, cache_hits_ = 0, pass_errors_ = 0;
  bool budget_hit_ = false;
};

class Agent {
 public:
  explicit Agent(AgentOptions options);
  virtual ~Agent() = default;
  virtual std::string_view name() const = 0;
  // Whether the search ends on its own (greedy, beam, default) or needs a
  // budget (random, evolutionary).
  virtual bool needs_budget() const { return false; }

  // Loads `benchmark` (a spec, see gym/benchmark.h), searches within `budget`
  // and returns the best pass sequence found. Deterministic given the seed
  // when the budget is in steps only.
  virtual absl::StatusOr<SearchResult> Optimize(std::string_view benchmark,
                                                const SearchBudget& budget);

  const AgentOptions& options() const { return options_; }
  const std::shared_ptr<StepCache>& cache() const { return options_.cache; }

 protected:
  // Runs the search from ctx.root(); the context keeps the best state.
  virtual absl::Status Search(SearchContext& ctx) = 0;
  // The environment a benchmark is searched in (not yet reset).
  absl::StatusOr<std::unique_ptr<Environment>> MakeEnvironment() const;
  // The answer of an agent with no check of its own (the policy agents):
  // `result` when it is at most D (the xla-cpu-default pipeline's op count) and
  // validates; else D, validated; else the initial module. Never above D, never
  // one that failed its check; `fallback` says when and why D replaced it.
  absl::StatusOr<SearchResult> NoWorseThanDefault(std::string_view benchmark,
                                                  SearchResult result) const;

  AgentOptions options_;
};

// The structural fingerprint of an environment's current module (what the
// searches use to recognize a visited state).
inline const Fingerprint& FingerprintOf(const Environment& env) {
  return env.state()->fingerprint();
}

// Wall-clock seconds since `start`.
inline double SecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// The step budget of a search that needs one (needs_budget(): random, evo)
// when the caller gives none.
inline constexpr int64_t kDefaultSearchSteps = 500;

// "auto" (the shipped default agent, auto_agent.h; "auto:PRIOR" with another
// prior), "coreset" (a learned choice among known-good sequences,
// coreset_agent.h; "coreset:DIR" with another model), "default" (the
// xla-cpu-default pipeline as one step), "random",
// "greedy", "beam", "evo", or "PREFIX:ARG" for a prefix registered below;
// InvalidArgument listing them otherwise.
absl::StatusOr<std::unique_ptr<Agent>> MakeAgent(std::string_view name, AgentOptions options = {});
std::vector<std::string> AgentNames();

// A policy or prior named in "auto:PRIOR" or "PREFIX:DIR": the path as given
// when it exists, else relative to the data root (DataRoot()), else a name in
// datasets/policies/ there ("policy:ppo-gpt2"), so that the shipped ones are
// found from any folder and from an installed package. Unchanged when none
// exists (the loader then names it).
std::string LocatePolicy(std::string_view path);

// The file a model's Load reads: DIR/file_name when `path` is a folder, else
// `path` itself.
std::string ModelFile(const std::string& path, std::string_view file_name);

// Agents that live in libraries above this one (the learned policies of
// agents/rl, which need LibTorch) register a factory for names "PREFIX:ARG";
// the factory gets ARG, a path, after LocatePolicy. Thread-safe; a later
// registration of the same prefix replaces the earlier one.
using AgentFactory = std::function<absl::StatusOr<std::unique_ptr<Agent>>(std::string_view arg,
                                                                          AgentOptions options)>;
void RegisterAgentFactory(std::string prefix, std::string help, AgentFactory factory);

// Called by MakeAgent for a "PREFIX:ARG" whose prefix has no factory yet, before
// it gives up: the command line loads the LibTorch plugin this way, only when an
// agent needs it. An error is returned as MakeAgent's.
using AgentFactoryLoader = std::function<absl::Status(std::string_view prefix)>;
void SetAgentFactoryLoader(AgentFactoryLoader loader);

}  // namespace hlogym

#endif  // HLOGYM_AGENTS_AGENT_H_
