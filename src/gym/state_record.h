// StateRecord: what reproduces an environment state, the benchmark plus the
// passes applied (by XLA name), with the resulting op count and fingerprint
// for checking a replay. Written and read as JSON:
//   {"format": "hlogym-state-record/1", "benchmark": "...", "passes": ["dce", ...],
//    "initial_op_count": 123, "op_count": 100, "fingerprint": "<32 hex digits>"}
#ifndef HLOGYM_GYM_STATE_RECORD_H_
#define HLOGYM_GYM_STATE_RECORD_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace hlogym {

struct StateRecord {
  std::string benchmark;
  std::vector<std::string> passes;
  int64_t initial_op_count = -1;  // -1: unknown (not checked)
  int64_t op_count = -1;          // -1: unknown (not checked)
  std::string fingerprint;        // empty: unknown (not checked)

  std::string ToJson() const;
  static absl::StatusOr<StateRecord> FromJson(const std::string& json);
  absl::Status WriteFile(const std::string& path) const;
  static absl::StatusOr<StateRecord> ReadFile(const std::string& path);
};

}  // namespace hlogym

#endif  // HLOGYM_GYM_STATE_RECORD_H_
