// NameSet::Unique against the rule it implements, checked by brute force: the
// prefix itself when free, else the first free "stem.N" numbering on after the
// prefix's own ".N" (from 1 without one).
#include "hlo/name_set.h"

#include <gtest/gtest.h>

#include <random>
#include <string>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace hlogym {
namespace {

// The rule, probing every number from the start.
std::string ReferenceUnique(absl::flat_hash_set<std::string>& taken, const std::string& prefix) {
  if (taken.insert(prefix).second) return prefix;
  std::string stem = prefix;
  int64_t n = 1;
  const size_t dot = prefix.rfind('.');
  int64_t suffix = 0;
  if (dot != std::string::npos && dot + 1 < prefix.size() &&
      prefix.find_first_not_of("0123456789", dot + 1) == std::string::npos &&
      absl::SimpleAtoi(prefix.substr(dot + 1), &suffix)) {
    stem = prefix.substr(0, dot);
    n = suffix + 1;
  }
  while (!taken.insert(absl::StrCat(stem, ".", n)).second) ++n;
  return absl::StrCat(stem, ".", n);
}

TEST(NameSetTest, DenseNumbersAreSkippedAndRemembered) {
  NameSet names;
  for (int i = 1; i <= 100; ++i) names.Insert(absl::StrCat("add.", i));
  EXPECT_EQ(names.Unique("add.5"), "add.101");
  EXPECT_EQ(names.Unique("add.5"), "add.102");
  EXPECT_EQ(names.Unique("add"), "add");
  EXPECT_EQ(names.Unique("add"), "add.103");
  EXPECT_EQ(names.Unique("add.200"), "add.200");
  EXPECT_EQ(names.Unique("add.199"), "add.199");
  EXPECT_EQ(names.Unique("add.199"), "add.201");  // 200 is taken too
  EXPECT_EQ(names.Unique("multiply"), "multiply");
  EXPECT_EQ(names.Unique("multiply"), "multiply.1");
}

TEST(NameSetTest, AgreesWithProbingFromTheStartOnRandomRequests) {
  std::mt19937 rng(7);
  const std::string stems[] = {"add", "convert", "x.y", "fusion"};
  NameSet names;
  absl::flat_hash_set<std::string> reference;
  for (int step = 0; step < 20000; ++step) {
    const std::string& stem = stems[rng() % 4];
    const int kind = rng() % 4;
    std::string name = kind == 0 ? stem : absl::StrCat(stem, ".", rng() % 300);
    if (kind == 3) {  // a name taken from outside, as the parser reserves them
      EXPECT_EQ(names.Insert(name), reference.insert(name).second) << name;
      continue;
    }
    ASSERT_EQ(names.Unique(name), ReferenceUnique(reference, name)) << "step " << step;
    if (step % 5000 == 4999) names = names.Copy();  // a clone learns the numbers again
  }
}

}  // namespace
}  // namespace hlogym
