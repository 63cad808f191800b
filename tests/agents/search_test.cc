// Search baselines on a real smoke module: never worse than the start, as
// good as the best single pass (greedy), deterministic per seed, and every
// result replays, verifies and stays equivalent to the initial module.
#include "agents/search.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "agents/evaluation.h"
#include "gym/benchmark.h"
#include "gym/gym_test_util.h"
#include "scratch.h"

namespace hlogym {
namespace {

constexpr char kModule[] = "smoke/mlp_train";

AgentOptions SmallOptions(uint64_t seed = 1) {
  AgentOptions options;
  options.seed = seed;
  options.trajectory_length = 6;
  options.beam_width = 2;
  options.beam_depth = 4;
  options.population = 6;
  return options;
}

SearchResult RunSearch(const std::string& algo, uint64_t seed, int64_t steps) {
  auto agent = MakeAgent(algo, SmallOptions(seed));
  EXPECT_TRUE(agent.ok()) << agent.status();
  SearchBudget budget;
  budget.steps = steps;
  auto result = (*agent)->Optimize(kModule, budget);
  EXPECT_TRUE(result.ok()) << result.status();
  return std::move(*result);
}

// The lowest op count any single pass reaches from the initial module.
int64_t BestSinglePass() {
  auto env = Environment::Create(EnvOptions{});
  EXPECT_TRUE(env.ok());
  EXPECT_TRUE((*env)->Reset(kModule).ok());
  int64_t best = (*env)->op_count();
  for (int a = 0; a < (*env)->num_actions(); ++a) {
    auto fork = (*env)->Fork();
    EXPECT_TRUE(fork->Step(a).ok());
    best = std::min(best, fork->op_count());
  }
  return best;
}

class SearchAlgoTest : public ::testing::TestWithParam<std::string> {};

TEST_P(SearchAlgoTest, ImprovesOrKeepsDeterministicAndValid) {
  const std::string algo = GetParam();
  SearchResult a = RunSearch(algo, 7, 80);
  EXPECT_EQ(a.agent, algo);
  EXPECT_GT(a.initial_op_count, 0);
  EXPECT_LE(a.op_count, a.initial_op_count);
  EXPECT_LE(a.steps, 80);
  ASSERT_NE(a.env, nullptr);
  EXPECT_EQ(a.env->op_count(), a.op_count);
  EXPECT_EQ(a.env->record().passes, a.passes);
  // The same seed and step budget: the same answer (fresh agent, fresh cache).
  SearchResult b = RunSearch(algo, 7, 80);
  EXPECT_EQ(a.passes, b.passes);
  EXPECT_EQ(a.op_count, b.op_count);
  EXPECT_EQ(a.steps, b.steps);
  // Replays without the cache, verifies, computes the same.
  ValidationResult v = a.env->Validate();
  EXPECT_TRUE(v.ok) << v.equivalence;
  EXPECT_EQ(v.equivalence, "equivalent");
}

INSTANTIATE_TEST_SUITE_P(Algos, SearchAlgoTest,
                         ::testing::Values("random", "greedy", "beam", "evo"),
                         [](const auto& info) { return info.param; });

TEST(SearchTest, SearchesReduceMlpTrain) {
  // mlp_train has dead code and redundancies every search should find.
  for (const std::string algo : {"random", "greedy", "beam", "evo"}) {
    SearchResult r = RunSearch(algo, 3, 200);
    EXPECT_LT(r.op_count, r.initial_op_count) << algo;
  }
}

TEST(SearchTest, GreedyIsNeverWorseThanItsBestSinglePass) {
  SearchResult greedy = RunSearch("greedy", 0, 0);  // no budget: runs to its end
  EXPECT_FALSE(greedy.budget_exhausted);
  EXPECT_LE(greedy.op_count, BestSinglePass());
}

// On smoke/topk_sort, topk-decomposer-all, topk-rewriter and dce form a cycle
// that adds 3 instructions per round while each dce step shrinks the module
// a little: greedy must still end on its own (it once ran until the step
// cache filled the memory).
TEST(SearchTest, GreedyEndsOnAGrowingPassCycle) {
  auto agent = MakeAgent("greedy", SmallOptions(0));
  ASSERT_TRUE(agent.ok()) << agent.status();
  SearchBudget budget;
  budget.steps = 20'000;  // a backstop far above what a terminating search needs
  auto result = (*agent)->Optimize("smoke/topk_sort", budget);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_FALSE(result->budget_exhausted) << result->steps << " steps";
  EXPECT_LE(result->op_count, result->initial_op_count);
}

TEST(SearchTest, BudgetsAreRespectedAndCacheIsUsed) {
  SearchResult r = RunSearch("random", 5, 50);
  EXPECT_EQ(r.steps, 50);
  EXPECT_TRUE(r.budget_exhausted);
  EXPECT_GT(r.cache_hits, 0);  // episodes share first steps from the same module
  auto agent = MakeAgent("random", SmallOptions());
  ASSERT_TRUE(agent.ok());
  auto unbounded = (*agent)->Optimize(kModule, SearchBudget{});
  EXPECT_FALSE(unbounded.ok());  // random needs a budget
  SearchBudget timed;
  timed.seconds = 0.2;
  auto by_time = (*agent)->Optimize(kModule, timed);
  ASSERT_TRUE(by_time.ok()) << by_time.status();
  EXPECT_TRUE(by_time->budget_exhausted);
  EXPECT_LE(by_time->op_count, by_time->initial_op_count);
}

// A work budget counts the instructions of the modules the passes ran on: a
// search stops within one step of it, and cache hits and passes whose
// pre-check rules them out are free, so it takes more steps than the budget
// buys at the initial module's size.
TEST(SearchTest, WorkBudgetCountsTheModulesPassesRanOn) {
  auto agent = MakeAgent("random", SmallOptions(5));
  ASSERT_TRUE(agent.ok()) << agent.status();
  auto probe = (*agent)->Optimize(kModule, SearchBudget{1, 0});
  ASSERT_TRUE(probe.ok()) << probe.status();
  const int64_t size = probe->initial_op_count;
  SearchBudget budget;
  budget.work = 20 * size;
  auto r = (*agent)->Optimize(kModule, budget);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->budget_exhausted);
  EXPECT_GE(r->work, budget.work);
  EXPECT_LT(r->work, budget.work + 4 * size);
  EXPECT_GT(r->steps, 20);
}

TEST(SearchTest, DefaultAgentReachesD) {
  auto agent = MakeAgent("default");
  ASSERT_TRUE(agent.ok());
  auto r = (*agent)->Optimize(kModule, SearchBudget{});
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->passes.size(), 1u);
  EXPECT_EQ(r->passes[0], "xla-cpu-default");
  auto d = r->env->BaselineOpCount();
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(r->op_count, *d);
  EXPECT_TRUE(r->env->Validate().ok);
}

