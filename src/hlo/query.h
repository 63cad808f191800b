// Questions asked of a whole module by several layers (XLA's hlo_query).
#ifndef HLOGYM_HLO_QUERY_H_
#define HLOGYM_HLO_QUERY_H_

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <span>

#include "absl/container/flat_hash_map.h"
#include "absl/functional/function_ref.h"
#include "hlo/module.h"
#include "hlo/opcode.h"

namespace hlogym {

// ---- The module's header (XLA's HloModuleConfig) ----

// replica_count and num_partitions (1 when absent or unreadable).
int64_t ReplicaCount(const Module& module);
int64_t NumPartitions(const Module& module);
// use_spmd_partitioning=true, or, where the header does not say (XLA's text
// does not print it), num_partitions above 1.
bool UsesSpmdPartitioning(const Module& module);

// Whether the entry computations of `a` and `b` take parameters and return
// results of the same shapes (layouts aside): a module and its split for
// several partitions differ in one or the other.
bool SameEntrySignature(const Module& a, const Module& b);

// Whether an instruction of any computation of `module` has one of `opcodes`.
bool ContainsOpcode(const Module& module, std::span<const Opcode> opcodes);
inline bool ContainsOpcode(const Module& module, std::initializer_list<Opcode> opcodes) {
  return ContainsOpcode(module, std::span<const Opcode>(opcodes.begin(), opcodes.size()));
}

// Whether any instruction of `module` has a dynamic dimension (`f32[<=8]`)
// in its shape.
bool HasDynamicShapes(const Module& module);

// Whether an instruction with `opcode` in any computation of `module`
// satisfies `predicate` (only computations holding the opcode are scanned):
// what a pass's exact pre-check (Pass::MayChange) asks when it rewrites the
// instructions its predicate picks.
bool ContainsInstruction(const Module& module, Opcode opcode,
                         absl::FunctionRef<bool(const Instruction&)> predicate);

// ---- Side effects (XLA's HloInstruction::HasSideEffect, transitively) ----

// The instruction's own side effect or one of any computation it calls
// (transitively). Memoized per computation; valid while the computations it
// has seen are not edited.
class SideEffectCache {
 public:
  bool HasSideEffect(const Instruction* instruction);
  bool ComputationHasSideEffect(const Computation* computation);

 private:
  absl::flat_hash_map<const Computation*, bool> memo_;
};
// One question, without a cache to keep.
bool ComputationHasSideEffect(const Computation& computation);

// ---- Constants, looking through broadcasts ----

// An array constant whose elements can be read (its literal was not elided).
bool IsReadableArrayConstant(const Instruction* hlo);
// Looks through broadcasts for a constant whose every element equals
// `value` (converted to the element type). False for elided constants.
bool IsAll(const Instruction* hlo, double value);
// The constant (looking through broadcasts) if every element is the lowest
// value of its type (-inf for floats with infinities, the minimum for ints).
bool IsAllLowest(const Instruction* hlo);
bool IsAllHighest(const Instruction* hlo);
// The value of a constant with exactly one element (an effective scalar).
std::optional<double> ScalarConstantValue(const Instruction* hlo);
// A constant with one element (any rank).
bool IsEffectiveScalarConstant(const Instruction* hlo);
// broadcast(constant with one element) or that constant itself.
const Instruction* UnwrapBroadcastOfConstant(const Instruction* hlo);
// Whether `hlo` is provably >= 0 (XLA's IsNonNegative, for real types).
bool IsNonNegative(const Instruction* hlo);

}  // namespace hlogym

#endif  // HLOGYM_HLO_QUERY_H_
