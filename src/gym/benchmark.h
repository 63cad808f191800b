// Benchmarks: where the gym's initial modules come from.
//
// A benchmark spec is resolved, in order, as
//   1. a file path (absolute, or relative to the working directory, or to the
//      data root, text/module_locator.h's DataRoot());
//   2. a module of a dataset folder with a manifest ("DIR/NAME",
//      "DIR/FAMILY/NAME"; text/module_locator.h's FindModuleInDatasetFolder);
//   3. a corpus module of text/corpus.h's Corpus::Default() ("NAME",
//      "corpus/NAME" or "FAMILY/NAME"), when the manifest exists;
//   4. a smoke module "NAME" or "smoke/NAME" for datasets/smoke/NAME.hlo, or a
//      shipped dataset's module "<dataset>/NAME" ("pytorch/NAME");
//   5. anything text/module_locator.h finds (the same names in the datasets/
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
#include "text/corpus.h"          // the corpus, CorpusBenchmarkNames
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
absl::StatusOr<std::vector<std::string>> ExpandBenchmarkLocs(const std::vector<std::string>& locs);

}  // namespace hlogym

#endif  // HLOGYM_GYM_BENCHMARK_H_
