#include "hlo/instruction.h"

#include <algorithm>
#include <tuple>

#include "absl/algorithm/container.h"
#include "hlo/computation.h"
#include "hlo/query.h"

namespace hlogym {
namespace {

void EraseOne(std::vector<Instruction*>& list, Instruction* value) {
  auto it = std::find(list.begin(), list.end(), value);
  if (it != list.end()) list.erase(it);
}

// Every typed attribute, for comparison. Literals compare by value.
auto TypedFields(const InstructionAttributes& a) {
  return std::tie(a.parameter_number, a.tuple_index, a.iota_dimension, a.dimensions,
                  a.has_dimensions, a.slice, a.dynamic_slice_sizes, a.padding, a.window,
                  a.convolution_dimension_numbers, a.feature_group_count, a.batch_group_count,
                  a.dot_dimension_numbers, a.ragged_dot_dimension_numbers, a.operand_precision,
                  a.gather_dimension_numbers, a.gather_slice_sizes, a.scatter_dimension_numbers,
                  a.indices_are_sorted, a.unique_indices, a.comparison_direction, a.comparison_type,
                  a.fusion_kind, a.custom_call_target, a.rng_distribution, a.rng_algorithm,
                  a.exponent_bits, a.mantissa_bits, a.fft_type, a.fft_length, a.left_side, a.lower,
                  a.unit_diagonal, a.transpose_a, a.epsilon, a.feature_index, a.is_stable, a.k,
                  a.largest);
}

// New instructions share one set of default attributes until written.
const CopyOnWrite<InstructionAttributes>& DefaultAttributes() {
  static const CopyOnWrite<InstructionAttributes> defaults{InstructionAttributes()};
  return defaults;
}

}  // namespace

const RawAttribute* InstructionAttributes::FindRaw(std::string_view key) const {
  for (const RawAttribute& attribute : raw) {
    if (attribute.key == key) return &attribute;
  }
  return nullptr;
}

void InstructionAttributes::SetRaw(std::string_view key, std::string value) {
  for (RawAttribute& attribute : raw) {
    if (attribute.key == key) {
      attribute.value = std::move(value);
      return;
    }
  }
  raw.push_back(RawAttribute{std::string(key), std::move(value)});
}

bool InstructionAttributes::EraseRaw(std::string_view key) {
  auto it =
      std::find_if(raw.begin(), raw.end(), [&](const RawAttribute& a) { return a.key == key; });
  if (it == raw.end()) return false;
  raw.erase(it);
  return true;
}

Instruction::Instruction(Opcode opcode, Shape shape, std::string name)
    : opcode_(opcode),
      name_(std::move(name)),
      shape_(std::move(shape)),
      attrs_(DefaultAttributes()) {}

Instruction::Instruction(const Instruction& prototype, std::string name)
    : opcode_(prototype.opcode_),
      name_(std::move(name)),
      shape_(prototype.shape_),
      attrs_(prototype.attrs_),
      called_computations_(prototype.called_computations_) {}

void Instruction::NoteChange() {
  if (parent_ != nullptr) changed_at_ = parent_->Tick();
}

std::vector<Computation*>& Instruction::mutable_called_computations() {
  NoteChange();
  return called_computations_;
}

void Instruction::AddUser(Instruction* user) {
  if (!absl::c_linear_search(users_, user)) {
    users_.push_back(user);
    NoteChange();
  }
}

void Instruction::RemoveUser(Instruction* user) {
  EraseOne(users_, user);
  NoteChange();
}

void Instruction::AppendOperand(Instruction* operand) {
  operands_.push_back(operand);
  operand->AddUser(this);
  NoteChange();
}

void Instruction::ReplaceOperandWith(int64_t i, Instruction* new_operand) {
  Instruction* old_operand = operands_[i];
  if (old_operand == new_operand) return;
  operands_[i] = new_operand;
  NoteChange();
  new_operand->AddUser(this);
  if (!absl::c_linear_search(operands_, old_operand)) old_operand->RemoveUser(this);
}

void Instruction::ReplaceUsesOfOperand(Instruction* old_operand, Instruction* new_operand) {
  if (old_operand == new_operand) return;
  bool replaced = false;
  for (Instruction*& operand : operands_) {
    if (operand == old_operand) {
      operand = new_operand;
      replaced = true;
    }
  }
  if (replaced) {
    old_operand->RemoveUser(this);
    new_operand->AddUser(this);
    NoteChange();
  }
}

void Instruction::DetachOperands() {
  for (Instruction* operand : operands_) operand->RemoveUser(this);
  operands_.clear();
  NoteChange();
}

absl::Status Instruction::ReplaceAllUsesWith(Instruction* replacement) {
  if (replacement == this) return absl::OkStatus();
  if (replacement->parent() != parent_) {
    return absl::InvalidArgumentError("cannot replace " + name_ + " with " + replacement->name() +
                                      " from another computation");
  }
  // Copy: ReplaceUsesOfOperand edits users_.
  std::vector<Instruction*> users = users_;
  for (Instruction* user : users) {
    if (user == replacement) continue;  // e.g. replacing x with f(x)
    user->ReplaceUsesOfOperand(this, replacement);
  }
  if (parent_ != nullptr && parent_->root_instruction() == this) {
    parent_->set_root_instruction(replacement);
  }
  return absl::OkStatus();
}

void Instruction::AddControlDependencyTo(Instruction* successor) {
  if (absl::c_linear_search(control_successors_, successor)) return;
  control_successors_.push_back(successor);
  successor->control_predecessors_.push_back(this);
  NoteChange();
  successor->NoteChange();
}

void Instruction::RemoveControlDependencyTo(Instruction* successor) {
  EraseOne(control_successors_, successor);
  EraseOne(successor->control_predecessors_, this);
  NoteChange();
  successor->NoteChange();
}

void Instruction::DropAllControlDeps() {
  for (Instruction* predecessor : control_predecessors_) {
    EraseOne(predecessor->control_successors_, this);
    predecessor->NoteChange();
  }
  for (Instruction* successor : control_successors_) {
    EraseOne(successor->control_predecessors_, this);
    successor->NoteChange();
  }
  control_predecessors_.clear();
  control_successors_.clear();
  NoteChange();
}

bool Instruction::IsRoot() const {
  return parent_ != nullptr && parent_->root_instruction() == this;
}

bool Instruction::HasSideEffect() const {
  switch (opcode_) {
    case Opcode::kSend:
    case Opcode::kSendDone:
    case Opcode::kRecv:
    case Opcode::kRecvDone:
    case Opcode::kRng:
    case Opcode::kRngGetAndUpdateState:
    case Opcode::kInfeed:
    case Opcode::kOutfeed:
    case Opcode::kAllReduceStart:
    case Opcode::kAllReduceDone:
    case Opcode::kAllGatherStart:
    case Opcode::kAllGatherDone:
    case Opcode::kCollectivePermuteStart:
    case Opcode::kCollectivePermuteDone:
    case Opcode::kAfterAll:
    case Opcode::kAddDependency:
    case Opcode::kOptimizationBarrier:
      return true;
    case Opcode::kCustomCall: {
      const RawAttribute* effect = attrs().FindRaw("custom_call_has_side_effect");
      return effect != nullptr && effect->value == "true";
    }
    case Opcode::kAllReduce:
    case Opcode::kAllGather:
    case Opcode::kReduceScatter:
    case Opcode::kAllToAll:
    case Opcode::kCollectivePermute:
      // Collectives with a channel synchronize with other programs, except in
      // a module the SPMD partitioner split, where every partition runs the
      // same program (XLA's rule).
      return attrs().FindRaw("channel_id") != nullptr &&
             !(parent_ != nullptr && parent_->parent() != nullptr &&
               UsesSpmdPartitioning(*parent_->parent()));
    default:
      return false;
  }
}

bool Instruction::Identical(const Instruction& other) const {
  if (opcode_ != other.opcode_ || shape() != other.shape() || operands_ != other.operands_ ||
      called_computations_ != other.called_computations_) {
    return false;
  }
  return IdenticalAttributes(other);
}

bool Instruction::IdenticalAttributes(const Instruction& other) const {
  if (!attrs_.SharesWith(other.attrs_) && TypedFields(attrs()) != TypedFields(other.attrs())) {
    return false;
  }
  const Literal* a = attrs().literal.get();
  const Literal* b = other.attrs().literal.get();
  if ((a == nullptr) != (b == nullptr)) return false;
  if (a != nullptr && a != b && !(*a == *b)) return false;
  // Elided constants have unknown values: never equal to anything else.
  if (a != nullptr && a->elided() && this != &other) return false;
  return true;
}

std::unique_ptr<Instruction> Instruction::CloneWithNewOperands(
    const std::vector<Instruction*>& new_operands, std::string name) const {
  std::unique_ptr<Instruction> clone = CloneWithoutEdges(std::move(name));
  for (Instruction* operand : new_operands) clone->AppendOperand(operand);
  return clone;
}

std::unique_ptr<Instruction> Instruction::CloneWithoutEdges(std::string name) const {
  return std::unique_ptr<Instruction>(new Instruction(*this, std::move(name)));
}

}  // namespace hlogym
