#include "passes/collectives/all_gather_broadcast_reorder.h"

#include <algorithm>
#include <memory>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "hlo/query.h"
#include "hlo/status_macros.h"
#include "passes/builders.h"
#include "passes/collectives/collective_rewrite_utils.h"
#include "passes/pass_utils.h"

namespace hlogym {
namespace {

absl::Status Bad(const Instruction& instruction, const std::string& why) {
  return absl::InvalidArgumentError(
      absl::StrCat("all-gather-bcast-reorder: ", instruction.name(), ": ", why));
}

// A copy of `gather` over `operand` with `shape` and gather dimension `dim`.
Instruction* NewGather(Instruction* gather, Instruction* operand, const Shape& shape, int64_t dim,
                       int64_t& next_channel_id) {
  std::unique_ptr<Instruction> clone = gather->CloneWithNewOperands({operand}, "");
  clone->set_shape(shape);
  clone->mutable_attrs().dimensions = {dim};
  if (HasChannelId(*clone)) SetChannelId(*clone, next_channel_id++);
  return gather->parent()->AddInstruction(std::move(clone));
}

absl::StatusOr<Instruction*> Reorder(Instruction* gather, int64_t& next_channel_id) {
  Instruction* broadcast = gather->operand(0);
  Instruction* x = broadcast->operand(0);
  const Shape& shape = gather->shape();
  const std::vector<int64_t>& bcast_dims = broadcast->attrs().dimensions;
  const int64_t ag_dim = gather->attrs().dimensions[0];
  auto position = std::find(bcast_dims.begin(), bcast_dims.end(), ag_dim);
  if (position != bcast_dims.end()) {
    const int64_t operand_dim = position - bcast_dims.begin();
    Shape gathered = x->shape();
    gathered.mutable_dimensions()[operand_dim] = shape.dimensions(ag_dim);
    Instruction* new_gather = NewGather(gather, x, gathered, operand_dim, next_channel_id);
    return MakeBroadcast(new_gather, shape.dimensions(), bcast_dims);
  }
  const int64_t before = broadcast->shape().dimensions(ag_dim);
  if (before <= 0 || shape.dimensions(ag_dim) % before != 0) {
    return Bad(*gather, "gathered dimension is not a multiple of the operand's");
  }
  const int64_t factor = shape.dimensions(ag_dim) / before;
  std::vector<int64_t> lifted_dims = {1};
  lifted_dims.insert(lifted_dims.end(), x->shape().dimensions().begin(),
                     x->shape().dimensions().end());
  HLOGYM_ASSIGN(lifted, MakeReshape(x, lifted_dims));
  Shape gathered = lifted->shape();
  gathered.mutable_dimensions()[0] = factor;
  Instruction* new_gather = NewGather(gather, lifted, gathered, 0, next_channel_id);
  std::vector<int64_t> split_dims = shape.dimensions();
  split_dims[ag_dim] = factor;
  split_dims.insert(split_dims.begin() + ag_dim + 1, before);
  std::vector<int64_t> new_bcast_dims = {ag_dim};
  for (int64_t d : bcast_dims) new_bcast_dims.push_back(d + (d > ag_dim ? 1 : 0));
  HLOGYM_ASSIGN(spread, MakeBroadcast(new_gather, split_dims, new_bcast_dims));
  return MakeReshape(spread, shape.dimensions());
}

}  // namespace

bool AllGatherBroadcastReorder::MayChange(const Module& module) const {
  return ContainsOpcode(module, {Opcode::kAllGather});
}

absl::StatusOr<bool> AllGatherBroadcastReorder::Run(Module& module) {
  if (ModuleHasConstrainedLayout(module, Opcode::kAllGather)) return false;
  int64_t next_channel_id = NextChannelId(module);
  bool changed = false;
  for (Computation* computation : module.MakeComputationPostOrder()) {
    for (Instruction* gather : computation->MakeInstructionPostOrder()) {
      if (gather->opcode() != Opcode::kAllGather || !gather->shape().IsArray() ||
          gather->operand_count() != 1 || gather->operand(0)->opcode() != Opcode::kBroadcast ||
          gather->operand(0)->operand_count() != 1) {
        continue;
      }
      const Instruction* broadcast = gather->operand(0);
      const Shape& shape = gather->shape();
      if (gather->attrs().dimensions.size() != 1 || gather->attrs().dimensions[0] < 0 ||
          gather->attrs().dimensions[0] >= shape.rank() ||
          broadcast->shape().rank() != shape.rank()) {
        return Bad(*gather, "all-gather needs one gather dimension within its rank");
      }
      absl::flat_hash_set<int64_t> non_uniform(broadcast->attrs().dimensions.begin(),
                                               broadcast->attrs().dimensions.end());
      non_uniform.insert(gather->attrs().dimensions[0]);
      int64_t uniform_size = 1;
      for (int64_t d = 0; d < shape.rank(); ++d) {
        if (!non_uniform.contains(d)) uniform_size *= shape.dimensions(d);
      }
      if (uniform_size == 1) continue;
      HLOGYM_ASSIGN(replacement, Reorder(gather, next_channel_id));
      HLOGYM_RETURN_IF_ERROR(gather->ReplaceAllUsesWith(replacement));
      HLOGYM_RETURN_IF_ERROR(computation->RemoveInstructionAndUnusedOperands(gather));
      changed = true;
    }
  }
  return changed;
}

}  // namespace hlogym
