#include "agents/evaluation.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <limits>
#include <system_error>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "agents/auto_agent.h"
#include "analysis/verifier.h"
#include "gym/benchmark.h"
#include "hlo/status_macros.h"
#include "nlohmann/json.hpp"
#include "text/corpus.h"
#include "text/file_io.h"
#include "text/printer.h"

namespace hlogym {
namespace fs = std::filesystem;

// ---------------------------------------------------------------------------
// The metric.

namespace {

// geomean of ratios clamped at kClampedRatio from below (for ratios <= 0).
double ClampedRatio(double ratio) { return ratio <= 0 ? kClampedRatio : ratio; }

}  // namespace

MetricSummary ComputeMetric(const std::vector<MetricInput>& inputs) {
  MetricSummary m;
  m.benchmarks = static_cast<int>(inputs.size());
  double log_sum = 0, x_log_sum = 0, d_over_r_log_sum = 0;
  int d_over_r_terms = 0;
  bool have_best = false;
  for (const MetricInput& in : inputs) {
    if (in.R <= in.D) ++m.r_le_d;
    if (in.R > 0 && in.D > 0) {
      d_over_r_log_sum += std::log(static_cast<double>(in.D) / static_cast<double>(in.R));
      ++d_over_r_terms;
    }
    if (in.R < in.D) ++m.r_lt_d;
    double ratio = std::numeric_limits<double>::quiet_NaN();
    if (in.D < in.I) {
      ratio = static_cast<double>(in.I - in.R) / static_cast<double>(in.I - in.D);
      ++m.counted;
      if (ratio <= 0) m.flagged.push_back(in.name);
      log_sum += std::log(ClampedRatio(ratio));
      if (!have_best || ratio > m.best_ratio) m.best = in.name, m.best_ratio = ratio;
      if (!have_best || ratio < m.worst_ratio) m.worst = in.name, m.worst_ratio = ratio;
      have_best = true;
    } else {
      m.apart.push_back({in.name, in.R<in.I, in.D> in.I});
    }
    m.ratios.push_back(ratio);
    if (in.X) {
      ++m.with_x;
      if (in.R <= *in.X) ++m.r_le_x;
      if (*in.X < in.I) {
        ++m.x_counted;
        x_log_sum += std::log(
            ClampedRatio(static_cast<double>(in.I - in.R) / static_cast<double>(in.I - *in.X)));
      }
    }
  }
  const double nan = std::numeric_limits<double>::quiet_NaN();
  m.geomean_ratio = m.counted > 0 ? std::exp(log_sum / m.counted) : nan;
  m.gain = m.counted > 0 ? m.geomean_ratio - 1 : nan;
  m.geomean_d_over_r = d_over_r_terms > 0 ? std::exp(d_over_r_log_sum / d_over_r_terms) : nan;
  m.gain_over_x = m.x_counted > 0 ? std::exp(x_log_sum / m.x_counted) - 1 : nan;
  m.share_r_le_d = m.benchmarks > 0 ? static_cast<double>(m.r_le_d) / m.benchmarks : 0;
  return m;
}

// ---------------------------------------------------------------------------
// Suites and the manifest.

namespace {

// The corpus module a benchmark is: by its file first (a spec may be any
// spelling of a corpus file's path; a file of another dataset of the corpus's
// form, <dataset>/<family>/<file> such as datasets/xla_optimized, is its entry
// there), else by name.
const CorpusModule* FindCorpusModule(const std::string& spec, const std::string& path) {
  const Corpus& corpus = Corpus::Default();
  if (!path.empty()) {
    if (const CorpusModule* m = corpus.FindByPath(path)) return m;
    const std::filesystem::path dataset = std::filesystem::path(path).parent_path().parent_path();
    std::error_code ec;
    if (std::filesystem::is_regular_file(dataset / "manifest.json", ec)) {
      if (const CorpusModule* m = Corpus::InFolder(dataset.string()).FindByPath(path)) return m;
    }
  }
  std::string name = spec;
  if (name.rfind("benchmark://", 0) == 0) name = name.substr(12);
  return corpus.Find(name);
}

bool IsCorpusSuiteName(const std::string& value) {
  return value == "gpt2" || value == "diverse" || value == "all" || value == "corpus";
}

// The folder `value` names when it holds a dataset manifest: as given,
// relative to the data root, or by a shipped dataset's name ("pytorch" for
// datasets/pytorch; "corpus" stays the corpus suite); "" otherwise.
std::string DatasetFolder(const std::string& value) {
  std::vector<fs::path> candidates = {fs::path(value)};
  if (fs::path(value).is_relative()) {
    candidates.push_back(fs::path(DataRoot()) / value);
    if (value != "corpus" && value.find('/') == std::string::npos) {
      candidates.push_back(fs::path(DataRoot()) / "datasets" / value);
    }
  }
  std::error_code ec;
  for (const fs::path& p : candidates) {
    if (fs::is_regular_file(p / "manifest.json", ec)) return p.string();
  }
  return "";
}

}  // namespace

std::optional<int64_t> ManifestX(const std::string& spec, const std::string& path) {
  const CorpusModule* m = FindCorpusModule(spec, path);
  return m != nullptr ? m->X : std::nullopt;
}

std::string BenchmarkDisplayName(const std::string& spec, const std::string& path) {
  if (const CorpusModule* m = FindCorpusModule(spec, path)) return m->name;
  std::string base = fs::path(path.empty() ? spec : path).filename().string();
  for (const char* ext : {".zst", ".gz", ".hlo", ".txt"}) {
    const std::string e(ext);
    if (base.size() > e.size() && base.compare(base.size() - e.size(), e.size(), e) == 0) {
      base.resize(base.size() - e.size());
    }
  }
  return base;
}

absl::StatusOr<std::vector<std::string>> ResolveSuite(const std::vector<std::string>& suite,
                                                      const std::string& split,
                                                      const std::string& dataset_split) {
  std::vector<std::string> values = suite.empty() ? std::vector<std::string>{"default"} : suite;
  const fs::path root(DataRoot());
  const bool have_corpus = !CorpusBenchmarkNames().empty();
  std::vector<std::string> specs;
  for (const std::string& value : values) {
    std::vector<std::string> locs;
    std::error_code ec;
    const bool is_path = fs::exists(value, ec) || fs::exists(root / value, ec);
    if (value == "smoke" && !is_path) {
      locs = {(root / "datasets/smoke/default_suite.txt").string()};
    } else if (value == "default" && !is_path) {
      fs::path corpus_suite = root / "datasets/corpus/default_suite.txt";
      locs = {fs::exists(corpus_suite, ec) ? corpus_suite.string()
                                           : (root / "datasets/smoke/default_suite.txt").string()};
    } else if (const std::string folder = DatasetFolder(value);
               !folder.empty() && !dataset_split.empty()) {
      // A dataset folder restricted to a split: its manifest's modules of that
      // split, as text/corpus.h's Corpus::Names reads splits.
      const Corpus& dataset = Corpus::InFolder(folder);
      if (!dataset.loaded()) {
        return absl::InvalidArgumentError(absl::StrCat("dataset ", folder, ": ", dataset.error()));
      }
      const std::vector<std::string> names = dataset.Names("", dataset_split);
      if (names.empty()) {
        return absl::NotFoundError(
            absl::StrCat("dataset ", folder, " has no module in split '", dataset_split, "'"));
      }
      for (const std::string& name : names) specs.push_back(dataset.Find(name)->path);
      continue;
    } else if (!is_path && have_corpus &&
               (value == "all" || value == "corpus" || !CorpusBenchmarkNames(value).empty())) {
      const bool whole = value == "all" || value == "corpus";
      std::vector<std::string> names = CorpusBenchmarkNames(whole ? "" : value, split);
      if (names.empty()) {
        return absl::NotFoundError(
            absl::StrCat("corpus suite '", value, "' has no module in split '", split, "'"));
      }
      for (const std::string& name : names) specs.push_back("corpus/" + name);
      continue;
    } else if (!is_path && IsCorpusSuiteName(value)) {
      return absl::NotFoundError(
          absl::StrCat("suite '", value, "' is a corpus suite, but there is no corpus manifest (",
                       (root / "datasets/corpus/manifest.json").string(),
                       "); use --suite smoke, a folder, HLO files or a .txt suite"));
    } else {
      const std::string folder = DatasetFolder(value);
      locs = {folder.empty() ? value : folder};
    }
    HLOGYM_ASSIGN(expanded, ExpandBenchmarkLocs(locs));
    specs.insert(specs.end(), expanded.begin(), expanded.end());
  }
  if (specs.empty()) return absl::InvalidArgumentError("the suite is empty");
  return specs;
}

// ---------------------------------------------------------------------------
// Running.

namespace {

absl::Status WriteResult(const std::string& dir, const BenchmarkRow& row, const Environment& env) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return absl::InternalError(absl::StrCat("cannot create ", dir, ": ", ec.message()));
  const std::string base = (fs::path(dir) / row.name).string();
  HLOGYM_RETURN_IF_ERROR(WriteTextFileAtomically(base + ".hlo", PrintModule(env.module())));
  return WriteTextFileAtomically(base + ".record.json", env.record().ToJson() + "\n");
}

std::string DescribeCheck(const std::optional<EquivalenceOptions>& options) {
  EquivalenceOptions o = options.value_or(EquivalenceOptions{});
  return absl::StrFormat("%d trial(s), seed %d, rtol %g, atol %g (bf16/f16: %g/%g, scaled)",
                         options ? o.trials : 1, o.seed, o.rtol, o.atol, o.low_precision_rtol,
                         o.low_precision_atol);
}

// Puts the gym's default checker back when an evaluation installed its own.
struct CheckerScope {
  explicit CheckerScope(const std::optional<EquivalenceOptions>& options) : active(options) {
    if (active) SetEquivalenceChecker(MakeEquivalenceChecker(*options));
  }
  ~CheckerScope() {
    if (active) SetEquivalenceChecker(DefaultEquivalenceChecker());
  }
  bool active;
};

// Replays `env`'s record without the cache and checks the replayed module
// (verifier, the gym's equivalence checker against the initial module). On
// success the row takes the replay's op count as R and keeps the search's in
// search_R.
absl::StatusOr<std::unique_ptr<Environment>> ReplayAndCheck(const Environment& env,
                                                            const EquivalenceChecker& checker,
                                                            BenchmarkRow& row) {
  EnvOptions options = env.options();
  options.use_cache = false;
  options.actions = env.actions();
  HLOGYM_ASSIGN(fresh, Environment::Create(options, env.registry()));
  HLOGYM_RETURN_IF_ERROR((fresh)->Replay(env.record()));
  const Environment& replay = *fresh;
  std::vector<std::string> errors;
  absl::Status verified = VerifyModule(replay.module());
  if (!verified.ok()) errors.push_back(absl::StrCat("verifier: ", verified.message()));
  std::string equivalence = "not available: equivalence checking is disabled";
  if (checker) {
    absl::StatusOr<bool> same = checker(env.initial_module(), replay.module());
    if (same.ok() && *same) {
      equivalence = "equivalent";
    } else if (!same.ok() && same.status().code() != absl::StatusCode::kInternal) {
      equivalence = absl::StrCat("undecided: ", same.status().message());
    } else {
      equivalence =
          same.ok() ? "not equivalent" : absl::StrCat("not equivalent: ", same.status().message());
      errors.push_back(absl::StrCat("equivalence: ", equivalence));
    }
  }
  if (!errors.empty()) {
    row.validation_errors.insert(row.validation_errors.end(), errors.begin(), errors.end());
    return absl::InternalError(absl::StrJoin(errors, "; "));
  }
  row.search_R = row.R;
  row.R = replay.op_count();
  row.equivalence = equivalence;
  row.valid = true;
  return fresh;
}

}  // namespace

