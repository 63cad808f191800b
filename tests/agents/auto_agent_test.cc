// The auto agent: searches from the default pipeline, its exact variant and
// the initial module, never ends above the default (nor above the module
// itself where the default grows it), deterministic per seed, every answer checked, a
// better state that fails its check is dropped (shown with a pass that breaks the module), and the
// prior's file format round-trips.
#include "agents/auto_agent.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_join.h"
#include "agents/agent_test_util.h"
#include "agents/coreset_agent.h"
#include "agents/evaluation.h"
#include "hlo/computation.h"
#include "hlo/instruction.h"
#include "scratch.h"

namespace hlogym {
namespace {

constexpr char kModule[] = "smoke/mlp_train";

TEST(AutoAgentTest, NeverAboveTheDefaultDeterministicAndChecked) {
  for (const std::string benchmark : {kModule, "smoke/gpt2_infer", "smoke/lstm_train"}) {
    auto agent = MakeAgent("auto");
    ASSERT_TRUE(agent.ok()) << agent.status();
    auto a = (*agent)->Optimize(benchmark, SearchBudget{});
    ASSERT_TRUE(a.ok()) << a.status();
    EXPECT_EQ(a->agent, "auto");
    ASSERT_FALSE(a->passes.empty()) << benchmark;
    EXPECT_LE(a->op_count, DefaultOpCount(benchmark)) << benchmark;
    ASSERT_TRUE(a->validation.has_value());
    EXPECT_TRUE(a->validation->ok) << benchmark << ": " << a->validation->equivalence;
    // The default budget is in work, counted per step: a fresh agent gives
    // the same answer. A search stops within one step of its budget.
    EXPECT_GT(a->steps, 1);
    EXPECT_GT(a->work, 0);
    EXPECT_LT(a->work, kDefaultAutoWork + 4 * a->initial_op_count);
    auto again = MakeAgent("auto");
    ASSERT_TRUE(again.ok());
    auto b = (*again)->Optimize(benchmark, SearchBudget{});
    ASSERT_TRUE(b.ok());
    EXPECT_EQ(a->passes, b->passes) << benchmark;
    EXPECT_EQ(a->op_count, b->op_count);
  }
}

// A work budget with a floor in steps on the initial module: the search
// goes on until it has done that many steps' worth (a large graph keeps the
// steps its starts need), and stops within one step of it.
TEST(AutoAgentTest, WorkBudgetHasAFloorOfStepsOnTheInitialModule) {
  const std::string benchmark = "smoke/gpt2_train";
  SearchBudget tiny;
  tiny.work = 1;
  auto agent = MakeAgent("auto");
  ASSERT_TRUE(agent.ok()) << agent.status();
  auto bare = (*agent)->Optimize(benchmark, tiny);
  ASSERT_TRUE(bare.ok()) << bare.status();
  EXPECT_EQ(bare->steps, 1);  // the default pipeline's step uses it all
  SearchBudget floored = tiny;
  floored.min_work_steps = 6;
  auto again = MakeAgent("auto");
  ASSERT_TRUE(again.ok());
  auto result = (*again)->Optimize(benchmark, floored);
  ASSERT_TRUE(result.ok()) << result.status();
  const int64_t i = result->initial_op_count;
  EXPECT_TRUE(result->budget_exhausted);
  EXPECT_GE(result->work, 6 * i);
  EXPECT_LT(result->work, 7 * i);
  EXPECT_GT(result->steps, bare->steps);
}

// smoke/einsum: the default grows it (19 instructions, D = 24), and no pass
// takes it below 19, so the module as it is, not a state between I and D, is
// the answer.
TEST(AutoAgentTest, NeverAboveTheModuleItselfWhereTheDefaultGrowsIt) {
  const std::string benchmark = "smoke/einsum";
  ASSERT_GT(DefaultOpCount(benchmark), 19);
  auto agent = MakeAgent("auto");
  ASSERT_TRUE(agent.ok()) << agent.status();
  auto result = (*agent)->Optimize(benchmark, SearchBudget{});
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->initial_op_count, 19);
  EXPECT_LE(result->op_count, result->initial_op_count);
  ASSERT_TRUE(result->validation.has_value());
  EXPECT_TRUE(result->validation->ok) << result->validation->equivalence;
}

TEST(AutoAgentTest, LeavesPrecisionChangingPassesOutUnlessAllowed) {
  std::vector<std::string> strict = AutoActionSpace(false);
  std::vector<std::string> loose = AutoActionSpace(true);
  for (const char* pass : {"simplify-fp-conversions", "float-normalization-bf16"}) {
    EXPECT_EQ(std::count(strict.begin(), strict.end(), pass), 0) << pass;
    EXPECT_EQ(std::count(loose.begin(), loose.end(), pass), 1) << pass;
  }
  for (const char* action : {"algsimp", "xla-cpu-default", "xla-cpu-simplification"}) {
    EXPECT_EQ(std::count(strict.begin(), strict.end(), action), 1) << action;
  }
}

TEST(AutoAgentTest, DropsABetterStateThatFailsItsCheck) {
  PassRegistry registry = PassRegistry::WithPipelines();
  registry.Register(
      {"drop-add", "test: breaks the module", [] { return std::make_unique<DropAddPass>(); }});
  AgentOptions options;
  options.registry = &registry;
  options.env.actions = {"xla-cpu-default", "drop-add", "dce"};
  AutoPrior prior;
  prior.actions = {{"drop-add", 1, 1}, {"dce", 1, 1}};
  AutoAgent agent(options, prior);
  auto result = agent.Optimize(kModule, SearchBudget{50, 0});
  ASSERT_TRUE(result.ok()) << result.status();
  // The search went below D with drop-add; that answer is not equivalent and
  // neither is anything after it, so D itself is what comes back.
  EXPECT_GE(result->rejected_candidates, 1);
  EXPECT_EQ(std::count(result->passes.begin(), result->passes.end(), "drop-add"), 0);
  EXPECT_EQ(result->passes, std::vector<std::string>{"xla-cpu-default"});
  EXPECT_EQ(result->op_count, DefaultOpCount(kModule));
  ASSERT_TRUE(result->validation.has_value());
  EXPECT_TRUE(result->validation->ok);
}

// Where the default expands what XLA expands anyway (a batch norm), the lowest state lies off
// it: the descent from the initial module finds it, and D stays the fallback.
TEST(AutoAgentTest, DescendsFromTheInitialModuleToo) {
  const std::string path = WriteBatchNormModule("auto_batch_norm.hlo");
  AgentOptions options;
  options.registry = &PassRegistry::WithPipelines();
  options.env.actions = {"xla-cpu-default", "dce"};
  AutoAgent agent(options, AutoPrior{});
  auto result = agent.Optimize(path, SearchBudget{50, 0});
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->passes, std::vector<std::string>{"dce"});
  EXPECT_EQ(result->op_count, result->initial_op_count - 1);
  EXPECT_LT(result->op_count, DefaultOpCount(path));
  ASSERT_TRUE(result->validation.has_value());
  EXPECT_TRUE(result->validation->ok) << result->validation->equivalence;
}

