// The printer emits callees before callers whatever the list order, because
// XLA's parser rejects a call to a computation it has not read yet.
#include <gtest/gtest.h>

#include "text/parser.h"
#include "text/printer.h"

namespace hlogym {
namespace {

TEST(PrinterOrderTest, CalleesArePrintedBeforeCallers) {
  // `caller` calls `add_b`, which is written after it.
  auto module = ParseModule(R"(
HloModule m
caller {
  p = f32[] parameter(0)
  ROOT c = f32[] call(p, p), to_apply=add_b
}
add_b {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}
ENTRY main {
  p = f32[] parameter(0)
  ROOT c = f32[] call(p), to_apply=caller
}
)");
  ASSERT_TRUE(module.ok()) << module.status();
  std::string printed = PrintModule(**module);
  size_t add_b = printed.find("%add_b (");
  size_t caller = printed.find("%caller (");
  size_t main = printed.find("ENTRY %main");
  ASSERT_NE(add_b, std::string::npos) << printed;
  ASSERT_NE(caller, std::string::npos) << printed;
  EXPECT_LT(add_b, caller) << printed;
  EXPECT_LT(caller, main) << printed;
  // The list itself is left as parsed.
  EXPECT_EQ((*module)->computations()[0]->name(), "caller");
}

}  // namespace
}  // namespace hlogym
