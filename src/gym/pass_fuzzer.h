// Differential fuzzing of the passes: random (module, pass sequence) pairs,
// checked after every pass the way LLVM and CompilerGym test their
// optimizers. After each pass:
//  - the pass succeeds (a pass error on a module that verified is a bug);
//  - it reports "changed" exactly when the printed module changed;
//  - it prints the same module as a run with change tracking off
//    (passes/change_tracking.h: a tracked pass skips what it saw unchanged before);
//  - the module verifies;
//  - when it changed, it computes what the input module did
//    (EquivalenceReference: seeded inputs, the default tolerances and f64
//    second look; a comparison that cannot judge is counted, not failed).
// Passes that change numerics by design (ChangesNumericPrecision) are skipped
// on modules that compute in bf16/f16/f8, where XLA allows that change.
// A failing sequence is shortened to a minimal one that still fails the same
// way (greedy one-at-a-time removal), so the reproducer is
//   hlogym opt MODULE --passes=<minimal sequence> --verify-each
#ifndef HLOGYM_GYM_PASS_FUZZER_H_
#define HLOGYM_GYM_PASS_FUZZER_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "passes/registry.h"

namespace hlogym {

struct PassFuzzOptions {
  uint64_t seed = 0;
  int64_t sequences = 1000;
  int min_length = 1;
  int max_length = 20;
  // Stop starting sequences after this many seconds (0: no limit).
  double time_limit_seconds = 0;
  // Shorten failing sequences before reporting them.
  bool minimize = true;
  // The passes drawn from (null: every built-in pass).
  const PassRegistry* registry = nullptr;
};

struct PassFuzzFailure {
  std::string module;          // the benchmark spec
  std::string path;            // the file it was loaded from
  int64_t sequence_index = 0;  // rerun alone with the same seed
  std::string kind;            // "pass error", "changed flag", "tracked run",
                               // "verifier", "not equivalent", "evaluation"
  std::string message;
  std::vector<std::string> passes;  // minimal failing sequence (last pass fails)
  std::vector<std::string> drawn;   // the sequence as drawn, up to the failure
};

// A module left out of the fuzzing, and why: it does not load or verify, or
// the evaluator cannot run it (so no pass could be checked on it).
struct SkippedModule {
  std::string module;  // the benchmark spec
  std::string reason;
};

struct PassFuzzReport {
  int64_t modules = 0;    // modules fuzzed (not counting the skipped ones)
  int64_t sequences = 0;  // (module, sequence) checks completed
  int64_t pass_runs = 0;
  int64_t changed_runs = 0;                  // pass runs that changed the module
  int64_t equivalence_checks = 0;            // = changed runs that were compared
  int64_t not_judged = 0;                    // comparisons that could not judge
  int64_t skipped_runs = 0;                  // precision-changing passes on low-precision modules
  std::vector<std::string> vacuous_modules;  // every comparison there is not judged
  std::vector<SkippedModule> skipped_modules;
  std::vector<PassFuzzFailure> failures;
  double seconds = 0;
};

// Fuzzes the registry's passes over `modules` (benchmark specs, see
// gym/benchmark.h). A module that does not load or verify, or that the
// evaluator cannot run, is skipped with its reason (a folder of real dumps
// holds such modules) and the rest are fuzzed; errors on bad options and when
// no module is left. `progress` (optional) is called after each sequence.
absl::StatusOr<PassFuzzReport> FuzzPasses(
    const std::vector<std::string>& modules, const PassFuzzOptions& options,
    const std::function<void(const PassFuzzReport&)>& progress = nullptr);

}  // namespace hlogym

#endif  // HLOGYM_GYM_PASS_FUZZER_H_
