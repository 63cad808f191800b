// Helpers shared by the structural passes (dce, cse, call-inliner,
// flatten-call-graph, computation-deduplicator, ...): side effects through
// called computations, XLA-style instruction and computation equality, call
// sites, computation cloning and dead-computation removal.
#ifndef HLOGYM_PASSES_PASS_UTILS_H_
#define HLOGYM_PASSES_PASS_UTILS_H_

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "hlo/computation.h"
#include "hlo/instruction.h"
#include "hlo/module.h"
#include "hlo/query.h"
#include "hlo/status_macros.h"

namespace hlogym {

// Raw (unmodelled) attributes that change what an instruction computes, as
// opposed to metadata, frontend attributes, statistics... which XLA's
// Identical ignores. backend_config counts for custom calls only.
bool SameSemanticRawAttributes(const Instruction& a, const Instruction& b);

// One entry of an instruction's `frontend_attributes={k=v,k2="v2"}`, its
// value verbatim (quoted or not).
struct FrontendAttribute {
  std::string key;
  std::string value;
};
// The entries of `instruction`'s frontend attributes (empty when it has
// none); nullopt when the text is not a `{k=v,...}` map.
std::optional<std::vector<FrontendAttribute>> GetFrontendAttributes(const Instruction& instruction);
// Replaces `instruction`'s frontend attributes by `entries` (removes the
// attribute when empty).
void SetFrontendAttributes(Instruction& instruction, const std::vector<FrontendAttribute>& entries);

using ComputationEq = std::function<bool(const Computation*, const Computation*)>;

// Equality of two instructions apart from their operands: opcode, shape,
// typed and semantic raw attributes, and called computations (equal when the
// same or when `computation_eq` says so; structural equality when it is
// empty).
bool SameInstructionIgnoringOperands(const Instruction& a, const Instruction& b,
                                     bool layout_sensitive,
                                     const ComputationEq& computation_eq = nullptr);

// XLA's HloComputation::Equal: the same signature and the same instruction
// graph reachable from the roots (names and dead instructions ignored).
bool ComputationsEqual(const Computation& a, const Computation& b, bool layout_sensitive,
                       const ComputationEq& computation_eq = nullptr);

// Call contexts as XLA's call graph defines them: control flow (call, while,
// conditional, async ops) versus embedded (reduce, map, sort, fusion, ...).
bool IsControlFlowCaller(Opcode opcode);

// For every computation, the instructions (in any computation of the module) that call it.
using CallerMap = absl::flat_hash_map<const Computation*, std::vector<Instruction*>>;

// The callers of every computation, each listed once, in module order.
CallerMap ComputeCallers(const Module& module);
// Appends the instructions of `computation` to the callers of what they call (each instruction
// once per callee), as ComputeCallers lists them, for passes that add computations.
void AddCallSites(const Computation& computation, CallerMap& callers);

// The computations that no fusion instruction calls, in module order (XLA's
// HloModule::MakeNonfusionComputations): what passes that leave fused code
// alone, such as algsimp and reshape-mover, visit.
std::vector<Computation*> NonFusionComputations(const Module& module);

// No layout, or minor_to_major = {rank-1, ..., 1, 0} (other layout details not looked at): the
// default major-to-minor order that passes ask for before they assume a row-major array.
bool HasDefaultMinorToMajor(const Shape& shape);

// A copy of `computation` (and nothing it calls) added to `module` under a
// fresh name `<name><suffix>`; instruction names get the same suffix made
// unique. The copy calls the same computations. `copies`, when given, receives each
// instruction's copy.
Computation* CloneComputation(
    Module& module, const Computation& computation, std::string_view suffix = ".clone",
    absl::flat_hash_map<const Instruction*, Instruction*>* copies = nullptr);

// Removes every computation not reachable from the entry. True if any.
absl::StatusOr<bool> RemoveUnreachableComputations(Module& module);

// Whether RemoveUnreachableComputations would remove anything, from the module's caller counts:
// call graphs have no cycles, so some unreachable computation has no caller.
bool HasUnreachableComputations(const Module& module);

// Removes `instruction` (which must be dead and not the root) after moving
// its control edges so the order they imposed still holds: every control
// predecessor becomes a predecessor of every control successor.
absl::Status RemoveInstructionKeepingControlOrder(Instruction* instruction);

// XLA's OpExpanderPass pattern: collects every instruction `matches` accepts
// (computation by computation, in post order; fused computations are left
// alone, as XLA's expanders leave them) and then replaces each by the
// instruction `expand` builds for it. Returns whether anything matched.
// `pass_key` names the pass for change tracking (passes/change_tracking.h):
// a computation that did not change since the pass's last run holds nothing
// it matches (that run expanded it all), so `matches` must read only the
// instruction and what its computation holds or calls.
absl::StatusOr<bool> ExpandMatchingInstructions(
    Module& module, std::string_view pass_key,
    const std::function<bool(const Instruction*)>& matches,
    const std::function<absl::StatusOr<Instruction*>(Instruction*)>& expand);

}  // namespace hlogym

#endif  // HLOGYM_PASSES_PASS_UTILS_H_
