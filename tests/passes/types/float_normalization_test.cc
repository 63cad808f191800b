// float-normalization-<type>: low-precision ops computed in the high type.
#include "passes/control_flow_test_util.h"

namespace hlogym::testing {
namespace {

TEST(FloatNormalizationTest, Bf16AddIsComputedInF32) {
  PassRun run = RunPass("float-normalization-bf16", R"(HloModule m
ENTRY main {
  x = bf16[4] parameter(0)
  y = bf16[4] parameter(1)
  ROOT a = bf16[4] add(x, y)
}
)");
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(
CHECK: f32[4] convert(bf16[4] %x)
CHECK: f32[4] convert(bf16[4] %y)
CHECK: %a = f32[4] add(f32[4] %convert
CHECK: ROOT {{.*}} = bf16[4] convert(f32[4] %a)
)");
  ExpectSameSemantics(run);
}

// A collective with a channel has side effects only outside SPMD (XLA's
// rule): in a module compiled for several partitions a bf16 all-gather is
// computed in f32 like any other op; among replicas it is left alone.
TEST(FloatNormalizationTest, Bf16AllGatherIsWidenedInAPartitionedModuleOnly) {
  constexpr std::string_view kTemplate = R"(HloModule m, HEADER
ENTRY main {
  x = bf16[2,4] parameter(0)
  ROOT g = bf16[8,4] all-gather(x), dimensions={0}, channel_id=1, replica_groups={{0,1,2,3}}, use_global_device_ids=true
}
)";
  auto module_text = [&](std::string_view header) {
    std::string text(kTemplate);
    text.replace(text.find("HEADER"), 6, header);
    return text;
  };
  PassRun partitioned = RunPass("float-normalization-bf16", module_text("num_partitions=4"));
  EXPECT_TRUE(partitioned.changed);
  EXPECT_CHECKS(partitioned.after, R"(
CHECK: f32[2,4] convert(bf16[2,4] %x)
CHECK: %g = f32[8,4] all-gather(
CHECK: ROOT {{.*}} = bf16[8,4] convert(f32[8,4] %g)
)");
  PassRun replicated = RunPass("float-normalization-bf16", module_text("replica_count=4"));
  EXPECT_FALSE(replicated.changed) << replicated.after;
}

TEST(FloatNormalizationTest, WideningUsersAreBypassedNarrowingOperandsKept) {
  PassRun run = RunPass("float-normalization-bf16", R"(HloModule m
ENTRY main {
  p = f32[4] parameter(0)
  x = bf16[4] convert(p)
  e = bf16[4] exponential(x)
  ROOT w = f32[4] convert(e)
}
)");
  EXPECT_TRUE(run.changed);
  // The rounding of p to bf16 stays (as in XLA); exp computes in f32 and its
  // f32 result is the root: the convert back to bf16 and up again is gone.
  EXPECT_CHECKS(run.after, R"(
CHECK: %x = bf16[4] convert(f32[4] %p)
CHECK: f32[4] convert(bf16[4] %x)
CHECK: ROOT %e = f32[4] exponential(
)");
  EXPECT_EQ(run.after.find("bf16[4] convert(f32[4] %e)"), std::string::npos) << run.after;
  ExpectSameSemantics(run);
}

TEST(FloatNormalizationTest, ReduceGetsAnF32Reducer) {
  PassRun run = RunPass("float-normalization-bf16", R"(HloModule m
add {
  a = bf16[] parameter(0)
  b = bf16[] parameter(1)
  ROOT s = bf16[] add(a, b)
}
ENTRY main {
  x = bf16[8,4] parameter(0)
  z = bf16[] constant(0)
  ROOT r = bf16[4] reduce(x, z), dimensions={0}, to_apply=add
}
)");
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(
CHECK: %add{{.*}} {
CHECK: f32[] parameter(0)
CHECK: f32[] parameter(1)
CHECK: = f32[] add(
CHECK: bf16[] convert(f32[]
CHECK: ROOT {{.*}} = f32[] convert(bf16[]
CHECK: ENTRY
CHECK: f32[8,4] convert(bf16[8,4] %x)
CHECK: f32[] convert(bf16[] %z)
CHECK: %r = f32[4] reduce(
CHECK: ROOT {{.*}} = bf16[4] convert(f32[4] %r)
)");
  EXPECT_EQ(run.module->computation_count(), 2);
  ExpectSameSemantics(run);
}

TEST(FloatNormalizationTest, Bf16DotOperandsAreConverted) {
  PassRun run = RunPass("float-normalization-bf16", R"(HloModule m
ENTRY main {
  a = bf16[2,3] parameter(0)
  b = bf16[3,2] parameter(1)
  ROOT d = f32[2,2] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
)");
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(
CHECK: ROOT %d = f32[2,2] dot(f32[2,3] %convert{{.*}}, f32[3,2] %convert
)");
  ExpectSameSemantics(run);
}

TEST(FloatNormalizationTest, F8GoesToF16) {
  PassRun run = RunPass("float-normalization-f8e5m2", R"(HloModule m
ENTRY main {
  x = f8e5m2[4] parameter(0)
  ROOT n = f8e5m2[4] negate(x)
}
)");
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(
CHECK: f16[4] convert(f8e5m2[4] %x)
CHECK: %n = f16[4] negate(
CHECK: ROOT {{.*}} = f8e5m2[4] convert(f16[4] %n)
)");
  // (The evaluator computes nothing in f8 itself, so no equivalence check.)
}

TEST(FloatNormalizationTest, VariadicReduceGetsAnF32Reducer) {
  // A bf16 argmax: the bf16 input and init are widened, the value output is
  // f32 (converted back for its users) and the reducer is cloned with f32
  // values, its compares reading the parameters directly, as in XLA.
  PassRun run = RunPass("float-normalization-bf16", R"(HloModule m
argf {
  a = bf16[] parameter(0)
  ai = s32[] parameter(1)
  b = bf16[] parameter(2)
  bi = s32[] parameter(3)
  gt = pred[] compare(a, b), direction=GT
  v = bf16[] select(gt, a, b)
  i = s32[] select(gt, ai, bi)
  ROOT t = (bf16[], s32[]) tuple(v, i)
}
ENTRY main {
  x = bf16[2,5] parameter(0)
  io = s32[2,5] iota(), iota_dimension=1
  vi = bf16[] constant(-inf)
  zi = s32[] constant(0)
  am = (bf16[2], s32[2]) reduce(x, io, vi, zi), dimensions={1}, to_apply=argf
  v = bf16[2] get-tuple-element(am), index=0
  i = s32[2] get-tuple-element(am), index=1
  ROOT t = (bf16[2], s32[2]) tuple(v, i)
}
)");
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(
CHECK: (f32[], s32[]) {
CHECK: pred[] compare(f32[] %a{{.*}}, f32[] %b{{.*}}), direction=GT
CHECK: ENTRY
CHECK: f32[2,5] convert(bf16[2,5] %x)
CHECK: %am = (f32[2], s32[2]) reduce(f32[2,5]
CHECK: bf16[2] convert(f32[2]
CHECK: ROOT
)");
  ExpectSameSemantics(run);
}

// The pinned XLA:CPU hands a reduce-like op of 4096 elements or more with a max/min (or
// widening add) reducer to YNNPACK, and its bf16 float support leaves such ops and their
// reducers in bf16 (checked against XLA's dumps: a bf16 max pool of a PyTorch CNN stays bf16).
TEST(FloatNormalizationTest, ReduceLikesLeftToTheCpuLibraryStayBf16) {
  PassRun run = RunPass("float-normalization-bf16", R"(HloModule m
max {
  a = bf16[] parameter(0)
  b = bf16[] parameter(1)
  ROOT m = bf16[] maximum(a, b)
}
ENTRY main {
  x = bf16[4,8,16,16] parameter(0)
  ninf = bf16[] constant(-inf)
  pool = bf16[4,8,8,8] reduce-window(x, ninf), window={size=1x1x2x2 stride=1x1x2x2}, to_apply=max
  y = bf16[4096] parameter(1)
  top = bf16[] reduce(y, ninf), dimensions={0}, to_apply=max
  small = bf16[2,4,4,4] parameter(2)
  small_pool = bf16[2,4,2,2] reduce-window(small, ninf), window={size=1x1x2x2 stride=1x1x2x2}, to_apply=max
  overlap = bf16[4,8,7,7] reduce-window(x, ninf), window={size=1x1x3x3 stride=1x1x2x2}, to_apply=max
  ROOT t = (bf16[4,8,8,8], bf16[], bf16[2,4,2,2], bf16[4,8,7,7]) tuple(pool, top, small_pool, overlap)
}
)");
  EXPECT_TRUE(run.changed);
  // pool and top keep the reducer as it was (a clone, since the other two share it and are
  // normalized); under 4096 elements or with overlapping windows the op is computed in f32.
  EXPECT_CHECKS(run.after, R"(
CHECK: ROOT %m{{[.a-z0-9]*}} = bf16[] maximum(bf16[] %a{{.*}}, bf16[] %b{{.*}})
CHECK: %pool = bf16[4,8,8,8] reduce-window(bf16[4,8,16,16] %x, bf16[] %ninf)
CHECK: %top = bf16[] reduce(bf16[4096] %y, bf16[] %ninf)
CHECK: %small_pool = f32[2,4,2,2] reduce-window(f32[2,4,4,4]
CHECK: %overlap = f32[4,8,7,7] reduce-window(f32[4,8,16,16]
)");
  ExpectSameSemantics(run);
}

// A dot XLA:CPU gives YNNPACK keeps its bf16 operands through float normalization too; a
// bf16 x bf16 -> bf16 dot, which the library does not take, is computed in f32.
TEST(FloatNormalizationTest, CpuLibraryDotsKeepTheirBf16Operands) {
  PassRun run = RunPass("float-normalization-bf16", R"(HloModule m
ENTRY main {
  a = bf16[64,128] parameter(0)
  b = bf16[128,64] parameter(1)
  wide = f32[64,64] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  narrow = bf16[64,64] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT t = (f32[64,64], bf16[64,64]) tuple(wide, narrow)
}
)");
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(
CHECK: %wide = f32[64,64] dot(bf16[64,128] %a, bf16[128,64] %b)
CHECK: %narrow = f32[64,64] dot(f32[64,128]
)");
  ExpectSameSemantics(run);
}

TEST(FloatNormalizationTest, CpuLibraryReduceLikesNeedTheirSizeAndReducer) {
  // 4095 elements, and a bf16 sum (the library sums bf16 into f32 only): computed in f32.
  PassRun run = RunPass("float-normalization-bf16", R"(HloModule m
max {
  a = bf16[] parameter(0)
  b = bf16[] parameter(1)
  ROOT m = bf16[] maximum(a, b)
}
add {
  a = bf16[] parameter(0)
  b = bf16[] parameter(1)
  ROOT s = bf16[] add(a, b)
}
ENTRY main {
  x = bf16[4095] parameter(0)
  ninf = bf16[] constant(-inf)
  top = bf16[] reduce(x, ninf), dimensions={0}, to_apply=max
  y = bf16[64,128] parameter(1)
  zero = bf16[] constant(0)
  sum = bf16[64] reduce(y, zero), dimensions={1}, to_apply=add
  ROOT t = (bf16[], bf16[64]) tuple(top, sum)
}
)");
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(
CHECK: %top = f32[] reduce(f32[4095]
CHECK: %sum = f32[64] reduce(f32[64,128]
)");
  ExpectSameSemantics(run);
}

// A tuple all-reduce (PyTorch/XLA's gradient all-reduce of a bf16 step) is
// computed in f32 as XLA does it: each bf16 operand converted, each element
// read back and converted to bf16; its reducer keeps its bf16 type, as XLA
// never puts conversions into a collective's reduction.
TEST(FloatNormalizationTest, TupleAllReduceIsComputedInF32ItsReducerKept) {
  PassRun run = RunPass("float-normalization-bf16", R"(HloModule m, replica_count=4
add {
  a = bf16[] parameter(0)
  b = bf16[] parameter(1)
  ROOT s = bf16[] add(a, b)
}
ENTRY main {
  x = bf16[4] parameter(0)
  y = bf16[2,3] parameter(1)
  n = f32[] parameter(2)
  ar = (bf16[4], bf16[2,3], f32[]) all-reduce(x, y, n), replica_groups={{0,1,2,3}}, to_apply=add
  gx = bf16[4] get-tuple-element(ar), index=0
  gy = bf16[2,3] get-tuple-element(ar), index=1
  ROOT t = (bf16[4], bf16[2,3]) tuple(gx, gy)
}
)");
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(
CHECK: %add (a: bf16[], b: bf16[]) -> bf16[]
CHECK: f32[4] convert(bf16[4] %x)
CHECK: f32[2,3] convert(bf16[2,3] %y)
CHECK: %ar = (f32[4], f32[2,3], f32[]) all-reduce({{.*}}), to_apply=%add,
CHECK: bf16[4] convert(f32[4] %
CHECK: bf16[2,3] convert(f32[2,3] %
)");
}

// A variadic sort of bf16 keys and values sorts in f32, with an f32
// comparator, as XLA does it on the CPU.
TEST(FloatNormalizationTest, TupleSortIsComputedInF32) {
  PassRun run = RunPass("float-normalization-bf16", R"(HloModule m
less {
  a = bf16[] parameter(0)
  b = bf16[] parameter(1)
  c = s32[] parameter(2)
  d = s32[] parameter(3)
  ROOT lt = pred[] compare(a, b), direction=LT
}
ENTRY main {
  k = bf16[8] parameter(0)
  v = s32[8] parameter(1)
  ROOT s = (bf16[8], s32[8]) sort(k, v), dimensions={0}, to_apply=less
}
)");
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(
CHECK: %less.clone (a.clone: f32[], b.clone: f32[], c.clone: s32[], d.clone: s32[]) -> pred[]
CHECK: f32[8] convert(bf16[8] %k)
CHECK: %s = (f32[8], s32[8]) sort({{.*}}), dimensions={0}, to_apply=%less.clone
CHECK: bf16[8] convert(f32[8] %
)");
  ExpectSameSemantics(run);
}

TEST(FloatNormalizationTest, NoLowPrecisionNoChange) {
  PassRun run = RunPass("float-normalization-bf16", R"(HloModule m
ENTRY main {
  x = f32[4] parameter(0)
  c = bf16[4] convert(x)
  ROOT t = (f32[4], bf16[4]) tuple(x, c)
}
)");
  EXPECT_FALSE(run.changed);
}

}  // namespace
}  // namespace hlogym::testing
