// reduce-scatter-reassociate: XLA's ReduceScatterReassociate.
//
// Implements: op(reduce-scatter(a), reduce-scatter(b)) ->
// reduce-scatter(op(a, b)) for an array-shaped add / multiply / minimum /
// maximum (and / or of pred) whose two reduce-scatters are used only there,
// reduce with the same kind as op, and agree on element type, replica groups,
// having a channel_id, use_global_device_ids and the scatter dimension (and
// whose operands have compatible shapes). The new reduce-scatter is a copy of
// the first one with op's shape and a fresh channel_id when it has one. Two
// reduce-scatters whose frontend attribute _scheduling_group_id differs are
// left; when only one has it, the new one drops it. Nothing changes when the
// module has a layout-constrained reduce-scatter.
// Leaves out: the domain part of XLA's key (hlogym has no domains).
#ifndef HLOGYM_PASSES_COLLECTIVES_REDUCE_SCATTER_REASSOCIATE_H_
#define HLOGYM_PASSES_COLLECTIVES_REDUCE_SCATTER_REASSOCIATE_H_

#include "passes/pass.h"

namespace hlogym {

class ReduceScatterReassociate : public Pass {
 public:
  std::string_view name() const override { return "reduce-scatter-reassociate"; }
  absl::StatusOr<bool> Run(Module& module) override;
  bool MayChange(const Module& module) const override;
};

}  // namespace hlogym

#endif  // HLOGYM_PASSES_COLLECTIVES_REDUCE_SCATTER_REASSOCIATE_H_
