// fmt, verify and stats: read modules, print them, check them, count them.
#include <algorithm>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "analysis/cost_analysis.h"
#include "analysis/op_stats.h"
#include "analysis/verifier.h"
#include "cli/commands.h"
#include "nlohmann/json.hpp"
#include "text/file_io.h"
#include "text/printer.h"

namespace hlogym::cli {
namespace {

struct FmtOptions {
  std::string input;
  std::string output = "-";
  bool short_form = false;
};

int RunFmt(const FmtOptions& options) {
  auto module = LoadModule(options.input);
  if (!module.ok()) return ReportError(module.status());
  PrintOptions print_options = options.short_form ? PrintOptions::Short() : PrintOptions();
  absl::Status written =
      WriteTextFileAtomically(options.output, PrintModule(**module, print_options));
  if (!written.ok()) return ReportError(written);
  return kExitOk;
}

int RunVerify(const std::vector<std::string>& inputs) {
  int exit_status = kExitOk;
  for (const std::string& input : inputs) {
    auto module = LoadModule(input);
    absl::Status status = module.ok() ? VerifyModule(**module) : module.status();
    if (!status.ok()) {
      if (module.ok()) {
        status = absl::Status(status.code(), absl::StrCat(input, ": error: ", status.message()));
      }
      exit_status = std::max(exit_status, ReportError(status));
    }
  }
  return exit_status;
}

nlohmann::json StatsJson(const std::string& input, const OpStats& stats, const CostFeatures& cost) {
  nlohmann::json histogram = nlohmann::json::object();
  for (int i = 0; i < kOpcodeCount; ++i) {
    if (stats.opcode_histogram[i] > 0) {
      histogram[std::string(OpcodeName(static_cast<Opcode>(i)))] = stats.opcode_histogram[i];
    }
  }
  return {{"file", input},
          {"op_count", stats.op_count},
          {"computation_count", stats.computation_count},
          {"flops", cost.flops},
          {"transcendentals", cost.transcendentals},
          {"bytes_accessed", cost.bytes_accessed},
          {"opcode_histogram", histogram}};
}

void PrintStatsText(const std::string& input, const OpStats& stats, const CostFeatures& cost) {
  std::cout << input << "\n"
            << "  op count:        " << stats.op_count << "\n"
            << "  computations:    " << stats.computation_count << "\n"
            << "  flops:           " << cost.flops << "\n"
            << "  transcendentals: " << cost.transcendentals << "\n"
            << "  bytes accessed:  " << cost.bytes_accessed << "\n"
            << "  opcodes:\n";
  std::vector<std::pair<int64_t, Opcode>> counts;
  for (int i = 0; i < kOpcodeCount; ++i) {
    if (stats.opcode_histogram[i] > 0) {
      counts.emplace_back(stats.opcode_histogram[i], static_cast<Opcode>(i));
    }
  }
  std::sort(counts.begin(), counts.end(), [](const auto& a, const auto& b) {
    return a.first != b.first ? a.first > b.first : OpcodeName(a.second) < OpcodeName(b.second);
  });
  for (const auto& [count, opcode] : counts) {
    std::cout << "    " << OpcodeName(opcode);
    for (size_t pad = OpcodeName(opcode).size(); pad < 26; ++pad) std::cout << ' ';
    std::cout << count << "\n";
  }
}

int RunStats(const std::vector<std::string>& inputs, bool json) {
  int exit_status = kExitOk;
  nlohmann::json results = nlohmann::json::array();
  for (const std::string& input : inputs) {
    auto module = LoadModule(input);
    if (!module.ok()) {
      exit_status = std::max(exit_status, ReportError(module.status()));
      continue;
    }
    OpStats stats = ComputeOpStats(**module);
    CostFeatures cost = ComputeModuleCost(**module);
    if (json) {
      results.push_back(StatsJson(input, stats, cost));
    } else {
      PrintStatsText(input, stats, cost);
    }
  }
  if (json) std::cout << results.dump(2) << "\n";
  return exit_status;
}

}  // namespace

void RegisterTextCommands(CLI::App& app) {
  auto fmt_options = std::make_shared<FmtOptions>();
  CLI::App* fmt = app.add_subcommand("fmt", "Parse a module and print canonical XLA text");
  fmt->add_option("file", fmt_options->input, "HLO text (.hlo/.txt, .gz, .zst, or - for stdin)")
      ->required();
  fmt->add_option("-o,--output", fmt_options->output, "Output file (default: stdout)");
  fmt->add_flag("--short", fmt_options->short_form,
                "Short form: no operand shapes, no '%' before names");
  SetAction(fmt, [fmt_options] { return RunFmt(*fmt_options); });

  auto verify_inputs = std::make_shared<std::vector<std::string>>();
  CLI::App* verify =
      app.add_subcommand("verify", "Exit 0 if every module is well formed and every shape checks");
  verify->add_option("files", *verify_inputs, "HLO files")->required();
  SetAction(verify, [verify_inputs] { return RunVerify(*verify_inputs); });

  auto stats_inputs = std::make_shared<std::vector<std::string>>();
  auto stats_json = std::make_shared<bool>(false);
  CLI::App* stats = app.add_subcommand(
      "stats", "Op count, computations, cost features and per-opcode histogram of each module");
  stats->add_option("files", *stats_inputs, "HLO files")->required();
  stats->add_flag("--json", *stats_json, "Print JSON");
  SetAction(stats, [stats_inputs, stats_json] { return RunStats(*stats_inputs, *stats_json); });
}

}  // namespace hlogym::cli
