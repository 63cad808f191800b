// The coreset agent: the greedy cover picks what adds most and stops when
// nothing adds anything, the nearest-neighbour prediction follows the nearest
// training graphs, the model file round-trips and bad ones are named, training
// is deterministic, and the agent acts in one rollout, never above D, never
// with an answer that failed its check (shown with a pass that breaks the module).
#include "agents/coreset_agent.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <string>
#include <vector>

#include "agents/agent_test_util.h"
#include "gym/benchmark.h"

namespace hlogym {
namespace {

// A model over `sequences` whose training graphs are points on the first
// feature axis (at 0, 1, 2, ...), with the given values.
CoresetModel LineModel(std::vector<std::vector<std::string>> sequences,
                       std::vector<std::vector<float>> values, int neighbors) {
  CoresetModel model;
  model.sequences = std::move(sequences);
  model.neighbors = neighbors;
  const int size = CoresetFeatureSize();
  model.feature_mean.assign(size, 0.0f);
  model.feature_scale.assign(size, 1.0f);
  for (size_t g = 0; g < values.size(); ++g) {
    std::vector<float> features(size, 0.0f);
    features[0] = static_cast<float>(g);
    model.graphs.push_back("g" + std::to_string(g));
    model.features.push_back(features);
  }
  model.values = std::move(values);
  return model;
}

TEST(CoresetTest, GreedyCoverPicksWhatAddsMostAndStops) {
  const std::vector<std::vector<float>> values = {
      {0.5f, 0.0f, 0.3f, -1.0f},
      {0.0f, 0.4f, 0.3f, -1.0f},
      {-0.2f, 0.0f, 0.3f, -1.0f},
  };
  // Column 2 adds 0.9 over three graphs; then column 0 adds 0.2 on the first
  // and column 1 0.1 on the second; column 3 never adds anything.
  EXPECT_EQ(GreedyCoreset(values, 1), std::vector<int>{2});
  EXPECT_EQ(GreedyCoreset(values, 3), (std::vector<int>{2, 0, 1}));
  EXPECT_EQ(GreedyCoreset(values, 10), (std::vector<int>{2, 0, 1}));
  EXPECT_TRUE(GreedyCoreset({{-0.1f, 0.0f}}, 4).empty());
}

TEST(CoresetTest, PredictionFollowsTheNearestTrainingGraphs) {
  // Graphs at 0 and 1 prefer sequence 0; graphs at 2, 3, 4 sequence 1.
  CoresetModel model = LineModel(
      {{"dce"}, {"cse"}}, {{0.4f, 0.0f}, {0.3f, 0.1f}, {0.0f, 0.2f}, {0.0f, 0.3f}, {0.1f, 0.2f}},
      /*neighbors=*/2);
  std::vector<float> x(CoresetFeatureSize(), 0.0f);
  x[0] = 0.2f;  // nearest: graphs 0 and 1
  EXPECT_EQ(model.Choose(x), 0);
  std::vector<double> predicted = model.Predict(x);
  ASSERT_EQ(predicted.size(), 2u);
  EXPECT_NEAR(predicted[0], 0.35, 1e-6);
  EXPECT_NEAR(predicted[1], 0.05, 1e-6);
  x[0] = 3.6f;  // nearest: graphs 4 and 3
  EXPECT_EQ(model.Choose(x), 1);
  // A larger scale on the axis does not change who is nearest.
  model.feature_scale[0] = 10.0f;
  EXPECT_EQ(model.Choose(x), 1);
  // On a second feature the graph lies with graphs 0 and 1, far from the rest: counted, that
  // decides; with no scale (what a feature constant over the training graphs gets) it is left out.
  model.features[0][1] = model.features[1][1] = 1000.0f;
  x[1] = 1000.0f;
  EXPECT_EQ(model.Choose(x), 0);
  model.feature_scale[1] = 0.0f;
  EXPECT_EQ(model.Choose(x), 1);
}

// Cross-validation leaving a group out keeps the predictor only where it transfers.
TEST(CoresetTest, CrossValidationKeepsThePredictorOnlyWhereItTransfers) {
  auto point = [](float x) {
    std::vector<float> f(CoresetFeatureSize(), 0.0f);
    f[0] = x;
    return f;
  };
  // Every group has a graph near 0 that wants sequence 0 and one near 10 that wants sequence 1:
  // the nearest graph of another group knows which.
  std::vector<std::vector<float>> features, values;
  std::vector<std::string> groups;
  for (const char* group : {"a", "b", "c"}) {
    features.push_back(point(0.1f * groups.size()));
    values.push_back({0.5f, 0.0f});
    groups.push_back(group);
    features.push_back(point(10.0f + 0.1f * groups.size()));
    values.push_back({0.0f, 0.5f});
    groups.push_back(group);
  }
  auto fits = CrossValidateCoreset(features, values, groups, {1, 2}, {1});
  ASSERT_EQ(fits.size(), 2u);
  EXPECT_EQ(fits[0].size, 1);
  EXPECT_NEAR(fits[0].geomean_d_over_r, std::exp(0.25), 1e-5);  // one sequence: right half the time
  EXPECT_EQ(fits[1].size, 2);
  EXPECT_NEAR(fits[1].geomean_d_over_r, std::exp(0.5), 1e-5);  // the predictor: always right

  // Here what a graph wants depends on its group, not on where it lies (each group wants its own
  // sequence), and sequence 3 is good everywhere: the nearest graph, always of another group,
  // misleads, and one sequence wins.
  features = {point(0.0f), point(0.3f), point(0.1f), point(0.4f), point(0.2f), point(0.5f)};
  values = {{0.5f, 0.0f, 0.0f, 0.4f}, {0.5f, 0.0f, 0.0f, 0.4f}, {0.0f, 0.5f, 0.0f, 0.4f},
            {0.0f, 0.5f, 0.0f, 0.4f}, {0.0f, 0.0f, 0.5f, 0.4f}, {0.0f, 0.0f, 0.5f, 0.4f}};
  groups = {"a", "a", "b", "b", "c", "c"};
  fits = CrossValidateCoreset(features, values, groups, {1, 4}, {1});
  ASSERT_EQ(fits.size(), 2u);
  EXPECT_NEAR(fits[0].geomean_d_over_r, std::exp(0.4), 1e-5);
  EXPECT_LT(fits[1].geomean_d_over_r, fits[0].geomean_d_over_r);
}

TEST(CoresetTest, ModelRoundTripsAndBadFilesAreNamed) {
  CoresetModel model = LineModel({{"xla-cpu-default", "cse"}}, {{0.1f}, {0.0f}}, 1);
  model.candidates = 7;
  model.cross_validation = {{1, 5, 1.25}, {2, 5, 1.3}};
  model.command = "hlogym train --algo coreset ...";
  auto back = CoresetModel::FromJson(model.ToJson(), "mem");
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->sequences, model.sequences);
  EXPECT_EQ(back->values, model.values);
  EXPECT_EQ(back->features, model.features);
  EXPECT_EQ(back->candidates, 7);
  ASSERT_EQ(back->cross_validation.size(), 2u);
  EXPECT_EQ(back->cross_validation[1].size, 2);
  EXPECT_DOUBLE_EQ(back->cross_validation[1].geomean_d_over_r, 1.3);
  EXPECT_EQ(back->command, model.command);

