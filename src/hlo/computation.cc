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
  // By index_in_parent_: 0 = unvisited, 1 = reached (its edges pushed),
  // 2 = emitted.
  std::vector<uint8_t> state(next_instruction_index_, 0);
  // Each entry keeps its instruction's index, so that coming back to it reads
  // no instruction.
  struct Entry {
    Instruction* node;
    int64_t index;
  };
  std::vector<Entry> stack;
  stack.reserve(instructions_.size());
  auto push = [&](Instruction* node) {
    // Edges leaving the computation are ignored here (the verifier reports
    // them); an edge closing a cycle finds its end already reached.
    if (node->parent() != this || state[node->index_in_parent_] == 2) return;
    stack.push_back({node, node->index_in_parent_});
  };
  // XLA's order, which decides what its passes see first (CSE keeps the first
  // of equal instructions): a depth-first walk from each instruction without
  // users, in list order; from an instruction, its control predecessors
  // first (the last one first), then its operands in order. An instruction is
  // emitted when the walk comes back to it.
  auto walk_from = [&](Instruction* start) {
    push(start);
    while (!stack.empty()) {
      const Entry entry = stack.back();
      uint8_t& entry_state = state[entry.index];
      if (entry_state != 0) {
        stack.pop_back();
        if (entry_state == 1) {
          entry_state = 2;
          order.push_back(entry.node);
        }
        continue;
      }
      entry_state = 1;
      const auto& operands = entry.node->operands();
      for (auto it = operands.rbegin(); it != operands.rend(); ++it) push(*it);
      for (Instruction* predecessor : entry.node->control_predecessors()) push(predecessor);
    }
  };
  for (const auto& owned : instructions_) {
    if (owned->users().empty()) walk_from(owned.get());
  }
  // Instructions no walk reached (on a cycle with no way out): list order.
  if (order.size() < instructions_.size()) {
    for (const auto& owned : instructions_) {
      if (state[owned->index_in_parent_] == 0) walk_from(owned.get());
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
