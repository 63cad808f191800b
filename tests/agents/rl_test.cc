// Deep RL (agents/rl): the features, that every algorithm trains and writes a
// loadable policy, that PPO learns on a small problem, determinism per seed,
// resume from a checkpoint, refusing to overwrite a directory that is not a
// training run, the policy agents, and the gnn network: it learns the small
// problem too, its policy files round-trip, and a batch of graphs gives what
// each graph gives alone.
#include "agents/rl/rl.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "agents/agent.h"
#include "agents/agent_test_util.h"
#include "agents/coreset_agent.h"
#include "agents/rl/features.h"
#include "agents/search.h"
#include "hlo/opcode.h"
#include "hlo/primitive_type.h"
#include "scratch.h"

namespace hlogym::rl {
namespace {

namespace fs = std::filesystem;

// Two passes that shrink mlp_train and four that never change it.
const std::vector<std::string> kActions = {
    "algsimp", "cse", "dce", "sharding-remover", "cse_barrier_expander", "map-inline"};

// A training run's folder, empty; the RlGnn fixture of every test process trains into its
// own "gnn" folder.
std::string FreshDir(const std::string& name) { return testing::FreshScratchPath(name).string(); }

TrainOptions SmallRun(const std::string& algo, const std::string& dir, int64_t steps) {
  TrainOptions o;
  o.algo = algo;
  o.benchmarks = {"smoke/mlp_train"};
  o.out_dir = dir;
  o.total_steps = steps;
  o.env.actions = kActions;
  o.env.traj_limit = 4;
  o.hidden = {32};
  o.num_envs = 2;
  o.num_threads = 1;
  o.rollout_steps = 32;
  o.minibatch = 16;
  o.epochs = 4;
  o.dqn.learning_starts = 16;
  o.dqn.target_update = 32;
  o.dqn.train_every = 2;
  o.checkpoint_every = 64;
  o.seed = 7;
  return o;
}

// Trains `options` and rolls the saved policy (policy:DIR) out once on
// smoke/mlp_train, as `hlogym eval --agent policy:DIR` would.
absl::StatusOr<SearchResult> TrainAndRollOut(const TrainOptions& options) {
  if (absl::StatusOr<TrainSummary> summary = Train(options); !summary.ok()) {
    return summary.status();
  }
  RegisterPolicyAgents();
  absl::StatusOr<std::unique_ptr<Agent>> policy = MakeAgent("policy:" + options.out_dir);
  if (!policy.ok()) return policy.status();
  return (*policy)->Optimize("smoke/mlp_train", {});
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The curve's rows without the timing columns (steps_per_second, wall_seconds).
std::vector<std::string> CurveWithoutTimings(const std::string& path) {
  std::vector<std::string> rows;
  std::istringstream in(ReadFile(path));
  std::string line;
  while (std::getline(in, line)) {
    std::vector<std::string> cells;
    std::stringstream cell_stream(line);
    std::string cell;
    while (std::getline(cell_stream, cell, ',')) cells.push_back(cell);
    if (cells.size() != 12) {
      ADD_FAILURE() << "bad curve row: " << line;
      continue;
    }
    rows.push_back(cells[0] + "," + cells[1] + "," + cells[2] + "," + cells[3] + "," + cells[4] +
                   "," + cells[5] + "," + cells[6] + "," + cells[7] + "," + cells[8] + "," +
                   cells[10]);
  }
  return rows;
}

TEST(RlFeatures, EncodesHistogramProgressAndHistory) {
  Observation obs;
  obs.op_histogram.assign(kOpcodeCount, 0);
  obs.op_histogram[0] = 3;
  obs.op_histogram[5] = 1;
  obs.action_history = {0, 2, 0};
  FeatureLayout layout{3, 10};
  ASSERT_EQ(layout.policy_size(), kOpcodeCount + 2 + 3);
  std::vector<float> f(layout.policy_size());
  EncodePolicyFeatures(obs, /*initial_op_count=*/8, /*step=*/4, layout, f.data());
  EXPECT_FLOAT_EQ(f[0], std::log1p(3.0f));
  EXPECT_FLOAT_EQ(f[5], std::log1p(1.0f));
  EXPECT_FLOAT_EQ(f[1], 0.0f);
  EXPECT_NEAR(f[kOpcodeCount], std::log(4.0 / 8.0), 1e-6);  // 4 instructions left of 8
  EXPECT_FLOAT_EQ(f[kOpcodeCount + 1], 0.4f);
  EXPECT_FLOAT_EQ(f[kOpcodeCount + 3], 0.5f);  // action 1 applied twice

  // Relative features: each opcode's log share of the op count (4 here).
  FeatureLayout relative{3, 10, /*relative_histogram=*/true};
  std::vector<float> r(relative.policy_size());
  EncodePolicyFeatures(obs, 8, 4, relative, r.data());
  EXPECT_FLOAT_EQ(r[0], std::log1p(3.0f) - std::log1p(4.0f));
  EXPECT_FLOAT_EQ(r[1], -std::log1p(4.0f));
  EXPECT_EQ(std::vector<float>(r.begin() + kOpcodeCount, r.end()),
            std::vector<float>(f.begin() + kOpcodeCount, f.end()));

  obs.cost = {100, 0, 5};
  std::vector<float> c(FeatureLayout::kCostSize);
  EncodeCostFeatures(obs, {1000, 0, 5}, c.data());
  EXPECT_NEAR(c[0], std::log1p(100.0) - std::log1p(1000.0), 1e-5);
  EXPECT_FLOAT_EQ(c[1], 0.0f);
}

TEST(RlFeatures, EncodesTheGraphObservation) {
  // Two nodes: a parameter (f32[8,3]) feeding the root negate, an operand
  // edge, a control edge and a call edge.
  GraphObservation graph;
  graph.num_nodes = 2;
  graph.node_features = {static_cast<int64_t>(Opcode::kParameter),
                         static_cast<int64_t>(PrimitiveType::kF32),
                         2,
                         8,
                         3,
                         -1,
                         -1,
                         24,
                         0,
                         1,
                         0,
                         0,
                         static_cast<int64_t>(Opcode::kNegate),
                         static_cast<int64_t>(PrimitiveType::kF32),
                         2,
                         8,
                         3,
                         -1,
                         -1,
                         24,
                         1,
                         0,
                         1,
                         0};
  graph.num_edges = 3;
  graph.edge_links = {0, 1, 0, 1, 1, 0};
  graph.edge_features = {0, 0, 1, 0, 2, 0};  // operand, control, call
  GraphFeatures g = EncodeGraph(graph);
  ASSERT_EQ(g.num_nodes, 2);
  EXPECT_EQ(g.opcodes, (std::vector<int16_t>{static_cast<int16_t>(Opcode::kParameter),
                                             static_cast<int16_t>(Opcode::kNegate)}));
  EXPECT_EQ(g.element_types[1], static_cast<int16_t>(PrimitiveType::kF32));
  ASSERT_EQ(g.node_values.size(), 2u * GraphFeatures::kNodeValues);
  const float* negate = &g.node_values[GraphFeatures::kNodeValues];
  EXPECT_FLOAT_EQ(negate[0], 0.5f);               // rank / 4
  EXPECT_FLOAT_EQ(negate[1], std::log1p(8.0f));   // dim0
  EXPECT_FLOAT_EQ(negate[3], 0.0f);               // no dim2
  EXPECT_FLOAT_EQ(negate[5], std::log1p(24.0f));  // elements
  EXPECT_FLOAT_EQ(negate[8], 1.0f);               // the root
  // The control edge is left out.
  EXPECT_EQ(g.edge_sources, (std::vector<int32_t>{0, 1}));
  EXPECT_EQ(g.edge_targets, (std::vector<int32_t>{1, 0}));
}

TEST(RlTrain, EveryAlgorithmTrainsAndWritesALoadablePolicy) {
  for (const std::string& algo : AlgorithmNames()) {
    SCOPED_TRACE(algo);
    const std::string dir = FreshDir("algo_" + algo);
    TrainOptions o = SmallRun(algo, dir, 128);
    o.value_sees_cost = algo != "dqn";
    o.reward_shaping = algo == "ppo";
    absl::StatusOr<TrainSummary> summary = Train(o);
    ASSERT_TRUE(summary.ok()) << summary.status();
    EXPECT_EQ(summary->steps, 128);
    EXPECT_GT(summary->episodes, 0);
    EXPECT_TRUE(fs::exists(dir + "/policy.pt"));
    EXPECT_TRUE(fs::exists(dir + "/checkpoint.json"));
    std::vector<std::string> rows = CurveWithoutTimings(dir + "/curve.csv");
    ASSERT_GE(rows.size(), 2u);  // header + at least one update
    std::string last = ReadFile(dir + "/curve.csv");
    EXPECT_EQ(last.find("nan,nan,nan,nan"), std::string::npos) << "an update without losses:\n"
                                                               << last;

    RegisterPolicyAgents();
    absl::StatusOr<std::unique_ptr<Agent>> agent = MakeAgent("policy:" + dir);
    ASSERT_TRUE(agent.ok()) << agent.status();
    absl::StatusOr<SearchResult> result = (*agent)->Optimize("smoke/mlp_train", {});
    ASSERT_TRUE(result.ok()) << result.status();
    EXPECT_LE(result->passes.size(), 4u);
    EXPECT_LE(result->op_count, result->initial_op_count);
    fs::remove_all(dir);
  }
}

// --start xla-cpu-default: every episode, in training and in the policy's
// rollouts, begins at D, so the policy's own answer is never above it; with
// "initial,xla-cpu-default" the agent rolls out once, from the lower of them;
// a start that is not an action is refused.
TEST(RlTrain, EpisodesStartWhereTheStartActionLeads) {
  TrainOptions o = SmallRun("ppo", FreshDir("start"), 64);
  o.env.actions.push_back("xla-cpu-default");
  o.start = "xla-cpu-default";
  absl::StatusOr<SearchResult> result = TrainAndRollOut(o);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_TRUE(result->fallback.empty()) << result->fallback;
  ASSERT_FALSE(result->passes.empty());
  EXPECT_EQ(result->passes.front(), "xla-cpu-default");
  EXPECT_LE(result->op_count, DefaultOpCount("smoke/mlp_train"));

  TrainOptions both = SmallRun("ppo", FreshDir("start-both"), 64);
  both.env.actions.push_back("xla-cpu-default");
  both.start = "initial,xla-cpu-default";
  absl::StatusOr<SearchResult> both_result = TrainAndRollOut(both);
  ASSERT_TRUE(both_result.ok()) << both_result.status();
  EXPECT_TRUE(both_result->fallback.empty()) << both_result->fallback;
  // One rollout, from the lower start (D: 100 against I's 175): the start's
  // step and at most traj_limit - 1 policy steps after it, not a second
  // rollout from I.
  EXPECT_LE(both_result->steps, o.env.traj_limit);
  EXPECT_EQ(both_result->passes.front(), "xla-cpu-default");
  EXPECT_LE(both_result->op_count, DefaultOpCount("smoke/mlp_train"));

  TrainOptions bad = SmallRun("ppo", FreshDir("start-bad"), 64);
  bad.start = "no-such-pass";
  absl::StatusOr<TrainSummary> refused = Train(bad);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("--start no-such-pass"), std::string::npos)
      << refused.status();
}

// --start coreset: the coreset model's choice for each graph (its sequences
// are actions with --sequences coreset), in training and in the policy's
// rollouts; a policy without the sequences among its actions is refused.
TEST(RlTrain, CoresetStartIsTheCoresetModelsChoice) {
  absl::StatusOr<CoresetModel> coreset = CoresetModel::Load(DefaultCoresetPath());
  ASSERT_TRUE(coreset.ok()) << coreset.status();
  EnvOptions env_options;
  env_options.actions = {std::string(kDefaultPipeline)};
  absl::StatusOr<std::unique_ptr<Environment>> env =
      Environment::Create(env_options, PassRegistry::WithPipelines());
  ASSERT_TRUE(env.ok()) << env.status();
  ASSERT_TRUE((*env)->Reset("smoke/mlp_train").ok());
  std::unique_ptr<Environment> d = (*env)->Fork();
  ASSERT_TRUE(d->Step(0).ok());
  const std::vector<std::string>& chosen =
      coreset->sequences[coreset->Choose(CoresetFeatures((*env)->module(), d->module()))];

  TrainOptions o = SmallRun("ppo", FreshDir("start-coreset"), 64);
  for (const std::vector<std::string>& sequence : coreset->sequences)
    o.env.actions.push_back(SequenceName(sequence));
  o.env.actions.push_back(std::string(kDefaultPipeline));
  o.start = "coreset";
  absl::StatusOr<SearchResult> result = TrainAndRollOut(o);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_TRUE(result->fallback.empty()) << result->fallback;
  // The answer lies on or after the chosen sequence: its passes begin with
  // the sequence (one action) or with a prefix of its passes.
  ASSERT_FALSE(result->passes.empty());
  if (IsSequenceName(result->passes.front())) {
    EXPECT_EQ(result->passes.front(), SequenceName(chosen));
  } else {
    ASSERT_LE(result->passes.size(), chosen.size());
    EXPECT_TRUE(std::equal(result->passes.begin(), result->passes.end(), chosen.begin()));
  }

  TrainOptions without = SmallRun("ppo", FreshDir("start-coreset-bad"), 64);
  without.env.actions.push_back(std::string(kDefaultPipeline));
  without.start = "coreset";
  absl::StatusOr<TrainSummary> refused = Train(without);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("start coreset"), std::string::npos)
      << refused.status();
}

TEST(RlTrain, PpoLearnsTheBestSequence) {
  // Six actions of which three shrink the module and only one order of them
  // is best: a uniform policy rarely finds it; after training, the policy's
  // most likely actions should reach what an exhaustive-enough beam search
  // over the same actions and length reaches.
  const std::string dir = FreshDir("learn");
  TrainOptions o = SmallRun("ppo", dir, 3000);
  o.rollout_steps = 128;
  o.minibatch = 32;
  o.hidden = {64};
  o.learning_rate = 3e-3;
  absl::StatusOr<TrainSummary> summary = Train(o);
  ASSERT_TRUE(summary.ok()) << summary.status();

  AgentOptions beam_options;
  beam_options.env.actions = kActions;
  beam_options.beam_width = 8;
  beam_options.beam_depth = 4;
  absl::StatusOr<std::unique_ptr<Agent>> beam = MakeAgent("beam", beam_options);
  ASSERT_TRUE(beam.ok()) << beam.status();
  absl::StatusOr<SearchResult> best = (*beam)->Optimize("smoke/mlp_train", {});
  ASSERT_TRUE(best.ok()) << best.status();
  ASSERT_LT(best->op_count, best->initial_op_count);

  RegisterPolicyAgents();
  absl::StatusOr<std::unique_ptr<Agent>> learned = MakeAgent("policy:" + dir);
  ASSERT_TRUE(learned.ok()) << learned.status();
  absl::StatusOr<SearchResult> result = (*learned)->Optimize("smoke/mlp_train", {});
  ASSERT_TRUE(result.ok()) << result.status();
  // The policy's own answer (the agent hands back D where that is lower).
  const bool own = result->fallback.empty();
  EXPECT_EQ(own ? result->op_count : result->own_op_count, best->op_count)
      << "passes: " << ::testing::PrintToString(own ? result->passes : result->own_passes)
      << ", beam: " << ::testing::PrintToString(best->passes);
  EXPECT_LE(result->op_count, std::min(best->op_count, DefaultOpCount("smoke/mlp_train")));

  // The first rows of the curve (a near-uniform policy) do worse than the last.
  std::vector<std::string> rows = CurveWithoutTimings(dir + "/curve.csv");
  ASSERT_GE(rows.size(), 6u);
  auto ratio_of = [](const std::string& row) {
    std::stringstream s(row);
    std::string cell;
    for (int i = 0; i < 5; ++i) std::getline(s, cell, ',');
    return std::stod(cell);
  };
  EXPECT_LT(ratio_of(rows[1]), ratio_of(rows.back()));
  fs::remove_all(dir);
}

// A sequence is one action of training and of the policy's rollouts; the
// agent also steps it pass by pass, so a state inside it that is lower than
// where it ends (cse and dce shrink lstm_infer, the unroller then grows it
// past 500 instructions) is the policy's answer. The policy keeps its
// features' kind.
TEST(RlTrain, APolicyOverSequencesAnswersWithTheLowestStateInside) {
  const std::string dir = FreshDir("sequence");
  TrainOptions o = SmallRun("ppo", dir, 32);
  o.benchmarks = {"smoke/lstm_infer"};
  o.env.actions = {"cse+dce+while_loop_unroller"};
  o.env.traj_limit = 1;
  o.env.reward_space = "op_count_log_ratio";
  o.features = "relative";
  absl::StatusOr<TrainSummary> summary = Train(o);
  ASSERT_TRUE(summary.ok()) << summary.status();
  EXPECT_NE(ReadFile(dir + "/policy.json").find("\"features\": \"relative\""), std::string::npos);

  RegisterPolicyAgents();
  absl::StatusOr<std::unique_ptr<Agent>> agent = MakeAgent("policy:" + dir);
  ASSERT_TRUE(agent.ok()) << agent.status();
  absl::StatusOr<SearchResult> result = (*agent)->Optimize("smoke/lstm_infer", {});
  ASSERT_TRUE(result.ok()) << result.status();
  const bool own = result->fallback.empty();  // D (69) is lower still
  EXPECT_EQ(own ? result->passes : result->own_passes, (std::vector<std::string>{"cse", "dce"}));
  EXPECT_EQ(own ? result->op_count : result->own_op_count, 87);
  // Its one step made that answer: its start state is the module as it came.
  EXPECT_EQ(result->starts_op_count, result->initial_op_count);

  // Started after the sequence, the policy's answer is its start's: a report
  // can tell that its own step added nothing.
  const std::string started_dir = FreshDir("sequence-start");
  TrainOptions after_start = o;
  after_start.out_dir = started_dir;
  after_start.start = "cse+dce+while_loop_unroller";
  after_start.env.traj_limit = 2;
  ASSERT_TRUE(Train(after_start).ok());
  absl::StatusOr<std::unique_ptr<Agent>> started = MakeAgent("policy:" + started_dir);
  ASSERT_TRUE(started.ok()) << started.status();
  absl::StatusOr<SearchResult> from_start = (*started)->Optimize("smoke/lstm_infer", {});
  ASSERT_TRUE(from_start.ok()) << from_start.status();
  EXPECT_EQ(from_start->starts_op_count, 87);
  EXPECT_EQ(from_start->fallback.empty() ? from_start->op_count : from_start->own_op_count, 87);
  fs::remove_all(started_dir);

  o.features = "squares";
  o.out_dir = FreshDir("sequence-bad");
  absl::Status refused = Train(o).status();
  EXPECT_NE(refused.message().find("unknown features 'squares'"), std::string::npos) << refused;
  fs::remove_all(dir);
}

// auto-policy:DIR is auto with the policy as its guide: the policy's best
// state (here dce's, its only action) is a start; auto alone, allowed only
// the default (which grows this module), keeps the module as it is. The
// shipped auto's guide, the coreset's sequences, stays beside the policy's:
// the guided agent ends at least as low as auto does (the coreset's cse
// goes lower here than the policy's dce).
TEST(RlPolicyAgents, AutoGuidedByAPolicyStartsWhereThePolicyEnds) {
  const std::string module =
      WriteBatchNormModule("rl_auto_policy.hlo", BatchNormInputs::kTwiceScaled);
  const std::string dir = FreshDir("auto-policy");
  TrainOptions o = SmallRun("ppo", dir, 32);
  o.benchmarks = {module};
  o.env.actions = {"dce"};
  o.env.traj_limit = 1;
  ASSERT_TRUE(Train(o).ok());
  RegisterPolicyAgents();
  AgentOptions options;
  options.env.actions = {"xla-cpu-default"};
  absl::StatusOr<std::unique_ptr<Agent>> alone = MakeAgent("auto:auto", options);
  absl::StatusOr<std::unique_ptr<Agent>> shipped = MakeAgent("auto", options);
  absl::StatusOr<std::unique_ptr<Agent>> guided = MakeAgent("auto-policy:" + dir, options);
  ASSERT_TRUE(alone.ok()) << alone.status();
  ASSERT_TRUE(shipped.ok()) << shipped.status();
  ASSERT_TRUE(guided.ok()) << guided.status();
  absl::StatusOr<SearchResult> unguided = (*alone)->Optimize(module, {});
  absl::StatusOr<SearchResult> by_coreset = (*shipped)->Optimize(module, {});
  absl::StatusOr<SearchResult> result = (*guided)->Optimize(module, {});
  ASSERT_TRUE(unguided.ok()) << unguided.status();
  ASSERT_TRUE(by_coreset.ok()) << by_coreset.status();
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->agent, "auto");
  EXPECT_EQ(unguided->op_count, unguided->initial_op_count);
  EXPECT_LT(by_coreset->op_count, result->initial_op_count - 1);
  EXPECT_LE(result->op_count, by_coreset->op_count);
  ASSERT_TRUE(result->validation.has_value());
  EXPECT_TRUE(result->validation->ok) << result->validation->equivalence;
  EXPECT_FALSE(MakeAgent("auto-policy:/no/such/dir").ok());
  fs::remove_all(dir);
}

