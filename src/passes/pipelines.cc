// Named pipelines (xla-gpu-default: see GpuDefaultSpec). xla-cpu-default follows XLA's CPU compiler
// (CpuCompiler::RunHloPassesThroughLayoutAssn, the version in jaxlib 0.10.2,
// single partition, default debug options: fusion emitters on, no oneDNN; the
// dots and reductions it hands to YNNPACK left as it leaves them,
// passes/cpu_library_support.h) up to layout assignment, limited to the passes
// hlogym implements; the rest are listed as missing. Passes are looked up in
// the registry when the pipeline is created, so newly registered passes join
// automatically.
#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "hlo/module.h"
#include "hlo/query.h"
#include "passes/registry.h"
#include "passes/sharding/spmd_partitioner.h"

namespace hlogym {
namespace {

// Which modules a sub-pipeline runs on: XLA's CPU compiler partitions a module
// compiled for several partitions, and removes the shardings of one compiled
// for one.
enum class Partitions { kAny, kOne, kSeveral };

// A step of a pipeline spec: a pass by registry name, or a (fixed-point)
// sub-pipeline.
struct Step {
  std::string pass;  // empty for a sub-pipeline
  std::string pipeline_name;
  bool fixed_point = false;
  std::vector<Step> steps;
  Partitions partitions = Partitions::kAny;
};

Step P(std::string name) { return Step{std::move(name), "", false, {}}; }
Step Sub(std::string name, std::vector<Step> steps) {
  return Step{"", std::move(name), false, std::move(steps)};
}
Step Fix(std::string name, std::vector<Step> steps) {
  return Step{"", std::move(name), true, std::move(steps)};
}
Step Only(Partitions partitions, Step step) {
  step.partitions = partitions;
  return step;
}

// A sub-pipeline that runs only on the modules `partitions` names (a pipeline
// still, so that pass timers list the passes inside it, not it).
class PartitionGate : public PassPipeline {
 public:
  PartitionGate(Partitions partitions, std::string name, std::vector<std::unique_ptr<Pass>> passes)
      : PassPipeline(std::move(name), std::move(passes)), partitions_(partitions) {}
  absl::StatusOr<bool> Run(Module& module) override {
    return Applies(module) ? PassPipeline::Run(module) : false;
  }
  bool MayChange(const Module& module) const override {
    return Applies(module) && PassPipeline::MayChange(module);
  }
  std::string_view runs_on() const override {
    return partitions_ == Partitions::kSeveral ? "modules compiled for several partitions"
                                               : "modules compiled for one partition";
  }

