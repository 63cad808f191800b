#include "hlo/module.h"

#include <algorithm>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
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
  // Names taken by nothing need no search among the computations.
  if (used_names_.Contains(added->name()) && FindComputation(added->name()) != nullptr) {
    added->set_name(UniqueName(added->name()));
  } else {
    ReserveName(added->name());
  }
  added->set_parent(this);
  added->set_creation_index(next_creation_index_++);
  // Instructions built before the computation joined the module get ids now.
  for (const auto& instruction : added->instructions()) {
    if (instruction->unique_id() < 0) instruction->set_unique_id(NextUniqueId());
    if (instruction->name().empty()) {
      instruction->set_name(UniqueName(OpcodeName(instruction->opcode())));
    } else {
      ReserveName(instruction->name());
    }
  }
  // Stamped as it joins: instructions added before had no clock to read.
  uint64_t now = Tick();
  added->changed_at_ = now;
  for (const auto& instruction : added->instructions()) instruction->changed_at_ = now;
  computations_.push_back(std::move(computation));
  return added;
}

std::optional<uint64_t> Module::PassRunStart(std::string_view key) const {
  for (const auto& [name, started_at] : pass_runs_) {
    if (name == key) return started_at;
  }
  return std::nullopt;
}

void Module::RecordPassRun(std::string_view key, uint64_t started_at) {
  for (auto& [name, start] : pass_runs_) {
    if (name == key) {
      start = started_at;
      return;
    }
  }
  pass_runs_.emplace_back(std::string(key), started_at);
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
        return absl::FailedPreconditionError(absl::StrCat("cannot remove computation ",
                                                          computation->name(), ": it is called by ",
                                                          instruction->name()));
      }
    }
  }
  auto it = std::find_if(computations_.begin(), computations_.end(),
                         [&](const auto& c) { return c.get() == computation; });
  if (it == computations_.end()) {
    return absl::NotFoundError(computation->name() + " is not in module " + name_);
  }
  computations_.erase(it);
  Tick();  // its instructions' calls are gone
  return absl::OkStatus();
}

int64_t Module::CallerCount(const Computation* computation) const {
  if (!caller_counts_.valid || caller_counts_.clock != change_clock_) {
    caller_counts_.counts.clear();
    for (const auto& caller : computations_) {
      for (const auto& instruction : caller->instructions()) {
        const std::vector<Computation*>& callees = instruction->called_computations();
        for (size_t i = 0; i < callees.size(); ++i) {
          // Each instruction counts once for each distinct callee.
          if (std::find(callees.begin(), callees.begin() + i, callees[i]) == callees.begin() + i) {
            ++caller_counts_.counts[callees[i]];
          }
        }
      }
    }
    caller_counts_.valid = true;
    caller_counts_.clock = change_clock_;
  }
  auto it = caller_counts_.counts.find(computation);
  return it == caller_counts_.counts.end() ? 0 : it->second;
}

absl::Status Module::RemoveComputations(const absl::flat_hash_set<const Computation*>& dead) {
  if (dead.contains(entry_)) {
    return absl::FailedPreconditionError("cannot remove the entry computation " + entry_->name());
  }
  int64_t found = 0;
  for (const auto& caller : computations_) {
    if (dead.contains(caller.get())) {
      ++found;
      continue;
    }
    for (const auto& instruction : caller->instructions()) {
      for (const Computation* callee : instruction->called_computations()) {
        if (dead.contains(callee)) {
          return absl::FailedPreconditionError(absl::StrCat("cannot remove computation ",
                                                            callee->name(), ": it is called by ",
                                                            instruction->name()));
        }
      }
    }
  }
  if (found != static_cast<int64_t>(dead.size())) {
    return absl::NotFoundError("a computation to remove is not in module " + name_);
  }
  std::erase_if(computations_, [&](const auto& c) { return dead.contains(c.get()); });
  Tick();  // their instructions' calls are gone
  return absl::OkStatus();
}

std::vector<Computation*> Module::ComputationsCalleesFirst() const {
  // Depth-first over the list in its current order, emitting each
  // computation after the computations it calls.
  absl::flat_hash_set<const Computation*> in_module;
  for (const auto& computation : computations_) in_module.insert(computation.get());
  std::vector<Computation*> order;
  order.reserve(computations_.size());
  absl::flat_hash_map<const Computation*, int> state;  // 1 visiting, 2 done
  std::vector<std::pair<Computation*, size_t>> stack;  // (computation, next callee)
  std::vector<std::vector<Computation*>> callees_stack;
  for (const auto& owned : computations_) {
    Computation* start = owned.get();
    if (state[start] != 0) continue;
    state[start] = 1;
    stack.emplace_back(start, 0);
    callees_stack.push_back(start->DistinctCallees());
    while (!stack.empty()) {
      auto& [computation, next] = stack.back();
      std::vector<Computation*>& callees = callees_stack.back();
      if (next == callees.size()) {
        state[computation] = 2;
        order.push_back(computation);
        stack.pop_back();
        callees_stack.pop_back();
        continue;
      }
      Computation* callee = callees[next++];
      // Calls out of the module or around a cycle are the verifier's to report.
      if (!in_module.contains(callee) || state[callee] != 0) continue;
      state[callee] = 1;
      stack.emplace_back(callee, 0);
      callees_stack.push_back(callee->DistinctCallees());
    }
  }
  return order;
}

