// list-passes, opt and fuzz-passes: the pass registry, XLA's hlo-opt,
// hlogym style, and differential fuzzing of the passes.
#include <algorithm>
#include <chrono>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "analysis/verifier.h"
#include "cli/commands.h"
#include "gym/benchmark.h"
#include "gym/pass_fuzzer.h"
#include "hlo/status_macros.h"
#include "nlohmann/json.hpp"
#include "passes/registry.h"
#include "text/file_io.h"
#include "text/printer.h"

namespace hlogym::cli {
namespace {

// fuzz-passes found failing sequences (as `equiv` exits 3 on a difference).
inline constexpr int kExitFuzzFailures = 3;

int RunListPasses(bool json) {
  const PassRegistry& registry = PassRegistry::Builtin();
  if (json) {
    nlohmann::json passes = nlohmann::json::array();
    for (const PassInfo& info : registry.passes()) {
      passes.push_back({{"name", info.name},
                        {"summary", info.summary},
                        {"changes_numeric_precision", ChangesNumericPrecision(info.name)}});
    }
    nlohmann::json pipelines = nlohmann::json::array();
    for (const PipelineInfo& info : BuiltinPipelines()) {
      pipelines.push_back({{"name", info.name},
                           {"summary", info.summary},
                           {"missing_passes", info.missing_passes}});
    }
    std::cout << nlohmann::json{{"passes", passes}, {"pipelines", pipelines}}.dump(2) << "\n";
    return kExitOk;
  }
  for (const PassInfo& info : registry.passes()) {
    std::cout << info.name;
    for (size_t pad = info.name.size(); pad < 36; ++pad) std::cout << ' ';
    std::cout << info.summary << "\n";
  }
  if (!BuiltinPipelines().empty()) std::cout << "\npipelines (--pipeline=NAME):\n";
  for (const PipelineInfo& info : BuiltinPipelines()) {
    std::cout << "  " << info.name << ": " << info.summary << "\n";
  }
  return kExitOk;
}

struct OptOptions {
  std::string input;
  std::string output = "-";
  std::string passes;
  std::string pipeline;
  bool verify_each = false;
  bool explain = false;
  bool list_passes = false;
  bool time_passes = false;
  bool trace_passes = false;
  std::string dump_to;
  bool for_xla = false;
};

using Clock = std::chrono::steady_clock;

double MillisecondsSince(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

// --time-passes: the phases, then every pass that ran, slowest first (to stderr).
void PrintPassTimes(const PassTimer& timer, int64_t instructions, double load_ms, double run_ms,
                    double write_ms) {
  std::cerr << absl::StrFormat(
      "time: load %.1f ms, passes %.1f ms (%d instructions at the start), write %.1f ms\n", load_ms,
      run_ms, instructions, write_ms);
  std::vector<PassTimer::Entry> entries = timer.entries();
  std::stable_sort(entries.begin(), entries.end(),
                   [](const auto& a, const auto& b) { return a.seconds > b.seconds; });
  std::cerr << absl::StrFormat("%10s %6s %8s %8s  %s\n", "ms", "runs", "skipped", "changed",
                               "pass");
  for (const PassTimer::Entry& entry : entries) {
    std::cerr << absl::StrFormat("%10.2f %6d %8d %8d  %s\n", 1000 * entry.seconds, entry.runs,
                                 entry.skipped, entry.changed, entry.name);
  }
}

// --trace-passes: every pass that changed the module, in order, with the op count after it (to
// stderr), the columns of a module's XLA reference (its "passes": pass, op_count).
void PrintPassTrace(const PassTimer& timer, int64_t instructions) {
  std::cerr << absl::StrFormat("%8d  (start)\n", instructions);
  for (const PassTimer::Change& change : timer.changes()) {
    std::cerr << absl::StrFormat("%8d  %s\n", change.op_count, change.name);
  }
}

// Prints what a pipeline runs and which of XLA's passes it lacks.
void Explain(const Pass& pass, int depth) {
  std::string indent(2 * depth, ' ');
  if (const auto* pipeline = dynamic_cast<const PassPipeline*>(&pass)) {
    std::cerr << indent << pipeline->name();
    if (!pipeline->runs_on().empty()) std::cerr << " (on " << pipeline->runs_on() << ")";
    std::cerr << ":\n";
    for (const auto& inner : pipeline->passes()) Explain(*inner, depth + 1);
  } else if (const auto* fixed = dynamic_cast<const FixedPointPass*>(&pass)) {
    std::cerr << indent << "fixed point of:\n";
    Explain(fixed->inner(), depth + 1);
  } else {
    std::cerr << indent << pass.name() << "\n";
  }
}

// Runs every leaf pass in order, verifying after each one.
absl::StatusOr<bool> RunVerifyingEach(Pass& pass, Module& module) {
  if (auto* pipeline = dynamic_cast<PassPipeline*>(&pass)) {
    bool changed = false;
    for (const auto& inner : pipeline->passes()) {
      HLOGYM_ASSIGN(inner_changed, RunVerifyingEach(*inner, module));
      changed |= inner_changed;
    }
    return changed;
  }
  HLOGYM_ASSIGN(changed, RunPass(pass, module));
  absl::Status verified = VerifyModule(module);
  if (!verified.ok()) {
    return absl::InternalError(
        absl::StrCat("after pass ", std::string(pass.name()),
                     ", the module does not verify: ", std::string(verified.message())));
  }
  return changed;
}

int RunOpt(const OptOptions& options) {
  if (options.list_passes) {
    // hlo-opt's spelling: every pass name, sorted, on one comma-separated line.
    std::vector<std::string> names;
    for (const PassInfo& info : PassRegistry::Builtin().passes()) names.push_back(info.name);
    std::sort(names.begin(), names.end());
    std::cout << absl::StrJoin(names, ",") << "\n";
    return kExitOk;
  }
  if (options.input.empty()) {
    std::cerr << "error: opt needs a FILE (or --list-passes)\n";
    return kExitBadInput;
  }
  if (options.passes.empty() == options.pipeline.empty()) {
    std::cerr << "error: give exactly one of --passes and --pipeline\n";
    return kExitBadInput;
  }
  const PassTarget target = options.for_xla ? PassTarget::kXla : PassTarget::kHlogym;
  auto pass = options.pipeline.empty() ? CreatePassList(options.passes, target)
                                       : CreatePipeline(options.pipeline, target);
  if (!pass.ok()) return ReportError(pass.status());
  if (options.explain) {
    Explain(**pass, 0);
    for (const PipelineInfo& info : BuiltinPipelines()) {
      if (info.name != options.pipeline || info.missing_passes.empty()) continue;
      std::cerr << "missing (XLA runs these; hlogym does not implement them yet):\n";
      for (const std::string& missing : info.missing_passes) std::cerr << "  " << missing << "\n";
    }
  }
  const Clock::time_point load_start = Clock::now();
  auto module = LoadModule(options.input);
  if (!module.ok()) return ReportError(module.status());
  // As XLA verifies a module before its passes: a pass may rely on shapes
  // that check.
  if (absl::Status verified = VerifyModule(**module); !verified.ok()) {
    return ReportError(
        absl::InvalidArgumentError(absl::StrCat(options.input, ": error: ", verified.message())));
  }
  const double load_ms = MillisecondsSince(load_start);
  if (options.pipeline == kDefaultPipeline || options.pipeline == kExactPipeline) {
    if (std::string caveat = DefaultPipelineCaveat(**module); !caveat.empty()) {
      std::cerr << "warning: " << options.input << ": " << caveat << "\n";
    }
  }
  const int64_t instructions = (*module)->instruction_count();
  std::optional<PassTimer> timer;
  if (options.time_passes || options.trace_passes || !options.dump_to.empty()) timer.emplace();
  absl::Status dumped = absl::OkStatus();
  if (!options.dump_to.empty()) {
    std::error_code error;
    std::filesystem::create_directories(options.dump_to, error);
    if (error) {
      return ReportError(absl::InvalidArgumentError(
          absl::StrCat("--dump-to ", options.dump_to, ": ", error.message())));
    }
    // Numbered as the passes changed the module, as XLA numbers its dumps.
    auto dump = [&options, &dumped, next = 0](std::string_view pass, const Module& module) mutable {
      if (!dumped.ok()) return;
      const std::string name = absl::StrFormat("%04d.after_%s.hlo", next++, pass);
      dumped = WriteTextFileAtomically((std::filesystem::path(options.dump_to) / name).string(),
                                       PrintModule(module));
    };
    dump("start", **module);
    timer->set_after_change(dump);
  }
  const Clock::time_point run_start = Clock::now();
  auto changed =
      options.verify_each ? RunVerifyingEach(**pass, **module) : RunPass(**pass, **module);
  if (!changed.ok()) return ReportError(changed.status());
  if (!dumped.ok()) return ReportError(dumped);
  const double run_ms = MillisecondsSince(run_start);
  const Clock::time_point write_start = Clock::now();
  absl::Status written = WriteTextFileAtomically(options.output, PrintModule(**module));
  if (!written.ok()) return ReportError(written);
  if (options.trace_passes) PrintPassTrace(*timer, instructions);
  if (options.time_passes) {
    PrintPassTimes(*timer, instructions, load_ms, run_ms, MillisecondsSince(write_start));
  }
  return kExitOk;
}

struct FuzzOptions {
  std::vector<std::string> modules;
  int64_t max_ops = 1500;
  std::string out;
  bool json = false;
  PassFuzzOptions fuzz;
};

// Smoke modules and corpus modules of at most max_ops instructions.
absl::StatusOr<std::vector<std::string>> DefaultFuzzModules(int64_t max_ops) {
  HLOGYM_ASSIGN(smoke, ExpandBenchmarkLocs({"datasets/smoke"}));
  std::vector<std::string> modules = smoke;
  for (const std::string& name : CorpusBenchmarkNames()) {
    HLOGYM_ASSIGN(benchmark, LoadBenchmark(name));
    if (benchmark.initial->op_count() <= max_ops) modules.push_back(name);
  }
  return modules;
}

nlohmann::json FailureJson(const PassFuzzFailure& failure) {
  return {{"module", failure.module},
          {"path", failure.path},
          {"sequence", failure.sequence_index},
          {"kind", failure.kind},
          {"message", failure.message},
          {"passes", failure.passes},
          {"drawn", failure.drawn}};
}

// DIR/report.json, and per failure DIR/failure-K/{module.hlo, passes.txt,
// failure.json}: the input module and the minimal sequence that fails.
absl::Status WriteReproducers(const std::string& dir, const PassFuzzReport& report,
                              const nlohmann::json& summary) {
  std::error_code created;
  std::filesystem::create_directories(dir, created);
  if (created) return absl::InvalidArgumentError(absl::StrCat(dir, ": ", created.message()));
  for (size_t k = 0; k < report.failures.size(); ++k) {
    const PassFuzzFailure& failure = report.failures[k];
    const std::filesystem::path folder = std::filesystem::path(dir) / absl::StrCat("failure-", k);
    std::error_code error;
    std::filesystem::create_directories(folder, error);
    if (error) return absl::InternalError(absl::StrCat(folder.string(), ": ", error.message()));
    HLOGYM_ASSIGN(benchmark, LoadBenchmark(failure.module));
    for (const auto& [file, contents] :
         {std::pair<std::string, std::string>{"module.hlo",
                                              PrintModule(benchmark.initial->module())},
          {"passes.txt", absl::StrJoin(failure.passes, ",") + "\n"},
          {"failure.json", FailureJson(failure).dump(2) + "\n"}}) {
      HLOGYM_RETURN_IF_ERROR(WriteTextFileAtomically((folder / file).string(), contents));
    }
  }
  return WriteTextFileAtomically((std::filesystem::path(dir) / "report.json").string(),
                                 summary.dump(2) + "\n");
}

int RunFuzzPasses(const FuzzOptions& options) {
  absl::StatusOr<std::vector<std::string>> modules = options.modules.empty()
                                                         ? DefaultFuzzModules(options.max_ops)
                                                         : ExpandBenchmarkLocs(options.modules);
  if (!modules.ok()) return ReportError(modules.status());
  absl::StatusOr<PassFuzzReport> report =
      FuzzPasses(*modules, options.fuzz, [&](const PassFuzzReport& r) {
        if (r.sequences % 1000 == 0) {
          std::cerr << "fuzz-passes: " << r.sequences << " sequences, " << r.pass_runs
                    << " pass runs, " << r.failures.size() << " failing, " << r.seconds << " s\n";
        }
      });
  if (!report.ok()) return ReportError(report.status());
  nlohmann::json failures = nlohmann::json::array();
  for (const PassFuzzFailure& failure : report->failures) failures.push_back(FailureJson(failure));
  nlohmann::json skipped = nlohmann::json::array();
  for (const SkippedModule& module : report->skipped_modules) {
    skipped.push_back({{"module", module.module}, {"reason", module.reason}});
  }
  nlohmann::json summary = {{"modules", report->modules},
                            {"skipped_modules", skipped},
                            {"sequences", report->sequences},
                            {"seed", options.fuzz.seed},
                            {"pass_runs", report->pass_runs},
                            {"changed_runs", report->changed_runs},
                            {"equivalence_checks", report->equivalence_checks},
                            {"not_judged", report->not_judged},
                            {"skipped_runs", report->skipped_runs},
                            {"vacuous_modules", report->vacuous_modules},
                            {"seconds", report->seconds},
                            {"failures", failures}};
  if (!options.out.empty()) {
    if (absl::Status s = WriteReproducers(options.out, *report, summary); !s.ok()) {
      return ReportError(s);
    }
  }
  if (options.json) {
    std::cout << summary.dump(2) << "\n";
  } else {
    std::cout << report->sequences << " (module, sequence) checks over " << report->modules
              << " modules: " << report->pass_runs << " pass runs, " << report->changed_runs
              << " changed the module and were compared (" << report->not_judged << " not judged), "
              << report->skipped_runs
              << " skipped (precision-changing passes on low-precision modules), "
              << report->failures.size() << " failing, " << report->seconds << " s\n";
    for (const SkippedModule& module : report->skipped_modules) {
      std::cout << "SKIPPED " << module.module << ": " << module.reason << "\n";
    }
    for (const PassFuzzFailure& failure : report->failures) {
      std::cout << "FAIL " << failure.kind << ": " << failure.module << " (sequence "
                << failure.sequence_index << "): " << failure.message
                << "\n  reproduce: hlogym opt " << failure.path
                << " --verify-each --passes=" << absl::StrJoin(failure.passes, ",") << "\n";
    }
  }
  return report->failures.empty() ? kExitOk : kExitFuzzFailures;
}

}  // namespace

void RegisterPassCommands(CLI::App& app) {
  auto list_json = std::make_shared<bool>(false);
  CLI::App* list = app.add_subcommand("list-passes", "Every registered pass by its XLA name");
  list->add_flag("--json", *list_json, "Print JSON");
  SetAction(list, [list_json] { return RunListPasses(*list_json); });

  auto opt_options = std::make_shared<OptOptions>();
  CLI::App* opt = app.add_subcommand("opt", "Run passes on a module, like XLA's hlo-opt");
  opt->add_option("file", opt_options->input, "HLO text (.hlo/.txt, .gz, .zst, or -)");
  opt->add_option("--passes", opt_options->passes, "Comma-separated pass names");
  opt->add_option("--pipeline", opt_options->pipeline, "A named pipeline, e.g. xla-cpu-default");
  opt->add_option("-o,--output", opt_options->output, "Output file, or - for stdout (default)");
  opt->add_flag("--verify-each", opt_options->verify_each, "Verify the module after every pass");
  opt->add_flag("--for-xla", opt_options->for_xla,
                "The output goes to XLA's compile: leave to XLA the rewrites XLA:CPU makes only "
                "after its own convolution canonicalization (algsimp's operand swap), which "
                "XLA would otherwise undo with transposes and copies");
  opt->add_flag("--explain", opt_options->explain,
                "Print the passes the pipeline runs and those it lacks (to stderr)");
  opt->add_flag("--time-passes", opt_options->time_passes,
                "Print the time of loading, of the passes (each one, slowest first) and of "
                "writing (to stderr)");
  opt->add_flag("--trace-passes", opt_options->trace_passes,
                "Print every pass that changed the module, in order, with the op count after it "
                "(to stderr): the trajectory a module's XLA reference lists, to find where "
                "hlogym's pipeline and XLA's part");
  opt->add_option("--dump-to", opt_options->dump_to,
                  "Write the module at the start and after every pass that changed it to DIR "
                  "(0000.after_start.hlo, 0001.after_PASS.hlo, ...), to compare with XLA's "
                  "--xla_dump_to pass by pass");
  opt->add_flag("--list-passes", opt_options->list_passes,
                "Print every pass name, sorted and comma-separated (as hlo-opt does), and exit");
  SetAction(opt, [opt_options] { return RunOpt(*opt_options); });

  auto fuzz_options = std::make_shared<FuzzOptions>();
  CLI::App* fuzz = app.add_subcommand(
      "fuzz-passes",
      "Differential fuzzing: random pass sequences on modules, each pass checked (success, "
      "changed flag, verifier, same results); failing sequences minimized.\n"
      "Exit status: 0 no failure, 3 failures found, 2 bad input.");
  fuzz->add_option("modules", fuzz_options->modules,
                   "Benchmark specs, suites or folders (default: the smoke modules and the corpus "
                   "modules of at most --max-ops instructions)");
  fuzz->add_option("--sequences", fuzz_options->fuzz.sequences,
                   "(module, sequence) checks to run (default 1000)");
  fuzz->add_option("--seed", fuzz_options->fuzz.seed, "Seed of the draws (default 0)");
  fuzz->add_option("--min-length", fuzz_options->fuzz.min_length, "Shortest sequence (default 1)");
  fuzz->add_option("--max-length", fuzz_options->fuzz.max_length, "Longest sequence (default 20)");
  fuzz->add_option("--max-ops", fuzz_options->max_ops,
                   "Largest default corpus module, in instructions (default 1500)");
  fuzz->add_option("--time-limit", fuzz_options->fuzz.time_limit_seconds,
                   "Start no sequence after this many seconds (default: none)");
  fuzz->add_option("--out", fuzz_options->out,
                   "Write DIR/report.json and a reproducer per failure (DIR/failure-K/)");
  fuzz->add_flag("--json", fuzz_options->json, "Print the report as JSON");
  SetAction(fuzz, [fuzz_options] { return RunFuzzPasses(*fuzz_options); });
}

}  // namespace hlogym::cli
