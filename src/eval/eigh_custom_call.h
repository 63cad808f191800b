// The reference evaluator's symmetric eigendecomposition custom calls (see
// eigh_custom_call.cc).
#ifndef HLOGYM_EVAL_EIGH_CUSTOM_CALL_H_
#define HLOGYM_EVAL_EIGH_CUSTOM_CALL_H_

#include <cstdint>
#include <optional>

#include "absl/status/statusor.h"
#include "eval/interpreter.h"
#include "hlo/backend_configs.h"
#include "hlo/instruction.h"

namespace hlogym::eval {

// Evaluates custom_call_target="Eigh" (what JAX emits for jnp.linalg.eigh on
// platforms without LAPACK/cuSOLVER) and lapack_{s,d}syevd_ffi (on CPU). nullopt when this is not
// an Eigh call computed here (another target, a complex or other non-f32/f64 operand, a
// backend_config that does not parse): the caller then treats it as opaque.
// An error when the operand or result shapes are wrong.
std::optional<absl::StatusOr<ValuePtr>> EvalEighCustomCall(const Instruction& instruction,
                                                           Operands operands);

}  // namespace hlogym::eval

#endif  // HLOGYM_EVAL_EIGH_CUSTOM_CALL_H_