namespace {

// The metric over the rows without an error, and the count of those with one.
void Summarize(EvalReport& report) {
  std::vector<MetricInput> inputs;
  report.failed = 0;
  for (const BenchmarkRow& row : report.rows) {
    if (row.error.empty()) {
      inputs.push_back({row.name, row.I, row.D, row.R, row.X});
    } else {
      ++report.failed;
    }
  }
  report.metric = ComputeMetric(inputs);
}

}  // namespace

absl::StatusOr<EvalReport> EvaluateSuite(const std::vector<std::string>& specs,
                                         const EvalOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  AgentOptions agent_options = options.agent_options;
  agent_options.env.baseline = "xla-cpu-default";  // D is always the default pipeline
  absl::StatusOr<std::unique_ptr<Agent>> agent = MakeAgent(options.agent, agent_options);
  if (!agent.ok()) return agent.status();
  if ((*agent)->needs_budget() && !options.budget.limited()) {
    return absl::InvalidArgumentError(
        absl::StrCat("the ", options.agent, " search needs a budget (steps or seconds)"));
  }

  CheckerScope scope(options.equivalence);
  const EquivalenceChecker checker = options.equivalence
                                         ? MakeEquivalenceChecker(*options.equivalence)
                                         : DefaultEquivalenceChecker();
  EvalReport report;
  report.equivalence_check = DescribeCheck(options.equivalence);
  report.agent = std::string((*agent)->name());
  report.budget = options.budget;
  report.seed = agent_options.seed;
  int index = 0;
  for (const std::string& spec : specs) {
    BenchmarkRow row;
    row.spec = spec;
    absl::StatusOr<std::string> path = ResolveBenchmarkPath(spec);
    row.name = BenchmarkDisplayName(spec, path.ok() ? *path : "");
    absl::StatusOr<SearchResult> result = (*agent)->Optimize(spec, options.budget);
    if (!result.ok()) {
      row.error = std::string(result.status().message());
    } else {
      row.I = result->initial_op_count;
      row.R = result->op_count;
      row.passes = result->passes;
      row.steps = result->steps;
      row.work = result->work;
      row.cache_hits = result->cache_hits;
      row.budget_exhausted = result->budget_exhausted;
      row.seconds = result->seconds - result->validate_seconds;
      row.model_seconds = result->model_seconds;
      row.rejected_candidates = result->rejected_candidates;
      row.fallback = result->fallback;
      row.own_R = result->own_op_count;
      row.start_R = result->starts_op_count;
      report.search_seconds += row.seconds;
      row.X = ManifestX(spec, result->env->benchmark().path);
      row.caveat = DefaultPipelineCaveat(result->env->initial_module());
      absl::StatusOr<int64_t> d = result->env->BaselineOpCount();
      if (!d.ok()) {
        row.error = absl::StrCat("D: ", d.status().message());
      } else {
        row.D = *d;
      }
      const Environment* final_env = result->env.get();
      std::unique_ptr<Environment> replayed;
      if (options.validate) {
        const auto validate_start = std::chrono::steady_clock::now();
        // An agent that validated its own answer (auto) hands the result over.
        ValidationResult v = result->validation ? *result->validation : result->env->Validate();
        row.equivalence = v.equivalence;
        row.valid = v.ok;
        row.validation_errors = v.errors;
        if (!v.ok && v.replay_ok && (!v.op_count_ok || !v.fingerprint_ok)) {
          // The state does not replay to itself: judge the replay instead.
          absl::StatusOr<std::unique_ptr<Environment>> replay =
              ReplayAndCheck(*result->env, checker, row);
          if (replay.ok()) {
            replayed = std::move(*replay);
            final_env = replayed.get();
          }
        }
        row.validate_seconds = SecondsSince(validate_start) + result->validate_seconds;
        if (!row.valid && row.error.empty()) {
          row.error =
              absl::StrCat("validation failed: ", absl::StrJoin(row.validation_errors, "; "));
        }
      } else {
        row.valid = true;
      }
      if (row.error.empty() && !options.output_dir.empty()) {
        absl::Status written = WriteResult(options.output_dir, row, *final_env);
        if (!written.ok()) row.error = std::string(written.message());
      }
    }
    report.rows.push_back(std::move(row));
    if (options.progress) {
      options.progress(index, static_cast<int>(specs.size()), report.rows.back());
    }
    ++index;
  }
  Summarize(report);
  report.total_seconds = SecondsSince(start);
  return report;
}

