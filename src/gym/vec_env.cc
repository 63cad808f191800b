#include "gym/vec_env.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace hlogym {

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

void ThreadPool::Work() {
  uint64_t seen = 0;
  std::unique_lock<std::mutex> lock(mu_);
  while (true) {
    wake_.wait(lock, [&] { return stop_ || generation_ != seen; });
    if (stop_) return;
    seen = generation_;
    while (next_ < n_) {
      int i = next_++;
      ++running_;
      const auto* fn = fn_;
      lock.unlock();
      (*fn)(i);
      lock.lock();
      --running_;
    }
    if (running_ == 0) done_.notify_all();
  }
}

void ThreadPool::ParallelFor(int n, const std::function<void(int)>& fn) {
  if (workers_.empty() || n <= 1) {
    for (int i = 0; i < n; ++i) fn(i);
    return;
  }
  std::unique_lock<std::mutex> lock(mu_);
  fn_ = &fn;
  n_ = n;
  next_ = 0;
  ++generation_;
  wake_.notify_all();
  while (next_ < n_) {
    int i = next_++;
    ++running_;
    lock.unlock();
    fn(i);
    lock.lock();
    --running_;
  }
  done_.wait(lock, [&] { return running_ == 0 && next_ >= n_; });
  fn_ = nullptr;
  n_ = 0;
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
    absl::StatusOr<std::unique_ptr<Environment>> env =
        Environment::Create(options, registry, cache);
    if (!env.ok()) return env.status();
    vec->envs_.push_back(std::move(*env));
  }
  vec->pool_ = std::make_unique<ThreadPool>(std::max(1, std::min(num_threads, num_envs)));
  return vec;
}

std::vector<absl::StatusOr<Observation>> VecEnvironment::Reset(
    const std::vector<std::string>& benchmarks) {
  std::vector<absl::StatusOr<Observation>> results(
      envs_.size(), absl::InvalidArgumentError("not reset"));
  if (benchmarks.size() != 1 && benchmarks.size() != envs_.size()) {
    for (auto& r : results) {
      r = absl::InvalidArgumentError(absl::StrCat("got ", benchmarks.size(),
                                                  " benchmarks for ", envs_.size(), " envs"));
    }
    return results;
  }
  pool_->ParallelFor(num_envs(), [&](int i) {
    results[i] = envs_[i]->Reset(benchmarks.size() == 1 ? benchmarks[0] : benchmarks[i]);
  });
  return results;
}

std::vector<absl::StatusOr<StepResult>> VecEnvironment::Step(const std::vector<int>& actions) {
  std::vector<absl::StatusOr<StepResult>> results(
      envs_.size(), absl::InvalidArgumentError("not stepped"));
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
