#include "passes/simplifiers/constant_folding.h"

#include <algorithm>
#include <memory>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "eval/evaluator.h"
#include "hlo/query.h"
#include "hlo/status_macros.h"
#include "passes/change_tracking.h"
#include "passes/pass_utils.h"

namespace hlogym {
namespace {

constexpr int64_t kMaximumConstantSizeElements = 45 * 1000 * 1000;

bool AnyOperandConstant(const Instruction* instruction) {
  for (const Instruction* operand : instruction->operands()) {
    if (operand->opcode() == Opcode::kTuple ? AnyOperandConstant(operand)
                                            : operand->opcode() == Opcode::kConstant) {
      return true;
    }
  }
  return false;
}

bool IsKnownConstant(const Instruction* instruction) {
  return instruction->opcode() == Opcode::kConstant && instruction->attrs().literal != nullptr &&
         !instruction->literal().elided();
}

bool AllOperandsConstantLike(const Instruction* instruction) {
  for (const Instruction* operand : instruction->operands()) {
    switch (operand->opcode()) {
      case Opcode::kTuple:
        if (!AllOperandsConstantLike(operand)) return false;
        break;
      case Opcode::kConstant:
        if (!IsKnownConstant(operand)) return false;
        break;
      case Opcode::kBroadcast:
        if (!IsKnownConstant(operand->operand(0))) return false;
        break;
      case Opcode::kIota:
        break;
      default:
        return false;
    }
  }
  return true;
}

// Opcodes XLA's evaluator does not fold (or that hlogym's evaluator models
// differently from XLA's).
bool NeverFolded(Opcode opcode) {
  switch (opcode) {
    case Opcode::kBroadcast:
    case Opcode::kIota:
    case Opcode::kFft:
    case Opcode::kWhile:
    case Opcode::kRng:
    case Opcode::kAfterAll:
    case Opcode::kCustomCall:
    case Opcode::kRngBitGenerator:
    case Opcode::kRngGetAndUpdateState:
    case Opcode::kParameter:
    case Opcode::kConstant:
    case Opcode::kTuple:
      return true;
    default:
      return IsCollective(opcode) || !EvaluatorSupportsOpcode(opcode);
  }
}

class Folder {
 public:
  bool IsFoldable(const Instruction* instruction) {
    if (NeverFolded(instruction->opcode())) return false;
    for (const Computation* callee : instruction->called_computations()) {
      if (!IsFoldableComputation(callee)) return false;
    }
    if (effects_.HasSideEffect(instruction)) return false;
    if (!instruction->control_predecessors().empty() ||
        !instruction->control_successors().empty()) {
      return false;
    }
    if (instruction->opcode() == Opcode::kPad &&
        instruction->operand(0)->opcode() == Opcode::kBroadcast &&
        instruction->operand(1)->opcode() == Opcode::kConstant) {
      return false;
    }
    if (instruction->shape().IsArray()) {
      int64_t operand_elements = 0;
      for (const Instruction* operand : instruction->operands()) {
        if (operand->shape().IsArray()) operand_elements += operand->shape().ElementCount();
      }
      if (std::max(operand_elements, instruction->shape().ElementCount()) >
          kMaximumConstantSizeElements) {
        return false;
      }
    }
    return true;
  }

 private:
  // Every instruction of the computation (and its callees) foldable, apart
  // from the parameters, constants and tuples a called computation has.
  bool IsFoldableComputation(const Computation* computation) {
    if (computation == nullptr) return false;
    auto it = foldable_.find(computation);
    if (it != foldable_.end()) return it->second;
    foldable_[computation] = false;
    bool ok = true;
    for (const auto& instruction : computation->instructions()) {
      Opcode op = instruction->opcode();
      if (op == Opcode::kParameter || op == Opcode::kConstant || op == Opcode::kTuple) continue;
      if (!IsFoldable(instruction.get())) {
        ok = false;
        break;
      }
    }
    foldable_[computation] = ok;
    return ok;
  }

  SideEffectCache effects_;
  absl::flat_hash_map<const Computation*, bool> foldable_;
};

// Copies `instruction` and its constant-like operand tree into `scratch`.
Instruction* CopyInto(Computation& scratch, const Instruction* instruction,
                      absl::flat_hash_map<const Instruction*, Instruction*>& copies) {
  if (auto it = copies.find(instruction); it != copies.end()) return it->second;
  std::vector<Instruction*> operands;
  for (const Instruction* operand : instruction->operands()) {
    operands.push_back(CopyInto(scratch, operand, copies));
  }
  Instruction* copy =
      scratch.AddInstruction(instruction->CloneWithNewOperands(operands, instruction->name()));
  copies[instruction] = copy;
  return copy;
}

absl::StatusOr<Literal> EvaluateInstruction(const Instruction* instruction) {
  Computation scratch("constant_folding_scratch");
  absl::flat_hash_map<const Instruction*, Instruction*> copies;
  scratch.set_root_instruction(CopyInto(scratch, instruction, copies));
  EvaluatorOptions options;
  options.num_threads = 1;
  options.max_while_iterations = 0;
  return EvaluateComputation(scratch, {}, options);
}

}  // namespace

bool HloConstantFolding::MayChange(const Module& module) const {
  // Only computations holding a constant are looked at.
  return ContainsOpcode(module, {Opcode::kConstant});
}

absl::StatusOr<bool> HloConstantFolding::Run(Module& module) {
  TrackedRun run(module, std::string(name()));
  bool changed = false;
  Folder folder;
  for (const auto& owned : module.computations()) {
    Computation* computation = owned.get();
    if (!run.MustVisit(*computation)) continue;
    bool any_constant = false;
    for (const auto& instruction : computation->instructions()) {
      if (instruction->opcode() == Opcode::kConstant) {
        any_constant = true;
        break;
      }
    }
    if (!any_constant) continue;
    for (Instruction* instruction : computation->MakeInstructionPostOrder()) {
      if (instruction->users().empty() && !instruction->IsRoot()) continue;  // dead
      if (!AnyOperandConstant(instruction) || !AllOperandsConstantLike(instruction)) continue;
      if (!folder.IsFoldable(instruction)) continue;
      absl::StatusOr<Literal> result = EvaluateInstruction(instruction);
      if (!result.ok()) continue;  // unsupported here: leave it, as XLA does
      if (!result->shape().SameDimensions(instruction->shape()) ||
          result->shape().element_type() != instruction->shape().element_type()) {
        continue;
      }
      auto constant = std::make_unique<Instruction>(Opcode::kConstant, instruction->shape());
      constant->mutable_attrs().literal = std::make_shared<const Literal>(std::move(*result));
      Instruction* added = computation->AddInstruction(std::move(constant));
      HLOGYM_RETURN_IF_ERROR(instruction->ReplaceAllUsesWith(added));
      // Remove the folded instruction and whatever it leaves dead.
      std::vector<Instruction*> dead = {instruction};
      while (!dead.empty()) {
        Instruction* current = dead.back();
        dead.pop_back();
        if (!current->users().empty() || current->IsRoot() ||
            current->opcode() == Opcode::kParameter || !current->control_successors().empty() ||
            !current->control_predecessors().empty()) {
          continue;
        }
        std::vector<Instruction*> operands = current->operands();
        HLOGYM_RETURN_IF_ERROR(computation->RemoveInstruction(current));
        for (Instruction* operand : operands) {
          if (std::find(dead.begin(), dead.end(), operand) == dead.end()) dead.push_back(operand);
        }
      }
      changed = true;
    }
  }
  run.Complete();
  return changed;
}

}  // namespace hlogym
