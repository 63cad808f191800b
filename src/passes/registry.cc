#include "passes/registry.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
// One include per pass, by folder and name.
#include "hlo/status_macros.h"
#include "passes/collectives/all_gather_broadcast_reorder.h"
#include "passes/collectives/all_gather_dynamic_slice_simplifier.h"
#include "passes/collectives/all_gather_optimizer.h"
#include "passes/collectives/all_reduce_folder.h"
#include "passes/collectives/all_reduce_promotion.h"
#include "passes/collectives/all_reduce_reassociate.h"
#include "passes/collectives/all_reduce_simplifier.h"
#include "passes/collectives/all_to_all_decomposer.h"
#include "passes/collectives/async_collective_replacer.h"
#include "passes/collectives/ragged_all_to_all_canonicalizer.h"
#include "passes/collectives/reduce_scatter_creator.h"
#include "passes/collectives/reduce_scatter_reassociate.h"
#include "passes/control_flow/call_inliner.h"
#include "passes/control_flow/conditional_canonicalizer.h"
#include "passes/control_flow/conditional_simplifier.h"
#include "passes/control_flow/conditional_to_select.h"
#include "passes/control_flow/control_dep_rewriter.h"
#include "passes/control_flow/flatten_call_graph.h"
#include "passes/control_flow/map_inliner.h"
#include "passes/expanders/associative_scan_rewriter.h"
#include "passes/expanders/batchnorm_expander.h"
#include "passes/expanders/bitcast_dtypes_expander.h"
#include "passes/expanders/cholesky_expander.h"
#include "passes/expanders/comparison_expander.h"
#include "passes/expanders/convolution_4d_expander.h"
#include "passes/expanders/convolution_canonicalization.h"
#include "passes/expanders/convolution_group_converter.h"
#include "passes/expanders/convolution_pred_expander.h"
#include "passes/expanders/cse_barrier_expander.h"
#include "passes/expanders/dot_decomposer.h"
#include "passes/expanders/dynamic_index_splitter.h"
#include "passes/expanders/dynamic_padder.h"
#include "passes/expanders/eigh_expander.h"
#include "passes/expanders/gather_expander.h"
#include "passes/expanders/logistic_expander.h"
#include "passes/expanders/qr_expander.h"
#include "passes/expanders/real_imag_expander.h"
#include "passes/expanders/reduce_decomposer.h"
#include "passes/expanders/reduce_window_resizer.h"
#include "passes/expanders/reshape_decomposer.h"
#include "passes/expanders/rng_bit_generator_expander.h"
#include "passes/expanders/rng_expander.h"
#include "passes/expanders/scan_expander.h"
#include "passes/expanders/scatter_expander.h"
#include "passes/expanders/select_and_scatter_expander.h"
#include "passes/expanders/stable_sort_expander.h"
#include "passes/expanders/stochastic_convert_decomposer.h"
#include "passes/expanders/topk_decomposer.h"
#include "passes/expanders/triangular_solve_expander.h"
#include "passes/sharding/convert_memory_placement_to_internal_annotations.h"
#include "passes/sharding/sharding_remover.h"
#include "passes/sharding/shardy_xla.h"
#include "passes/sharding/spmd_partitioner.h"
#include "passes/sharding/strip_memory_placement_annotations.h"
#include "passes/simplifiers/algebraic_simplifier.h"
#include "passes/simplifiers/batch_dot_simplification.h"
#include "passes/simplifiers/batched_gather_scatter_normalizer.h"
#include "passes/simplifiers/broadcast_canonicalizer.h"
#include "passes/simplifiers/computation_deduplicator.h"
#include "passes/simplifiers/constant_folding.h"
#include "passes/simplifiers/convert_mover.h"
#include "passes/simplifiers/cse.h"
#include "passes/simplifiers/dce.h"
#include "passes/simplifiers/dot_dimension_sorter.h"
#include "passes/simplifiers/dot_merger.h"
#include "passes/simplifiers/dynamic_dimension_simplifier.h"
#include "passes/simplifiers/gather_simplifier.h"
#include "passes/simplifiers/gemv_rewriter.h"
#include "passes/simplifiers/reduce_window_rewriter.h"
#include "passes/simplifiers/reshape_mover.h"
#include "passes/simplifiers/scatter_simplifier.h"
#include "passes/simplifiers/scatter_slice_simplifier.h"
#include "passes/simplifiers/simplify_sorts.h"
#include "passes/simplifiers/slice_sinker.h"
#include "passes/simplifiers/topk_rewriter.h"
#include "passes/simplifiers/topk_splitter.h"
#include "passes/simplifiers/transpose_folding.h"
#include "passes/simplifiers/tree_reduction_rewriter.h"
#include "passes/simplifiers/tuple_simplifier.h"
#include "passes/simplifiers/zero_sized_hlo_elimination.h"
#include "passes/types/change_op_data_type.h"
#include "passes/types/float_normalization.h"
#include "passes/types/operand_upcaster.h"
#include "passes/types/result_caster.h"
#include "passes/types/simplify_fp_conversions.h"
#include "passes/types/sub_byte_normalization.h"
#include "passes/while_loop/while_loop_constant_sinking.h"
#include "passes/while_loop/while_loop_invariant_code_motion.h"
#include "passes/while_loop/while_loop_simplifier.h"
#include "passes/while_loop/while_loop_trip_count_annotator.h"
#include "passes/while_loop/while_loop_unroller.h"

