// Module: computations (one of them the entry) plus the header attributes
// XLA writes after `HloModule name`.
#ifndef HLOGYM_HLO_MODULE_H_
#define HLOGYM_HLO_MODULE_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "hlo/attributes.h"
#include "hlo/computation.h"
#include "hlo/copy_on_write.h"
#include "hlo/name_set.h"

namespace hlogym {

class Module {
 public:
  explicit Module(std::string name) : name_(std::move(name)) {}
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;

  const std::string& name() const { return name_; }
  void set_name(std::string name) { name_ = std::move(name); }

  // Computations in print order: callees before callers as parsed or added.
  const std::vector<std::unique_ptr<Computation>>& computations() const { return computations_; }
  int64_t computation_count() const { return static_cast<int64_t>(computations_.size()); }
  Computation* entry_computation() const { return entry_; }
  void set_entry_computation(Computation* entry) {
    NoteHeaderChange();
    entry_ = entry;
  }
  Computation* FindComputation(std::string_view name) const;

  // Takes ownership and appends; names are made unique in the module.
  Computation* AddComputation(std::unique_ptr<Computation> computation);
  // Gives `computation` the next creation index, for a pass that edits in
  // place what XLA replaces with a new computation.
  void NoteRecreated(Computation* computation) {
    computation->set_creation_index(next_creation_index_++);
  }
  // How many instructions call `computation` (each once, however many of its
  // called computations it is). Counted for every computation in one walk and
  // kept until the module next changes (its change clock), since a pass asks
  // about many loops' bodies and conditions between its edits.
  int64_t CallerCount(const Computation* computation) const;
  // Removes a computation that no instruction calls and is not the entry.
  absl::Status RemoveComputation(Computation* computation);
  // Removes a set of computations that may call each other but that no computation outside the
  // set calls, none of them the entry; one walk over the module, however many are removed.
  absl::Status RemoveComputations(const absl::flat_hash_set<const Computation*>& dead);
  // Callees before callers, reachable from the entry only.
  std::vector<Computation*> MakeComputationPostOrder() const;
  // Reorders the computation list so that every callee precedes its callers
  // (the order XLA prints), keeping the current order where the calls allow.
  // Passes that add computations call it so the printed module stays valid.
  void SortComputationsCalleesFirst();
  // The computations in that order, without reordering the list (what the
  // printer emits: XLA's parser needs callees defined before their callers).
  std::vector<Computation*> ComputationsCalleesFirst() const;

  // Header attributes after `HloModule name,` kept verbatim and in order
  // (entry_computation_layout, input_output_alias, is_scheduled, ...).
  const std::vector<RawAttribute>& raw_attributes() const { return raw_attributes_.get(); }
  std::vector<RawAttribute>& mutable_raw_attributes() {
    NoteHeaderChange();
    return raw_attributes_.mutable_get();
  }
  // The stack-frame tables newer XLA prints (FileNames, FunctionNames,
  // FileLocations, StackFrames), verbatim; printed after the header.
  const std::string& trailer() const { return trailer_.get(); }
  void set_trailer(std::string trailer) { trailer_.set(std::move(trailer)); }

  // Op count: instructions in all computations, parameters and constants
  // included (XLA's HloModule::instruction_count()).
  int64_t instruction_count() const;

  // The change clock: one tick per change to an instruction or computation (their changed_at
  // stamps read it). Clones keep the clock, the stamps and the pass-run records below.
  uint64_t change_clock() const { return change_clock_; }
  uint64_t Tick() { return ++change_clock_; }
  // When the entry or the header attributes last changed: what no computation's stamp shows.
  uint64_t header_changed_at() const { return header_changed_at_; }
  void NoteHeaderChange() { header_changed_at_ = Tick(); }
  // The clock when the last complete run of the pass `key` (its name and options) began, if
  // one was recorded (passes/change_tracking.h records them).
  std::optional<uint64_t> PassRunStart(std::string_view key) const;
  void RecordPassRun(std::string_view key, uint64_t started_at);
  bool has_pass_runs() const { return !pass_runs_.empty(); }
  // Off: every pass run on this module looks at everything, as if it had never seen it (the
  // pass fuzzer's reference runs; HLOGYM_NO_CHANGE_TRACKING=1 turns it off everywhere).
  bool change_tracking() const { return change_tracking_; }
  void set_change_tracking(bool on) { change_tracking_ = on; }
  // Forgets every record, so that the next run of each pass looks at everything.
  void ForgetPassRuns() { pass_runs_.clear(); }

  // A deep copy with the same names, order and attributes.
  std::unique_ptr<Module> Clone() const;

  // Ids and names unique in the module, for new instructions/computations.
  int64_t NextUniqueId() { return next_unique_id_++; }
  // `prefix` if unused, else prefix.N for the smallest free N; reserves it.
  std::string UniqueName(std::string_view prefix);
  // Marks a name as taken (the parser registers every name it reads).
  void ReserveName(std::string_view name) { used_names_.Insert(name); }
  // Moves the names taken so far into the part clones share (after parsing).
  void FreezeNames() { used_names_.Freeze(); }

 private:
  std::string name_;
  std::vector<std::unique_ptr<Computation>> computations_;
  Computation* entry_ = nullptr;
  // Copy-on-write: clones share these (entry_computation_layout alone can be
  // kilobytes).
  CopyOnWrite<std::vector<RawAttribute>> raw_attributes_{std::vector<RawAttribute>()};
  CopyOnWrite<std::string> trailer_{std::string()};
  int64_t next_unique_id_ = 0;
  int64_t next_creation_index_ = 0;  // Computation::creation_index
  NameSet used_names_;
  uint64_t change_clock_ = 0;
  uint64_t header_changed_at_ = 0;
  std::vector<std::pair<std::string, uint64_t>> pass_runs_;  // (key, run start); a few dozen
  bool change_tracking_ = true;
  // CallerCount's counts, valid while the change clock reads `clock`.
  struct CallerCounts {
    bool valid = false;
    uint64_t clock = 0;
    absl::flat_hash_map<const Computation*, int64_t> counts;
  };
  mutable CallerCounts caller_counts_;
};

}  // namespace hlogym

#endif  // HLOGYM_HLO_MODULE_H_
