// Evaluation of an agent over a suite: I, D (xla-cpu-default), R (the agent),
// X (real XLA, from the corpus manifest when it has the module) per
// benchmark, every result replayed and checked (verifier + equivalence with
// the initial module), and the seed paper's metric as docs/ARCHITECTURE.md defines
// it:
//   gain over the default = geomean_b((I_b - R_b) / (I_b - D_b)) - 1 over the
//   benchmarks with D_b < I_b; a ratio at or below 0 counts as 0.01 and is
//   flagged; benchmarks with D_b == I_b (and, should it happen, D_b > I_b)
//   are listed apart with whether R_b < I_b; also the share of benchmarks
//   with R_b <= D_b, geomean_b(D_b / R_b), the best and the worst ratio.
#ifndef HLOGYM_AGENTS_EVALUATION_H_
#define HLOGYM_AGENTS_EVALUATION_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "agents/agent.h"
#include "eval/equivalence.h"

namespace hlogym {

// ---------------------------------------------------------------------------
// The metric (pure; no gym involved).

struct MetricInput {
  std::string name;
  int64_t I = 0, D = 0, R = 0;
  std::optional<int64_t> X = std::nullopt;
};

inline constexpr double kClampedRatio = 0.01;

struct MetricSummary {
  int benchmarks = 0;  // all inputs
  int counted = 0;     // D < I: the geomean's terms
  // geomean of the (clamped) ratios and gain = geomean - 1; NaN when counted == 0.
  double geomean_ratio = 0;
  double gain = 0;
  std::vector<double> ratios;        // per input: (I-R)/(I-D) unclamped; NaN when not counted
  std::vector<std::string> flagged;  // counted benchmarks whose ratio was <= 0 (counted as 0.01)
  struct Apart {
    std::string name;
    bool r_below_i = false;  // the agent still reduced it
    bool d_above_i = false;  // the default grew it (D > I) rather than leaving it (D == I)
  };
  std::vector<Apart> apart;  // D >= I
  // geomean_b(D_b / R_b) over every benchmark (how many fewer ops than the
  // default; stable where I - D is tiny, unlike the gain); NaN when empty.
  double geomean_d_over_r = 0;
  int r_le_d = 0;           // over all benchmarks
  double share_r_le_d = 0;  // r_le_d / benchmarks (0 when none)
  int r_lt_d = 0;
  // Best and worst counted benchmark by ratio (empty when counted == 0).
  std::string best, worst;
  double best_ratio = 0, worst_ratio = 0;
  // Against real XLA where X is known: how many, how many with R <= X, and
  // geomean((I-R)/(I-X)) - 1 by the same rules over those with X < I.
  int with_x = 0, r_le_x = 0, x_counted = 0;
  double gain_over_x = 0;
};

MetricSummary ComputeMetric(const std::vector<MetricInput>& inputs);

// ---------------------------------------------------------------------------
// Suites.

// Expands --suite values into benchmark specs. Each value is a corpus suite
// name of the manifest ("gpt2", "diverse", "all" or "corpus" for every module;
// restricted to `split` when non-empty), "smoke" (datasets/smoke/default_suite.txt),
// "default" (the corpus default suite when the corpus exists, else the smoke
// one), a shipped dataset's name ("pytorch", "xla_optimized": its folder), a
// directory (a dataset folder with a manifest.json is restricted to
// `dataset_split` when that is non-empty: train, test, heldout, train-seen),
// a *.txt suite file or a benchmark spec (see gym/benchmark.h). An empty list
// means "default". The CLI passes --split as `split` always (its commands have
// a default split for the corpus) and as `dataset_split` only when given.
absl::StatusOr<std::vector<std::string>> ResolveSuite(const std::vector<std::string>& suite,
                                                      const std::string& split = "",
                                                      const std::string& dataset_split = "");

// X for a benchmark (a spec or the resolved path) from the corpus manifest.
std::optional<int64_t> ManifestX(const std::string& spec, const std::string& path);
// The short name of a benchmark: its manifest name, else the file name
// without .hlo/.txt/.gz/.zst.
std::string BenchmarkDisplayName(const std::string& spec, const std::string& path);

// ---------------------------------------------------------------------------
// Running an agent over a suite.

struct BenchmarkRow {
  std::string spec;
  std::string name;
  std::string error;  // non-empty: the benchmark could not be evaluated (no numbers)
  int64_t I = 0, D = 0, R = 0;
  std::optional<int64_t> X = std::nullopt;
  std::vector<std::string> passes;
  int64_t steps = 0, work = 0, cache_hits = 0;
  bool budget_exhausted = false;
  double seconds = 0;           // the agent's search
  double validate_seconds = 0;  // replay + checks
  double model_seconds = 0;     // of `seconds`, in the agent's learned model (0: none)
  // "equivalent", "undecided: ...", "not equivalent: ...", "not checked".
  std::string equivalence = "not checked";
  bool valid = false;           // replay, op count, fingerprint, verifier and equivalence all fine
  int rejected_candidates = 0;  // better states the agent found that failed its own check
  std::string fallback;         // why the default's result replaced the agent's ("": it did not)
  int64_t own_R = 0;            // with a fallback: the op count of the agent's own answer
  // A policy's: the lowest op count of its start states (SearchResult::starts_op_count).
  std::optional<int64_t> start_R;
  std::vector<std::string> validation_errors;
  // When the search's state does not come back when its passes are replayed
  // without the cache (a pass whose result depends on more than the module,
  // a bug the validation reports), R is the replay's op count, the replay is
  // what is checked and written, and this is the op count the search saw.
  std::optional<int64_t> search_R;
  // Why D here is not what XLA's pipeline makes of the module ("": nothing
  // known says so; DefaultPipelineCaveat), printed under the table.
  std::string caveat;
};

struct EvalOptions {
  std::string agent = "default";
  AgentOptions agent_options;
  SearchBudget budget;
  // Replay every result without the cache and check verifier + equivalence
  // (always on in the CLI; tests may turn it off for speed).
  bool validate = true;
  // The equivalence check's options (seed, trials, tolerances); unset: the
  // gym's default checker (one trial, CheckEquivalent's default tolerances).
  // Set, EvaluateSuite installs a checker with these options for its run
  // (SetEquivalenceChecker) and puts the default back afterwards.
  std::optional<EquivalenceOptions> equivalence;
  // Write DIR/<name>.hlo (the optimized module) and DIR/<name>.record.json
  // (its state record) for every validated result.
  std::string output_dir;
  // Called after each benchmark (progress output).
  std::function<void(int index, int total, const BenchmarkRow&)> progress;
};

struct EvalReport {
  std::string agent;
  SearchBudget budget;
  uint64_t seed = 0;
  std::vector<BenchmarkRow> rows;
  MetricSummary metric;           // over valid rows only
  int failed = 0;                 // rows with an error or a failed validation
  double total_seconds = 0;       // wall time of the whole evaluation
  double search_seconds = 0;      // sum of the agent's searches
  std::string equivalence_check;  // the checker's options, readable
};

// Runs the agent on every spec. Benchmarks that fail to load or whose result
// does not validate are rows with an error, left out of the metric (a result
// that is not equivalent is never counted or written).
absl::StatusOr<EvalReport> EvaluateSuite(const std::vector<std::string>& specs,
                                         const EvalOptions& options);

// The paper's table: one row per benchmark, then the summary.
std::string FormatReport(const EvalReport& report, bool show_passes = false);
std::string ReportToJson(const EvalReport& report);

// A report ReportToJson wrote, read back (its summary is recomputed from the
// rows); `source` names it in errors.
absl::StatusOr<EvalReport> ReportFromJson(std::string_view json, std::string_view source);

// One report from the reports of parts of a suite (shards run apart, e.g. on
// a Ray cluster by hlogym.ray): the rows in the order given and the summary
// over all of them, as one run over the whole suite gives. InvalidArgument
// when the parts ran different agents, budgets, seeds or checks.
absl::StatusOr<EvalReport> MergeReports(const std::vector<EvalReport>& parts);

}  // namespace hlogym

#endif  // HLOGYM_AGENTS_EVALUATION_H_
