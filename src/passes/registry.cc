#include "passes/registry.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
// One include per pass, alphabetical.

namespace hlogym {
namespace {

// One line per pass, alphabetical by XLA name.
void RegisterBuiltinPasses(PassRegistry& registry) {
  (void)registry;
}

// Edit distance, to suggest the pass the user probably meant.
size_t EditDistance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

}  // namespace

const PassRegistry& PassRegistry::Builtin() {
  static const PassRegistry* registry = [] {
    auto* r = new PassRegistry();
    RegisterBuiltinPasses(*r);
    return r;
  }();
  return *registry;
}

void PassRegistry::Register(PassInfo info) { passes_.push_back(std::move(info)); }

const PassInfo* PassRegistry::Find(std::string_view name) const {
  for (const PassInfo& info : passes_) {
    if (info.name == name) return &info;
  }
  return nullptr;
}

absl::StatusOr<std::unique_ptr<Pass>> PassRegistry::Create(std::string_view name) const {
  if (const PassInfo* info = Find(name)) return info->create();
  std::vector<std::string> close;
  for (const PassInfo& info : passes_) {
    if (EditDistance(name, info.name) <= 3) close.push_back(info.name);
  }
  std::string message = absl::StrCat("unknown pass '", std::string(name), "'");
  if (!close.empty()) absl::StrAppend(&message, " (did you mean ", absl::StrJoin(close, ", "), "?)");
  absl::StrAppend(&message, "; `hlogym list-passes` lists them all");
  return absl::NotFoundError(message);
}

absl::StatusOr<std::unique_ptr<Pass>> CreatePipeline(std::string_view name) {
  for (const PipelineInfo& pipeline : BuiltinPipelines()) {
    if (pipeline.name == name) return pipeline.create(PassRegistry::Builtin());
  }
  std::vector<std::string> names;
  for (const PipelineInfo& pipeline : BuiltinPipelines()) names.push_back(pipeline.name);
  return absl::NotFoundError(absl::StrCat("unknown pipeline '", std::string(name), "'; known: ",
                                          absl::StrJoin(names, ", ")));
}

absl::StatusOr<std::unique_ptr<Pass>> CreatePassList(std::string_view comma_separated) {
  std::vector<std::unique_ptr<Pass>> passes;
  for (absl::string_view piece :
       absl::StrSplit(absl::string_view(comma_separated.data(), comma_separated.size()), ',',
                      absl::SkipWhitespace())) {
    piece = absl::StripAsciiWhitespace(piece);
    auto pass = PassRegistry::Builtin().Create(std::string_view(piece.data(), piece.size()));
    if (!pass.ok()) return pass.status();
    passes.push_back(std::move(*pass));
  }
  if (passes.empty()) return absl::InvalidArgumentError("no passes given");
  return std::make_unique<PassPipeline>("passes", std::move(passes));
}

}  // namespace hlogym
