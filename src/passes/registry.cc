#include "passes/registry.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
// One include per pass, alphabetical.
#include "passes/algebraic_simplifier.h"
#include "passes/call_inliner.h"
#include "passes/computation_deduplicator.h"
#include "passes/constant_folding.h"
#include "passes/cse.h"
#include "passes/cse_barrier_expander.h"
#include "passes/dce.h"
#include "passes/flatten_call_graph.h"
#include "passes/sharding_remover.h"
#include "passes/simplify_sorts.h"
#include "passes/tuple_simplifier.h"
#include "passes/zero_sized_hlo_elimination.h"

namespace hlogym {
namespace {

// One line per pass, alphabetical by XLA name.
void RegisterBuiltinPasses(PassRegistry& registry) {
  registry.Register({"algsimp", "algebraic simplifier (XLA CPU options)", [] { return std::make_unique<AlgebraicSimplifier>(); }});
  registry.Register({"call-inliner", "inline every kCall", [] { return std::make_unique<CallInliner>(); }});
  registry.Register({"call-inliner-single-call-site", "inline kCalls whose callee has one call site", [] { return std::make_unique<CallInliner>(true); }});
  registry.Register({"computation-deduplicator", "replace computations equal to an earlier one", [] { return std::make_unique<HloComputationDeduplicator>(); }});
  registry.Register({"constant_folding", "evaluate instructions whose operands are all constants", [] { return std::make_unique<HloConstantFolding>(); }});
  registry.Register({"cse", "common subexpression elimination", [] { return std::make_unique<HloCse>(); }});
  registry.Register({"cse_barrier_expander", "remove opt-barrier instructions", [] { return std::make_unique<OptimizationBarrierExpander>(); }});
  registry.Register({"dce", "remove dead instructions and computations", [] { return std::make_unique<HloDce>(); }});
  registry.Register({"flatten-call-graph", "clone computations called from several control-flow sites", [] { return std::make_unique<FlattenCallGraph>(); }});
  registry.Register({"sharding-remover", "bypass Sharding custom calls (single partition)", [] { return std::make_unique<ShardingRemover>(); }});
  registry.Register({"simplify-sorts", "drop unused operands of variadic sorts", [] { return std::make_unique<SortSimplifier>(); }});
  registry.Register({"tuple-simplifier", "forward gte(tuple) and collapse tuple(gte(x, i)...)", [] { return std::make_unique<TupleSimplifier>(); }});
  registry.Register({"zero_sized_hlo_elimination", "replace zero-element arrays by constants", [] { return std::make_unique<ZeroSizedHloElimination>(); }});
}

// Edit distance, to suggest the pass the user probably meant.
size_t EditDistance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

}  // namespace

const PassRegistry& PassRegistry::Builtin() {
  static const PassRegistry* registry = [] {
    auto* r = new PassRegistry();
    RegisterBuiltinPasses(*r);
    return r;
  }();
  return *registry;
}

void PassRegistry::Register(PassInfo info) { passes_.push_back(std::move(info)); }

const PassInfo* PassRegistry::Find(std::string_view name) const {
  for (const PassInfo& info : passes_) {
    if (info.name == name) return &info;
  }
  return nullptr;
}

absl::StatusOr<std::unique_ptr<Pass>> PassRegistry::Create(std::string_view name) const {
  if (const PassInfo* info = Find(name)) return info->create();
  std::vector<std::string> close;
  for (const PassInfo& info : passes_) {
    if (EditDistance(name, info.name) <= 3) close.push_back(info.name);
  }
  std::string message = absl::StrCat("unknown pass '", std::string(name), "'");
  if (!close.empty()) absl::StrAppend(&message, " (did you mean ", absl::StrJoin(close, ", "), "?)");
  absl::StrAppend(&message, "; `hlogym list-passes` lists them all");
  return absl::NotFoundError(message);
}

absl::StatusOr<std::unique_ptr<Pass>> CreatePipeline(std::string_view name) {
  for (const PipelineInfo& pipeline : BuiltinPipelines()) {
    if (pipeline.name == name) return pipeline.create(PassRegistry::Builtin());
  }
  std::vector<std::string> names;
  for (const PipelineInfo& pipeline : BuiltinPipelines()) names.push_back(pipeline.name);
  return absl::NotFoundError(absl::StrCat("unknown pipeline '", std::string(name), "'; known: ",
                                          absl::StrJoin(names, ", ")));
}

absl::StatusOr<std::unique_ptr<Pass>> CreatePassList(std::string_view comma_separated) {
  std::vector<std::unique_ptr<Pass>> passes;
  for (absl::string_view piece :
       absl::StrSplit(absl::string_view(comma_separated.data(), comma_separated.size()), ',',
                      absl::SkipWhitespace())) {
    piece = absl::StripAsciiWhitespace(piece);
    auto pass = PassRegistry::Builtin().Create(std::string_view(piece.data(), piece.size()));
    if (!pass.ok()) return pass.status();
    passes.push_back(std::move(*pass));
  }
  if (passes.empty()) return absl::InvalidArgumentError("no passes given");
  return std::make_unique<PassPipeline>("passes", std::move(passes));
}

}  // namespace hlogym
