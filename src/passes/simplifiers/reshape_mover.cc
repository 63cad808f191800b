#include "passes/simplifiers/reshape_mover.h"

#include <algorithm>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "hlo/query.h"
#include "hlo/shape_util.h"
#include "hlo/status_macros.h"
#include "hlo/str_cat.h"
#include "passes/builders.h"
#include "passes/change_tracking.h"
#include "passes/pass_utils.h"

namespace hlogym {
namespace {

bool IsRearrange(const Instruction* hlo) {
  return hlo->opcode() == Opcode::kReshape || hlo->opcode() == Opcode::kTranspose;
}

// XLA's HloInstruction::IsElementwise for the opcodes that occur before
// fusion (map left out, see the header).
bool IsMovableElementwise(const Instruction* hlo) {
  if (!IsElementwise(hlo->opcode())) return false;
  if (hlo->opcode() == Opcode::kBitcastConvert) {
    return BitWidth(hlo->shape().element_type()) ==
           BitWidth(hlo->operand(0)->shape().element_type());
  }
  return hlo->shape().IsArray();
}

// XLA's ShapeUtil::Equal, for shapes that may have been read without a layout.
constexpr Shape::Equality kXlaEqual = {.layouts = Shape::Layouts::kCompareMissingAsDefault};

bool EquivalentRearranges(const Instruction* a, const Instruction* b) {
  if (a->opcode() != b->opcode() || !a->shape().SameDimensions(b->shape())) return false;
  if (a->opcode() == Opcode::kTranspose) return a->attrs().dimensions == b->attrs().dimensions;
  return a->operand(0)->shape().SameDimensions(b->operand(0)->shape());
}

int64_t TrueRank(const Shape& shape) {
  return std::count_if(shape.dimensions().begin(), shape.dimensions().end(),
                       [](int64_t d) { return d != 1; });
}

class Mover {
 public:
  explicit Mover(const ReshapeMoverOptions& options) : options_(options) {}

  // Whether `hlo` can take the inverse of `rearrange` for free.
  bool CanTriviallyRearrange(const Instruction* hlo, const Instruction* rearrange) const {
    // A reshape that keeps the shape, layout included (one that changes the layout moves data).
    if (rearrange->opcode() == Opcode::kReshape &&
        rearrange->shape().Equal(rearrange->operand(0)->shape(), kXlaEqual)) {
      return true;
    }
    if (rearrange->opcode() == Opcode::kTranspose &&
        IsIdentityPermutation(rearrange->attrs().dimensions)) {
      return true;
    }
    if (hlo->opcode() == Opcode::kConstant) return true;
    if (hlo->opcode() == Opcode::kRng && hlo->user_count() == 1) return true;
    if (hlo->opcode() != Opcode::kBroadcast) return false;
    const std::vector<int64_t>& dims = hlo->attrs().dimensions;
    if (!IsSortedDims(dims)) return false;
    if (rearrange->opcode() == Opcode::kReshape) {
      const Shape& source = hlo->operand(0)->shape();
      if (source.IsScalar()) return true;
      if (!options_.reshape_of_1d_broadcast_is_cheap ? 1 : 0) return false;
      return TrueRank(source) <= 1 || ReshapeLeavesDimensionsUnmodified(
                                          rearrange->shape(), rearrange->operand(0)->shape(), dims)
                                          .has_value();
    }
    // Transpose: the inverse transpose applied to the broadcast sends its
    // dimension d to perm[d]; those must stay in increasing order.
    const std::vector<int64_t>& perm = rearrange->attrs().dimensions;
    std::vector<int64_t> moved;
    moved.reserve(dims.size());
    for (int64_t d : dims) moved.push_back(perm[d]);
    return IsSortedDims(moved);
  }

  const Instruction* FirstNontrivialRearrange(const Instruction* hlo) const {
    for (const Instruction* operand : hlo->operands()) {
      if (IsRearrange(operand) && !CanTriviallyRearrange(operand->operand(0), operand)) {
        return operand;
      }
    }
    return nullptr;
  }

  bool IsCandidate(const Instruction* hlo) const {
    if (!IsMovableElementwise(hlo)) return false;
    if (!hlo->control_predecessors().empty() || !hlo->control_successors().empty()) return false;
    const Instruction* rearrange = FirstNontrivialRearrange(hlo);
    if (rearrange == nullptr) return false;
    for (const Instruction* operand : hlo->operands()) {
      bool ok = IsRearrange(operand) ? EquivalentRearranges(operand, rearrange)
                                     : CanTriviallyRearrange(operand, rearrange);
      if (!ok) return false;
    }
    return true;
  }