TEST(SearchTest, UnknownAgentAndBadBenchmark) {
  EXPECT_FALSE(MakeAgent("ppo-from-the-future").ok());
  auto agent = MakeAgent("greedy");
  ASSERT_TRUE(agent.ok());
  EXPECT_FALSE((*agent)->Optimize("no_such_benchmark_anywhere", SearchBudget{}).ok());
}

TEST(EvaluationTest, SuitesResolve) {
  auto smoke = ResolveSuite({"smoke"});
  ASSERT_TRUE(smoke.ok()) << smoke.status();
  EXPECT_EQ(smoke->size(), 8u);
  auto files = ResolveSuite({"datasets/smoke/mlp_train.hlo", "smoke/einsum"});
  ASSERT_TRUE(files.ok()) << files.status();
  EXPECT_EQ(files->size(), 2u);
  auto folder = ResolveSuite({std::string(HLOGYM_SOURCE_DIR) + "/datasets/smoke"});
  ASSERT_TRUE(folder.ok()) << folder.status();
  EXPECT_GT(folder->size(), 8u);
  EXPECT_TRUE(ResolveSuite({}).ok());
  if (CorpusBenchmarkNames().empty()) {
    auto gpt2 = ResolveSuite({"gpt2"}, "test");
    ASSERT_FALSE(gpt2.ok());
    EXPECT_NE(gpt2.status().message().find("manifest"), std::string::npos);
  } else {
    auto gpt2 = ResolveSuite({"gpt2"}, "test");
    ASSERT_TRUE(gpt2.ok()) << gpt2.status();
    EXPECT_FALSE(gpt2->empty());
    // "corpus" is every corpus module, as "all" is.
    auto corpus = ResolveSuite({"corpus"}, "test");
    ASSERT_TRUE(corpus.ok()) << corpus.status();
    EXPECT_EQ(*corpus, *ResolveSuite({"all"}, "test"));
    EXPECT_GT(corpus->size(), gpt2->size());
  }
  EXPECT_EQ(BenchmarkDisplayName("x", "/a/b/mlp_train.hlo.gz"), "mlp_train");
}

TEST(EvaluationTest, EvaluatesAndChecksEveryResult) {
  const std::string out = testing::FreshScratchPath("eval_out").string();
  EvalOptions options;
  options.agent = "greedy";
  options.budget.steps = 100;
  options.output_dir = out;
  auto report = EvaluateSuite({"smoke/mlp_train", "smoke/einsum"}, options);
  ASSERT_TRUE(report.ok()) << report.status();
  ASSERT_EQ(report->rows.size(), 2u);
  EXPECT_EQ(report->failed, 0);
  for (const BenchmarkRow& row : report->rows) {
    EXPECT_TRUE(row.error.empty()) << row.error;
    EXPECT_TRUE(row.valid);
    EXPECT_EQ(row.equivalence, "equivalent");
    EXPECT_LE(row.R, row.I);
    EXPECT_TRUE(std::filesystem::exists(out + "/" + row.name + ".hlo"));
    EXPECT_TRUE(std::filesystem::exists(out + "/" + row.name + ".record.json"));
  }
  EXPECT_EQ(report->metric.benchmarks, 2);
  const std::string table = FormatReport(*report);
  EXPECT_NE(table.find("gain over xla-cpu-default"), std::string::npos);
  EXPECT_NE(table.find("mlp_train"), std::string::npos);
  EXPECT_NE(ReportToJson(*report).find("\"summary\""), std::string::npos);
  std::filesystem::remove_all(out);

  // The default agent scores exactly 0 on benchmarks with D < I.
  EvalOptions reference;
  reference.agent = "default";
  auto ref = EvaluateSuite({"smoke/mlp_train"}, reference);
  ASSERT_TRUE(ref.ok()) << ref.status();
  EXPECT_EQ(ref->rows[0].R, ref->rows[0].D);
  if (ref->metric.counted > 0) {
    EXPECT_NEAR(ref->metric.gain, 0.0, 1e-12);
  }
  EXPECT_EQ(ref->metric.r_le_d, 1);
}