// The widening descent's round over the rest ends at the first action that goes lower: from I
// (the default grows this module), dce removes the dead add and is taken before algsimp, which
// removes six and would be the best child of that round; the next round takes algsimp. A round
// over all of the rest would have taken algsimp first.
TEST(AutoAgentTest, WideningTakesTheFirstActionThatGoesLower) {
  const std::string path =
      WriteBatchNormModule("auto_widening.hlo", BatchNormInputs::kTimesOnesPlusZeros);
  AgentOptions options;
  options.registry = &PassRegistry::WithPipelines();
  options.env.actions = {"cse", "dce", "algsimp"};
  AutoPrior prior;
  prior.actions = {{"cse", 1, 1}};  // finds nothing here: every move is the widening's
  auto result = AutoAgent(options, prior).Optimize(path, SearchBudget{100, 0});
  ASSERT_TRUE(result.ok()) << result.status();
  ASSERT_GT(DefaultOpCount(path), result->initial_op_count);
  EXPECT_EQ(result->passes, (std::vector<std::string>{"dce", "algsimp"}));
  EXPECT_EQ(result->op_count, result->initial_op_count - 7);
  ASSERT_TRUE(result->validation.has_value());
  EXPECT_TRUE(result->validation->ok) << result->validation->equivalence;
}

// Where the descent stops at a state every action leaves or raises, a move up that one of the
// prior's actions then takes lower is two steps the descent does not walk: here the 1-D
// broadcast variant of reshape-mover sinks the reshape below the add (6 instructions to 7, a
// reshape of the broadcast and one of the sum), and algsimp then folds both (5). The descent is
// allowed no move that does not go lower, as when it prefers a move that keeps the count.
TEST(AutoAgentTest, EscapesALocalMinimumByAMoveUpThenACleanup) {
  const std::string path = testing::FreshScratchPath("auto_escape.hlo").string();
  std::ofstream(path) << R"(HloModule reshape_around_add
ENTRY main {
  x = f32[64,96] parameter(0)
  bias = f32[96] parameter(1)
  split = f32[32,2,96] reshape(x)
  bias_b = f32[32,2,96] broadcast(bias), dimensions={2}
  sum = f32[32,2,96] add(split, bias_b)
  ROOT heads = f32[1,32,2,3,32] reshape(sum)
}
)";
  AgentOptions options;
  options.registry = &PassRegistry::WithPipelines();
  options.env.actions = {"algsimp", "reshape-mover-1d-broadcast-cheap"};
  AutoPrior prior;
  prior.actions = {{"algsimp", 1, 1}};
  AutoOptions auto_options;
  auto_options.non_improving_moves = 0;
  auto result = AutoAgent(options, prior, auto_options).Optimize(path, SearchBudget{100, 0});
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->initial_op_count, 6);
  EXPECT_EQ(DefaultOpCount(path), 6);
  EXPECT_EQ(result->op_count, 5);
  ASSERT_GE(result->passes.size(), 2u);
  EXPECT_EQ(std::vector<std::string>(result->passes.end() - 2, result->passes.end()),
            (std::vector<std::string>{"reshape-mover-1d-broadcast-cheap", "algsimp"}));
  ASSERT_TRUE(result->validation.has_value());
  EXPECT_TRUE(result->validation->ok) << result->validation->equivalence;
}

