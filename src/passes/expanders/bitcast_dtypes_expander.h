// bitcast_dtypes_expander: XLA's BitcastDtypesExpander.
//
// Implements: bitcast-convert between element types of different bit widths
// as same-width bitcasts on unsigned integers plus shifts:
//  - narrowing (e.g. u32[N] -> u8[N,4]): broadcast the input along a new
//    minor dimension, shift element i right by i * narrow-width bits (an iota
//    times the width), mask, convert to the narrow unsigned type;
//  - widening (e.g. u8[N,4] -> u32[N]): collapse the last two dimensions,
//    take one strided slice per piece, convert each to the wide unsigned type,
//    shift piece i left by i * narrow-width bits and or them together (a
//    rank-1 input gives a [1] result, reshaped to a scalar).
// Piece 0 holds the least significant bits, as XLA's bitcast-convert does.
// Same-width bitcasts are left alone.
// Leaves out: complex element types (their bitcasts are left as they are).
#ifndef HLOGYM_PASSES_EXPANDERS_BITCAST_DTYPES_EXPANDER_H_
#define HLOGYM_PASSES_EXPANDERS_BITCAST_DTYPES_EXPANDER_H_

#include "passes/pass.h"

namespace hlogym {

class BitcastDtypesExpander : public Pass {
 public:
  std::string_view name() const override { return "bitcast_dtypes_expander"; }
  absl::StatusOr<bool> Run(Module& module) override;
  bool MayChange(const Module& module) const override;
};

}  // namespace hlogym

#endif  // HLOGYM_PASSES_EXPANDERS_BITCAST_DTYPES_EXPANDER_H_
