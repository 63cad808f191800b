#include "passes/expanders/dynamic_padder.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "hlo/query.h"
#include "hlo/status_macros.h"
#include "passes/builders.h"
#include "passes/control_flow/call_inliner.h"
#include "passes/control_flow/flatten_call_graph.h"
#include "passes/pass_utils.h"
#include "passes/simplifiers/dce.h"

namespace hlogym {
namespace {

absl::Status Malformed(const Instruction* hlo, const std::string& what) {
  return absl::InvalidArgumentError(absl::StrCat(hlo->name(), ": ", what));
}

// The dimension a get-/set-dimension-size reads or writes, checked.
absl::StatusOr<int64_t> SizeDimension(const Instruction* hlo, int64_t operands) {
  if (hlo->operand_count() != operands) {
    return Malformed(hlo, absl::StrCat("expected ", operands, " operand(s)"));
  }
  const Shape& shape = hlo->operand(0)->shape();
  const std::vector<int64_t>& dims = hlo->attrs().dimensions;
  if (!shape.IsArray() || dims.size() != 1 || dims[0] < 0 || dims[0] >= shape.rank()) {
    return Malformed(hlo, "dimensions={d} must name one dimension of the array operand");
  }
  return dims[0];
}

// The size a get-dimension-size reads when it is known without padding:
// a constant for a static dimension, the size operand of a
// set-dimension-size of that dimension; nullptr otherwise.
absl::StatusOr<Instruction*> KnownSize(Instruction* get_size, bool with_layout) {
  HLOGYM_ASSIGN(dim, SizeDimension(get_size, 1));
  const Shape& result = get_size->shape();
  if (!result.IsScalar() || result.element_type() != PrimitiveType::kS32) {
    return Malformed(get_size, "get-dimension-size must return s32[]");
  }
  Instruction* operand = get_size->operand(0);
  if (!operand->shape().is_dynamic_dimension(dim)) {
    return MakeScalarConstant(get_size->parent(), PrimitiveType::kS32,
                              static_cast<double>(operand->shape().dimensions(dim)), with_layout);
  }
  if (operand->opcode() == Opcode::kSetDimensionSize) {
    HLOGYM_ASSIGN(set_dim, SizeDimension(operand, 2));
    if (set_dim == dim && operand->operand(1)->shape().Compatible(result)) {
      return operand->operand(1);
    }
  }
  return nullptr;
}

// Whether the module has anything for the padder: a dimension size read or
// written, a SetBound, or a dynamic shape.
bool HasWork(const Module& module) {
  for (const auto& computation : module.computations()) {
    for (const auto& owned : computation->instructions()) {
      const Instruction* hlo = owned.get();
      if (hlo->opcode() == Opcode::kGetDimensionSize ||
          hlo->opcode() == Opcode::kSetDimensionSize ||
          (hlo->opcode() == Opcode::kCustomCall && hlo->attrs().custom_call_target == "SetBound") ||
          !hlo->shape().is_static()) {
        return true;
      }
    }
  }
  return false;
}

}  // namespace

absl::StatusOr<bool> DynamicPadder::Run(Module& module) {
  // Check every instruction the pass reads before changing anything more.
  const std::vector<Computation*> computations = module.MakeComputationPostOrder();
  for (Computation* computation : computations) {
    for (const auto& owned : computation->instructions()) {
      const Instruction* hlo = owned.get();
      if (hlo->opcode() == Opcode::kGetDimensionSize) {
        HLOGYM_ASSIGN(dim, SizeDimension(hlo, 1));
        (void)dim;
      } else if (hlo->opcode() == Opcode::kSetDimensionSize) {
        HLOGYM_ASSIGN(dim, SizeDimension(hlo, 2));
        (void)dim;
      } else if (hlo->opcode() == Opcode::kCustomCall &&
                 hlo->attrs().custom_call_target == "SetBound" && hlo->operand_count() < 1) {
        return Malformed(hlo, "SetBound needs an operand");
      }
    }
  }
  // XLA's padder starts, where the module has anything for it to do, by
  // flattening the call graph (a computation called from several places,
  // reducers included, gets a copy per caller), inlining every call and
  // removing dead code; its pass dumps of PyTorch/XLA's batch norms show the
  // copied reducers.
  if (!HasWork(module)) return false;
  HLOGYM_ASSIGN(flattened, FlattenCallGraph().Run(module));
  HLOGYM_ASSIGN(inlined, CallInliner().Run(module));
  HLOGYM_ASSIGN(cleaned, HloDce().Run(module));
  bool rewrote = flattened || inlined || cleaned;
  for (Computation* computation : module.MakeComputationPostOrder()) {
    for (Instruction* hlo : computation->MakeInstructionPostOrder()) {
      if (hlo->opcode() != Opcode::kGetDimensionSize) continue;
      HLOGYM_ASSIGN(size, KnownSize(hlo, hlo->shape().has_layout()));
      if (size == nullptr) continue;
      HLOGYM_RETURN_IF_ERROR(hlo->ReplaceAllUsesWith(size));
      rewrote = true;
    }
  }
  // A set-dimension-size whose result is static (its size a constant equal
  // to the dimension: TensorFlow's top_k and argsort write one per result)
  // sets nothing the padder must keep: its users read the operand, as XLA's
  // padder forwards every set-dimension-size once the sizes are inferred.
  for (Computation* computation : module.MakeComputationPostOrder()) {
    for (Instruction* hlo : computation->MakeInstructionPostOrder()) {
      if (hlo->opcode() != Opcode::kSetDimensionSize || !hlo->shape().is_static()) continue;
      Instruction* operand = hlo->operand(0);
      if (!operand->shape().Compatible(hlo->shape())) continue;
      HLOGYM_RETURN_IF_ERROR(hlo->ReplaceAllUsesWith(operand));
      rewrote = true;
    }
  }
  for (Computation* computation : module.MakeComputationPostOrder()) {
    for (Instruction* hlo : computation->MakeInstructionPostOrder()) {
      if (hlo->opcode() != Opcode::kCustomCall || hlo->attrs().custom_call_target != "SetBound") {
        continue;
      }
      Instruction* operand = hlo->operand(0);
      // Compatible compares dynamic dimensions too.
      if (!operand->shape().Compatible(hlo->shape())) continue;
      HLOGYM_RETURN_IF_ERROR(hlo->ReplaceAllUsesWith(operand));
      rewrote = true;
    }
  }
  if (rewrote) {
    // The replaced instructions go, with any other dead code.
    HloDce dce;
    HLOGYM_ASSIGN(removed, dce.Run(module));
    (void)removed;
  }
  return rewrote;
}

bool DynamicPadder::MayChange(const Module& module) const { return HasWork(module); }

}  // namespace hlogym
