// run and equiv: evaluate modules on seeded random inputs.
//   hlogym run FILE [--seed N]          prints a digest of the outputs
//       [--save-inputs DIR] [--save-outputs DIR] [--io DIR] [--inputs DIR]
//     writes the arguments / output leaves as NumPy .npy files (eval/npy_io.h)
//     with a manifest (inputs.json / outputs.json), or reads the arguments
//     back from a directory instead of drawing them from the seed.
//   hlogym equiv A B [--seed N] [--trials K] [--rtol R] [--atol A]
// equiv exits 0 when A and B compute the same outputs, 3 when they differ,
// 4 when the comparison cannot judge them (the original misses its own f64
// reference on the inputs),
// 2 for bad input (unreadable module), 1 when a module cannot be evaluated.
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "cli/commands.h"
#include "eval/equivalence.h"
#include "eval/evaluator.h"
#include "eval/npy_io.h"
#include "gym/environment.h"
#include "hlo/computation.h"
#include "hlo/query.h"
#include "hlo/status_macros.h"
#include "nlohmann/json.hpp"
#include "passes/expanders/dynamic_padder.h"
#include "passes/sharding/spmd_partitioner.h"
#include "text/file_io.h"

namespace hlogym::cli {
namespace {

inline constexpr int kExitDifferent = 3;
// The comparison cannot tell (EquivalenceResult::judged): the original's own
// outputs miss its f64 reference, or are vacuous, on these inputs.
inline constexpr int kExitNotJudged = 4;

// --max-memory GIB (0: the evaluator's default, half the machine's memory).
int64_t MaxBytes(double gib) {
  return gib > 0 ? static_cast<int64_t>(gib * (int64_t{1} << 30)) : DefaultEvaluatorMaxBytes();
}

void AddMaxMemoryOption(CLI::App* command, double& gib) {
  command->add_option("--max-memory", gib,
                      "GiB of array data the evaluator may hold; a module needing more fails "
                      "with exit 2 naming the instruction (default: half the machine's memory)");
}

struct RunOptions {
  std::string input;
  uint64_t seed = 0;
  bool positive = false;
  std::string save_inputs;   // directory for arg<P>[.i...].npy + inputs.json
  std::string save_outputs;  // directory for out[.i...].npy + outputs.json
  std::string io;            // both of the above into one directory
  std::string inputs;        // read the arguments from here instead
  double max_memory_gib = 0;
};

nlohmann::json LeafJson(const NpyLeaf& leaf) {
  return nlohmann::json{{"file", leaf.file},
                        {"tuple_index", leaf.tuple_index},
                        {"type", std::string(PrimitiveTypeName(leaf.shape.element_type()))},
                        {"shape", leaf.shape.dimensions()},
                        {"dtype", leaf.descr}};
}

// The manifest beside the .npy files: what ran, and per leaf its real
// element type (bf16 is saved as "<u2" raw bits), shape and tuple path.
nlohmann::json ManifestHeader(const RunOptions& options, const Module& module,
                              std::string_view kind) {
  nlohmann::json manifest{
      {"kind", std::string(kind)}, {"module", std::string(module.name())}, {"file", options.input}};
  if (options.inputs.empty()) {
    manifest["seed"] = options.seed;
    manifest["positive"] = options.positive;
  } else {
    manifest["inputs_from"] = options.inputs;
  }
  return manifest;
}

absl::Status WriteManifest(const std::string& dir, std::string_view name,
                           const nlohmann::json& manifest) {
  return WriteTextFileAtomically((std::filesystem::path(dir) / std::string(name)).string(),
                                 manifest.dump(2) + "\n");
}

absl::Status SaveInputs(const RunOptions& options, const std::string& dir, const Module& module,
                        const std::vector<Literal>& args) {
  nlohmann::json manifest = ManifestHeader(options, module, "inputs");
  nlohmann::json parameters = nlohmann::json::array();
  for (size_t p = 0; p < args.size(); ++p) {
    HLOGYM_ASSIGN(leaves, SaveLiteralLeaves(dir, absl::StrCat("arg", p), args[p]));
    nlohmann::json leaf_list = nlohmann::json::array();
    for (const NpyLeaf& leaf : leaves) leaf_list.push_back(LeafJson(leaf));
    parameters.push_back(nlohmann::json{{"parameter", p},
                                        {"shape", args[p].shape().ToString(false)},
                                        {"leaves", std::move(leaf_list)}});
  }
  manifest["parameters"] = std::move(parameters);
  return WriteManifest(dir, "inputs.json", manifest);
}

absl::Status SaveOutputs(const RunOptions& options, const std::string& dir, const Module& module,
                         const Literal& result) {
  nlohmann::json manifest = ManifestHeader(options, module, "outputs");
  HLOGYM_ASSIGN(leaves, SaveLiteralLeaves(dir, "out", result));
  nlohmann::json leaf_list = nlohmann::json::array();
  for (const NpyLeaf& leaf : leaves) leaf_list.push_back(LeafJson(leaf));
  manifest["shape"] = result.shape().ToString(false);
  manifest["leaves"] = std::move(leaf_list);
  return WriteManifest(dir, "outputs.json", manifest);
}

int RunRun(const RunOptions& options) {
  auto module = LoadModule(options.input);
  if (!module.ok()) return ReportError(module.status());
  std::vector<Literal> args;
  if (!options.inputs.empty()) {
    const Computation* entry = (*module)->entry_computation();
    if (entry == nullptr) {
      std::cerr << options.input << ": error: module has no entry computation\n";
      return kExitBadInput;
    }
    for (int64_t p = 0; p < entry->num_parameters(); ++p) {
      auto arg = LoadLiteralLeaves(options.inputs, absl::StrCat("arg", p),
                                   entry->parameter_instruction(p)->shape());
      if (!arg.ok()) {
        std::cerr << "error: parameter " << p << ": " << arg.status().message() << "\n";
        return kExitBadInput;
      }
      args.push_back(std::move(*arg));
    }
  } else {
    RandomInputOptions inputs;
    inputs.positive_floats = options.positive;
    inputs.max_bytes = MaxBytes(options.max_memory_gib);
    auto drawn = MakeRandomArguments(**module, options.seed, inputs);
    if (!drawn.ok()) {
      return ReportError(
          absl::Status(drawn.status().code(),
                       absl::StrCat(options.input, ": error: ", drawn.status().message())));
    }
    args = *std::move(drawn);
  }
  for (const std::string& dir : {options.save_inputs, options.io}) {
    if (dir.empty()) continue;
    if (absl::Status s = SaveInputs(options, dir, **module, args); !s.ok()) {
      std::cerr << "error: saving inputs: " << s.message() << "\n";
      return kExitInternal;
    }
  }
  EvaluatorOptions evaluator;
  evaluator.max_bytes = MaxBytes(options.max_memory_gib);
  // The evaluator computes static shapes: a dynamic module runs padded, as XLA pads it.
  if (HasDynamicShapes(**module)) {
    absl::StatusOr<std::unique_ptr<Module>> padded = PaddedToStatic(**module);
    if (!padded.ok()) {
      return ReportError(absl::Status(
          padded.status().code(),
          absl::StrCat(options.input, ": error: dynamic dimensions the evaluator cannot pad: ",
                       padded.status().message())));
    }
    *module = *std::move(padded);
  }
  auto result = Evaluate(**module, args, evaluator);
  if (!result.ok()) {
    return ReportError(
        absl::Status(result.status().code(),
                     absl::StrCat(options.input, ": error: ", result.status().message())));
  }
  for (const std::string& dir : {options.save_outputs, options.io}) {
    if (dir.empty()) continue;
    if (absl::Status s = SaveOutputs(options, dir, **module, *result); !s.ok()) {
      std::cerr << "error: saving outputs: " << s.message() << "\n";
      return kExitInternal;
    }
  }
  std::cout << DigestLiteral(*result);
  return kExitOk;
}

struct EquivOptions {
  std::string a, b;
  uint64_t seed = 0;
  int trials = 1;
  double rtol = 1e-3;
  double atol = 1e-5;
  bool positive = false;
  double max_memory_gib = 0;
  int64_t max_instructions = EquivalenceOptions{}.max_instructions;
  bool split = false;
};

// equiv A [B] --split: B (spmd-partitioning's split of A where not given), every
// partition's copy run on its part of A's inputs, against A run whole.
int RunEquivSplit(const EquivOptions& options, const Module& module) {
  std::unique_ptr<Module> split;
  if (!options.b.empty()) {
    auto b = LoadModule(options.b);
    if (!b.ok()) return ReportError(b.status());
    split = *std::move(b);
  }
  const absl::Status same = CheckSplitAgainstWhole(module, split.get(), options.seed);
  if (same.ok()) {
    std::cout << "equivalent: the split for " << NumPartitions(module)
              << " partitions computes what the module computes whole\n";
    return kExitOk;
  }
  if (absl::IsUnimplemented(same)) {
    std::cout << "NOT JUDGED: " << same.message() << "\n";
    return kExitNotJudged;
  }
  if (absl::IsFailedPrecondition(same)) {
    std::cout << "NOT equivalent: " << same.message() << "\n";
    return kExitDifferent;
  }
  return ReportError(same);
}

int RunEquiv(const EquivOptions& options) {
  auto a = LoadModule(options.a);
  if (!a.ok()) return ReportError(a.status());
  if (options.split) return RunEquivSplit(options, **a);
  if (options.b.empty()) {
    std::cerr << "error: equiv needs a second module (or --split)\n";
    return kExitBadInput;
  }
  auto b = LoadModule(options.b);
  if (!b.ok()) return ReportError(b.status());
  EquivalenceOptions eq = WithPassHooks({});
  eq.seed = options.seed;
  eq.trials = options.trials;
  eq.rtol = options.rtol;
  eq.atol = options.atol;
  eq.inputs.positive_floats = options.positive;
  eq.inputs.max_bytes = eq.evaluator.max_bytes = MaxBytes(options.max_memory_gib);
  eq.max_instructions = options.max_instructions;
  // A module compiled for several partitions against its split: per partition.
  if (std::unique_ptr<Module> partitioned = PartitionedToMatch(**a, **b)) {
    std::cerr << "equiv: " << options.a << " is compiled for " << NumPartitions(**a)
              << " partitions: compared with " << options.b << " per partition\n";
    *a = std::move(partitioned);
  }
  auto result = CheckEquivalent(**a, **b, eq);
  if (!result.ok()) return ReportError(result.status());
  if (!result->judged) {
    std::cout << "NOT JUDGED: " << result->message << "\n";
    return kExitNotJudged;
  }
  if (result->equivalent) {
    if (result->by_f64_reference) {
      std::cout << "equivalent by the f64 reference (the outputs differ from the original's, "
                   "but the original computed in f64 agrees with them)\n";
      return kExitOk;
    }
    std::cout << "equivalent (" << eq.trials << " trial(s), max relative error "
              << result->max_relative_error << ")\n";
    if (!result->ties.empty()) std::cout << "  up to ties: " << result->ties << "\n";
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
  run->add_flag("--positive", run_options->positive,
                "Float inputs in [0.5, 1.5] instead of [-1, 1]");
  run->add_option("--save-inputs", run_options->save_inputs,
                  "Write each argument leaf as DIR/arg<P>[.i...].npy, with DIR/inputs.json "
                  "(real element types: bf16 is saved as <u2 bits)");
  run->add_option("--save-outputs", run_options->save_outputs,
                  "Write each output leaf as DIR/out[.i...].npy, with DIR/outputs.json");
  run->add_option("--io", run_options->io, "Same as --save-inputs DIR --save-outputs DIR");
  run->add_option("--inputs", run_options->inputs,
                  "Read the arguments from DIR/arg<P>[.i...].npy instead of drawing them "
                  "from --seed");
  AddMaxMemoryOption(run, run_options->max_memory_gib);
  SetAction(run, [run_options] { return RunRun(*run_options); });

  auto equiv_options = std::make_shared<EquivOptions>();
  CLI::App* equiv = app.add_subcommand(
      "equiv",
      "Check that two modules compute the same outputs on seeded random inputs.\n"
      "Exit status: 0 equivalent, 3 different, 4 not judged, 2 bad input (or over --max-memory),\n"
      "1 evaluation failure.");
  equiv->add_option("a", equiv_options->a, "First module")->required();
  equiv->add_option("b", equiv_options->b,
                    "Second module (with --split: a split of the first, by default "
                    "spmd-partitioning's)");
  equiv->add_flag("--split", equiv_options->split,
                  "Check a split of the first module (compiled for several partitions), each "
                  "partition's copy run on its part of the inputs, against it run whole");
  equiv->add_option("--seed", equiv_options->seed, "Seed of the first trial (default 0)");
  equiv->add_option("--trials", equiv_options->trials, "Number of input sets (default 1)");
  equiv->add_option("--rtol", equiv_options->rtol, "Relative tolerance for floats (default 1e-3)");
  equiv->add_option("--atol", equiv_options->atol, "Absolute tolerance for floats (default 1e-5)");
  equiv->add_flag("--positive", equiv_options->positive, "Float inputs in [0.5, 1.5]");
  equiv->add_option("--max-instructions", equiv_options->max_instructions,
                    "Most instructions one evaluation may run, loop iterations counted; a module "
                    "that needs more is not judged (0: no limit; default 50000000)");
  AddMaxMemoryOption(equiv, equiv_options->max_memory_gib);
  SetAction(equiv, [equiv_options] { return RunEquiv(*equiv_options); });
}

}  // namespace hlogym::cli
