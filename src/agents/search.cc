#include "agents/search.h"

#include <algorithm>
#include <map>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"

namespace hlogym {
namespace {

// A registry holding one pseudo-pass, the named pipeline, so that the default
// pipeline runs as one step of an ordinary environment (and its record
// replays and validates like any other). One per pipeline name, never freed.
const PassRegistry& PipelineRegistry(const std::string& pipeline) {
  static std::mutex mu;
  static auto* registries = new std::map<std::string, std::unique_ptr<PassRegistry>>();
  std::lock_guard<std::mutex> lock(mu);
  std::unique_ptr<PassRegistry>& registry = (*registries)[pipeline];
  if (!registry) {
    registry = std::make_unique<PassRegistry>();
    if (CreatePipeline(pipeline).ok()) {
      registry->Register({pipeline, "the named pipeline as one action",
                          [pipeline] { return *CreatePipeline(pipeline); }});
    }
  }
  return *registry;
}

}  // namespace

// ---------------------------------------------------------------------------
// default

DefaultPipelineAgent::DefaultPipelineAgent(AgentOptions options, std::string pipeline)
    : Agent(std::move(options)) {
  options_.registry = &PipelineRegistry(pipeline);
  options_.env.actions = {pipeline};
}

absl::StatusOr<SearchResult> DefaultPipelineAgent::Optimize(std::string_view benchmark,
                                                            const SearchBudget&) {
  return Agent::Optimize(benchmark, SearchBudget{});  // the reference ignores budgets
}

absl::Status DefaultPipelineAgent::Search(SearchContext& ctx) {
  std::unique_ptr<Environment> env = ctx.root().Fork();
  StepInfo info;
  if (!ctx.Step(*env, 0, &info)) return absl::InternalError("the pipeline step was refused");
  if (!info.error.empty()) return absl::InternalError(info.error);
  ctx.SetResult(std::move(env));
  return absl::OkStatus();
}

// ---------------------------------------------------------------------------
// random

absl::Status RandomSearchAgent::Search(SearchContext& ctx) {
  const int length = std::max(1, options_.trajectory_length);
  std::uniform_int_distribution<int> pick(0, ctx.num_actions() - 1);
  while (!ctx.exhausted()) {
    std::unique_ptr<Environment> env = ctx.ForkStart();
    for (int i = 0; i < length; ++i) {
      if (!ctx.Step(*env, pick(ctx.rng()))) break;
    }
  }
  return absl::OkStatus();
}

// ---------------------------------------------------------------------------
// greedy

absl::Status GreedySearchAgent::Search(SearchContext& ctx) {
  std::unique_ptr<Environment> current = ctx.ForkStart();
  absl::flat_hash_set<Fingerprint> visited = {FingerprintOf(*current)};
  // A move improves only when it reaches a new lowest op count on this path:
  // counting against the previous step instead lets a cycle that grows the
  // module and shrinks it a little less (topk-decomposer-all, topk-rewriter,
  // dce: +3 per round) reset the counter forever.
  int64_t lowest = current->op_count();
  int non_improving = 0;
  while (!ctx.exhausted()) {
    std::unique_ptr<Environment> best;
    for (int a = 0; a < ctx.num_actions(); ++a) {
      std::unique_ptr<Environment> child = current->Fork();
      StepInfo info;
      if (!ctx.Step(*child, a, &info)) break;
      if (!info.changed || visited.contains(FingerprintOf(*child))) continue;
      if (!best || child->op_count() < best->op_count()) best = std::move(child);
    }
    if (!best) break;  // no pass changes anything new (or the budget ran out)
    if (best->op_count() < lowest) {
      lowest = best->op_count();
      non_improving = 0;
    } else if (++non_improving > options_.greedy_non_improving_moves) {
      break;
    }
    visited.insert(FingerprintOf(*best));
    current = std::move(best);
  }
  return absl::OkStatus();
}

// ---------------------------------------------------------------------------
// beam

absl::Status BeamSearchAgent::Search(SearchContext& ctx) {
  const int width = std::max(1, options_.beam_width);
  std::vector<std::unique_ptr<Environment>> beam;
  beam.push_back(ctx.ForkStart());
  absl::flat_hash_set<Fingerprint> visited = {FingerprintOf(*beam.front())};
  for (int depth = 0; depth < options_.beam_depth && !ctx.exhausted(); ++depth) {
    std::vector<std::unique_ptr<Environment>> children;
    for (const auto& parent : beam) {
      for (int a = 0; a < ctx.num_actions(); ++a) {
        std::unique_ptr<Environment> child = parent->Fork();
        StepInfo info;
        if (!ctx.Step(*child, a, &info)) break;
        if (!info.changed || !visited.insert(FingerprintOf(*child)).second) continue;
        children.push_back(std::move(child));
      }
    }
    if (children.empty()) break;
    std::stable_sort(children.begin(), children.end(),
                     [](const auto& x, const auto& y) { return x->op_count() < y->op_count(); });
    if (static_cast<int>(children.size()) > width) children.resize(width);
    beam = std::move(children);
  }
  return absl::OkStatus();
}

// ---------------------------------------------------------------------------
// evolutionary

namespace {

struct Individual {
  std::vector<int> genes;
  int64_t fitness = 0;
};

}  // namespace

absl::Status EvolutionarySearchAgent::Search(SearchContext& ctx) {
  const int length = std::max(1, options_.trajectory_length);
  const int population_size = std::max(2, options_.population);
  const int elite = std::clamp(options_.elite, 0, population_size - 1);
  const int tournament = std::max(1, options_.tournament);
  const double mutation_rate = options_.mutation_rate >= 0 ? options_.mutation_rate : 1.0 / length;
  std::mt19937_64& rng = ctx.rng();
  std::uniform_int_distribution<int> pick_action(0, ctx.num_actions() - 1);
  std::uniform_real_distribution<double> coin(0.0, 1.0);
  std::map<std::vector<int>, int64_t> evaluated;

  // Fitness of a sequence; false when the budget ran out before it finished.
  auto evaluate = [&](Individual& individual) {
    auto it = evaluated.find(individual.genes);
    if (it != evaluated.end()) {
      individual.fitness = it->second;
      return true;
    }
    std::unique_ptr<Environment> env = ctx.ForkStart();
    for (int gene : individual.genes) {
      if (!ctx.Step(*env, gene)) return false;
    }
    individual.fitness = env->op_count();
    evaluated.emplace(individual.genes, individual.fitness);
    return true;
  };
  auto random_individual = [&] {
    Individual individual;
    for (int i = 0; i < length; ++i) individual.genes.push_back(pick_action(rng));
    return individual;
  };
  auto by_fitness = [](const Individual& x, const Individual& y) { return x.fitness < y.fitness; };

  std::vector<Individual> population;
  while (static_cast<int>(population.size()) < population_size) {
    Individual individual = random_individual();
    if (!evaluate(individual)) return absl::OkStatus();
    population.push_back(std::move(individual));
  }
  std::uniform_int_distribution<int> pick_member(0, population_size - 1);
  auto select = [&]() -> const Individual& {
    int best = pick_member(rng);
    for (int i = 1; i < tournament; ++i) {
      int other = pick_member(rng);
      if (population[other].fitness < population[best].fitness) best = other;
    }
    return population[best];
  };
  std::uniform_int_distribution<int> pick_cut(1, std::max(1, length - 1));
  int64_t stale = 0;  // children that were not new
  while (!ctx.exhausted() && stale < 1000 * int64_t{population_size}) {
    std::stable_sort(population.begin(), population.end(), by_fitness);
    std::vector<Individual> next(population.begin(), population.begin() + elite);
    while (static_cast<int>(next.size()) < population_size) {
      Individual child = select();
      if (length > 1 && coin(rng) < options_.crossover_rate) {
        const Individual& other = select();
        int cut = pick_cut(rng);
        std::copy(other.genes.begin() + cut, other.genes.end(), child.genes.begin() + cut);
      }
      for (int& gene : child.genes) {
        if (coin(rng) < mutation_rate) gene = pick_action(rng);
      }
      // Prefer a sequence not evaluated yet: a converged population would
      // otherwise spin without spending its budget.
      std::uniform_int_distribution<int> pick_gene(0, length - 1);
      for (int tries = 0; tries < 16 && evaluated.contains(child.genes); ++tries) {
        child.genes[pick_gene(rng)] = pick_action(rng);
      }
      if (evaluated.contains(child.genes)) ++stale;
      if (!evaluate(child)) return absl::OkStatus();
      next.push_back(std::move(child));
    }
    population = std::move(next);
  }
  return absl::OkStatus();
}

}  // namespace hlogym