// ---------------------------------------------------------------------------
// Printing.

namespace {

std::string BudgetText(const SearchBudget& budget) {
  std::vector<std::string> parts;
  if (budget.steps > 0) parts.push_back(absl::StrCat(budget.steps, " steps"));
  if (budget.seconds > 0) parts.push_back(absl::StrFormat("%gs", budget.seconds));
  if (budget.work > 0) parts.push_back(absl::StrCat(budget.work, " work"));
  return parts.empty() ? "none" : absl::StrJoin(parts, " or ");
}

std::string Percent(double x) {
  if (std::isnan(x)) return "n/a";
  return absl::StrFormat("%+.2f%%", 100 * x);
}

std::string ShortEquivalence(const std::string& e) {
  if (e == "equivalent") return "equiv";
  if (e.rfind("undecided", 0) == 0) return "undecided";
  if (e.rfind("not equivalent", 0) == 0) return "NOT-EQUIV";
  if (e.rfind("not available", 0) == 0) return "n/a";
  return e;
}

}  // namespace

std::string FormatReport(const EvalReport& report, bool show_passes) {
  std::string out;
  std::string budget = BudgetText(report.budget);
  if (report.agent == "auto" && !report.budget.limited()) {
    budget = absl::StrCat("auto's default (", kDefaultAutoWork, " work, at least ",
                          kDefaultAutoWorkSteps, " steps' worth)");
  }
  absl::StrAppend(&out, "agent: ", report.agent, "   budget: ", budget, "   seed: ", report.seed,
                  "\n");
  size_t width = 9;
  for (const BenchmarkRow& row : report.rows) width = std::max(width, row.name.size());
  const int w = static_cast<int>(width);
  absl::StrAppend(
      &out, absl::StrFormat("%-*s %7s %7s %7s %7s %11s %4s %6s %8s  %s\n", w, "benchmark", "I", "D",
                            "R", "X", "(I-R)/(I-D)", "R<=D", "steps", "time(s)", "check"));
  size_t metric_index = 0;
  for (const BenchmarkRow& row : report.rows) {
    if (!row.error.empty()) {
      absl::StrAppend(&out, absl::StrFormat("%-*s FAILED: %s\n", w, row.name, row.error));
      continue;
    }
    const double ratio = metric_index < report.metric.ratios.size()
                             ? report.metric.ratios[metric_index++]
                             : std::numeric_limits<double>::quiet_NaN();
    std::string ratio_text = std::isnan(ratio) ? "apart" : absl::StrFormat("%.4f", ratio);
    if (!std::isnan(ratio) && ratio <= 0) ratio_text += "!";
    absl::StrAppend(
        &out, absl::StrFormat(
                  "%-*s %7d %7d %7s %7s %11s %4s %6d %8.2f  %s\n", w, row.name, row.I, row.D,
                  absl::StrCat(row.search_R ? "*" : "", row.R), row.X ? absl::StrCat(*row.X) : "-",
                  ratio_text, row.R <= row.D ? "yes" : "no", row.steps,
                  row.seconds + row.validate_seconds, ShortEquivalence(row.equivalence)));
    if (show_passes) {
      absl::StrAppend(&out, "    passes: ",
                      row.passes.empty() ? "(none)" : absl::StrJoin(row.passes, ","), "\n");
    }
  }
  const MetricSummary& m = report.metric;
  absl::StrAppend(&out, "\n");
  absl::StrAppend(&out, "gain over xla-cpu-default: ", Percent(m.gain),
                  "   (geomean((I-R)/(I-D)) - 1 over ", m.counted, " of ", m.benchmarks,
                  " benchmarks with D < I)\n");
  absl::StrAppend(&out, "flagged (ratio <= 0, counted as 0.01): ",
                  m.flagged.empty() ? "none" : absl::StrJoin(m.flagged, ", "), "\n");
  std::vector<std::string> apart;
  for (const auto& a : m.apart) {
    apart.push_back(absl::StrCat(a.name, a.d_above_i ? " (D > I)" : "",
                                 a.r_below_i ? " R < I: yes" : " R < I: no"));
  }
  absl::StrAppend(
      &out, "D >= I (listed apart): ", apart.empty() ? "none" : absl::StrJoin(apart, "; "), "\n");
  absl::StrAppend(
      &out, absl::StrFormat("R <= D: %d/%d (%.1f%%)   R < D: %d   geomean(D/R): %.4f\n", m.r_le_d,
                            m.benchmarks, 100 * m.share_r_le_d, m.r_lt_d, m.geomean_d_over_r));
  if (m.counted > 0) {
    absl::StrAppend(&out, absl::StrFormat("best: %s (%.4f)   worst: %s (%.4f)\n", m.best,
                                          m.best_ratio, m.worst, m.worst_ratio));
  }
  if (m.with_x > 0) {
    // The ratio (I-R)/(I-X) blows up where XLA barely shrinks a graph (X
    // close to I, or above it for bf16 graphs), so it is printed as a hint.
    absl::StrAppend(&out, absl::StrFormat("vs real XLA (X known for %d): R <= X for %d; gain over "
                                          "X by the same metric: %s (unstable where I - X is "
                                          "small)\n",
                                          m.with_x, m.r_le_x, Percent(m.gain_over_x)));
  } else {
    absl::StrAppend(&out, "vs real XLA: X unknown for these benchmarks\n");
  }
  std::vector<std::string> not_replaying;
  for (const BenchmarkRow& row : report.rows) {
    if (row.error.empty() && row.search_R) {
      not_replaying.push_back(
          absl::StrCat(row.name, " (search ", *row.search_R, ", replay ", row.R, ")"));
    }
  }
  if (!not_replaying.empty()) {
    absl::StrAppend(&out,
                    "* the search's state did not replay to itself without the cache (a pass "
                    "depends on more than the module); R is the checked replay: ",
                    absl::StrJoin(not_replaying, "; "), "\n");
  }
  int judged = 0, not_judged = 0;
  for (const BenchmarkRow& row : report.rows) {
    if (!row.error.empty()) continue;
    if (row.equivalence == "equivalent") ++judged;
    if (row.equivalence.rfind("undecided", 0) == 0) ++not_judged;
  }
  absl::StrAppend(&out, "equivalence check: ", report.equivalence_check, "; ", judged,
                  " equivalent, ", not_judged,
                  " not judged (rows marked undecided: the check could not tell, e.g. the original "
                  "misses its own f64 result on these inputs)\n");
  std::vector<double> search_times, model_times;
  int rejected = 0, fell_back = 0, answered = 0, from_starts = 0, past_starts = 0;
  for (const BenchmarkRow& row : report.rows) {
    if (!row.error.empty()) continue;
    search_times.push_back(row.seconds);
    if (row.model_seconds > 0) model_times.push_back(row.model_seconds);
    rejected += row.rejected_candidates;
    ++answered;
    if (!row.fallback.empty()) ++fell_back;
    if (row.start_R) {
      ++from_starts;
      const int64_t own = row.fallback.empty() ? row.R : row.own_R;  // before any fallback
      if (own < *row.start_R) ++past_starts;
    }
  }
  if (from_starts > 0) {
    absl::StrAppend(&out, "the policy's own steps went below its start states on ", past_starts,
                    " of ", from_starts,
                    " (the rest: its answer is a state of the fixed sequences it starts from)\n");
  }
  for (const BenchmarkRow& row : report.rows) {
    if (!row.caveat.empty()) absl::StrAppend(&out, "caveat: ", row.name, ": ", row.caveat, "\n");
  }
  if (fell_back > 0) {
    absl::StrAppend(&out, "fell back to D on ", fell_back, " of ", answered,
                    " (the agent's own answer was above D or failed its check)\n");
  }
  if (!search_times.empty()) {
    std::sort(search_times.begin(), search_times.end());
    absl::StrAppend(&out,
                    absl::StrFormat("search time per graph: median %.2fs, max %.2fs",
                                    search_times[search_times.size() / 2], search_times.back()));
    if (rejected > 0) {
      absl::StrAppend(&out, absl::StrFormat("   (%d better candidates failed the agent's own "
                                            "check and were dropped)",
                                            rejected));
    }
    absl::StrAppend(&out, "\n");
  }
  if (!model_times.empty()) {  // an agent with a learned model: the part of the search in it
    std::sort(model_times.begin(), model_times.end());
    absl::StrAppend(&out,
                    absl::StrFormat("  of which in the learned model: median %.4fs, max %.4fs\n",
                                    model_times[model_times.size() / 2], model_times.back()));
  }
  absl::StrAppend(
      &out, absl::StrFormat("wall time: %.2fs (search %.2fs)   failed: %d\n", report.total_seconds,
                            report.search_seconds, report.failed));
  return out;
}

