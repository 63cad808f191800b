#include "hlo/computation.h"

#include <iterator>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "hlo/module.h"
#include "hlo/status_macros.h"

namespace hlogym {

bool Computation::IsEntry() const {
  return parent_ != nullptr && parent_->entry_computation() == this;
}

uint64_t Computation::Tick() {
  if (parent_ == nullptr) return 0;
  changed_at_ = parent_->Tick();
  return changed_at_;
}

void Computation::set_root_instruction(Instruction* root) {
  if (root_ != nullptr) root_->NoteChange();
  root_ = root;
  if (root_ != nullptr) root_->NoteChange();
}

std::vector<Computation*> Computation::DistinctCallees() const {
  std::vector<Computation*> callees;
  absl::flat_hash_set<const Computation*> seen;
  for (const auto& instruction : instructions_) {
    for (Computation* callee : instruction->called_computations()) {
      if (callee != nullptr && seen.insert(callee).second) callees.push_back(callee);
    }
  }
  return callees;
}

const std::vector<Computation*>& Computation::Callees() {
  if (callees_at_ == 0 || callees_at_ != changed_at_) {
    callees_ = DistinctCallees();
    callees_at_ = changed_at_;
  }
  return callees_;
}

Instruction* Computation::AddInstruction(std::unique_ptr<Instruction> instruction) {
  Instruction* added = instruction.get();
  added->set_parent(this);
  if (parent_ != nullptr) {
    if (added->unique_id() < 0) added->set_unique_id(parent_->NextUniqueId());
    if (added->name().empty()) {
      added->set_name(parent_->UniqueName(OpcodeName(added->opcode())));
    } else {
      parent_->ReserveName(added->name());
    }
  }
  if (added->opcode() == Opcode::kParameter) {
    int64_t number = added->attrs().parameter_number;
    if (number >= 0 && number < (int64_t{1} << 20)) {
      if (static_cast<int64_t>(parameters_.size()) <= number) {
        parameters_.resize(number + 1, nullptr);
      }
      parameters_[number] = added;
    }
  }
  instructions_.push_back(std::move(instruction));
  added->position_ = std::prev(instructions_.end());
  added->index_in_parent_ = next_instruction_index_++;
  ++opcode_counts_[static_cast<int>(added->opcode())];
  added->NoteChange();
  return added;
}

absl::Status Computation::RemoveInstruction(Instruction* instruction) {
  if (instruction->parent() != this) {
    return absl::NotFoundError(instruction->name() + " is not in computation " + name_);
  }
  if (instruction->user_count() != 0) {
    return absl::FailedPreconditionError("cannot remove " + instruction->name() +
                                         ": it still has users");
  }
  if (instruction == root_) {
    return absl::FailedPreconditionError("cannot remove the root " + instruction->name());
  }
  instruction->DetachOperands();
  instruction->DropAllControlDeps();
  if (instruction->opcode() == Opcode::kParameter) {
    for (Instruction*& parameter : parameters_) {
      if (parameter == instruction) parameter = nullptr;
    }
    while (!parameters_.empty() && parameters_.back() == nullptr) parameters_.pop_back();
  }
  --opcode_counts_[static_cast<int>(instruction->opcode())];
  instructions_.erase(instruction->position_);
  Tick();
  return absl::OkStatus();
}

absl::Status Computation::RemoveInstructionAndUnusedOperands(Instruction* instruction) {
  std::vector<Instruction*> worklist = {instruction};
  absl::flat_hash_set<Instruction*> removed;
  while (!worklist.empty()) {
    Instruction* current = worklist.back();
    worklist.pop_back();
    if (removed.contains(current) || current->user_count() != 0 || current == root_) continue;
    if (current != instruction &&
        (current->opcode() == Opcode::kParameter || current->HasSideEffect() ||
         !current->control_successors().empty())) {
      continue;
    }
    std::vector<Instruction*> operands = current->operands();
    HLOGYM_RETURN_IF_ERROR(RemoveInstruction(current));
    removed.insert(current);
    for (Instruction* operand : operands) worklist.push_back(operand);
  }
  return absl::OkStatus();
}

absl::Status Computation::ReplaceInstruction(Instruction* old_instruction,
                                             Instruction* new_instruction) {
  HLOGYM_RETURN_IF_ERROR(old_instruction->ReplaceAllUsesWith(new_instruction));
  return RemoveInstructionAndUnusedOperands(old_instruction);
}

std::vector<Instruction*> Computation::MakeInstructionPostOrder() const {
  std::vector<Instruction*> order;
  order.reserve(instructions_.size());
  // By index_in_parent_: 0 = unvisited, 1 = on the stack, 2 = emitted.
  std::vector<uint8_t> state(next_instruction_index_, 0);
  std::vector<std::pair<Instruction*, size_t>> stack;  // (node, next edge)
  auto edge = [](Instruction* node, size_t i) -> Instruction* {
    size_t operands = node->operands().size();
    if (i < operands) return node->operand(i);
    i -= operands;
    if (i < node->control_predecessors().size()) return node->control_predecessors()[i];
    return nullptr;
  };
  for (const auto& owned : instructions_) {
    Instruction* start = owned.get();
    if (state[start->index_in_parent_] != 0) continue;
    state[start->index_in_parent_] = 1;
    stack.emplace_back(start, 0);
    while (!stack.empty()) {
      auto& [node, next] = stack.back();
      Instruction* child = edge(node, next);
      if (child == nullptr) {
        state[node->index_in_parent_] = 2;
        order.push_back(node);
        stack.pop_back();
        continue;
      }
      ++next;
      // Edges leaving the computation or closing a cycle are ignored here;
      // the verifier reports them.
      if (child->parent() != this) continue;
      uint8_t& child_state = state[child->index_in_parent_];
      if (child_state != 0) continue;
      child_state = 1;
      stack.emplace_back(child, 0);
    }
  }
  return order;
}

void Computation::SortInstructionsTopologically() {
  std::vector<Instruction*> order = MakeInstructionPostOrder();
  absl::flat_hash_map<const Instruction*, std::unique_ptr<Instruction>> owned;
  owned.reserve(instructions_.size());
  for (auto& instruction : instructions_) {
    Instruction* raw = instruction.get();
    owned.emplace(raw, std::move(instruction));
  }
  instructions_.clear();
  for (Instruction* instruction : order) {
    instructions_.push_back(std::move(owned[instruction]));
    instruction->position_ = std::prev(instructions_.end());
  }
}

std::vector<Shape> Computation::ParameterShapes() const {
  std::vector<Shape> shapes;
  shapes.reserve(parameters_.size());
  for (const Instruction* parameter : parameters_) {
    shapes.push_back(parameter != nullptr ? parameter->shape() : Shape());
  }
  return shapes;
}

}  // namespace hlogym
