// train: deep RL on the gym (agents/rl, loaded as a plugin: cli/rl_plugin.h).
//   hlogym train --algo ppo|a2c|trpo|dqn [--suite S...] [--split train]
//                [--steps N] --out DIR [--shaping] [--value-cost] [--masking]
//                [--network mlp|gnn] [--hidden 2048,2048] [--envs N] [--threads N] [--seed N] ...
// Training into a DIR that holds a checkpoint resumes it. The learning curve
// is DIR/curve.csv; DIR/curve.png is drawn from it by python/hlogym/plot.py
// when the project's venv is there. The trained policy is DIR/policy.{pt,json}:
// evaluate it with `hlogym eval --agent policy:DIR`. Two learners need no
// LibTorch: --algo auto (the auto agent's prior, DIR/prior.json) and --algo
// coreset (DIR/coreset.json, agents/coreset_agent.h).
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "agents/auto_agent.h"
#include "agents/coreset_agent.h"
#include "agents/evaluation.h"
#include "agents/rl/rl.h"
#include "cli/commands.h"
#include "cli/rl_plugin.h"
#include "gym/benchmark.h"
#include "passes/registry.h"
#include "text/file_io.h"

namespace hlogym::cli {
namespace {

struct TrainCommandOptions {
  rl::TrainOptions train;
  std::vector<std::string> suite = {"gpt2"};
  std::string split = "train";
  std::string dataset_split;  // --split as given (dataset folders take it only then)
  std::string hidden;
  std::string passes;
  std::string sequences;  // a coreset model whose sequences become actions
  bool quiet = false;
  bool no_plot = false;
  int64_t auto_steps_per_graph = 3000;  // --algo auto
  CoresetTrainOptions coreset;          // --algo coreset
};

std::string FormatEta(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0) return "?";
  int s = static_cast<int>(seconds);
  return absl::StrFormat("%d:%02d:%02d", s / 3600, (s / 60) % 60, s % 60);
}

// Draws DIR/curve.png with matplotlib, with the environment's python
// (EnvironmentPython); a missing Python or plotting error is a warning, never a
// failed training run. In a checkout it runs python/hlogym/plot.py as a file (no
// C++ extension needed); an installed hlogym runs hlogym.plot.
void PlotCurve(const std::string& dir) {
  const std::string python = EnvironmentPython();
  const std::string plot_file = DataRoot() + "/python/hlogym/plot.py";
  std::error_code ec;
  const std::string script = std::filesystem::is_regular_file(plot_file, ec)
                                 ? absl::StrCat("'", plot_file, "'")
                                 : std::string("-m hlogym.plot");
  if (python.empty() || access(python.c_str(), X_OK) != 0) {
    std::cerr << "train: no Python with hlogym found; skipping curve.png (run scripts/setup.sh)\n";
    return;
  }
  const std::string command = absl::StrFormat(
      "'%s' %s '%s/curve.csv' -o '%s/curve.png' >/dev/null 2>&1", python, script, dir, dir);
  if (std::system(command.c_str()) != 0) {
    std::cerr << "train: could not draw " << dir << "/curve.png (hlogym's plot.py failed)\n";
  }
}

// --algo auto: learns the auto agent's prior (agents/auto_agent.h) and writes
// DIR/prior.json; no LibTorch involved.
int RunTrainAuto(const TrainCommandOptions& o, const std::vector<std::string>& specs) {
  const bool quiet = o.quiet;
  auto progress = [quiet](int index, int total, const SearchResult& r) {
    if (quiet) return;
    std::cerr << absl::StrFormat("[%d/%d] %s: I=%d R=%d, %d steps, %.1fs\n", index + 1, total,
                                 r.benchmark, r.initial_op_count, r.op_count, r.steps, r.seconds);
  };
  const auto start = std::chrono::steady_clock::now();
  absl::StatusOr<AutoPrior> prior =
      TrainAutoPrior(specs, o.auto_steps_per_graph, o.train.seed, progress);
  if (!prior.ok()) return ReportError(prior.status());
  prior->trained_on = {absl::StrCat("suite ", absl::StrJoin(o.suite, ","), ", split ",
                                    o.split.empty() ? "both" : o.split)};
  prior->command = absl::StrFormat(
      "hlogym train --algo auto --suite %s --split %s --steps-per-graph %d --seed %d --out DIR",
      absl::StrJoin(o.suite, " "), o.split, o.auto_steps_per_graph, o.train.seed);
  std::error_code ec;
  std::filesystem::create_directories(o.train.out_dir, ec);
  const std::string file = (std::filesystem::path(o.train.out_dir) / "prior.json").string();
  if (absl::Status written = WriteTextFileAtomically(file, prior->ToJson() + "\n"); !written.ok()) {
    return ReportError(written);
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::cout << absl::StrFormat("trained auto on %d benchmarks in %.1f s: %d actions; prior in %s\n",
                               specs.size(), seconds, prior->actions.size(), file);
  std::cout << "evaluate it with: hlogym eval --agent auto:" << o.train.out_dir
            << " --split heldout\n";
  return kExitOk;
}

// --algo coreset: picks the coreset and writes its value predictor's data to
// DIR/coreset.json (agents/coreset_agent.h); no LibTorch involved.
int RunTrainCoreset(TrainCommandOptions& o, const std::vector<std::string>& specs) {
  const bool quiet = o.quiet;
  const bool tty = isatty(STDERR_FILENO);
  auto progress = [quiet, tty](const CoresetTrainProgress& p) {
    if (quiet) return;
    std::cerr << (tty ? "\r" : "")
              << absl::StrFormat("%s: %d/%d benchmarks", p.phase, p.done, p.total)
              << (tty && p.done < p.total ? "" : "\n") << std::flush;
  };
  const auto start = std::chrono::steady_clock::now();
  o.coreset.seed = o.train.seed;
  o.coreset.threads = o.train.num_threads;
  absl::StatusOr<CoresetModel> model = TrainCoreset(specs, o.coreset, progress);
  if (!model.ok()) return ReportError(model.status());
  model->trained_on = {absl::StrCat("suite ", absl::StrJoin(o.suite, ","), ", split ",
                                    o.split.empty() ? "both" : o.split)};
  model->command = absl::StrFormat(
      "hlogym train --algo coreset --suite %s --split %s --coreset-size %d --neighbors %s "
      "--candidates %d%s --graph-fraction %g --seed %d --out DIR",
      absl::StrJoin(o.suite, " "), o.split, o.coreset.coreset_size,
      absl::StrJoin(o.coreset.neighbors, ","), o.coreset.max_candidates,
      o.coreset.greedy_paths ? " --greedy-paths" : "", o.coreset.graph_fraction, o.train.seed);
  std::error_code ec;
  std::filesystem::create_directories(o.train.out_dir, ec);
  const std::string file = (std::filesystem::path(o.train.out_dir) / "coreset.json").string();
  if (absl::Status written = WriteTextFileAtomically(file, model->ToJson() + "\n"); !written.ok()) {
    return ReportError(written);
  }
  std::cout << absl::StrFormat(
      "trained coreset on %d benchmarks in %.1f s: %d sequences picked from %d candidates, %d "
      "neighbours; model in %s\n",
      model->graphs.size(), SecondsSince(start), model->sequences.size(), model->candidates,
      model->neighbors, file);
  std::cout << "evaluate it with: hlogym eval --agent coreset:" << o.train.out_dir
            << " --split heldout\n";
  return kExitOk;
}

int RunTrain(TrainCommandOptions& o) {
  absl::StatusOr<std::vector<std::string>> specs = ResolveSuite(o.suite, o.split, o.dataset_split);
  if (!specs.ok()) return ReportError(specs.status());
  if (o.train.algo == "auto") return RunTrainAuto(o, *specs);
  if (o.train.algo == "coreset") return RunTrainCoreset(o, *specs);
  rl::TrainOptions& t = o.train;
  t.benchmarks = *specs;
  if (!o.hidden.empty()) {
    t.hidden.clear();
    for (absl::string_view h : absl::StrSplit(o.hidden, ',', absl::SkipEmpty())) {
      int width = 0;
      if (!absl::SimpleAtoi(h, &width) || width < 1) {
        return ReportError(absl::InvalidArgumentError(
            absl::StrCat("--hidden: bad layer size '", std::string(h), "'")));
      }
      t.hidden.push_back(width);
    }
  }
  if (!o.sequences.empty()) {
    // The coreset's sequences, each one action, first.
    absl::StatusOr<CoresetModel> coreset = CoresetModel::Load(
        o.sequences == "coreset" ? DefaultCoresetPath() : LocatePolicy(o.sequences));
    if (!coreset.ok()) {
      return ReportError(absl::Status(
          coreset.status().code(),
          absl::StrCat("--sequences ", o.sequences, ": ", coreset.status().message())));
    }
    for (const std::vector<std::string>& sequence : coreset->sequences) {
      t.env.actions.push_back(SequenceName(sequence));
    }
  }
  for (absl::string_view p : absl::StrSplit(o.passes, ',', absl::SkipEmpty()))
    t.env.actions.emplace_back(p);
  if (o.passes.empty() && !o.sequences.empty()) {
    for (std::string& action : AutoActionSpace(/*allow_excess_precision=*/false))
      t.env.actions.push_back(std::move(action));
  }

  const bool tty = isatty(STDERR_FILENO);
  if (!o.quiet) {
    std::cerr << absl::StrFormat("train: %s on %d benchmarks, %d steps, into %s\n", t.algo,
                                 t.benchmarks.size(), t.total_steps, t.out_dir);
    t.progress = [tty](const rl::TrainProgress& p) {
      // Runs end on a whole update, so the last one may pass the target.
      const double fraction =
          std::min(1.0, static_cast<double>(p.steps) / std::max<int64_t>(1, p.total_steps));
      const int filled = static_cast<int>(fraction * 30);
      const double eta =
          p.steps_per_second > 0 ? (p.total_steps - p.steps) / p.steps_per_second : NAN;
      std::string line = absl::StrFormat(
          "[%s%s] %3.0f%% %d/%d steps, %d episodes, ratio %.3f, return %.3f, %.0f steps/s, cache "
          "%.0f%%, ETA %s%s",
          std::string(filled, '#'), std::string(30 - filled, '.'), 100 * fraction, p.steps,
          p.total_steps, p.episodes, p.mean_ratio, p.mean_return, p.steps_per_second,
          100 * p.cache_hit_rate, FormatEta(eta), p.resumed ? " (resumed)" : "");
      std::cerr << (tty ? "\r" : "") << line << (tty ? "" : "\n") << std::flush;
    };
  }
  absl::StatusOr<const rl::PluginApi*> plugin = LoadRlPlugin();
  if (!plugin.ok()) return ReportError(plugin.status());
  absl::StatusOr<rl::TrainSummary> summary = (*plugin)->train(t);
  if (!o.quiet && tty) std::cerr << "\n";
  if (!summary.ok()) return ReportError(summary.status());
  if (!o.no_plot) PlotCurve(t.out_dir);
  std::cout << absl::StrFormat(
      "trained %s: %d steps (%s), %d episodes, %.1f s; policy in %s\n", t.algo, summary->steps,
      summary->resumed_from > 0 ? absl::StrFormat("resumed from %d", summary->resumed_from)
                                : std::string("fresh"),
      summary->episodes, summary->wall_seconds, summary->policy_dir);
  std::cout << "evaluate it with: hlogym eval --agent policy:" << summary->policy_dir
            << " --split test\n";
  return kExitOk;
}

}  // namespace

void RegisterTrainCommands(CLI::App& app) {
  auto o = std::make_shared<TrainCommandOptions>();
  rl::TrainOptions& t = o->train;
  CLI::App* train = app.add_subcommand(
      "train",
      "Train a pass-ordering policy with deep RL (PPO, A2C, TRPO, DQN); resumes a killed run");
  train->add_option(
      "--algo", t.algo,
      "ppo | a2c | trpo | dqn | auto (the auto agent's prior) | coreset (a choice among "
      "known-good sequences) (default ppo)");
  train->add_option("--steps-per-graph", o->auto_steps_per_graph,
                    "auto: step budget of the search on each training graph (default 3000)");
  train->add_option("--coreset-size", o->coreset.coreset_size,
                    "coreset: the largest coreset tried (1, 2, 4, ... and this; default 16)");
  train
      ->add_option(
          "--neighbors", o->coreset.neighbors,
          "coreset: the numbers of nearest training graphs the value prediction may average "
          "over (default 1,3,5,10,20); the size and this are chosen by cross-validation "
          "leaving one family out")
      ->delimiter(',');
  train->add_option("--candidates", o->coreset.max_candidates,
                    "coreset: candidate sequences valued on every training graph, drawn by the "
                    "seed from auto's paths (default 200)");
  train->add_flag("--greedy-paths", o->coreset.greedy_paths,
                  "coreset: greedy search's paths over the single passes are candidates too (the "
                  "model of auto's guide, datasets/policies/auto-guide)");
  train->add_option(
      "--graph-fraction", o->coreset.graph_fraction,
      "coreset: the fraction of the training graphs used, drawn by the seed (default 1)");
  train->add_option("--suite", o->suite,
                    "Training suite: corpus suite names (gpt2, diverse, all or corpus), dataset "
                    "folders, files (default gpt2)");
  train
      ->add_option("--split", o->split,
                   "Corpus split (default train); given, it applies to dataset folders too")
      ->each([o](const std::string& value) { o->dataset_split = value; });
  train->add_option("--steps", t.total_steps,
                    "Environment steps in all, rounded up to whole updates (default 200000)");
  train->add_option("--out", t.out_dir, "Output directory (checkpoints, policy, curve)")
      ->required();
  train->add_flag("--shaping", t.reward_shaping,
                  "Potential-based reward shaping (Phi = -FLOPs - 2 transcendentals)");
  train->add_flag("--value-cost", t.value_sees_cost,
                  "The value function also sees FLOPs and transcendentals");
  train->add_flag("--masking", t.action_masking, "Choose only passes that change the module");
  train->add_option("--start", t.start,
                    "Where episodes start, comma-separated: initial (the benchmark's module, "
                    "default), an action run first, e.g. xla-cpu-default (the policy learns what "
                    "to do beyond XLA's default), or coreset (the sequence the shipped coreset "
                    "model predicts best for the graph; needs --sequences coreset and "
                    "xla-cpu-default among the actions); the policy's rollouts start the same way");
  train->add_option(
      "--reward", t.env.reward_space,
      "Gym reward space (default op_count_decrease_normalized; op_count is the paper's)");
  train->add_option("--traj-limit", t.env.traj_limit, "Steps per episode (default 20)");
  train->add_option("--passes", o->passes,
                    "Action space, comma-separated passes and pipelines (default: every pass but "
                    "the precision-changing ones, and the pipelines as macro-actions)");
  train->add_option("--sequences", o->sequences,
                    "Also take each sequence of a coreset model as one action, before --passes: "
                    "coreset (the shipped one) or a DIR that `train --algo coreset` wrote");
  train->add_option(
      "--network", t.network,
      "mlp (op histogram, progress, action history) or gnn (also message passing over the graph); "
      "default mlp");
  train->add_option("--features", t.features,
                    "absolute (log op counts per opcode, default) or relative (log shares of the "
                    "module's op count: graphs of any size built alike look alike)");
  train->add_option("--gnn-dim", t.gnn_dim, "gnn: node embedding width (default 32)");
  train->add_option("--gnn-rounds", t.gnn_rounds, "gnn: message-passing rounds (default 2)");
  train->add_option("--hidden", o->hidden,
                    "Hidden layer sizes of the actor and critic (default 2048,2048)");
  train->add_option("--envs", t.num_envs, "Environments stepped together (default 8)");
  train->add_option("--threads", t.num_threads, "Threads for stepping and for torch (default 2)");
  train->add_option("--lr", t.learning_rate, "Learning rate (default 3e-4; A2C 7e-4, DQN 1e-4)");
  train->add_option("--rollout", t.rollout_steps, "Steps per update (default 2048; A2C 5 per env)");
  train->add_option("--minibatch", t.minibatch, "Minibatch (default 256)");
  train->add_option("--epochs", t.epochs,
                    "Epochs over each rollout: PPO, TRPO's critic (default 10)");
  train->add_option("--clip", t.ppo.clip, "PPO: clip range of the probability ratio (default 0.2)");
  train->add_option("--max-kl", t.trpo.max_kl,
                    "TRPO: mean KL divergence allowed per update (default 0.01)");
  train->add_option("--replay", t.dqn.replay_size, "DQN: replay buffer size (default 50000)");
  train->add_option("--learning-starts", t.dqn.learning_starts,
                    "DQN: steps before the first gradient step (default 1000)");
  train->add_option("--target-update", t.dqn.target_update,
                    "DQN: steps between target syncs (default 1000)");
  train->add_option("--gamma", t.gamma, "Discount (default 0.99)");
  train->add_option("--entropy", t.entropy_coef, "Entropy bonus (default 0.01)");
  train->add_option("--checkpoint-every", t.checkpoint_every,
                    "Steps between checkpoints (default 10000)");
  train->add_option("--seed", t.seed, "Seed (default 0)");
  train->add_flag("-q,--quiet", o->quiet, "No progress output");
  train->add_flag("--no-plot", o->no_plot, "Do not draw curve.png");
  SetAction(train, [o] { return RunTrain(*o); });
}

}  // namespace hlogym::cli