// A module compiled for several partitions that XLA partitions before its
// passes and hlogym's partitioner does not (a reverse of the split
// dimension): its row says D is not XLA's, in the table and in the JSON, and
// a single-partition module's row says nothing.
TEST(EvaluationTest, PartitionedModuleRowSaysDIsNotXlas) {
  const std::string path = testing::WriteTestModule(
      "partitioned_module.hlo",
      "HloModule partitioned, num_partitions=2\n"
      "ENTRY e {\n  p = f32[4] parameter(0), sharding={devices=[2]<=[2]}\n"
      "  n = f32[4] negate(p)\n  ROOT m = f32[4] reverse(n), dimensions={0}\n}\n");
  EvalOptions options;
  options.agent = "default";
  auto report = EvaluateSuite({path, "smoke/einsum"}, options);
  ASSERT_TRUE(report.ok()) << report.status();
  ASSERT_EQ(report->rows.size(), 2u);
  EXPECT_NE(report->rows[0].caveat.find("2 partitions"), std::string::npos)
      << report->rows[0].caveat;
  EXPECT_NE(report->rows[0].caveat.find("SPMD"), std::string::npos);
  EXPECT_EQ(report->rows[1].caveat, "");
  EXPECT_NE(FormatReport(*report).find("caveat: " + report->rows[0].name + ": compiled for 2"),
            std::string::npos);
  auto again = ReportFromJson(ReportToJson(*report), "test");
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->rows[0].caveat, report->rows[0].caveat);
  EXPECT_EQ(again->rows[1].caveat, "");
  std::filesystem::remove(path);
}

// A module compiled for several partitions is answered split: the searches
// start from it split as XLA splits it first, and an unsplit state, however
// small (dce on the root here), is never their answer.
TEST(SearchTest, SearchesAnswerAModuleForSeveralPartitionsSplit) {
  const std::string path = testing::WriteTestModule("data_parallel_search.hlo",
                                                    R"(HloModule dp, num_partitions=4
%sum (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(%a, %b)
}
ENTRY %main (w: f32[16,8], x: f32[32,16]) -> f32[] {
  %w = f32[16,8] parameter(0), sharding={replicated}
  %x = f32[32,16] parameter(1), sharding={devices=[4,1]<=[4]}
  %y = f32[32,8] dot(%x, %w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  %dead = f32[32,8] negate(%y)
  %dead_too = f32[32,8] exponential(%dead)
  %t = f32[32,8] tanh(%y)
  %zero = f32[] constant(0)
  ROOT %loss = f32[] reduce(%t, %zero), dimensions={0,1}, to_apply=%sum
}
)");
  for (const std::string algo : {"greedy", "beam", "random", "evo", "auto"}) {
    AgentOptions options = SmallOptions(0);
    options.env.actions = {"dce", "cse", "call-inliner", "spmd-partitioning"};
    auto agent = MakeAgent(algo, options);
    ASSERT_TRUE(agent.ok()) << agent.status();
    SearchBudget budget;
    budget.steps = 200;
    auto result = (*agent)->Optimize(path, budget);
    ASSERT_TRUE(result.ok()) << algo << ": " << result.status();
    // I 11; split: the loss's all-reduce and its own reducer (4) added; dce:
    // both dead ones removed.
    EXPECT_EQ(result->op_count, 13) << algo;
    ASSERT_NE(result->env, nullptr);
    ValidationResult validation = result->env->Validate();
    EXPECT_TRUE(validation.ok) << algo << ": " << ::testing::PrintToString(validation.errors);
  }
  std::filesystem::remove(path);
}

TEST(EvaluationTest, BadBenchmarkIsARowWithAnError) {
  EvalOptions options;
  options.agent = "greedy";
  auto report = EvaluateSuite({"no_such_benchmark_anywhere", "smoke/einsum"}, options);
  ASSERT_TRUE(report.ok());
  EXPECT_EQ(report->failed, 1);
  EXPECT_FALSE(report->rows[0].error.empty());
  EXPECT_EQ(report->metric.benchmarks, 1);
}

}  // namespace
}  // namespace hlogym
