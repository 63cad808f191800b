// Steps per second of the gym (src/gym) on the default GPT-2 modules: uncached
// (every step clones the module and runs the pass) and cached (revisited
// states, a lookup), on a VecEnvironment of 1 or 2 threads with one environment per thread or
// 8 environments. Random actions over every registered pass, traj_limit 10.
// Counters: steps/s (items_per_second), and the median and 90th-percentile latency of one
// VecEnvironment::Step (all environments' steps) in microseconds.
//
//   build-gym/bench/gym_bench [--benchmark_filter=...] [benchmark options]
// The modules: HLOGYM_GYM_BENCH_MODULES (comma-separated benchmark names or
// files) when set, else datasets/corpus/default_suite.txt when it exists (the
// first three), else datasets/smoke/gpt2_infer.hlo and gpt2_train.hlo.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_split.h"
#include "gym/environment.h"
#include "gym/vec_env.h"
#include "hlo/fingerprint.h"

namespace hlogym {
namespace {

std::vector<std::string> Gpt2Modules() {
  std::vector<std::string> modules;
  if (const char* env = std::getenv("HLOGYM_GYM_BENCH_MODULES"); env != nullptr && *env) {
    std::vector<std::string> listed = absl::StrSplit(env, ',', absl::SkipEmpty());
    return listed;
  }
  const std::string suite = std::string(HLOGYM_SOURCE_DIR) + "/datasets/corpus/default_suite.txt";
  if (std::filesystem::exists(suite)) {
    if (auto specs = ExpandBenchmarkLocs({suite}); specs.ok()) {
      for (size_t i = 0; i < specs->size() && i < 3; ++i) modules.push_back((*specs)[i]);
    }
  }
  if (modules.empty()) modules = {"gpt2_infer", "gpt2_train"};
  return modules;
}

EnvOptions BenchOptions(bool cached) {
  EnvOptions options;
  options.traj_limit = 10;
  options.use_cache = cached;
  return options;
}

// Cached runs replay a small fixed set of action sequences, so after the first
// round every step is a cache hit; uncached runs draw fresh random actions.
struct Plan {
  explicit Plan(bool cached, int num_actions, uint64_t seed) : rng(seed) {
    if (cached) {
      for (int e = 0; e < 4; ++e) {
        std::vector<int> episode;
        for (int t = 0; t < 10; ++t) episode.push_back(static_cast<int>(rng() % num_actions));
        episodes.push_back(episode);
      }
    }
    this->num_actions = num_actions;
  }
  int Next(int t, int episode) {
    if (episodes.empty()) return static_cast<int>(rng() % num_actions);
    return episodes[episode % episodes.size()][t];
  }
  std::mt19937_64 rng;
  std::vector<std::vector<int>> episodes;
  int num_actions = 0;
};

void BM_Step(benchmark::State& state, bool cached) {
  const int threads = static_cast<int>(state.range(1));
  const int envs = static_cast<int>(state.range(2));
  const std::vector<std::string> modules = Gpt2Modules();
  const std::string module = modules[state.range(0) % modules.size()];
  auto vec = VecEnvironment::Create(envs, threads, BenchOptions(cached));
  if (!vec.ok()) {
    state.SkipWithError(std::string(vec.status().message()).c_str());
    return;
  }
  for (const auto& r : (*vec)->Reset({module})) {
    if (!r.ok()) {
      state.SkipWithError(std::string(r.status().message()).c_str());
      return;
    }
  }
  const int n = (*vec)->num_envs();
  std::vector<Plan> plans;
  for (int i = 0; i < n; ++i) plans.emplace_back(cached, (*vec)->env(i).num_actions(), 17 + i);
  std::vector<int> t(n, 0), episode(n, 0);
  auto advance = [&](const std::vector<absl::StatusOr<StepResult>>& results) {
    for (int i = 0; i < n; ++i) {
      if (!results[i].ok()) return false;
      if (++t[i] >= 10) {
        t[i] = 0;
        ++episode[i];
        (void)(*vec)->env(i).Reset(module);
      }
    }
    return true;
  };
  std::vector<int> actions(n);
  if (cached) {  // warm the cache: every planned episode once
    for (int round = 0; round < 4 * 10; ++round) {
      for (int i = 0; i < n; ++i) actions[i] = plans[i].Next(t[i], episode[i]);
      advance((*vec)->Step(actions));
    }
  }
  std::vector<double> latencies_us;
  int64_t steps = 0, hits = 0;
  for (auto _ : state) {
    for (int i = 0; i < n; ++i) actions[i] = plans[i].Next(t[i], episode[i]);
    const auto start = std::chrono::steady_clock::now();
    auto results = (*vec)->Step(actions);
    latencies_us.push_back(
        std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start)
            .count());
    for (const auto& r : results) hits += r.ok() && r->info.cache_hit;
    steps += n;
    if (!advance(results)) {
      state.SkipWithError("step failed");
      return;
    }
  }
  state.SetItemsProcessed(steps);
  std::sort(latencies_us.begin(), latencies_us.end());
  if (!latencies_us.empty()) {
    state.counters["median_us"] = latencies_us[latencies_us.size() / 2];
    state.counters["p90_us"] = latencies_us[latencies_us.size() * 9 / 10];
  }
  state.counters["hit_rate"] = steps ? static_cast<double>(hits) / steps : 0;
  state.counters["ops"] = static_cast<double>((*vec)->env(0).initial_op_count());
  state.SetLabel(module);
}

// One environment per thread, and 8 environments on 1 or 2 threads: a step batch waits for its
// slowest step, and most steps take a microsecond where a few take a millisecond, so two lone
// environments rarely keep both threads busy; eight spread the slow steps over both.
void Args(benchmark::internal::Benchmark* b) {
  const int num_modules = static_cast<int>(Gpt2Modules().size());
  for (int m = 0; m < num_modules; ++m) {
    for (auto [threads, envs] : {std::pair{1, 1}, {2, 2}, {1, 8}, {2, 8}}) {
      b->Args({m, threads, envs});
    }
  }
  b->ArgNames({"module", "threads", "envs"})->UseRealTime()->Unit(benchmark::kMicrosecond);
}

// What an uncached step costs besides the pass: the clone, the fingerprint and
// the op statistics of the result.
void BM_StepOverhead(benchmark::State& state, int what) {
  const std::vector<std::string> modules = Gpt2Modules();
  auto benchmark = LoadBenchmark(modules[state.range(0) % modules.size()]);
  if (!benchmark.ok()) {
    state.SkipWithError(std::string(benchmark.status().message()).c_str());
    return;
  }
  const Module& module = benchmark->initial->module();
  for (auto _ : state) {
    switch (what) {
      case 0:
        benchmark::DoNotOptimize(module.Clone());
        break;
      case 1:
        benchmark::DoNotOptimize(ModuleFingerprint(module));
        break;
      case 2:
        benchmark::DoNotOptimize(ComputeOpStats(module));
        break;
      case 3:
        benchmark::DoNotOptimize(ModuleState::Make(module.Clone()));
        break;
    }
  }
  state.SetLabel(benchmark->spec);
}
void OverheadArgs(benchmark::internal::Benchmark* b) {
  const int num_modules = static_cast<int>(Gpt2Modules().size());
  for (int m = 0; m < num_modules; ++m) b->Arg(m);
  b->ArgNames({"module"})->Unit(benchmark::kMicrosecond);
}
// The pool's part of a two-thread step: a loop of two 5 µs calls on two threads takes 5 µs plus
// the hand-off when the worker takes one, 10 µs when the caller has to run both.
void BM_ThreadPoolHandOff(benchmark::State& state) {
  ThreadPool pool(2);
  auto busy = [](int) {
    const auto end = std::chrono::steady_clock::now() + std::chrono::microseconds(5);
    while (std::chrono::steady_clock::now() < end) {
    }
  };
  for (auto _ : state) pool.ParallelFor(2, busy);
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_ThreadPoolHandOff)->UseRealTime()->Unit(benchmark::kMicrosecond);

BENCHMARK_CAPTURE(BM_StepOverhead, clone, 0)->Apply(OverheadArgs);
BENCHMARK_CAPTURE(BM_StepOverhead, fingerprint, 1)->Apply(OverheadArgs);
BENCHMARK_CAPTURE(BM_StepOverhead, op_stats, 2)->Apply(OverheadArgs);
BENCHMARK_CAPTURE(BM_StepOverhead, clone_and_state, 3)->Apply(OverheadArgs);

BENCHMARK_CAPTURE(BM_Step, uncached, false)->Apply(Args)->MinTime(2.0);
BENCHMARK_CAPTURE(BM_Step, cached, true)->Apply(Args)->MinTime(0.5);

}  // namespace
}  // namespace hlogym

BENCHMARK_MAIN();
