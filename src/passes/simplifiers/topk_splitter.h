// topk-splitter: XLA's GPU TopKSplitter (the GPU compiler's optimization
// pipeline, with its default split threshold of 1024 * 1024 elements).
//
// Implements: a "TopK" custom call over f[n] or f[1, n] (one operand, a
// (values, s32 indices) result) with n at least the threshold, n a multiple
// of 1024 and k * k <= n becomes: the input reshaped to [B, n / B] with
// B = min(bit_floor(n / threshold), 1024); a TopK custom call per row (same
// comparator) giving [B, k] values and indices; the indices shifted by
// row * (n / B) (iota times a broadcast constant); both flattened to
// [B * k] and sorted together, stably, with the TopK's comparator; the first
// k of each sorted output reshaped to the original result shapes and tupled.
// A candidate whose comparator does not take four parameters (values and
// indices) is an error naming it.
// Differs from XLA: when B would be 1 the TopK is left alone (XLA rewrites
// it into a TopK of the same size and a sort of its k results; skipping
// keeps the pass idempotent); indices of another type than s32 are left
// alone (XLA assumes s32).
// Leaves out: nothing else of XLA's pass; inputs of rank above 2 or with a
// batch other than 1 are left alone, as in XLA.
#ifndef HLOGYM_PASSES_SIMPLIFIERS_TOPK_SPLITTER_H_
#define HLOGYM_PASSES_SIMPLIFIERS_TOPK_SPLITTER_H_

#include <cstdint>

#include "passes/pass.h"

namespace hlogym {

class TopkSplitter : public Pass {
 public:
  explicit TopkSplitter(int64_t split_threshold = 1024 * 1024)
      : split_threshold_(split_threshold) {}
  std::string_view name() const override { return "topk-splitter"; }
  absl::StatusOr<bool> Run(Module& module) override;
  bool MayChange(const Module& module) const override;

 private:
  int64_t split_threshold_;
};

}  // namespace hlogym

#endif  // HLOGYM_PASSES_SIMPLIFIERS_TOPK_SPLITTER_H_