TEST(RlTrain, DeterministicPerSeed) {
  const std::string a = FreshDir("seed_a"), b = FreshDir("seed_b");
  ASSERT_TRUE(Train(SmallRun("ppo", a, 96)).ok());
  ASSERT_TRUE(Train(SmallRun("ppo", b, 96)).ok());
  EXPECT_EQ(CurveWithoutTimings(a + "/curve.csv"), CurveWithoutTimings(b + "/curve.csv"));
  fs::remove_all(a);
  fs::remove_all(b);
}

TEST(RlTrain, ResumesFromTheCheckpoint) {
  const std::string dir = FreshDir("resume");
  TrainOptions first = SmallRun("ppo", dir, 128);
  absl::StatusOr<TrainSummary> s1 = Train(first);
  ASSERT_TRUE(s1.ok()) << s1.status();
  EXPECT_EQ(s1->resumed_from, 0);

  TrainOptions second = SmallRun("ppo", dir, 256);
  absl::StatusOr<TrainSummary> s2 = Train(second);
  ASSERT_TRUE(s2.ok()) << s2.status();
  EXPECT_EQ(s2->resumed_from, 128);
  EXPECT_EQ(s2->steps, 256);
  // One curve, steps strictly increasing across the resume.
  std::vector<std::string> rows = CurveWithoutTimings(dir + "/curve.csv");
  int64_t previous = -1;
  for (size_t i = 1; i < rows.size(); ++i) {
    int64_t steps = std::stoll(rows[i]);
    EXPECT_GT(steps, previous) << rows[i];
    previous = steps;
  }
  EXPECT_EQ(previous, 256);

  // A different network cannot resume this run.
  TrainOptions other = SmallRun("ppo", dir, 512);
  other.hidden = {16};
  absl::StatusOr<TrainSummary> refused = Train(other);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("different run"), std::string::npos)
      << refused.status();
  fs::remove_all(dir);
}

