// Throughput of parse, print, verify and clone on one module (the largest
// test module unless HLOGYM_BENCH_FILE names another). Reports bytes/s of
// HLO text and instructions/s.
//
//   build/bench/hlogym_bench --benchmark_filter=. [--benchmark_format=json]
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>

#include "analysis/verifier.h"
#include "benchmark/benchmark.h"
#include "text/file_io.h"
#include "text/parser.h"
#include "text/printer.h"

namespace hlogym {
namespace {

// The largest module under datasets/ (compressed files count by their text size).
std::string DefaultBenchFile() {
  std::string best;
  uintmax_t best_size = 0;
  std::error_code error;
  for (const auto& entry :
       std::filesystem::recursive_directory_iterator(HLOGYM_SOURCE_DIR "/datasets", error)) {
    if (!entry.is_regular_file()) continue;
    std::string path = entry.path().string();
    bool hlo = path.ends_with(".hlo") || path.ends_with(".hlo.gz") || path.ends_with(".hlo.zst") ||
               path.ends_with(".txt");
    if (!hlo) continue;
    auto text = ReadTextFile(path);
    if (!text.ok() || !ParseModule(*text).ok()) continue;
    if (text->size() > best_size) {
      best_size = text->size();
      best = path;
    }
  }
  return best;
}

struct BenchInput {
  std::string path;
  std::string text;
  std::unique_ptr<Module> module;
};

const BenchInput& Input() {
  static BenchInput* input = [] {
    auto* in = new BenchInput;
    const char* env = std::getenv("HLOGYM_BENCH_FILE");
    in->path = env != nullptr ? env : DefaultBenchFile();
    auto text = ReadTextFile(in->path);
    if (!text.ok()) {
      std::cerr << "cannot read benchmark input '" << in->path << "': " << text.status() << "\n";
      std::exit(2);
    }
    in->text = std::move(*text);
    auto module = ParseModule(in->text, in->path);
    if (!module.ok()) {
      std::cerr << module.status() << "\n";
      std::exit(2);
    }
    in->module = std::move(*module);
    std::cerr << "benchmark input: " << in->path << " (" << in->text.size() << " bytes, "
              << in->module->instruction_count() << " instructions)\n";
    return in;
  }();
  return *input;
}

void SetRates(benchmark::State& state) {
  const BenchInput& input = Input();
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * input.text.size()));
  state.counters["instructions/s"] = benchmark::Counter(
      static_cast<double>(state.iterations() * input.module->instruction_count()),
      benchmark::Counter::kIsRate);
  state.SetLabel(std::filesystem::path(input.path).filename().string());
}

void BM_Parse(benchmark::State& state) {
  const BenchInput& input = Input();
  for (auto _ : state) {
    auto module = ParseModule(input.text, input.path);
    benchmark::DoNotOptimize(module);
  }
  SetRates(state);
}
BENCHMARK(BM_Parse)->Unit(benchmark::kMillisecond);

void BM_Print(benchmark::State& state) {
  const BenchInput& input = Input();
  for (auto _ : state) {
    std::string text = PrintModule(*input.module);
    benchmark::DoNotOptimize(text);
  }
  SetRates(state);
}
BENCHMARK(BM_Print)->Unit(benchmark::kMillisecond);

void BM_Verify(benchmark::State& state) {
  const BenchInput& input = Input();
  for (auto _ : state) {
    absl::Status status = VerifyModule(*input.module);
    benchmark::DoNotOptimize(status);
  }
  SetRates(state);
}
BENCHMARK(BM_Verify)->Unit(benchmark::kMillisecond);

void BM_Clone(benchmark::State& state) {
  const BenchInput& input = Input();
  for (auto _ : state) {
    auto clone = input.module->Clone();
    benchmark::DoNotOptimize(clone);
  }
  SetRates(state);
}
BENCHMARK(BM_Clone)->Unit(benchmark::kMillisecond);

// The post order of every computation (what nearly every pass asks for
// first, once per computation it visits).
void BM_PostOrder(benchmark::State& state) {
  const BenchInput& input = Input();
  for (auto _ : state) {
    for (const auto& computation : input.module->computations()) {
      auto order = computation->MakeInstructionPostOrder();
      benchmark::DoNotOptimize(order);
    }
  }
  SetRates(state);
}
BENCHMARK(BM_PostOrder)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace hlogym

BENCHMARK_MAIN();
