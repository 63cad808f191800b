// list-passes and opt: the pass registry and XLA's hlo-opt, hlogym style.
#include <iostream>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "analysis/verifier.h"
#include "cli/commands.h"
#include "nlohmann/json.hpp"
#include "passes/registry.h"
#include "text/file_io.h"
#include "text/printer.h"

namespace hlogym::cli {
namespace {

int RunListPasses(bool json) {
  const PassRegistry& registry = PassRegistry::Builtin();
  if (json) {
    nlohmann::json passes = nlohmann::json::array();
    for (const PassInfo& info : registry.passes()) {
      passes.push_back({{"name", info.name}, {"summary", info.summary}});
    }
    nlohmann::json pipelines = nlohmann::json::array();
    for (const PipelineInfo& info : BuiltinPipelines()) {
      pipelines.push_back({{"name", info.name},
                           {"summary", info.summary},
                           {"missing_passes", info.missing_passes}});
    }
    std::cout << nlohmann::json{{"passes", passes}, {"pipelines", pipelines}}.dump(2) << "\n";
    return kExitOk;
  }
  for (const PassInfo& info : registry.passes()) {
    std::cout << info.name;
    for (size_t pad = info.name.size(); pad < 36; ++pad) std::cout << ' ';
    std::cout << info.summary << "\n";
  }
  if (!BuiltinPipelines().empty()) std::cout << "\npipelines (--pipeline=NAME):\n";
  for (const PipelineInfo& info : BuiltinPipelines()) {
    std::cout << "  " << info.name << ": " << info.summary << "\n";
  }
  return kExitOk;
}

struct OptOptions {
  std::string input;
  std::string output = "-";
  std::string passes;
  std::string pipeline;
  bool verify_each = false;
  bool explain = false;
};

// Prints what a pipeline runs and which of XLA's passes it lacks.
void Explain(const Pass& pass, int depth) {
  std::string indent(2 * depth, ' ');
  if (const auto* pipeline = dynamic_cast<const PassPipeline*>(&pass)) {
    std::cerr << indent << pipeline->name() << ":\n";
    for (const auto& inner : pipeline->passes()) Explain(*inner, depth + 1);
  } else if (const auto* fixed = dynamic_cast<const FixedPointPass*>(&pass)) {
    std::cerr << indent << "fixed point of:\n";
    Explain(fixed->inner(), depth + 1);
  } else {
    std::cerr << indent << pass.name() << "\n";
  }
}

// Runs every leaf pass in order, verifying after each one.
absl::StatusOr<bool> RunVerifyingEach(Pass& pass, Module& module) {
  if (auto* pipeline = dynamic_cast<PassPipeline*>(&pass)) {
    bool changed = false;
    for (const auto& inner : pipeline->passes()) {
      auto inner_changed = RunVerifyingEach(*inner, module);
      if (!inner_changed.ok()) return inner_changed.status();
      changed |= *inner_changed;
    }
    return changed;
  }
  auto changed = pass.Run(module);
  if (!changed.ok()) return changed.status();
  absl::Status verified = VerifyModule(module);
  if (!verified.ok()) {
    return absl::InternalError(absl::StrCat("after pass ", std::string(pass.name()),
                                            ", the module does not verify: ",
                                            std::string(verified.message())));
  }
  return changed;
}

int RunOpt(const OptOptions& options) {
  if (options.passes.empty() == options.pipeline.empty()) {
    std::cerr << "error: give exactly one of --passes and --pipeline\n";
    return kExitBadInput;
  }
  auto pass = options.pipeline.empty() ? CreatePassList(options.passes)
                                       : CreatePipeline(options.pipeline);
  if (!pass.ok()) return ReportError(pass.status());
  if (options.explain) {
    Explain(**pass, 0);
    for (const PipelineInfo& info : BuiltinPipelines()) {
      if (info.name != options.pipeline || info.missing_passes.empty()) continue;
      std::cerr << "missing (XLA runs these; hlogym does not implement them yet):\n";
      for (const std::string& missing : info.missing_passes) std::cerr << "  " << missing << "\n";
    }
  }
  auto module = LoadModule(options.input);
  if (!module.ok()) return ReportError(module.status());
  auto changed = options.verify_each ? RunVerifyingEach(**pass, **module) : (*pass)->Run(**module);
  if (!changed.ok()) return ReportError(changed.status());
  absl::Status written = WriteTextFileAtomically(options.output, PrintModule(**module));
  if (!written.ok()) return ReportError(written);
  return kExitOk;
}

}  // namespace

void RegisterPassCommands(CLI::App& app) {
  auto list_json = std::make_shared<bool>(false);
  CLI::App* list = app.add_subcommand("list-passes", "Every registered pass by its XLA name");
  list->add_flag("--json", *list_json, "Print JSON");
  SetAction(list, [list_json] { return RunListPasses(*list_json); });

  auto opt_options = std::make_shared<OptOptions>();
  CLI::App* opt = app.add_subcommand("opt", "Run passes on a module, like XLA's hlo-opt");
  opt->add_option("file", opt_options->input, "HLO text (.hlo/.txt, .gz, .zst, or -)")->required();
  opt->add_option("--passes", opt_options->passes, "Comma-separated pass names");
  opt->add_option("--pipeline", opt_options->pipeline, "A named pipeline, e.g. xla-cpu-default");
  opt->add_option("-o,--output", opt_options->output, "Output file (default: stdout)");
  opt->add_flag("--verify-each", opt_options->verify_each, "Verify the module after every pass");
  opt->add_flag("--explain", opt_options->explain,
                "Print the passes the pipeline runs and those it lacks (to stderr)");
  SetAction(opt, [opt_options] { return RunOpt(*opt_options); });
}

}  // namespace hlogym::cli
