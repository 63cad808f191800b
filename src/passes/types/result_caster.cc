#include "passes/types/result_caster.h"

#include "hlo/query.h"
#include "hlo/status_macros.h"
#include "passes/builders.h"
#include "passes/pass_utils.h"
#include "passes/types/operand_upcaster.h"

namespace hlogym {
namespace {

PrimitiveType InferredType(const Instruction* instruction) {
  return HigherPrecisionType(instruction->operand(0)->shape().element_type(),
                             instruction->operand(1)->shape().element_type());
}

bool Matches(const Instruction* instruction) {
  if ((instruction->opcode() != Opcode::kDot && instruction->opcode() != Opcode::kConvolution) ||
      instruction->operand_count() != 2 || !instruction->shape().IsArray() ||
      !instruction->operand(0)->shape().IsArray() || !instruction->operand(1)->shape().IsArray()) {
    return false;
  }
  const PrimitiveType inferred = InferredType(instruction);
  const PrimitiveType result = instruction->shape().element_type();
  // Only ever widen the computation, never narrow it.
  return inferred != result && HigherPrecisionType(inferred, result) == inferred;
}

// The same op computing in the operands' type, converted to the old type.
absl::StatusOr<Instruction*> Expand(Instruction* instruction) {
  Computation* computation = instruction->parent();
  auto wide = instruction->CloneWithNewOperands(instruction->operands(), "");
  wide->mutable_shape().set_element_type(InferredType(instruction));
  Instruction* added = computation->AddInstruction(std::move(wide));
  HLOGYM_ASSIGN(convert, MakeConvert(added, instruction->shape().element_type()));
  convert->set_shape(instruction->shape());
  return convert;
}

}  // namespace

absl::StatusOr<bool> ResultCaster::Run(Module& module) {
  return ExpandMatchingInstructions(module, name(), Matches, Expand);
}

bool ResultCaster::MayChange(const Module& module) const {
  return ContainsOpcode(module, {Opcode::kDot, Opcode::kConvolution});
}

}  // namespace hlogym