TEST(RlTrain, RefusesADirectoryThatIsNotATrainingRun) {
  const std::string dir = FreshDir("occupied");
  fs::create_directories(dir);
  { std::ofstream(dir + "/notes.txt") << "keep me"; }
  absl::StatusOr<TrainSummary> refused = Train(SmallRun("ppo", dir, 64));
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(ReadFile(dir + "/notes.txt"), "keep me");
  EXPECT_FALSE(fs::exists(dir + "/curve.csv"));
  fs::remove_all(dir);
}

TEST(RlTrain, BadOptionsAreErrors) {
  TrainOptions o = SmallRun("sarsa", FreshDir("bad"), 64);
  EXPECT_EQ(Train(o).status().code(), absl::StatusCode::kInvalidArgument);
  o.algo = "ppo";
  o.network = "transformer";
  absl::Status network = Train(o).status();
  EXPECT_EQ(network.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(network.message().find("unknown network 'transformer' (expected one of mlp, gnn)"),
            std::string::npos)
      << network;
  EXPECT_FALSE(fs::exists(o.out_dir));  // refused before anything was written
  o.network = "gnn";
  o.algo = "dqn";
  absl::Status dqn = Train(o).status();
  EXPECT_EQ(dqn.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(dqn.message().find("dqn supports only --network mlp"), std::string::npos) << dqn;
  o.network = "mlp";
  o.algo = "ppo";
  o.benchmarks = {"no/such/benchmark"};
  EXPECT_FALSE(Train(o).ok());
  fs::remove_all(o.out_dir);
}

TEST(RlPolicyAgents, BeamAndSampledSearchNeverWorseThanTheStart) {
  const std::string dir = FreshDir("agents");
  ASSERT_TRUE(Train(SmallRun("ppo", dir, 64)).ok());
  RegisterPolicyAgents();
  AgentOptions options;
  options.beam_width = 2;
  for (const std::string& name : {"policy-beam:" + dir, "policy:" + dir}) {
    SCOPED_TRACE(name);
    absl::StatusOr<std::unique_ptr<Agent>> agent = MakeAgent(name, options);
    ASSERT_TRUE(agent.ok()) << agent.status();
    SearchBudget budget;
    budget.steps = 24;
    absl::StatusOr<SearchResult> result = (*agent)->Optimize("smoke/mlp_train", budget);
    ASSERT_TRUE(result.ok()) << result.status();
    EXPECT_LE(result->steps, 24);
    EXPECT_LE(result->op_count, result->initial_op_count);
    ValidationResult valid = result->env->Validate();
    EXPECT_TRUE(valid.ok) << ::testing::PrintToString(valid.errors);
  }
  EXPECT_FALSE(MakeAgent("policy:/no/such/dir").ok());
  fs::remove_all(dir);
}

TEST(RlPolicyAgents, ShippedMlpPolicyStillLoads) {
  // Written before policy.json named its network.
  absl::StatusOr<std::unique_ptr<Policy>> policy =
      Policy::Load(std::string(HLOGYM_SOURCE_DIR) + "/datasets/policies/ppo-gpt2");
  ASSERT_TRUE(policy.ok()) << policy.status();
  EXPECT_EQ((*policy)->network(), "mlp");
  EnvOptions env_options;
  env_options.actions = (*policy)->actions();
  env_options.observation_spaces = PolicyObservationSpaces();
  absl::StatusOr<std::unique_ptr<Environment>> env = Environment::Create(env_options);
  ASSERT_TRUE(env.ok()) << env.status();
  ASSERT_TRUE((*env)->Reset("smoke/mlp_train").ok());
  std::vector<std::vector<float>> log_probs = (*policy)->LogProbabilities({env->get()});
  ASSERT_EQ(log_probs.size(), 1u);
  ASSERT_EQ(log_probs[0].size(), (*policy)->actions().size());
  double total = 0;
  for (float lp : log_probs[0]) total += std::exp(lp);
  EXPECT_NEAR(total, 1.0, 1e-4);
}

// The gnn, trained once on the small problem of PpoLearnsTheBestSequence.
class RlGnn : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new std::string(FreshDir("gnn"));
    TrainOptions o = GnnRun(*dir_, 3000);
    o.rollout_steps = 128;
    o.minibatch = 32;
    o.hidden = {64};
    o.learning_rate = 3e-3;
    absl::StatusOr<TrainSummary> summary = Train(o);
    ASSERT_TRUE(summary.ok()) << summary.status();
  }
  static void TearDownTestSuite() {
    fs::remove_all(*dir_);
    delete dir_;
  }

  static TrainOptions GnnRun(const std::string& dir, int64_t steps) {
    TrainOptions o = SmallRun("ppo", dir, steps);
    o.network = "gnn";
    o.gnn_dim = 16;
    return o;
  }

  // Environments over the policy's actions in distinct states: the start of
  // mlp_train, mlp_train after algsimp, the start of mlp_infer.
  static std::vector<std::unique_ptr<Environment>> DistinctStates() {
    EnvOptions env_options;
    env_options.actions = kActions;
    env_options.observation_spaces = PolicyObservationSpaces();
    std::vector<std::unique_ptr<Environment>> envs;
    for (const char* benchmark : {"smoke/mlp_train", "smoke/mlp_train", "smoke/mlp_infer"}) {
      absl::StatusOr<std::unique_ptr<Environment>> env = Environment::Create(env_options);
      EXPECT_TRUE(env.ok()) << env.status();
      EXPECT_TRUE((*env)->Reset(benchmark).ok());
      envs.push_back(*std::move(env));
    }
    EXPECT_TRUE(envs[1]->Step("algsimp").ok());
    EXPECT_LT(envs[1]->op_count(), envs[0]->op_count());
    return envs;
  }

  static std::string* dir_;
};
std::string* RlGnn::dir_ = nullptr;