std::string ReportToJson(const EvalReport& report) {
  auto number = [](double x) -> nlohmann::json {
    return std::isnan(x) ? nlohmann::json(nullptr) : nlohmann::json(x);
  };
  nlohmann::json j;
  j["agent"] = report.agent;
  j["budget"] = {{"steps", report.budget.steps},
                 {"seconds", report.budget.seconds},
                 {"work", report.budget.work}};
  j["seed"] = report.seed;
  j["equivalence_check"] = report.equivalence_check;
  nlohmann::json rows = nlohmann::json::array();
  size_t metric_index = 0;
  for (const BenchmarkRow& row : report.rows) {
    nlohmann::json r;
    r["benchmark"] = row.spec;
    r["name"] = row.name;
    if (!row.error.empty()) r["error"] = row.error;
    r["I"] = row.I;
    r["D"] = row.D;
    r["R"] = row.R;
    r["X"] = row.X ? nlohmann::json(*row.X) : nlohmann::json(nullptr);
    if (row.error.empty() && metric_index < report.metric.ratios.size()) {
      r["ratio"] = number(report.metric.ratios[metric_index++]);
    }
    r["passes"] = row.passes;
    r["steps"] = row.steps;
    r["work"] = row.work;
    r["cache_hits"] = row.cache_hits;
    r["budget_exhausted"] = row.budget_exhausted;
    r["seconds"] = row.seconds;
    r["validate_seconds"] = row.validate_seconds;
    if (row.model_seconds > 0) r["model_seconds"] = row.model_seconds;
    r["equivalence"] = row.equivalence;
    r["valid"] = row.valid;
    r["rejected_candidates"] = row.rejected_candidates;
    if (!row.fallback.empty()) {
      r["fallback"] = row.fallback;
      r["own_R"] = row.own_R;
    }
    if (row.search_R) r["search_R"] = *row.search_R;
    if (row.start_R) r["start_R"] = *row.start_R;
    if (!row.validation_errors.empty()) r["validation_errors"] = row.validation_errors;
    if (!row.caveat.empty()) r["caveat"] = row.caveat;
    rows.push_back(std::move(r));
  }
  j["benchmarks"] = std::move(rows);
  const MetricSummary& m = report.metric;
  nlohmann::json apart = nlohmann::json::array();
  for (const auto& a : m.apart) {
    apart.push_back({{"name", a.name}, {"r_below_i", a.r_below_i}, {"d_above_i", a.d_above_i}});
  }
  j["summary"] = {{"benchmarks", m.benchmarks},
                  {"counted", m.counted},
                  {"gain", number(m.gain)},
                  {"geomean_ratio", number(m.geomean_ratio)},
                  {"flagged", m.flagged},
                  {"apart", apart},
                  {"r_le_d", m.r_le_d},
                  {"r_lt_d", m.r_lt_d},
                  {"share_r_le_d", m.share_r_le_d},
                  {"geomean_d_over_r", number(m.geomean_d_over_r)},
                  {"best", m.counted ? nlohmann::json(m.best) : nlohmann::json(nullptr)},
                  {"best_ratio", m.counted ? number(m.best_ratio) : nlohmann::json(nullptr)},
                  {"worst", m.counted ? nlohmann::json(m.worst) : nlohmann::json(nullptr)},
                  {"worst_ratio", m.counted ? number(m.worst_ratio) : nlohmann::json(nullptr)},
                  {"with_x", m.with_x},
                  {"r_le_x", m.r_le_x},
                  {"gain_over_x", number(m.gain_over_x)},
                  {"failed", report.failed},
                  {"total_seconds", report.total_seconds},
                  {"search_seconds", report.search_seconds}};
  return j.dump(1);
}

