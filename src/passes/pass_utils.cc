#include "passes/pass_utils.h"

#include <algorithm>
#include <memory>
#include <string>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "hlo/status_macros.h"
#include "passes/change_tracking.h"

namespace hlogym {

namespace {

bool IgnoredRawKey(const Instruction& instruction, std::string_view key) {
  if (key == "metadata" || key == "frontend_attributes" || key == "statistics" || key == "origin" ||
      key == "original_value") {
    return true;
  }
  return key == "backend_config" && instruction.opcode() != Opcode::kCustomCall;
}

}  // namespace

bool SameSemanticRawAttributes(const Instruction& a, const Instruction& b) {
  const auto& ra = a.attrs().raw;
  const auto& rb = b.attrs().raw;
  if (ra.empty() && rb.empty()) return true;
  auto kept = [](const Instruction& instruction) {
    std::vector<const RawAttribute*> out;
    for (const RawAttribute& attribute : instruction.attrs().raw) {
      if (!IgnoredRawKey(instruction, attribute.key)) out.push_back(&attribute);
    }
    std::sort(out.begin(), out.end(),
              [](const RawAttribute* x, const RawAttribute* y) { return x->key < y->key; });
    return out;
  };
  std::vector<const RawAttribute*> ka = kept(a), kb = kept(b);
  if (ka.size() != kb.size()) return false;
  for (size_t i = 0; i < ka.size(); ++i) {
    if (!(*ka[i] == *kb[i])) return false;
  }
  return true;
}

std::optional<std::vector<FrontendAttribute>> GetFrontendAttributes(
    const Instruction& instruction) {
  const RawAttribute* raw = instruction.attrs().FindRaw("frontend_attributes");
  if (raw == nullptr) return std::vector<FrontendAttribute>();
  std::string_view text = raw->value;
  if (text.size() < 2 || text.front() != '{' || text.back() != '}') return std::nullopt;
  std::vector<FrontendAttribute> entries;
  const size_t end = text.size() - 1;
  size_t i = 1;
  while (i < end) {
    const size_t eq = text.find('=', i);
    if (eq == std::string_view::npos || eq >= end) return std::nullopt;
    // The value ends at the first top-level comma outside quotes and braces.
    size_t j = eq + 1;
    int depth = 0;
    bool quoted = false;
    for (; j < end; ++j) {
      const char c = text[j];
      if (quoted) {
        if (c == '\\') {
          ++j;
        } else if (c == '"') {
          quoted = false;
        }
      } else if (c == '"') {
        quoted = true;
      } else if (c == '{') {
        ++depth;
      } else if (c == '}') {
        --depth;
      } else if (c == ',' && depth == 0) {
        break;
      }
    }
    if (quoted || depth != 0) return std::nullopt;
    entries.push_back(
        {std::string(text.substr(i, eq - i)), std::string(text.substr(eq + 1, j - eq - 1))});
    i = j + 1;
  }
  return entries;
}

void SetFrontendAttributes(Instruction& instruction,
                           const std::vector<FrontendAttribute>& entries) {
  if (entries.empty()) {
    instruction.mutable_attrs().EraseRaw("frontend_attributes");
    return;
  }
  std::string text = "{";
  for (size_t i = 0; i < entries.size(); ++i) {
    if (i > 0) text += ',';
    text += entries[i].key + "=" + entries[i].value;
  }
  text += "}";
  instruction.mutable_attrs().SetRaw("frontend_attributes", std::move(text));
}

namespace {
// Layout-sensitive comparisons as XLA's: a shape read without a layout has the default one (so a
// parsed f32[] and a pass-built f32[]{} are one shape).
bool SameShape(const Shape& a, const Shape& b, bool layout_sensitive) {
  return a.Equal(b, {.layouts = layout_sensitive ? Shape::Layouts::kCompareMissingAsDefault
                                                 : Shape::Layouts::kIgnore});
}
}  // namespace

bool SameInstructionIgnoringOperands(const Instruction& a, const Instruction& b,
                                     bool layout_sensitive, const ComputationEq& computation_eq) {
  if (a.opcode() != b.opcode() || a.operand_count() != b.operand_count()) return false;
  if (!SameShape(a.shape(), b.shape(), layout_sensitive)) return false;
  if (!a.IdenticalAttributes(b) || !SameSemanticRawAttributes(a, b)) return false;
  const auto& ca = a.called_computations();
  const auto& cb = b.called_computations();
  if (ca.size() != cb.size()) return false;
  for (size_t i = 0; i < ca.size(); ++i) {
    if (ca[i] == cb[i]) continue;
    if (ca[i] == nullptr || cb[i] == nullptr) return false;
    bool equal = computation_eq ? computation_eq(ca[i], cb[i])
                                : ComputationsEqual(*ca[i], *cb[i], layout_sensitive);
    if (!equal) return false;
  }
  return true;
}

bool ComputationsEqual(const Computation& a, const Computation& b, bool layout_sensitive,
                       const ComputationEq& computation_eq) {
  if (&a == &b) return true;
  if (a.num_parameters() != b.num_parameters()) return false;
  for (int64_t i = 0; i < a.num_parameters(); ++i) {
    const Instruction* pa = a.parameter_instruction(i);
    const Instruction* pb = b.parameter_instruction(i);
    if (pa == nullptr || pb == nullptr) return false;
    if (!SameShape(pa->shape(), pb->shape(), layout_sensitive)) return false;
  }
  if (a.raw_attributes() != b.raw_attributes()) return false;
  if (a.root_instruction() == nullptr || b.root_instruction() == nullptr) return false;
  // Walk both graphs from the roots in lockstep; the pairing must be a
  // bijection.
  absl::flat_hash_map<const Instruction*, const Instruction*> forward, backward;
  std::vector<std::pair<const Instruction*, const Instruction*>> worklist = {
      {a.root_instruction(), b.root_instruction()}};
  while (!worklist.empty()) {
    auto [x, y] = worklist.back();
    worklist.pop_back();
    auto fx = forward.find(x);
    auto by = backward.find(y);
    if (fx != forward.end() || by != backward.end()) {
      if (fx == forward.end() || by == backward.end() || fx->second != y || by->second != x) {
        return false;
      }
      continue;
    }
    forward[x] = y;
    backward[y] = x;
    if (!SameInstructionIgnoringOperands(*x, *y, layout_sensitive, computation_eq)) return false;
    if (x->control_predecessors().size() != y->control_predecessors().size()) return false;
    for (int64_t i = 0; i < x->operand_count(); ++i) {
      worklist.emplace_back(x->operand(i), y->operand(i));
    }
  }
  return true;
}

bool IsControlFlowCaller(Opcode opcode) {
  switch (opcode) {
    case Opcode::kCall:
    case Opcode::kWhile:
    case Opcode::kConditional:
    case Opcode::kAsyncStart:
    case Opcode::kAsyncUpdate:
    case Opcode::kAsyncDone:
      return true;
    default:
      return false;
  }
}

void AddCallSites(const Computation& computation, CallerMap& callers) {
  for (const auto& instruction : computation.instructions()) {
    const auto& callees = instruction->called_computations();
    for (size_t i = 0; i < callees.size(); ++i) {
      if (callees[i] == nullptr) continue;
      if (std::find(callees.begin(), callees.begin() + i, callees[i]) != callees.begin() + i) {
        continue;  // called twice by one instruction: one call site
      }
      callers[callees[i]].push_back(instruction.get());
    }
  }
}

CallerMap ComputeCallers(const Module& module) {
  CallerMap callers;
  for (const auto& computation : module.computations()) AddCallSites(*computation, callers);
  return callers;
}

bool HasDefaultMinorToMajor(const Shape& shape) {
  if (!shape.has_layout()) return true;
  const std::vector<int64_t>& minor_to_major = shape.layout()->minor_to_major;
  for (size_t i = 0; i < minor_to_major.size(); ++i) {
    if (minor_to_major[i] != static_cast<int64_t>(minor_to_major.size() - 1 - i)) return false;
  }
  return true;
}

std::vector<Computation*> NonFusionComputations(const Module& module) {
  absl::flat_hash_set<const Computation*> fused;
  for (const auto& computation : module.computations()) {
    if (computation->opcode_count(Opcode::kFusion) == 0) continue;  // no walk where none is
    for (const auto& instruction : computation->instructions()) {
      if (instruction->opcode() != Opcode::kFusion) continue;
      for (const Computation* callee : instruction->called_computations()) fused.insert(callee);
    }
  }
  std::vector<Computation*> computations;
  for (const auto& computation : module.computations()) {
    if (!fused.contains(computation.get())) computations.push_back(computation.get());
  }
  return computations;
}

Computation* CloneComputation(Module& module, const Computation& computation,
                              std::string_view suffix,
                              absl::flat_hash_map<const Instruction*, Instruction*>* copies) {
  auto copy =
      std::make_unique<Computation>(module.UniqueName(computation.name() + std::string(suffix)));
  copy->mutable_raw_attributes() = computation.raw_attributes();
  absl::flat_hash_map<const Instruction*, Instruction*> map;
  for (const auto& instruction : computation.instructions()) {
    auto clone =
        std::make_unique<Instruction>(instruction->opcode(), instruction->shape(),
                                      module.UniqueName(instruction->name() + std::string(suffix)));
    clone->mutable_attrs() = instruction->attrs();
    clone->mutable_called_computations() = instruction->called_computations();
    map[instruction.get()] = copy->AddInstruction(std::move(clone));
  }
  for (const auto& instruction : computation.instructions()) {
    Instruction* clone = map[instruction.get()];
    for (Instruction* operand : instruction->operands()) clone->AppendOperand(map[operand]);
    for (Instruction* successor : instruction->control_successors()) {
      clone->AddControlDependencyTo(map[successor]);
    }
  }
  if (computation.root_instruction() != nullptr) {
    copy->set_root_instruction(map[computation.root_instruction()]);
  }
  if (copies != nullptr) *copies = std::move(map);
  return module.AddComputation(std::move(copy));
}

absl::StatusOr<bool> RemoveUnreachableComputations(Module& module) {
  if (module.entry_computation() == nullptr) return false;
  absl::flat_hash_set<const Computation*> reachable;
  std::vector<const Computation*> worklist = {module.entry_computation()};
  reachable.insert(module.entry_computation());
  while (!worklist.empty()) {
    const Computation* computation = worklist.back();
    worklist.pop_back();
    for (const auto& instruction : computation->instructions()) {
      for (const Computation* callee : instruction->called_computations()) {
        if (callee != nullptr && reachable.insert(callee).second) worklist.push_back(callee);
      }
    }
  }
  if (reachable.size() == static_cast<size_t>(module.computation_count())) return false;
  absl::flat_hash_set<const Computation*> dead;
  for (const auto& computation : module.computations()) {
    if (!reachable.contains(computation.get())) dead.insert(computation.get());
  }
  // Only unreachable computations call unreachable ones.
  absl::Status removed = module.RemoveComputations(dead);
  if (!removed.ok()) return absl::InternalError(removed.message());
  return true;
}

bool HasUnreachableComputations(const Module& module) {
  for (const auto& computation : module.computations()) {
    if (computation.get() != module.entry_computation() &&
        module.CallerCount(computation.get()) == 0) {
      return true;
    }
  }
  return false;
}

absl::Status RemoveInstructionKeepingControlOrder(Instruction* instruction) {
  std::vector<Instruction*> predecessors = instruction->control_predecessors();
  std::vector<Instruction*> successors = instruction->control_successors();
  for (Instruction* predecessor : predecessors) {
    for (Instruction* successor : successors) {
      const auto& existing = predecessor->control_successors();
      if (std::find(existing.begin(), existing.end(), successor) == existing.end()) {
        predecessor->AddControlDependencyTo(successor);
      }
    }
  }
  return instruction->parent()->RemoveInstruction(instruction);
}

absl::StatusOr<bool> ExpandMatchingInstructions(
    Module& module, std::string_view pass_key,
    const std::function<bool(const Instruction*)>& matches,
    const std::function<absl::StatusOr<Instruction*>(Instruction*)>& expand) {
  TrackedRun run(module, std::string(pass_key));
  std::vector<Instruction*> matched;
  for (Computation* computation : NonFusionComputations(module)) {
    if (!run.MustVisit(*computation)) continue;
    // Most computations have nothing to expand: skip the post order then.
    bool any = false;
    for (const auto& owned : computation->instructions()) {
      if (matches(owned.get())) {
        any = true;
        break;
      }
    }
    if (!any) continue;
    for (Instruction* hlo : computation->MakeInstructionPostOrder()) {
      if (matches(hlo)) matched.push_back(hlo);
    }
  }
  for (Instruction* hlo : matched) {
    HLOGYM_ASSIGN(expanded, expand(hlo));
    HLOGYM_RETURN_IF_ERROR(hlo->parent()->ReplaceInstruction(hlo, expanded));
  }
  run.Complete();
  return !matched.empty();
}

}  // namespace hlogym