TEST_F(RlGnn, LearnsTheBestSequence) {
  AgentOptions beam_options;
  beam_options.env.actions = kActions;
  beam_options.beam_width = 8;
  beam_options.beam_depth = 4;
  absl::StatusOr<std::unique_ptr<Agent>> beam = MakeAgent("beam", beam_options);
  ASSERT_TRUE(beam.ok()) << beam.status();
  absl::StatusOr<SearchResult> best = (*beam)->Optimize("smoke/mlp_train", {});
  ASSERT_TRUE(best.ok()) << best.status();

  RegisterPolicyAgents();
  absl::StatusOr<std::unique_ptr<Agent>> learned = MakeAgent("policy:" + *dir_);
  ASSERT_TRUE(learned.ok()) << learned.status();
  absl::StatusOr<SearchResult> result = (*learned)->Optimize("smoke/mlp_train", {});
  ASSERT_TRUE(result.ok()) << result.status();
  // The policy's own answer (the agent hands back D where that is lower).
  const bool own = result->fallback.empty();
  EXPECT_EQ(own ? result->op_count : result->own_op_count, best->op_count)
      << "passes: " << ::testing::PrintToString(own ? result->passes : result->own_passes)
      << ", beam: " << ::testing::PrintToString(best->passes);
  EXPECT_LE(result->op_count, std::min(best->op_count, DefaultOpCount("smoke/mlp_train")));
}

