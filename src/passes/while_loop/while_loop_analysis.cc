#include "passes/while_loop/while_loop_analysis.h"

#include <algorithm>
#include <functional>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "hlo/primitive_type.h"
#include "passes/pass_utils.h"

namespace hlogym {
namespace {

// The tuple index of `instruction` when it is get-tuple-element(param).
std::optional<int64_t> GteIndexOf(const Instruction* instruction, const Instruction* param) {
  if (instruction->opcode() == Opcode::kGetTupleElement && instruction->operand(0) == param) {
    return instruction->attrs().tuple_index;
  }
  return std::nullopt;
}

// The single tuple index that operands of `instruction` read from `param`;
// nullopt when none or several.
std::optional<int64_t> SingleGteOperandIndex(const Instruction* instruction,
                                             const Instruction* param) {
  std::optional<int64_t> found;
  for (const Instruction* operand : instruction->operands()) {
    std::optional<int64_t> index = GteIndexOf(operand, param);
    if (!index) continue;
    if (found && *found != *index) return std::nullopt;
    found = index;
  }
  return found;
}

bool IsScalarIntegerOrPred(const Shape& shape) {
  return shape.IsScalar() &&
         (IsIntegralType(shape.element_type()) || shape.element_type() == PrimitiveType::kPred);
}

// `value` wrapped to the range of `type` (two's complement).
int64_t WrapTo(PrimitiveType type, int64_t value) {
  if (type == PrimitiveType::kPred) return value != 0 ? 1 : 0;
  int bits = BitWidth(type);
  if (bits >= 64) return value;
  uint64_t mask = (uint64_t{1} << bits) - 1;
  uint64_t raw = static_cast<uint64_t>(value) & mask;
  if (IsSignedIntegralType(type) && (raw >> (bits - 1)) != 0) raw |= ~mask;
  return static_cast<int64_t>(raw);
}

// A tiny evaluator of scalar integer expressions in which
// get-tuple-element(param, index) is the variable `value`. nullopt when the
// expression reads anything else or uses an unsupported op.
class ScalarExpression {
 public:
  ScalarExpression(const Instruction* param, int64_t index) : param_(param), index_(index) {}

  std::optional<int64_t> Eval(const Instruction* instruction, std::optional<int64_t> value,
                              int depth = 0) const {
    if (depth > 64 || !IsScalarIntegerOrPred(instruction->shape())) return std::nullopt;
    PrimitiveType type = instruction->shape().element_type();
    if (auto index = GteIndexOf(instruction, param_)) {
      if (*index != index_ || !value) return std::nullopt;
      return *value;
    }
    auto operand = [&](int64_t i) { return Eval(instruction->operand(i), value, depth + 1); };
    switch (instruction->opcode()) {
      case Opcode::kConstant:
        return WrapTo(type, instruction->literal().GetAsInt64(0));
      case Opcode::kCopy:
        return operand(0);
      case Opcode::kConvert: {
        auto a = operand(0);
        if (!a) return std::nullopt;
        return WrapTo(type, *a);
      }
      case Opcode::kNegate: {
        auto a = operand(0);
        if (!a) return std::nullopt;
        return WrapTo(type, static_cast<int64_t>(0 - static_cast<uint64_t>(*a)));
      }
      case Opcode::kNot: {
        auto a = operand(0);
        if (!a) return std::nullopt;
        return WrapTo(type, type == PrimitiveType::kPred ? !*a : ~*a);
      }
      case Opcode::kAdd:
      case Opcode::kSubtract:
      case Opcode::kMultiply:
      case Opcode::kAnd:
      case Opcode::kOr:
      case Opcode::kXor:
      case Opcode::kMaximum:
      case Opcode::kMinimum: {
        auto a = operand(0);
        auto b = operand(1);
        if (!a || !b) return std::nullopt;
        uint64_t ua = static_cast<uint64_t>(*a), ub = static_cast<uint64_t>(*b);
        bool is_unsigned = IsUnsignedIntegralType(type);
        switch (instruction->opcode()) {
          case Opcode::kAdd:
            return WrapTo(type, static_cast<int64_t>(ua + ub));
          case Opcode::kSubtract:
            return WrapTo(type, static_cast<int64_t>(ua - ub));
          case Opcode::kMultiply:
            return WrapTo(type, static_cast<int64_t>(ua * ub));
          case Opcode::kAnd:
            return WrapTo(type, *a & *b);
          case Opcode::kOr:
            return WrapTo(type, *a | *b);
          case Opcode::kXor:
            return WrapTo(type, *a ^ *b);
          case Opcode::kMaximum:
            return is_unsigned ? static_cast<int64_t>(std::max(ua, ub)) : std::max(*a, *b);
          default:
            return is_unsigned ? static_cast<int64_t>(std::min(ua, ub)) : std::min(*a, *b);
        }
      }
      case Opcode::kSelect: {
        auto p = operand(0);
        if (!p) return std::nullopt;
        return *p ? operand(1) : operand(2);
      }
      case Opcode::kCompare: {
        auto a = operand(0);
        auto b = operand(1);
        if (!a || !b) return std::nullopt;
        PrimitiveType operand_type = instruction->operand(0)->shape().element_type();
        bool is_unsigned = IsUnsignedIntegralType(operand_type) ||
                           instruction->attrs().comparison_type == ComparisonType::kUnsigned;
        int cmp;
        if (is_unsigned) {
          uint64_t ua = static_cast<uint64_t>(*a), ub = static_cast<uint64_t>(*b);
          if (BitWidth(operand_type) < 64 && IsSignedIntegralType(operand_type)) {
            uint64_t mask = (uint64_t{1} << BitWidth(operand_type)) - 1;
            ua &= mask;
            ub &= mask;
          }
          cmp = ua < ub ? -1 : (ua > ub ? 1 : 0);
        } else {
          cmp = *a < *b ? -1 : (*a > *b ? 1 : 0);
        }
        switch (instruction->attrs().comparison_direction) {
          case ComparisonDirection::kEq:
            return cmp == 0;
          case ComparisonDirection::kNe:
            return cmp != 0;
          case ComparisonDirection::kLt:
            return cmp < 0;
          case ComparisonDirection::kLe:
            return cmp <= 0;
          case ComparisonDirection::kGt:
            return cmp > 0;
          case ComparisonDirection::kGe:
            return cmp >= 0;
        }
        return std::nullopt;
      }
      default:
        return std::nullopt;
    }
  }

