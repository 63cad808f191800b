#include "passes/expanders/logistic_expander.h"

#include <vector>

#include "hlo/query.h"
#include "hlo/status_macros.h"
#include "passes/builders.h"

namespace hlogym {
namespace {

// 1 / (1 + exp(-x)) for logistic(x).
absl::StatusOr<Instruction*> Expand(Instruction* logistic) {
  Instruction* x = logistic->operand(0);
  Computation* computation = logistic->parent();
  Instruction* one =
      MakeScalarConstant(computation, x->shape().element_type(), 1.0, x->shape().has_layout());
  if (!x->shape().IsScalar()) {
    HLOGYM_ASSIGN(broadcast, MakeBroadcast(one, x->shape().dimensions(), {}));
    one = broadcast;
  }
  HLOGYM_ASSIGN(negated, MakeUnary(Opcode::kNegate, x));
  HLOGYM_ASSIGN(exp, MakeUnary(Opcode::kExp, negated));
  HLOGYM_ASSIGN(denominator, MakeBinary(Opcode::kAdd, one, exp));
  return MakeBinary(Opcode::kDivide, one, denominator);
}

}  // namespace

absl::StatusOr<bool> LogisticExpander::Run(Module& module) {
  std::vector<Instruction*> logistics;
  for (const auto& computation : module.computations()) {
    for (const auto& instruction : computation->instructions()) {
      if (instruction->opcode() == Opcode::kLogistic) logistics.push_back(instruction.get());
    }
  }
  for (Instruction* logistic : logistics) {
    HLOGYM_ASSIGN(expanded, Expand(logistic));
    expanded->set_shape(logistic->shape());
    HLOGYM_RETURN_IF_ERROR(logistic->parent()->ReplaceInstruction(logistic, expanded));
  }
  return !logistics.empty();
}

bool LogisticExpander::MayChange(const Module& module) const {
  return ContainsOpcode(module, {Opcode::kLogistic});
}

}  // namespace hlogym
