#include "passes/expanders/convolution_pred_expander.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "hlo/query.h"
#include "hlo/status_macros.h"
#include "passes/builders.h"
#include "passes/pass_utils.h"

namespace hlogym {
namespace {

bool IsPredArray(const Shape& shape) {
  return shape.IsArray() && shape.element_type() == PrimitiveType::kPred;
}

bool IsPredConvolution(const Instruction* instruction) {
  return instruction->opcode() == Opcode::kConvolution && instruction->operand_count() == 2 &&
         IsPredArray(instruction->shape()) && IsPredArray(instruction->operand(0)->shape()) &&
         IsPredArray(instruction->operand(1)->shape());
}

absl::StatusOr<Instruction*> ComputeInF16(Instruction* convolution) {
  std::vector<Instruction*> operands;
  for (Instruction* operand : convolution->operands()) {
    auto converted = MakeConvert(operand, PrimitiveType::kF16);
    if (!converted.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(
          convolution->name(), ": cannot convert operand to f16: ", converted.status().message()));
    }
    operands.push_back(*converted);
  }
  Computation* computation = convolution->parent();
  Instruction* wide = computation->AddInstruction(convolution->CloneWithNewOperands(
      operands, computation->parent()->UniqueName(convolution->name() + ".f16")));
  wide->mutable_shape().set_element_type(PrimitiveType::kF16);
  HLOGYM_ASSIGN(narrowed, MakeConvert(wide, PrimitiveType::kPred));
  narrowed->set_shape(convolution->shape());  // keeps the original layout
  return narrowed;
}

}  // namespace

absl::StatusOr<bool> ConvolutionPredExpander::Run(Module& module) {
  return ExpandMatchingInstructions(module, name(), IsPredConvolution, ComputeInF16);
}

bool ConvolutionPredExpander::MayChange(const Module& module) const {
  return ContainsInstruction(module, Opcode::kConvolution,
                             [](const Instruction& conv) { return IsPredConvolution(&conv); });
}

}  // namespace hlogym
