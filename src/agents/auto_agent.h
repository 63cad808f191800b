// auto: the shipped default agent (docs/ARCHITECTURE.md), used wherever an agent
// can be named and none is.
//
// It starts where XLA's default ends and searches on from there:
//   1. one step of the whole xla-cpu-default pipeline (a macro-action), so D
//      is always a candidate (and so is the module as it is, where D is
//      larger);
//   2. the starts: with a guide (AutoGuide: a coreset model, coreset_agent.h,
//      as the shipped auto has, or a learned policy), the lowest state on each
//      sequence it gives for this graph, replayed from I, the one it trusts
//      most first; D;
//      xla-cpu-default-exact, the default without precision-changing passes,
//      where that differs from D (it cannot where none of the passes it omits
//      changed the module in D's run: then it is not run); and I itself,
//      where states without the default's expansions lie;
//   3. from every start in turn, a best-improvement descent over the actions
//      of a learned prior alone (the passes and sub-pipelines that improved
//      training graphs beyond D, most useful first;
//      datasets/policies/auto/prior.json): a move costs a handful of steps;
//   4. from the lowest state those descents reached, one that widens: when
//      its own actions find no lower state, one round over every other
//      allowed action, which ends at the first that goes lower, and the
//      action that made the move joins its own;
//      each descent stops after non_improving_moves moves in a row that
//      reach no new lowest op count, or when no action leads to a new state;
//   5. from where the widening ends, an escape (Escape): each allowed action
//      that changes that state, then each of the prior's actions; the first
//      state below it is where another widening descent starts, until no
//      escape is found. A descent takes the lowest child, so it does not walk
//      a move up that a cleanup then takes lower (on PyTorch's transformers,
//      reshape-mover's 1-D broadcast variant sinks reshapes below the bias
//      adds, one instruction more each, and algsimp folds the reshapes it
//      leaves into their neighbours);
//   6. every state that reached a new lowest op count is a candidate; the
//      candidates are validated best first (replay without the cache, the
//      verifier, equivalence with the initial module) and the first valid one
//      is returned. D is validated last and the initial module (no passes) is
//      the answer of last resort, so the result is never worse than the
//      default and never one that failed its check.
// Passes that change numeric precision (ChangesNumericPrecision) are not
// among its free choices unless AgentOptions::allow_excess_precision is set;
// the default pipeline's own use of them stays.
//
// The search ends on its own on small graphs. With no budget given it has
// kDefaultAutoWork of work (SearchBudget::work: the instructions of the
// modules its passes ran on), and at least kDefaultAutoWorkSteps steps' worth
// on the initial module: work, not steps, so that a search whose module
// shrinks gets more steps from it, and a run stays deterministic.
#ifndef HLOGYM_AGENTS_AUTO_AGENT_H_
#define HLOGYM_AGENTS_AUTO_AGENT_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "agents/agent.h"
#include "agents/coreset_agent.h"

namespace hlogym {

// What the auto agent learned from training graphs: actions ordered by how
// many training graphs they improved beyond D (ties by name).
struct AutoPrior {
  struct Entry {
    std::string action;
    int graphs = 0;            // training graphs whose best path used it
    int64_t op_reduction = 0;  // op count removed by its moves on those paths
  };
  std::vector<Entry> actions;
  std::vector<std::string> trained_on;  // the training benchmarks' suites/splits, readable
  int training_graphs = 0;
  std::string command;  // what made it