absl::StatusOr<EvalReport> ReportFromJson(std::string_view json, std::string_view source) {
  EvalReport report;
  try {
    const nlohmann::json j = nlohmann::json::parse(json);
    report.agent = j.at("agent").get<std::string>();
    report.budget.steps = j.at("budget").at("steps").get<int64_t>();
    report.budget.seconds = j.at("budget").at("seconds").get<double>();
    report.budget.work = j.at("budget").value("work", int64_t{0});
    report.seed = j.at("seed").get<uint64_t>();
    report.equivalence_check = j.value("equivalence_check", std::string());
    for (const nlohmann::json& r : j.at("benchmarks")) {
      BenchmarkRow row;
      row.spec = r.at("benchmark").get<std::string>();
      row.name = r.at("name").get<std::string>();
      row.error = r.value("error", std::string());
      row.I = r.at("I").get<int64_t>();
      row.D = r.at("D").get<int64_t>();
      row.R = r.at("R").get<int64_t>();
      if (!r.at("X").is_null()) row.X = r.at("X").get<int64_t>();
      row.passes = r.at("passes").get<std::vector<std::string>>();
      row.steps = r.value("steps", int64_t{0});
      row.work = r.value("work", int64_t{0});
      row.cache_hits = r.value("cache_hits", int64_t{0});
      row.budget_exhausted = r.value("budget_exhausted", false);
      row.seconds = r.value("seconds", 0.0);
      row.validate_seconds = r.value("validate_seconds", 0.0);
      row.model_seconds = r.value("model_seconds", 0.0);
      row.equivalence = r.value("equivalence", std::string("not checked"));
      row.valid = r.at("valid").get<bool>();
      row.rejected_candidates = r.value("rejected_candidates", 0);
      row.fallback = r.value("fallback", std::string());
      row.own_R = r.value("own_R", int64_t{0});
      if (r.contains("search_R")) row.search_R = r["search_R"].get<int64_t>();
      if (r.contains("start_R")) row.start_R = r["start_R"].get<int64_t>();
      row.validation_errors = r.value("validation_errors", std::vector<std::string>());
      row.caveat = r.value("caveat", std::string());
      report.search_seconds += row.seconds;
      report.rows.push_back(std::move(row));
    }
    if (j.contains("summary")) report.total_seconds = j["summary"].value("total_seconds", 0.0);
  } catch (const std::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat(
        std::string(source), ": not an evaluation report (hlogym eval --json): ", e.what()));
  }
  Summarize(report);
  return report;
}

absl::StatusOr<EvalReport> MergeReports(const std::vector<EvalReport>& parts) {
  if (parts.empty()) return absl::InvalidArgumentError("no reports to merge");
  EvalReport merged;
  const EvalReport& first = parts.front();
  merged.agent = first.agent;
  merged.budget = first.budget;
  merged.seed = first.seed;
  merged.equivalence_check = first.equivalence_check;
  for (const EvalReport& part : parts) {
    if (part.agent != first.agent || part.budget.steps != first.budget.steps ||
        part.budget.seconds != first.budget.seconds || part.budget.work != first.budget.work ||
        part.seed != first.seed || part.equivalence_check != first.equivalence_check) {
      return absl::InvalidArgumentError(absl::StrCat(
          "the reports ran different evaluations (agent ", first.agent, " vs ", part.agent,
          ", seed ", first.seed, " vs ", part.seed, ", or budgets or checks differ)"));
    }
    merged.rows.insert(merged.rows.end(), part.rows.begin(), part.rows.end());
    merged.search_seconds += part.search_seconds;
    // The parts may have run side by side: the longest is the wall time.
    merged.total_seconds = std::max(merged.total_seconds, part.total_seconds);
  }
  Summarize(merged);
  return merged;
}

}  // namespace hlogym
