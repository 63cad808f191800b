// Typed readers of the backend_config strings that more than one layer reads
// (the evaluator computes the custom call, a pass expands it): one parser,
// so that both read a config the same way.
#ifndef HLOGYM_HLO_BACKEND_CONFIGS_H_
#define HLOGYM_HLO_BACKEND_CONFIGS_H_

#include <cstdint>
#include <optional>
#include <string_view>

#include "hlo/instruction.h"

namespace hlogym {

// The backend_config of an "Eigh" custom call, "lower,sort_eigenvalues,
// max_iter,tol" (printed quoted): the evaluator's Eigh and eigh_expander.
struct EighConfig {
  bool lower = true;
  bool sort = true;
  int64_t max_iter = 100;
  float tol = 1e-6f;
};
// nullopt when the config is missing or is not four comma-separated numbers.
std::optional<EighConfig> ParseEighConfig(const Instruction& instruction);

// An integer attribute of a typed-FFI custom call (API_VERSION_TYPED_FFI),
// whose backend_config prints as `{uplo = 76 : ui8, lower = true}`: the value
// of `key` (true/false as 1/0); nullopt when it is missing or not an integer.
// The evaluator's LAPACK and solver calls read their modes with it.
std::optional<int64_t> FfiAttribute(const Instruction& instruction, std::string_view key);

}  // namespace hlogym

#endif  // HLOGYM_HLO_BACKEND_CONFIGS_H_
