// Questions asked of a whole module by several layers (XLA's hlo_query).
#ifndef HLOGYM_HLO_QUERY_H_
#define HLOGYM_HLO_QUERY_H_

#include <initializer_list>
#include <span>

#include "hlo/module.h"
#include "hlo/opcode.h"

namespace hlogym {

// Whether an instruction of any computation of `module` has one of `opcodes`.
bool ContainsOpcode(const Module& module, std::span<const Opcode> opcodes);
inline bool ContainsOpcode(const Module& module, std::initializer_list<Opcode> opcodes) {
  return ContainsOpcode(module, std::span<const Opcode>(opcodes.begin(), opcodes.size()));
}

}  // namespace hlogym

#endif  // HLOGYM_HLO_QUERY_H_
