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
    auto broadcast = MakeBroadcast(one, x->shape().dimensions(), {});
    if (!broadcast.ok()) return broadcast.status();
    one = *broadcast;
  }
  auto negated = MakeUnary(Opcode::kNegate, x);
  if (!negated.ok()) return negated.status();
  auto exp = MakeUnary(Opcode::kExp, *negated);
  if (!exp.ok()) return exp.status();
  auto denominator = MakeBinary(Opcode::kAdd, one, *exp);
  if (!denominator.ok()) return denominator.status();
  return MakeBinary(Opcode::kDivide, one, *denominator);
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
    auto expanded = Expand(logistic);
    if (!expanded.ok()) return expanded.status();
    (*expanded)->set_shape(logistic->shape());
    HLOGYM_RETURN_IF_ERROR(logistic->parent()->ReplaceInstruction(logistic, *expanded));
  }
  return !logistics.empty();
}

bool LogisticExpander::MayChange(const Module& module) const {
  return ContainsOpcode(module, {Opcode::kLogistic});
}

}  // namespace hlogym