// A coreset model trained on one graph, whose features are all 0: `values` are that graph's value
// of each of `sequences`, so the highest is its choice for any graph.
CoresetModel OneGraphCoreset(std::vector<std::vector<std::string>> sequences,
                             std::vector<float> values) {
  CoresetModel model;
  model.sequences = std::move(sequences);
  model.graphs = {"g"};
  model.features = {std::vector<float>(CoresetFeatureSize(), 0.0f)};
  model.values = {std::move(values)};
  model.feature_mean.assign(CoresetFeatureSize(), 0.0f);
  model.feature_scale.assign(CoresetFeatureSize(), 1.0f);
  return model;
}

// The guide's predicted sequence is a start of its own: here its one pass (dce, not among the
// search's own actions, so no descent could find it) reaches a state below D.
TEST(AutoAgentTest, StartsFromTheGuidesSequenceToo) {
  const std::string path = WriteBatchNormModule("auto_guided.hlo");
  AgentOptions options;
  options.registry = &PassRegistry::WithPipelines();
  options.env.actions = {"xla-cpu-default"};
  auto unguided = AutoAgent(options, AutoPrior{}).Optimize(path, SearchBudget{50, 0});
  ASSERT_TRUE(unguided.ok()) << unguided.status();
  // The default grows this module and nothing else is allowed: the module as it is.
  EXPECT_TRUE(unguided->passes.empty());
  EXPECT_EQ(unguided->op_count, unguided->initial_op_count);

  AutoOptions auto_options;
  auto_options.guide = MakeCoresetGuide(OneGraphCoreset({{"dce"}}, {0.1f}));
  auto guided = AutoAgent(options, AutoPrior{}, auto_options).Optimize(path, SearchBudget{50, 0});
  ASSERT_TRUE(guided.ok()) << guided.status();
  EXPECT_EQ(guided->passes, std::vector<std::string>{"dce"});
  EXPECT_EQ(guided->op_count, guided->initial_op_count - 1);
  EXPECT_LT(guided->op_count, unguided->op_count);
  ASSERT_TRUE(guided->validation.has_value());
  EXPECT_TRUE(guided->validation->ok) << guided->validation->equivalence;
}

// Where the coreset model's choice for a graph misses (here it values a sequence that changes
// nothing above the one that helps, which it lists last), every other sequence of the coreset
// is a start too: the last one's state is the answer.
TEST(AutoAgentTest, StartsFromEveryOneOfTheCoresetsSequences) {
  const std::string path = WriteBatchNormModule("auto_guided_first.hlo");
  AgentOptions options;
  options.registry = &PassRegistry::WithPipelines();
  options.env.actions = {"xla-cpu-default"};
  CoresetModel guide =
      OneGraphCoreset({{"cse"}, {"tuple-simplifier"}, {"dce"}}, {0.9f, 0.5f, 0.1f});
  ASSERT_EQ(guide.Choose(std::vector<float>(CoresetFeatureSize(), 0.0f)), 0);
  AutoOptions auto_options;
  auto_options.guide = MakeCoresetGuide(std::move(guide));
  auto guided = AutoAgent(options, AutoPrior{}, auto_options).Optimize(path, SearchBudget{50, 0});
  ASSERT_TRUE(guided.ok()) << guided.status();
  EXPECT_EQ(guided->passes, std::vector<std::string>{"dce"});
  EXPECT_EQ(guided->op_count, guided->initial_op_count - 1);
  ASSERT_TRUE(guided->validation.has_value());
  EXPECT_TRUE(guided->validation->ok) << guided->validation->equivalence;
}

