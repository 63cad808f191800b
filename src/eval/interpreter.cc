#include "eval/interpreter.h"

#include <unistd.h>

#include <limits>
#include <optional>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "eval/partitions.h"
#include "eval/scalar_ops.h"
#include "hlo/status_macros.h"

namespace hlogym::eval {

struct Interpreter::Plan {
  std::vector<const Instruction*> order;
  std::vector<std::vector<int32_t>> operand_slots;
  std::vector<int32_t> uses;  // operand occurrences among later instructions
  // The bytes each instruction's result allocates, checked against the memory
  // limit before it runs: 0 where the result shares its operand's data,
  // int64 max where the size overflows.
  std::vector<int64_t> result_bytes;
  int32_t root_slot = -1;
};

namespace {

absl::Status WithContext(const absl::Status& status, const Instruction& instruction) {
  if (status.ok()) return status;
  if (absl::StartsWith(status.message(), "instruction ")) return status;  // already named (nested)
  return absl::Status(status.code(),
                      absl::StrCat("instruction ", instruction.name(), " (",
                                   OpName(instruction.opcode()), "): ", status.message()));
}

}  // namespace

bool Matches(const Value& value, const Shape& shape) {
  if (shape.IsTuple()) {
    if (!value.shape.IsTuple() ||
        value.elements.size() != static_cast<size_t>(shape.tuple_shapes_size())) {
      return false;
    }
    for (size_t i = 0; i < value.elements.size(); ++i) {
      if (!Matches(*value.elements[i], shape.tuple_shapes(i))) return false;
    }
    return true;
  }
  if (shape.IsToken()) return value.shape.IsToken();
  if (!shape.IsArray() || !value.shape.IsArray()) return false;
  return value.shape.element_type() == shape.element_type() &&
         value.shape.dimensions() == shape.dimensions();
}

ScalarComputation::ScalarComputation(Interpreter& interpreter, const Computation& computation)
    : interpreter_(interpreter), computation_(computation) {
  const Instruction* root = computation.root_instruction();
  if (root == nullptr) return;
  auto is_param = [](const Instruction* i, int64_t n) {
    return i->opcode() == Opcode::kParameter && i->attrs().parameter_number == n &&
           i->shape().IsScalar();
  };
  if (computation.num_parameters() == 2 && root->operand_count() == 2 &&
      IsElementwiseBinary(root->opcode()) && root->opcode() != Opcode::kCompare &&
      root->shape().IsScalar() &&
      root->operand(0)->shape().element_type() == root->shape().element_type()) {
    if (is_param(root->operand(0), 0) && is_param(root->operand(1), 1)) {
      binary_op_ = root->opcode();
    } else if (is_param(root->operand(0), 1) && is_param(root->operand(1), 0) &&
               IsCommutative(root->opcode())) {
      binary_op_ = root->opcode();
    }
  }
  if (computation.num_parameters() == 2 && is_param(root, 1)) returns_second_ = true;
  if (root->opcode() == Opcode::kCompare && root->operand_count() == 2 &&
      root->operand(0)->opcode() == Opcode::kParameter &&
      root->operand(1)->opcode() == Opcode::kParameter) {
    const int64_t a = root->operand(0)->attrs().parameter_number;
    const int64_t b = root->operand(1)->attrs().parameter_number;
    if (a / 2 == b / 2 && a != b && root->operand(0)->shape().IsScalar()) simple_compare_ = root;
  }
}

absl::StatusOr<std::vector<ValuePtr>> ScalarComputation::Call(std::span<const ValuePtr> args) {
  HLOGYM_ASSIGN(result, interpreter_.Run(computation_, args));
  const ValuePtr& value = result;
  if (value->shape.IsTuple()) return value->elements;
  return std::vector<ValuePtr>{value};
}

Interpreter::Interpreter(const EvaluatorOptions& options) : options_(options) {}

Interpreter::~Interpreter() = default;

ScalarComputation& Interpreter::Scalar(const Computation& computation) {
  auto& slot = scalars_[&computation];
  if (!slot) slot = std::make_unique<ScalarComputation>(*this, computation);
  return *slot;
}

// Opcodes whose result shares its operand's data (no allocation).
bool SharesOperandData(Opcode opcode) {
  switch (opcode) {
    case Opcode::kParameter:
    case Opcode::kGetTupleElement:
    case Opcode::kTuple:
    case Opcode::kBitcast:
    case Opcode::kReshape:
    case Opcode::kConstant:
      return true;
    default:
      return false;
  }
}

const Interpreter::Plan& Interpreter::GetPlan(const Computation& computation) {
  auto& slot = plans_[&computation];
  if (slot) return *slot;
  slot = std::make_unique<Plan>();
  Plan& plan = *slot;
  // Only instructions the root depends on run.
  absl::flat_hash_map<const Instruction*, int32_t> index;
  std::vector<const Instruction*> stack;
  absl::flat_hash_map<const Instruction*, bool> live;
  if (computation.root_instruction() != nullptr) stack.push_back(computation.root_instruction());
  while (!stack.empty()) {
    const Instruction* i = stack.back();
    stack.pop_back();
    if (live[i]) continue;
    live[i] = true;
    for (const Instruction* o : i->operands()) {
      if (!live[o]) stack.push_back(o);
    }
  }
  for (const Instruction* i : computation.MakeInstructionPostOrder()) {
    if (!live[i]) continue;
    index[i] = static_cast<int32_t>(plan.order.size());
    plan.order.push_back(i);
  }
  plan.operand_slots.resize(plan.order.size());
  plan.uses.assign(plan.order.size(), 0);
  plan.result_bytes.assign(plan.order.size(), 0);
  for (size_t s = 0; s < plan.order.size(); ++s) {
    const Instruction& instruction = *plan.order[s];
    if (!SharesOperandData(instruction.opcode())) {
      plan.result_bytes[s] =
          instruction.shape().CheckedByteSize().value_or(std::numeric_limits<int64_t>::max());
    }
    for (const Instruction* o : instruction.operands()) {
      const int32_t slot_index = index[o];
      plan.operand_slots[s].push_back(slot_index);
      ++plan.uses[slot_index];
    }
  }
  if (computation.root_instruction() != nullptr) {
    plan.root_slot = index[computation.root_instruction()];
    ++plan.uses[plan.root_slot];
  }
  return plan;
}

absl::StatusOr<ValuePtr> Interpreter::Run(const Computation& computation, Operands args) {
  return RunPlan(computation, args, {});
}

absl::StatusOr<ValuePtr> Interpreter::RunConsuming(const Computation& computation,
                                                   std::span<ValuePtr> args) {
  return RunPlan(computation, args, args);
}

absl::StatusOr<ValuePtr> Interpreter::RunPlan(const Computation& computation, Operands args,
                                              std::span<ValuePtr> owned) {
  if (computation.root_instruction() == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("computation ", computation.name(), " has no root"));
  }
  if (static_cast<int64_t>(args.size()) != computation.num_parameters()) {
    return absl::InvalidArgumentError(absl::StrCat("computation ", computation.name(), " takes ",
                                                   computation.num_parameters(), " arguments, got ",
                                                   args.size()));
  }
  if (depth_ > 200) return absl::InvalidArgumentError("computation nesting too deep (recursion?)");
  ++depth_;
  struct DepthGuard {
    int& d;
    ~DepthGuard() { --d; }
  } guard{depth_};
  const Plan& plan = GetPlan(computation);
  std::vector<ValuePtr> slots(plan.order.size());
  std::vector<int32_t> uses = plan.uses;
  std::vector<ValuePtr> operands;
  for (size_t s = 0; s < plan.order.size(); ++s) {
    const Instruction& instruction = *plan.order[s];
    ++instructions_run_;
    if (options_.max_instructions > 0 && instructions_run_ > options_.max_instructions) {
      return WithContext(absl::DeadlineExceededError(absl::StrCat(
                             "the evaluation passed its budget of ", options_.max_instructions,
                             " instructions run (loop iterations counted)")),
                         instruction);
    }
    operands.clear();
    for (int32_t o : plan.operand_slots[s]) operands.push_back(slots[o]);
    // An operand at its last use is held by `operands` alone while the instruction runs, so that
    // an update may write into it (OverwritableCopy).
    for (int32_t o : plan.operand_slots[s]) {
      if (--uses[o] == 0) slots[o].reset();
    }
    if (plan.result_bytes[s] > 0) {
      absl::Status fits = CheckMemoryFor(plan.result_bytes[s], options_.max_bytes,
                                         [&] { return instruction.shape().ToString(false); });
      if (!fits.ok()) return WithContext(fits, instruction);
    }
    // A parameter takes an owned argument (nothing reads it after).
    const int64_t taken = instruction.opcode() == Opcode::kParameter && !owned.empty()
                              ? instruction.attrs().parameter_number
                              : -1;
    absl::StatusOr<ValuePtr> result =
        taken >= 0 && taken < static_cast<int64_t>(owned.size()) && owned[taken] != nullptr
            ? absl::StatusOr<ValuePtr>(std::move(owned[taken]))
            : EvalInstruction(instruction, std::span<ValuePtr>(operands), args);
    if (!result.ok()) return WithContext(result.status(), instruction);
    if (!Matches(**result, instruction.shape())) {
      return WithContext(absl::InvalidArgumentError(absl::StrCat(
                             "result ", (*result)->shape.ToString(false), " does not match shape ",
                             instruction.shape().ToString(false))),
                         instruction);
    }
    slots[s] = *std::move(result);
  }
  return slots[plan.root_slot];
}

