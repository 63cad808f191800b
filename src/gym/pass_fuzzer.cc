#include "gym/pass_fuzzer.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <utility>

#include "absl/strings/str_cat.h"
#include "analysis/verifier.h"
#include "eval/equivalence.h"
#include "gym/benchmark.h"
#include "gym/environment.h"
#include "hlo/query.h"
#include "hlo/status_macros.h"
#include "passes/sharding/spmd_partitioner.h"
#include "text/printer.h"

namespace hlogym {
namespace {

struct Subject {
  Benchmark benchmark;
  bool low_precision = false;
  // Built on first use: evaluating every module up front would cost as much
  // as the fuzzing of the small ones.
  std::optional<EquivalenceReference> reference;
  // For a module compiled for several partitions, once a pass has split it:
  // the original split the same way, which the split modules are checked
  // against (per partition, as Environment::Validate checks them).
  std::unique_ptr<Module> partitioned;
  std::optional<EquivalenceReference> partitioned_reference;
  bool unusable = false;  // the evaluator cannot run it: skipped
};

// The reference `module` is checked against: the original's, or the split
// original's where `module` takes the split parameters (null where that one
// cannot be evaluated).
absl::StatusOr<const EquivalenceReference*> ReferenceFor(Subject& subject, const Module& module);

// What went wrong after the last pass of a sequence run by RunSequence.
struct Outcome {
  std::string kind;  // "" when every pass passed every check
  std::string message;
  size_t failed_at = 0;  // index of the failing pass
};

EquivalenceOptions FuzzEquivalenceOptions() {
  EquivalenceOptions options;
  options.evaluator.num_threads = 1;
  return WithPassHooks(std::move(options));
}

// Runs `passes` on a copy of the subject's module with every check after
// every pass; stops at the first failure. Adds to the run counters of `counts`.
Outcome RunSequence(const PassRegistry& registry, Subject& subject,
                    const std::vector<std::string>& passes, PassFuzzReport& counts) {
  const Module& original = subject.benchmark.initial->module();
  std::unique_ptr<Module> module = original.Clone();
  std::string text = PrintModule(*module);
  for (size_t i = 0; i < passes.size(); ++i) {
    const std::string& name = passes[i];
    if (subject.low_precision && ChangesNumericPrecision(name)) {
      ++counts.skipped_runs;
      continue;
    }
    auto fail = [&](std::string kind, std::string message) {
      return Outcome{std::move(kind), std::move(message), i};
    };
    absl::StatusOr<std::unique_ptr<Pass>> pass = registry.Create(name);
    if (!pass.ok()) return fail("pass error", std::string(pass.status().message()));
    // A pass that skips what it saw unchanged before (passes/change_tracking.h) must end where
    // a run that looks at everything does.
    std::unique_ptr<Module> untracked = module->Clone();
    untracked->set_change_tracking(false);
    // Run in full even where MayChange says there is nothing to do, to check that promise.
    const bool may_change = (*pass)->MayChange(*module);
    absl::StatusOr<bool> changed = (*pass)->Run(*module);
    ++counts.pass_runs;
    if (!changed.ok()) return fail("pass error", std::string(changed.status().message()));
    std::string after = PrintModule(*module);
    absl::StatusOr<std::unique_ptr<Pass>> fresh = registry.Create(name);
    if (!fresh.ok()) return fail("pass error", std::string(fresh.status().message()));
    absl::StatusOr<bool> untracked_changed = (*fresh)->Run(*untracked);
    if (!untracked_changed.ok()) {
      return fail("pass error", std::string(untracked_changed.status().message()));
    }
    if (PrintModule(*untracked) != after) {
      return fail("tracked run",
                  "skipping what it saw unchanged before, the pass gave another module than a run "
                  "with change tracking off");
    }
    const bool text_changed = after != text;
    if (!may_change && text_changed) {
      return fail("pre-check", "MayChange said the pass could not change the module, but it did");
    }
    if (*changed != text_changed) {
      return fail("changed flag", absl::StrCat("reported changed=", *changed, " but the module ",
                                               text_changed ? "changed" : "did not change"));
    }
    text = std::move(after);
    if (absl::Status verified = VerifyModule(*module); !verified.ok()) {
      return fail("verifier", std::string(verified.message()));
    }
    if (!text_changed) continue;
    ++counts.changed_runs;
    absl::StatusOr<const EquivalenceReference*> reference = ReferenceFor(subject, *module);
    if (!reference.ok()) return fail("evaluation", std::string(reference.status().message()));
    ++counts.equivalence_checks;
    if (*reference == nullptr) {
      ++counts.not_judged;
      continue;
    }
    absl::StatusOr<EquivalenceResult> same = (*reference)->Check(*module);
    if (!same.ok()) return fail("evaluation", std::string(same.status().message()));
    if (!same->judged) {
      ++counts.not_judged;
    } else if (!same->equivalent) {
      return fail("not equivalent", same->message);
    }
  }
  return Outcome{};
}

absl::StatusOr<const EquivalenceReference*> ReferenceFor(Subject& subject, const Module& module) {
  const Module& original = subject.benchmark.initial->module();
  if (SameEntrySignature(original, module)) return &*subject.reference;
  if (!subject.partitioned) {
    subject.partitioned = PartitionedToMatch(original, module);
    if (!subject.partitioned) return &*subject.reference;  // which then reports the shapes
    absl::StatusOr<EquivalenceReference> reference =
        EquivalenceReference::Make(*subject.partitioned, FuzzEquivalenceOptions());
    // A split module the evaluator cannot run (a collective its partitions'
    // lockstep run does not model, eval/partitions.h) is not judged.
    if (reference.ok()) subject.partitioned_reference = *std::move(reference);
  }
  if (SameEntrySignature(*subject.partitioned, module)) {
    return subject.partitioned_reference ? &*subject.partitioned_reference : nullptr;
  }
  return &*subject.reference;
}

// Greedily drops passes (all but the failing last one) while the sequence
// still fails the same way.
std::vector<std::string> Minimize(const PassRegistry& registry, Subject& subject,
                                  std::vector<std::string> passes, const std::string& kind) {
  PassFuzzReport ignored;
  for (size_t i = passes.size() - 1; i-- > 0;) {
    std::vector<std::string> shorter = passes;
    shorter.erase(shorter.begin() + static_cast<std::ptrdiff_t>(i));
    Outcome outcome = RunSequence(registry, subject, shorter, ignored);
    if (outcome.kind == kind && outcome.failed_at + 1 == shorter.size())
      passes = std::move(shorter);
  }
  return passes;
}

}  // namespace

absl::StatusOr<PassFuzzReport> FuzzPasses(
    const std::vector<std::string>& modules, const PassFuzzOptions& options,
    const std::function<void(const PassFuzzReport&)>& progress) {
  if (modules.empty()) return absl::InvalidArgumentError("fuzz-passes: no modules");
  if (options.min_length < 1 || options.max_length < options.min_length) {
    return absl::InvalidArgumentError(absl::StrCat("fuzz-passes: need 1 <= min length (",
                                                   options.min_length, ") <= max length (",
                                                   options.max_length, ")"));
  }
  const auto start = std::chrono::steady_clock::now();
  PassFuzzReport report;
  std::vector<Subject> subjects;
  for (const std::string& spec : modules) {
    absl::StatusOr<Benchmark> benchmark = LoadBenchmark(spec);
    if (!benchmark.ok()) {
      report.skipped_modules.push_back({spec, std::string(benchmark.status().message())});
      continue;
    }
    Subject subject;
    subject.low_precision = ComputesInLowPrecision(benchmark->initial->module());
    subject.benchmark = *std::move(benchmark);
    subjects.push_back(std::move(subject));
  }
  const PassRegistry& registry = options.registry ? *options.registry : PassRegistry::Builtin();
  std::vector<std::string> passes;
  for (const PassInfo& info : registry.passes()) passes.push_back(info.name);
  if (passes.empty()) return absl::InvalidArgumentError("fuzz-passes: the registry has no passes");

  // Sequence `index` draws its module from the ones that load, so that it can
  // be rerun alone; a module the evaluator cannot run is found on first use,
  // and the indices that draw it are passed over.
  const auto usable = [&] {
    return std::any_of(subjects.begin(), subjects.end(),
                       [](const Subject& s) { return !s.unusable; });
  };
  for (int64_t index = 0; report.sequences < options.sequences && !subjects.empty(); ++index) {
    const double elapsed =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (options.time_limit_seconds > 0 && elapsed > options.time_limit_seconds) break;
    // Each sequence has its own generator, so one can be rerun alone.
    std::mt19937_64 rng(options.seed * 0x9e3779b97f4a7c15ULL + static_cast<uint64_t>(index));
    Subject& subject = subjects[std::uniform_int_distribution<size_t>(0, subjects.size() - 1)(rng)];
    if (subject.unusable) continue;
    const int length =
        std::uniform_int_distribution<int>(options.min_length, options.max_length)(rng);
    std::vector<std::string> sequence;
    for (int i = 0; i < length; ++i) {
      sequence.push_back(passes[std::uniform_int_distribution<size_t>(0, passes.size() - 1)(rng)]);
    }
    if (!subject.reference.has_value()) {
      absl::StatusOr<EquivalenceReference> reference =
          EquivalenceReference::Make(subject.benchmark.initial->module(), FuzzEquivalenceOptions());
      if (!reference.ok()) {
        subject.unusable = true;
        report.skipped_modules.push_back(
            {subject.benchmark.spec,
             absl::StrCat("cannot be evaluated: ", reference.status().message())});
        if (!usable()) break;
        continue;
      }
      subject.reference = *std::move(reference);
      if (subject.reference->vacuous()) report.vacuous_modules.push_back(subject.benchmark.spec);
    }
    Outcome outcome = RunSequence(registry, subject, sequence, report);
    ++report.sequences;
    if (!outcome.kind.empty()) {
      PassFuzzFailure failure;
      failure.module = subject.benchmark.spec;
      failure.path = subject.benchmark.path;
      failure.sequence_index = index;
      failure.kind = outcome.kind;
      failure.message = outcome.message;
      failure.drawn.assign(sequence.begin(), sequence.begin() + outcome.failed_at + 1);
      failure.passes = options.minimize ? Minimize(registry, subject, failure.drawn, outcome.kind)
                                        : failure.drawn;
      report.failures.push_back(std::move(failure));
    }
    report.seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (progress) progress(report);
  }
  report.modules =
      std::count_if(subjects.begin(), subjects.end(), [](const Subject& s) { return !s.unusable; });
  if (report.modules == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("fuzz-passes: no module could be fuzzed (", report.skipped_modules.size(),
                     " skipped; the first: ", report.skipped_modules.front().module, ": ",
                     report.skipped_modules.front().reason, ")"));
  }
  report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return report;
}

}  // namespace hlogym
