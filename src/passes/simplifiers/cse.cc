#include "passes/simplifiers/cse.h"

#include <algorithm>
#include <cstring>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/hash/hash.h"
#include "hlo/status_macros.h"
#include "passes/change_tracking.h"
#include "passes/pass_utils.h"

namespace hlogym {
namespace {

constexpr bool kLayoutSensitive = false;

// Literal values equal bit for bit, shapes equal up to layout.
bool SameLiteralValue(const Literal& a, const Literal& b) {
  if (a.elided() || b.elided()) return false;
  if (!a.shape().Compatible(b.shape())) return false;
  if (a.raw().size() != b.raw().size() ||
      (!a.raw().empty() && std::memcmp(a.raw().data(), b.raw().data(), a.raw().size()) != 0)) {
    return false;
  }
  const auto& ta = a.tuple_elements();
  const auto& tb = b.tuple_elements();
  if (ta.size() != tb.size()) return false;
  for (size_t i = 0; i < ta.size(); ++i) {
    if (!SameLiteralValue(ta[i], tb[i])) return false;
  }
  return true;
}

size_t LiteralHash(const Literal& literal) {
  size_t h = absl::HashOf(static_cast<int>(literal.shape().element_type()),
                          literal.shape().dimensions(), literal.tuple_elements().size());
  auto raw = literal.raw();
  h = absl::HashOf(h, absl::string_view(reinterpret_cast<const char*>(raw.data()), raw.size()));
  for (const Literal& element : literal.tuple_elements()) h = absl::HashOf(h, LiteralHash(element));
  return h;
}

bool HasControlDeps(const Instruction* instruction) {
  return !instruction->control_predecessors().empty() || !instruction->control_successors().empty();
}

absl::StatusOr<bool> CombineConstants(Computation* computation) {
  absl::flat_hash_map<size_t, std::vector<Instruction*>> constants;
  std::vector<std::pair<Instruction*, Instruction*>> merges;  // (duplicate, kept)
  for (const auto& owned : computation->instructions()) {
    Instruction* instruction = owned.get();
    if (instruction->opcode() != Opcode::kConstant || HasControlDeps(instruction) ||
        instruction->attrs().literal == nullptr || instruction->literal().elided()) {
      continue;
    }
    std::vector<Instruction*>& bucket = constants[LiteralHash(instruction->literal())];
    Instruction* match = nullptr;
    for (Instruction* candidate : bucket) {
      if (candidate->shape().Compatible(instruction->shape()) &&
          SameLiteralValue(candidate->literal(), instruction->literal()) &&
          SameSemanticRawAttributes(*candidate, *instruction)) {
        match = candidate;
        break;
      }
    }
    if (match == nullptr) {
      bucket.push_back(instruction);
    } else {
      merges.emplace_back(instruction, match);
    }
  }
  for (auto [duplicate, kept] : merges) {
    HLOGYM_RETURN_IF_ERROR(duplicate->ReplaceAllUsesWith(kept));
    HLOGYM_RETURN_IF_ERROR(computation->RemoveInstruction(duplicate));
  }
  return !merges.empty();
}

// Operands that CSE treats as the same value.
bool SameOperand(const Instruction* a, const Instruction* b) {
  if (a == b) return true;
  return a->opcode() == Opcode::kIota && b->opcode() == Opcode::kIota &&
         a->attrs().iota_dimension == b->attrs().iota_dimension &&
         (kLayoutSensitive ? a->shape() == b->shape() : a->shape().Compatible(b->shape()));
}

bool SameOperands(const Instruction& a, const Instruction& b) {
  if (a.operand_count() != b.operand_count()) return false;
  bool in_order = true;
  for (int64_t i = 0; i < a.operand_count() && in_order; ++i) {
    in_order = SameOperand(a.operand(i), b.operand(i));
  }
  if (in_order) return true;
  return IsCommutative(a.opcode()) && a.operand_count() == 2 &&
         SameOperand(a.operand(0), b.operand(1)) && SameOperand(a.operand(1), b.operand(0));
}

size_t KeyHash(const Instruction* instruction) {
  size_t h = absl::HashOf(static_cast<int>(instruction->opcode()));
  if (instruction->shape().IsArray()) h = absl::HashOf(h, instruction->shape().dimensions());
  auto id = [](const Instruction* operand) -> int64_t {
    return operand->opcode() == Opcode::kIota ? -1 : operand->unique_id();
  };
  if (IsCommutative(instruction->opcode()) && instruction->operand_count() == 2) {
    int64_t a = id(instruction->operand(0)), b = id(instruction->operand(1));
    h = absl::HashOf(h, std::min(a, b), std::max(a, b));
  } else {
    for (const Instruction* operand : instruction->operands()) h = absl::HashOf(h, id(operand));
  }
  for (const Computation* callee : instruction->called_computations()) {
    if (callee != nullptr && callee->root_instruction() != nullptr) {
      h = absl::HashOf(h, static_cast<int>(callee->root_instruction()->opcode()));
    }
  }
  return h;
}

bool ShouldEliminate(const Instruction* instruction, SideEffectCache& effects) {
  if (instruction->operand_count() == 0 && instruction->opcode() != Opcode::kPartitionId &&
      instruction->opcode() != Opcode::kReplicaId) {
    return false;
  }
  if (HasControlDeps(instruction)) return false;
  return !effects.HasSideEffect(instruction);
}

absl::StatusOr<bool> RunOnComputation(Computation* computation, SideEffectCache& effects) {
  HLOGYM_ASSIGN(changed_or, CombineConstants(computation));
  bool changed = changed_or;
  absl::flat_hash_map<size_t, std::vector<Instruction*>> representatives;
  representatives.reserve(computation->instruction_count());
  for (Instruction* instruction : computation->MakeInstructionPostOrder()) {
    if (!ShouldEliminate(instruction, effects)) continue;
    std::vector<Instruction*>& bucket = representatives[KeyHash(instruction)];
    Instruction* equivalent = nullptr;
    for (Instruction* candidate : bucket) {
      if (SameOperands(*candidate, *instruction) &&
          SameInstructionIgnoringOperands(*candidate, *instruction, kLayoutSensitive)) {
        equivalent = candidate;
        break;
      }
    }
    if (equivalent != nullptr) {
      HLOGYM_RETURN_IF_ERROR(instruction->ReplaceAllUsesWith(equivalent));
      HLOGYM_RETURN_IF_ERROR(computation->RemoveInstructionAndUnusedOperands(instruction));
      changed = true;
      continue;
    }
    bucket.push_back(instruction);
    // Equal iota operands: use the first one everywhere.
    for (int64_t i = 0; i < instruction->operand_count(); ++i) {
      Instruction* a = instruction->operand(i);
      if (a->opcode() != Opcode::kIota) continue;
      for (int64_t j = i + 1; j < instruction->operand_count(); ++j) {
        Instruction* b = instruction->operand(j);
        if (a == b || !SameOperand(a, b)) continue;
        instruction->ReplaceOperandWith(j, a);
        changed = true;
        if (b->users().empty() && !b->IsRoot() && !HasControlDeps(b)) {
          HLOGYM_RETURN_IF_ERROR(computation->RemoveInstruction(b));
        }
      }
    }
  }
  return changed;
}

}  // namespace

absl::StatusOr<bool> HloCse::Run(Module& module) {
  TrackedRun run(module, std::string(name()));
  bool changed = false;
  SideEffectCache effects;
  std::vector<Computation*> computations;
  for (const auto& computation : module.computations()) computations.push_back(computation.get());
  for (Computation* computation : computations) {
    // What a computation (with what it calls) holds decides what merges there.
    if (!run.MustVisit(*computation)) continue;
    HLOGYM_ASSIGN(computation_changed, RunOnComputation(computation, effects));
    changed |= computation_changed;
  }
  run.Complete();
  return changed;
}

}  // namespace hlogym
