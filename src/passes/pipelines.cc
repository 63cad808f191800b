// Named pipelines. xla-cpu-default follows XLA's CPU compiler
// (CpuCompiler::RunHloPassesThroughLayoutAssn, the version in jaxlib 0.10.2,
// single partition, default debug options: fusion emitters on, no oneDNN or
// YNNPACK) up to layout assignment, limited to the passes hlogym implements;
// the rest are listed as missing. Passes are looked up in the registry when
// the pipeline is created, so newly registered passes join automatically.
#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "passes/registry.h"

namespace hlogym {
namespace {

// A step of a pipeline spec: a pass by registry name, or a (fixed-point)
// sub-pipeline.
struct Step {
  std::string pass;  // empty for a sub-pipeline
  std::string pipeline_name;
  bool fixed_point = false;
  std::vector<Step> steps;
};

Step P(std::string name) { return Step{std::move(name), "", false, {}}; }
Step Sub(std::string name, std::vector<Step> steps) {
  return Step{"", std::move(name), false, std::move(steps)};
}
Step Fix(std::string name, std::vector<Step> steps) {
  return Step{"", std::move(name), true, std::move(steps)};
}

// CreateSimplificationPipeline in cpu_compiler.cc: run to a fixed point
// (HloPassFix, 25 iterations at most).
Step Simplification(std::string name) {
  return Fix(std::move(name),
             {P("algsimp"), P("simplify-sorts"), P("dce"), P("gather_expander"),
              P("gather_simplifier"), P("tree_reduction_rewriter"),
              P("zero_sized_hlo_elimination"), P("while-loop-invariant-code-motion"),
              P("tuple-simplifier"), P("while-loop-constant-sinking"),
              P("simplify-while-loops"), P("dce"), P("reshape-mover"), P("constant_folding"),
              P("simplify-conditional")});
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
           P("convolution-group-converter"), P("batchnorm_expander"), P("logistic-expander"),
           P("conditional-canonicalizer"), P("dynamic-dimension-simplifier"), P("dynamic_padder"),
           P("convolution-canonicalization"), P("change-op-data-type"),
           Simplification("simplification"), P("select_and_scatter_expander"),
           P("scatter_expander"), P("scatter_simplifier"), P("scatter_expander"),
           Simplification("post_scatter_expansion_simplification"), P("bitcast_dtypes_expander"),
           P("topk-rewriter"), P("transpose-folding"), P("cse"), P("cse_barrier_expander"),
           P("tuple-simplifier"), P("while-loop-trip-count-annotator"),
           P("flatten-call-graph")}) {
    main.push_back(std::move(step));
  }
  return Sub("xla-cpu-default",
             {Sub("sharding-removal", {P("flatten-call-graph"), P("sharding-remover"), P("dce")}),
              Sub("SubbytePacker pipeline", {P("sub-byte-size-setter")}),
              Sub("HLO passes through layout assignment", std::move(main))});
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

}  // namespace

const std::vector<PipelineInfo>& BuiltinPipelines() {
  static const std::vector<PipelineInfo>* pipelines = [] {
    auto* list = new std::vector<PipelineInfo>();
    PipelineInfo cpu;
    cpu.name = "xla-cpu-default";
    cpu.summary =
        "XLA's CPU pipeline before layout assignment (RunHloPassesThroughLayoutAssn), with its "
        "fixed-point simplification loops";
    cpu.create = [](const PassRegistry& registry) -> std::unique_ptr<Pass> {
      std::unique_ptr<Pass> pass = Build(CpuDefaultSpec(), registry);
      if (pass == nullptr) {
        pass = std::make_unique<PassPipeline>("xla-cpu-default", std::vector<std::unique_ptr<Pass>>{});
      }
      return pass;
    };
    CollectMissing(CpuDefaultSpec(), PassRegistry::Builtin(), cpu.missing_passes);
    list->push_back(std::move(cpu));
    return list;
  }();
  return *pipelines;
}

}  // namespace hlogym
