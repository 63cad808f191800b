// ragged-all-to-all-canonicalizer: offset and size operands become s64.
#include "passes/collectives/ragged_all_to_all_canonicalizer.h"

#include "passes/pass_test_util.h"

namespace hlogym::testing {
namespace {

TEST(RaggedAllToAllCanonicalizerTest, ConvertsS32OffsetsAndSizes) {
  PassRun run = RunPass("ragged-all-to-all-canonicalizer", R"(HloModule m
ENTRY main {
  in = f32[8] parameter(0)
  out = f32[8] parameter(1)
  in_off = s32[2] parameter(2)
  send = s32[2] parameter(3)
  out_off = s32[2] parameter(4)
  recv = s32[2] parameter(5)
  ROOT r = f32[8] ragged-all-to-all(in, out, in_off, send, out_off, recv), replica_groups={{0,1}}, metadata={op_name="ragged"}
}
)");
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(
CHECK: s64[2] convert(s32[2] %in_off)
CHECK: s64[2] convert(s32[2] %send)
CHECK: s64[2] convert(s32[2] %out_off)
CHECK: s64[2] convert(s32[2] %recv)
CHECK: ROOT {{.*}}f32[8] ragged-all-to-all(f32[8] %in, f32[8] %out, s64[2] %convert, s64[2] %convert.1, s64[2] %convert.2, {{.*}}s64[2] %convert.3), replica_groups={{[{][{]0,1[}][}]}}, metadata={op_name="ragged"}
)");
}

TEST(RaggedAllToAllCanonicalizerTest, S64IsLeftAlone) {
  PassRun run = RunPass("ragged-all-to-all-canonicalizer", R"(HloModule m
ENTRY main {
  in = f32[8] parameter(0)
  out = f32[8] parameter(1)
  in_off = s64[2] parameter(2)
  send = s64[2] parameter(3)
  out_off = s64[2] parameter(4)
  recv = s64[2] parameter(5)
  ROOT r = f32[8] ragged-all-to-all(in, out, in_off, send, out_off, recv), replica_groups={{0,1}}
}
)");
  EXPECT_FALSE(run.changed);
}

TEST(RaggedAllToAllCanonicalizerTest, NonIntegerOffsetsAreAnErrorNamingTheInstruction) {
  auto module = ParseModule(R"(HloModule m
ENTRY main {
  in = f32[8] parameter(0)
  out = f32[8] parameter(1)
  in_off = f32[2] parameter(2)
  send = f32[2] parameter(3)
  out_off = f32[2] parameter(4)
  recv = f32[2] parameter(5)
  ROOT bad = f32[8] ragged-all-to-all(in, out, in_off, send, out_off, recv), replica_groups={{0,1}}
}
)",
                            "bad.hlo");
  // The parser takes any element type for the offsets; the pass must refuse.
  ASSERT_TRUE(module.ok()) << module.status();
  RaggedAllToAllCanonicalizer pass;
  auto changed = pass.Run(**module);
  ASSERT_FALSE(changed.ok());
  EXPECT_NE(std::string(changed.status().message()).find("bad"), std::string::npos)
      << changed.status();
}

}  // namespace
}  // namespace hlogym::testing
