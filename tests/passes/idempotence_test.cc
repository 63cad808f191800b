// Idempotence over the corpus and XLA's optimized modules of it (issue 19):
// every registered pass, run a second time on its own output, changes nothing,
// or is listed below with the reason (XLA's pass is not idempotent either) and
// reaches a fixed point the way XLA's pipeline lets it. Modules of at most
// kMaxOps instructions, in shards that ctest runs in parallel.
#include <gtest/gtest.h>

#include <iostream>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "corpus_manifest.h"
#include "passes/registry.h"
#include "text/file_io.h"

namespace hlogym {
namespace {

constexpr int kShards = 4;
constexpr long long kMaxOps = 6000;  // 394 of the 402 corpus modules

// Passes that may change their own output again, as XLA's do, and why. XLA
// runs each of them where a fixed point or a later pass finishes the job, and
// so does this test: a listed pass must settle within kMaxRuns runs, each
// followed by its `cleanup` pass when it has one, unless XLA runs it once only
// (`once`) on what it then leaves alone. A pass that kept changing a module
// would grow or churn it without end, and the gym's agents would follow it.
constexpr int kMaxRuns = 30;
struct NotIdempotentPass {
  std::string_view reason;
  std::string_view cleanup;  // run after each run of the pass; empty: none
  bool once = false;
};
const std::map<std::string_view, NotIdempotentPass>& NotIdempotent() {
  static const auto* passes = new std::map<std::string_view, NotIdempotentPass>{
      {"simplify-while-loops",
       {"one structural rewrite per loop and run: flattening or removing repeated elements "
        "leaves dead elements and induction variables for the next run"}},
      {"dynamic-dimension-simplifier",
       {"its sweeps run in XLA's order: an identity convert or reshape that the last sweep "
        "removes can leave a reshape of a reshape for the next run's reshape sweep"}},
      {"reduce-window-rewriter",
       {"the scan over the row sums of a long cumulative reduce-window is a new reduce-window, "
        "rewritten in the next run when still longer than the base length"}},
      {"reshape-mover",
       {"it leaves rearrange'(rearrange(x)) for algsimp to fold (XLA's words), and a reshape "
        "sunk past one elementwise instruction reaches the next one in the next run",
        "algsimp"}},
      {"reshape-mover-1d-broadcast-cheap", {"reshape-mover's variant, same reasons", "algsimp"}},
      {"transpose-folding",
       {"folding transpose(transpose(x)) into a dot leaves the inner transpose as the dot's "
        "operand, and like XLA's it looks at each dot once a run (PyTorch/XLA's modules have "
        "such pairs; in XLA's pipeline algsimp folds them first)"}},
      {"gemv-rewriter",
       {"expects dots canonicalized by dot_decomposer (one non-contracting dimension a side); "
        "on another dot each run appends one more degenerate dimension",
        "", /*once=*/true}},
      {"convolution-canonicalization",
       {"XLA:CPU's: it rewrites every convolution Eigen cannot run (bf16 included) with "
        "transposes to the canonical form, identity ones for a convolution already in it",
        "", /*once=*/true}},
  };
  return *passes;
}

class IdempotenceTest : public ::testing::TestWithParam<int> {};

TEST_P(IdempotenceTest, SecondRunChangesNothing) {
  const PassRegistry& registry = PassRegistry::Builtin();
  std::vector<CorpusModule> modules;
  int index = 0;
  for (const auto* dataset :
       {&testing::CorpusManifestModules(), &testing::XlaOptimizedManifestModules(),
        &testing::PyTorchManifestModules()}) {
    ASSERT_FALSE(dataset->empty()) << "a dataset's manifest is missing or unreadable";
    for (const CorpusModule& m : *dataset) {
      if (m.op_count <= kMaxOps && index++ % kShards == GetParam()) modules.push_back(m);
    }
  }
  int runs = 0, changed_once = 0, changed_again = 0;
  std::map<std::string, std::vector<std::string>> failures;  // pass -> module paths
  for (const CorpusModule& entry : modules) {
    auto module = LoadModule(entry.path);
    ASSERT_TRUE(module.ok()) << module.status();
    for (const PassInfo& info : registry.passes()) {
      std::unique_ptr<Module> copy = (*module)->Clone();
      auto first = info.create()->Run(*copy);
      ASSERT_TRUE(first.ok()) << info.name << " on " << entry.name << ": " << first.status();
      ++runs;
      if (!*first) continue;
      ++changed_once;
      auto second = info.create()->Run(*copy);
      ASSERT_TRUE(second.ok()) << info.name << " again on " << entry.name << ": "
                               << second.status();
      if (!*second) continue;
      ++changed_again;
      auto listed = NotIdempotent().find(info.name);
      if (listed == NotIdempotent().end()) {
        failures[info.name].push_back(entry.path);
        continue;
      }
      if (listed->second.once) continue;
      std::unique_ptr<Pass> cleanup;
      if (!listed->second.cleanup.empty()) {
        auto made = registry.Create(listed->second.cleanup);
        ASSERT_TRUE(made.ok()) << made.status();
        cleanup = std::move(*made);
      }
      bool settled = false;
      for (int run = 3; run <= kMaxRuns && !settled; ++run) {
        if (cleanup != nullptr) ASSERT_TRUE(cleanup->Run(*copy).ok());
        auto again = info.create()->Run(*copy);
        ASSERT_TRUE(again.ok()) << info.name << " on " << entry.name << ": " << again.status();
        settled = !*again;
      }
      if (!settled) failures[info.name + " (no fixed point)"].push_back(entry.path);
    }
  }
  std::cout << "[ Idempotence ] shard " << GetParam() << ": " << modules.size() << " modules, "
            << runs << " pass runs, " << changed_once << " changed the module, " << changed_again
            << " of those changed it again (listed passes included)\n";
  for (const auto& [pass, paths] : failures) {
    ADD_FAILURE() << pass << " changes its own output again on " << paths.size()
                  << " module(s), e.g. " << paths.front() << "\n  reproduce: build/hlogym opt "
                  << paths.front() << " --passes=" << pass << "," << pass;
  }
}

INSTANTIATE_TEST_SUITE_P(Shards, IdempotenceTest, ::testing::Range(0, kShards));

}  // namespace
}  // namespace hlogym
