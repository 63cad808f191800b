#include "hlo/module.h"

#include <algorithm>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"

namespace hlogym {

Computation* Module::FindComputation(std::string_view name) const {
  for (const auto& computation : computations_) {
    if (computation->name() == name) return computation.get();
  }
  return nullptr;
}

Computation* Module::AddComputation(std::unique_ptr<Computation> computation) {
  Computation* added = computation.get();
  if (FindComputation(added->name()) != nullptr) {
    added->set_name(UniqueName(added->name()));
  } else {
    ReserveName(added->name());
  }
  added->set_parent(this);
  // Instructions built before the computation joined the module get ids now.
  for (const auto& instruction : added->instructions()) {
    if (instruction->unique_id() < 0) instruction->set_unique_id(NextUniqueId());
    if (instruction->name().empty()) {
      instruction->set_name(UniqueName(OpcodeName(instruction->opcode())));
    } else {
      ReserveName(instruction->name());
    }
  }
  computations_.push_back(std::move(computation));
  return added;
}

absl::Status Module::RemoveComputation(Computation* computation) {
  if (computation == entry_) {
    return absl::FailedPreconditionError("cannot remove the entry computation " +
                                         computation->name());
  }
  for (const auto& caller : computations_) {
    if (caller.get() == computation) continue;
    for (const auto& instruction : caller->instructions()) {
      const auto& callees = instruction->called_computations();
      if (std::find(callees.begin(), callees.end(), computation) != callees.end()) {
        return absl::FailedPreconditionError(
            absl::StrCat("cannot remove computation ", computation->name(),
                         ": it is called by ", instruction->name()));
      }
    }
  }
  auto it = std::find_if(computations_.begin(), computations_.end(),
                         [&](const auto& c) { return c.get() == computation; });
  if (it == computations_.end()) {
    return absl::NotFoundError(computation->name() + " is not in module " + name_);
  }
  computations_.erase(it);
  return absl::OkStatus();
}

void Module::SortComputationsCalleesFirst() {
  // Depth-first over the list in its current order, emitting each
  // computation after the computations it calls.
  absl::flat_hash_map<const Computation*, std::unique_ptr<Computation>*> slot;
  for (auto& computation : computations_) slot[computation.get()] = &computation;
  std::vector<std::unique_ptr<Computation>> sorted;
  sorted.reserve(computations_.size());
  absl::flat_hash_map<const Computation*, int> state;  // 1 visiting, 2 done
  std::vector<std::pair<Computation*, size_t>> stack;   // (computation, next instruction)
  std::vector<std::vector<Computation*>> callees_stack;
  auto callees_of = [](const Computation* computation) {
    std::vector<Computation*> callees;
    for (const auto& instruction : computation->instructions()) {
      for (Computation* callee : instruction->called_computations()) {
        if (callee != nullptr &&
            std::find(callees.begin(), callees.end(), callee) == callees.end()) {
          callees.push_back(callee);
        }
      }
    }
    return callees;
  };
  std::vector<Computation*> original;
  for (auto& computation : computations_) original.push_back(computation.get());
  for (Computation* start : original) {
    if (state[start] != 0) continue;
    state[start] = 1;
    stack.emplace_back(start, 0);
    callees_stack.push_back(callees_of(start));
    while (!stack.empty()) {
      auto& [computation, next] = stack.back();
      std::vector<Computation*>& callees = callees_stack.back();
      if (next == callees.size()) {
        state[computation] = 2;
        sorted.push_back(std::move(*slot[computation]));
        stack.pop_back();
        callees_stack.pop_back();
        continue;
      }
      Computation* callee = callees[next++];
      if (!slot.contains(callee) || state[callee] != 0) continue;
      state[callee] = 1;
      stack.emplace_back(callee, 0);
      callees_stack.push_back(callees_of(callee));
    }
  }
  computations_ = std::move(sorted);
}

std::vector<Computation*> Module::MakeComputationPostOrder() const {
  std::vector<Computation*> order;
  if (entry_ == nullptr) return order;
  absl::flat_hash_map<const Computation*, int> state;  // 1 visiting, 2 done
  std::vector<std::pair<Computation*, std::vector<Computation*>>> stack;
  auto callees_of = [](const Computation* computation) {
    std::vector<Computation*> callees;
    for (const auto& instruction : computation->instructions()) {
      for (Computation* callee : instruction->called_computations()) {
        if (std::find(callees.begin(), callees.end(), callee) == callees.end()) {
          callees.push_back(callee);
        }
      }
    }
    std::reverse(callees.begin(), callees.end());  // popped from the back
    return callees;
  };
  state[entry_] = 1;
  stack.emplace_back(entry_, callees_of(entry_));
  while (!stack.empty()) {
    auto& [computation, pending] = stack.back();
    if (pending.empty()) {
      state[computation] = 2;
      order.push_back(computation);
      stack.pop_back();
      continue;
    }
    Computation* callee = pending.back();
    pending.pop_back();
    if (callee == nullptr || state[callee] != 0) continue;  // done, or a cycle
    state[callee] = 1;
    stack.emplace_back(callee, callees_of(callee));
  }
  return order;
}

int64_t Module::instruction_count() const {
  int64_t count = 0;
  for (const auto& computation : computations_) count += computation->instruction_count();
  return count;
}

std::string Module::UniqueName(std::string_view prefix) {
  std::string base(prefix);
  if (used_names_.insert(base).second) return base;
  // Continue numbering after an existing ".N" suffix, as XLA's uniquer does.
  std::string stem = base;
  int64_t next = 1;
  size_t dot = base.rfind('.');
  if (dot != std::string::npos && dot + 1 < base.size() &&
      std::all_of(base.begin() + dot + 1, base.end(), [](char c) { return c >= '0' && c <= '9'; }) &&
      base.size() - dot - 1 < 18) {
    stem = base.substr(0, dot);
    next = std::stoll(base.substr(dot + 1)) + 1;
  }
  while (true) {
    std::string candidate = absl::StrCat(stem, ".", next++);
    if (used_names_.insert(candidate).second) return candidate;
  }
}

std::unique_ptr<Module> Module::Clone() const {
  auto clone = std::make_unique<Module>(name_);
  clone->raw_attributes_ = raw_attributes_;
  clone->trailer_ = trailer_;
  clone->next_unique_id_ = next_unique_id_;
  clone->used_names_ = used_names_;

  absl::flat_hash_map<const Computation*, Computation*> computation_map;
  absl::flat_hash_map<const Instruction*, Instruction*> instruction_map;
  for (const auto& computation : computations_) {
    auto copy = std::make_unique<Computation>(computation->name());
    copy->mutable_raw_attributes() = computation->raw_attributes();
    copy->set_parent(clone.get());
    computation_map[computation.get()] = copy.get();
    clone->computations_.push_back(std::move(copy));
  }
  // First every instruction without edges (operands may come later in the
  // list), then the edges.
  for (const auto& computation : computations_) {
    Computation* copy = computation_map[computation.get()];
    for (const auto& instruction : computation->instructions()) {
      auto new_instruction = std::make_unique<Instruction>(
          instruction->opcode(), instruction->shape(), instruction->name());
      new_instruction->set_unique_id(instruction->unique_id());
      new_instruction->mutable_attrs() = instruction->attrs();
      for (Computation* callee : instruction->called_computations()) {
        auto it = computation_map.find(callee);
        new_instruction->mutable_called_computations().push_back(
            it == computation_map.end() ? nullptr : it->second);
      }
      instruction_map[instruction.get()] = copy->AddInstruction(std::move(new_instruction));
    }
    if (computation->root_instruction() != nullptr) {
      copy->set_root_instruction(instruction_map[computation->root_instruction()]);
    }
  }
  for (const auto& computation : computations_) {
    for (const auto& instruction : computation->instructions()) {
      Instruction* copy = instruction_map[instruction.get()];
      for (Instruction* operand : instruction->operands()) {
        copy->AppendOperand(instruction_map[operand]);
      }
      for (Instruction* successor : instruction->control_successors()) {
        copy->AddControlDependencyTo(instruction_map[successor]);
      }
    }
  }
  if (entry_ != nullptr) clone->entry_ = computation_map[entry_];
  return clone;
}

}  // namespace hlogym