void Module::SortComputationsCalleesFirst() {
  std::vector<Computation*> order = ComputationsCalleesFirst();
  absl::flat_hash_map<const Computation*, std::unique_ptr<Computation>> owned;
  for (auto& computation : computations_) {
    Computation* raw = computation.get();
    owned[raw] = std::move(computation);
  }
  computations_.clear();
  for (Computation* computation : order) computations_.push_back(std::move(owned[computation]));
}

std::vector<Computation*> Module::MakeComputationPostOrder() const {
  std::vector<Computation*> order;
  if (entry_ == nullptr) return order;
  absl::flat_hash_map<const Computation*, int> state;  // 1 visiting, 2 done
  std::vector<std::pair<Computation*, std::vector<Computation*>>> stack;
  auto callees_of = [](const Computation* computation) {
    std::vector<Computation*> callees = computation->DistinctCallees();
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

std::string Module::UniqueName(std::string_view prefix) { return used_names_.Unique(prefix); }

std::unique_ptr<Module> Module::Clone() const {
  auto clone = std::make_unique<Module>(name_);
  clone->raw_attributes_ = raw_attributes_;
  clone->trailer_ = trailer_;
  clone->next_unique_id_ = next_unique_id_;
  clone->next_creation_index_ = next_creation_index_;
  clone->used_names_ = used_names_.Copy();
  clone->change_clock_ = change_clock_;
  clone->header_changed_at_ = header_changed_at_;
  clone->pass_runs_ = pass_runs_;
  clone->change_tracking_ = change_tracking_;

  // Old instruction -> copy, indexed by unique id (ids are dense and unique
  // in a module; a hash map covers modules where they are not).
  std::vector<Instruction*> copy_by_id(std::max<int64_t>(next_unique_id_, 0), nullptr);
  absl::flat_hash_map<const Instruction*, Instruction*> copy_by_pointer;
  bool ids_usable = true;
  auto copy_of = [&](const Instruction* original) -> Instruction* {
    if (ids_usable) return copy_by_id[original->unique_id()];
    return copy_by_pointer.at(original);
  };

  absl::flat_hash_map<const Computation*, Computation*> computation_map;
  computation_map.reserve(computations_.size());
  clone->computations_.reserve(computations_.size());
  for (const auto& computation : computations_) {
    auto copy = std::make_unique<Computation>(computation->name());
    copy->mutable_raw_attributes() = computation->raw_attributes();
    copy->set_creation_index(computation->creation_index());
    computation_map[computation.get()] = copy.get();
    clone->computations_.push_back(std::move(copy));
  }
  // First every instruction without edges (operands may come later in the
  // list), then the edges. The copies keep their names and ids, which the
  // clone's name set already holds, so they are added before the
  // computations join the module (that skips naming them again).
  std::vector<std::pair<const Instruction*, Instruction*>> pairs;
  pairs.reserve(instruction_count());
  for (const auto& computation : computations_) {
    Computation* copy = computation_map[computation.get()];
    for (const auto& instruction : computation->instructions()) {
      // Shape and attributes are shared copy-on-write.
      std::unique_ptr<Instruction> new_instruction =
          instruction->CloneWithoutEdges(instruction->name());
      new_instruction->set_unique_id(instruction->unique_id());
      for (Computation*& callee : new_instruction->called_computations_) {
        auto it = computation_map.find(callee);
        callee = it == computation_map.end() ? nullptr : it->second;
      }
      Instruction* added = copy->AddInstruction(std::move(new_instruction));
      added->changed_at_ = instruction->changed_at_;
      pairs.emplace_back(instruction.get(), added);
      int64_t id = instruction->unique_id();
      if (ids_usable &&
          (id < 0 || id >= static_cast<int64_t>(copy_by_id.size()) || copy_by_id[id] != nullptr)) {
        ids_usable = false;
        for (const auto& [old_instruction, new_copy] : pairs) {
          copy_by_pointer[old_instruction] = new_copy;
        }
      }
      if (ids_usable) {
        copy_by_id[id] = added;
      } else {
        copy_by_pointer[instruction.get()] = added;
      }
    }
  }
  // Edges are copied list for list, which keeps user order and skips the
  // duplicate checks of AppendOperand.
  for (const auto& [original, copy] : pairs) {
    copy->operands_.reserve(original->operands_.size());
    for (Instruction* operand : original->operands_) copy->operands_.push_back(copy_of(operand));
    copy->users_.reserve(original->users_.size());
    for (Instruction* user : original->users_) copy->users_.push_back(copy_of(user));
    for (Instruction* predecessor : original->control_predecessors_) {
      copy->control_predecessors_.push_back(copy_of(predecessor));
    }
    for (Instruction* successor : original->control_successors_) {
      copy->control_successors_.push_back(copy_of(successor));
    }
  }
  for (const auto& computation : computations_) {
    Computation* copy = computation_map[computation.get()];
    if (computation->root_instruction() != nullptr) {
      copy->root_ = copy_of(computation->root_instruction());
    }
    copy->set_parent(clone.get());
    copy->changed_at_ = computation->changed_at_;
    if (computation->callees_at_ != 0 && computation->callees_at_ == computation->changed_at_) {
      copy->callees_.reserve(computation->callees_.size());
      for (Computation* callee : computation->callees_) {
        auto it = computation_map.find(callee);
        if (it != computation_map.end()) copy->callees_.push_back(it->second);
      }
      if (copy->callees_.size() == computation->callees_.size()) {
        copy->callees_at_ = copy->changed_at_;
      } else {
        copy->callees_.clear();
      }
    }
  }
  if (entry_ != nullptr) clone->entry_ = computation_map[entry_];
  return clone;
}

}  // namespace hlogym
