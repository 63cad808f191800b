// dot-merger: XLA's DotMerger, registered with the 16 MiB size limit XLA's
// GPU pipeline uses (the CPU pipeline does not run it). Two independent
// dots (neither reaches the other) that share an operand become one dot on
// a concatenation, followed by slices:
//  - same side: dot(x, y), dot(x, z) -> dot(x, concat(y, z)) sliced (also
//    for a shared rhs); requires equal dimension numbers, element types,
//    layouts and operand precisions, and exactly one non-contracting
//    dimension on the differing operands;
//  - opposite sides (canonical rank-2 dots without batch dims): a = dot(c,
//    r) and b = dot(l, transpose(c)) -> dot(c, concat(r, transpose(l))),
//    with a sliced and b sliced and transposed back.
// Candidates are grouped by shared operand (looking through transposes);
// at least one dot of a pair must have operand plus result bytes within the
// limit; groups are visited by unique id for determinism. Dots with control
// dependencies are skipped; the merged dots are removed at the end.
// Leaves out: sparse dots (more than two operands), the can_merge hook.
#ifndef HLOGYM_PASSES_SIMPLIFIERS_DOT_MERGER_H_
#define HLOGYM_PASSES_SIMPLIFIERS_DOT_MERGER_H_

#include <cstdint>

#include "passes/pass.h"

namespace hlogym {

class DotMerger : public Pass {
 public:
  explicit DotMerger(int64_t max_size_to_merge = int64_t{16} << 20)
      : max_size_to_merge_(max_size_to_merge) {}
  std::string_view name() const override { return "dot-merger"; }
  absl::StatusOr<bool> Run(Module& module) override;
  bool MayChange(const Module& module) const override;

 private:
  int64_t max_size_to_merge_;
};

}  // namespace hlogym

#endif  // HLOGYM_PASSES_SIMPLIFIERS_DOT_MERGER_H_
