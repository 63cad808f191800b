// Helpers for the evaluator tests: HLO text in, literal out.
#ifndef HLOGYM_TESTS_EVAL_EVAL_TEST_UTIL_H_
#define HLOGYM_TESTS_EVAL_EVAL_TEST_UTIL_H_

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "eval/evaluator.h"
#include "gtest/gtest.h"
#include "hlo/literal.h"
#include "hlo/status_macros.h"
#include "text/parser.h"

namespace hlogym::testing {

// A literal of `shape` text ("f32[2,2]") with the given values (row-major).
inline Literal MakeLiteral(std::string_view shape_text, const std::vector<double>& values) {
  auto shape = ParseShape(shape_text);
  EXPECT_TRUE(shape.ok()) << shape_text;
  Literal literal(*shape);
  EXPECT_EQ(static_cast<int64_t>(values.size()), literal.element_count()) << shape_text;
  for (size_t i = 0; i < values.size() && static_cast<int64_t>(i) < literal.element_count(); ++i) {
    if (IsFloatingPointType(shape->element_type()) || IsComplexType(shape->element_type())) {
      literal.SetFromDouble(i, values[i]);
    } else {
      literal.SetFromInt64(i, static_cast<int64_t>(values[i]));
    }
  }
  return literal;
}

// Parses and evaluates `text`; on failure fails the test and returns an
// empty literal.
inline absl::StatusOr<Literal> EvalText(std::string_view text,
                                        const std::vector<Literal>& args = {}) {
  HLOGYM_ASSIGN(module, ParseModule(text, "test.hlo"));
  return Evaluate(*module, args);
}

inline std::vector<double> Values(const Literal& literal) {
  std::vector<double> out;
  for (int64_t i = 0; i < literal.element_count(); ++i) out.push_back(literal.GetAsDouble(i));
  return out;
}

// Evaluates `text` and returns the values of the (array) result, or of the
// tuple element `tuple_index` when >= 0.
inline std::vector<double> EvalValues(std::string_view text, const std::vector<Literal>& args = {},
                                      int tuple_index = -1) {
  auto result = EvalText(text, args);
  EXPECT_TRUE(result.ok()) << result.status().message() << "\n" << text;
  if (!result.ok()) return {};
  if (tuple_index >= 0) {
    if (!result->shape().IsTuple()) {
      ADD_FAILURE() << "result is not a tuple";
      return {};
    }
    return Values(result->tuple_elements()[tuple_index]);
  }
  return Values(*result);
}

}  // namespace hlogym::testing

#endif  // HLOGYM_TESTS_EVAL_EVAL_TEST_UTIL_H_
