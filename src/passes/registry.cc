#include "passes/registry.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
// One include per pass, alphabetical.
#include "passes/algebraic_simplifier.h"
#include "passes/batch_dot_simplification.h"
#include "passes/broadcast_canonicalizer.h"
#include "passes/call_inliner.h"
#include "passes/comparison_expander.h"
#include "passes/computation_deduplicator.h"
#include "passes/conditional_canonicalizer.h"
#include "passes/conditional_simplifier.h"
#include "passes/conditional_to_select.h"
#include "passes/constant_folding.h"
#include "passes/convert_mover.h"
#include "passes/cse.h"
#include "passes/cse_barrier_expander.h"
#include "passes/dce.h"
#include "passes/dot_decomposer.h"
#include "passes/dot_merger.h"
#include "passes/flatten_call_graph.h"
#include "passes/gather_simplifier.h"
#include "passes/logistic_expander.h"
#include "passes/map_inliner.h"
#include "passes/reduce_decomposer.h"
#include "passes/reshape_decomposer.h"
#include "passes/reshape_mover.h"
#include "passes/scatter_simplifier.h"
#include "passes/sharding_remover.h"
#include "passes/simplify_fp_conversions.h"
#include "passes/simplify_sorts.h"
#include "passes/slice_sinker.h"
#include "passes/transpose_folding.h"
#include "passes/tree_reduction_rewriter.h"
#include "passes/tuple_simplifier.h"
#include "passes/while_loop_constant_sinking.h"
#include "passes/while_loop_invariant_code_motion.h"
#include "passes/while_loop_simplifier.h"
#include "passes/while_loop_trip_count_annotator.h"
#include "passes/zero_sized_hlo_elimination.h"

namespace hlogym {
namespace {

// One line per pass, alphabetical by XLA name.
void RegisterBuiltinPasses(PassRegistry& registry) {
  registry.Register({"algsimp", "algebraic simplifier (XLA CPU options)", [] { return std::make_unique<AlgebraicSimplifier>(); }});
  registry.Register({"batch-dot-simplification", "drop size-1 batch dimensions of dots", [] { return std::make_unique<BatchDotSimplification>(); }});
  registry.Register({"broadcast_canonicalizer", "sort broadcast dimensions, transposing the result back", [] { return std::make_unique<BroadcastCanonicalizer>(); }});
  registry.Register({"call-inliner", "inline every kCall", [] { return std::make_unique<CallInliner>(); }});
  registry.Register({"call-inliner-single-call-site", "inline kCalls whose callee has one call site", [] { return std::make_unique<CallInliner>(true); }});
  registry.Register({"comparison-expander", "expand TOTALORDER float compares into integer compares", [] { return std::make_unique<ComparisonExpander>(); }});
  registry.Register({"computation-deduplicator", "replace computations equal to an earlier one", [] { return std::make_unique<HloComputationDeduplicator>(); }});
  registry.Register({"conditional-canonicalizer", "give non-tuple conditionals a one-element tuple result", [] { return std::make_unique<ConditionalCanonicalizer>(); }});
  registry.Register({"conditional-to-select", "turn conditionals in embedded computations into selects", [] { return std::make_unique<ConditionalToSelect>(); }});
  registry.Register({"constant_folding", "evaluate instructions whose operands are all constants", [] { return std::make_unique<HloConstantFolding>(); }});
  registry.Register({"convert-mover", "move widening converts down and narrowing converts up", [] { return std::make_unique<ConvertMover>(); }});
  registry.Register({"cse", "common subexpression elimination", [] { return std::make_unique<HloCse>(); }});
  registry.Register({"cse_barrier_expander", "remove opt-barrier instructions", [] { return std::make_unique<OptimizationBarrierExpander>(); }});
  registry.Register({"dce", "remove dead instructions and computations", [] { return std::make_unique<HloDce>(); }});
  registry.Register({"dot-merger", "merge independent dots sharing an operand (16 MiB limit, GPU options)", [] { return std::make_unique<DotMerger>(); }});
  registry.Register({"dot_decomposer", "canonicalize dots to [batch, M, K] x [batch, K, N]", [] { return std::make_unique<DotDecomposer>(); }});
  registry.Register({"flatten-call-graph", "clone computations called from several control-flow sites", [] { return std::make_unique<FlattenCallGraph>(); }});
  registry.Register({"gather_simplifier", "rewrite gathers into the canonical [N,K]-indices form", [] { return std::make_unique<GatherSimplifier>(); }});
  registry.Register({"logistic-expander", "logistic(x) -> 1 / (1 + exp(-x))", [] { return std::make_unique<LogisticExpander>(); }});
  registry.Register({"map-inline", "replace maps of a single elementwise op by the op", [] { return std::make_unique<MapInliner>(); }});
  registry.Register({"reduce-decomposer", "give reduce results the input layout, copying to the requested one", [] { return std::make_unique<ReduceDecomposer>(); }});
  registry.Register({"reshape-decomposer", "split non-bitcast reshapes into bitcast reshapes and copies", [] { return std::make_unique<ReshapeDecomposer>(); }});
  registry.Register({"reshape-mover", "sink reshapes/transposes below elementwise ops", [] { return std::make_unique<ReshapeMover>(); }});
  registry.Register({"reshape-mover-1d-broadcast-cheap", "reshape-mover treating reshapes of rank-1 broadcasts as free (GPU options)", [] { return std::make_unique<ReshapeMover>(ReshapeMoverOptions{true}, "reshape-mover-1d-broadcast-cheap"); }});
  registry.Register({"scatter_simplifier", "rewrite scatters into the canonical [N,K]-indices form", [] { return std::make_unique<ScatterSimplifier>(); }});
  registry.Register({"sharding-remover", "bypass Sharding custom calls (single partition)", [] { return std::make_unique<ShardingRemover>(); }});
  registry.Register({"simplify-conditional", "inline constant-selector conditionals, select between cheap branches", [] { return std::make_unique<ConditionalSimplifier>(); }});
  registry.Register({"simplify-fp-conversions", "collapse chains of floating-point converts (drops intermediate rounding)", [] { return std::make_unique<SimplifyFpConversions>(); }});
  registry.Register({"simplify-sorts", "drop unused operands of variadic sorts", [] { return std::make_unique<SortSimplifier>(); }});
  registry.Register({"simplify-while-loops", "remove dead loop state, constant elements and 0/1-trip loops", [] { return std::make_unique<WhileLoopSimplifier>(); }});
  registry.Register({"slice-sinker", "apply elementwise ops on slices to the sliced sources once", [] { return std::make_unique<SliceSinker>(); }});
  registry.Register({"transpose-folding", "fold transposes into dot dimension numbers (CPU rules)", [] { return std::make_unique<TransposeFolding>(); }});
  registry.Register({"tree_reduction_rewriter", "split reductions over more than 32 elements into reduce(reduce-window)", [] { return std::make_unique<TreeReductionRewriter>(); }});
  registry.Register({"tuple-simplifier", "forward gte(tuple) and collapse tuple(gte(x, i)...)", [] { return std::make_unique<TupleSimplifier>(); }});
  registry.Register({"while-loop-constant-sinking", "copy constant loop-invariant elements into while bodies and conditions", [] { return std::make_unique<WhileLoopConstantSinking>(); }});
  registry.Register({"while-loop-invariant-code-motion", "hoist loop-invariant instructions out of while bodies", [] { return std::make_unique<WhileLoopInvariantCodeMotion>(); }});
  registry.Register({"while-loop-trip-count-annotator", "write known trip counts into while backend_config", [] { return std::make_unique<WhileLoopTripCountAnnotator>(); }});
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
