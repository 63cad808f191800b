#include "gym/state_record.h"

#include "absl/strings/str_cat.h"
#include "hlo/status_macros.h"
#include "nlohmann/json.hpp"
#include "text/file_io.h"

namespace hlogym {
namespace {
constexpr const char* kFormat = "hlogym-state-record/1";
}

std::string StateRecord::ToJson() const {
  nlohmann::json j;
  j["format"] = kFormat;
  j["benchmark"] = benchmark;
  j["passes"] = passes;
  j["initial_op_count"] = initial_op_count;
  j["op_count"] = op_count;
  j["fingerprint"] = fingerprint;
  return j.dump(1) + "\n";
}

absl::StatusOr<StateRecord> StateRecord::FromJson(const std::string& json) {
  try {
    nlohmann::json j = nlohmann::json::parse(json);
    if (!j.is_object()) return absl::InvalidArgumentError("state record: not a JSON object");
    if (j.contains("format") && j["format"] != kFormat) {
      return absl::InvalidArgumentError(absl::StrCat(
          "state record: unknown format ", j["format"].dump(), " (expected ", kFormat, ")"));
    }
    if (!j.contains("benchmark") || !j["benchmark"].is_string()) {
      return absl::InvalidArgumentError("state record: no \"benchmark\" string");
    }
    StateRecord record;
    record.benchmark = j["benchmark"].get<std::string>();
    if (j.contains("passes")) {
      if (!j["passes"].is_array()) {
        return absl::InvalidArgumentError("state record: \"passes\" is not an array");
      }
      for (const auto& p : j["passes"]) {
        if (!p.is_string()) {
          return absl::InvalidArgumentError("state record: a pass name is not a string");
        }
        record.passes.push_back(p.get<std::string>());
      }
    }
    record.initial_op_count = j.value("initial_op_count", int64_t{-1});
    record.op_count = j.value("op_count", int64_t{-1});
    record.fingerprint = j.value("fingerprint", std::string());
    return record;
  } catch (const std::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat("state record: ", e.what()));
  }
}

absl::Status StateRecord::WriteFile(const std::string& path) const {
  return WriteTextFileAtomically(path, ToJson());
}

absl::StatusOr<StateRecord> StateRecord::ReadFile(const std::string& path) {
  HLOGYM_ASSIGN(text, ReadTextFile(path));
  absl::StatusOr<StateRecord> record = FromJson(text);
  if (!record.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": ", record.status().message()));
  }
  return record;
}

}  // namespace hlogym
