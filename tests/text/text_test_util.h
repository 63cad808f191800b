// Helpers shared by the tests under tests/text.
#ifndef HLOGYM_TESTS_TEXT_TEXT_TEST_UTIL_H_
#define HLOGYM_TESTS_TEXT_TEXT_TEST_UTIL_H_

#include <memory>
#include <string>
#include <string_view>

#include "gtest/gtest.h"
#include "hlo/computation.h"
#include "hlo/instruction.h"
#include "hlo/module.h"
#include "text/parser.h"
#include "text/printer.h"

namespace hlogym::testing {

// Parses or fails the test with the parser's message.
inline std::unique_ptr<Module> MustParse(std::string_view text) {
  auto module = ParseModule(text, "test.hlo");
  EXPECT_TRUE(module.ok()) << module.status().message() << "\n--- input ---\n" << text;
  if (!module.ok()) return nullptr;
  return std::move(*module);
}

// The parse error message, or "" when the text parses.
inline std::string ParseError(std::string_view text) {
  auto module = ParseModule(text, "bad.hlo");
  if (module.ok()) return "";
  return std::string(module.status().message());
}

inline Instruction* FindInstruction(const Module& module, std::string_view name) {
  for (const auto& computation : module.computations()) {
    for (const auto& instruction : computation->instructions()) {
      if (instruction->name() == name) return instruction.get();
    }
  }
  return nullptr;
}

// print(parse(print(parse(text)))) == print(parse(text)), for the default
// and the short print options. Returns the first printed text.
inline std::string ExpectRoundTrip(std::string_view text, std::string_view label = "input") {
  auto first = ParseModule(text, label);
  EXPECT_TRUE(first.ok()) << label << ": " << first.status().message();
  if (!first.ok()) return "";
  std::string result;
  for (const PrintOptions& options : {PrintOptions(), PrintOptions::Short()}) {
    std::string printed = PrintModule(**first, options);
    auto second = ParseModule(printed, "printed");
    EXPECT_TRUE(second.ok()) << label
                             << ": printed text does not parse: " << second.status().message()
                             << "\n"
                             << printed;
    if (!second.ok()) return "";
    EXPECT_EQ(PrintModule(**second, options), printed) << label;
    EXPECT_EQ((*second)->instruction_count(), (*first)->instruction_count()) << label;
    EXPECT_EQ((*second)->computation_count(), (*first)->computation_count()) << label;
    if (result.empty()) result = printed;
  }
  return result;
}

}  // namespace hlogym::testing

#endif  // HLOGYM_TESTS_TEXT_TEXT_TEST_UTIL_H_
