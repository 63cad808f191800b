// stable-sort-expander: stable sorts become unstable sorts whose comparator
// breaks ties with an s32 iota operand.
#include "passes/control_flow_test_util.h"

namespace hlogym::testing {
namespace {

// Compares only the low two bits of s32 keys, so random keys tie often.
constexpr char kMaskedCompare[] = R"(
cmp {
  p.0.lhs = s32[] parameter(0)
  p.0.rhs = s32[] parameter(1)
  mask = s32[] constant(3)
  l = s32[] and(p.0.lhs, mask)
  r = s32[] and(p.0.rhs, mask)
  ROOT lt = pred[] compare(l, r), direction=LT
}
)";

TEST(StableSortExpanderTest, AddsIotaOperandToSingleOperandSort) {
  PassRun run = RunPass("stable-sort-expander", std::string("HloModule m\n") + kMaskedCompare + R"(
ENTRY main {
  k = s32[4,16] parameter(0)
  s = s32[4,16] sort(k), dimensions={1}, to_apply=cmp, is_stable=true
  ROOT n = s32[4,16] negate(s)
}
)");
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(
CHECK: %l.clone.swapped = s32[] and(s32[] %p.0.rhs.clone, s32[] %mask.clone)
CHECK: %r.clone.swapped = s32[] and(s32[] %p.0.lhs.clone, s32[] %mask.clone)
CHECK: %lt.clone.swapped = pred[] compare(s32[] %l.clone.swapped, s32[] %r.clone.swapped), direction=LT
CHECK: pred[] compare(pred[] %lt.clone, pred[] %lt.clone.swapped), direction=EQ
CHECK: %p.1.lhs = s32[] parameter(2)
CHECK: %p.1.rhs = s32[] parameter(3)
CHECK: pred[] compare(s32[] %p.1.lhs, s32[] %p.1.rhs), direction=LT
CHECK: ROOT {{.*}} = pred[] select(
CHECK: ENTRY
CHECK: %{{.*}} = s32[4,16] iota(), iota_dimension=1
CHECK: (s32[4,16], s32[4,16]) sort(s32[4,16] %k, s32[4,16] %iota{{.*}}), dimensions={1}, to_apply=%cmp.clone
CHECK-NOT: is_stable
CHECK: s32[4,16] get-tuple-element({{.*}}), index=0
CHECK: ROOT {{.*}} negate(
)");
  EXPECT_EQ(run.module->FindComputation("cmp"), nullptr) << "the old comparator is removed";
  ExpectSameSemantics(run);
}

TEST(StableSortExpanderTest, ReusesAnIotaOperand) {
  PassRun run = RunPass("stable-sort-expander", R"(HloModule m
cmp {
  p.0.lhs = f32[] parameter(0)
  p.0.rhs = f32[] parameter(1)
  p.1.lhs = s32[] parameter(2)
  p.1.rhs = s32[] parameter(3)
  ROOT lt = pred[] compare(p.0.lhs, p.0.rhs), direction=LT
}

ENTRY main {
  k = f32[3,8] parameter(0)
  i = s32[3,8] iota(), iota_dimension=1
  s = (f32[3,8], s32[3,8]) sort(k, i), dimensions={1}, to_apply=cmp, is_stable=true
  ROOT g = s32[3,8] get-tuple-element(s), index=1
}
)");
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(
CHECK: compare(f32[] %p.0.rhs{{.*}}, f32[] %p.0.lhs{{.*}}), direction=LT
CHECK: compare(s32[] %p.1.lhs{{.*}}, s32[] %p.1.rhs{{.*}}), direction=LT
CHECK: ROOT {{.*}} select(
CHECK: ENTRY
CHECK: (f32[3,8], s32[3,8]) sort(f32[3,8] %k, s32[3,8] %i), dimensions={1}, to_apply=%cmp.clone
CHECK-NOT: is_stable
CHECK-NOT: iota(
CHECK: ROOT %g
)");
  ExpectSameSemantics(run);
}

TEST(StableSortExpanderTest, IotaOfTheWrongDimensionOrTypeIsNotReused) {
  PassRun run = RunPass("stable-sort-expander", std::string("HloModule m\n") + R"(
cmp {
  p.0.lhs = s32[] parameter(0)
  p.0.rhs = s32[] parameter(1)
  p.1.lhs = s32[] parameter(2)
  p.1.rhs = s32[] parameter(3)
  p.2.lhs = u32[] parameter(4)
  p.2.rhs = u32[] parameter(5)
  mask = s32[] constant(1)
  l = s32[] and(p.0.lhs, mask)
  r = s32[] and(p.0.rhs, mask)
  ROOT lt = pred[] compare(l, r), direction=LT
}

ENTRY main {
  k = s32[5,6] parameter(0)
  i0 = s32[5,6] iota(), iota_dimension=0
  iu = u32[5,6] iota(), iota_dimension=1
  ROOT s = (s32[5,6], s32[5,6], u32[5,6]) sort(k, i0, iu), dimensions={1}, to_apply=cmp, is_stable=true
}
)");
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(
CHECK: %p.3.lhs = s32[] parameter(6)
CHECK: compare(s32[] %p.3.lhs, s32[] %p.3.rhs), direction=LT
CHECK: ENTRY
CHECK: (s32[5,6], s32[5,6], u32[5,6], s32[5,6]) sort(s32[5,6] %k, s32[5,6] %i0, u32[5,6] %iu, s32[5,6] %{{.*}}), dimensions={1}
CHECK: ROOT {{.*}} = (s32[5,6], s32[5,6], u32[5,6]) tuple(
)");
  ExpectSameSemantics(run);
}

TEST(StableSortExpanderTest, SharedComparatorGetsOneCopyPerSort) {
  // Two stable sorts and an unstable one share `cmp`: the stable ones get
  // their own tie-breaking copies, the unstable one keeps `cmp`.
  PassRun run = RunPass("stable-sort-expander", std::string("HloModule m\n") + kMaskedCompare + R"(
ENTRY main {
  a = s32[10] parameter(0)
  b = s32[10] parameter(1)
  sa = s32[10] sort(a), dimensions={0}, to_apply=cmp, is_stable=true
  sb = s32[10] sort(b), dimensions={0}, to_apply=cmp, is_stable=true
  sc = s32[10] sort(b), dimensions={0}, to_apply=cmp
  ROOT t = (s32[10], s32[10], s32[10]) tuple(sa, sb, sc)
}
)");
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(
CHECK: ENTRY
CHECK: sort(s32[10] %a, s32[10] %{{.*}}), dimensions={0}, to_apply=%cmp.clone
CHECK: sort(s32[10] %b, s32[10] %{{.*}}), dimensions={0}, to_apply=%cmp.clone.1
CHECK: s32[10] sort(s32[10] %b), dimensions={0}, to_apply=%cmp
)");
  ASSERT_NE(run.module->FindComputation("cmp"), nullptr);
  EXPECT_EQ(run.module->FindComputation("cmp")->root_instruction()->opcode(), Opcode::kCompare);
  ExpectSameSemantics(run);
}

TEST(StableSortExpanderTest, ModuleWithLayouts) {
  PassRun run = RunPass("stable-sort-expander", R"(HloModule m
cmp {
  p.0.lhs = f32[] parameter(0)
  p.0.rhs = f32[] parameter(1)
  ROOT lt = pred[] compare(p.0.lhs, p.0.rhs), direction=LT
}

ENTRY main {
  k = f32[6,4]{0,1} parameter(0)
  ROOT s = f32[6,4]{0,1} sort(k), dimensions={0}, to_apply=cmp, is_stable=true
}
)");
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(
CHECK: s32[] parameter(2)
CHECK: ENTRY
CHECK: s32[6,4]{0,1} iota(), iota_dimension=0
CHECK: (f32[6,4]{0,1}, s32[6,4]{0,1}) sort(
CHECK: ROOT {{.*}} = f32[6,4]{0,1} get-tuple-element(
)");
  ExpectSameSemantics(run);
}

TEST(StableSortExpanderTest, UnstableSortsUnchanged) {
  PassRun run = RunPass("stable-sort-expander", std::string("HloModule m\n") + kMaskedCompare + R"(
ENTRY main {
  k = s32[4,16] parameter(0)
  ROOT s = s32[4,16] sort(k), dimensions={1}, to_apply=cmp
}
)");
  EXPECT_FALSE(run.changed) << run.after;
}

TEST(StableSortExpanderTest, BadComparatorIsAnErrorNamingTheSort) {
  auto module = ParseModule(R"(HloModule m
cmp {
  p.0.lhs = s32[] parameter(0)
  p.0.rhs = s32[] parameter(1)
  ROOT a = s32[] add(p.0.lhs, p.0.rhs)
}

ENTRY main {
  k = s32[4] parameter(0)
  ROOT bad.sort = s32[4] sort(k), dimensions={0}, to_apply=cmp, is_stable=true
}
)",
                            "bad.hlo");
  ASSERT_TRUE(module.ok()) << module.status();
  auto pass = PassRegistry::Builtin().Create("stable-sort-expander");
  ASSERT_TRUE(pass.ok());
  auto changed = (*pass)->Run(**module);
  ASSERT_FALSE(changed.ok());
  EXPECT_NE(changed.status().message().find("bad.sort"), std::string::npos) << changed.status();
}

}  // namespace
}  // namespace hlogym::testing
