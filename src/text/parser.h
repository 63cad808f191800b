// Parser for XLA's HLO text format: everything XLA's printer emits, old and
// new versions, long form (operand shapes written) and short form, with or
// without '%', as JAX, TensorFlow and PyTorch/XLA print it.
#ifndef HLOGYM_TEXT_PARSER_H_
#define HLOGYM_TEXT_PARSER_H_

#include <memory>
#include <string_view>

#include "absl/status/statusor.h"
#include "hlo/module.h"
#include "hlo/shape.h"

namespace hlogym {

// Parses a whole module. Errors are InvalidArgument with the message
// "FILENAME:LINE:COL: error: what went wrong" (1-based line and column).
absl::StatusOr<std::unique_ptr<Module>> ParseModule(std::string_view text,
                                                    std::string_view filename = "<input>");

// Parses one shape such as "f32[2,<=3]{1,0}" or "(s32[], token[])".
absl::StatusOr<Shape> ParseShape(std::string_view text);

}  // namespace hlogym

#endif  // HLOGYM_TEXT_PARSER_H_