  EXPECT_FALSE(CoresetModel::FromJson("not json", "x.json").ok());
  auto not_coreset = CoresetModel::FromJson(R"({"actions": []})", "x.json");
  ASSERT_FALSE(not_coreset.ok());
  EXPECT_NE(not_coreset.status().message().find("x.json: not a coreset model"), std::string::npos);
  CoresetModel short_row = model;
  short_row.features[1].pop_back();
  auto bad_row = CoresetModel::FromJson(short_row.ToJson(), "y.json");
  ASSERT_FALSE(bad_row.ok());
  EXPECT_NE(bad_row.status().message().find("graph g1"), std::string::npos) << bad_row.status();
  CoresetModel negative_scale = model;
  negative_scale.feature_scale[3] = -1;
  EXPECT_FALSE(CoresetModel::FromJson(negative_scale.ToJson(), "z.json").ok());
  auto missing = MakeAgent("coreset:/no/such/model");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("/no/such/model"), std::string::npos);
}

TEST(CoresetTest, TrainsDeterministicallyAndActsInOneRolloutNeverAboveTheDefault) {
  const std::vector<std::string> training = {"smoke/mlp_train", "smoke/gpt2_infer",
                                             "smoke/cnn_train", "smoke/control_flow"};
  CoresetTrainOptions options;
  options.coreset_size = 4;
  options.neighbors = {1, 2};
  auto model = TrainCoreset(training, options);
  ASSERT_TRUE(model.ok()) << model.status();
  ASSERT_FALSE(model->sequences.empty());
  EXPECT_LE(model->sequences.size(), 4u);
  EXPECT_EQ(model->graphs, training);
  EXPECT_GE(model->candidates, 2);  // the two pipelines at least
  auto again = TrainCoreset(training, options);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->ToJson(), model->ToJson());
  // A fraction of the graphs, drawn by the seed.
  options.graph_fraction = 0.5;
  auto half = TrainCoreset(training, options);
  ASSERT_TRUE(half.ok()) << half.status();
  EXPECT_EQ(half->graphs.size(), 2u);

  for (const std::string benchmark : {"smoke/lstm_train", "smoke/gnn_train", "smoke/mlp_train"}) {
    CoresetAgent agent(AgentOptions{}, *model);
    auto result = agent.Optimize(benchmark, SearchBudget{});
    ASSERT_TRUE(result.ok()) << result.status();
    EXPECT_EQ(result->agent, "coreset");
    EXPECT_LE(result->op_count, DefaultOpCount(benchmark)) << benchmark;
    ASSERT_TRUE(result->validation.has_value());
    EXPECT_TRUE(result->validation->ok) << benchmark << ": " << result->validation->equivalence;
    // One step for D (the prediction's input), then one rollout of one sequence.
    size_t longest = 0;
    for (const auto& s : model->sequences) longest = std::max(longest, s.size());
    EXPECT_LE(result->steps, static_cast<int64_t>(1 + longest)) << benchmark;
  }
}

