// Error propagation for functions that return absl::Status or absl::StatusOr
// (XLA's TF_RETURN_IF_ERROR and TF_ASSIGN_OR_RETURN), used by every layer.
#ifndef HLOGYM_HLO_STATUS_MACROS_H_
#define HLOGYM_HLO_STATUS_MACROS_H_

#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

// Evaluates `expr` (an absl::Status) and returns it from the enclosing
// function when it is an error.
#define HLOGYM_RETURN_IF_ERROR(expr)                                  \
  do {                                                                \
    if (absl::Status hlogym_status_ = (expr); !hlogym_status_.ok()) { \
      return hlogym_status_;                                          \
    }                                                                 \
  } while (0)

// Declares `lhs` as the value of the absl::StatusOr `expr`, or returns its
// error from the enclosing function.
#define HLOGYM_ASSIGN(lhs, expr)                \
  auto lhs##_or = (expr);                       \
  if (!lhs##_or.ok()) return lhs##_or.status(); \
  auto lhs = *std::move(lhs##_or)

#endif  // HLOGYM_HLO_STATUS_MACROS_H_
