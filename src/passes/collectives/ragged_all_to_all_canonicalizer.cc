#include "passes/collectives/ragged_all_to_all_canonicalizer.h"

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "hlo/query.h"
#include "hlo/status_macros.h"
#include "passes/builders.h"
#include "passes/pass_utils.h"

namespace hlogym {
namespace {

bool Matches(const Instruction* instruction) {
  return instruction->opcode() == Opcode::kRaggedAllToAll &&
         (instruction->operand_count() < 3 ||
          instruction->operand(2)->shape().element_type() != PrimitiveType::kS64);
}

absl::StatusOr<Instruction*> Canonicalize(Instruction* ragged) {
  if (ragged->operand_count() < 3) {
    return absl::InvalidArgumentError(
        absl::StrCat(ragged->name(), ": ragged-all-to-all needs offset and size operands"));
  }
  std::vector<Instruction*> operands = {ragged->operand(0), ragged->operand(1)};
  for (int64_t i = 2; i < ragged->operand_count(); ++i) {
    Instruction* operand = ragged->operand(i);
    if (!operand->shape().IsArray() || !IsIntegralType(operand->shape().element_type())) {
      return absl::InvalidArgumentError(absl::StrCat(ragged->name(), ": ragged-all-to-all operand ",
                                                     i, " (", operand->name(),
                                                     ") is not an integer array"));
    }
    Instruction* converted = operand;
    if (operand->shape().element_type() != PrimitiveType::kS64) {
      HLOGYM_ASSIGN(wide, MakeConvert(operand, PrimitiveType::kS64));
      converted = wide;
    }
    operands.push_back(converted);
  }
  return ragged->parent()->AddInstruction(ragged->CloneWithNewOperands(operands, ""));
}

}  // namespace

absl::StatusOr<bool> RaggedAllToAllCanonicalizer::Run(Module& module) {
  return ExpandMatchingInstructions(module, name(), Matches, Canonicalize);
}

bool RaggedAllToAllCanonicalizer::MayChange(const Module& module) const {
  return ContainsOpcode(module, {Opcode::kRaggedAllToAll});
}

}  // namespace hlogym