absl::StatusOr<ValuePtr> Interpreter::EvalConstant(const Instruction& instruction) {
  auto it = constants_.find(&instruction);
  if (it != constants_.end()) return it->second;
  if (!instruction.attrs().literal) return absl::InvalidArgumentError("constant without a value");
  const Literal& literal = instruction.literal();
  ValuePtr value;
  if (literal.elided()) {
    // Unknown values: deterministic from the name and shape.
    if (!instruction.shape().IsArray()) return absl::UnimplementedError("elided tuple constant");
    auto v = NewArray(instruction.shape());
    const std::string key =
        absl::StrCat(instruction.name(), ":", instruction.shape().ToString(false));
    FillDeterministic(*v, HashBytes(key.data(), key.size(), 0xe1ded), -1.0, 1.0, 0, 7);
    value = v;
  } else {
    HLOGYM_ASSIGN(v, ValueFromLiteral(literal));
    value = v;
    if (value->shape.IsArray() && value->shape.dimensions() != instruction.shape().dimensions()) {
      return absl::InvalidArgumentError("constant literal does not match the shape");
    }
  }
  constants_[&instruction] = value;
  return value;
}

absl::StatusOr<ValuePtr> Interpreter::EvalInstruction(const Instruction& instruction,
                                                      std::span<ValuePtr> operands, Operands args) {
  const auto& called = instruction.called_computations();
  switch (instruction.opcode()) {
    case Opcode::kParameter: {
      const int64_t n = instruction.attrs().parameter_number;
      if (n < 0 || n >= static_cast<int64_t>(args.size())) {
        return absl::InvalidArgumentError("parameter number out of range");
      }
      return args[n];
    }
    case Opcode::kConstant:
      return EvalConstant(instruction);
    case Opcode::kTuple:
      return MakeTuple(instruction.shape(),
                       std::vector<ValuePtr>(operands.begin(), operands.end()));
    case Opcode::kGetTupleElement: {
      const int64_t i = instruction.attrs().tuple_index;
      if (!operands[0]->shape.IsTuple() || i < 0 ||
          i >= static_cast<int64_t>(operands[0]->elements.size())) {
        return absl::InvalidArgumentError("tuple index out of range");
      }
      return operands[0]->elements[i];
    }
    case Opcode::kCall:
    case Opcode::kFusion:
    case Opcode::kAsyncStart:
      if (called.empty()) return absl::InvalidArgumentError("no called computation");
      if (instruction.opcode() == Opcode::kAsyncStart) break;
      return RunConsuming(*called[0], operands);
    case Opcode::kWhile: {
      if (called.size() != 2 || operands.size() != 1)
        return absl::InvalidArgumentError("malformed while");
      ValuePtr state = std::move(operands[0]);
      for (int64_t iteration = 0;; ++iteration) {
        if (iteration >= options_.max_while_iterations) {
          return absl::ResourceExhaustedError(
              absl::StrCat("while loop exceeded ", options_.max_while_iterations, " iterations"));
        }
        absl::StatusOr<ValuePtr> cond = Run(*called[0], std::span<const ValuePtr>(&state, 1));
        if (!cond.ok()) return cond.status();
        if (!(*cond)->shape.IsArray() || (*cond)->shape.element_type() != PrimitiveType::kPred ||
            (*cond)->element_count() != 1) {
          return absl::InvalidArgumentError("while condition must return pred[]");
        }
        if (!(*cond)->as<bool>()[0]) break;
        // The body takes the state: the loop keeps no reference to what it updates.
        ValuePtr body_arg[1] = {std::move(state)};
        HLOGYM_ASSIGN(next, RunConsuming(*called[1], body_arg));
        state = std::move(next);
      }
      return state;
    }
    case Opcode::kConditional: {
      if (operands.empty() || called.empty() || operands.size() != called.size() + 1) {
        return absl::InvalidArgumentError("malformed conditional");
      }
      const Value& selector = *operands[0];
      if (!selector.shape.IsArray() || selector.element_count() != 1) {
        return absl::InvalidArgumentError("conditional selector must be a scalar");
      }
      int64_t branch;
      if (selector.shape.element_type() == PrimitiveType::kPred) {
        branch = selector.as<bool>()[0] ? 0 : 1;
      } else {
        branch = GetIndexElement(selector, 0);
        if (branch < 0 || branch >= static_cast<int64_t>(called.size())) branch = called.size() - 1;
      }
      if (branch >= static_cast<int64_t>(called.size()))
        return absl::InvalidArgumentError("branch");
      // The other branches' operands go first: JAX gives each branch its own tuple of the same
      // values, and the taken branch may then hold the only reference to what it updates.
      for (size_t k = 1; k < operands.size(); ++k) {
        if (static_cast<int64_t>(k) != branch + 1) operands[k].reset();
      }
      return RunConsuming(*called[branch], operands.subspan(branch + 1, 1));
    }
    case Opcode::kOptimizationBarrier:
    case Opcode::kDomain:
    case Opcode::kAddDependency:
      return operands[0];
    case Opcode::kAfterAll:
      return MakeToken();
    case Opcode::kCopy:
      if (!operands[0]->shape.IsArray()) return operands[0];
      break;
    case Opcode::kReplicaId:
    case Opcode::kPartitionId: {
      auto v = NewArray(instruction.shape());
      if (v->size_bytes > 0) std::memset(v->bytes(), 0, v->size_bytes);
      // A copy's index, in its own kind of copy (eval/partitions.h).
      if (options_.partition != nullptr &&
          options_.partition->replicas == (instruction.opcode() == Opcode::kReplicaId)) {
        const int64_t id = options_.partition->id;
        DispatchType(instruction.shape().element_type(), [&](auto tag) {
          using T = typename decltype(tag)::type;
          if constexpr (kIsInt<T>) v->mutable_as<T>()[0] = static_cast<T>(id);
        });
      }
      return ValuePtr(v);
    }
    case Opcode::kGetDimensionSize: {
      const auto& dims = instruction.attrs().dimensions;
      if (dims.size() != 1 || !operands[0]->shape.IsArray() || dims[0] < 0 ||
          dims[0] >= operands[0]->shape.rank()) {
        return absl::InvalidArgumentError("get-dimension-size dimension");
      }
      auto v = NewArray(instruction.shape());
      const int64_t size = operands[0]->shape.dimensions(dims[0]);
      if (!DispatchType(instruction.shape().element_type(), [&](auto tag) {
            using T = typename decltype(tag)::type;
            v->mutable_as<T>()[0] = ConvertElement<T>(size);
          })) {
        return absl::UnimplementedError("get-dimension-size type");
      }
      return ValuePtr(v);
    }
    case Opcode::kSetDimensionSize:
      return operands[0];
    case Opcode::kAllReduce:
    case Opcode::kAllGather:
    case Opcode::kReduceScatter:
    case Opcode::kAllToAll:
    case Opcode::kCollectivePermute:
    case Opcode::kCollectiveBroadcast:
    case Opcode::kAllReduceStart:
    case Opcode::kAllReduceDone:
    case Opcode::kAllGatherDone:
    case Opcode::kCollectivePermuteDone: {
      // Across partitions (a channel_id) in a partition's copy, or across
      // replicas in a replica's: exchanged with the others (eval/partitions.h).
      if (options_.partition != nullptr &&
          ExchangesAcrossCopies(instruction, *options_.partition)) {
        if (operands.size() == 1 && !instruction.shape().IsTuple()) {
          return EvalCrossPartitionCollective(instruction, operands[0], *options_.partition);
        }
        // A tuple all-to-all: its operands travel together, one per member.
        if (instruction.opcode() == Opcode::kAllToAll) {
          std::vector<ValuePtr> sent(operands.begin(), operands.end());
          return EvalCrossPartitionCollective(
              instruction, MakeTuple(instruction.shape(), std::move(sent)), *options_.partition);
        }
        // A variadic all-reduce, all-gather or reduce-scatter: one collective
        // per operand, each exchanged in turn (every copy takes them in the
        // same order).
        if (instruction.shape().IsTuple() &&
            instruction.shape().tuple_shapes_size() == std::ssize(operands)) {
          std::vector<ValuePtr> results;
          for (int64_t i = 0; i < std::ssize(operands); ++i) {
            HLOGYM_ASSIGN(
                result, EvalCrossPartitionCollective(instruction, operands[i], *options_.partition,
                                                     &instruction.shape().tuple_shapes(i)));
            results.push_back(std::move(result));
          }
          return MakeTuple(instruction.shape(), std::move(results));
        }
      }
      // One replica, one partition: every collective returns its data (the
      // tuple of its operands when tuple-shaped).
      if (operands.size() == 1 && !instruction.shape().IsTuple()) {
        if (Matches(*operands[0], instruction.shape())) return operands[0];
        return absl::UnimplementedError(
            "collective whose result shape differs from its operand "
            "(needs more than one replica)");
      }
      std::vector<ValuePtr> elements(operands.begin(), operands.end());
      return MakeTuple(instruction.shape(), std::move(elements));
    }
    default:
      break;
  }
  switch (instruction.opcode()) {
    case Opcode::kBroadcast:
    case Opcode::kReshape:
    case Opcode::kBitcast:
    case Opcode::kCopy:
    case Opcode::kTranspose:
    case Opcode::kSlice:
    case Opcode::kDynamicSlice:
    case Opcode::kDynamicUpdateSlice:
    case Opcode::kConcatenate:
    case Opcode::kPad:
    case Opcode::kReverse:
    case Opcode::kIota:
    case Opcode::kGather:
      if (instruction.opcode() != Opcode::kIota && operands.empty()) {
        return absl::InvalidArgumentError("missing operands");
      }
      return EvalDataMovement(instruction, operands);
    case Opcode::kDot:
      return EvalDot(instruction, operands, options_.num_threads);
    case Opcode::kRaggedDot:
      return EvalRaggedDot(instruction, operands);
    case Opcode::kConvolution:
      return EvalConvolution(instruction, operands, options_.num_threads);
    case Opcode::kReduce:
    case Opcode::kReduceWindow:
    case Opcode::kSelectAndScatter:
    case Opcode::kScatter:
    case Opcode::kSort:
    case Opcode::kMap:
    case Opcode::kScan:
      return EvalWithComputation(*this, instruction, operands);
    case Opcode::kRng:
    case Opcode::kRngBitGenerator:
    case Opcode::kRngGetAndUpdateState:
      return EvalRandom(*this, instruction, operands);
    case Opcode::kFft:
    case Opcode::kCustomCall:
    case Opcode::kTopK:
    case Opcode::kCholesky:
    case Opcode::kTriangularSolve:
    case Opcode::kBatchNormTraining:
    case Opcode::kBatchNormInference:
    case Opcode::kBatchNormGrad:
      return EvalOther(*this, instruction, operands);
    default:
      break;
  }
  if (IsElementwise(instruction.opcode()) || instruction.opcode() == Opcode::kConvert ||
      instruction.opcode() == Opcode::kBitcastConvert ||
      instruction.opcode() == Opcode::kReducePrecision ||
      instruction.opcode() == Opcode::kCompare) {
    if (operands.empty()) return absl::InvalidArgumentError("missing operands");
    return EvalElementwise(instruction, operands);
  }
  return absl::UnimplementedError(
      absl::StrCat("the evaluator does not support ", OpName(instruction.opcode())));
}

}  // namespace hlogym::eval

