// Evaluation speed of the larger smoke modules (random inputs, seed 0).
//   build/bench/hlogym_bench --benchmark_filter=Eval
#include <memory>
#include <string>

#include "benchmark/benchmark.h"
#include "eval/equivalence.h"
#include "eval/evaluator.h"
#include "text/file_io.h"

namespace hlogym {
namespace {

void BM_Evaluate(benchmark::State& state, const std::string& file, int threads) {
  auto module = LoadModule(std::string(HLOGYM_SOURCE_DIR) + "/datasets/smoke/" + file);
  if (!module.ok()) {
    state.SkipWithError(std::string(module.status().message()).c_str());
    return;
  }
  std::vector<Literal> args = MakeRandomArguments(**module, 0);
  EvaluatorOptions options;
  options.num_threads = threads;
  for (auto _ : state) {
    auto result = Evaluate(**module, args, options);
    if (!result.ok()) {
      state.SkipWithError(std::string(result.status().message()).c_str());
      return;
    }
    benchmark::DoNotOptimize(result->shape());
  }
  state.counters["ops"] = static_cast<double>((*module)->instruction_count());
}

#define HLOGYM_EVAL_BENCH(name, file)                                               \
  BENCHMARK_CAPTURE(BM_Evaluate, name, std::string(file), 2)->Unit(benchmark::kMillisecond); \
  BENCHMARK_CAPTURE(BM_Evaluate, name##_1thread, std::string(file), 1)->Unit(benchmark::kMillisecond);

HLOGYM_EVAL_BENCH(gpt2_train, "gpt2_train.hlo")
HLOGYM_EVAL_BENCH(gpt2_train_optimized, "gpt2_train.optimized.hlo.gz")
HLOGYM_EVAL_BENCH(gpt2_infer, "gpt2_infer.hlo")
HLOGYM_EVAL_BENCH(cnn_train, "cnn_train.hlo")
HLOGYM_EVAL_BENCH(lstm_train, "lstm_train.hlo")
HLOGYM_EVAL_BENCH(mlp_bf16_train, "mlp_bf16_train.hlo")
HLOGYM_EVAL_BENCH(random, "random.hlo")

}  // namespace
}  // namespace hlogym