namespace hlogym {
namespace {

// One line per pass, alphabetical by XLA name.
void RegisterBuiltinPasses(PassRegistry& registry, PassTarget target) {
  // XLA:CPU's pass dumps show its algsimp turning dynamic-update-slices of a
  // broadcast scalar at constant indices into pads.
  registry.Register({"algsimp", "algebraic simplifier (XLA CPU options)", [target] {
                       return std::make_unique<AlgebraicSimplifier>(AlgebraicSimplifierOptions{
                           .enable_dynamic_update_slice_to_pad_replacement = true,
                           .enable_conv_operand_swap = target == PassTarget::kHlogym});
                     }});
  registry.Register({"algsimp-gpu",
                     "algebraic simplifier with XLA GPU's layout-insensitive options (reduce of "
                     "transpose/reshape always simplified)",
                     [] {
                       return std::make_unique<AlgebraicSimplifier>(
                           AlgebraicSimplifierOptions{
                               .enable_dot_strength_reduction = true,
                               .minmax_propagate_nan = true,
                               .unconditionally_simplify_reduce_of_transpose_or_reshape = true},
                           "algsimp-gpu");
                     }});
  registry.Register(
      {"all-gather-bcast-reorder",
       "all-gather(broadcast(x)) -> broadcast(all-gather(x)) over the non-broadcast dimensions",
       [] { return std::make_unique<AllGatherBroadcastReorder>(); }});
  registry.Register(
      {"all-gather-dynamic-slice-simplifier",
       "dynamic-slice of an all-gather at this device's shard -> the all-gather operand",
       [] { return std::make_unique<AllGatherDynamicSliceSimplifier>(); }});
  registry.Register({"all-gather-optimizer",
                     "op(all-gather(a), all-gather(b)) -> all-gather(op(a, b)) for commutative "
                     "binary ops (XLA GPU)",
                     [] { return std::make_unique<AllGatherOptimizer>(); }});
  registry.Register({"all-reduce-folder",
                     "all-reduce(all-reduce(x)) with foldable replica groups -> one all-reduce",
                     [] { return std::make_unique<AllReduceFolder>(); }});
  registry.Register(
      {"all-reduce-promotion", "bf16 all-reduce/reduce-scatter computed in f32 (XLA CPU)", [] {
         return MakeAllReducePromotion("all-reduce-promotion",
                                       {{PrimitiveType::kBF16, PrimitiveType::kF32}});
       }});
  registry.Register({"all-reduce-promotion-gpu",
                     "16-bit integer all-reduce/reduce-scatter computed in 32 bits (XLA GPU)", [] {
                       return MakeAllReducePromotion("all-reduce-promotion-gpu",
                                                     {{PrimitiveType::kU16, PrimitiveType::kU32},
                                                      {PrimitiveType::kS16, PrimitiveType::kS32}});
                     }});
  registry.Register(
      {"all-reduce-reassociate",
       "op(all-reduce(a), all-reduce(b)) -> all-reduce(op(a, b)) for matching reductions",
       [] { return std::make_unique<AllReduceReassociate>(); }});
  registry.Register({"all-reduce-simp",
                     "all-reduce/all-gather/reduce-scatter over single participants -> operand; "
                     "sums of replicated values -> multiply",
                     [] { return std::make_unique<AllReduceSimplifier>(); }});
  registry.Register({"all_to_all_decomposer",
                     "array all-to-all -> slices, tuple all-to-all, concatenate",
                     [] { return std::make_unique<AllToAllDecomposer>(); }});
  registry.Register({"associative-scan-rewriter",
                     "forward associative scans with a scalar init -> cumulative reduce-window "
                     "(two-level past base length 16)",
                     [] { return std::make_unique<AssociativeScanRewriter>(); }});
  registry.Register({"async-collective-replacer",
                     "async collective start/done pairs -> synchronous collectives (XLA CPU)",
                     [] { return std::make_unique<AsyncCollectiveReplacer>(); }});
  registry.Register({"batch-dot-simplification", "drop size-1 batch dimensions of dots",
                     [] { return std::make_unique<BatchDotSimplification>(); }});
  registry.Register(
      {"batched_gather_scatter_normalizer",
       "gathers/scatters with batching dimensions -> iota index columns and collapsed dimensions",
       [] { return std::make_unique<BatchedGatherScatterNormalizer>(); }});
  registry.Register({"batchnorm_expander",
                     "batch-norm training/inference/grad -> elementwise ops and reduces",
                     [] { return std::make_unique<BatchNormExpander>(); }});
  registry.Register({"bitcast_dtypes_expander",
                     "bitcast-convert between bit widths as shifts, ors and slices",
                     [] { return std::make_unique<BitcastDtypesExpander>(); }});
  registry.Register({"broadcast_canonicalizer",
                     "sort broadcast dimensions, transposing the result back",
                     [] { return std::make_unique<BroadcastCanonicalizer>(); }});
  registry.Register(
      {"call-inliner", "inline every kCall", [] { return std::make_unique<CallInliner>(); }});
  registry.Register({"call-inliner-single-call-site",
                     "inline kCalls whose callee has one call site",
                     [] { return std::make_unique<CallInliner>(true); }});
  registry.Register({"change-op-data-type", "f16 dots and convolutions computed in f32 (XLA CPU)",
                     [] { return MakeCpuChangeOpDataType(); }});
  registry.Register({"cholesky_expander",
                     "cholesky -> call of a blocked algorithm (while loop per 128-block, "
                     "triangular-solve panels)",
                     [] { return std::make_unique<CholeskyExpander>(); }});
  registry.Register({"comparison-expander",
                     "expand TOTALORDER float compares into integer compares",
                     [] { return std::make_unique<ComparisonExpander>(); }});
  registry.Register({"computation-deduplicator", "replace computations equal to an earlier one",
                     [] { return std::make_unique<HloComputationDeduplicator>(); }});
  registry.Register({"conditional-canonicalizer",
                     "give non-tuple conditionals a one-element tuple result",
                     [] { return std::make_unique<ConditionalCanonicalizer>(); }});
  registry.Register({"conditional-to-select",
                     "turn conditionals in embedded computations into selects",
                     [] { return std::make_unique<ConditionalToSelect>(); }});
  registry.Register({"constant_folding", "evaluate instructions whose operands are all constants",
                     [] { return std::make_unique<HloConstantFolding>(); }});
  registry.Register({"control-dep-rewriter", "control_dep custom calls -> control edges",
                     [] { return std::make_unique<ControlDepRewriter>(); }});
  registry.Register({"convolution-canonicalization",
                     "convolutions XLA:CPU cannot give Eigen -> NHWC/HWIO transposes around a "
                     "canonical convolution (entry computation)",
                     [] { return std::make_unique<ConvolutionCanonicalization>(); }});
  registry.Register({"convolution-group-converter",
                     "expand batch_group_count convolutions (CPU's first instance)",
                     [] { return std::make_unique<ConvolutionGroupConverter>(true); }});
  registry.Register(
      {"convolution-group-converter-feature-groups",
       "expand feature_group_count convolutions not in F16/F32 (CPU's second instance)", [] {
         return std::make_unique<ConvolutionGroupConverter>(
             false, "convolution-group-converter-feature-groups");
       }});
  registry.Register({"convolution-pred-expander",
                     "pred convolutions computed in f16 with converts around them (XLA GPU)",
                     [] { return std::make_unique<ConvolutionPredExpander>(); }});
  registry.Register({"convolution_4d_expander",
                     "drop trivial (size-1, unpadded) spatial dimensions of 4-spatial-dimension "
                     "convolutions via reshapes",
                     [] { return std::make_unique<Convolution4DExpander>(); }});
  registry.Register(
      {"convert-memory-placement-to-internal-annotations",
       "annotate_device_placement custom calls -> MoveToHost/MoveToDevice/PinToDevice custom calls "
       "(XLA GPU)",
       [] { return std::make_unique<ConvertMemoryPlacementToInternalAnnotations>(); }});
  registry.Register({"convert-mover", "move widening converts down and narrowing converts up",
                     [] { return std::make_unique<ConvertMover>(); }});
  registry.Register(
      {"cse", "common subexpression elimination", [] { return std::make_unique<HloCse>(); }});
  registry.Register({"cse_barrier_expander", "remove opt-barrier instructions",
                     [] { return std::make_unique<OptimizationBarrierExpander>(); }});
  registry.Register({"dce", "remove dead instructions and computations",
                     [] { return std::make_unique<HloDce>(); }});
  registry.Register({"dot-merger",
                     "merge independent dots sharing an operand (16 MiB limit, GPU options)",
                     [] { return std::make_unique<DotMerger>(); }});
  registry.Register({"dot_decomposer", "canonicalize dots to [batch, M, K] x [batch, K, N]",
                     [] { return std::make_unique<DotDecomposer>(); }});
  registry.Register(
      {"dot_dimension_sorter",
       "sort consecutive unsorted dot contracting dimensions, keeping lhs/rhs pairs (XLA GPU)",
       [] { return std::make_unique<DotDimensionSorter>(); }});
  registry.Register({"dynamic-dimension-simplifier",
                     "flatten nested concatenates; forward slices of concatenates, scalar "
                     "reshape/broadcast and reshape/reshape pairs, identity converts and reshapes",
                     [] { return std::make_unique<DynamicDimensionSimplifier>(); }});
  registry.Register({"dynamic-index-splitter",
                     "split start-index vectors of dynamic-(update-)slice into scalars",
                     [] { return std::make_unique<DynamicIndexSplitter>(); }});
  registry.Register({"dynamic_padder",
                     "static get-dimension-size -> constant; get-dimension-size of "
                     "set-dimension-size -> its size; no-op SetBound -> operand; then dce",
                     [] { return std::make_unique<DynamicPadder>(); }});
  registry.Register(
      {"eigh_expander",
       "custom-call Eigh -> call of a parallel Jacobi eigendecomposition (while loop of sweeps)",
       [] { return std::make_unique<EighExpander>(); }});
  registry.Register({"flatten-call-graph",
                     "clone computations called from several control-flow sites",
                     [] { return std::make_unique<FlattenCallGraph>(); }});
  registry.Register({"float-normalization-bf16",
                     "compute bf16 ops in f32 with converts around them (CPU float support)", [] {
                       return std::make_unique<FloatNormalization>(
                           PrimitiveType::kBF16, PrimitiveType::kF32, /*cpu_library_filter=*/true);
                     }});
  registry.Register(
      {"float-normalization-f4e2m1fn",
       "compute f4e2m1fn ops in f16 with converts around them (CPU float support)", [] {
         return std::make_unique<FloatNormalization>(PrimitiveType::kF4E2M1FN, PrimitiveType::kF16);
       }});
  registry.Register({"float-normalization-f8e3m4",
                     "compute f8e3m4 ops in f16 with converts around them (CPU float support)", [] {
                       return std::make_unique<FloatNormalization>(PrimitiveType::kF8E3M4,
                                                                   PrimitiveType::kF16);
                     }});
  registry.Register({"float-normalization-f8e4m3",
                     "compute f8e4m3 ops in f16 with converts around them (CPU float support)", [] {
                       return std::make_unique<FloatNormalization>(PrimitiveType::kF8E4M3,
                                                                   PrimitiveType::kF16);
                     }});
  registry.Register(
      {"float-normalization-f8e4m3b11fnuz",
       "compute f8e4m3b11fnuz ops in f16 with converts around them (CPU float support)", [] {
         return std::make_unique<FloatNormalization>(PrimitiveType::kF8E4M3B11FNUZ,
                                                     PrimitiveType::kF16);
       }});
  registry.Register(
      {"float-normalization-f8e4m3fn",
       "compute f8e4m3fn ops in f16 with converts around them (CPU float support)", [] {
         return std::make_unique<FloatNormalization>(PrimitiveType::kF8E4M3FN, PrimitiveType::kF16);
       }});
  registry.Register({"float-normalization-f8e4m3fnuz",
                     "compute f8e4m3fnuz ops in f16 with converts around them (CPU float support)",
                     [] {
                       return std::make_unique<FloatNormalization>(PrimitiveType::kF8E4M3FNUZ,
                                                                   PrimitiveType::kF16);
                     }});
  registry.Register({"float-normalization-f8e5m2",
                     "compute f8e5m2 ops in f16 with converts around them (CPU float support)", [] {
                       return std::make_unique<FloatNormalization>(PrimitiveType::kF8E5M2,
                                                                   PrimitiveType::kF16);
                     }});
  registry.Register({"float-normalization-f8e5m2fnuz",
                     "compute f8e5m2fnuz ops in f16 with converts around them (CPU float support)",
                     [] {
                       return std::make_unique<FloatNormalization>(PrimitiveType::kF8E5M2FNUZ,
                                                                   PrimitiveType::kF16);
                     }});
  registry.Register({"float-normalization-f8e8m0fnu",
                     "compute f8e8m0fnu ops in f32 with converts around them (CPU float support)",
                     [] {
                       return std::make_unique<FloatNormalization>(PrimitiveType::kF8E8M0FNU,
                                                                   PrimitiveType::kF32);
                     }});
  registry.Register({"float-normalization-s4",
                     "compute s4 ops in s8 with converts around them (CPU float support)", [] {
                       return std::make_unique<FloatNormalization>(PrimitiveType::kS4,
                                                                   PrimitiveType::kS8);
                     }});
  registry.Register({"float-normalization-u4",
                     "compute u4 ops in u8 with converts around them (CPU float support)", [] {
                       return std::make_unique<FloatNormalization>(PrimitiveType::kU4,
                                                                   PrimitiveType::kU8);
                     }});
  registry.Register({"gather_expander",
                     "gathers with one index or whole-operand slices -> while loop / broadcast "
                     "(kEliminateSimpleGathers, CPU and GPU)",
                     [] {
                       return std::make_unique<GatherExpander>(
                           GatherExpander::Mode::kEliminateSimpleGathers);
                     }});
  registry.Register({"gather_expander-all",
                     "every gather -> counted while loop of dynamic slices (kEliminateAllGathers)",
                     [] {
                       return std::make_unique<GatherExpander>(
                           GatherExpander::Mode::kEliminateAllGathers, "gather_expander-all");
                     }});
  registry.Register({"gather_simplifier", "rewrite gathers into the canonical [N,K]-indices form",
                     [] { return std::make_unique<GatherSimplifier>(); }});
  registry.Register(
      {"gemv-rewriter",
       "matrix-vector dots -> matrix-matrix dots with a size-1 dimension, bitcast back",
       [] { return std::make_unique<GemvRewriter>(); }});
  registry.Register(
      {"gpu_scatter_expander",
       "scatters of elements wider than 64 bits -> while loop (XLA GPU GpuScatterExpander)", [] {
         return std::make_unique<ScatterExpander>(
             ScatterExpander::Mode::kEliminateGpuUnsupportedScatters, "gpu_scatter_expander");
       }});
  registry.Register({"logistic-expander", "logistic(x) -> 1 / (1 + exp(-x))",
                     [] { return std::make_unique<LogisticExpander>(); }});
  registry.Register({"map-inline", "replace maps of a single elementwise op by the op",
                     [] { return std::make_unique<MapInliner>(); }});
  registry.Register({"operand_upcaster", "convert dot/convolution operands to a wider result type",
                     [] { return std::make_unique<OperandUpcaster>(); }});
  registry.Register({"qr_expander",
                     "Qr / ProductOfElementaryHouseholderReflectors custom calls -> call of a "
                     "blocked Householder QR (while loops per 128-block, compact WY)",
                     [] { return std::make_unique<QrExpander>(); }});
  registry.Register({"ragged-all-to-all-canonicalizer",
                     "ragged-all-to-all offsets and sizes converted to s64",
                     [] { return std::make_unique<RaggedAllToAllCanonicalizer>(); }});
  registry.Register({"real_imag_expander", "real(x) -> x, imag(x) -> 0 for non-complex x",
                     [] { return std::make_unique<RealImagExpander>(); }});
  registry.Register({"reduce-decomposer",
                     "give reduce results the input layout, copying to the requested one",
                     [] { return std::make_unique<ReduceDecomposer>(); }});
  registry.Register({"reduce-scatter-creator",
                     "all-reduce feeding a dynamic-slice at this device's shard -> reduce-scatter",
                     [] { return std::make_unique<ReduceScatterCreator>(); }});
  registry.Register({"reduce-scatter-reassociate",
                     "op(reduce-scatter(a), reduce-scatter(b)) -> reduce-scatter(op(a, b)) for "
                     "matching reductions",
                     [] { return std::make_unique<ReduceScatterReassociate>(); }});
  registry.Register({"reduce-window-resizer",
                     "rank-1 reduce-windows -> reshape, rank-2 reduce-window, reshape",
                     [] { return std::make_unique<ReduceWindowResizer>(); }});
  registry.Register({"reduce-window-rewriter",
                     "two-level scans for long cumulative reduce-windows; rank-1 reduce-windows to "
                     "rank 2 (base length 16)",
                     [] { return std::make_unique<ReduceWindowRewriter>(); }});
  registry.Register({"reshape-decomposer",
                     "split non-bitcast reshapes into bitcast reshapes and copies",
                     [] { return std::make_unique<ReshapeDecomposer>(); }});
  registry.Register({"reshape-mover", "sink reshapes/transposes below elementwise ops",
                     [] { return std::make_unique<ReshapeMover>(); }});
  registry.Register({"reshape-mover-1d-broadcast-cheap",
                     "reshape-mover treating reshapes of rank-1 broadcasts as free (GPU options)",
                     [] {
                       return std::make_unique<ReshapeMover>(ReshapeMoverOptions{true},
                                                             "reshape-mover-1d-broadcast-cheap");
                     }});
  registry.Register({"result_caster",
                     "compute narrow-result dots/convolutions in the operand type, then convert",
                     [] { return std::make_unique<ResultCaster>(); }});
  registry.Register({"rng-bit-generator-expander",
                     "rng-bit-generator -> call computing Philox/ThreeFry bits in plain HLO",
                     [] { return std::make_unique<RngBitGeneratorExpander>(); }});
  registry.Register(
      {"rng-expander",
       "rng -> GetRngSeed key, rng-get-and-update-state and a Philox distribution call",
       [] { return std::make_unique<RngExpander>(); }});
  registry.Register({"scan_expander",
                     "scan -> counted while loop of dynamic slices and dynamic-update-slices",
                     [] { return std::make_unique<ScanExpander>(); }});
  registry.Register({"scatter_expander",
                     "scatters with one index -> while loop (kEliminateSimpleScatters: CPU with "
                     "fusion emitters, GPU)",
                     [] {
                       return std::make_unique<ScatterExpander>(
                           ScatterExpander::Mode::kEliminateSimpleScatters);
                     }});
  registry.Register(
      {"scatter_expander-all",
       "every scatter -> counted while loop of dynamic slices (kEliminateAllScatters)", [] {
         return std::make_unique<ScatterExpander>(ScatterExpander::Mode::kEliminateAllScatters,
                                                  "scatter_expander-all");
       }});
  registry.Register(
      {"scatter-slice-simplifier",
       "scatter read only through truncating slices -> scatter on sliced operands (XLA GPU)",
       [] { return std::make_unique<ScatterSliceSimplifier>(); }});
  registry.Register({"scatter_simplifier", "rewrite scatters into the canonical [N,K]-indices form",
                     [] { return std::make_unique<ScatterSimplifier>(); }});
  registry.Register({"select_and_scatter_expander",
                     "select-and-scatter -> variadic reduce-window of (value, position) + scatter",
                     [] { return std::make_unique<SelectAndScatterExpander>(); }});
  registry.Register({"sharding-remover", "bypass Sharding custom calls (single partition)",
                     [] { return std::make_unique<ShardingRemover>(); }});
  registry.Register(
      {"shardy-xla",
       "Shardy single-partition cleanup: shard_map bodies made inlineable (no propagation)",
       [] { return std::make_unique<ShardyXla>(); }});
  registry.Register({"simplify-conditional",
                     "inline constant-selector conditionals, select between cheap branches",
                     [] { return std::make_unique<ConditionalSimplifier>(); }});
  registry.Register({"simplify-fp-conversions",
                     "collapse chains of floating-point converts (drops intermediate rounding)",
                     [] { return std::make_unique<SimplifyFpConversions>(); }});
  registry.Register({"simplify-sorts", "drop unused operands of variadic sorts",
                     [] { return std::make_unique<SortSimplifier>(); }});
  registry.Register({"spmd-partitioning",
                     "several partitions: shard_map's manual programs and data-parallel splits -> "
                     "per-partition shapes",
                     [] { return std::make_unique<SpmdPartitioner>(); }});
  registry.Register({"simplify-while-loops",
                     "remove dead loop state, constant elements and 0/1-trip loops",
                     [] { return std::make_unique<WhileLoopSimplifier>(); }});
  registry.Register({"slice-sinker", "apply elementwise ops on slices to the sliced sources once",
                     [] { return std::make_unique<SliceSinker>(); }});
  registry.Register(
      {"stable-sort-expander",
       "stable sorts -> unstable sorts tie-broken by an s32 iota operand (reused or added)",
       [] { return std::make_unique<StableSortExpander>(); }});
  registry.Register({"stochastic_convert_decomposer",
                     "stochastic-convert to signed integers as elementwise ops",
                     [] { return std::make_unique<StochasticConvertDecomposer>(); }});
  registry.Register({"strip-memory-placement-annotations",
                     "bypass annotate_device_placement/MoveToHost/MoveToDevice custom calls",
                     [] { return std::make_unique<StripMemoryPlacementAnnotations>(); }});
  registry.Register({"sub-byte-size-setter",
                     "set the element size E(n) of sub-byte types in layouts, remove it elsewhere",
                     [] { return std::make_unique<SubByteSizeSetter>(); }});
  registry.Register({"topk-decomposer",
                     "topk -> stable sort (with an iota for the indices) and slices (CPU: topk "
                     "instructions only)",
                     [] { return std::make_unique<TopkDecomposer>(); }});
  registry.Register({"topk-decomposer-all",
                     "topk-decomposer also decomposing custom-call TopK (no predicate, as the "
                     "interpreter runs it)",
                     [] { return std::make_unique<TopkDecomposer>(true, "topk-decomposer-all"); }});
  registry.Register({"topk-rewriter",
                     "sort of f32 data (with an index iota) sliced to its first k -> custom-call "
                     "TopK (CPU: f32 only)",
                     [] { return std::make_unique<TopkRewriter>(); }});
  registry.Register({"topk-rewriter-all",
                     "topk-rewriter for f32 and bf16 data (GPU pre-SPMD instance)",
                     [] { return std::make_unique<TopkRewriter>(false, "topk-rewriter-all"); }});
  registry.Register({"topk-splitter",
                     "TopK custom call over >= 1M elements -> per-chunk TopKs, then a sort of the "
                     "candidates (XLA GPU)",
                     [] { return std::make_unique<TopkSplitter>(); }});
  registry.Register({"transpose-folding", "fold transposes into dot dimension numbers (CPU rules)",
                     [] { return std::make_unique<TransposeFolding>(); }});
  registry.Register({"tree_reduction_rewriter",
                     "split reductions over more than 32 elements into reduce(reduce-window)",
                     [] { return std::make_unique<TreeReductionRewriter>(); }});
  registry.Register({"triangular_solve_expander",
                     "triangular-solve -> call of a blocked solve (inverted 128-blocks, a while "
                     "loop, dots), direct solve for small batched ones",
                     [] { return std::make_unique<TriangularSolveExpander>(); }});
  registry.Register({"tuple-simplifier", "forward gte(tuple) and collapse tuple(gte(x, i)...)",
                     [] { return std::make_unique<TupleSimplifier>(); }});
  registry.Register({"while-loop-constant-sinking",
                     "copy constant loop-invariant elements into while bodies and conditions",
                     [] { return std::make_unique<WhileLoopConstantSinking>(); }});
  registry.Register({"while-loop-invariant-code-motion",
                     "hoist loop-invariant instructions out of while bodies",
                     [] { return std::make_unique<WhileLoopInvariantCodeMotion>(); }});
  registry.Register({"while-loop-trip-count-annotator",
                     "write known trip counts into while backend_config",
                     [] { return std::make_unique<WhileLoopTripCountAnnotator>(); }});
  registry.Register(
      {"while_loop_unroller",
       "fully unroll trivial loops of at most 64 iterations (XLA's default thresholds)",
       [] { return std::make_unique<WhileLoopUnroller>(); }});
  registry.Register({"zero_sized_hlo_elimination", "replace zero-element arrays by constants",
                     [] { return std::make_unique<ZeroSizedHloElimination>(); }});
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

PassRegistry* NewBuiltin(PassTarget target) {
  auto* registry = new PassRegistry();
  RegisterBuiltinPasses(*registry, target);
  return registry;
}

PassRegistry* NewWithPipelines(PassTarget target) {
  auto* registry = new PassRegistry(PassRegistry::Builtin(target));
  for (const PipelineInfo& pipeline : BuiltinPipelines()) {
    registry->Register({pipeline.name, pipeline.summary, [create = pipeline.create, target] {
                          return create(PassRegistry::Builtin(target));
                        }});
  }
  return registry;
}

}  // namespace

const PassRegistry& PassRegistry::Builtin(PassTarget target) {
  static const PassRegistry* const registries[] = {NewBuiltin(PassTarget::kHlogym),
                                                   NewBuiltin(PassTarget::kXla)};
  return *registries[static_cast<int>(target)];
}

const PassRegistry& PassRegistry::WithPipelines(PassTarget target) {
  static const PassRegistry* const registries[] = {NewWithPipelines(PassTarget::kHlogym),
                                                   NewWithPipelines(PassTarget::kXla)};
  return *registries[static_cast<int>(target)];
}

bool ChangesNumericPrecision(std::string_view pass_name) {
  return pass_name.rfind("float-normalization-", 0) == 0 ||
         pass_name == "simplify-fp-conversions" || pass_name == "change-op-data-type" ||
         pass_name == "operand_upcaster" || pass_name == "result_caster";
}

void PassRegistry::Register(PassInfo info) { passes_.push_back(std::move(info)); }

const PassInfo* PassRegistry::Find(std::string_view name) const {
  for (const PassInfo& info : passes_) {
    if (info.name == name) return &info;
  }
  return nullptr;
}

bool IsSequenceName(std::string_view name) {
  return name.find(kSequenceSeparator) != std::string_view::npos;
}

std::string SequenceName(const std::vector<std::string>& passes) {
  return absl::StrJoin(passes, std::string(1, kSequenceSeparator));
}

std::vector<std::string> SequencePasses(std::string_view name) {
  return absl::StrSplit(absl::string_view(name.data(), name.size()), kSequenceSeparator);
}

bool PassRegistry::Knows(std::string_view name) const {
  if (Find(name) != nullptr) return true;
  if (!IsSequenceName(name)) return false;
  for (const std::string& part : SequencePasses(name)) {
    if (Find(part) == nullptr) return false;
  }
  return true;
}

absl::StatusOr<std::unique_ptr<Pass>> PassRegistry::Create(std::string_view name) const {
  if (const PassInfo* info = Find(name)) return info->create();
  if (IsSequenceName(name)) {
    std::vector<std::unique_ptr<Pass>> parts;
    for (const std::string& part : SequencePasses(name)) {
      absl::StatusOr<std::unique_ptr<Pass>> pass =
          part.empty() ? absl::InvalidArgumentError("an empty name") : Create(part);
      if (!pass.ok()) {
        return absl::Status(
            pass.status().code(),
            absl::StrCat("in the sequence '", std::string(name), "': ", pass.status().message()));
      }
      parts.push_back(*std::move(pass));
    }
    return std::make_unique<PassPipeline>(std::string(name), std::move(parts));
  }
  std::vector<std::string> close;
  for (const PassInfo& info : passes_) {
    if (EditDistance(name, info.name) <= 3) close.push_back(info.name);
  }
  std::string message = absl::StrCat("unknown pass '", std::string(name), "'");
  if (!close.empty())
    absl::StrAppend(&message, " (did you mean ", absl::StrJoin(close, ", "), "?)");
  absl::StrAppend(&message, "; `hlogym list-passes` lists them all");
  return absl::NotFoundError(message);
}

absl::StatusOr<std::unique_ptr<Pass>> CreatePipeline(std::string_view name, PassTarget target) {
  for (const PipelineInfo& pipeline : BuiltinPipelines()) {
    if (pipeline.name == name) return pipeline.create(PassRegistry::Builtin(target));
  }
  std::vector<std::string> names;
  for (const PipelineInfo& pipeline : BuiltinPipelines()) names.push_back(pipeline.name);
  return absl::NotFoundError(absl::StrCat("unknown pipeline '", std::string(name),
                                          "'; known: ", absl::StrJoin(names, ", ")));
}

absl::StatusOr<std::unique_ptr<Pass>> CreatePassList(std::string_view comma_separated,
                                                     PassTarget target) {
  std::vector<std::unique_ptr<Pass>> passes;
  for (absl::string_view piece :
       absl::StrSplit(absl::string_view(comma_separated.data(), comma_separated.size()), ',',
                      absl::SkipWhitespace())) {
    piece = absl::StripAsciiWhitespace(piece);
    HLOGYM_ASSIGN(pass, PassRegistry::WithPipelines(target).Create(
                            std::string_view(piece.data(), piece.size())));
    passes.push_back(std::move(pass));
  }
  if (passes.empty()) return absl::InvalidArgumentError("no passes given");
  return std::make_unique<PassPipeline>("passes", std::move(passes));
}

}  // namespace hlogym
