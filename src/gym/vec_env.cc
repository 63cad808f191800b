#include "gym/vec_env.h"

#include <algorithm>
#include <chrono>

#include "absl/strings/str_cat.h"
#include "hlo/status_macros.h"

namespace hlogym {

namespace {
// How long an idle worker, or a caller waiting for workers, keeps looking
// before it sleeps: longer than most steps, short enough that a core is not
// held long from the caller's own work between loops (a policy's update).
constexpr auto kSpin = std::chrono::microseconds(200);

// Spins (yielding the core to any other runnable thread) until `ready()` or
// kSpin has passed; returns ready().
template <typename Ready>
bool SpinUntil(Ready ready) {
  const auto deadline = std::chrono::steady_clock::now() + kSpin;
  while (!ready()) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::yield();
  }
  return true;
}
}  // namespace

ThreadPool::ThreadPool(int num_threads) {
  for (int i = 1; i < num_threads; ++i) workers_.emplace_back([this] { Work(); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  wake_.notify_all();
  for (std::thread& t : workers_) t.join();
}

void ThreadPool::RunClaims(uint64_t generation) {
  uint64_t state = state_.load(std::memory_order_acquire);
  while (Generation(state) == generation && Index(state) < Size(state)) {
    if (!state_.compare_exchange_weak(state, state + 1, std::memory_order_acq_rel)) continue;
    // The claimed index keeps pending_ above zero, so fn_ stays this loop's until it is done.
    (*fn_)(Index(state));
    Finish();
    state = state_.load(std::memory_order_acquire);
  }
}

void ThreadPool::Finish() {
  if (pending_.fetch_sub(1) == 1 && caller_sleeping_.load()) {
    { std::lock_guard<std::mutex> lock(mu_); }  // the caller is asleep or sees pending_ == 0
    done_.notify_one();
  }
}

void ThreadPool::Work() {
  uint64_t seen = 0;
  while (true) {
    auto fresh = [&] { return stop_.load() || Generation(state_.load()) != seen; };
    if (!SpinUntil(fresh)) {
      std::unique_lock<std::mutex> lock(mu_);
      sleeping_workers_.fetch_add(1);
      wake_.wait(lock, fresh);
      sleeping_workers_.fetch_sub(1);
    }
    if (stop_.load()) return;
    seen = Generation(state_.load(std::memory_order_acquire));
    RunClaims(seen);
  }
}

void ThreadPool::ParallelFor(int n, const std::function<void(int)>& fn) {
  if (workers_.empty() || n <= 1) {
    for (int i = 0; i < n; ++i) fn(i);
    return;
  }
  for (int begin = 0; begin < n; begin += kMaxLoop) {  // the state word holds 16-bit indices
    const int size = std::min(kMaxLoop, n - begin);
    const std::function<void(int)> shifted = [&](int i) { fn(begin + i); };
    fn_ = begin == 0 && size == n ? &fn : &shifted;
    pending_.store(size);
    const uint64_t generation = Generation(state_.load()) + 1;
    state_.store(generation << 32 | static_cast<uint64_t>(size) << 16);
    if (sleeping_workers_.load() > 0) {
      { std::lock_guard<std::mutex> lock(mu_); }  // each sleeper is asleep or sees the loop
      wake_.notify_all();
    }
    RunClaims(generation);
    if (!SpinUntil([&] { return pending_.load() == 0; })) {
      std::unique_lock<std::mutex> lock(mu_);
      caller_sleeping_.store(true);
      done_.wait(lock, [&] { return pending_.load() == 0; });
      caller_sleeping_.store(false);
    }
  }
}

absl::StatusOr<std::unique_ptr<VecEnvironment>> VecEnvironment::Create(
    int num_envs, int num_threads, EnvOptions options, const PassRegistry& registry,
    std::shared_ptr<StepCache> cache) {
  if (num_envs < 1) return absl::InvalidArgumentError("num_envs must be at least 1");
  if (options.use_cache && !cache) {
    cache = std::make_shared<StepCache>(options.cache_max_instructions);
  }
  auto vec = std::unique_ptr<VecEnvironment>(new VecEnvironment());
  for (int i = 0; i < num_envs; ++i) {
    HLOGYM_ASSIGN(env, Environment::Create(options, registry, cache));
    vec->envs_.push_back(std::move(env));
  }
  vec->pool_ = std::make_unique<ThreadPool>(std::max(1, std::min(num_threads, num_envs)));
  return vec;
}

std::vector<absl::StatusOr<Observation>> VecEnvironment::Reset(
    const std::vector<std::string>& benchmarks) {
  std::vector<absl::StatusOr<Observation>> results(envs_.size(),
                                                   absl::InvalidArgumentError("not reset"));
  if (benchmarks.size() != 1 && benchmarks.size() != envs_.size()) {
    for (auto& r : results) {
      r = absl::InvalidArgumentError(
          absl::StrCat("got ", benchmarks.size(), " benchmarks for ", envs_.size(), " envs"));
    }
    return results;
  }
  pool_->ParallelFor(num_envs(), [&](int i) {
    results[i] = envs_[i]->Reset(benchmarks.size() == 1 ? benchmarks[0] : benchmarks[i]);
  });
  return results;
}

std::vector<absl::StatusOr<StepResult>> VecEnvironment::Step(const std::vector<int>& actions) {
  std::vector<absl::StatusOr<StepResult>> results(envs_.size(),
                                                  absl::InvalidArgumentError("not stepped"));
  if (actions.size() != envs_.size()) {
    for (auto& r : results) {
      r = absl::InvalidArgumentError(
          absl::StrCat("got ", actions.size(), " actions for ", envs_.size(), " envs"));
    }
    return results;
  }
  pool_->ParallelFor(num_envs(), [&](int i) { results[i] = envs_[i]->Step(actions[i]); });
  return results;
}

}  // namespace hlogym
