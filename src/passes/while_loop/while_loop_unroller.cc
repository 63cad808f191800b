#include "passes/while_loop/while_loop_unroller.h"

#include <vector>

#include "hlo/query.h"
#include "hlo/status_macros.h"
#include "passes/builders.h"
#include "passes/control_flow/call_inliner.h"
#include "passes/control_flow/flatten_call_graph.h"
#include "passes/pass_utils.h"
#include "passes/while_loop/while_loop_analysis.h"

namespace hlogym {
namespace {

constexpr int64_t kTripCountThreshold = 64;
constexpr int64_t kInstructionCountThreshold = 800;
constexpr int64_t kExpandFactorThreshold = 10000;

bool HasSendOrRecv(const Computation& computation) {
  for (const auto& instruction : computation.instructions()) {
    switch (instruction->opcode()) {
      case Opcode::kSend:
      case Opcode::kSendDone:
      case Opcode::kRecv:
      case Opcode::kRecvDone:
        return true;
      default:
        break;
    }
  }
  return false;
}

std::optional<TrivialLoopRange> Unrollable(const Instruction* loop) {
  if (loop->operand_count() != 1 || loop->operand(0)->opcode() != Opcode::kTuple ||
      loop->called_computations().size() != 2 || !loop->control_successors().empty()) {
    return std::nullopt;
  }
  const Computation& condition = *loop->called_computations()[0];
  const Computation& body = *loop->called_computations()[1];
  if (condition.num_parameters() != 1 || body.num_parameters() != 1 || HasSendOrRecv(condition) ||
      HasSendOrRecv(body) || ComputationHasSideEffect(condition) ||
      ComputationHasSideEffect(body)) {
    return std::nullopt;
  }
  std::optional<TrivialLoopRange> range = MatchTrivialLoopRange(loop);
  if (!range || range->trip_count < 1 || range->trip_count > kTripCountThreshold ||
      body.instruction_count() > kInstructionCountThreshold ||
      range->trip_count * body.instruction_count() > kExpandFactorThreshold) {
    return std::nullopt;
  }
  return range;
}

bool IsIncrement(const Instruction* user, const Instruction* induction) {
  if (user->opcode() != Opcode::kAdd) return false;
  return (user->operand(0) == induction && user->operand(1)->IsConstant()) ||
         (user->operand(1) == induction && user->operand(0)->IsConstant());
}

absl::Status Unroll(Module& module, Instruction* loop, const TrivialLoopRange& range) {
  Computation* computation = loop->parent();
  const Computation& body = *loop->called_computations()[1];
  Instruction* state = loop->operand(0);
  for (int64_t k = 0; k < range.trip_count; ++k) {
    Computation* copy = CloneComputation(module, body, ".unrolled");
    Instruction* parameter = copy->parameter_instruction(0);
    const Shape& induction_shape = parameter->shape().tuple_shapes(range.induction_index);
    Instruction* value = MakeScalarConstant(copy, induction_shape.element_type(),
                                            static_cast<double>(range.init + k * range.step),
                                            induction_shape.has_layout());
    std::vector<Instruction*> inductions;
    for (Instruction* user : parameter->users()) {
      if (user->opcode() == Opcode::kGetTupleElement &&
          user->attrs().tuple_index == range.induction_index) {
        inductions.push_back(user);
      }
    }
    for (Instruction* induction : inductions) {
      std::vector<Instruction*> users = induction->users();
      for (Instruction* user : users) {
        if (IsIncrement(user, induction)) continue;
        user->ReplaceUsesOfOperand(induction, value);
      }
      if (induction->IsRoot()) copy->set_root_instruction(value);
    }
    HLOGYM_ASSIGN(next, InlineComputation(computation, *copy, {state}));
    state = next;
    HLOGYM_RETURN_IF_ERROR(module.RemoveComputation(copy));
    HLOGYM_RETURN_IF_ERROR(CheckOpCountLimit(module, "while_loop_unroller"));
  }
  state->set_shape(loop->shape());
  return computation->ReplaceInstruction(loop, state);
}

}  // namespace

absl::StatusOr<bool> WhileLoopUnroller::Run(Module& module) {
  std::vector<std::pair<Instruction*, TrivialLoopRange>> loops;
  for (Computation* computation : module.MakeComputationPostOrder()) {
    for (const auto& instruction : computation->instructions()) {
      if (instruction->opcode() != Opcode::kWhile) continue;
      if (auto range = Unrollable(instruction.get())) loops.emplace_back(instruction.get(), *range);
    }
  }
  if (loops.empty()) return false;
  std::vector<Computation*> dropped;
  for (const auto& [loop, range] : loops) {
    dropped.insert(dropped.end(), loop->called_computations().begin(),
                   loop->called_computations().end());
    HLOGYM_RETURN_IF_ERROR(Unroll(module, loop, range));
  }
  // The unrolled loops' computations, and what only they called, are dead.
  while (!dropped.empty()) {
    Computation* computation = dropped.back();
    dropped.pop_back();
    bool alive = false;  // `computation` may already be removed: compare pointers only
    for (const auto& c : module.computations()) alive |= c.get() == computation;
    if (!alive || computation->IsEntry() || module.CallerCount(computation) > 0) {
      continue;
    }
    std::vector<Computation*> callees;
    for (const auto& instruction : computation->instructions()) {
      callees.insert(callees.end(), instruction->called_computations().begin(),
                     instruction->called_computations().end());
    }
    HLOGYM_RETURN_IF_ERROR(module.RemoveComputation(computation));
    dropped.insert(dropped.end(), callees.begin(), callees.end());
  }
  HLOGYM_RETURN_IF_ERROR(FlattenCallGraph().Run(module).status());
  HLOGYM_RETURN_IF_ERROR(CallInliner().Run(module).status());
  return true;
}

bool WhileLoopUnroller::MayChange(const Module& module) const {
  return ContainsOpcode(module, {Opcode::kWhile});
}

}  // namespace hlogym
