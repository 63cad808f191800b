// Printer for XLA's HLO text format. The default output is the canonical
// long form XLA's own HloModule::ToString() writes, which XLA's parser reads.
#ifndef HLOGYM_TEXT_PRINTER_H_
#define HLOGYM_TEXT_PRINTER_H_

#include <string>

#include "hlo/computation.h"
#include "hlo/instruction.h"
#include "hlo/module.h"

namespace hlogym {

struct PrintOptions {
  bool print_operand_shapes = true;   // "add(f32[2]{0} %a, ...)" vs "add(%a, ...)"
  bool print_percent = true;          // "%name" vs "name"
  bool print_metadata = true;         // metadata={...}
  bool print_large_constants = true;  // false: arrays over 10 elements become {...}
  bool print_raw_attributes = true;   // backend_config, sharding, ... as read

  static PrintOptions Short() {
    PrintOptions options;
    options.print_operand_shapes = false;
    options.print_percent = false;
    return options;
  }
};

std::string PrintModule(const Module& module, const PrintOptions& options = {});
std::string PrintComputation(const Computation& computation, const PrintOptions& options = {});
// One instruction line without indentation or trailing newline, e.g.
// "ROOT %add.3 = f32[2]{0} add(f32[2]{0} %a, f32[2]{0} %b)".
std::string PrintInstruction(const Instruction& instruction, const PrintOptions& options = {});

}  // namespace hlogym

#endif  // HLOGYM_TEXT_PRINTER_H_
