// all-reduce-folder: XLA's AllReduceFolder.
//
// Implements: all-reduce(all-reduce(x)) where the inner all-reduce has no
// other user, both have explicit (non-empty) replica groups, and they agree
// on everything else that matters (reduction kind, element type, having a
// channel_id, use_global_device_ids) becomes one all-reduce of x whose groups
// are the sets of replicas contributing to each result, provided every
// replica is counted once and the sets form a partition (groups sorted by
// their first replica). The new all-reduce keeps the inner one's shape,
// to_apply and use_global_device_ids, gets a fresh channel_id when the inner
// one had one, and drops constrain_layout, metadata and other attributes, as
// XLA builds it anew. Nothing changes when the module has a layout-constrained
// all-reduce.
// Leaves out: nothing of XLA's pass (domains do not exist in hlogym).
// Errors: unreadable replica_groups, or groups naming a replica the inner
// all-reduce's groups do not list, naming the instruction.
#ifndef HLOGYM_PASSES_COLLECTIVES_ALL_REDUCE_FOLDER_H_
#define HLOGYM_PASSES_COLLECTIVES_ALL_REDUCE_FOLDER_H_

#include "passes/pass.h"

namespace hlogym {

class AllReduceFolder : public Pass {
 public:
  std::string_view name() const override { return "all-reduce-folder"; }
  absl::StatusOr<bool> Run(Module& module) override;
  bool MayChange(const Module& module) const override;
};

}  // namespace hlogym

#endif  // HLOGYM_PASSES_COLLECTIVES_ALL_REDUCE_FOLDER_H_
