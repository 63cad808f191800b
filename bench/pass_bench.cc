// Time of one run of every registered pass on a fresh clone of the largest
// GPT-2 corpus module (by op count; HLOGYM_PASS_BENCH_FILE names another).
// Only RunPass is timed (the pass's MayChange pre-check, then Run unless it said
// no; the clone is made and freed with the timer paused). Counters:
// us_per_1k_instr, the time per 1,000 instructions of the input module;
// changed; skipped (MayChange said there is nothing to do).
//
//   build/bench/hlogym_bench --benchmark_filter='^BM_Pass/'
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>

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

const PassBenchInput& LargestGpt2() {
  static PassBenchInput* input = [] {
    auto* in = new PassBenchInput;
    std::vector<std::string> candidates;
    if (const char* env = std::getenv("HLOGYM_PASS_BENCH_FILE")) {
      candidates.push_back(env);
    } else {
      std::error_code error;
      for (const auto& entry : std::filesystem::directory_iterator(
               HLOGYM_SOURCE_DIR "/datasets/corpus/gpt2", error)) {
        std::string path = entry.path().string();
        if (path.ends_with(".hlo.zst") || path.ends_with(".hlo")) candidates.push_back(path);
      }
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
    std::cerr << "pass_bench input: " << in->path << " (" << in->instructions
              << " instructions)\n";
    return in;
  }();
  return *input;
}

void BM_Pass(benchmark::State& state, std::string pass_name) {
  const PassBenchInput& input = LargestGpt2();
  auto pass = PassRegistry::Builtin().Create(pass_name);
  if (!pass.ok()) {
    state.SkipWithError(std::string(pass.status().message()).c_str());
    return;
  }
  bool changed = false;
  for (auto _ : state) {
    state.PauseTiming();
    std::unique_ptr<Module> module = input.module->Clone();
    state.ResumeTiming();
    auto result = RunPass(**pass, *module);
    if (!result.ok()) {
      state.SkipWithError(std::string(result.status().message()).c_str());
      return;
    }
    changed = *result;
    state.PauseTiming();
    module.reset();  // destruction is not timed either
    state.ResumeTiming();
  }
  state.counters["instructions"] = static_cast<double>(input.instructions);
  state.counters["changed"] = changed ? 1 : 0;
  state.counters["skipped"] = (*pass)->MayChange(*input.module) ? 0 : 1;
  // (seconds per run) / (instructions / 1e9) = microseconds per 1,000 instructions.
  state.counters["us_per_1k_instr"] = benchmark::Counter(
      static_cast<double>(input.instructions) / 1e9,
      benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}

const bool registered = [] {
  for (const PassInfo& info : PassRegistry::Builtin().passes()) {
    benchmark::RegisterBenchmark(("BM_Pass/" + info.name).c_str(), BM_Pass, info.name)
        ->Unit(benchmark::kMicrosecond);
  }
  return true;
}();

}  // namespace
}  // namespace hlogym
