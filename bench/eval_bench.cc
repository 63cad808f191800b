// Evaluation speed of the larger smoke modules and of the largest corpus
// module of each family (random inputs, seed 0).
//   build/bench/hlogym_bench --benchmark_filter=Evaluate
#include <memory>
#include <string>

#include "benchmark/benchmark.h"
#include "eval/equivalence.h"
#include "eval/evaluator.h"
#include "text/file_io.h"

namespace hlogym {
namespace {

void BM_Evaluate(benchmark::State& state, const std::string& file, int threads) {
  auto module = LoadModule(std::string(HLOGYM_SOURCE_DIR) + "/datasets/" + file);
  if (!module.ok()) {
    state.SkipWithError(std::string(module.status().message()).c_str());
    return;
  }
  std::vector<Literal> args = *MakeRandomArguments(**module, 0);
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

// The comparison of two evaluations' outputs, element by element (what the
// equivalence check spends beside the evaluations): on a training step whose
// outputs are the whole model's weights, every element is read twice.
//   build/bench/hlogym_bench --benchmark_filter=CompareOutputs
void BM_CompareOutputs(benchmark::State& state, const std::string& file) {
  auto module = LoadModule(std::string(HLOGYM_SOURCE_DIR) + "/datasets/" + file);
  if (!module.ok()) {
    state.SkipWithError(std::string(module.status().message()).c_str());
    return;
  }
  std::vector<Literal> args = *MakeRandomArguments(**module, 0);
  auto a = Evaluate(**module, args);
  auto b = Evaluate(**module, args);
  if (!a.ok() || !b.ok()) {
    state.SkipWithError("the module does not evaluate");
    return;
  }
  int64_t elements = 0;
  for (const LiteralLeaf& leaf : a->ArrayLeaves()) elements += leaf.array->element_count();
  for (auto _ : state) {
    EquivalenceResult result = CompareLiterals(*a, *b);
    if (!result.equivalent) {
      state.SkipWithError(result.message.c_str());
      return;
    }
  }
  state.counters["elements"] = static_cast<double>(elements);
}

BENCHMARK_CAPTURE(BM_CompareOutputs, resnet_train_r50_w4_f32_adamw,
                  std::string("corpus/resnet/resnet_train_r50_w4_px32_cifar_b2_f32_adamw.hlo.zst"))
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_CompareOutputs, gpt2_train_L4_d128_bf16_remat_adamw,
                  std::string("corpus/gpt2/gpt2_train_L4_d128_h2_s16_b4_bf16_remat_adamw.hlo.zst"))
    ->Unit(benchmark::kMillisecond);

#define HLOGYM_EVAL_BENCH(name, file)                                                        \
  BENCHMARK_CAPTURE(BM_Evaluate, name, std::string(file), 2)->Unit(benchmark::kMillisecond); \
  BENCHMARK_CAPTURE(BM_Evaluate, name##_1thread, std::string(file), 1)                       \
      ->Unit(benchmark::kMillisecond);

HLOGYM_EVAL_BENCH(gpt2_train, "smoke/gpt2_train.hlo")
HLOGYM_EVAL_BENCH(gpt2_train_optimized, "smoke/gpt2_train.optimized.hlo.gz")
HLOGYM_EVAL_BENCH(gpt2_infer, "smoke/gpt2_infer.hlo")
HLOGYM_EVAL_BENCH(cnn_train, "smoke/cnn_train.hlo")
HLOGYM_EVAL_BENCH(lstm_train, "smoke/lstm_train.hlo")
HLOGYM_EVAL_BENCH(mlp_bf16_train, "smoke/mlp_bf16_train.hlo")
HLOGYM_EVAL_BENCH(random, "smoke/random.hlo")
// NumPyro's MCMC sample loop: a while loop of small and scalar values, where
// the interpreter's own overhead per instruction is the cost.
HLOGYM_EVAL_BENCH(numpyro_mcmc_loop,
                  "probes/probabilistic/probabilistic/jit__fori_collect_loop.hlo.zst")

// The largest corpus module of each family.
#define HLOGYM_CORPUS_BENCH(name, file)                                           \
  BENCHMARK_CAPTURE(BM_Evaluate, corpus_##name, std::string("corpus/") + file, 2) \
      ->Unit(benchmark::kMillisecond);

HLOGYM_CORPUS_BENCH(gpt2_train_L4_d128_bf16_remat_adamw,
                    "gpt2/gpt2_train_L4_d128_h2_s16_b4_bf16_remat_adamw.hlo.zst")
HLOGYM_CORPUS_BENCH(gpt2_train_L2_d32_bf16_sgd, "gpt2/gpt2_train_L2_d32_h2_s64_b1_bf16_sgd.hlo.zst")
HLOGYM_CORPUS_BENCH(bert_train_L4_d128_bf16_remat,
                    "bert/bert_train_L4_d128_h2_s64_b2_bf16_remat.hlo.zst")
HLOGYM_CORPUS_BENCH(resnet_train_r50_w4_f32_adamw,
                    "resnet/resnet_train_r50_w4_px32_cifar_b2_f32_adamw.hlo.zst")
HLOGYM_CORPUS_BENCH(unet_train_c16_m122_f32, "unet/unet_train_c16_m122_px16_a1_b1_f32.hlo.zst")
HLOGYM_CORPUS_BENCH(vit_train_L4_d64_f32_remat,
                    "vit/vit_train_L4_d64_h4_p4_px32_b4_f32_remat.hlo.zst")
HLOGYM_CORPUS_BENCH(t5_train_e2_x2_bf16_remat,
                    "t5/t5_train_e2_x2_d32_h2_ff128_g0_s32_t8_b2_bf16_remat.hlo.zst")
HLOGYM_CORPUS_BENCH(gnn_train_L3_H16_bf16, "gnn/gnn_train_L3_H16_n64_er4_bf16.hlo.zst")
HLOGYM_CORPUS_BENCH(mixer_train_L4_d64_bf16,
                    "mixer/mixer_train_L4_d64_p8_px16_tm32_cm64_b4_bf16.hlo.zst")
HLOGYM_CORPUS_BENCH(moe_train_L2_d64_E4_bf16_remat,
                    "moe/moe_train_L2_d64_h2_E4_k2_f128_cf1p0_s32_b2_bf16_remat.hlo.zst")
HLOGYM_CORPUS_BENCH(rnn_train_lstm_L2_H64_bf16,
                    "rnn/rnn_train_lstm_L2_H64_E16_s32_b4_u1_bf16.hlo.zst")

}  // namespace
}  // namespace hlogym
