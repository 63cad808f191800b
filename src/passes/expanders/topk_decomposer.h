// topk-decomposer: XLA's TopkDecomposer.
//
// Implements: topk(x), k, largest -> a stable sort of x (with an s32 iota of
// the last dimension as second operand when the indices are used) along the
// last dimension, under a fresh comparator "compare-greater-than" (largest)
// or "compare-less-than" comparing only the values (TOTALORDER for floats),
// followed by slices [0:k] of the last dimension. When the topk's only user
// reads the values (get-tuple-element 0), the iota is left out and that user
// is replaced by the slice. The "all" variant (XLA's TopkDecomposer without a
// predicate, as the interpreter backend runs it) also decomposes
// custom-call "TopK" using the call's own comparator; the CPU pipeline's
// variant (the plain name) decomposes topk instructions only.
// Leaves out: nothing.
#ifndef HLOGYM_PASSES_EXPANDERS_TOPK_DECOMPOSER_H_
#define HLOGYM_PASSES_EXPANDERS_TOPK_DECOMPOSER_H_

#include <string>

#include "passes/pass.h"

namespace hlogym {

class TopkDecomposer : public Pass {
 public:
  // `custom_calls`: also decompose custom-call "TopK".
  explicit TopkDecomposer(bool custom_calls = false, std::string name = "topk-decomposer")
      : custom_calls_(custom_calls), name_(std::move(name)) {}
  std::string_view name() const override { return name_; }
  absl::StatusOr<bool> Run(Module& module) override;
  bool MayChange(const Module& module) const override;

 private:
  bool custom_calls_;
  std::string name_;
};

}  // namespace hlogym

#endif  // HLOGYM_PASSES_EXPANDERS_TOPK_DECOMPOSER_H_
