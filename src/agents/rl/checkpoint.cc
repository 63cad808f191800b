// The trainers' learning curve, checkpoints and resume (TrainingRun's
// persistence; trainer.h). A checkpoint is committed by renaming
// checkpoint.json, which names its archives; see rl.h for the files.
#include <torch/torch.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "agents/rl/trainer.h"
#include "hlo/status_macros.h"
#include "nlohmann/json.hpp"
#include "text/file_io.h"

namespace hlogym::rl {
namespace {

namespace fs = std::filesystem;

constexpr char kCurveHeader[] =
    "steps,updates,episodes,mean_return,mean_ratio,policy_loss,value_loss,entropy,epsilon,"
    "steps_per_second,cache_hit_rate,wall_seconds";

std::string ReadWholeFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

absl::Status TrainingRun::StartCurve() {
  const std::string path = o_.out_dir + "/curve.csv";
  std::string kept = std::string(kCurveHeader) + "\n";
  if (resumed_from_ > 0) {
    // Keep the rows up to the checkpoint; rows written after it are replaced
    // by the resumed run's own.
    std::istringstream in(ReadWholeFile(path));
    std::string line;
    bool header = true;
    while (std::getline(in, line)) {
      if (header) {
        header = false;
        continue;
      }
      if (line.empty()) continue;
      int64_t step = std::atoll(line.c_str());
      if (step <= resumed_from_) kept += line + "\n";
    }
  }
  return WriteTextFileAtomically(path, kept);
}

void TrainingRun::EmitRow(const UpdateLosses& losses) {
  TrainProgress p;
  p.steps = steps_;
  p.total_steps = o_.total_steps;
  p.updates = updates_;
  p.episodes = episodes_;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  p.mean_return = nan;
  p.mean_ratio = nan;
  if (!finished_.empty()) {
    double returns = 0, ratios = 0;
    int counted = 0;
    for (const FinishedEpisode& e : finished_) {
      returns += e.episode_return;
      if (!std::isnan(e.ratio)) {
        ratios += e.ratio;
        ++counted;
      }
    }
    p.mean_return = returns / finished_.size();
    if (counted > 0) p.mean_ratio = ratios / counted;
  }
  finished_.clear();
  p.policy_loss = losses.policy;
  p.value_loss = losses.value;
  p.entropy = losses.entropy;
  p.epsilon = losses.epsilon;
  const double row_seconds = SecondsSince(row_start_);
  p.steps_per_second = row_seconds > 0 ? row_steps_ / row_seconds : 0;
  p.cache_hit_rate = row_steps_ > 0 ? static_cast<double>(row_cache_hits_) / row_steps_ : 0;
  p.wall_seconds = wall_before_ + SecondsSince(start_);
  p.resumed = resumed_row_;
  resumed_row_ = false;
  row_start_ = Clock::now();
  row_steps_ = 0;
  row_cache_hits_ = 0;

  std::ofstream out(o_.out_dir + "/curve.csv", std::ios::app);
  out << absl::StrFormat("%d,%d,%d,%.6g,%.6g,%.6g,%.6g,%.6g,%.4g,%.1f,%.4f,%.1f\n", p.steps,
                         p.updates, p.episodes, p.mean_return, p.mean_ratio, p.policy_loss,
                         p.value_loss, p.entropy, p.epsilon, p.steps_per_second, p.cache_hit_rate,
                         p.wall_seconds);
  if (o_.progress) o_.progress(p);
}

nlohmann::json TrainingRun::RunIdentity() const {
  nlohmann::json j;
  j["algo"] = o_.algo;
  j["actions"] = o_.env.actions;
  j["hidden"] = o_.hidden;
  j["network"] = o_.network;
  if (o_.features != "absolute") j["features"] = o_.features;  // runs from before it resume
  if (config_.gnn()) j["gnn"] = {{"dim", o_.gnn_dim}, {"rounds", o_.gnn_rounds}};
  j["traj_limit"] = o_.env.traj_limit;
  j["value_sees_cost"] = o_.value_sees_cost;
  j["action_masking"] = o_.action_masking;
  if (o_.start != "initial") j["start"] = o_.start;  // runs from before starts existed resume
  j["reward_space"] = o_.env.reward_space;
  return j;
}

absl::Status TrainingRun::MaybeCheckpoint() {
  if (steps_ < next_checkpoint_ && !reached_target()) return absl::OkStatus();
  return WriteCheckpoint();
}

absl::Status TrainingRun::WriteCheckpoint() {
  const std::string suffix = absl::StrCat("-", steps_, ".pt");
  const std::string net_file = "checkpoint-net" + suffix;
  const std::string optimizer_file = "checkpoint-optimizer" + suffix;
  const std::string target_file = "checkpoint-target" + suffix;
  auto save_net = [&](ActorCritic& net, const std::string& file) {
    return SaveModuleAtomically(o_.out_dir + "/" + file,
                                [&](const std::string& tmp) { torch::save(net, tmp); });
  };
  HLOGYM_RETURN_IF_ERROR(save_net(net_, net_file));
  if (absl::Status s =
          SaveModuleAtomically(o_.out_dir + "/" + optimizer_file,
                               [&](const std::string& tmp) { torch::save(*optimizer_, tmp); });
      !s.ok()) {
    return s;
  }
  if (target_) {
    HLOGYM_RETURN_IF_ERROR(save_net(target_, target_file));
  }
  std::ostringstream rng_state;
  rng_state << rng_;
  nlohmann::json j;
  j["format"] = "hlogym-train-checkpoint-1";
  j["run"] = RunIdentity();
  j["steps"] = steps_;
  j["updates"] = updates_;
  j["episodes"] = episodes_;
  j["rng"] = rng_state.str();
  j["wall_seconds"] = wall_before_ + SecondsSince(start_);
  j["files"] = {{"net", net_file}, {"optimizer", optimizer_file}};
  if (target_) j["files"]["target"] = target_file;
  // Renaming checkpoint.json commits the checkpoint; the files of the
  // previous one are removed only after that.
  const std::string previous_json = ReadWholeFile(o_.out_dir + "/checkpoint.json");
  HLOGYM_RETURN_IF_ERROR(
      WriteTextFileAtomically(o_.out_dir + "/checkpoint.json", j.dump(2) + "\n"));
  nlohmann::json previous = nlohmann::json::parse(previous_json, nullptr, false);
  if (previous.is_object() && previous.contains("files")) {
    for (auto& [key, file] : previous["files"].items()) {
      if (file.is_string() && file.get<std::string>() != j["files"].value(key, "")) {
        std::error_code ec;
        fs::remove(o_.out_dir + "/" + file.get<std::string>(), ec);
      }
    }
  }
  config_.trained_steps = steps_;
  HLOGYM_RETURN_IF_ERROR(SavePolicy(o_.out_dir, config_, net_));
  next_checkpoint_ = o_.checkpoint_every > 0 ? steps_ + o_.checkpoint_every : o_.total_steps;
  return absl::OkStatus();
}

absl::Status TrainingRun::MaybeResume() {
  std::error_code ec;
  fs::create_directories(o_.out_dir, ec);
  if (ec)
    return absl::InvalidArgumentError(absl::StrCat(o_.out_dir, ": cannot create: ", ec.message()));
  const std::string json_path = o_.out_dir + "/checkpoint.json";
  next_checkpoint_ = o_.checkpoint_every > 0 ? o_.checkpoint_every : o_.total_steps;
  if (!fs::exists(json_path)) {
    if (!fs::is_empty(o_.out_dir, ec)) {
      return absl::InvalidArgumentError(absl::StrCat(
          o_.out_dir,
          ": the directory is not empty and holds no training checkpoint; choose a new --out "
          "(nothing in it was changed)"));
    }
    return absl::OkStatus();
  }
  nlohmann::json j = nlohmann::json::parse(ReadWholeFile(json_path), nullptr, false);
  if (!j.is_object() || j.value("format", "") != "hlogym-train-checkpoint-1") {
    return absl::InvalidArgumentError(
        absl::StrCat(json_path, ": not an hlogym training checkpoint"));
  }
  // Checkpoints written before gnn existed are mlp runs.
  if (j["run"].is_object() && !j["run"].contains("network")) j["run"]["network"] = "mlp";
  const nlohmann::json identity = RunIdentity();
  for (auto& [key, value] : identity.items()) {
    if (!j["run"].contains(key) || j["run"][key] != value) {
      return absl::InvalidArgumentError(
          absl::StrCat(json_path, ": the checkpoint is of a different run (", key, " was ",
                       j["run"].contains(key) ? j["run"][key].dump() : "missing", ", now ",
                       value.dump(), "); resume with the same options or train into a new --out"));
    }
  }
  try {
    torch::load(net_, o_.out_dir + "/" + j["files"]["net"].get<std::string>());
    torch::load(*optimizer_, o_.out_dir + "/" + j["files"]["optimizer"].get<std::string>());
    if (target_) torch::load(target_, o_.out_dir + "/" + j["files"]["target"].get<std::string>());
    steps_ = j.at("steps").get<int64_t>();
    updates_ = j.at("updates").get<int64_t>();
    episodes_ = j.at("episodes").get<int64_t>();
    wall_before_ = j.value("wall_seconds", 0.0);
    std::istringstream rng_state(j.at("rng").get<std::string>());
    rng_state >> rng_;
  } catch (const std::exception& e) {
    return absl::InvalidArgumentError(
        absl::StrCat(json_path, ": cannot resume: ", std::string(e.what()).substr(0, 300)));
  }
  resumed_from_ = steps_;
  resumed_row_ = true;
  next_checkpoint_ = o_.checkpoint_every > 0 ? steps_ + o_.checkpoint_every : o_.total_steps;
  return absl::OkStatus();
}

}  // namespace hlogym::rl
