// Time of one run of every registered pass.
//
// BM_Pass/<pass>: on a fresh clone of the largest GPT-2 corpus module (by op count;
// HLOGYM_PASS_BENCH_FILE names another).
//   build/bench/hlogym_bench --benchmark_filter='^BM_Pass/'
//
// BM_PassWithWork/<pass> and BM_PassNothingToDo/<pass>: what a pass costs when it has work
// against when it has none, on the same module. The module with work is the largest corpus or
// smoke module the pass changes; the one with nothing to do is the pass's own output on it, run
// until the pass no longer changes it, which keeps the record of the pass's last run (a tracked
// pass skips what did not change since: passes/change_tracking.h). BM_PassNothingToDoUnseen/<pass>
// runs on the same output with the records forgotten, as on a module the pass never saw.
// bench/pass_nothing_to_do.py prints all three as a table.
//
// Only RunPass is timed (the pass's MayChange pre-check, then Run unless it said
// no; clones are made and freed with the timer paused). Counters:
// us_per_1k_instr, the time per 1,000 instructions of the input module;
// changed; skipped (MayChange said there is nothing to do).
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "benchmark/benchmark.h"
#include "passes/registry.h"
#include "text/file_io.h"

namespace hlogym {
namespace {

struct PassBenchInput {
  std::string path;
  std::unique_ptr<Module> module;
  int64_t instructions = 0;
};

// The HLO files under `dir` of the source tree, its subfolders included, sorted; XLA's
// *.optimized.* outputs are left out.
std::vector<std::string> HloFilesUnder(const std::string& dir) {
  std::vector<std::string> paths;
  std::error_code error;
  for (const auto& entry :
       std::filesystem::recursive_directory_iterator(HLOGYM_SOURCE_DIR + dir, error)) {
    const std::string path = entry.path().string();
    const bool hlo =
        path.ends_with(".hlo") || path.ends_with(".hlo.zst") || path.ends_with(".hlo.gz");
    if (hlo && path.find(".optimized.") == std::string::npos) paths.push_back(path);
  }
  std::sort(paths.begin(), paths.end());  // the directory's order is the file system's
  return paths;
}

const PassBenchInput& LargestGpt2() {
  static PassBenchInput* input = [] {
    auto* in = new PassBenchInput;
    std::vector<std::string> candidates;
    if (const char* env = std::getenv("HLOGYM_PASS_BENCH_FILE")) {
      candidates.push_back(env);
    } else {
      candidates = HloFilesUnder("/datasets/corpus/gpt2");
    }
    for (const std::string& path : candidates) {
      auto module = LoadModule(path);
      if (!module.ok()) continue;
      int64_t count = (*module)->instruction_count();
      if (count > in->instructions) {
        in->instructions = count;
        in->path = path;
        in->module = std::move(*module);
      }
    }
    if (in->module == nullptr) {
      std::cerr << "no GPT-2 corpus module found for the pass benchmark\n";
      std::exit(2);
    }
    std::cerr << "pass_bench input: " << in->path << " (" << in->instructions << " instructions)\n";
    return in;
  }();
  return *input;
}

// Times RunPass(pass, clone of `module`) per iteration and sets the counters. A run that
// reports no change left the clone as it was (the pass contract), so the next run reuses it: a
// skipped pass takes microseconds, and a fresh clone per run would take most of the benchmark.
// Unless `keep_run_records`, the clone forgets the records of earlier pass runs before each run
// (untimed), so that a tracked pass looks at the whole module every time, as on one it never saw.
void TimePass(benchmark::State& state, Pass& pass, const Module& module,
              bool keep_run_records = false) {
  const int64_t instructions = module.instruction_count();
  bool changed = false;
  std::unique_ptr<Module> clone;
  for (auto _ : state) {
    // (a pass its pre-check skipped leaves no record, and a pause costs about a microsecond)
    if (clone == nullptr || (!keep_run_records && clone->has_pass_runs())) {
      state.PauseTiming();
      if (clone == nullptr) clone = module.Clone();
      if (!keep_run_records) clone->ForgetPassRuns();
      state.ResumeTiming();
    }
    auto result = RunPass(pass, *clone);
    if (!result.ok()) {
      state.SkipWithError(std::string(result.status().message()).c_str());
      return;
    }
    changed = *result;
    if (changed) {
      state.PauseTiming();
      clone.reset();  // destruction is not timed either
      state.ResumeTiming();
    }
  }
  state.counters["instructions"] = static_cast<double>(instructions);
  state.counters["changed"] = changed ? 1 : 0;
  state.counters["skipped"] = pass.MayChange(module) ? 0 : 1;
  // (seconds per run) / (instructions / 1e9) = microseconds per 1,000 instructions.
  state.counters["us_per_1k_instr"] = benchmark::Counter(
      static_cast<double>(instructions) / 1e9,
      benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}

void BM_Pass(benchmark::State& state, std::string pass_name) {
  const PassBenchInput& input = LargestGpt2();
  auto pass = PassRegistry::Builtin().Create(pass_name);
  if (!pass.ok()) {
    state.SkipWithError(std::string(pass.status().message()).c_str());
    return;
  }
  TimePass(state, **pass, *input.module);
}

// Every corpus and smoke module (not XLA's *.optimized.* outputs), largest first.
const std::vector<PassBenchInput>& AllModules() {
  static auto* modules = [] {
    auto* all = new std::vector<PassBenchInput>;
    std::vector<std::string> paths = HloFilesUnder("/datasets/corpus");
    for (const std::string& path : HloFilesUnder("/datasets/smoke")) paths.push_back(path);
    for (const std::string& path : paths) {
      auto module = LoadModule(path);
      if (!module.ok()) continue;
      const int64_t count = (*module)->instruction_count();
      all->push_back({path, std::move(*module), count});
    }
    std::stable_sort(all->begin(), all->end(),
                     [](const auto& a, const auto& b) { return a.instructions > b.instructions; });
    return all;
  }();
  return *modules;
}

// A pass's two inputs: the largest module it changes, and its output after the pass ran on it
// until nothing changed (null when no module gives it work, or it still changed after 9 runs).
struct WorkAndNoWork {
  std::string path;
  const Module* with_work = nullptr;
  std::unique_ptr<Module> nothing_to_do;
  std::string error;
};

const WorkAndNoWork& InputsFor(const std::string& pass_name) {
  static auto* cache = new std::map<std::string, WorkAndNoWork>;
  auto [it, inserted] = cache->try_emplace(pass_name);
  WorkAndNoWork& inputs = it->second;
  if (!inserted) return inputs;
  auto pass = PassRegistry::Builtin().Create(pass_name);
  if (!pass.ok()) {
    inputs.error = std::string(pass.status().message());
    return inputs;
  }
  for (const PassBenchInput& input : AllModules()) {
    std::unique_ptr<Module> module = input.module->Clone();
    auto changed = RunPass(**pass, *module);
    if (!changed.ok() || !*changed) continue;
    inputs.path = input.path;
    inputs.with_work = input.module.get();
    for (int run = 0; run < 8; ++run) {
      changed = RunPass(**pass, *module);
      if (!changed.ok()) {
        inputs.error = std::string(changed.status().message());
        return inputs;
      }
      if (!*changed) {
        inputs.nothing_to_do = std::move(module);
        return inputs;
      }
    }
    inputs.error = "still changes its own output after 9 runs";
    return inputs;
  }
  inputs.error = "changes no corpus or smoke module";
  return inputs;
}

enum class PassInput { kWithWork, kNothingToDo, kNothingToDoUnseen };

void BM_PassOnItsModule(benchmark::State& state, std::string pass_name, PassInput which) {
  const WorkAndNoWork& inputs = InputsFor(pass_name);
  const Module* module =
      which == PassInput::kWithWork ? inputs.with_work : inputs.nothing_to_do.get();
  auto pass = PassRegistry::Builtin().Create(pass_name);
  if (module == nullptr || !pass.ok()) {
    state.SkipWithError(inputs.error.c_str());
    return;
  }
  state.SetLabel(std::filesystem::path(inputs.path).filename().string());
  TimePass(state, **pass, *module, /*keep_run_records=*/which == PassInput::kNothingToDo);
}

const bool registered = [] {
  for (const PassInfo& info : PassRegistry::Builtin().passes()) {
    benchmark::RegisterBenchmark(("BM_Pass/" + info.name).c_str(), BM_Pass, info.name)
        ->Unit(benchmark::kMicrosecond);
    benchmark::RegisterBenchmark(("BM_PassWithWork/" + info.name).c_str(), BM_PassOnItsModule,
                                 info.name, PassInput::kWithWork)
        ->Unit(benchmark::kMicrosecond);
    benchmark::RegisterBenchmark(("BM_PassNothingToDo/" + info.name).c_str(), BM_PassOnItsModule,
                                 info.name, PassInput::kNothingToDo)
        ->Unit(benchmark::kMicrosecond);
    benchmark::RegisterBenchmark(("BM_PassNothingToDoUnseen/" + info.name).c_str(),
                                 BM_PassOnItsModule, info.name, PassInput::kNothingToDoUnseen)
        ->Unit(benchmark::kMicrosecond);
  }
  return true;
}();

}  // namespace
}  // namespace hlogym
