// The pass framework: RunPass's pre-check, pipelines, fixed points and PassTimer.
#include "passes/pass.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_replace.h"
#include "passes/registry.h"
#include "text/parser.h"

namespace hlogym {
namespace {

// Reports a change on each of its first `changes` runs; its pre-check says no once they are
// used up, unless `honest_precheck` is false.
class Countdown : public Pass {
 public:
  Countdown(std::string name, int changes, bool honest_precheck = true)
      : name_(std::move(name)), changes_(changes), honest_precheck_(honest_precheck) {}
  std::string_view name() const override { return name_; }
  absl::StatusOr<bool> Run(Module&) override {
    ++runs;
    if (changes_ == 0) return false;
    --changes_;
    return true;
  }
  bool MayChange(const Module&) const override { return !honest_precheck_ || changes_ > 0; }
  int runs = 0;

 private:
  std::string name_;
  int changes_;
  bool honest_precheck_;
};

TEST(PassTest, RunPassSkipsWhatThePreCheckRulesOut) {
  Module module("m");
  Countdown pass("countdown", 1);
  EXPECT_TRUE(*RunPass(pass, module));
  EXPECT_FALSE(*RunPass(pass, module));
  EXPECT_EQ(pass.runs, 1);
}

// Fails with `message` and the status code of an internal error.
class Failing : public Pass {
 public:
  Failing(std::string name, std::string message)
      : name_(std::move(name)), message_(std::move(message)) {}
  std::string_view name() const override { return name_; }
  absl::StatusOr<bool> Run(Module&) override { return absl::InternalError(message_); }

 private:
  std::string name_;
  std::string message_;
};

TEST(PassTest, AFailureInsideAPipelineNamesTheFailingPassOnce) {
  Module module("m");
  auto run_in_pipeline = [&](std::string message) {
    std::vector<std::unique_ptr<Pass>> passes;
    passes.push_back(std::make_unique<Countdown>("fine", 1));
    passes.push_back(std::make_unique<Failing>("breaks", std::move(message)));
    PassPipeline pipeline("pipeline", std::move(passes));
    return RunPass(pipeline, module).status();
  };
  absl::Status status = run_in_pipeline("");
  EXPECT_EQ(status.code(), absl::StatusCode::kInternal);
  EXPECT_EQ(status.message(), "breaks: failed without a message");
  EXPECT_EQ(run_in_pipeline("bad operand").message(), "breaks: bad operand");
  EXPECT_EQ(run_in_pipeline("breaks: said already").message(), "breaks: said already");
}

TEST(PassTest, PassTimerRecordsLeafPassesInsidePipelinesAndFixedPoints) {
  Module module("m");
  std::vector<std::unique_ptr<Pass>> inner;
  inner.push_back(std::make_unique<Countdown>("twice", 2));
  inner.push_back(std::make_unique<Countdown>("never", 0, /*honest_precheck=*/false));
  std::vector<std::unique_ptr<Pass>> outer;
  outer.push_back(
      std::make_unique<FixedPointPass>(std::make_unique<PassPipeline>("loop", std::move(inner))));
  outer.push_back(std::make_unique<Countdown>("skipped", 0));
  PassPipeline pipeline("pipeline", std::move(outer));

  PassTimer timer;
  EXPECT_TRUE(*RunPass(pipeline, module));
  // The loop runs three times (changed, changed, unchanged); only leaf passes have entries,
  // in the order they first ran.
  ASSERT_EQ(timer.entries().size(), 3u);
  const PassTimer::Entry& twice = timer.entries()[0];
  EXPECT_EQ(twice.name, "twice");
  EXPECT_EQ(twice.runs, 3);
  EXPECT_EQ(twice.changed, 2);
  EXPECT_EQ(twice.skipped, 1);
  const PassTimer::Entry& never = timer.entries()[1];
  EXPECT_EQ(never.name, "never");
  EXPECT_EQ(never.runs, 3);
  EXPECT_EQ(never.changed, 0);
  EXPECT_EQ(never.skipped, 0);
  EXPECT_EQ(timer.entries()[2].name, "skipped");
  EXPECT_EQ(timer.entries()[2].skipped, 1);
  EXPECT_GE(timer.total_seconds(), 0.0);
}

TEST(PassTest, PassTimerOnlyRecordsWhileAlive) {
  Module module("m");
  Countdown pass("countdown", 2);
  {
    PassTimer outer;
    {
      PassTimer inner;
      EXPECT_TRUE(*RunPass(pass, module));
      EXPECT_EQ(inner.entries().size(), 1u);
    }
    EXPECT_TRUE(outer.entries().empty()) << "the inner timer hides the outer one";
    EXPECT_TRUE(*RunPass(pass, module));
    EXPECT_EQ(outer.entries().size(), 1u);
  }
  EXPECT_FALSE(*RunPass(pass, module));  // no timer: nothing to record into
}

// The pre-checks that look at the instructions a pass would rewrite, not just
// their opcodes: a canonical dot, a broadcast in order, a float compare and a
// small reduce leave these passes nothing to do (the gym then skips them without copying
// the module); a total-order compare is comparison-expander's to rewrite.
TEST(PassTest, ExactPreChecksSeeNothingToRewrite) {
  const std::string hlo = R"(HloModule prechecks
add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT sum = f32[] add(x, y)
}
ENTRY e {
  a = f32[2,3]{1,0} parameter(0)
  b = f32[3,4]{1,0} parameter(1)
  d = f32[2,4]{1,0} dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  s = f32[4]{0} parameter(2)
  bc = f32[2,4]{1,0} broadcast(s), dimensions={1}
  c = pred[2,4]{1,0} compare(d, bc), direction=LT
  zero = f32[] constant(0)
  r = f32[2]{0} reduce(d, zero), dimensions={1}, to_apply=add
  ROOT t = (f32[2,4]{1,0}, pred[2,4]{1,0}, f32[2]{0}) tuple(d, c, r)
}
)";
  auto module = ParseModule(hlo, "prechecks.hlo");
  ASSERT_TRUE(module.ok()) << module.status();
  for (const char* name : {"dot_decomposer", "batch-dot-simplification", "comparison-expander",
                           "broadcast_canonicalizer", "dot_dimension_sorter", "reduce-decomposer",
                           "tree_reduction_rewriter"}) {
    auto pass = PassRegistry::Builtin().Create(name);
    ASSERT_TRUE(pass.ok()) << pass.status();
    EXPECT_FALSE((*pass)->MayChange(**module)) << name;
  }
  auto total_order = ParseModule(
      absl::StrReplaceAll(hlo, {{"direction=LT", "direction=LT, type=TOTALORDER"}}), "t.hlo");
  ASSERT_TRUE(total_order.ok()) << total_order.status();
  auto expander = PassRegistry::Builtin().Create("comparison-expander");
  ASSERT_TRUE(expander.ok());
  EXPECT_TRUE((*expander)->MayChange(**total_order));
}

}  // namespace
}  // namespace hlogym
