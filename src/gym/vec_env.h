// VecEnvironment: N environments stepped together on a pool of std::threads,
// sharing one StepCache. Each environment has its own pass instances, so the
// passes run concurrently without sharing mutable state.
#ifndef HLOGYM_GYM_VEC_ENV_H_
#define HLOGYM_GYM_VEC_ENV_H_

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "gym/environment.h"

namespace hlogym {

// A fixed pool of worker threads running index-parallel loops. Gym steps take
// microseconds, less than waking a sleeping thread (a futex and, in a VM, an
// inter-processor interrupt), so idle workers and the waiting caller spin a
// little (yielding) before they sleep, and indices are claimed without a lock.
class ThreadPool {
 public:
  explicit ThreadPool(int num_threads);
  ~ThreadPool();
  int num_threads() const { return static_cast<int>(workers_.size()) + 1; }
  // Calls fn(i) for i in [0, n), spread over the workers and the calling
  // thread; returns when all calls are done. One caller at a time.
  void ParallelFor(int n, const std::function<void(int)>& fn);

 private:
  // The loop's generation, size and next unclaimed index, in one word so that
  // a claim (compare-and-swap) can never take an index of a later loop.
  static constexpr uint64_t kFieldMask = 0xFFFF;
  static constexpr int kMaxLoop = static_cast<int>(kFieldMask);
  static uint64_t Generation(uint64_t state) { return state >> 32; }
  static int Size(uint64_t state) { return static_cast<int>((state >> 16) & kFieldMask); }
  static int Index(uint64_t state) { return static_cast<int>(state & kFieldMask); }

  void Work();
  // Claims and runs indices of loop `generation` until none is left.
  void RunClaims(uint64_t generation);
  void Finish();  // one index done; wakes the caller after the last one

  std::vector<std::thread> workers_;
  std::atomic<uint64_t> state_{0};
  std::atomic<int> pending_{0};  // indices of the current loop not yet done
  const std::function<void(int)>* fn_ = nullptr;
  // Sleepers, so that the fast paths take no lock when nobody sleeps.
  std::atomic<int> sleeping_workers_{0};
  std::atomic<bool> caller_sleeping_{false};
  std::atomic<bool> stop_{false};
  std::mutex mu_;
  std::condition_variable wake_, done_;
};

class VecEnvironment {
 public:
  // `num_envs` copies made with `options`; `num_threads` <= 1 steps serially.
  static absl::StatusOr<std::unique_ptr<VecEnvironment>> Create(
      int num_envs, int num_threads, EnvOptions options,
      const PassRegistry& registry = PassRegistry::Builtin(),
      std::shared_ptr<StepCache> cache = nullptr);

  VecEnvironment(const VecEnvironment&) = delete;
  VecEnvironment& operator=(const VecEnvironment&) = delete;

  int num_envs() const { return static_cast<int>(envs_.size()); }
  Environment& env(int i) { return *envs_[i]; }

  // One benchmark per environment (or one for all when the list has one entry).
  std::vector<absl::StatusOr<Observation>> Reset(const std::vector<std::string>& benchmarks);
  // One action per environment.
  std::vector<absl::StatusOr<StepResult>> Step(const std::vector<int>& actions);
  // Calls fn(i) for every environment i on the pool, as Reset and Step do
  // (for callers that do more per environment, such as a trainer's automatic
  // resets); fn(i) may touch environment i alone of the shared state.
  void ParallelForEach(const std::function<void(int)>& fn) { pool_->ParallelFor(num_envs(), fn); }

 private:
  VecEnvironment() = default;
  std::vector<std::unique_ptr<Environment>> envs_;
  std::unique_ptr<ThreadPool> pool_;
};

}  // namespace hlogym

#endif  // HLOGYM_GYM_VEC_ENV_H_