TEST_F(RlGnn, ReloadedPolicyGivesTheSameProbabilities) {
  absl::StatusOr<std::unique_ptr<Policy>> trained = Policy::Load(*dir_);
  ASSERT_TRUE(trained.ok()) << trained.status();
  EXPECT_EQ((*trained)->network(), "gnn");
  std::vector<std::unique_ptr<Environment>> envs = DistinctStates();
  std::vector<Environment*> states = {envs[0].get(), envs[1].get(), envs[2].get()};
  const std::vector<std::vector<float>> expected = (*trained)->LogProbabilities(states);

  // Saved and loaded again: every parameter of the graph encoder travels.
  const std::string copy = FreshDir("gnn_copy");
  fs::create_directories(copy);
  ASSERT_TRUE((*trained)->Save(copy).ok());
  absl::StatusOr<std::unique_ptr<Policy>> reloaded = Policy::Load(copy);
  ASSERT_TRUE(reloaded.ok()) << reloaded.status();
  EXPECT_EQ((*reloaded)->LogProbabilities(states), expected);
  fs::remove_all(copy);

  // The policy rewritten from the training checkpoint (a resume with nothing
  // left to train) is the same policy.
  TrainOptions o = GnnRun(*dir_, 3000);
  o.rollout_steps = 128;
  o.minibatch = 32;
  o.hidden = {64};
  o.learning_rate = 3e-3;
  absl::StatusOr<TrainSummary> resumed = Train(o);
  ASSERT_TRUE(resumed.ok()) << resumed.status();
  EXPECT_EQ(resumed->resumed_from, resumed->steps);
  absl::StatusOr<std::unique_ptr<Policy>> from_checkpoint = Policy::Load(*dir_);
  ASSERT_TRUE(from_checkpoint.ok()) << from_checkpoint.status();
  EXPECT_EQ((*from_checkpoint)->LogProbabilities(states), expected);
}

