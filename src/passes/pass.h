// The pass interface: a named module-to-module rewrite that says whether it
// changed anything. Passes see only src/hlo, src/analysis and src/eval.
#ifndef HLOGYM_PASSES_PASS_H_
#define HLOGYM_PASSES_PASS_H_

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "hlo/module.h"

namespace hlogym {

class Pass {
 public:
  virtual ~Pass() = default;
  // The pass's name exactly as XLA spells it ("algsimp", "cse", "dce", ...).
  virtual std::string_view name() const = 0;
  // Runs the pass. Returns true exactly when the module changed. On error the
  // module may be partly rewritten; callers that must keep it run on a clone.
  virtual absl::StatusOr<bool> Run(Module& module) = 0;
  // A cheap look before the run, as XLA's passes look for the instructions
  // they rewrite before they start: false promises that Run would change
  // nothing (and return false), so RunPass skips it and the gym skips the
  // step's clone. Usually ContainsOpcode (hlo/query.h) with the opcodes the
  // pass rewrites. The default promises nothing.
  virtual bool MayChange(const Module& module) const { return true; }
};

// Runs `pass` unless pass.MayChange(module) is false (then: false, untouched).
absl::StatusOr<bool> RunPass(Pass& pass, Module& module);

// While alive, records the time of every pass RunPass runs on this thread (pre-check included),
// as XLA's pass log gives each pass's time; `hlogym opt --time-passes` prints it. Pipelines and
// fixed-point loops have no entry of their own: the passes inside them do. It also keeps each
// run that changed the module, in order, with the op count after it: the trajectory that a
// module's XLA reference lists (`hlogym opt --trace-passes`), to find where the two part.
class PassTimer {
 public:
  struct Entry {
    std::string name;
    int64_t runs = 0;
    int64_t skipped = 0;  // runs that MayChange ruled out
    int64_t changed = 0;  // runs that changed the module
    double seconds = 0;
  };
  PassTimer();
  ~PassTimer();
  PassTimer(const PassTimer&) = delete;
  PassTimer& operator=(const PassTimer&) = delete;

  struct Change {
    std::string name;
    int64_t op_count = 0;  // the module's, after the pass
  };

  // One entry per pass name, in the order the passes first ran.
  const std::vector<Entry>& entries() const { return entries_; }
  // Every run that changed the module, in order.
  const std::vector<Change>& changes() const { return changes_; }
  double total_seconds() const;
  // Called with the module after every run that changed it (`hlogym opt --dump-to` writes
  // each, as XLA's --xla_dump_hlo_pass_re does).
  void set_after_change(std::function<void(std::string_view pass, const Module&)> callback) {
    after_change_ = std::move(callback);
  }

 private:
  friend absl::StatusOr<bool> RunPass(Pass& pass, Module& module);
  void Record(std::string_view name, bool skipped, bool changed, double seconds);

  std::vector<Entry> entries_;
  std::vector<Change> changes_;
  std::function<void(std::string_view, const Module&)> after_change_;
  PassTimer* outer_;  // the timer this one hides while alive
};

// While alive, the op count a module may reach while a pass on this thread builds it: the gym
// sets its growth limit (EnvOptions::max_op_count_growth) around each step, so that a pass that
// can multiply a module stops at the limit with an error instead of building all of a result the
// gym would refuse (while_loop_unroller on nested loops: 892 instructions to 338,326 in 6 s).
// Such passes call CheckOpCountLimit as they grow the module. Nested limits: the innermost counts.
class OpCountLimit {
 public:
  explicit OpCountLimit(int64_t max_op_count);
  ~OpCountLimit();
  OpCountLimit(const OpCountLimit&) = delete;
  OpCountLimit& operator=(const OpCountLimit&) = delete;
  // Whether a pass stopped at this limit (CheckOpCountLimit failed).
  bool reached() const { return reached_; }

 private:
  friend absl::Status CheckOpCountLimit(const Module& module, std::string_view pass);
  int64_t max_op_count_;
  bool reached_ = false;
  OpCountLimit* outer_;
};

// ResourceExhausted, naming `pass`, once the module's op count is past the live OpCountLimit;
// OK where none is alive.
absl::Status CheckOpCountLimit(const Module& module, std::string_view pass);

// Runs `passes` in order; changed if any of them changed the module.
class PassPipeline : public Pass {
 public:
  PassPipeline(std::string name, std::vector<std::unique_ptr<Pass>> passes)
      : name_(std::move(name)), passes_(std::move(passes)) {}
  std::string_view name() const override { return name_; }
  absl::StatusOr<bool> Run(Module& module) override;
  bool MayChange(const Module& module) const override;
  const std::vector<std::unique_ptr<Pass>>& passes() const { return passes_; }
  // Which modules it runs on, where not every one ("" for all), for
  // `hlogym opt --explain`.
  virtual std::string_view runs_on() const { return ""; }

 private:
  std::string name_;
  std::vector<std::unique_ptr<Pass>> passes_;
};

// XLA's HloPassFix: reruns `inner` until it reports no change, at most
// `max_iterations` times (XLA's default limit is 25).
class FixedPointPass : public Pass {
 public:
  static constexpr int kDefaultMaxIterations = 25;
  explicit FixedPointPass(std::unique_ptr<Pass> inner, int max_iterations = kDefaultMaxIterations)
      : inner_(std::move(inner)), max_iterations_(max_iterations) {}
  std::string_view name() const override { return inner_->name(); }
  absl::StatusOr<bool> Run(Module& module) override;
  bool MayChange(const Module& module) const override { return inner_->MayChange(module); }
  const Pass& inner() const { return *inner_; }

 private:
  std::unique_ptr<Pass> inner_;
  int max_iterations_;
};

}  // namespace hlogym

#endif  // HLOGYM_PASSES_PASS_H_
