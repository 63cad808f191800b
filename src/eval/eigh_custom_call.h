// The reference evaluator's "Eigh" custom call (see eigh_custom_call.cc).
#ifndef HLOGYM_EVAL_EIGH_CUSTOM_CALL_H_
#define HLOGYM_EVAL_EIGH_CUSTOM_CALL_H_

#include <cstdint>
#include <optional>

#include "absl/status/statusor.h"
#include "eval/interpreter.h"
#include "hlo/instruction.h"

namespace hlogym::eval {

// The backend_config of an "Eigh" custom call, "lower,sort_eigenvalues,
// max_iter,tol" (printed quoted). Shared with eigh_expander.
struct EighConfig {
  bool lower = true;
  bool sort = true;
  int64_t max_iter = 100;
  float tol = 1e-6f;
};
// nullopt when the config is missing or is not four comma-separated numbers.
std::optional<EighConfig> ParseEighConfig(const Instruction& instruction);

// Evaluates custom_call_target="Eigh" (what JAX emits for jnp.linalg.eigh on
// platforms without LAPACK/cuSOLVER). nullopt when this is not an Eigh call
// computed here (another target, a complex or other non-f32/f64 operand, a
// backend_config that does not parse): the caller then treats it as opaque.
// An error when the operand or result shapes are wrong.
std::optional<absl::StatusOr<ValuePtr>> EvalEighCustomCall(const Instruction& instruction,
                                                           Operands operands);

}  // namespace hlogym::eval

#endif  // HLOGYM_EVAL_EIGH_CUSTOM_CALL_H_
