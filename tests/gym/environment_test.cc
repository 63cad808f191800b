#include "gym/environment.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <random>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "agents/evaluation.h"
#include "gym/vec_env.h"
#include "gym_test_util.h"
#include "passes/control_flow_test_util.h"
#include "scratch.h"
#include "text/corpus.h"

namespace hlogym {
namespace {

using testing::TestRegistry;
using testing::WriteTestModule;

EnvOptions TestOptions() {
  EnvOptions options;
  options.actions = {"test-dce", "test-add-zero", "test-noop", "test-fail", "test-throw"};
  options.traj_limit = 5;
  return options;
}

std::unique_ptr<Environment> MakeEnv(EnvOptions options = TestOptions()) {
  auto env = Environment::Create(std::move(options), TestRegistry());
  EXPECT_TRUE(env.ok()) << env.status();
  return std::move(*env);
}

const std::string& ModulePath() {
  static const std::string* path = new std::string(WriteTestModule("env.hlo"));
  return *path;
}

TEST(EnvironmentTest, CreateRejectsBadOptions) {
  EnvOptions options = TestOptions();
  options.actions = {"test-dce", "nope"};
  EXPECT_FALSE(Environment::Create(options, TestRegistry()).ok());
  options = TestOptions();
  options.observation_spaces = {"op_histogram", "pixels"};
  auto bad_obs = Environment::Create(options, TestRegistry());
  ASSERT_FALSE(bad_obs.ok());
  EXPECT_NE(bad_obs.status().message().find("pixels"), std::string::npos);
  options = TestOptions();
  options.reward_space = "speed";
  EXPECT_FALSE(Environment::Create(options, TestRegistry()).ok());
  options = TestOptions();
  options.actions = {"test-dce", "test-dce"};
  EXPECT_FALSE(Environment::Create(options, TestRegistry()).ok());
  // Empty actions = every registered pass.
  options = TestOptions();
  options.actions.clear();
  auto all = Environment::Create(options, TestRegistry());
  ASSERT_TRUE(all.ok());
  EXPECT_EQ((*all)->num_actions(), 5);
}

TEST(EnvironmentTest, BadBenchmarkIsAClearError) {
  auto env = MakeEnv();
  auto obs = env->Reset("no_such_benchmark_anywhere");
  ASSERT_FALSE(obs.ok());
  EXPECT_EQ(obs.status().code(), absl::StatusCode::kNotFound);
  EXPECT_NE(obs.status().message().find("no_such_benchmark_anywhere"), std::string::npos);
  const std::string garbage = WriteTestModule("garbage.hlo", "HloModule broken\nENTRY {{{");
  auto bad = env->Reset(garbage);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("garbage.hlo"), std::string::npos);
  EXPECT_FALSE(env->has_state());
  EXPECT_FALSE(env->Step(0).ok());  // not reset
}

TEST(EnvironmentTest, ResetStepAndTruncation) {
  auto env = MakeEnv();
  auto obs = env->Reset(ModulePath());
  ASSERT_TRUE(obs.ok()) << obs.status();
  EXPECT_EQ(env->op_count(), 7);
  ASSERT_EQ(obs->op_histogram.size(), static_cast<size_t>(kOpcodeCount));
  EXPECT_EQ(std::accumulate(obs->op_histogram.begin(), obs->op_histogram.end(), int64_t{0}), 7);

  auto step = env->Step(0);  // test-dce removes the dead multiply
  ASSERT_TRUE(step.ok());
  EXPECT_TRUE(step->info.changed);
  EXPECT_EQ(step->info.op_count, 6);
  EXPECT_EQ(step->info.previous_op_count, 7);
  EXPECT_DOUBLE_EQ(step->reward, -6.0 / 7.0);
  EXPECT_FALSE(step->terminated);
  EXPECT_FALSE(step->truncated);

  step = env->Step("test-add-zero");
  ASSERT_TRUE(step.ok());
  EXPECT_TRUE(step->info.changed);
  EXPECT_EQ(step->info.op_count, 6);  // the add is dead but still there
  step = env->Step(0);
  ASSERT_TRUE(step.ok());
  EXPECT_EQ(step->info.op_count, 4);  // add and constant gone
  step = env->Step(0);
  ASSERT_TRUE(step.ok());
  EXPECT_FALSE(step->info.changed);
  step = env->Step(2);
  ASSERT_TRUE(step.ok());
  EXPECT_TRUE(step->truncated);
  EXPECT_EQ(env->episode_length(), 5);
  auto over = env->Step(0);
  EXPECT_EQ(over.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(env->Step(99).status().code(), absl::StatusCode::kOutOfRange);
  EXPECT_FALSE(env->Step("not-an-action").ok());
}

TEST(EnvironmentTest, FailingPassesLeaveStateUnchanged) {
  auto env = MakeEnv();
  ASSERT_TRUE(env->Reset(ModulePath()).ok());
  const Fingerprint before = env->state()->fingerprint();
  for (int action : {3, 4}) {
    auto step = env->Step(action);
    ASSERT_TRUE(step.ok());
    EXPECT_FALSE(step->info.changed);
    EXPECT_FALSE(step->info.error.empty());
    EXPECT_EQ(env->state()->fingerprint(), before);
    EXPECT_EQ(env->module().entry_computation()->root_instruction()->name(), "r");
  }
  auto step = env->Step(4);
  EXPECT_NE(step->info.error.find("test-throw threw"), std::string::npos) << step->info.error;
}

TEST(EnvironmentTest, CacheHitsOnRevisit) {
  auto env = MakeEnv();
  ASSERT_TRUE(env->Reset(ModulePath()).ok());
  auto first = env->Step(0);
  ASSERT_TRUE(first.ok());
  EXPECT_FALSE(first->info.cache_hit);
  ASSERT_TRUE(env->Reset(ModulePath()).ok());
  auto second = env->Step(0);
  ASSERT_TRUE(second.ok());
  EXPECT_TRUE(second->info.cache_hit);
  EXPECT_EQ(second->info.op_count, first->info.op_count);
  EXPECT_EQ(second->reward, first->reward);
  EXPECT_GE(env->cache()->stats().hits, 1);

  EnvOptions options = TestOptions();
  options.use_cache = false;
  auto uncached = MakeEnv(options);
  ASSERT_TRUE(uncached->Reset(ModulePath()).ok());
  ASSERT_TRUE(uncached->Step(0).ok());
  ASSERT_TRUE(uncached->Reset(ModulePath()).ok());
  EXPECT_FALSE(uncached->Step(0)->info.cache_hit);
}

// What a step cost (StepInfo::ran, what a search's work budget counts): a
// pass that ran on the module, not one its pre-check ruled out, nor a cache
// hit.
TEST(EnvironmentTest, StepSaysWhetherThePassRan) {
  auto env = MakeEnv();
  ASSERT_TRUE(env->Reset(ModulePath()).ok());
  auto dce = env->Fork()->Step("test-dce");
  ASSERT_TRUE(dce.ok());
  EXPECT_TRUE(dce->info.ran);
  EXPECT_FALSE(dce->info.cache_hit);
  auto noop = env->Fork()->Step("test-noop");
  ASSERT_TRUE(noop.ok());
  EXPECT_FALSE(noop->info.ran);
  auto again = env->Fork()->Step("test-dce");
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE(again->info.cache_hit);
  EXPECT_FALSE(again->info.ran);
}

TEST(EnvironmentTest, CacheEvictsByInstructionBudget) {
  StepCache cache(10);
  auto env = Environment::Create(TestOptions(), TestRegistry(),
                                 std::shared_ptr<StepCache>(&cache, [](StepCache*) {}));
  ASSERT_TRUE(env.ok());
  ASSERT_TRUE((*env)->Reset(ModulePath()).ok());
  ASSERT_TRUE((*env)->Step(0).ok());  // 6 instructions held
  ASSERT_TRUE((*env)->Step(1).ok());  // 6 more: the first goes
  EXPECT_LE(cache.stats().instructions, 10);
  EXPECT_GE(cache.stats().evictions, 1);
}

TEST(EnvironmentTest, ActionMask) {
  auto env = MakeEnv();
  ASSERT_TRUE(env->Reset(ModulePath()).ok());
  EXPECT_EQ(env->ActionMask(), (std::vector<bool>{true, true, false, false, false}));
  // Stepping after the mask is a cache hit.
  EXPECT_TRUE(env->Step(0)->info.cache_hit);
  EXPECT_EQ(env->ActionMask(), (std::vector<bool>{false, true, false, false, false}));
}

TEST(EnvironmentTest, ForkIsIndependent) {
  auto env = MakeEnv();
  ASSERT_TRUE(env->Reset(ModulePath()).ok());
  ASSERT_TRUE(env->Step(0).ok());
  std::unique_ptr<Environment> fork = env->Fork();
  EXPECT_EQ(fork->op_count(), env->op_count());
  EXPECT_EQ(fork->episode_length(), 1);
  ASSERT_TRUE(fork->Step(1).ok());
  ASSERT_TRUE(fork->Step(0).ok());
  EXPECT_EQ(fork->op_count(), 4);
  EXPECT_EQ(env->op_count(), 6);
  EXPECT_EQ(env->episode_length(), 1);
  EXPECT_EQ(fork->cache(), env->cache());
}

TEST(EnvironmentTest, RecordReplayValidate) {
  auto env = MakeEnv();
  ASSERT_TRUE(env->Reset(ModulePath()).ok());
  for (int a : {1, 3, 0, 2}) ASSERT_TRUE(env->Step(a).ok());
  StateRecord record = env->record();
  EXPECT_EQ(record.passes,
            (std::vector<std::string>{"test-add-zero", "test-fail", "test-dce", "test-noop"}));
  EXPECT_EQ(record.op_count, 4);
  EXPECT_EQ(record.initial_op_count, 7);

  const std::string path = WriteTestModule("record.json", "");
  ASSERT_TRUE(record.WriteFile(path).ok());
  auto read = StateRecord::ReadFile(path);
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(read->passes, record.passes);
  EXPECT_EQ(read->fingerprint, record.fingerprint);
  EXPECT_EQ(read->benchmark, record.benchmark);

  auto other = MakeEnv();
  ASSERT_TRUE(other->Replay(*read).ok());
  EXPECT_EQ(other->op_count(), 4);
  EXPECT_EQ(other->state()->fingerprint().ToString(), record.fingerprint);

  ValidationResult v = env->Validate();  // with src/eval's checker
  EXPECT_TRUE(v.ok) << ::testing::PrintToString(v.errors);
  EXPECT_TRUE(v.op_count_ok && v.fingerprint_ok && v.verifier_ok && v.replay_ok);
  EXPECT_EQ(v.equivalence, "equivalent");
  SetEquivalenceChecker(nullptr);
  v = env->Validate();
  EXPECT_TRUE(v.ok);
  EXPECT_EQ(v.equivalence.rfind("not available", 0), 0u) << v.equivalence;

  // A checker, when installed, is used.
  int calls = 0;
  SetEquivalenceChecker([&](const Module& a, const Module& b) -> absl::StatusOr<bool> {
    ++calls;
    return a.entry_computation()->root_instruction()->shape() ==
           b.entry_computation()->root_instruction()->shape();
  });
  v = env->Validate();
  SetEquivalenceChecker(DefaultEquivalenceChecker());
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(v.equivalence, "equivalent");
  EXPECT_TRUE(v.ok);

  // Records with unknown passes or broken JSON are errors.
  StateRecord bad = record;
  bad.passes.push_back("no-such-pass");
  EXPECT_FALSE(other->Replay(bad).ok());
  EXPECT_FALSE(StateRecord::FromJson("{\"passes\": []}").ok());
  EXPECT_FALSE(StateRecord::FromJson("not json").ok());
}

TEST(EnvironmentTest, RewardSpaces) {
  EnvOptions options = TestOptions();
  options.reward_space = "op_count_decrease";
  auto env = MakeEnv(options);
  ASSERT_TRUE(env->Reset(ModulePath()).ok());
  EXPECT_DOUBLE_EQ(env->Step(0)->reward, 1.0);

  options.reward_space = "op_count_decrease_normalized";
  options.baseline = "passes:test-add-zero,test-dce";  // D = 4, I - D = 3
  env = MakeEnv(options);
  ASSERT_TRUE(env->Reset(ModulePath()).ok());
  EXPECT_EQ(*env->BaselineOpCount(), 4);
  double total = 0;
  for (int a : {1, 0}) total += env->Step(a)->reward;
  EXPECT_DOUBLE_EQ(total, 1.0);  // matched the baseline

  // log(previous / new): the episode's rewards sum to log(I / R).
  options.reward_space = "op_count_log_ratio";
  env = MakeEnv(options);
  ASSERT_TRUE(env->Reset(ModulePath()).ok());
  total = 0;
  for (int a : {2, 1, 0}) total += env->Step(a)->reward;
  EXPECT_DOUBLE_EQ(total, std::log(7.0 / 4.0));
  EXPECT_DOUBLE_EQ(env->Step(2)->reward, 0.0);  // no change, no reward

  options.reward_space = "op_count_decrease_normalized";
  options.baseline = "no-such-pipeline";
  env = MakeEnv(options);
  auto reset = env->Reset(ModulePath());
  ASSERT_FALSE(reset.ok());
  EXPECT_NE(reset.status().message().find("no-such-pipeline"), std::string::npos);

  // Shaping: Phi = -(flops + 2 * transcendentals) / scale; removing the dead
  // multiply lowers the flops.
  options.reward_space = "op_count_decrease+shaped";
  options.gamma = 0.9;
  env = MakeEnv(options);
  ASSERT_TRUE(env->Reset(ModulePath()).ok());
  const CostFeatures c0 = env->state()->cost();
  const double scale = std::max(1.0, c0.flops + 2 * c0.transcendentals);
  auto step = env->Step(0);
  const CostFeatures c1 = env->state()->cost();
  const double phi0 = -(c0.flops + 2 * c0.transcendentals) / scale;
  const double phi1 = -(c1.flops + 2 * c1.transcendentals) / scale;
  EXPECT_NEAR(step->reward, 1.0 + 0.9 * phi1 - phi0, 1e-12);
  EXPECT_DOUBLE_EQ(phi0, -1.0);
}

TEST(EnvironmentTest, ObservationSpaces) {
  EnvOptions options = TestOptions();
  options.observation_spaces = {"op_histogram", "cost", "autophase", "action_history", "graph"};
  auto env = MakeEnv(options);
  auto obs = env->Reset(ModulePath());
  ASSERT_TRUE(obs.ok());
  EXPECT_EQ(obs->cost.size(), 3u);
  EXPECT_GT(obs->cost[0], 0);  // flops
  EXPECT_GT(obs->cost[1], 0);  // exp and tanh
  ASSERT_EQ(obs->autophase.size(), AutophaseFeatureNames().size());
  EXPECT_EQ(obs->autophase[0], 7);
  EXPECT_EQ(obs->action_history, (std::vector<int64_t>(5, 0)));
  ASSERT_TRUE(obs->graph.has_value());
  EXPECT_EQ(obs->graph->num_nodes, 7);
  EXPECT_EQ(obs->graph->node_features.size(), 7u * GraphObservation::kNodeFeatures);
  EXPECT_EQ(obs->graph->num_edges, 7);  // multiply 2, add 2, exp, tanh, negate
  EXPECT_EQ(obs->graph->edge_links.size(), 14u);
  EXPECT_EQ(GraphNodeFeatureNames().size(), static_cast<size_t>(GraphObservation::kNodeFeatures));
  auto step = env->Step(0);
  EXPECT_EQ(step->observation.action_history, (std::vector<int64_t>{1, 0, 0, 0, 0}));
  EXPECT_EQ(step->observation.graph->num_nodes, 6);
}

TEST(EnvironmentTest, VecEnvironmentMatchesSerial) {
  auto vec = VecEnvironment::Create(4, 2, TestOptions(), TestRegistry());
  ASSERT_TRUE(vec.ok());
  for (const auto& r : (*vec)->Reset({ModulePath()})) ASSERT_TRUE(r.ok());
  std::vector<std::vector<int>> plans = {{0, 1, 0}, {1, 0, 0}, {3, 4, 2}, {1, 1, 0}};
  for (int t = 0; t < 3; ++t) {
    std::vector<int> actions;
    for (const auto& plan : plans) actions.push_back(plan[t]);
    for (const auto& r : (*vec)->Step(actions)) ASSERT_TRUE(r.ok()) << r.status();
  }
  for (int i = 0; i < 4; ++i) {
    auto serial = MakeEnv();
    ASSERT_TRUE(serial->Reset(ModulePath()).ok());
    for (int a : plans[i]) ASSERT_TRUE(serial->Step(a).ok());
    EXPECT_EQ((*vec)->env(i).state()->fingerprint(), serial->state()->fingerprint()) << i;
  }
  EXPECT_EQ((*vec)->Step({0}).front().status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(EnvironmentTest, ThreadPoolRunsEverything) {
  ThreadPool pool(3);
  // Back-to-back loops of every size (each index exactly once), loops longer than the 16-bit
  // index of one claim word, and loops after the workers went to sleep.
  for (int n : {0, 1, 2, 3, 97, 70000}) {
    for (int round = 0; round < 200; ++round) {
      std::vector<int> hit(n, 0);
      pool.ParallelFor(n, [&](int i) { hit[i]++; });
      EXPECT_EQ(std::count(hit.begin(), hit.end(), 1), n) << "n=" << n << " round " << round;
      if (n == 70000 && round == 2) break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
}

// Puts a negate on top of the entry root: one instruction more per run.
class TestGrow : public Pass {
 public:
  std::string_view name() const override { return "test-grow"; }
  absl::StatusOr<bool> Run(Module& module) override {
    Computation* entry = module.entry_computation();
    Instruction* root = entry->root_instruction();
    auto negate = std::make_unique<Instruction>(Opcode::kNegate, root->shape());
    negate->AppendOperand(root);
    entry->set_root_instruction(entry->AddInstruction(std::move(negate)));
    return true;
  }
};

const PassRegistry& GrowRegistry() {
  static const PassRegistry* registry = [] {
    auto* r = new PassRegistry();
    r->Register({"test-grow", "grows", [] { return std::make_unique<TestGrow>(); }});
    r->Register({"test-dce", "dce", [] { return std::make_unique<testing::TestDce>(); }});
    return r;
  }();
  return *registry;
}

EnvOptions GrowOptions(double growth, int64_t allowance) {
  EnvOptions options;
  options.actions = {"test-grow", "test-dce"};
  options.reward_space = "op_count_decrease";
  options.traj_limit = 0;
  options.max_op_count_growth = growth;
  options.op_count_growth_allowance = allowance;
  return options;
}

TEST(EnvironmentTest, GrowthGuardRejectsStepsPastTheLimit) {
  auto shared = std::make_shared<StepCache>();
  // 7 instructions; the limit is 1 x 7 + 3 = 10.
  auto env = Environment::Create(GrowOptions(1.0, 3), GrowRegistry(), shared);
  ASSERT_TRUE(env.ok()) << env.status();
  Environment& guarded = **env;
  ASSERT_TRUE(guarded.Reset(ModulePath()).ok());
  ASSERT_EQ(guarded.op_count(), 7);
  for (int expected : {8, 9, 10}) {
    auto step = guarded.Step(0);
    ASSERT_TRUE(step.ok());
    EXPECT_TRUE(step->info.changed);
    EXPECT_TRUE(step->info.error.empty()) << step->info.error;
    EXPECT_EQ(guarded.op_count(), expected);
  }
  const Fingerprint at_limit = guarded.state()->fingerprint();
  for (int i = 0; i < 2; ++i) {  // uncached, then a cache hit: rejected both times
    auto rejected = guarded.Step(0);
    ASSERT_TRUE(rejected.ok());
    EXPECT_EQ(rejected->info.cache_hit, i == 1);
    EXPECT_FALSE(rejected->info.changed);
    EXPECT_NE(rejected->info.error.find("step rejected"), std::string::npos)
        << rejected->info.error;
    EXPECT_NE(rejected->info.error.find("limit of 10"), std::string::npos);
    EXPECT_EQ(rejected->info.op_count, 10);
    EXPECT_EQ(rejected->reward, 0);
    EXPECT_EQ(guarded.state()->fingerprint(), at_limit);
  }
  // test-grow no longer changes anything; test-dce (the dead multiply) still does.
  EXPECT_EQ(guarded.ActionMask(), (std::vector<bool>{false, true}));
  // The record (with its rejected steps) replays to the same state and validates.
  ValidationResult validation = guarded.Validate();
  EXPECT_TRUE(validation.replay_ok && validation.op_count_ok && validation.fingerprint_ok)
      << absl::StrJoin(validation.errors, "; ");

  // The cache holds the unguarded result: an environment without the guard
  // sharing it takes the step (a cache hit).
  auto open = Environment::Create(GrowOptions(0, 0), GrowRegistry(), shared);
  ASSERT_TRUE(open.ok());
  ASSERT_TRUE((*open)->Reset(ModulePath()).ok());
  for (int i = 0; i < 20; ++i) ASSERT_TRUE((*open)->Step(0).ok());
  EXPECT_EQ((*open)->op_count(), 27);
  EXPECT_GE(shared->stats().hits, 3);
}

TEST(EnvironmentTest, GrowthGuardStopsAPassThatWouldBuildPastIt) {
  // 60 iterations inside 60: while_loop_unroller makes them over 10,000 instructions.
  const std::string text = testing::NestedLoops({{"inner", 60}, {"outer", 60}});
  const std::string path = WriteTestModule("nested_loops.hlo", text.c_str());
  auto shared = std::make_shared<StepCache>();
  EnvOptions options;
  options.actions = {"while_loop_unroller"};
  options.max_op_count_growth = 1;
  options.op_count_growth_allowance = 100;  // the limit: I + 100
  auto guarded = Environment::Create(options, PassRegistry::Builtin(), shared);
  ASSERT_TRUE(guarded.ok()) << guarded.status();
  ASSERT_TRUE((*guarded)->Reset(path).ok());
  const int64_t limit = (*guarded)->op_count() + 100;
  const Fingerprint before = (*guarded)->state()->fingerprint();
  auto rejected = (*guarded)->Step(0);
  ASSERT_TRUE(rejected.ok());
  EXPECT_FALSE(rejected->info.changed);
  // Stopped during the unroll, a copy past the limit, rather than refused once all was built.
  EXPECT_THAT(rejected->info.error,
              ::testing::HasSubstr("step rejected: while_loop_unroller stopped at"));
  EXPECT_THAT(rejected->info.error,
              ::testing::HasSubstr(absl::StrCat("past the limit of ", limit, " ")));
  EXPECT_EQ((*guarded)->state()->fingerprint(), before);

  // The stop is not cached: an environment without the guard sharing the cache unrolls.
  options.max_op_count_growth = 0;
  auto open = Environment::Create(options, PassRegistry::Builtin(), shared);
  ASSERT_TRUE(open.ok());
  ASSERT_TRUE((*open)->Reset(path).ok());
  auto unrolled = (*open)->Step(0);
  ASSERT_TRUE(unrolled.ok());
  EXPECT_FALSE(unrolled->info.cache_hit);
  EXPECT_TRUE(unrolled->info.changed) << unrolled->info.error;
  EXPECT_GT((*open)->op_count(), 10'000);
}

TEST(EnvironmentTest, GrowthGuardNeverRejectsShrinkingSteps) {
  // A limit below the initial size (0.5 x 7) still lets a step that shrinks through.
  auto env = Environment::Create(GrowOptions(0.5, 0), GrowRegistry());
  ASSERT_TRUE(env.ok());
  ASSERT_TRUE((*env)->Reset(ModulePath()).ok());
  auto grow = (*env)->Step(0);
  ASSERT_TRUE(grow.ok());
  EXPECT_FALSE(grow->info.changed);
  EXPECT_FALSE(grow->info.error.empty());
  auto shrink = (*env)->Step(1);  // test-dce removes the dead multiply
  ASSERT_TRUE(shrink.ok());
  EXPECT_TRUE(shrink->info.changed);
  EXPECT_TRUE(shrink->info.error.empty()) << shrink->info.error;
  EXPECT_EQ((*env)->op_count(), 6);
}

TEST(EnvironmentTest, GrowthGuardDefaultsLeaveRoomToExpand) {
  EnvOptions defaults;
  EXPECT_GT(defaults.max_op_count_growth, 1);
  EXPECT_GT(defaults.op_count_growth_allowance, 1000);
  EnvOptions options =
      GrowOptions(defaults.max_op_count_growth, defaults.op_count_growth_allowance);
  auto env = Environment::Create(options, GrowRegistry());
  ASSERT_TRUE(env.ok());
  ASSERT_TRUE((*env)->Reset(ModulePath()).ok());
  for (int i = 0; i < 200; ++i) {
    auto step = (*env)->Step(0);
    ASSERT_TRUE(step.ok());
    ASSERT_TRUE(step->info.error.empty()) << step->info.error;
  }
  EXPECT_EQ((*env)->op_count(), 207);
}

TEST(BenchmarkTest, ResolvesADatasetFoldersModulesByName) {
  const std::string folder = std::string(HLOGYM_SOURCE_DIR) + "/datasets/pytorch";
  const Corpus& dataset = Corpus::InFolder(folder);
  ASSERT_TRUE(dataset.loaded()) << dataset.error();
  const CorpusModule& m = dataset.modules().front();
  for (const std::string& spec :
       {folder + "/" + m.name, folder + "/" + m.family + "/" + m.name, "datasets/pytorch/" + m.name,
        "pytorch/" + m.family + "/" + m.name}) {
    auto path = ResolveBenchmarkPath(spec);
    ASSERT_TRUE(path.ok()) << spec << ": " << path.status();
    EXPECT_EQ(*path, m.path) << spec;
  }
  // Names the manifest does not list, or under a family that is not the module's, do not resolve.
  EXPECT_FALSE(ResolveBenchmarkPath(folder + "/no_such_module").ok());
  EXPECT_FALSE(ResolveBenchmarkPath(folder + "/gpt2/" + m.name).ok());
}

TEST(BenchmarkTest, ADatasetFolderTakesASplitOnlyWhenGivenOne) {
  const std::string folder = std::string(HLOGYM_SOURCE_DIR) + "/datasets/pytorch";
  const Corpus& dataset = Corpus::InFolder(folder);
  size_t in_test = 0;
  for (const CorpusModule& m : dataset.modules()) in_test += m.split == "test";
  ASSERT_GT(in_test, 0u);
  ASSERT_LT(in_test, dataset.modules().size());
  auto whole = ResolveSuite({folder}, "test");  // the CLI's default corpus split: folder whole
  ASSERT_TRUE(whole.ok()) << whole.status();
  EXPECT_EQ(whole->size(), dataset.modules().size());
  auto test = ResolveSuite({folder}, "test", "test");
  ASSERT_TRUE(test.ok()) << test.status();
  EXPECT_EQ(test->size(), in_test);
  for (const std::string& path : *test) EXPECT_EQ(dataset.FindByPath(path)->split, "test");
  auto by_name = ResolveSuite({"pytorch"}, "test", "test");  // a shipped dataset's name
  ASSERT_TRUE(by_name.ok()) << by_name.status();
  EXPECT_EQ(*by_name, *test);
  auto none = ResolveSuite({folder}, "", "no-such-split");
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.status().message().find("no module in split 'no-such-split'"), std::string::npos);
}

TEST(BenchmarkTest, ResolvesSmokeNamesAndSuites) {
  auto path = ResolveBenchmarkPath("mlp_infer");
  ASSERT_TRUE(path.ok()) << path.status();
  EXPECT_NE(path->find("datasets/smoke/mlp_infer.hlo"), std::string::npos);
  EXPECT_TRUE(ResolveBenchmarkPath("smoke/mlp_infer").ok());
  EXPECT_TRUE(ResolveBenchmarkPath("benchmark://datasets/smoke/mlp_infer.hlo").ok());
  auto specs = ExpandBenchmarkLocs({"datasets/smoke/default_suite.txt"});
  ASSERT_TRUE(specs.ok()) << specs.status();
  EXPECT_GE(specs->size(), 5u);
  auto dir = ExpandBenchmarkLocs({"datasets/smoke"});
  ASSERT_TRUE(dir.ok());
  for (const std::string& s : *dir) EXPECT_EQ(s.find(".optimized."), std::string::npos) << s;
  EXPECT_FALSE(ExpandBenchmarkLocs({}).ok());
  auto benchmark = LoadBenchmark("mlp_infer");
  ASSERT_TRUE(benchmark.ok()) << benchmark.status();
  EXPECT_GT(benchmark->initial->op_count(), 10);
  // Loaded once.
  EXPECT_EQ(LoadBenchmark("smoke/mlp_infer")->initial, benchmark->initial);
}

// An absolute path is one file: the error says it is missing, not where a
// name was looked up.
TEST(BenchmarkTest, AMissingAbsolutePathIsNoSuchFile) {
  auto path = ResolveBenchmarkPath("/no/such/dir/module.hlo");
  ASSERT_FALSE(path.ok());
  EXPECT_EQ(path.status().message(), "unknown benchmark '/no/such/dir/module.hlo': no such file");
  auto name = ResolveBenchmarkPath("no_such_module");
  ASSERT_FALSE(name.ok());
  EXPECT_NE(name.status().message().find("not a smoke module"), std::string::npos) << name.status();
}

// A folder with a manifest of the corpus's form is the suite of the modules
// it lists (its family folders hold the files); X comes from that manifest.
TEST(BuiltinGymTest, DatasetFolderIsTheSuiteItsManifestLists) {
  const std::filesystem::path folder =
      std::filesystem::path(HLOGYM_SOURCE_DIR) / "datasets" / "xla_optimized";
  auto specs = ExpandBenchmarkLocs({folder.string()});
  ASSERT_TRUE(specs.ok()) << specs.status();
  const std::vector<CorpusModule>& listed = Corpus::InFolder(folder.string()).modules();
  ASSERT_EQ(specs->size(), listed.size());
  for (size_t i = 0; i < listed.size(); ++i) {
    EXPECT_EQ((*specs)[i], listed[i].path);
    EXPECT_NE((*specs)[i].find("xla_optimized"), std::string::npos);
  }
  EXPECT_EQ(ManifestX(listed.front().name, listed.front().path), listed.front().X);
  ASSERT_TRUE(listed.front().X.has_value());

  const std::filesystem::path broken = testing::FreshScratchPath("broken_dataset");
  std::filesystem::create_directories(broken);
  std::ofstream(broken / "manifest.json") << "{\"modules\": [";
  auto error = ExpandBenchmarkLocs({broken.string()});
  ASSERT_FALSE(error.ok());
  EXPECT_NE(error.status().message().find("manifest.json"), std::string::npos) << error.status();
}

// Random episodes with the built-in passes on the smoke suite (and corpus
// modules when the corpus exists): replays and validates.
TEST(BuiltinGymTest, RandomEpisodesReplayAndValidate) {
  if (PassRegistry::Builtin().passes().empty()) FAIL() << "no built-in passes yet";
  EnvOptions options;
  options.traj_limit = 6;
  // algsimp's result varies from run to run on some modules (Validate reports
  // it); it is left out here until that is fixed.
  for (const PassInfo& info : PassRegistry::Builtin().passes()) {
    if (info.name != "algsimp") options.actions.push_back(info.name);
  }
  auto env = Environment::Create(options);
  ASSERT_TRUE(env.ok()) << env.status();
  std::vector<std::string> benchmarks = {"mlp_train", "control_flow", "topk_sort", "lstm_infer"};
  std::vector<std::string> corpus = CorpusBenchmarkNames();
  for (size_t i = 0; i < corpus.size() && i < 5; ++i) benchmarks.push_back(corpus[i]);
  std::mt19937 rng(7);
  for (const std::string& b : benchmarks) {
    auto obs = (*env)->Reset(b);
    ASSERT_TRUE(obs.ok()) << b << ": " << obs.status();
    bool truncated = false;
    while (!truncated) {
      auto step = (*env)->Step(static_cast<int>(rng() % (*env)->num_actions()));
      ASSERT_TRUE(step.ok()) << step.status();
      EXPECT_TRUE(step->info.error.empty()) << b << ": " << step->info.error;
      truncated = step->truncated;
    }
    ValidationResult v = (*env)->Validate();
    EXPECT_TRUE(v.ok) << b << ": " << ::testing::PrintToString(v.errors);
  }
}

// A module compiled for several partitions is answered split: a state that
// is not (XLA would split it again, collectives and all) fails validation with
// the reason, and one the default pipeline split is checked per partition.
TEST(BuiltinGymTest, AStateNotSplitForItsPartitionsIsNoAnswer) {
  const std::string path = WriteTestModule("data_parallel.hlo", R"(HloModule dp, num_partitions=4

%sum (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(%a, %b)
}

ENTRY %main (w: f32[16,8], x: f32[32,16]) -> f32[] {
  %w = f32[16,8] parameter(0), sharding={replicated}
  %x = f32[32,16] parameter(1), sharding={devices=[4,1]<=[4]}
  %y = f32[32,8] dot(%x, %w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  %t = f32[32,8] tanh(%y)
  %zero = f32[] constant(0)
  ROOT %loss = f32[] reduce(%t, %zero), dimensions={0,1}, to_apply=%sum
}
)");
  EnvOptions options;
  options.actions = {"xla-cpu-default", "tuple-simplifier"};
  auto env = Environment::Create(options, PassRegistry::WithPipelines());
  ASSERT_TRUE(env.ok()) << env.status();
  ASSERT_TRUE((*env)->Reset(path).ok());
  ValidationResult unsplit = (*env)->Validate();
  EXPECT_FALSE(unsplit.ok);
  EXPECT_THAT(unsplit.equivalence, ::testing::HasSubstr("not split for its 4 partitions"));
  ASSERT_TRUE((*env)->Step(0).ok());
  ValidationResult split = (*env)->Validate();
  EXPECT_TRUE(split.ok) << ::testing::PrintToString(split.errors);
  EXPECT_EQ(split.equivalence, "equivalent");
}

// lowest_op_count_log_ratio earns only for a new lowest op count of the
// episode (cse and dce shrink lstm_infer, the unroller grows it, dce after it
// stays above the lowest); op_count_log_ratio charges the growth.
TEST(BuiltinGymTest, TheLowestOpCountRewardEarnsOnlyForANewLowest) {
  EnvOptions options;
  options.actions = {"cse", "dce", "while_loop_unroller"};
  options.traj_limit = 0;
  for (const std::string reward : {"lowest_op_count_log_ratio", "op_count_log_ratio"}) {
    options.reward_space = reward;
    auto env = Environment::Create(options);
    ASSERT_TRUE(env.ok()) << env.status();
    ASSERT_TRUE((*env)->Reset("lstm_infer").ok());
    int64_t lowest = (*env)->op_count();
    std::vector<int64_t> counts;
    for (int action : {0, 1, 2, 1}) {
      auto step = (*env)->Step(action);
      ASSERT_TRUE(step.ok()) << step.status();
      const double n = step->info.op_count, previous = step->info.previous_op_count;
      counts.push_back(step->info.op_count);
      const double expected = reward == "op_count_log_ratio"
                                  ? std::log(previous / n)
                                  : std::log(lowest / std::min<double>(lowest, n));
      EXPECT_NEAR(step->reward, expected, 1e-12) << reward << " after " << action;
      lowest = std::min(lowest, step->info.op_count);
    }
    ASSERT_GT(counts[2], counts[1]) << "the unroller should grow lstm_infer";
    ASSERT_GT(counts[3], counts[1]);
    if (reward != "op_count_log_ratio") {
      EXPECT_NEAR((*env)->episode_reward(),
                  std::log(static_cast<double>((*env)->initial_op_count()) / counts[1]), 1e-12);
    }
  }
}

// A sequence (names joined by '+') is one action that ends where its passes,
// stepped one by one, end; a sequence naming an unknown pass is refused.
TEST(BuiltinGymTest, ASequenceStepsAsItsPassesDo) {
  const std::vector<std::string> parts = {"xla-cpu-simplification", "cse", "dce"};
  const std::string sequence = absl::StrJoin(parts, "+");
  EnvOptions options;
  options.actions = parts;
  options.actions.push_back(sequence);
  auto env = Environment::Create(options, PassRegistry::WithPipelines());
  ASSERT_TRUE(env.ok()) << env.status();
  for (const char* benchmark : {"mlp_train", "lstm_infer"}) {
    ASSERT_TRUE((*env)->Reset(benchmark).ok());
    std::unique_ptr<Environment> whole = (*env)->Fork();
    for (const std::string& part : parts) ASSERT_TRUE((*env)->Step(part).ok());
    auto step = whole->Step(sequence);
    ASSERT_TRUE(step.ok()) << step.status();
    EXPECT_TRUE(step->info.changed) << benchmark;
    EXPECT_EQ(whole->state()->fingerprint(), (*env)->state()->fingerprint()) << benchmark;
    EXPECT_TRUE(whole->Validate().ok) << benchmark;
  }
  EXPECT_TRUE(PassRegistry::WithPipelines().Knows(sequence));
  EXPECT_FALSE(PassRegistry::Builtin().Knows(sequence));  // no pipelines there
  for (const std::string bad : {"cse+no-such-pass", "cse+", "+cse"}) {
    EXPECT_FALSE(PassRegistry::WithPipelines().Knows(bad)) << bad;
    options.actions = {bad};
    auto refused = Environment::Create(options, PassRegistry::WithPipelines());
    ASSERT_FALSE(refused.ok()) << bad;
    EXPECT_NE(refused.status().message().find(absl::StrCat("'", bad, "'")), std::string::npos)
        << refused.status();
  }
}

}  // namespace
}  // namespace hlogym
