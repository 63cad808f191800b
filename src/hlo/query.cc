#include "hlo/query.h"

#include <array>

namespace hlogym {

bool ContainsOpcode(const Module& module, std::span<const Opcode> opcodes) {
  std::array<bool, kOpcodeCount> wanted{};
  for (Opcode opcode : opcodes) wanted[static_cast<int>(opcode)] = true;
  for (const auto& computation : module.computations()) {
    for (const auto& instruction : computation->instructions()) {
      if (wanted[static_cast<int>(instruction->opcode())]) return true;
    }
  }
  return false;
}

}  // namespace hlogym