// On a rematerialized GPT-2 training step greedy search over the single passes ends at 1,035
// instructions, auto at 1,134 (its descents take the simplification pipeline's larger first
// drop and stay in that basin). Trained on that graph with greedy's path among the candidates,
// the coreset's own sequence goes below auto's; from auto's paths alone it cannot.
TEST(CoresetTest, GreedySearchsPathsAreCandidates) {
  const std::string graph = "corpus/gpt2_train_L2_d32_h2_s16_b4_bf16_remat_sgd";
  const int64_t auto_r = 1134;
  CoresetTrainOptions options;
  options.coreset_size = 1;
  options.neighbors = {1};
  auto lowest_on_first_sequence = [&](const CoresetModel& model) {
    CoresetAgent agent(AgentOptions{}, model);
    auto result = agent.Optimize(graph, SearchBudget{});
    EXPECT_TRUE(result.ok()) << result.status();
    return result.ok() ? result->op_count : int64_t{-1};
  };
  options.greedy_paths = true;
  auto with_greedy = TrainCoreset({graph}, options);
  ASSERT_TRUE(with_greedy.ok()) << with_greedy.status();
  EXPECT_LT(lowest_on_first_sequence(*with_greedy), auto_r);
  options.greedy_paths = false;
  auto auto_only = TrainCoreset({graph}, options);
  ASSERT_TRUE(auto_only.ok()) << auto_only.status();
  EXPECT_LT(auto_only->candidates, with_greedy->candidates);
  EXPECT_GE(lowest_on_first_sequence(*auto_only), auto_r);
}

TEST(CoresetTest, AnAnswerThatFailsItsCheckFallsBackToTheDefault) {
  const std::string benchmark = "smoke/mlp_train";
  PassRegistry registry = PassRegistry::WithPipelines();
  registry.Register(
      {"drop-add", "test: breaks the module", [] { return std::make_unique<DropAddPass>(); }});
  AgentOptions options;
  options.registry = &registry;
  CoresetAgent agent(options, LineModel({{"xla-cpu-default", "drop-add", "dce"}}, {{0.5f}}, 1));
  auto result = agent.Optimize(benchmark, SearchBudget{});
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_NE(result->fallback.find("failed its check"), std::string::npos) << result->fallback;
  EXPECT_LT(result->own_op_count, DefaultOpCount(benchmark));
  EXPECT_EQ(result->passes, std::vector<std::string>{"xla-cpu-default"});
  EXPECT_EQ(result->op_count, DefaultOpCount(benchmark));
  ASSERT_TRUE(result->validation.has_value());
  EXPECT_TRUE(result->validation->ok);
}

}  // namespace
}  // namespace hlogym
