// coreset: a learned choice among a few known-good pass sequences, the approach
// of Liang et al., "Learning Compiler Pass Orders using Coreset and Normalized
// Value Prediction" (ICML 2023), on XLA's passes.
//
// Training (TrainCoreset; `hlogym train --algo coreset`):
//   0. the training graphs: all of them, or a fraction drawn by the seed;
//   1. candidates: the path the auto agent finds on each training graph (from
//      I; its first action is the default pipeline or its exact variant), the
//      path greedy search over the single passes finds there (with
//      greedy_paths) and the two pipelines alone, each distinct
//      sequence once, at most max_candidates of them (drawn by the seed);
//   2. normalized values: every candidate replayed on every training graph;
//      its value there is log(D / R) (R the lowest op count on the replay, D
//      the default pipeline's), 0 where it only matches the default;
//   3. the coreset: K candidates picked greedily, each the one that adds most
//      to the sum over graphs of max(0, the best value in the coreset there);
//   4. the value predictor: the training graphs' features (CoresetFeatures)
//      and their values of the K sequences. A graph's predicted value of a
//      sequence is the mean of its nearest training graphs' (k-nearest
//      neighbours in standardized feature space).
//   K and k are chosen by cross-validation that leaves one training family out
//   at a time (CrossValidateCoreset): the score is what the agent would reach
//   on families it did not see, so a predictor that does not transfer loses
//   to K = 1 (one sequence for every graph).
// Acting (CoresetAgent, "coreset:DIR"): the features of I and D, one
// prediction, the sequence predicted best replayed from I (one rollout, no
// search); the lowest state on it is the answer, checked as every learned
// agent's is (Agent::NoWorseThanDefault: never above D, never one that failed
// its check).
#ifndef HLOGYM_AGENTS_CORESET_AGENT_H_
#define HLOGYM_AGENTS_CORESET_AGENT_H_

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "agents/agent.h"
#include "hlo/module.h"

namespace hlogym {

// What the predictor sees of a graph, normalized per graph so that graphs of
// any size share one scale: for I and for D, log(1 + the autophase summary's
// op count) and, for each other autophase feature, log(1 + f) - log(1 + op
// count); then log(D / I).
std::vector<float> CoresetFeatures(const Module& initial, const Module& d);
int CoresetFeatureSize();

// One setting of the coreset's size and the predictor's neighbours, and the
// geomean(D/R) the agent reached with it on the held-out groups.
struct CoresetFit {
  int size = 1;
  int neighbors = 1;
  double geomean_d_over_r = 1.0;
};

struct CoresetModel {
  std::vector<std::vector<std::string>> sequences;  // the coreset (step 3)
  // One row per training graph: its name, features and value of each sequence.
  std::vector<std::string> graphs;
  std::vector<std::vector<float>> features;
  std::vector<std::vector<float>> values;
  // Standardization of the features (training mean and standard deviation).
  std::vector<float> feature_mean, feature_scale;
  int neighbors = 5;
  int candidates = 0;                        // candidate sequences it was picked from
  std::vector<CoresetFit> cross_validation;  // every setting tried (training)
  std::vector<std::string> trained_on;       // readable
  std::string command;                       // what made it

  // The predicted value of each sequence for a graph with `features`.
  std::vector<double> Predict(const std::vector<float>& features) const;
  // Index of the sequence with the highest predicted value (the first on ties).
  int Choose(const std::vector<float>& features) const;

  std::string ToJson() const;
  static absl::StatusOr<CoresetModel> FromJson(std::string_view json, std::string_view source);
  // DIR/coreset.json, or the file itself.
  static absl::StatusOr<CoresetModel> Load(const std::string& path);
};

// Step 3 of training: K column indices of `values` (graphs x candidates)
// picked greedily for the largest sum over rows of max(0, max over the picked
// columns); stops early when no column adds anything. Ties go to the lower index.
std::vector<int> GreedyCoreset(const std::vector<std::vector<float>>& values, int k);

// Leave-one-group-out cross-validation of the coreset agent on the training
// graphs: for each group, the coreset picked (GreedyCoreset) and the features
// standardized on the other groups' graphs; each of the group's graphs gets
// the sequence its nearest other-group graphs value most, and scores
// max(0, its value) (the agent falls back to D). One fit per (size,
// neighbours), sizes outer; geomean(D/R) over all graphs.
std::vector<CoresetFit> CrossValidateCoreset(const std::vector<std::vector<float>>& features,
                                             const std::vector<std::vector<float>>& values,
                                             const std::vector<std::string>& groups,
                                             const std::vector<int>& sizes,
                                             const std::vector<int>& neighbors);

struct CoresetTrainOptions {
  int coreset_size = 16;                           // the largest K tried (1, 2, 4, ... and this)
  std::vector<int> neighbors = {1, 3, 5, 10, 20};  // the k tried
  int max_candidates = 200;  // distinct candidate sequences kept (drawn by the seed)
  // The fraction of the training graphs used (drawn by the seed; 1: all, and
  // the seed changes nothing else while the candidates fit max_candidates).
  double graph_fraction = 1.0;
  int64_t auto_steps = 0;  // the auto search's step budget per graph; 0: its default
  // Greedy search's path on each training graph (over the single passes, no budget) is a
  // candidate too: the model of auto's guide (DefaultAutoGuidePath), whose sequences are starts
  // for its descents. As one choice with no search, greedy's chains transfer worse than auto's
  // paths (docs/agents.md), so the coreset agent's own model is trained without them.
  bool greedy_paths = false;
  int threads = 2;  // replays run side by side
  uint64_t seed = 0;
};

struct CoresetTrainProgress {
  std::string phase;  // "candidates", "values"
  int done = 0, total = 0;
};

absl::StatusOr<CoresetModel> TrainCoreset(
    const std::vector<std::string>& specs, const CoresetTrainOptions& options,
    const std::function<void(const CoresetTrainProgress&)>& progress = nullptr);

class CoresetAgent : public Agent {
 public:
  CoresetAgent(AgentOptions options, CoresetModel model);
  std::string_view name() const override { return "coreset"; }
  absl::StatusOr<SearchResult> Optimize(std::string_view benchmark,
                                        const SearchBudget& budget) override;
  const CoresetModel& model() const { return model_; }

 protected:
  absl::Status Search(SearchContext& ctx) override;

 private:
  CoresetModel model_;
};

// The shipped model: DataRoot()/datasets/policies/coreset.
std::string DefaultCoresetPath();

// Appends to `actions` the passes of `sequences` it lacks (an agent that
// replays them needs them in its action space).
void AddSequencePasses(const std::vector<std::vector<std::string>>& sequences,
                       std::vector<std::string>& actions);

}  // namespace hlogym

#endif  // HLOGYM_AGENTS_CORESET_AGENT_H_
