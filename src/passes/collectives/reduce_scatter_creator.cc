#include "passes/collectives/reduce_scatter_creator.h"

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "hlo/query.h"
#include "hlo/status_macros.h"
#include "passes/builders.h"
#include "passes/collectives/collective_opt_utils.h"
#include "passes/collectives/collective_rewrite_utils.h"
#include "passes/pass_utils.h"

namespace hlogym {
namespace {

bool IsFusionBody(const Module& module, const Computation* computation) {
  for (const auto& caller : module.computations()) {
    for (const auto& instruction : caller->instructions()) {
      if (instruction->opcode() != Opcode::kFusion) continue;
      for (const Computation* callee : instruction->called_computations()) {
        if (callee == computation) return true;
      }
    }
  }
  return false;
}

}  // namespace

absl::StatusOr<bool> ReduceScatterCreator::Run(Module& module) {
  bool changed = false;
  int64_t next_channel_id = -1;
  std::vector<Computation*> computations;
  for (const auto& computation : module.computations()) computations.push_back(computation.get());
  for (Computation* computation : computations) {
    bool any = false;
    for (const auto& instruction : computation->instructions()) {
      any |= instruction->opcode() == Opcode::kAllReduce;
    }
    if (!any || IsFusionBody(module, computation)) continue;
    for (Instruction* ar : computation->MakeInstructionPostOrder()) {
      if (ar->opcode() != Opcode::kAllReduce || ar->to_apply() == nullptr) continue;
      std::optional<DynamicSliceSpec> spec = MatchDynamicSliceOfCollective(ar);
      if (!spec.has_value()) continue;
      Instruction* ds = spec->dynamic_slice;
      const int64_t dim = spec->split_dim;
      Shape shape = ar->shape();
      const int64_t shard = shape.dimensions(dim) / spec->group_size;
      Instruction* input = ar->operand(0);
      if (shape.dimensions(dim) % spec->group_size != 0) {
        std::vector<SliceDimension> slice(shape.rank());
        for (int64_t d = 0; d < shape.rank(); ++d) slice[d].limit = shape.dimensions(d);
        slice[dim].limit = shard * spec->group_size;
        HLOGYM_ASSIGN(sliced, MakeSlice(input, slice));
        input = sliced;
      }
      shape.mutable_dimensions()[dim] = shard;
      auto rs = std::make_unique<Instruction>(Opcode::kReduceScatter, shape);
      rs->AppendOperand(input);
      rs->mutable_called_computations().push_back(ar->to_apply());
      rs->mutable_attrs().dimensions = {dim};
      for (const char* key :
           {"channel_id", "replica_groups", "constrain_layout", "use_global_device_ids"}) {
        const RawAttribute* attr = ar->attrs().FindRaw(key);
        if (attr == nullptr) continue;
        if (std::string_view(key) == "channel_id") {
          if (next_channel_id < 0) next_channel_id = NextChannelId(module);
          rs->mutable_attrs().raw.push_back({key, absl::StrCat(next_channel_id++)});
        } else {
          rs->mutable_attrs().raw.push_back(*attr);
        }
      }
      Instruction* added = AddWithLayoutOf(computation, std::move(rs), ar);
      if (!ds->shape().Compatible(added->shape())) {
        return absl::InternalError(absl::StrCat(ds->name(),
                                                ": reduce-scatter shape does not "
                                                "match the dynamic-slice it replaces"));
      }
      HLOGYM_RETURN_IF_ERROR(ds->ReplaceAllUsesWith(added));
      HLOGYM_RETURN_IF_ERROR(computation->RemoveInstruction(ds));
      HLOGYM_RETURN_IF_ERROR(computation->RemoveInstructionAndUnusedOperands(ar));
      changed = true;
    }
  }
  return changed;
}

bool ReduceScatterCreator::MayChange(const Module& module) const {
  // An all-reduce whose only user is a dynamic-slice.
  return ContainsOpcode(module, {Opcode::kAllReduce}) &&
         ContainsOpcode(module, {Opcode::kDynamicSlice});
}

}  // namespace hlogym
