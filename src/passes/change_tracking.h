// What a pass has already looked at. Every instruction and computation carries the time of its
// last change on its module's clock (Instruction::changed_at); a pass records when its last
// complete run began (Module::RecordPassRun), and its next run may skip what has not changed
// since: that run looked at it in the same surroundings and left it alone. So a pass with
// nothing to do costs next to nothing, and a pass run again after another pass's small change
// looks only at that change. Clones keep the stamps and the records, so a gym state inherits
// what its parent's passes saw. `hlogym fuzz-passes` checks every pass against a run on a copy
// with tracking off (Module::set_change_tracking); HLOGYM_NO_CHANGE_TRACKING=1 in the
// environment turns it off everywhere (for timing the difference, or ruling it out).
#ifndef HLOGYM_PASSES_CHANGE_TRACKING_H_
#define HLOGYM_PASSES_CHANGE_TRACKING_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "hlo/computation.h"
#include "hlo/instruction.h"
#include "hlo/module.h"

namespace hlogym {

// Whether `computation`, or a computation it calls (at any depth), changed after time `since`.
bool ChangedSince(Computation& computation, uint64_t since);

// Whether a rewrite of `instruction` that reads its operands, their operands, its users and
// the computations it calls could see anything that changed after time `since`.
bool NeighborhoodChangedSince(const Instruction& instruction, uint64_t since);

// Whether nothing in `module` changed since the last complete run of the pass `key` began: then
// a deterministic pass would find nothing to do again (a MayChange may return false on it).
bool UnchangedSinceLastRun(const Module& module, std::string_view key);

// Whether HLOGYM_NO_CHANGE_TRACKING is set (to anything but 0): then no run skips anything.
bool TrackingDisabled();

// One run of a tracked pass.
class TrackedRun {
 public:
  // Begins a run of the pass named `key` (its name, and its options where they change what it
  // does) on `module`.
  TrackedRun(Module& module, std::string key);
  // Whether the run may skip anything at all: HLOGYM_NO_CHANGE_TRACKING is not set and the
  // module's change_tracking is on. (algsimp, which sweeps until a sweep changes nothing, skips
  // in each later sweep what did not change since the sweep before began, only when enabled.)
  bool enabled() const { return enabled_; }
  // The start of the pass's last complete run, if what has not changed since then may be
  // skipped (tracking is enabled, there is a record, and the entry and header did not change
  // after it).
  std::optional<uint64_t> since() const { return since_; }
  // Whether the run must look at `computation` (or, below, around `instruction`).
  bool MustVisit(Computation& computation) const {
    return !since_ || (!module_unchanged_ && ChangedSince(computation, *since_));
  }
  bool MustVisit(const Instruction& instruction) const {
    return !since_ || (!module_unchanged_ && NeighborhoodChangedSince(instruction, *since_));
  }
  // Whether anything in the module changed since the last complete run (or there was none).
  bool MustVisitModule() const { return !since_ || !module_unchanged_; }
  // Marks the run complete: call it after the pass looked at everything MustVisit asked for.
  void Complete() { module_.RecordPassRun(key_, started_at_); }

 private:
  Module& module_;
  std::string key_;
  uint64_t started_at_;
  bool enabled_;
  std::optional<uint64_t> since_;
  // No computation changed since `since_`: then nothing needs a closer look.
  bool module_unchanged_ = false;
};

}  // namespace hlogym

#endif  // HLOGYM_PASSES_CHANGE_TRACKING_H_
