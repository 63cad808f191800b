// dot_dimension_sorter: consecutive, unsorted contracting dimensions get
// sorted, the other side permuted with them.
#include "passes/control_flow_test_util.h"

namespace hlogym::testing {
namespace {

TEST(DotDimensionSorterTest, SortsLhsAndPermutesRhs) {
  PassRun run = RunPass("dot_dimension_sorter", R"(HloModule m
ENTRY main {
  a = f32[2,3,4] parameter(0)
  b = f32[4,5,3] parameter(1)
  ROOT d = f32[2,5] dot(a, b), lhs_contracting_dims={2,1}, rhs_contracting_dims={0,2}
}
)");
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(
CHECK: ROOT %d = f32[2,5] dot(f32[2,3,4] %a, f32[4,5,3] %b), lhs_contracting_dims={1,2}, rhs_contracting_dims={2,0}
)");
  ExpectSameSemantics(run);
}

TEST(DotDimensionSorterTest, SortsRhsWhenLhsIsNotConsecutive) {
  PassRun run = RunPass("dot_dimension_sorter", R"(HloModule m
ENTRY main {
  a = f32[3,7,4,2] parameter(0)
  b = f32[6,2,4,3] parameter(1)
  ROOT d = f32[2,7,6] dot(a, b), lhs_batch_dims={3}, rhs_batch_dims={1}, lhs_contracting_dims={2,0}, rhs_contracting_dims={2,3}
}
)");
  EXPECT_FALSE(run.changed) << "rhs {2,3} is already sorted";
  PassRun swapped = RunPass("dot_dimension_sorter", R"(HloModule m
ENTRY main {
  a = f32[3,7,4,2] parameter(0)
  b = f32[6,2,3,4] parameter(1)
  ROOT d = f32[2,7,6] dot(a, b), lhs_batch_dims={3}, rhs_batch_dims={1}, lhs_contracting_dims={2,0}, rhs_contracting_dims={3,2}
}
)");
  EXPECT_TRUE(swapped.changed);
  EXPECT_CHECKS(
      swapped.after,
      "CHECK: lhs_contracting_dims={0,2}, rhs_batch_dims={1}, rhs_contracting_dims={2,3}");
  ExpectSameSemantics(swapped);
}

TEST(DotDimensionSorterTest, ThreeContractingDimensionsInBothSides) {
  PassRun run = RunPass("dot_dimension_sorter", R"(HloModule m
ENTRY main {
  a = f32[2,3,4,5] parameter(0)
  b = f32[5,4,3,6] parameter(1)
  ROOT d = f32[2,6] dot(a, b), lhs_contracting_dims={3,1,2}, rhs_contracting_dims={0,2,1}
}
)");
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, "CHECK: lhs_contracting_dims={1,2,3}, rhs_contracting_dims={2,1,0}");
  ExpectSameSemantics(run);
}

TEST(DotDimensionSorterTest, NoChangeCases) {
  // Sorted already; a single contracting dimension; neither side
  // consecutive; a non-default operand layout; the other side consecutive
  // and sorted (sorting this side would unsort it).
  for (const char* hlo : {
           R"(HloModule m
ENTRY main {
  a = f32[2,3,4] parameter(0)
  b = f32[4,3,5] parameter(1)
  ROOT d = f32[2,5] dot(a, b), lhs_contracting_dims={2,1}, rhs_contracting_dims={0,1}
}
)",
           R"(HloModule m
ENTRY main {
  a = f32[2,3,4] parameter(0)
  b = f32[4,3,5] parameter(1)
  ROOT d = f32[2,5] dot(a, b), lhs_contracting_dims={1,2}, rhs_contracting_dims={1,0}
}
)",
           R"(HloModule m
ENTRY main {
  a = f32[2,3] parameter(0)
  b = f32[3,5] parameter(1)
  ROOT d = f32[2,5] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
)",
           R"(HloModule m
ENTRY main {
  a = f32[3,7,4] parameter(0)
  b = f32[4,6,3] parameter(1)
  ROOT d = f32[7,6] dot(a, b), lhs_contracting_dims={2,0}, rhs_contracting_dims={0,2}
}
)",
           R"(HloModule m
ENTRY main {
  a = f32[2,3,4]{1,2,0} parameter(0)
  b = f32[4,5,3]{2,1,0} parameter(1)
  ROOT d = f32[2,5]{1,0} dot(a, b), lhs_contracting_dims={2,1}, rhs_contracting_dims={0,2}
}
)"}) {
    PassRun run = RunPass("dot_dimension_sorter", hlo);
    EXPECT_FALSE(run.changed) << run.after;
  }
}

TEST(DotDimensionSorterTest, DefaultLayoutsAreSorted) {
  PassRun run = RunPass("dot_dimension_sorter", R"(HloModule m
ENTRY main {
  a = f32[2,3,4]{2,1,0} parameter(0)
  b = f32[4,5,3]{2,1,0} parameter(1)
  ROOT d = f32[2,5]{1,0} dot(a, b), lhs_contracting_dims={2,1}, rhs_contracting_dims={0,2}
}
)");
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, "CHECK: lhs_contracting_dims={1,2}, rhs_contracting_dims={2,0}");
}

}  // namespace
}  // namespace hlogym::testing
