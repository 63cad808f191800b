// The CHECK matcher itself must be able to fail.
#include "passes/pass_test_util.h"

namespace hlogym::testing {
namespace {

constexpr std::string_view kText =
    "alpha = add(x, y)\nbeta = multiply(alpha, y)\ngamma = tuple(beta)\n";

TEST(MatchChecksTest, AcceptsOrderedMatches) {
  EXPECT_EQ(MatchChecks(kText, "CHECK: add(\nCHECK-NEXT: multiply(alpha\nCHECK: tuple"), "");
  EXPECT_EQ(MatchChecks(kText, "CHECK: {{[a-z]+}} = multiply"), "");
}

TEST(MatchChecksTest, RejectsMissingOrOutOfOrder) {
  EXPECT_NE(MatchChecks(kText, "CHECK: subtract"), "");
  EXPECT_NE(MatchChecks(kText, "CHECK: tuple\nCHECK: add"), "");
  EXPECT_NE(MatchChecks(kText, "CHECK: add\nCHECK-NEXT: tuple"), "");
}

TEST(MatchChecksTest, CheckNotLooksBetweenMatches) {
  EXPECT_NE(MatchChecks(kText, "CHECK: add\nCHECK-NOT: multiply\nCHECK: tuple"), "");
  EXPECT_EQ(MatchChecks(kText, "CHECK: add\nCHECK-NOT: subtract\nCHECK: tuple"), "");
  EXPECT_NE(MatchChecks(kText, "CHECK-NOT: gamma"), "") << "a trailing CHECK-NOT covers the rest";
}

}  // namespace
}  // namespace hlogym::testing
