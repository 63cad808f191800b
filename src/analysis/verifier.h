// Verifier: checks a module's structure and that every instruction's shape
// follows XLA's shape rules for its opcode and attributes.
#ifndef HLOGYM_ANALYSIS_VERIFIER_H_
#define HLOGYM_ANALYSIS_VERIFIER_H_

#include "absl/status/status.h"
#include "hlo/module.h"

namespace hlogym {

struct VerifierOptions {
  // Instruction names must be unique in the whole module (XLA's invariant,
  // which XLA's parser establishes by renaming). When false they need only be
  // unique within each computation, so hand-written text that reuses `x` in
  // two computations verifies.
  bool module_unique_names = false;
};

// OK, or InvalidArgument naming the computation, the instruction and the
// reason, e.g. "in computation main, instruction add.3: ...".
absl::Status VerifyModule(const Module& module, const VerifierOptions& options = {});

}  // namespace hlogym

#endif  // HLOGYM_ANALYSIS_VERIFIER_H_