  std::vector<std::string> ActionNames() const;
  std::string ToJson() const;
  static absl::StatusOr<AutoPrior> FromJson(std::string_view json, std::string_view source);
  // DIR/prior.json, or the file itself.
  static absl::StatusOr<AutoPrior> Load(const std::string& path);
};

// The shipped prior: DataRoot()/datasets/policies/auto.
std::string DefaultAutoPriorPath();
// A coreset model trained with greedy search's paths among its candidates
// (CoresetTrainOptions::greedy_paths): DataRoot()/datasets/policies/auto-guide.
std::string DefaultAutoGuidePath();
// The second model of auto's guide, DataRoot()/datasets/policies/auto-guide/auto-paths.json:
// the coreset agent's model as trained at commit 54ff247, four sequences of auto's paths then,
// most often pipeline-first. The coreset agent's model trained since (one sequence) gives auto
// fewer starts and a higher R on most suites (docs/agents.md).
std::string DefaultAutoGuideAutoPathsModel();

// The work budget (SearchBudget::work) used when none is given. It binds on
// graphs above about 1,300 instructions, and keeps the search at most about
// 0.4 s a graph on a 2-core machine on the project's data (docs/agents.md).
inline constexpr int64_t kDefaultAutoWork = 200'000;
// The floor of that budget in steps on the initial module
// (SearchBudget::min_work_steps): it binds above 5,000 instructions, where
// 200,000 would not pay for the starts (the default, the guide's sequences)
// and a few moves from them, so that the budget stops shrinking, in steps,
// as graphs grow.
inline constexpr int64_t kDefaultAutoWorkSteps = 40;

// A guide (step 2): the pass sequences auto replays from I for a graph, the
// lowest state on each a start. The coreset model is one (MakeCoresetGuide); a
// learned policy is another (the deep-RL plugin's "auto-policy:DIR").
class AutoGuide {
 public:
  virtual ~AutoGuide() = default;
  // Every pass its sequences may hold (auto's environment needs them).
  virtual std::vector<std::string> Passes() const = 0;
  // The sequences for the graph at `initial` (I), whose default gives `d`,
  // the one the guide trusts most first (where the budget binds, descents from
  // the later ones go unsearched). An error leaves auto without these starts.
  virtual absl::StatusOr<std::vector<std::vector<std::string>>> Sequences(
      const Environment& initial, const Environment& d) = 0;
};

// For each model in turn, its choice for the graph (CoresetModel::Choose),
// then its other sequences in the order it picked them, each sequence once: on
// a graph unlike the training graphs a choice can miss, and each sequence
// leads auto's descents to another basin.
std::shared_ptr<AutoGuide> MakeCoresetGuide(std::vector<CoresetModel> models);
std::shared_ptr<AutoGuide> MakeCoresetGuide(CoresetModel model);

// The shipped auto's guide: the model of DefaultAutoGuidePath, whose
// sequences include greedy search's single-pass chains, then
// DefaultAutoGuideAutoPathsModel's, whose sequences are auto's paths, most
// often pipeline-first. Either alone ends higher than both on some unseen
// graphs (docs/agents.md).
absl::StatusOr<std::shared_ptr<AutoGuide>> LoadShippedAutoGuide();

struct AutoOptions {
  // Moves in a row that reach no new lowest op count (to unvisited modules).
  int non_improving_moves = 2;
  // Candidates validated (best first) before falling back to D.
  int max_validations = 3;
  // Training: no prior, every allowed action in every round.
  bool explore_all = false;
  // Validate the candidates (off only for training, which counts the moves
  // of the search's best path and hands back nothing).
  bool validate = true;
  // Where the search starts besides D (step 2); null: no guide.
  std::shared_ptr<AutoGuide> guide;
};

class AutoAgent : public Agent {
 public:
  AutoAgent(AgentOptions options, AutoPrior prior, AutoOptions auto_options = {});
  std::string_view name() const override { return "auto"; }
  // Not thread-safe: one Optimize at a time per agent.
  absl::StatusOr<SearchResult> Optimize(std::string_view benchmark,
                                        const SearchBudget& budget) override;
  const AutoPrior& prior() const { return prior_; }

 protected:
  absl::Status Search(SearchContext& ctx) override;

 private:
  AutoPrior prior_;
  AutoOptions auto_options_;
  std::vector<int> prior_actions_;  // indices into the action space, in prior order
  std::vector<int> other_actions_;  // the rest of the allowed actions
  // Best-improvement descent from `current` (see the file comment) over the
  // prior's actions, and with `widen` over the rest of the allowed actions
  // where those find nothing lower, until it stops or the budget runs out.
  // States below `best_overall` join candidates_ and lower it. Returns the
  // lowest state it reached (`current` when none was lower).
  std::unique_ptr<Environment> Descend(SearchContext& ctx, std::unique_ptr<Environment> current,
                                       absl::flat_hash_set<Fingerprint>& visited,
                                       int64_t& best_overall, bool widen);
  // Step 5: the first state below `from` and not in `visited` that an
  // allowed action that changes `from`, then one of the prior's actions,
  // reach; null when there is none or the budget runs out.
  std::unique_ptr<Environment> Escape(SearchContext& ctx, const Environment& from,
                                      const absl::flat_hash_set<Fingerprint>& visited);
  // Step 2: the lowest state on one of the guide's sequences, replayed from I;
  // null when the budget refused its first step.
  std::unique_ptr<Environment> LowestOnSequence(SearchContext& ctx,
                                                const std::vector<std::string>& sequence);
  int ActionIndex(std::string_view name) const;
  // A state below `lowest` (the lowest op count of any candidate so far)
  // becomes a candidate and lowers it.
  void AddCandidateIfLowest(const SearchContext& ctx, const Environment& state, int64_t& lowest);

  int pipeline_action_ = -1;        // xla-cpu-default
  int exact_pipeline_action_ = -1;  // xla-cpu-default-exact, when in the action space
  // States that reached a new lowest op count, in the order found (D first).
  std::vector<std::unique_ptr<Environment>> candidates_;
};

// Every action the auto agent may choose: the registry's passes (without the
// precision-changing ones unless allowed) and the named pipelines.
std::vector<std::string> AutoActionSpace(bool allow_excess_precision);
// Those actions without the pipelines and the precision-changing passes: the single passes
// greedy search is compared with auto over (docs/agents.md).
std::vector<std::string> AutoSinglePassActions();

// Learns a prior: runs the agent with every allowed action in every round
// (no budget but `steps_per_graph`) from D on each benchmark and counts the
// actions on each best path.
absl::StatusOr<AutoPrior> TrainAutoPrior(
    const std::vector<std::string>& specs, int64_t steps_per_graph, uint64_t seed,
    const std::function<void(int, int, const SearchResult&)>& progress = nullptr);

}  // namespace hlogym

#endif  // HLOGYM_AGENTS_AUTO_AGENT_H_