  absl::StatusOr<Instruction*> ApplyInverse(const Instruction* rearrange, Instruction* operand) {
    if (rearrange->opcode() == Opcode::kReshape) {
      // The rearrange's operand shape, layout included, in the operand's element type.
      Shape target = rearrange->operand(0)->shape();
      target.set_element_type(operand->shape().element_type());
      if (operand->shape().Equal(target, kXlaEqual)) return operand;
      if (operand->opcode() == Opcode::kReshape &&
          operand->operand(0)->shape().Equal(target, kXlaEqual)) {
        return operand->operand(0);
      }
      auto reshaped = MakeReshape(operand, target.dimensions());
      if (reshaped.ok() && target.has_layout()) (*reshaped)->set_shape(target);
      return reshaped;
    }
    const std::vector<int64_t>& perm = rearrange->attrs().dimensions;
    if (IsIdentityPermutation(perm)) return operand;
    return MakeTranspose(operand, InversePermutation(perm));
  }

  absl::Status Sink(Instruction* hlo) {
    Computation* computation = hlo->parent();
    const Instruction* rearrange = FirstNontrivialRearrange(hlo);
    if (rearrange == nullptr) return absl::InternalError("reshape-mover: candidate vanished");
    std::vector<Instruction*> operands;
    operands.reserve(hlo->operand_count());
    for (Instruction* operand : hlo->operands()) {
      HLOGYM_ASSIGN(moved, ApplyInverse(rearrange, operand));
      operands.push_back(moved);
    }
    // The elementwise op takes the rearrange operand's shape, layout included, as in XLA (the
    // default layout where that operand has none and the module has layouts).
    Shape new_shape = rearrange->operand(0)->shape();
    new_shape.set_element_type(hlo->shape().element_type());
    const bool has_layout = new_shape.has_layout();
    auto clone = hlo->CloneWithNewOperands(operands, "");
    clone->set_shape(std::move(new_shape));
    clone->set_name(computation->parent()->UniqueName(hlo->name()));
    Instruction* elementwise = has_layout ? computation->AddInstruction(std::move(clone))
                                          : AddWithLayoutOf(computation, std::move(clone), hlo);

    auto replacement = std::make_unique<Instruction>(rearrange->opcode(), hlo->shape());
    replacement->AppendOperand(elementwise);
    if (rearrange->opcode() == Opcode::kTranspose) {
      replacement->mutable_attrs().dimensions = rearrange->attrs().dimensions;
    }
    Instruction* added = computation->AddInstruction(std::move(replacement));
    return computation->ReplaceInstruction(hlo, added);
  }

  absl::StatusOr<bool> RunOnComputation(Computation* computation) {
    bool any = false;
    for (const auto& owned : computation->instructions()) {
      if (IsCandidate(owned.get())) {
        any = true;
        break;
      }
    }
    if (!any) return false;
    std::vector<Instruction*> candidates;
    // Post order: a candidate's operands are handled before it, so removing
    // what a rewrite leaves dead never touches a pending candidate.
    for (Instruction* hlo : computation->MakeInstructionPostOrder()) {
      if (IsCandidate(hlo)) candidates.push_back(hlo);
    }
    if (candidates.empty()) return false;
    absl::flat_hash_set<const Instruction*> alive(candidates.begin(), candidates.end());
    // Drop candidates sharing a rearrange operand with a non-candidate, to a
    // fixed point.
    bool removed = true;
    while (removed && !alive.empty()) {
      removed = false;
      std::vector<const Instruction*> blocked;
      for (Instruction* candidate : candidates) {
        if (!alive.contains(candidate)) continue;
        for (const Instruction* operand : candidate->operands()) {
          if (!IsRearrange(operand)) continue;
          for (const Instruction* user : operand->users()) {
            if (!alive.contains(user)) {
              blocked.push_back(operand);
              break;
            }
          }
        }
      }
      for (const Instruction* operand : blocked) {
        for (const Instruction* user : operand->users()) removed |= alive.erase(user) > 0;
      }
    }
    if (alive.empty()) return false;
    for (Instruction* candidate : candidates) {
      if (!alive.contains(candidate)) continue;
      HLOGYM_RETURN_IF_ERROR(Sink(candidate));
    }
    return true;
  }

 private:
  const ReshapeMoverOptions& options_;
};

}  // namespace

absl::StatusOr<bool> ReshapeMover::Run(Module& module) {
  TrackedRun run(module, StrCat(name(), ":", options_.reshape_of_1d_broadcast_is_cheap ? 1 : 0));
  Mover mover(options_);
  bool changed = false;
  // Fused computations are left alone, as in XLA (and as algsimp, which
  // folds the rearrange'(rearrange(x)) this pass leaves, leaves them).
  for (Computation* computation : NonFusionComputations(module)) {
    if (!run.MustVisit(*computation)) continue;
    HLOGYM_ASSIGN(done, mover.RunOnComputation(computation));
    changed |= done;
  }
  run.Complete();
  return changed;
}

bool ReshapeMover::MayChange(const Module& module) const {
  return ContainsOpcode(module, {Opcode::kReshape, Opcode::kTranspose});
}

}  // namespace hlogym
