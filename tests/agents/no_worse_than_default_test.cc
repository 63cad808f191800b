// Agent::NoWorseThanDefault, the guard of the agents that have no check of
// their own (the policy agents): an answer above D, or one that fails its
// check, comes back as D, saying why; one at or below D that checks stays.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "agents/agent.h"
#include "agents/agent_test_util.h"
#include "agents/search.h"

namespace hlogym {
namespace {

constexpr char kModule[] = "smoke/mlp_train";

// Takes the given actions from the initial module and answers with the state
// they reach, whatever its op count, through NoWorseThanDefault.
class FixedSequenceAgent : public Agent {
 public:
  FixedSequenceAgent(AgentOptions options, std::vector<int> actions)
      : Agent(std::move(options)), actions_(std::move(actions)) {}
  std::string_view name() const override { return "fixed"; }
  absl::StatusOr<SearchResult> Optimize(std::string_view benchmark,
                                        const SearchBudget& budget) override {
    absl::StatusOr<SearchResult> result = Agent::Optimize(benchmark, budget);
    if (!result.ok()) return result;
    return NoWorseThanDefault(benchmark, *std::move(result));
  }

 protected:
  absl::Status Search(SearchContext& ctx) override {
    std::unique_ptr<Environment> env = ctx.root().Fork();
    for (int action : actions_) ctx.Step(*env, action);
    ctx.SetResult(std::move(env));
    return absl::OkStatus();
  }

 private:
  std::vector<int> actions_;
};

class NoWorseThanDefaultTest : public ::testing::Test {
 protected:
  NoWorseThanDefaultTest() : registry_(PassRegistry::WithPipelines()) {
    registry_.Register(
        {"drop-add", "test: breaks the module", [] { return std::make_unique<DropAddPass>(); }});
    options_.registry = &registry_;
    options_.env.actions = {"xla-cpu-default", "drop-add", "dce", "cse"};
    auto d = DefaultPipelineAgent(AgentOptions{}).Optimize(kModule, {});
    EXPECT_TRUE(d.ok()) << d.status();
    d_ = d->op_count;
  }
  SearchResult Run(std::vector<int> actions) {
    auto result = FixedSequenceAgent(options_, std::move(actions)).Optimize(kModule, {});
    EXPECT_TRUE(result.ok()) << result.status();
    return *std::move(result);
  }

  PassRegistry registry_;
  AgentOptions options_;
  int64_t d_ = 0;
};

TEST_F(NoWorseThanDefaultTest, AnAnswerAboveTheDefaultBecomesTheDefault) {
  SearchResult result = Run({});  // the initial module, above D here
  ASSERT_GT(result.initial_op_count, d_);
  EXPECT_EQ(result.op_count, d_);
  EXPECT_EQ(result.passes, std::vector<std::string>{"xla-cpu-default"});
  EXPECT_EQ(result.fallback, "above D (" + std::to_string(result.initial_op_count) + " > " +
                                 std::to_string(d_) + ")");
  ASSERT_TRUE(result.validation.has_value());
  EXPECT_TRUE(result.validation->ok);
}

TEST_F(NoWorseThanDefaultTest, AnAnswerThatFailsItsCheckBecomesTheDefault) {
  SearchResult result = Run({0, 1});  // the default, then a pass that breaks the module
  EXPECT_EQ(result.op_count, d_);
  EXPECT_EQ(result.passes, std::vector<std::string>{"xla-cpu-default"});
  EXPECT_EQ(result.rejected_candidates, 1);
  EXPECT_EQ(result.fallback.rfind("failed its check: ", 0), 0u) << result.fallback;
  ASSERT_TRUE(result.validation.has_value());
  EXPECT_TRUE(result.validation->ok);
}

TEST_F(NoWorseThanDefaultTest, AnAnswerAtOrBelowTheDefaultThatChecksStays) {
  SearchResult result = Run({0, 2, 3});  // the default, then dce and cse
  EXPECT_LE(result.op_count, d_);
  EXPECT_EQ(result.passes, (std::vector<std::string>{"xla-cpu-default", "dce", "cse"}));
  EXPECT_TRUE(result.fallback.empty()) << result.fallback;
  ASSERT_TRUE(result.validation.has_value());
  EXPECT_TRUE(result.validation->ok);
}

}  // namespace
}  // namespace hlogym