// The shipped guide is two models: auto-guide's (greedy search's paths among its candidates) and
// auto-paths.json (auto's paths at the commit it was trained), not the coreset agent's own model,
// which is retrained apart from it; every sequence of both is a start, once.
TEST(AutoAgentTest, ShippedGuideGivesEverySequenceOfItsTwoModels) {
  absl::StatusOr<std::shared_ptr<AutoGuide>> guide = LoadShippedAutoGuide();
  ASSERT_TRUE(guide.ok()) << guide.status();
  std::vector<std::vector<std::string>> expected;
  for (const std::string& path : {DefaultAutoGuidePath(), DefaultAutoGuideAutoPathsModel()}) {
    absl::StatusOr<CoresetModel> model = CoresetModel::Load(path);
    ASSERT_TRUE(model.ok()) << model.status();
    for (const std::vector<std::string>& sequence : model->sequences)
      if (std::find(expected.begin(), expected.end(), sequence) == expected.end())
        expected.push_back(sequence);
  }
  EnvOptions env_options;
  env_options.actions = {std::string(kDefaultPipeline)};
  absl::StatusOr<std::unique_ptr<Environment>> initial =
      Environment::Create(env_options, PassRegistry::WithPipelines());
  ASSERT_TRUE(initial.ok()) << initial.status();
  ASSERT_TRUE((*initial)->Reset(kModule).ok());
  std::unique_ptr<Environment> d = (*initial)->Fork();
  ASSERT_TRUE(d->Step(0).ok());
  absl::StatusOr<std::vector<std::vector<std::string>>> sequences =
      (*guide)->Sequences(**initial, *d);
  ASSERT_TRUE(sequences.ok()) << sequences.status();
  EXPECT_EQ(sequences->size(), expected.size());
  for (const std::vector<std::string>& sequence : expected)
    EXPECT_TRUE(std::find(sequences->begin(), sequences->end(), sequence) != sequences->end())
        << "no start from " << absl::StrJoin(sequence, ",");
}

// When the check cannot judge (here a checker that never can, as for a graph whose original
// misses its own f64 result), a candidate is not refuted: auto returns D, not the untouched module,
// and its validation says the equivalence was undecided (what eval counts as not judged).
TEST(AutoAgentTest, ReturnsDNotTheOriginalWhenTheCheckCannotJudge) {
  struct RestoreChecker {
    ~RestoreChecker() { SetEquivalenceChecker(DefaultEquivalenceChecker()); }
  } restore;
  SetEquivalenceChecker([](const Module&, const Module&) -> absl::StatusOr<bool> {
    return absl::FailedPreconditionError("the original misses its own f64 result");
  });
  AgentOptions options;
  options.registry = &PassRegistry::WithPipelines();
  options.env.actions = {"xla-cpu-default"};
  auto result = AutoAgent(options, AutoPrior{}).Optimize(kModule, SearchBudget{20, 0});
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->passes, std::vector<std::string>{"xla-cpu-default"});
  EXPECT_EQ(result->op_count, DefaultOpCount(kModule));
  EXPECT_LT(result->op_count, result->initial_op_count);
  ASSERT_TRUE(result->validation.has_value());
  EXPECT_TRUE(result->validation->ok);
  EXPECT_EQ(result->validation->equivalence.rfind("undecided: ", 0), 0u)
      << result->validation->equivalence;
  EXPECT_EQ(result->rejected_candidates, 0);
}

TEST(AutoAgentTest, PriorRoundTripsAndRejectsBadFiles) {
  AutoPrior prior;
  prior.actions = {{"algsimp", 12, 340}, {"xla-cpu-simplification", 3, 17}};
  prior.trained_on = {"suite x, split train-seen"};
  prior.training_graphs = 20;
  prior.command = "hlogym train --algo auto ...";
  auto back = AutoPrior::FromJson(prior.ToJson(), "mem");
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->ActionNames(), prior.ActionNames());
  EXPECT_EQ(back->actions[0].graphs, 12);
  EXPECT_EQ(back->actions[1].op_reduction, 17);
  EXPECT_EQ(back->training_graphs, 20);
  EXPECT_FALSE(AutoPrior::FromJson("{\"passes\": []}", "x.json").ok());
  EXPECT_FALSE(AutoPrior::FromJson("not json", "x.json").ok());
  auto missing = MakeAgent("auto:/no/such/prior");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("/no/such/prior"), std::string::npos);
}

TEST(AutoAgentTest, EvalTableReportsDefaultsOwnGuarantees) {
  EvalOptions options;
  options.agent = "auto";
  auto report = EvaluateSuite({kModule, "smoke/cnn_train"}, options);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_EQ(report->failed, 0);
  EXPECT_EQ(report->metric.r_le_d, 2);
  EXPECT_GE(report->metric.geomean_d_over_r, 1.0);
  const std::string table = FormatReport(*report);
  EXPECT_NE(table.find("geomean(D/R)"), std::string::npos);
  EXPECT_NE(table.find("search time per graph"), std::string::npos);
}

}  // namespace
}  // namespace hlogym
