#include "hlo/query.h"

namespace hlogym {

bool ContainsOpcode(const Module& module, std::span<const Opcode> opcodes) {
  for (const auto& computation : module.computations()) {
    for (Opcode opcode : opcodes) {
      if (computation->opcode_count(opcode) > 0) return true;
    }
  }
  return false;
}

}  // namespace hlogym