TEST_F(RlGnn, BatchedGraphsGiveWhatEachGraphGivesAlone) {
  absl::StatusOr<std::unique_ptr<Policy>> policy = Policy::Load(*dir_);
  ASSERT_TRUE(policy.ok()) << policy.status();
  std::vector<std::unique_ptr<Environment>> envs = DistinctStates();
  std::vector<std::vector<float>> alone;
  for (const auto& env : envs) alone.push_back((*policy)->LogProbabilities({env.get()}).front());
  // The states differ enough for a mix-up of graphs to show.
  double largest_difference = 0;
  for (size_t a = 0; a < kActions.size(); ++a) {
    largest_difference = std::max<double>(largest_difference, std::abs(alone[0][a] - alone[2][a]));
  }
  EXPECT_GT(largest_difference, 1e-2);

  // Permuted, with a state repeated (one graph of the batch for two states).
  const std::vector<int> order = {2, 0, 1, 0};
  std::vector<Environment*> batch;
  for (int i : order) batch.push_back(envs[i].get());
  std::vector<std::vector<float>> batched = (*policy)->LogProbabilities(batch);
  ASSERT_EQ(batched.size(), order.size());
  for (size_t k = 0; k < order.size(); ++k) {
    for (size_t a = 0; a < kActions.size(); ++a) {
      EXPECT_NEAR(batched[k][a], alone[order[k]][a], 1e-5)
          << "state " << order[k] << ", action " << a;
    }
  }
}

TEST(RlGnnTrain, PolicyGradientAlgorithmsTrainAGnn) {
  for (const std::string algo : {"a2c", "trpo"}) {
    SCOPED_TRACE(algo);
    const std::string dir = FreshDir("gnn_" + algo);
    TrainOptions o = SmallRun(algo, dir, 64);
    o.network = "gnn";
    o.gnn_dim = 8;
    o.value_sees_cost = true;
    absl::StatusOr<TrainSummary> summary = Train(o);
    ASSERT_TRUE(summary.ok()) << summary.status();
    EXPECT_EQ(summary->steps, 64);
    EXPECT_EQ(ReadFile(dir + "/curve.csv").find("nan,nan,nan,nan"), std::string::npos);
    absl::StatusOr<std::unique_ptr<Policy>> policy = Policy::Load(dir);
    ASSERT_TRUE(policy.ok()) << policy.status();
    EXPECT_EQ((*policy)->network(), "gnn");
    fs::remove_all(dir);
  }
}

}  // namespace
}  // namespace hlogym::rl
