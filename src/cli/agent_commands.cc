// search and eval: run a search baseline (or the default pipeline) over a
// suite and print the seed paper's table.
//   hlogym search --algo auto|random|greedy|beam|evo [--budget N] [--time S]
//                 [--suite S...] [--split test] [--seed N] [--json] [-o DIR]
//   hlogym eval --agent auto|default|random|greedy|beam|evo [--suite S...]
//               [--split test] [--budget N] [--time S] [--json] [-o DIR]
// both: [--rtol R] [--atol A] [--trials K] for the equivalence check.
// --suite takes corpus suite names (gpt2, diverse, all), "smoke", "default",
// folders, HLO files and .txt suite files. Every printed result has been
// replayed without the cache and checked (verifier, equivalence with the
// initial module). Exit status: 0, 1 when a result failed its check or a
// benchmark failed, 2 for bad input.
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "agents/agent.h"
#include "agents/auto_agent.h"
#include "agents/evaluation.h"
#include "cli/commands.h"
#include "text/file_io.h"

namespace hlogym::cli {
namespace {

struct AgentCommandOptions {
  std::string agent;
  std::vector<std::string> suite;
  std::string split;
  std::string dataset_split;  // --split as given (dataset folders take it only then)
  int64_t budget = 0;
  double time = 0;
  int64_t work = 0;
  uint64_t seed = 0;
  bool json = false;
  bool quiet = false;
  bool show_passes = false;
  std::string output_dir;
  std::string passes;  // action space (comma-separated), empty = every pass
  AgentOptions knobs;
  // Equivalence check; unset flags keep CheckEquivalent's defaults.
  std::optional<double> rtol, atol;
  std::optional<int> trials;
  std::vector<std::string> merge;  // eval --merge: reports of parts of a suite
};

// Random and evolutionary searches need a budget; this one is used when
// neither --budget nor --time is given.

// Prints a report as the options ask; the exit status says whether every benchmark passed.
int PrintReport(const EvalReport& report, const AgentCommandOptions& o, bool show_passes) {
  if (o.json) {
    std::cout << ReportToJson(report) << "\n";
  } else {
    std::cout << FormatReport(report, show_passes);
  }
  return report.failed > 0 ? kExitInternal : kExitOk;
}

// eval --merge: one table from the --json reports of parts of a suite.
int RunMerge(const AgentCommandOptions& o) {
  std::vector<EvalReport> parts;
  for (const std::string& file : o.merge) {
    absl::StatusOr<std::string> text = ReadTextFile(file);
    if (!text.ok()) return ReportError(text.status());
    absl::StatusOr<EvalReport> part = ReportFromJson(*text, file);
    if (!part.ok()) return ReportError(part.status());
    parts.push_back(*std::move(part));
  }
  absl::StatusOr<EvalReport> merged = MergeReports(parts);
  if (!merged.ok()) return ReportError(merged.status());
  return PrintReport(*merged, o, o.show_passes);
}

int RunAgentCommand(const AgentCommandOptions& o, bool is_search) {
  if (!o.merge.empty()) return RunMerge(o);
  absl::StatusOr<std::vector<std::string>> specs = ResolveSuite(o.suite, o.split, o.dataset_split);
  if (!specs.ok()) return ReportError(specs.status());

  EvalOptions options;
  options.agent = o.agent;
  options.agent_options = o.knobs;
  options.agent_options.seed = o.seed;
  if (!o.passes.empty()) {
    for (absl::string_view p : absl::StrSplit(o.passes, ',', absl::SkipEmpty())) {
      options.agent_options.env.actions.emplace_back(p);
    }
  }
  options.budget.steps = o.budget;
  options.budget.seconds = o.time;
  options.budget.work = o.work;
  absl::StatusOr<std::unique_ptr<Agent>> probe = MakeAgent(o.agent);
  if (!probe.ok()) return ReportError(probe.status());
  if ((*probe)->needs_budget() && !options.budget.limited()) {
    options.budget.steps = kDefaultSearchSteps;
  }
  options.output_dir = o.output_dir;
  if (o.rtol || o.atol || o.trials) {
    EquivalenceOptions eq;
    eq.evaluator.num_threads = 1;
    if (o.rtol) eq.rtol = *o.rtol;
    if (o.atol) eq.atol = *o.atol;
    if (o.trials) eq.trials = *o.trials;
    options.equivalence = eq;
  }
  if (!o.quiet) {
    options.progress = [](int index, int total, const BenchmarkRow& row) {
      if (row.error.empty()) {
        std::cerr << absl::StrFormat("[%d/%d] %s: I=%d D=%d R=%d (%d steps, %.2fs, %s)\n",
                                     index + 1, total, row.name, row.I, row.D, row.R, row.steps,
                                     row.seconds + row.validate_seconds, row.equivalence);
      } else {
        std::cerr << absl::StrFormat("[%d/%d] %s: FAILED: %s\n", index + 1, total, row.name,
                                     row.error);
      }
    };
  }
  absl::StatusOr<EvalReport> report = EvaluateSuite(*specs, options);
  if (!report.ok()) return ReportError(report.status());
  return PrintReport(*report, o, is_search || o.show_passes);
}

void AddCommonOptions(CLI::App* command, AgentCommandOptions& o, const std::string& split_help) {
  CLI::Option* suite =
      command
          ->add_option(
              "--suite", o.suite,
              "Corpus suite (gpt2, diverse, all or corpus), smoke, default, folders (a dataset "
              "folder with a manifest.json, such as datasets/xla_optimized: the modules "
              "it lists), HLO files or .txt suites (default: the corpus default suite, "
              "else the smoke one)")
          ->expected(1, -1);
  // Both fill the same list, so one given beside the other would be dropped without a word
  // (`--suite d --json out.json` evaluated out.json alone: --json takes no value).
  command->add_option("benchmarks", o.suite, "Benchmarks (same as --suite)")->excludes(suite);
  command
      ->add_option("--split", o.split,
                   split_help +
                       " (train, test: by configuration; heldout: the families no "
                       "agent trained on; train-seen: train without them); given, it applies to "
                       "dataset folders too")
      ->each([&o](const std::string& value) { o.dataset_split = value; });
  command->add_option("--budget", o.budget,
                      "Step budget per benchmark (Environment steps, cache hits included; random "
                      "and evo default to 500 when no --time is given)");
  command->add_option("--time", o.time, "Time budget per benchmark in seconds");
  command->add_option(
      "--work", o.work,
      absl::StrCat("Work budget per benchmark: instructions stepped over (a step that runs a "
                   "pass costs the op count of the module it starts from; cache hits and passes "
                   "whose pre-check rules them out are free; auto's default when no budget is "
                   "given: ",
                   kDefaultAutoWork, ", and at least ", kDefaultAutoWorkSteps,
                   " steps' worth on the original module)"));
  command->add_option("--seed", o.seed, "Seed (default 0)");
  command->add_flag("--json", o.json, "Print the report as JSON");
  command->add_flag("-q,--quiet", o.quiet, "No per-benchmark progress on stderr");
  command->add_option("-o,--output", o.output_dir,
                      "Write DIR/<name>.hlo (optimized) and DIR/<name>.record.json per benchmark");
  command->add_option("--passes", o.passes,
                      "Action space: comma-separated pass names (default: every registered pass)");
  command->add_option("--length", o.knobs.trajectory_length,
                      "Random: episode length; evo: sequence length (default 10)");
  command->add_option("--beam-width", o.knobs.beam_width, "Beam width (default 4)");
  command->add_option("--beam-depth", o.knobs.beam_depth, "Beam depth (default 12)");
  command->add_option("--population", o.knobs.population, "Evo population (default 16)");
  command->add_option("--rtol", o.rtol, "Equivalence check: relative tolerance (default 1e-3)");
  command->add_option("--atol", o.atol, "Equivalence check: absolute tolerance (default 1e-5)");
  command->add_option("--trials", o.trials, "Equivalence check: input sets (default 1)");
  command->add_flag("--allow-excess-precision", o.knobs.allow_excess_precision,
                    "auto: also choose passes that change numeric precision (float normalization, "
                    "simplify-fp-conversions), as XLA's xla_allow_excess_precision allows");
  command->add_option("--non-improving", o.knobs.greedy_non_improving_moves,
                      "Greedy: non-improving moves allowed in a row (default 2)");
}

}  // namespace

void RegisterAgentCommands(CLI::App& app) {
  auto search_options = std::make_shared<AgentCommandOptions>();
  search_options->agent = "auto";
  CLI::App* search = app.add_subcommand(
      "search",
      "Search pass orderings per benchmark (random, greedy, beam, evo) and print the sequences "
      "with the paper's metric");
  search->add_option(
      "--algo", search_options->agent,
      "auto | auto:PRIOR | coreset | coreset:DIR | random | greedy | beam | evo (or default) "
      "(default auto)");
  AddCommonOptions(search, *search_options, "Corpus split for corpus suites (default: both)");
  SetAction(search, [search_options] { return RunAgentCommand(*search_options, true); });

  auto eval_options = std::make_shared<AgentCommandOptions>();
  eval_options->agent = "auto";
  eval_options->split = "test";
  CLI::App* eval = app.add_subcommand(
      "eval",
      "Evaluate an agent on a suite: per-benchmark I, D, R, X and the gain over xla-cpu-default "
      "(geomean((I-R)/(I-D)) - 1), every result checked for equivalence");
  eval->add_option(
      "--agent", eval_options->agent,
      "auto | auto:PRIOR | coreset | coreset:DIR | default | random | greedy | beam | evo | "
      "policy:DIR | policy-beam:DIR | auto-policy:DIR (auto guided by the policy) (default: auto, "
      "the shipped agent)");
  AddCommonOptions(eval, *eval_options, "Corpus split for corpus suites (default test)");
  eval->add_flag("--show-passes", eval_options->show_passes, "Print each benchmark's passes");
  eval->add_option("--merge", eval_options->merge,
                   "Print one table from the --json reports of parts of a suite (run apart, "
                   "e.g. by hlogym.ray); nothing is run")
      ->expected(1, -1);
  SetAction(eval, [eval_options] { return RunAgentCommand(*eval_options, false); });
}

}  // namespace hlogym::cli