namespace hlogym {

namespace {
absl::StatusOr<std::vector<eval::ValuePtr>> ToValues(const Computation& computation,
                                                     const std::vector<Literal>& arguments) {
  if (static_cast<int64_t>(arguments.size()) != computation.num_parameters()) {
    return absl::InvalidArgumentError(absl::StrCat(computation.name(), " takes ",
                                                   computation.num_parameters(), " arguments, got ",
                                                   arguments.size()));
  }
  std::vector<eval::ValuePtr> values;
  for (size_t i = 0; i < arguments.size(); ++i) {
    const Shape& expected = computation.parameter_instruction(i)->shape();
    if (!arguments[i].shape().Compatible(expected) &&
        !(arguments[i].shape().IsArray() && expected.IsArray() &&
          arguments[i].shape().element_type() == expected.element_type() &&
          arguments[i].shape().dimensions() == expected.dimensions())) {
      if (!(expected.IsTuple() && arguments[i].shape().IsTuple())) {
        return absl::InvalidArgumentError(
            absl::StrCat("argument ", i, " has shape ", arguments[i].shape().ToString(false),
                         ", parameter wants ", expected.ToString(false)));
      }
    }
    auto v = eval::ValueFromLiteral(arguments[i]);
    if (!v.ok())
      return absl::InvalidArgumentError(absl::StrCat("argument ", i, ": ", v.status().message()));
    values.push_back(*std::move(v));
  }
  return values;
}
}  // namespace

int64_t DefaultEvaluatorMaxBytes() {
  static const int64_t limit = [] {
    const long pages = sysconf(_SC_PHYS_PAGES), page_size = sysconf(_SC_PAGESIZE);
    if (pages <= 0 || page_size <= 0) return int64_t{8} << 30;
    return static_cast<int64_t>(pages) * page_size / 2;
  }();
  return limit;
}

absl::Status CheckMemoryFor(int64_t bytes, int64_t max_bytes,
                            absl::FunctionRef<std::string()> what) {
  const int64_t live = eval::LiveArrayBytes();
  if (bytes <= max_bytes && live <= max_bytes - bytes) return absl::OkStatus();
  auto gib = [](int64_t b) {
    return absl::StrFormat("%.3g GiB", static_cast<double>(b) / (1 << 30));
  };
  return absl::ResourceExhaustedError(absl::StrCat(
      what(), " needs ",
      bytes == std::numeric_limits<int64_t>::max() ? "more than 2^63 bytes" : gib(bytes),
      ", more than the evaluator's memory limit of ", gib(max_bytes), " allows (", gib(live),
      " in use; --max-memory raises the limit)"));
}

absl::StatusOr<Literal> EvaluateComputation(const Computation& computation,
                                            const std::vector<Literal>& arguments,
                                            const EvaluatorOptions& options) {
  HLOGYM_ASSIGN(values, ToValues(computation, arguments));
  eval::Interpreter interpreter(options);
  HLOGYM_ASSIGN(result, interpreter.Run(computation, values));
  return eval::ValueToLiteral(*result);
}

absl::StatusOr<Literal> Evaluate(const Module& module, const std::vector<Literal>& arguments,
                                 const EvaluatorOptions& options) {
  if (module.entry_computation() == nullptr) {
    return absl::InvalidArgumentError("module has no entry computation");
  }
  if (options.partition == nullptr &&
      (eval::NeedsEveryPartition(module) || eval::NeedsEveryReplica(module))) {
    return eval::EvaluatePartitions(module, arguments, options);
  }
  return EvaluateComputation(*module.entry_computation(), arguments, options);
}

bool EvaluatorSupportsOpcode(Opcode opcode) {
  switch (opcode) {
    case Opcode::kInfeed:
    case Opcode::kOutfeed:
    case Opcode::kSend:
    case Opcode::kSendDone:
    case Opcode::kRecv:
    case Opcode::kRecvDone:
    case Opcode::kAsyncStart:
    case Opcode::kAsyncUpdate:
    case Opcode::kAsyncDone:
    case Opcode::kCopyStart:
    case Opcode::kCopyDone:
    case Opcode::kDynamicReshape:
    case Opcode::kRaggedAllToAll:
    case Opcode::kScaledDot:
    case Opcode::kShuffle:
    case Opcode::kStochasticConvert:
    case Opcode::kAllGatherStart:
    case Opcode::kCollectivePermuteStart:
    case Opcode::kCollectiveReduce:
      return false;
    default:
      return true;
  }
}

}  // namespace hlogym
