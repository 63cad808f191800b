// topk-rewriter: XLA's TopkRewriter (sort + slice patterns -> TopK custom call).
//
// Implements: a sort of one array, or of an array and an iota of its
// indices along the sort dimension (or a broadcast of a rank-1 iota), whose
// comparator is a "greater than" XLA recognizes as NaN-safe (a plain GT of
// the two keys; the total-order key select(x < 0, x ^ max, x) over the bits,
// also after a bf16->f32 convert or in the older subtract form; s32 keys;
// the select(true, gt, true) default comparator), and whose every use is a
// slice of the first k elements along the sort dimension (the same k; whole
// along the other dimensions), is computed by
// custom-call "TopK" (values and s32 indices, the comparator attached) on the
// data as [batch, n] (reshaped when the rank exceeds 2, transposed when the
// sort dimension is the first), with get-tuple-elements (transposed and
// reshaped back) replacing the slices. Only f32 and bf16 data whose sort
// dimension is the first or the last qualify. As in XLA the sort and slices
// are left for dce. "topk-rewriter" is the CPU pipeline's instance (f32 data
// only); "topk-rewriter-all" is the GPU pre-SPMD instance (every candidate).
// Leaves out: rewriting kTopK instructions into the custom call (the
// pipelines decompose them before this pass runs). Stricter than XLA: the
// iota must count along the sort dimension (XLA accepts any s32 iota of the
// right shape).
#ifndef HLOGYM_PASSES_SIMPLIFIERS_TOPK_REWRITER_H_
#define HLOGYM_PASSES_SIMPLIFIERS_TOPK_REWRITER_H_

#include <string>
#include <string_view>
#include <utility>

#include "passes/pass.h"

namespace hlogym {

class TopkRewriter : public Pass {
 public:
  // `f32_only`: XLA's CPU profitability predicate (f32 data only).
  explicit TopkRewriter(bool f32_only = true, std::string name = "topk-rewriter")
      : f32_only_(f32_only), name_(std::move(name)) {}
  std::string_view name() const override { return name_; }
  absl::StatusOr<bool> Run(Module& module) override;
  bool MayChange(const Module& module) const override;

 private:
  bool f32_only_;
  std::string name_;
};

}  // namespace hlogym

#endif  // HLOGYM_PASSES_SIMPLIFIERS_TOPK_REWRITER_H_
