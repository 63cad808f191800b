// run and equiv: evaluate modules on seeded random inputs.
//   hlogym run FILE [--seed N]          prints a digest of the outputs
//   hlogym equiv A B [--seed N] [--trials K] [--rtol R] [--atol A]
// equiv exits 0 when A and B compute the same outputs, 3 when they differ,
// 2 for bad input (unreadable module), 1 when a module cannot be evaluated.
#include <iostream>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "cli/commands.h"
#include "eval/equivalence.h"
#include "eval/evaluator.h"
#include "text/file_io.h"

namespace hlogym::cli {
namespace {

inline constexpr int kExitDifferent = 3;

struct RunOptions {
  std::string input;
  uint64_t seed = 0;
  bool positive = false;
};

int RunRun(const RunOptions& options) {
  auto module = LoadModule(options.input);
  if (!module.ok()) return ReportError(module.status());
  RandomInputOptions inputs;
  inputs.positive_floats = options.positive;
  std::vector<Literal> args = MakeRandomArguments(**module, options.seed, inputs);
  auto result = Evaluate(**module, args);
  if (!result.ok()) {
    std::cerr << options.input << ": error: " << result.status().message() << "\n";
    return kExitInternal;
  }
  std::cout << DigestLiteral(*result);
  return kExitOk;
}

struct EquivOptions {
  std::string a, b;
  uint64_t seed = 0;
  int trials = 1;
  double rtol = 1e-4;
  double atol = 1e-5;
  bool positive = false;
};

int RunEquiv(const EquivOptions& options) {
  auto a = LoadModule(options.a);
  if (!a.ok()) return ReportError(a.status());
  auto b = LoadModule(options.b);
  if (!b.ok()) return ReportError(b.status());
  EquivalenceOptions eq;
  eq.seed = options.seed;
  eq.trials = options.trials;
  eq.rtol = options.rtol;
  eq.atol = options.atol;
  eq.inputs.positive_floats = options.positive;
  auto result = CheckEquivalent(**a, **b, eq);
  if (!result.ok()) {
    std::cerr << "error: " << result.status().message() << "\n";
    return kExitInternal;
  }
  if (result->equivalent) {
    std::cout << "equivalent (" << eq.trials << " trial(s), max relative error "
              << result->max_relative_error << ")\n";
    return kExitOk;
  }
  std::cout << "NOT equivalent";
  if (result->trial >= 0) std::cout << " (trial " << result->trial << ")";
  std::cout << ": " << result->message << "\n";
  return kExitDifferent;
}

}  // namespace

void RegisterEvalCommands(CLI::App& app) {
  auto run_options = std::make_shared<RunOptions>();
  CLI::App* run = app.add_subcommand(
      "run", "Evaluate a module on seeded random inputs and print a digest of the outputs");
  run->add_option("file", run_options->input, "HLO module")->required();
  run->add_option("--seed", run_options->seed, "Seed of the random inputs (default 0)");
  run->add_flag("--positive", run_options->positive, "Float inputs in [0.5, 1.5] instead of [-1, 1]");
  SetAction(run, [run_options] { return RunRun(*run_options); });

  auto equiv_options = std::make_shared<EquivOptions>();
  CLI::App* equiv = app.add_subcommand(
      "equiv",
      "Check that two modules compute the same outputs on seeded random inputs.\n"
      "Exit status: 0 equivalent, 3 different, 2 bad input, 1 evaluation failure.");
  equiv->add_option("a", equiv_options->a, "First module")->required();
  equiv->add_option("b", equiv_options->b, "Second module")->required();
  equiv->add_option("--seed", equiv_options->seed, "Seed of the first trial (default 0)");
  equiv->add_option("--trials", equiv_options->trials, "Number of input sets (default 1)");
  equiv->add_option("--rtol", equiv_options->rtol, "Relative tolerance for floats (default 1e-4)");
  equiv->add_option("--atol", equiv_options->atol, "Absolute tolerance for floats (default 1e-5)");
  equiv->add_flag("--positive", equiv_options->positive, "Float inputs in [0.5, 1.5]");
  SetAction(equiv, [equiv_options] { return RunEquiv(*equiv_options); });
}

}  // namespace hlogym::cli