 private:
  bool Applies(const Module& module) const {
    return (NumPartitions(module) > 1) == (partitions_ == Partitions::kSeveral);
  }
  Partitions partitions_;
};

// CreateSimplificationPipeline in cpu_compiler.cc: run to a fixed point
// (HloPassFix, 25 iterations at most).
Step Simplification(std::string name) {
  return Fix(std::move(name),
             {P("algsimp"), P("simplify-sorts"), P("dce"), P("gather_expander"),
              P("gather_simplifier"), P("tree_reduction_rewriter"), P("zero_sized_hlo_elimination"),
              P("while-loop-invariant-code-motion"), P("tuple-simplifier"),
              P("while-loop-constant-sinking"), P("simplify-while-loops"), P("dce"),
              P("reshape-mover"), P("constant_folding"), P("simplify-conditional")});
}

Step CpuDefaultSpec() {
  std::vector<Step> main = {
      P("batched_gather_scatter_normalizer"), P("result_caster"), P("dot_decomposer"),
      P("operand_upcaster"), P("rng-expander"), P("rng-bit-generator-expander"),
      P("zero_sized_hlo_elimination"), P("dynamic-index-splitter"), P("conditional-to-select"),
      P("map-inline"), P("topk-decomposer"), P("comparison-expander"), P("cholesky_expander"),
      P("qr_expander"), P("eigh_expander"), P("triangular_solve_expander"),
      P("all_to_all_decomposer"), P("stochastic_convert_decomposer"),
      // CallInliner(/*single_call_site=*/true)
      P("call-inliner-single-call-site"), P("batch-dot-simplification"), P("dot_decomposer"),
      P("all-reduce-promotion")};
  for (const char* type : {"bf16", "f8e5m2", "f8e4m3", "f8e4m3fn", "f8e4m3b11fnuz", "f8e5m2fnuz",
                           "f8e4m3fnuz", "f8e3m4", "s4", "u4", "f4e2m1fn", "f8e8m0fnu"}) {
    main.push_back(P(std::string("float-normalization-") + type));
  }
  for (Step step : std::vector<Step>{
           P("batch-dot-simplification"), P("convolution-group-converter"),
           P("convolution-group-converter-feature-groups"), P("batchnorm_expander"),
           P("logistic-expander"), P("conditional-canonicalizer"),
           P("dynamic-dimension-simplifier"), P("associative-scan-rewriter"),
           // xla_reduce_window_rewrite_base_length defaults to 16, so it runs.
           Fix("reduce-window-rewriter", {P("reduce-window-rewriter")}), P("reduce-window-resizer"),
           P("scan_expander"), P("dynamic_padder"), P("convolution-canonicalization"),
           P("change-op-data-type"), Simplification("simplification"),
           P("select_and_scatter_expander"),
           // With fusion emitters on (and the CPU scatter emitter enabled) only
           // the kEliminateSimpleScatters instance runs, then scatter_simplifier.
           P("scatter_expander"), P("scatter_simplifier"),
           Simplification("post_scatter_expansion_simplification"), P("gemv-rewriter"),
           P("bitcast_dtypes_expander"), P("topk-rewriter"), P("transpose-folding"), P("cse"),
           P("cse_barrier_expander"), P("tuple-simplifier"), P("while-loop-trip-count-annotator"),
           P("flatten-call-graph")}) {
    main.push_back(std::move(step));
  }
  // async-collective and pre-spmd-partitioner, and shardy-xla and
  // control-dep-rewriter in sharding-removal, as XLA's own dumps of every
  // corpus module list them. shardy-xla is gated on use_shardy_partitioner
  // (on by default in jax) and runs without propagation for one partition.
  // For several partitions the partitioner runs instead (spmd-partitioning
  // models shard_map's manual programs and data-parallel splits;
  // DefaultPipelineCaveat names what it leaves), with the cleanup XLA's
  // partitioner ends with.
  return Sub("xla-cpu-default",
             {Sub("async-collective", {P("async-collective-replacer")}),
              Sub("pre-spmd-partitioner", {P("strip-memory-placement-annotations")}),
              Only(Partitions::kSeveral,
                   Sub("spmd-partitioner",
                       {P("flatten-call-graph"), P("call-inliner"), P("zero_sized_hlo_elimination"),
                        P("conditional-canonicalizer"), P("spmd-partitioning"),
                        Sub("spmd-cleanup", {P("dce"), P("tuple-simplifier"), P("dce"), P("cse")}),
                        P("call-inliner")})),
              Only(Partitions::kOne,
                   Sub("sharding-removal", {P("flatten-call-graph"), P("sharding-remover"),
                                            P("shardy-xla"), P("control-dep-rewriter"), P("dce")})),
              Sub("SubbytePacker pipeline", {P("sub-byte-size-setter")}),
              Sub("HLO passes through layout assignment", std::move(main))});
}

// xla-gpu-default: GpuCompiler::OptimizeHloModule up to (not including)
// convolution canonicalization and layout assignment, single partition,
// default debug options, an Ampere-or-newer CUDA device: the pre-SPMD
// cleanup, sharding removal, RunOptimizationPasses with its "simplification"
// and "simplification-2" fixed points, and the collective optimizations,
// then the call-graph flattening that opens layout assignment. Left out as
// library-specific (they only produce or consume cuDNN/CUB/custom kernels):
// cudnn-custom-call-converter, topk-specializer, dot-operand-converter and the
// cuDNN convolution canonicalization. Where hlogym lacks XLA's GPU variant of
// a pass the nearest one runs: operand_upcaster/result_caster also touch
// matrix-multiplication dots (XLA's GPU filter skips them),
// comparison-expander does not upcast bf16 sort comparisons to f32, and
// transpose-folding folds by the CPU rules.
Step GpuDefaultSpec() {
  std::vector<Step> optimization = {
      P("batched_gather_scatter_normalizer"), P("topk-splitter"), P("topk-decomposer-all"),
      P("dot_dimension_sorter"), P("dot_decomposer"), P("result_caster"), P("operand_upcaster"),
      P("sub-byte-size-setter"), P("rng-expander"), P("rng-bit-generator-expander"),
      P("comparison-expander"), P("zero_sized_hlo_elimination"), P("select_and_scatter_expander"),
      // xla_gpu_deterministic_ops is off, so only the unsupported-scatter
      // expander runs.
      P("gpu_scatter_expander"), P("qr_expander"), P("eigh_expander"), P("dynamic-index-splitter"),
      P("call-inliner"), P("stochastic_convert_decomposer"), P("convolution_4d_expander"),
      P("convolution-pred-expander"), P("batchnorm_expander"), P("logistic-expander"),
      P("conditional-canonicalizer"), P("dynamic-dimension-simplifier"),
      Fix("reduce-window-rewriter", {P("reduce-window-rewriter")}), P("dynamic_padder"),
      P("stable-sort-expander"),
      Fix("simplification",
          {P("zero_sized_hlo_elimination"), P("gather_simplifier"), P("gather_expander"),
           P("scatter_simplifier"), P("scatter_expander"), P("scatter-slice-simplifier"),
           P("algsimp-gpu"), P("bitcast_dtypes_expander"),
           // xla_gpu_dot_merger_threshold_mb defaults to 32.
           P("dot-merger"), P("simplify-sorts"), P("tuple-simplifier"),
           P("while-loop-constant-sinking"), P("simplify-while-loops"), P("slice-sinker"),
           P("reshape-mover-1d-broadcast-cheap"), P("constant_folding"), P("simplify-conditional"),
           P("real_imag_expander"), P("transpose-folding"), P("cse"), P("dce")}),
      // ConvertMover and ReshapeMover undo each other, so XLA runs the former
      // with algsimp in a second fixed point.
      Fix("simplification-2", {P("convert-mover"), P("algsimp-gpu")}),
      P("computation-deduplicator")};
  return Sub("xla-gpu-default",
             {Sub("pre-spmd-partitioner",
                  {P("convert-memory-placement-to-internal-annotations"), P("call-inliner"),
                   P("zero_sized_hlo_elimination"), P("conditional-canonicalizer"),
                   P("topk-decomposer"), P("topk-rewriter-all")}),
              Sub("sharding-removal", {P("sharding-remover"), P("dce")}),
              Sub("optimization", std::move(optimization)),
              Sub("collective-optimizations",
                  {P("ragged-all-to-all-canonicalizer"), P("all-reduce-simp"),
                   P("all-reduce-folder"), P("all-reduce-splitter"), P("all-gather-optimizer"),
                   P("all-gather-dynamic-slice-simplifier"), P("all-reduce-reassociate"),
                   P("reduce-scatter-reassociate"), P("while-loop-all-reduce-code-motion"),
                   P("collective-quantizer"), P("dce"), P("reduce-scatter-creator"),
                   P("algsimp-gpu"), P("all-gather-bcast-reorder"), P("all-reduce-promotion-gpu"),
                   P("dce"), P("while-loop-trip-count-annotator")}),
              Sub("layout assignment", {P("flatten-call-graph")})});
}

// Builds `step` from the passes `registry` has; nullptr if none of them.
std::unique_ptr<Pass> Build(const Step& step, const PassRegistry& registry) {
  if (!step.pass.empty()) {
    if (registry.Find(step.pass) == nullptr) return nullptr;
    auto pass = registry.Create(step.pass);
    return pass.ok() ? std::move(*pass) : nullptr;
  }
  std::vector<std::unique_ptr<Pass>> passes;
  for (const Step& inner : step.steps) {
    if (auto pass = Build(inner, registry)) passes.push_back(std::move(pass));
  }
  if (passes.empty()) return nullptr;
  if (step.partitions != Partitions::kAny) {
    return std::make_unique<PartitionGate>(step.partitions, step.pipeline_name, std::move(passes));
  }
  auto pipeline = std::make_unique<PassPipeline>(step.pipeline_name, std::move(passes));
  if (step.fixed_point) return std::make_unique<FixedPointPass>(std::move(pipeline));
  return pipeline;
}

void CollectMissing(const Step& step, const PassRegistry& registry,
                    std::vector<std::string>& missing) {
  if (!step.pass.empty()) {
    if (registry.Find(step.pass) == nullptr &&
        std::find(missing.begin(), missing.end(), step.pass) == missing.end()) {
      missing.push_back(step.pass);
    }
    return;
  }
  for (const Step& inner : step.steps) CollectMissing(inner, registry, missing);
}

// A named pipeline built from `spec` with the registry's passes (an empty
// pipeline when the registry has none of them); with `exact`, without the
// passes that change numeric precision or act on what they would change.
PipelineInfo SpecPipeline(std::string name, std::string summary, Step (*spec)(),
                          bool exact = false) {
  PipelineInfo info;
  info.name = name;
  info.summary = std::move(summary);
  info.create = [name, spec, exact](const PassRegistry& registry) -> std::unique_ptr<Pass> {
    PassRegistry filtered;
    if (exact) {
      for (const PassInfo& pass : registry.passes()) {
        if (!ExactPipelineOmits(pass.name)) filtered.Register(pass);
      }
    }
    std::unique_ptr<Pass> pass = Build(spec(), exact ? filtered : registry);
    if (pass == nullptr) {
      pass = std::make_unique<PassPipeline>(name, std::vector<std::unique_ptr<Pass>>{});
    }
    return pass;
  };
  CollectMissing(spec(), PassRegistry::Builtin(), info.missing_passes);
  return info;
}

}  // namespace

// Besides the passes that change numeric precision, the exact pipeline leaves
// out those that expand an op because the CPU has no kernel for its
// low-precision type. In XLA they run after float normalization has widened
// such ops, so they never see them; in a pipeline without normalization they
// would (a bf16 depthwise convolution becomes a dense one with a masked
// kernel: 3.1x slower on XLA:CPU, which cannot undo it). The exact pipeline
// leaves them to XLA's own compile, which normalizes first.
bool ExactPipelineOmits(std::string_view pass_name) {
  return ChangesNumericPrecision(pass_name) ||
         pass_name == "convolution-group-converter-feature-groups";
}

std::string DefaultPipelineCaveat(const Module& module) {
  const int64_t partitions = NumPartitions(module);
  if (partitions <= 1) return "";
  const absl::Status partitionable = CheckSpmdPartitioning(module);
  if (partitionable.ok()) {
    const std::string inferred = SpmdPartitioningInferences(module);
    if (inferred.empty()) return "";
    return absl::StrCat("compiled for ", partitions,
                        " partitions: hlogym splits it as XLA's SPMD partitioner does, but where "
                        "Shardy's propagation chooses which split stays it follows a model of that "
                        "choice (",
                        inferred, "), so D may differ from XLA's");
  }
  return absl::StrCat("compiled for ", partitions,
                      " partitions: XLA splits it with its SPMD partitioner, which hlogym does "
                      "not model here (",
                      partitionable.message(), "), so D is not XLA's");
}

const std::vector<PipelineInfo>& BuiltinPipelines() {
  static const std::vector<PipelineInfo>* pipelines = new std::vector<PipelineInfo>{
      SpecPipeline("xla-cpu-default",
                   "XLA's CPU pipeline before layout assignment (RunHloPassesThroughLayoutAssn), "
                   "with its fixed-point simplification loops",
                   CpuDefaultSpec),
      SpecPipeline("xla-gpu-default",
                   "XLA's GPU pipeline before convolution canonicalization and layout assignment "
                   "(OptimizeHloModule), with its fixed-point simplification loops",
                   GpuDefaultSpec),
      // The fixed point inside xla-cpu-default on its own: a macro-action for
      // agents (one step runs what XLA repeats until nothing changes).
      SpecPipeline("xla-cpu-simplification",
                   "the fixed-point simplification loop of xla-cpu-default (algsimp, dce, "
                   "while-loop and tuple simplification, reshape-mover, constant folding, ...)",
                   [] { return Simplification("xla-cpu-simplification"); }),
      // Where an agent may not add excess precision, this is the default it
      // can start from (XLA's own compile normalizes the floats again after the
      // module is handed back).
      SpecPipeline("xla-cpu-default-exact",
                   "xla-cpu-default without the passes that change numeric precision (float "
                   "normalization, operand/result casting) or expand ops for their "
                   "low-precision type",
                   CpuDefaultSpec, /*exact=*/true),
  };
  return *pipelines;
}

}  // namespace hlogym
