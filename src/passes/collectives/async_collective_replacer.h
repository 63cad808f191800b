// async-collective-replacer: XLA's AsyncCollectiveReplacer as the CPU
// compiler configures it (its "async-collective" pipeline, every kind of
// collective selected).
//
// Implements: in every computation that is not a fusion body, each
// asynchronous collective pair becomes one synchronous collective with the
// done's shape:
//   all-reduce-start / all-reduce-done               -> all-reduce
//   all-gather-start / all-gather-done               -> all-gather
//   collective-permute-start / collective-permute-done -> collective-permute
//     (one operand only)
//   async-start / [async-update...] / async-done whose wrapped computation's
//     root is an all-reduce, all-gather, collective-permute,
//     collective-broadcast, all-to-all or reduce-scatter -> a copy of that
//     root taking the async-start's operands.
// The dedicated start ops keep their collective attributes (to_apply,
// dimensions, replica_groups, channel_id, constrain_layout,
// use_global_device_ids, source_target_pairs); a wrapped root keeps all of
// its own. Either way the new instruction takes the start's metadata and
// backend_config, and frontend attribute async_collective_name=<start's
// name>. "control_dep" custom calls that use a replaced start or done are
// removed (the order they asked for cannot be kept), and the start's and
// done's control edges are dropped, as XLA does. The wrapped computation is
// left behind unreferenced, as in XLA (a later dce removes it).
// Errors (naming the instruction, before anything is rewritten): a start
// without its matching done, a start or update with other users, a used
// control_dep, a collective-permute-start with several operands, a wrapped
// root whose operands are not the wrapped computation's parameters in order.
// Async-wrapped all-reduce/all-gather/collective-permute are converted as
// the newest XLA does (older XLA converted only the dedicated start ops for
// those three).
// Leaves out: the schedule update XLA does for scheduled modules (hlogym
// modules carry no schedule).
#ifndef HLOGYM_PASSES_COLLECTIVES_ASYNC_COLLECTIVE_REPLACER_H_
#define HLOGYM_PASSES_COLLECTIVES_ASYNC_COLLECTIVE_REPLACER_H_

#include "passes/pass.h"

namespace hlogym {

class AsyncCollectiveReplacer : public Pass {
 public:
  std::string_view name() const override { return "async-collective-replacer"; }
  absl::StatusOr<bool> Run(Module& module) override;
  bool MayChange(const Module& module) const override;
};

}  // namespace hlogym

#endif  // HLOGYM_PASSES_COLLECTIVES_ASYNC_COLLECTIVE_REPLACER_H_
