// The search baselines of issue 8 and the default-pipeline reference agent.
// All of them search from the benchmark's initial module by forking
// environments and stepping them; the step cache shared by the forks makes
// revisited (state, pass) pairs cheap in time (they still count as steps).
// Ties are broken by the lowest action index, so runs with a step budget are
// deterministic given the seed.
#ifndef HLOGYM_AGENTS_SEARCH_H_
#define HLOGYM_AGENTS_SEARCH_H_

#include <string>
#include <string_view>

#include "agents/agent.h"

namespace hlogym {

// Runs the named pipeline (default xla-cpu-default) as a single step of a
// one-action environment; R is then D by construction. Ignores the budget.
class DefaultPipelineAgent : public Agent {
 public:
  explicit DefaultPipelineAgent(AgentOptions options, std::string pipeline = "xla-cpu-default");
  std::string_view name() const override { return "default"; }
  absl::StatusOr<SearchResult> Optimize(std::string_view benchmark,
                                        const SearchBudget& budget) override;

 protected:
  absl::Status Search(SearchContext& ctx) override;
};

// Episodes of trajectory_length uniformly random actions from the initial
// module, until the budget is used up.
class RandomSearchAgent : public Agent {
 public:
  using Agent::Agent;
  std::string_view name() const override { return "random"; }
  bool needs_budget() const override { return true; }

 protected:
  absl::Status Search(SearchContext& ctx) override;
};

// Tries every pass from the current module and moves to the one giving the
// lowest op count; repeats until no pass lowers it (after at most
// greedy_non_improving_moves moves in a row to unvisited modules that reach
// no new lowest op count) or the budget is used up. Its first round tries
// every single pass, so it is never worse than the best single pass.
class GreedySearchAgent : public Agent {
 public:
  using Agent::Agent;
  std::string_view name() const override { return "greedy"; }

 protected:
  absl::Status Search(SearchContext& ctx) override;
};

// Breadth-first in levels: every pass from every module in the beam; children
// that change nothing or reach an already seen module are dropped; the
// beam_width lowest op counts form the next level, up to beam_depth levels.
class BeamSearchAgent : public Agent {
 public:
  using Agent::Agent;
  std::string_view name() const override { return "beam"; }

 protected:
  absl::Status Search(SearchContext& ctx) override;
};

// A genetic algorithm over fixed-length pass sequences: fitness is the op
// count after the sequence (lower is better), tournament selection, one-point
// crossover, per-gene mutation to a random pass, elitism. Identical
// sequences are evaluated once. Runs until the budget is used up.
class EvolutionarySearchAgent : public Agent {
 public:
  using Agent::Agent;
  std::string_view name() const override { return "evo"; }
  bool needs_budget() const override { return true; }

 protected:
  absl::Status Search(SearchContext& ctx) override;
};

}  // namespace hlogym

#endif  // HLOGYM_AGENTS_SEARCH_H_
