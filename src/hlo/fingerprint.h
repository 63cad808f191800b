// Structural fingerprints of modules and computations: a 128-bit hash of what
// a module computes as written, with every name ignored.
//
// Covered: opcodes, shapes (layouts and dynamic dimensions included), every
// typed attribute, constant values (bit-exact), raw attributes other than
// `metadata` (sharding, backend_config, replica_groups, ... can change what an
// instruction does), operand structure (which instruction feeds which operand
// slot, sharing included: add(x, x) differs from add(x, x') even when x and x'
// are identical), control edges, called computations (by their own
// fingerprints, not names), the root, dead instructions and unreachable
// computations (they count in the op count), the module's header attributes,
// and the order of the computation list and of each computation's stable post
// order (MakeInstructionPostOrder). Order is included on purpose: passes visit
// instructions in that order and their results can depend on it (which of two
// simplifications fires first), so memoizing pass results by fingerprint is
// only sound when the order is part of the key. Not covered: names, unique
// ids, metadata, and list orders that the post order does not see (say, two
// independent parameters listed the other way round).
//
// The hash is deterministic across runs and machines (no per-process seed), so
// fingerprints may be stored. Equal fingerprints mean equal structure up to a
// 2^-128-ish collision chance; the gym uses them as memoization keys.
#ifndef HLOGYM_HLO_FINGERPRINT_H_
#define HLOGYM_HLO_FINGERPRINT_H_

#include <cstdint>
#include <string>

#include "hlo/computation.h"
#include "hlo/module.h"

namespace hlogym {

struct Fingerprint {
  uint64_t hi = 0;
  uint64_t lo = 0;

  bool operator==(const Fingerprint&) const = default;
  bool operator<(const Fingerprint& o) const { return hi != o.hi ? hi < o.hi : lo < o.lo; }
  std::string ToString() const;  // 32 lowercase hex digits

  template <typename H>
  friend H AbslHashValue(H h, const Fingerprint& f) {
    return H::combine(std::move(h), f.hi, f.lo);
  }
};

Fingerprint ModuleFingerprint(const Module& module);

// The fingerprint of one computation, with the computations it calls hashed
// structurally (recursively).
Fingerprint ComputationFingerprint(const Computation& computation);

}  // namespace hlogym

#endif  // HLOGYM_HLO_FINGERPRINT_H_
