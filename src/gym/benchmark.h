// Benchmarks: where the gym's initial modules come from.
//
// A benchmark spec is resolved, in order, as
//   1. a file path (absolute, or relative to the working directory, or to the
//      data root, text/module_locator.h's DataRoot());
//   2. a corpus module name from datasets/corpus/manifest.json (a plain name
//      or "corpus/NAME"), when the manifest exists;
//   3. a smoke module "NAME" or "smoke/NAME" for datasets/smoke/NAME.hlo.
//   4. anything text/module_locator.h finds ("<family>/NAME", and datasets/
//      found from the working directory or the executable).
// A leading "benchmark://" is ignored. Loaded benchmarks are parsed and
// verified once per process and shared (thread-safe).
#ifndef HLOGYM_GYM_BENCHMARK_H_
#define HLOGYM_GYM_BENCHMARK_H_

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "gym/module_state.h"
#include "text/module_locator.h"  // DataRoot()

namespace hlogym {

struct Benchmark {
  std::string spec;  // as given (without "benchmark://")
  std::string path;  // the file it was loaded from
  StatePtr initial;
};

// The file a spec names, or NotFound explaining what was tried.
absl::StatusOr<std::string> ResolveBenchmarkPath(std::string_view spec);

// Resolves, parses and verifies (cached per resolved path).
absl::StatusOr<Benchmark> LoadBenchmark(std::string_view spec);

// The paper's benchmark_locs: each entry is a benchmark spec, a suite file
// (*.txt: one spec per line, '#' comments, paths relative to the data root),
// or a directory (every *.hlo, *.hlo.gz, *.hlo.zst in it that is not an
// XLA-optimized *.optimized.* file, sorted). Returns the specs, in order.
absl::StatusOr<std::vector<std::string>> ExpandBenchmarkLocs(
    const std::vector<std::string>& locs);

// Module names in the corpus manifest (empty when there is no corpus), and
// the names in a given suite of the manifest ("gpt2", "diverse"; empty = all),
// optionally restricted to a split: "train" or "test" (by configuration: no
// test architecture is in train; empty = both), or the leave-families-out
// protocol's two sides: "heldout" (every module of the manifest's
// heldout_families, never trained on) and "train-seen" (the train split of
// the other families, what the shipped agents train on).
inline constexpr std::string_view kHeldoutSplit = "heldout";
inline constexpr std::string_view kTrainSeenSplit = "train-seen";
std::vector<std::string> CorpusBenchmarkNames(std::string_view suite = "",
                                              std::string_view split = "");

}  // namespace hlogym

#endif  // HLOGYM_GYM_BENCHMARK_H_
