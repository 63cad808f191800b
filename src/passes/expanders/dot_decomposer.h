// dot_decomposer: XLA's DotDecomposer. Every dot that is not canonical is
// rewritten into a canonical one:
//   lhs -> transpose to [batch, non-contracting, contracting] -> reshape to
//          [batch..., N (omitted when 1), K]
//   rhs -> transpose to [batch, contracting, non-contracting] -> reshape to
//          [batch..., K, M (omitted when 1)]
//   dot over those with batch dims 0..b-1, then reshape to the old shape.
// Canonical (left alone): on each side exactly one contracting dimension,
// batch dimensions 0..b-1, at most one non-contracting dimension. The
// transposes are created even when they are the identity, as XLA does
// (algsimp removes them).
// Leaves out: dots with dynamic dimensions and sparse dots (more than two
// operands); they are left unchanged.
#ifndef HLOGYM_PASSES_EXPANDERS_DOT_DECOMPOSER_H_
#define HLOGYM_PASSES_EXPANDERS_DOT_DECOMPOSER_H_

#include "passes/pass.h"

namespace hlogym {

class DotDecomposer : public Pass {
 public:
  std::string_view name() const override { return "dot_decomposer"; }
  absl::StatusOr<bool> Run(Module& module) override;
  bool MayChange(const Module& module) const override;
};

}  // namespace hlogym

#endif  // HLOGYM_PASSES_EXPANDERS_DOT_DECOMPOSER_H_