 private:
  const Instruction* param_;
  int64_t index_;
};

// The induction variable's initial value, when it is a constant expression.
std::optional<int64_t> InitialValue(const Instruction* while_op, int64_t index) {
  const Instruction* init = while_op->operand(0);
  if (init->opcode() != Opcode::kTuple || index >= init->operand_count()) return std::nullopt;
  ScalarExpression expression(nullptr, -1);
  return expression.Eval(init->operand(index), std::nullopt);
}

}  // namespace

std::optional<int64_t> GetLoopInductionVarTupleIdx(const Instruction* while_op) {
  if (while_op->opcode() != Opcode::kWhile || while_op->called_computations().size() != 2) {
    return std::nullopt;
  }
  const Computation* condition = while_op->called_computations()[0];
  const Computation* body = while_op->called_computations()[1];
  if (condition->num_parameters() != 1 || body->num_parameters() != 1) return std::nullopt;
  std::optional<int64_t> index =
      SingleGteOperandIndex(condition->root_instruction(), condition->parameter_instruction(0));
  if (!index) return std::nullopt;
  const Instruction* root = body->root_instruction();
  if (root->opcode() != Opcode::kTuple || *index >= root->operand_count()) return std::nullopt;
  std::optional<int64_t> body_index =
      SingleGteOperandIndex(root->operand(*index), body->parameter_instruction(0));
  if (!body_index || *body_index != *index) return std::nullopt;
  return index;
}

std::optional<TrivialLoopRange> MatchTrivialLoopRange(const Instruction* while_op) {
  std::optional<int64_t> index = GetLoopInductionVarTupleIdx(while_op);
  if (!index) return std::nullopt;
  const Computation* condition = while_op->called_computations()[0];
  const Computation* body = while_op->called_computations()[1];
  const Instruction* cond_param = condition->parameter_instruction(0);
  const Instruction* body_param = body->parameter_instruction(0);
  const Instruction* update = body->root_instruction()->operand(*index);
  if (!IsScalarIntegerOrPred(update->shape()) ||
      update->shape().element_type() == PrimitiveType::kPred) {
    return std::nullopt;
  }
  PrimitiveType type = update->shape().element_type();
  std::optional<int64_t> init = InitialValue(while_op, *index);
  if (!init || update->opcode() != Opcode::kAdd) return std::nullopt;
  const Instruction* step_instruction = nullptr;
  if (GteIndexOf(update->operand(0), body_param) == index)
    step_instruction = update->operand(1);
  else if (GteIndexOf(update->operand(1), body_param) == index)
    step_instruction = update->operand(0);
  if (step_instruction == nullptr || step_instruction->opcode() != Opcode::kConstant)
    return std::nullopt;
  int64_t step = WrapTo(type, step_instruction->literal().GetAsInt64(0));
  const Instruction* compare = condition->root_instruction();
  if (compare->opcode() != Opcode::kCompare) return std::nullopt;
  ComparisonDirection direction = compare->attrs().comparison_direction;
  const Instruction* bound_instruction;
  if (GteIndexOf(compare->operand(0), cond_param) == index) {
    bound_instruction = compare->operand(1);
  } else if (GteIndexOf(compare->operand(1), cond_param) == index) {
    bound_instruction = compare->operand(0);
    switch (direction) {  // bound OP i  <=>  i OP' bound
      case ComparisonDirection::kLt:
        direction = ComparisonDirection::kGt;
        break;
      case ComparisonDirection::kLe:
        direction = ComparisonDirection::kGe;
        break;
      case ComparisonDirection::kGt:
        direction = ComparisonDirection::kLt;
        break;
      case ComparisonDirection::kGe:
        direction = ComparisonDirection::kLe;
        break;
      default:
        break;
    }
  } else {
    return std::nullopt;
  }
  if (bound_instruction->opcode() != Opcode::kConstant ||
      bound_instruction->shape().element_type() != type || IsUnsignedIntegralType(type) ||
      compare->attrs().comparison_type == ComparisonType::kUnsigned) {
    return std::nullopt;
  }
  int64_t bound = WrapTo(type, bound_instruction->literal().GetAsInt64(0));
  int64_t trip = 0;
  // Work on the distance to the bound so that nothing overflows; the last
  // value the variable takes must stay in the type's range.
  __int128 start = *init, limit = bound, delta = step;
  __int128 trips = 0;
  if ((direction == ComparisonDirection::kLt || direction == ComparisonDirection::kLe) &&
      step > 0) {
    if (direction == ComparisonDirection::kLe) limit += 1;
    trips = start < limit ? (limit - start + delta - 1) / delta : 0;
  } else if ((direction == ComparisonDirection::kGt || direction == ComparisonDirection::kGe) &&
             step < 0) {
    if (direction == ComparisonDirection::kGe) limit -= 1;
    trips = start > limit ? (start - limit + (-delta) - 1) / (-delta) : 0;
  } else {
    return std::nullopt;
  }
  __int128 last = start + trips * delta;  // the value that ends the loop
  if (WrapTo(type, static_cast<int64_t>(last)) != static_cast<int64_t>(last) || trips > INT64_MAX) {
    return std::nullopt;
  }
  trip = static_cast<int64_t>(trips);
  return TrivialLoopRange{*index, *init, step, trip};
}

std::optional<int64_t> ComputeWhileLoopTripCount(const Instruction* while_op,
                                                 int64_t max_brute_force_iters) {
  if (auto range = MatchTrivialLoopRange(while_op)) return range->trip_count;
  std::optional<int64_t> index = GetLoopInductionVarTupleIdx(while_op);
  if (!index) return std::nullopt;
  std::optional<int64_t> value = InitialValue(while_op, *index);
  if (!value) return std::nullopt;
  const Computation* condition = while_op->called_computations()[0];
  const Computation* body = while_op->called_computations()[1];
  if (condition->root_instruction()->shape().element_type() != PrimitiveType::kPred) {
    return std::nullopt;
  }
  ScalarExpression cond_expression(condition->parameter_instruction(0), *index);
  ScalarExpression body_expression(body->parameter_instruction(0), *index);
  const Instruction* update = body->root_instruction()->operand(*index);
  for (int64_t trip = 0; trip <= max_brute_force_iters; ++trip) {
    std::optional<int64_t> keep_going = cond_expression.Eval(condition->root_instruction(), value);
    if (!keep_going) return std::nullopt;
    if (*keep_going == 0) return trip;
    value = body_expression.Eval(update, value);
    if (!value) return std::nullopt;
  }
  return std::nullopt;
}

std::optional<int64_t> ComputeWhileLoopTripCountUpperBound(const Instruction* while_op) {
  if (std::optional<int64_t> exact = ComputeWhileLoopTripCount(while_op)) return exact;
  // A condition that reads one element the body sets to a constant: where the
  // condition is false at that constant, no second iteration can start.
  const Computation* condition = while_op->called_computations()[0];
  const Computation* body = while_op->called_computations()[1];
  if (condition->num_parameters() != 1 || body->num_parameters() != 1) return std::nullopt;
  const Instruction* param = condition->parameter_instruction(0);
  if (param->users().size() != 1) return std::nullopt;
  std::optional<int64_t> index = GteIndexOf(param->users().front(), param);
  const Instruction* root = body->root_instruction();
  if (!index || root->opcode() != Opcode::kTuple || *index >= root->operand_count() ||
      root->operand(*index)->opcode() != Opcode::kConstant) {
    return std::nullopt;
  }
  ScalarExpression cond_expression(param, *index);
  const Instruction* update = root->operand(*index);
  std::optional<int64_t> keep_going =
      cond_expression.Eval(condition->root_instruction(), cond_expression.Eval(update, 0));
  if (keep_going && *keep_going == 0) return 1;
  return std::nullopt;
}

std::vector<Instruction*> GetInvariantGtesForWhileBody(const Computation& body) {
  std::vector<Instruction*> result;
  const Instruction* root = body.root_instruction();
  if (root == nullptr || root->opcode() != Opcode::kTuple || body.num_parameters() != 1) {
    return result;
  }
  const Instruction* param = body.parameter_instruction(0);
  for (const auto& instruction : body.instructions()) {
    std::optional<int64_t> index = GteIndexOf(instruction.get(), param);
    if (index && *index < root->operand_count() && root->operand(*index) == instruction.get()) {
      result.push_back(instruction.get());
    }
  }
  return result;
}

absl::StatusOr<Instruction*> InlineComputation(Computation* target, const Computation& callee,
                                               const std::vector<Instruction*>& arguments) {
  Module* module = target->parent();
  if (static_cast<int64_t>(arguments.size()) != callee.num_parameters() || module == nullptr) {
    return absl::InvalidArgumentError("cannot inline " + callee.name() + ": arguments mismatch");
  }
  absl::flat_hash_map<const Instruction*, Instruction*> map;
  for (int64_t i = 0; i < callee.num_parameters(); ++i) {
    map[callee.parameter_instruction(i)] = arguments[i];
  }
  // Only what the root needs (and what orders it through control edges).
  absl::flat_hash_set<const Instruction*> live;
  std::vector<const Instruction*> worklist = {callee.root_instruction()};
  live.insert(callee.root_instruction());
  while (!worklist.empty()) {
    const Instruction* instruction = worklist.back();
    worklist.pop_back();
    for (const Instruction* operand : instruction->operands()) {
      if (live.insert(operand).second) worklist.push_back(operand);
    }
    for (const Instruction* predecessor : instruction->control_predecessors()) {
      if (live.insert(predecessor).second) worklist.push_back(predecessor);
    }
  }
  std::vector<Instruction*> order = callee.MakeInstructionPostOrder();
  for (Instruction* instruction : order) {
    if (instruction->opcode() == Opcode::kParameter || !live.contains(instruction)) continue;
    std::vector<Instruction*> operands;
    for (Instruction* operand : instruction->operands()) operands.push_back(map.at(operand));
    map[instruction] = target->AddInstruction(
        instruction->CloneWithNewOperands(operands, module->UniqueName(instruction->name())));
  }
  for (Instruction* instruction : order) {
    if (instruction->opcode() == Opcode::kParameter || !live.contains(instruction)) continue;
    for (Instruction* predecessor : instruction->control_predecessors()) {
      if (predecessor->opcode() == Opcode::kParameter) continue;
      map.at(predecessor)->AddControlDependencyTo(map.at(instruction));
    }
  }
  return map.at(callee.root_instruction());
}

bool UnshareLoopComputations(Module& module, Instruction* while_op) {
  bool cloned = false;
  for (const int index : {1, 0}) {  // the body, then the condition
    const Computation* callee = while_op->called_computations()[index];
    if (module.CallerCount(callee) > 1) {
      while_op->mutable_called_computations()[index] = CloneComputation(module, *callee);
      cloned = true;
    }
  }
  return cloned;
}

}  // namespace hlogym
