// Every pass hlogym implements, by XLA's name, and the named pipelines.
// Adding a pass: write src/passes/<xla-name>.{h,cc} and add one line to
// RegisterBuiltinPasses in registry.cc.
#ifndef HLOGYM_PASSES_REGISTRY_H_
#define HLOGYM_PASSES_REGISTRY_H_

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "passes/pass.h"

namespace hlogym {

// A sequence of registered names joined by '+' ("algsimp+cse+dce") names one
// pass that runs them in order: a macro-action, such as a known-good sequence
// a learned policy takes as one step. It replays like its parts run one by one,
// except that a part that fails fails the whole sequence (the gym then leaves
// the state as it was).
inline constexpr char kSequenceSeparator = '+';
bool IsSequenceName(std::string_view name);
// The name of `passes` run in order as one pass, and back: the passes a name
// runs (itself, when it is not a sequence).
std::string SequenceName(const std::vector<std::string>& passes);
std::vector<std::string> SequencePasses(std::string_view name);

struct PassInfo {
  std::string name;     // XLA's name, unique in the registry
  std::string summary;  // one line for `hlogym list-passes`
  std::function<std::unique_ptr<Pass>()> create;
};

// Where the passes' output goes.
enum class PassTarget {
  // The gym, the agents and op counts: every pass as XLA:CPU's pipeline runs it.
  kHlogym,
  // XLA's compile (`hlogym opt --for-xla`; every module hlogym.xla_bench and
  // hlogym.jax.optimize hand to XLA), which runs XLA's whole pipeline on it
  // again. A rewrite that XLA:CPU makes only after its target-specific
  // convolution canonicalization is left to XLA: algsimp does not swap
  // convolution operands. Canonicalization run again on a swapped convolution
  // transposes and copies its operands (a bf16 ResNet ran 0.73x of XLA alone
  // and a ResNet training step's gradients came out 5x farther from exact).
  kXla,
};

class PassRegistry {
 public:
  // The registry holding every built-in pass.
  static const PassRegistry& Builtin(PassTarget target = PassTarget::kHlogym);
  // Builtin() plus every named pipeline (BuiltinPipelines()) as one more
  // "pass" under its name, so that a pass list or a state record may name a
  // whole pipeline (`--passes=xla-cpu-default,algsimp`).
  static const PassRegistry& WithPipelines(PassTarget target = PassTarget::kHlogym);

  void Register(PassInfo info);
  // The pass of that name, or a sequence (IsSequenceName): its passes run in
  // order as one pass. NotFound naming the pass (and listing close names) if
  // unknown.
  absl::StatusOr<std::unique_ptr<Pass>> Create(std::string_view name) const;
  // Whether Create makes `name` (without making it).
  bool Knows(std::string_view name) const;
  const PassInfo* Find(std::string_view name) const;
  // In registration order.
  const std::vector<PassInfo>& passes() const { return passes_; }

 private:
  std::vector<PassInfo> passes_;
};

// A named pipeline such as "xla-cpu-default": the passes it runs, and the
// passes XLA's pipeline runs that hlogym does not implement yet.
struct PipelineInfo {
  std::string name;
  std::string summary;
  std::function<std::unique_ptr<Pass>(const PassRegistry&)> create;
  std::vector<std::string> missing_passes;
};

// XLA:CPU's default pipeline (D is what it makes of a module) and its variant
// without the passes that change numeric precision.
inline constexpr std::string_view kDefaultPipeline = "xla-cpu-default";
inline constexpr std::string_view kExactPipeline = "xla-cpu-default-exact";

const std::vector<PipelineInfo>& BuiltinPipelines();
absl::StatusOr<std::unique_ptr<Pass>> CreatePipeline(std::string_view name,
                                                     PassTarget target = PassTarget::kHlogym);

// Passes that change the numerics a module computes with rather than only its
// structure: float normalization (compute in a wider type), upcasts and
// down/up-cast folding that removes a rounding step. XLA runs some of them in
// its own pipeline; agents leave them out of their free choices unless the
// user allows excess precision (XLA's xla_allow_excess_precision).
bool ChangesNumericPrecision(std::string_view pass_name);

// The passes kExactPipeline leaves out of kDefaultPipeline: those that change
// numeric precision and those that expand ops for their low-precision type.
// Where none of them changes a module in the default pipeline's run, the exact
// pipeline makes the same module.
bool ExactPipelineOmits(std::string_view pass_name);

// Why kDefaultPipeline's result on `module` is not what XLA's pipeline makes of
// it, or "" when nothing known says so: a module compiled for more than one
// partition (num_partitions > 1 in its header, as jax.pmap and GSPMD lower) is
// split by XLA's SPMD partitioner before these passes, and hlogym has none.
std::string DefaultPipelineCaveat(const Module& module);

// Builds a pipeline from a comma-separated list of pass and pipeline names
// (PassRegistry::WithPipelines(target)).
absl::StatusOr<std::unique_ptr<Pass>> CreatePassList(std::string_view comma_separated,
                                                     PassTarget target = PassTarget::kHlogym);

}  // namespace hlogym

#endif  // HLOGYM_PASSES_REGISTRY_H_
