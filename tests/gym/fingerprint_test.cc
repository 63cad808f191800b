#include "hlo/fingerprint.h"

#include <gtest/gtest.h>

#include "text/parser.h"

namespace hlogym {
namespace {

Fingerprint Of(const char* text) {
  auto module = ParseModule(text);
  EXPECT_TRUE(module.ok()) << module.status();
  return ModuleFingerprint(**module);
}

constexpr const char* kBase = R"(HloModule m
ENTRY main {
  p = f32[4] parameter(0)
  c = f32[4] constant({1, 2, 3, 4})
  a = f32[4] add(p, c)
  ROOT r = f32[4] multiply(a, a)
}
)";

TEST(FingerprintTest, IgnoresNamesSeesOrder) {
  const Fingerprint base = Of(kBase);
  EXPECT_EQ(base, Of(R"(HloModule other
ENTRY entry {
  x = f32[4] parameter(0)
  k = f32[4] constant({1, 2, 3, 4})
  y = f32[4] add(x, k)
  ROOT z = f32[4] multiply(y, y)
}
)"));
  // Same DAG, constant listed first: XLA's post order walks from the
  // instructions without users, so it is the same.
  EXPECT_EQ(base, Of(R"(HloModule m
ENTRY main {
  c = f32[4] constant({1, 2, 3, 4})
  p = f32[4] parameter(0)
  a = f32[4] add(p, c)
  ROOT r = f32[4] multiply(a, a)
}
)"));
  // Same DAG with an unused instruction listed before the root instead of
  // after it: the walks start in another order, the post order differs, and
  // passes can see that.
  EXPECT_NE(Of(R"(HloModule m
ENTRY main {
  p = f32[4] parameter(0)
  c = f32[4] constant({1, 2, 3, 4})
  unused = f32[4] negate(c)
  a = f32[4] add(p, c)
  ROOT r = f32[4] multiply(a, a)
}
)"),
            Of(R"(HloModule m
ENTRY main {
  p = f32[4] parameter(0)
  c = f32[4] constant({1, 2, 3, 4})
  a = f32[4] add(p, c)
  ROOT r = f32[4] multiply(a, a)
  unused = f32[4] negate(c)
}
)"));
  // Metadata is ignored.
  EXPECT_EQ(base, Of(R"(HloModule m
ENTRY main {
  p = f32[4] parameter(0)
  c = f32[4] constant({1, 2, 3, 4})
  a = f32[4] add(p, c), metadata={op_name="jit(f)/add"}
  ROOT r = f32[4] multiply(a, a)
}
)"));
}

TEST(FingerprintTest, SeesStructure) {
  const Fingerprint base = Of(kBase);
  // Another constant value.
  EXPECT_NE(base, Of(R"(HloModule m
ENTRY main {
  p = f32[4] parameter(0)
  c = f32[4] constant({1, 2, 3, 5})
  a = f32[4] add(p, c)
  ROOT r = f32[4] multiply(a, a)
}
)"));
  // Swapped operands.
  EXPECT_NE(base, Of(R"(HloModule m
ENTRY main {
  p = f32[4] parameter(0)
  c = f32[4] constant({1, 2, 3, 4})
  a = f32[4] add(c, p)
  ROOT r = f32[4] multiply(a, a)
}
)"));
  // Another layout.
  EXPECT_NE(Of("HloModule m\nENTRY e {\n  ROOT p = f32[2,3]{1,0} parameter(0)\n}\n"),
            Of("HloModule m\nENTRY e {\n  ROOT p = f32[2,3]{0,1} parameter(0)\n}\n"));
  // A duplicated (CSE-able) add is not the shared one.
  EXPECT_NE(base, Of(R"(HloModule m
ENTRY main {
  p = f32[4] parameter(0)
  c = f32[4] constant({1, 2, 3, 4})
  a = f32[4] add(p, c)
  a2 = f32[4] add(p, c)
  ROOT r = f32[4] multiply(a, a2)
}
)"));
  // A dead instruction counts.
  EXPECT_NE(base, Of(R"(HloModule m
ENTRY main {
  p = f32[4] parameter(0)
  c = f32[4] constant({1, 2, 3, 4})
  a = f32[4] add(p, c)
  d = f32[4] negate(p)
  ROOT r = f32[4] multiply(a, a)
}
)"));
}

TEST(FingerprintTest, CalledComputationsByStructure) {
  constexpr const char* kReduce = R"(HloModule m
%s (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %r = f32[] ADD(%a, %b)
}
ENTRY main {
  p = f32[4] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[] reduce(p, z), dimensions={0}, to_apply=%s
}
)";
  std::string add(kReduce);
  add.replace(add.find("ADD"), 3, "add");
  std::string renamed = add;
  for (size_t pos; (pos = renamed.find("%s ")) != std::string::npos;)
    renamed.replace(pos, 3, "%sum ");
  renamed.replace(renamed.find("to_apply=%s"), 11, "to_apply=%sum");
  std::string mul(kReduce);
  mul.replace(mul.find("ADD"), 3, "multiply");
  EXPECT_EQ(Of(add.c_str()), Of(renamed.c_str()));
  EXPECT_NE(Of(add.c_str()), Of(mul.c_str()));
}

TEST(FingerprintTest, CloneAndToString) {
  auto module = ParseModule(kBase);
  ASSERT_TRUE(module.ok());
  EXPECT_EQ(ModuleFingerprint(**module), ModuleFingerprint(*(*module)->Clone()));
  EXPECT_EQ(ModuleFingerprint(**module).ToString().size(), 32u);
  EXPECT_EQ(ComputationFingerprint(*(*module)->entry_computation()),
            ComputationFingerprint(*(*module)->Clone()->entry_computation()));
}

}  // namespace
}  // namespace hlogym
