// Focused tests of the HLO text parser: syntax forms, shapes, constants and
// typed attributes.
#include "text/parser.h"

#include <cmath>
#include <string>

#include "gtest/gtest.h"
#include "hlo/literal.h"
#include "text/printer.h"
#include "text_test_util.h"

namespace hlogym {
namespace {

using testing::ExpectRoundTrip;
using testing::FindInstruction;
using testing::MustParse;
using testing::ParseError;

TEST(ParserTest, LongFormWithPercent) {
  auto m = MustParse(R"(HloModule m, entry_computation_layout={(f32[2]{0}, f32[2]{0})->f32[2]{0}}

ENTRY %main (a: f32[2], b: f32[2]) -> f32[2] {
  %a = f32[2]{0} parameter(0)
  %b = f32[2]{0} parameter(1)
  ROOT %add = f32[2]{0} add(f32[2]{0} %a, f32[2]{0} %b)
}
)");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->name(), "m");
  ASSERT_EQ(m->raw_attributes().size(), 1u);
  EXPECT_EQ(m->raw_attributes()[0].key, "entry_computation_layout");
  EXPECT_EQ(m->raw_attributes()[0].value, "{(f32[2]{0}, f32[2]{0})->f32[2]{0}}");
  Computation* entry = m->entry_computation();
  ASSERT_NE(entry, nullptr);
  EXPECT_EQ(entry->name(), "main");
  EXPECT_EQ(entry->num_parameters(), 2);
  Instruction* root = entry->root_instruction();
  EXPECT_EQ(root->name(), "add");
  EXPECT_EQ(root->opcode(), Opcode::kAdd);
  ASSERT_EQ(root->operand_count(), 2);
  EXPECT_EQ(root->operand(0)->name(), "a");
  EXPECT_EQ(root->operand(1)->name(), "b");
  EXPECT_EQ(root->shape().ToString(), "f32[2]{0}");
}

TEST(ParserTest, ShortFormWithoutPercentOrSignature) {
  auto m = MustParse(R"(HloModule m
ENTRY main.3 {
  Arg_0.1 = f32[] parameter(0)
  ROOT neg = f32[] negate(Arg_0.1)
}
)");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->entry_computation()->name(), "main.3");
  EXPECT_EQ(m->entry_computation()->root_instruction()->operand(0)->name(), "Arg_0.1");
}

TEST(ParserTest, CommentsEverywhere) {
  auto m = MustParse(R"(// leading comment
HloModule m /* block */
/* multi
   line */
ENTRY main {
  p0 = f32[] parameter(0) // trailing
  p1 = f32[] parameter(1)
  p2 = f32[] parameter(2)
  p3 = f32[] parameter(3)
  p4 = f32[] parameter(4)
  p5 = f32[] parameter(5)
  ROOT t = (f32[], f32[], f32[], f32[], f32[], /*index=5*/f32[]) tuple(p0, p1, p2, p3, p4, /*index=5*/p5)
}
)");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->entry_computation()->root_instruction()->operand_count(), 6);
  EXPECT_EQ(m->entry_computation()->root_instruction()->shape().tuple_shapes_size(), 6);
}

TEST(ParserTest, ForwardReferencesAndNoRoot) {
  auto m = MustParse(R"(HloModule m
ENTRY main {
  sum = f32[] add(x, y)
  x = f32[] parameter(0)
  y = f32[] multiply(x, x)
}
)");
  ASSERT_NE(m, nullptr);
  Computation* c = m->entry_computation();
  // No ROOT: the last instruction in the text is the root.
  EXPECT_EQ(c->root_instruction()->name(), "y");
  // Reordered so that operands come first.
  std::vector<std::string> order;
  for (const auto& inst : c->instructions()) order.push_back(inst->name());
  auto pos = [&](const std::string& n) {
    return std::find(order.begin(), order.end(), n) - order.begin();
  };
  EXPECT_LT(pos("x"), pos("y"));
  EXPECT_LT(pos("y"), pos("sum"));
  ExpectRoundTrip(PrintModule(*m));
}

TEST(ParserTest, ComputationReferencedBeforeDefinition) {
  auto m = MustParse(R"(HloModule m
ENTRY main {
  p = f32[4] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[] reduce(p, z), dimensions={0}, to_apply=add
}
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
)");
  ASSERT_NE(m, nullptr);
  Instruction* r = FindInstruction(*m, "r");
  ASSERT_EQ(r->called_computations().size(), 1u);
  EXPECT_EQ(r->to_apply()->name(), "add");
  EXPECT_EQ(m->entry_computation()->name(), "main");
}

TEST(ParserTest, EntryDefaultsToLastComputation) {
  auto m = MustParse(
      "HloModule m\nfoo {\n  ROOT p = f32[] parameter(0)\n}\nbar {\n  ROOT p = s32[] "
      "parameter(0)\n}\n");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->entry_computation()->name(), "bar");
}

TEST(ParserTest, ModuleHeaderAttributesVerbatim) {
  auto m = MustParse(
      R"(HloModule jit_f, is_scheduled=true, entry_computation_layout={(f32[8]{0}, /*index=5*/s32[])->(f32[8]{0})}, input_output_alias={ {0}: (0, {}, may-alias) }, buffer_donor={ (1, {}) }, frontend_attributes={a="b,c"}, num_partitions=2, replica_count=1, allow_spmd_sharding_propagation_to_output={true}

ENTRY main {
  ROOT p = f32[8] parameter(0)
}
)");
  ASSERT_NE(m, nullptr);
  const auto& attrs = m->raw_attributes();
  ASSERT_EQ(attrs.size(), 8u);
  EXPECT_EQ(attrs[0].key, "is_scheduled");
  EXPECT_EQ(attrs[0].value, "true");
  EXPECT_EQ(attrs[1].value, "{(f32[8]{0}, /*index=5*/s32[])->(f32[8]{0})}");
  EXPECT_EQ(attrs[2].value, "{ {0}: (0, {}, may-alias) }");
  EXPECT_EQ(attrs[3].key, "buffer_donor");
  EXPECT_EQ(attrs[4].value, "{a=\"b,c\"}");
  EXPECT_EQ(attrs[5].value, "2");
  EXPECT_EQ(attrs[7].key, "allow_spmd_sharding_propagation_to_output");
  ExpectRoundTrip(PrintModule(*m));
}

TEST(ParserTest, StackFrameTablesKeptAsTrailer) {
  const char* text = R"(HloModule m

FileNames
1 "a.py"

FunctionNames
1 "f"

FileLocations
1 {file_name_id=1 function_name_id=1 line=3 end_line=3 column=1 end_column=2}

StackFrames
1 {file_location_id=1 parent_frame_id=1}


ENTRY main {
  ROOT p = f32[] parameter(0), metadata={op_name="x" stack_frame_id=1}
}
)";
  auto m = MustParse(text);
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->trailer().substr(0, 9), "FileNames");
  EXPECT_NE(m->trailer().find("StackFrames\n1 {file_location_id=1 parent_frame_id=1}"),
            std::string::npos);
  EXPECT_EQ(m->trailer().back(), '}');
  std::string printed = ExpectRoundTrip(text);
  EXPECT_NE(printed.find("FunctionNames\n1 \"f\""), std::string::npos);
}

TEST(ParserTest, StackFrameTablesAfterComputations) {
  auto m = MustParse(
      "HloModule m\nENTRY main {\n  ROOT p = f32[] parameter(0)\n}\n\nFileNames\n1 \"a.py\"\n");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->trailer(), "FileNames\n1 \"a.py\"");
}

TEST(ParserTest, ComputationRawAttributes) {
  auto m = MustParse(R"(HloModule m
%callee (p: f32[]) -> f32[], execution_thread="host" {
  ROOT %p = f32[] parameter(0)
}
ENTRY %main (x: f32[]) -> f32[] {
  %x = f32[] parameter(0)
  ROOT %c = f32[] call(%x), to_apply=%callee
}
)");
  ASSERT_NE(m, nullptr);
  Computation* callee = m->FindComputation("callee");
  ASSERT_NE(callee, nullptr);
  ASSERT_EQ(callee->raw_attributes().size(), 1u);
  EXPECT_EQ(callee->raw_attributes()[0].key, "execution_thread");
  EXPECT_EQ(callee->raw_attributes()[0].value, "\"host\"");
  std::string printed = ExpectRoundTrip(PrintModule(*m));
  EXPECT_NE(printed.find("-> f32[], execution_thread=\"host\" {"), std::string::npos);
}

TEST(ParserTest, EveryPrimitiveType) {
  const char* types[] = {
      "pred",       "s1",       "s2",         "s4",        "s8",       "s16",
      "s32",        "s64",      "u1",         "u2",        "u4",       "u8",
      "u16",        "u32",      "u64",        "f16",       "bf16",     "f32",
      "f64",        "f4e2m1fn", "f8e3m4",     "f8e4m3",    "f8e4m3fn", "f8e4m3b11fnuz",
      "f8e4m3fnuz", "f8e5m2",   "f8e5m2fnuz", "f8e8m0fnu", "c64",      "c128"};
  for (const char* type : types) {
    std::string text = std::string("HloModule m\nENTRY main {\n  ROOT p = ") + type +
                       "[2,3]{1,0} parameter(0)\n}\n";
    auto m = MustParse(text);
    ASSERT_NE(m, nullptr) << type;
    const Shape& shape = m->entry_computation()->root_instruction()->shape();
    EXPECT_EQ(PrimitiveTypeName(shape.element_type()), type);
    EXPECT_EQ(shape.ToString(), std::string(type) + "[2,3]{1,0}");
  }
}

TEST(ParserTest, ShapeForms) {
  auto s = ParseShape("f32[2,<=3,?]{2,1,0}");
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(s->dimensions(0), 2);
  EXPECT_FALSE(s->is_dynamic_dimension(0));
  EXPECT_TRUE(s->is_dynamic_dimension(1));
  EXPECT_EQ(s->dimensions(1), 3);
  EXPECT_EQ(s->dimensions(2), Shape::kUnboundedSize);
  EXPECT_EQ(s->ToString(), "f32[2,<=3,?]{2,1,0}");

  auto t = ParseShape("((f32[], s32[4]{0}), token[], ())");
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_TRUE(t->IsTuple());
  EXPECT_EQ(t->tuple_shapes_size(), 3);
  EXPECT_TRUE(t->tuple_shapes(1).IsToken());
  EXPECT_EQ(t->tuple_shapes(2).tuple_shapes_size(), 0);
  EXPECT_EQ(t->ToString(), "((f32[], s32[4]{0}), token[], ())");

  auto scalar = ParseShape("f32[]");
  ASSERT_TRUE(scalar.ok());
  EXPECT_TRUE(scalar->IsScalar());
  EXPECT_FALSE(scalar->has_layout());
}

TEST(ParserTest, LayoutDetailsKeptVerbatim) {
  auto s = ParseShape("bf16[256,128]{1,0:T(8,128)(2,1)E(16)S(1)}");
  ASSERT_TRUE(s.ok()) << s.status().message();
  ASSERT_TRUE(s->has_layout());
  EXPECT_EQ(s->layout()->minor_to_major, (std::vector<int64_t>{1, 0}));
  EXPECT_EQ(s->layout()->details, "T(8,128)(2,1)E(16)S(1)");
  EXPECT_EQ(s->ToString(), "bf16[256,128]{1,0:T(8,128)(2,1)E(16)S(1)}");
  auto m =
      MustParse("HloModule m\nENTRY main {\n  ROOT p = s4[64]{0:T(128)E(4)} parameter(0)\n}\n");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->entry_computation()->root_instruction()->shape().ToString(), "s4[64]{0:T(128)E(4)}");
}

TEST(ParserTest, ShapeErrors) {
  EXPECT_FALSE(ParseShape("f33[2]").ok());
  EXPECT_FALSE(ParseShape("f32[2").ok());
  EXPECT_FALSE(ParseShape("f32[2]{0,1}").ok());
  EXPECT_FALSE(ParseShape("f32[2,2]{0,0}").ok());
  EXPECT_FALSE(ParseShape("f32[99999999999999999999]").ok());
  EXPECT_FALSE(ParseShape("f32[4294967296,4294967296,4294967296]").ok());
  EXPECT_FALSE(ParseShape("f32[-1]").ok());
  EXPECT_FALSE(ParseShape("f32[2] extra").ok());
  std::string deep(200, '(');
  deep += "f32[]";
  deep += std::string(200, ')');
  auto d = ParseShape(deep);
  ASSERT_FALSE(d.ok());
  EXPECT_NE(std::string(d.status().message()).find("too deep"), std::string::npos);
}

// ---------------------------------------------------------------------------
// Constants.

const Literal& ConstantOf(const Module& m, std::string_view name) {
  return FindInstruction(m, name)->literal();
}

TEST(ParserTest, ScalarConstants) {
  auto m = MustParse(R"(HloModule m
ENTRY main {
  a = f32[] constant(1.5)
  b = s32[] constant(-2147483648)
  c = u64[] constant(18446744073709551615)
  d = pred[] constant(true)
  e = pred[] constant(false)
  f = s64[] constant(9223372036854775807)
  g = bf16[] constant(-0.25)
  h = f64[] constant(1e-300)
  i = u8[] constant(255)
  j = s4[] constant(-8)
  ROOT t = (f32[], s32[]) tuple(a, b)
}
)");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(ConstantOf(*m, "a").GetAsDouble(0), 1.5);
  EXPECT_EQ(ConstantOf(*m, "b").GetAsInt64(0), -2147483648LL);
  EXPECT_EQ(ConstantOf(*m, "c").GetAsUint64(0), 18446744073709551615ULL);
  EXPECT_TRUE(ConstantOf(*m, "d").GetAsBool(0));
  EXPECT_FALSE(ConstantOf(*m, "e").GetAsBool(0));
  EXPECT_EQ(ConstantOf(*m, "f").GetAsInt64(0), 9223372036854775807LL);
  EXPECT_EQ(ConstantOf(*m, "g").GetAsDouble(0), -0.25);
  EXPECT_EQ(ConstantOf(*m, "h").GetAsDouble(0), 1e-300);
  EXPECT_EQ(ConstantOf(*m, "i").GetAsInt64(0), 255);
  EXPECT_EQ(ConstantOf(*m, "j").GetAsInt64(0), -8);
  ExpectRoundTrip(PrintModule(*m));
}

TEST(ParserTest, SpecialFloatConstants) {
  auto m = MustParse(R"(HloModule m
ENTRY main {
  a = f32[] constant(inf)
  b = f32[] constant(-inf)
  c = f32[] constant(nan)
  d = f32[] constant(-nan)
  e = f16[4] constant({inf, -inf, nan, 0})
  f = f64[] constant(0x1.8p1)
  ROOT g = f32[] constant(nan(0x7))
}
)");
  ASSERT_NE(m, nullptr);
  EXPECT_TRUE(std::isinf(ConstantOf(*m, "a").GetAsDouble(0)));
  EXPECT_GT(ConstantOf(*m, "a").GetAsDouble(0), 0);
  EXPECT_LT(ConstantOf(*m, "b").GetAsDouble(0), 0);
  EXPECT_TRUE(std::isnan(ConstantOf(*m, "c").GetAsDouble(0)));
  EXPECT_TRUE(std::isnan(ConstantOf(*m, "d").GetAsDouble(0)));
  EXPECT_TRUE(std::signbit(ConstantOf(*m, "d").GetAsDouble(0)));
  EXPECT_TRUE(std::isinf(ConstantOf(*m, "e").GetAsDouble(1)));
  EXPECT_TRUE(std::isnan(ConstantOf(*m, "e").GetAsDouble(2)));
  EXPECT_EQ(ConstantOf(*m, "f").GetAsDouble(0), 3.0);
  EXPECT_EQ(ConstantOf(*m, "g").GetBits(0), 0x7f800007u);
  ExpectRoundTrip(PrintModule(*m));
}

TEST(ParserTest, ArrayConstants) {
  auto m = MustParse(R"(HloModule m
ENTRY main {
  a = s32[2,3]{1,0} constant({ { 1, 2, 3 }, { 4, 5, 6 } })
  b = f32[0] constant({})
  c = f32[2,0] constant({ {}, {} })
  d = pred[3] constant({true, false, 1})
  e = u4[2] constant({15, 0})
  f = f32[2,2] constant({...})
  ROOT g = f32[1,1,2] constant({{{1, 2}}})
}
)");
  ASSERT_NE(m, nullptr);
  const Literal& a = ConstantOf(*m, "a");
  for (int i = 0; i < 6; ++i) EXPECT_EQ(a.GetAsInt64(i), i + 1);
  EXPECT_EQ(ConstantOf(*m, "b").element_count(), 0);
  EXPECT_TRUE(ConstantOf(*m, "d").GetAsBool(2));
  EXPECT_FALSE(ConstantOf(*m, "d").GetAsBool(1));
  EXPECT_EQ(ConstantOf(*m, "e").GetAsInt64(0), 15);
  EXPECT_TRUE(ConstantOf(*m, "f").elided());
  EXPECT_EQ(ConstantOf(*m, "g").GetAsDouble(1), 2.0);
  ExpectRoundTrip(PrintModule(*m));
}

TEST(ParserTest, ComplexAndTupleConstants) {
  auto m = MustParse(R"(HloModule m
ENTRY main {
  a = c64[] constant((1, 0.5))
  b = c128[2] constant({(1, 2), (-3, inf)})
  ROOT t = (s32[], (f32[2], pred[])) constant((7, ({1.5, 2.5}, true)))
}
)");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(ConstantOf(*m, "a").GetAsComplex(0), std::complex<double>(1, 0.5));
  EXPECT_EQ(ConstantOf(*m, "b").GetAsComplex(1).real(), -3);
  EXPECT_TRUE(std::isinf(ConstantOf(*m, "b").GetAsComplex(1).imag()));
  const Literal& t = ConstantOf(*m, "t");
  ASSERT_EQ(t.tuple_elements().size(), 2u);
  EXPECT_EQ(t.tuple_elements()[0].GetAsInt64(0), 7);
  EXPECT_EQ(t.tuple_elements()[1].tuple_elements()[0].GetAsDouble(1), 2.5);
  EXPECT_TRUE(t.tuple_elements()[1].tuple_elements()[1].GetAsBool(0));
  ExpectRoundTrip(PrintModule(*m));
}

TEST(ParserTest, OldStyleConstantWithShape) {
  auto m =
      MustParse("HloModule m\nENTRY main {\n  ROOT c = f32[2]{0} constant(f32[2]{0} {1, 2})\n}\n");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(ConstantOf(*m, "c").GetAsDouble(1), 2.0);
}

TEST(ParserTest, ConstantErrors) {
  EXPECT_NE(
      ParseError("HloModule m\nENTRY e {\n  ROOT c = s8[] constant(128)\n}\n").find("out of range"),
      std::string::npos);
  EXPECT_NE(
      ParseError("HloModule m\nENTRY e {\n  ROOT c = u8[] constant(-1)\n}\n").find("out of range"),
      std::string::npos);
  EXPECT_NE(ParseError("HloModule m\nENTRY e {\n  ROOT c = f32[2] constant({1, 2, 3})\n}\n")
                .find("too many elements"),
            std::string::npos);
  EXPECT_NE(ParseError("HloModule m\nENTRY e {\n  ROOT c = f32[3] constant({1, 2})\n}\n"), "");
  EXPECT_NE(ParseError("HloModule m\nENTRY e {\n  ROOT c = f32[] constant(abc)\n}\n")
                .find("invalid number"),
            std::string::npos);
  EXPECT_NE(ParseError("HloModule m\nENTRY e {\n  ROOT c = pred[] constant(2)\n}\n").find("pred"),
            std::string::npos);
  EXPECT_EQ(
      ParseError("HloModule m\nENTRY e {\n  ROOT c = f32[100000,100000] constant({...})\n}\n"), "");
  EXPECT_NE(ParseError("HloModule m\nENTRY e {\n  ROOT c = f32[100000,100000] constant({1})\n}\n")
                .find("too large"),
            std::string::npos);
  EXPECT_NE(ParseError("HloModule m\nENTRY e {\n  ROOT c = (f32[100000,100000], "
                       "f32[100000,100000]) constant(({1}, {2}))\n}\n")
                .find("too large"),
            std::string::npos);
}

// ---------------------------------------------------------------------------
// Typed attributes, one opcode family at a time.

TEST(ParserTest, ElementwiseAndCompare) {
  auto m = MustParse(R"(HloModule m
ENTRY main {
  a = f32[4] parameter(0)
  b = f32[4] parameter(1)
  c = pred[4] compare(a, b), direction=LT, type=TOTALORDER
  d = pred[4] compare(a, b), direction=NE
  e = f32[4] select(c, a, b)
  f = f32[4] clamp(a, b, e)
  ROOT g = f32[4] exponential(f)
}
)");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(FindInstruction(*m, "c")->attrs().comparison_direction, ComparisonDirection::kLt);
  EXPECT_EQ(FindInstruction(*m, "c")->attrs().comparison_type, ComparisonType::kTotalOrder);
  EXPECT_EQ(FindInstruction(*m, "d")->attrs().comparison_type, ComparisonType::kUnset);
  EXPECT_EQ(FindInstruction(*m, "f")->opcode(), Opcode::kClamp);
  std::string printed = ExpectRoundTrip(PrintModule(*m));
  EXPECT_NE(printed.find("direction=LT, type=TOTALORDER"), std::string::npos);
}

TEST(ParserTest, ShapeManipulation) {
  auto m = MustParse(R"(HloModule m
ENTRY main {
  p = f32[2,3]{1,0} parameter(0)
  t = f32[3,2]{1,0} transpose(p), dimensions={1,0}
  b = f32[4,3,2]{2,1,0} broadcast(t), dimensions={1,2}
  r = f32[6]{0} reshape(p)
  v = f32[6]{0} reverse(r), dimensions={0}
  s = f32[1,2]{1,0} slice(p), slice={[0:1], [0:3:2]}
  z = f32[] constant(0)
  pd = f32[5,8]{1,0} pad(p, z), padding=1_2x0_1_2
  c = f32[12]{0} concatenate(r, v), dimensions={0}
  i = s32[2,3]{1,0} iota(), iota_dimension=1
  ROOT bc = u32[6]{0} bitcast-convert(r)
}
)");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(FindInstruction(*m, "t")->attrs().dimensions, (std::vector<int64_t>{1, 0}));
  EXPECT_EQ(FindInstruction(*m, "b")->attrs().dimensions, (std::vector<int64_t>{1, 2}));
  const auto& slice = FindInstruction(*m, "s")->attrs().slice;
  ASSERT_EQ(slice.size(), 2u);
  EXPECT_EQ(slice[1].start, 0);
  EXPECT_EQ(slice[1].limit, 3);
  EXPECT_EQ(slice[1].stride, 2);
  EXPECT_EQ(slice[0].stride, 1);
  const auto& padding = FindInstruction(*m, "pd")->attrs().padding;
  ASSERT_EQ(padding.size(), 2u);
  EXPECT_EQ(padding[0].low, 1);
  EXPECT_EQ(padding[0].high, 2);
  EXPECT_EQ(padding[0].interior, 0);
  EXPECT_EQ(padding[1].interior, 2);
  EXPECT_EQ(FindInstruction(*m, "i")->attrs().iota_dimension, 1);
  std::string printed = ExpectRoundTrip(PrintModule(*m));
  EXPECT_NE(printed.find("slice={[0:1], [0:3:2]}"), std::string::npos);
  EXPECT_NE(printed.find("padding=1_2_0x0_1_2"), std::string::npos);
}

TEST(ParserTest, DynamicSliceAndUpdate) {
  auto m = MustParse(R"(HloModule m
ENTRY main {
  p = f32[8,4] parameter(0)
  i = s32[] parameter(1)
  ds = f32[2,4] dynamic-slice(p, i, i), dynamic_slice_sizes={2,4}
  ROOT dus = f32[8,4] dynamic-update-slice(p, ds, i, i)
}
)");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(FindInstruction(*m, "ds")->attrs().dynamic_slice_sizes, (std::vector<int64_t>{2, 4}));
  EXPECT_EQ(FindInstruction(*m, "dus")->operand_count(), 4);
  ExpectRoundTrip(PrintModule(*m));
}

TEST(ParserTest, DotAttributes) {
  auto m = MustParse(R"(HloModule m
ENTRY main {
  a = f32[2,3,4] parameter(0)
  b = f32[2,4,5] parameter(1)
  ROOT d = f32[2,3,5] dot(a, b), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={1}, operand_precision={highest,default}, algorithm=dot_bf16_bf16_f32
}
)");
  ASSERT_NE(m, nullptr);
  const Instruction* d = FindInstruction(*m, "d");
  ASSERT_TRUE(d->attrs().dot_dimension_numbers.has_value());
  EXPECT_EQ(d->attrs().dot_dimension_numbers->lhs_batch_dimensions, (std::vector<int64_t>{0}));
  EXPECT_EQ(d->attrs().dot_dimension_numbers->lhs_contracting_dimensions,
            (std::vector<int64_t>{2}));
  EXPECT_EQ(d->attrs().dot_dimension_numbers->rhs_contracting_dimensions,
            (std::vector<int64_t>{1}));
  ASSERT_EQ(d->attrs().operand_precision.size(), 2u);
  EXPECT_EQ(d->attrs().operand_precision[0], Precision::kHighest);
  // dot's algorithm= is not the rng algorithm: kept raw.
  ASSERT_NE(d->attrs().FindRaw("algorithm"), nullptr);
  EXPECT_EQ(d->attrs().FindRaw("algorithm")->value, "dot_bf16_bf16_f32");
  std::string printed = ExpectRoundTrip(PrintModule(*m));
  EXPECT_NE(printed.find("lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, "
                         "rhs_contracting_dims={1}, operand_precision={highest,default}"),
            std::string::npos);
}

TEST(ParserTest, RaggedDot) {
  auto m = MustParse(R"(HloModule m
ENTRY main {
  a = f32[16,8] parameter(0)
  b = f32[4,8,6] parameter(1)
  g = s64[4] parameter(2)
  ROOT d = f32[16,6] ragged-dot(a, b, g), lhs_contracting_dims={1}, rhs_contracting_dims={1}, lhs_ragged_dims={0}, rhs_group_dims={0}
}
)");
  ASSERT_NE(m, nullptr);
  const Instruction* d = FindInstruction(*m, "d");
  ASSERT_TRUE(d->attrs().ragged_dot_dimension_numbers.has_value());
  EXPECT_EQ(d->attrs().ragged_dot_dimension_numbers->rhs_group_dimensions,
            (std::vector<int64_t>{0}));
  ExpectRoundTrip(PrintModule(*m));
}

TEST(ParserTest, ConvolutionAttributes) {
  auto m = MustParse(R"(HloModule m
ENTRY main {
  x = f32[4,16,16,3] parameter(0)
  k = f32[3,3,3,8] parameter(1)
  ROOT c = f32[4,8,8,8] convolution(x, k), window={size=3x3 stride=2x2 pad=1_1x0_-1 lhs_dilate=1x2 rhs_dilate=2x1 rhs_reversal=0x1}, dim_labels=b01f_01io->b01f, feature_group_count=1, batch_group_count=1, operand_precision={high,default}
}
)");
  ASSERT_NE(m, nullptr);
  const Instruction* c = FindInstruction(*m, "c");
  ASSERT_TRUE(c->attrs().window.has_value());
  const auto& w = c->attrs().window->dimensions;
  ASSERT_EQ(w.size(), 2u);
  EXPECT_EQ(w[0].size, 3);
  EXPECT_EQ(w[0].stride, 2);
  EXPECT_EQ(w[0].padding_low, 1);
  EXPECT_EQ(w[1].padding_high, -1);
  EXPECT_EQ(w[1].base_dilation, 2);
  EXPECT_EQ(w[0].window_dilation, 2);
  EXPECT_TRUE(w[1].window_reversal);
  const auto& d = *c->attrs().convolution_dimension_numbers;
  EXPECT_EQ(d.input_batch_dimension, 0);
  EXPECT_EQ(d.input_feature_dimension, 3);
  EXPECT_EQ(d.input_spatial_dimensions, (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(d.kernel_input_feature_dimension, 2);
  EXPECT_EQ(d.kernel_output_feature_dimension, 3);
  EXPECT_EQ(d.kernel_spatial_dimensions, (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(d.output_feature_dimension, 3);
  std::string printed = ExpectRoundTrip(PrintModule(*m));
  EXPECT_NE(printed.find("window={size=3x3 stride=2x2 pad=1_1x0_-1 lhs_dilate=1x2 rhs_dilate=2x1 "
                         "rhs_reversal=0x1}, dim_labels=b01f_01io->b01f"),
            std::string::npos);
  EXPECT_EQ(printed.find("feature_group_count"), std::string::npos);  // default not printed
}

TEST(ParserTest, ConvolutionOtherLabelsAndGroups) {
  auto m = MustParse(R"(HloModule m
ENTRY main {
  x = f32[4,6,10] parameter(0)
  k = f32[3,3,6] parameter(1)
  ROOT c = f32[4,6,8] convolution(x, k), window={size=3}, dim_labels=bf0_0io->bf0, feature_group_count=2
}
)");
  ASSERT_NE(m, nullptr);
  const Instruction* c = FindInstruction(*m, "c");
  EXPECT_EQ(c->attrs().feature_group_count, 2);
  EXPECT_EQ(c->attrs().convolution_dimension_numbers->input_spatial_dimensions,
            (std::vector<int64_t>{2}));
  std::string printed = ExpectRoundTrip(PrintModule(*m));
  EXPECT_NE(printed.find("dim_labels=bf0_0io->bf0, feature_group_count=2"), std::string::npos);
}

TEST(ParserTest, GatherAttributes) {
  auto m = MustParse(R"(HloModule m
ENTRY main {
  op = f32[2,10,4] parameter(0)
  idx = s32[2,3,1] parameter(1)
  ROOT g = f32[2,3,4] gather(op, idx), offset_dims={2}, collapsed_slice_dims={1}, start_index_map={1}, operand_batching_dims={0}, start_indices_batching_dims={0}, index_vector_dim=2, slice_sizes={1,1,4}, indices_are_sorted=true
}
)");
  ASSERT_NE(m, nullptr);
  const Instruction* g = FindInstruction(*m, "g");
  const auto& d = *g->attrs().gather_dimension_numbers;
  EXPECT_EQ(d.offset_dims, (std::vector<int64_t>{2}));
  EXPECT_EQ(d.collapsed_slice_dims, (std::vector<int64_t>{1}));
  EXPECT_EQ(d.start_index_map, (std::vector<int64_t>{1}));
  EXPECT_EQ(d.operand_batching_dims, (std::vector<int64_t>{0}));
  EXPECT_EQ(d.start_indices_batching_dims, (std::vector<int64_t>{0}));
  EXPECT_EQ(d.index_vector_dim, 2);
  EXPECT_EQ(g->attrs().gather_slice_sizes, (std::vector<int64_t>{1, 1, 4}));
  EXPECT_TRUE(g->attrs().indices_are_sorted);
  std::string printed = ExpectRoundTrip(PrintModule(*m));
  EXPECT_NE(printed.find("offset_dims={2}, collapsed_slice_dims={1}, start_index_map={1}, "
                         "operand_batching_dims={0}, start_indices_batching_dims={0}, "
                         "index_vector_dim=2, slice_sizes={1,1,4}, indices_are_sorted=true"),
            std::string::npos);
}

TEST(ParserTest, ScatterAttributes) {
  auto m = MustParse(R"(HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY main {
  op = f32[10] parameter(0)
  idx = s32[3,1] parameter(1)
  upd = f32[3] parameter(2)
  ROOT s = f32[10] scatter(op, idx, upd), update_window_dims={}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, indices_are_sorted=true, unique_indices=true, to_apply=add
}
)");
  ASSERT_NE(m, nullptr);
  const Instruction* s = FindInstruction(*m, "s");
  // Two instructions are named "s"; FindInstruction returns the first (in add).
  const Instruction* scatter = m->entry_computation()->root_instruction();
  (void)s;
  const auto& d = *scatter->attrs().scatter_dimension_numbers;
  EXPECT_TRUE(d.update_window_dims.empty());
  EXPECT_EQ(d.inserted_window_dims, (std::vector<int64_t>{0}));
  EXPECT_EQ(d.scatter_dims_to_operand_dims, (std::vector<int64_t>{0}));
  EXPECT_EQ(d.index_vector_dim, 1);
  EXPECT_TRUE(scatter->attrs().indices_are_sorted);
  EXPECT_TRUE(scatter->attrs().unique_indices);
  EXPECT_EQ(scatter->to_apply()->name(), "add");
  ExpectRoundTrip(PrintModule(*m));
}

TEST(ParserTest, ReduceWindowAndSelectAndScatter) {
  auto m = MustParse(R"(HloModule m
max {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT m = f32[] maximum(a, b)
}
ge {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = pred[] compare(a, b), direction=GE
}
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY main {
  x = f32[4,4] parameter(0)
  z = f32[] constant(0)
  rw = f32[2,2] reduce-window(x, z), window={size=2x2 stride=2x2}, to_apply=max
  ROOT ss = f32[4,4] select-and-scatter(x, rw, z), window={size=2x2 stride=2x2}, select=ge, scatter=add
}
)");
  ASSERT_NE(m, nullptr);
  const Instruction* ss = m->entry_computation()->root_instruction();
  ASSERT_EQ(ss->called_computations().size(), 2u);
  EXPECT_EQ(ss->called_computations()[0]->name(), "ge");
  EXPECT_EQ(ss->called_computations()[1]->name(), "add");
  EXPECT_EQ(FindInstruction(*m, "rw")->attrs().window->dimensions[1].stride, 2);
  std::string printed = ExpectRoundTrip(PrintModule(*m));
  EXPECT_NE(printed.find("select=%ge, scatter=%add"), std::string::npos);
}

TEST(ParserTest, ControlFlow) {
  auto m = MustParse(R"(HloModule m
body {
  p = (s32[], f32[]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  ROOT t = (s32[], f32[]) tuple(i, f)
  f = f32[] get-tuple-element(p), index=1
}
cond {
  p = (s32[], f32[]) parameter(0)
  ROOT c = pred[] constant(false)
}
b0 {
  ROOT p = f32[] parameter(0)
}
b1 {
  p = f32[] parameter(0)
  ROOT n = f32[] negate(p)
}
ENTRY main {
  x = (s32[], f32[]) parameter(0)
  w = (s32[], f32[]) while(x), body=body, condition=cond
  pr = pred[] parameter(1)
  v = f32[] get-tuple-element(w), index=1
  c1 = f32[] conditional(pr, v, v), true_computation=b0, false_computation=b1
  k = s32[] parameter(2)
  ROOT c2 = f32[] conditional(k, v, v, v), branch_computations={b0, b1, b0}
}
)");
  ASSERT_NE(m, nullptr);
  const Instruction* w = FindInstruction(*m, "w");
  ASSERT_EQ(w->called_computations().size(), 2u);
  EXPECT_EQ(w->called_computations()[0]->name(), "cond");
  EXPECT_EQ(w->called_computations()[1]->name(), "body");
  const Instruction* c1 = FindInstruction(*m, "c1");
  EXPECT_EQ(c1->called_computations()[0]->name(), "b0");
  EXPECT_EQ(c1->called_computations()[1]->name(), "b1");
  EXPECT_EQ(FindInstruction(*m, "c2")->called_computations().size(), 3u);
  EXPECT_EQ(FindInstruction(*m, "v")->attrs().tuple_index, 1);
  std::string printed = ExpectRoundTrip(PrintModule(*m));
  EXPECT_NE(printed.find("condition=%cond, body=%body"), std::string::npos);
  EXPECT_NE(printed.find("true_computation=%b0, false_computation=%b1"), std::string::npos);
  EXPECT_NE(printed.find("branch_computations={%b0, %b1, %b0}"), std::string::npos);
}

TEST(ParserTest, FusionAndCall) {
  auto m = MustParse(R"(HloModule m
%fused (p0: f32[4]) -> f32[4] {
  %p0 = f32[4]{0} parameter(0)
  ROOT %e = f32[4]{0} exponential(f32[4]{0} %p0)
}
ENTRY %main (x: f32[4]) -> f32[4] {
  %x = f32[4]{0} parameter(0)
  %f = f32[4]{0} fusion(f32[4]{0} %x), kind=kLoop, calls=%fused, backend_config={"outer_dimension_partitions":[]}
  ROOT %c = f32[4]{0} call(%f), to_apply=%fused, frontend_attributes={xla_cpu_small_call="true"}
}
)");
  ASSERT_NE(m, nullptr);
  const Instruction* f = FindInstruction(*m, "f");
  EXPECT_EQ(f->attrs().fusion_kind, FusionKind::kLoop);
  EXPECT_EQ(f->called_computations()[0]->name(), "fused");
  ASSERT_EQ(f->attrs().raw.size(), 1u);
  EXPECT_EQ(f->attrs().raw[0].value, "{\"outer_dimension_partitions\":[]}");
  std::string printed = ExpectRoundTrip(PrintModule(*m));
  EXPECT_NE(printed.find("kind=kLoop, calls=%fused, backend_config="), std::string::npos);
}

TEST(ParserTest, CustomCall) {
  auto m = MustParse(R"(HloModule m
comp {
  ROOT p = f32[] parameter(0)
}
ENTRY main {
  x = f32[4] parameter(0)
  ROOT cc = (f32[4], s32[]) custom-call(x), custom_call_target="my\"target", api_version=API_VERSION_TYPED_FFI, custom_call_has_side_effect=true, output_to_operand_aliasing={{0}: (0, {})}, operand_layout_constraints={f32[4]{0}}, called_computations={comp}, backend_config="a\"b,c"
}
)");
  ASSERT_NE(m, nullptr);
  const Instruction* cc = m->entry_computation()->root_instruction();
  EXPECT_EQ(cc->attrs().custom_call_target, "my\"target");
  ASSERT_EQ(cc->called_computations().size(), 1u);
  ASSERT_EQ(cc->attrs().raw.size(), 5u);
  EXPECT_EQ(cc->attrs().raw[0].key, "api_version");
  EXPECT_EQ(cc->attrs().raw[2].value, "{{0}: (0, {})}");
  EXPECT_EQ(cc->attrs().raw[4].value, "\"a\\\"b,c\"");
  std::string printed = ExpectRoundTrip(PrintModule(*m));
  EXPECT_NE(printed.find("custom_call_target=\"my\\\"target\""), std::string::npos);
}

TEST(ParserTest, SortTopKAndReduce) {
  auto m = MustParse(R"(HloModule m
lt {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  c = s32[] parameter(2)
  d = s32[] parameter(3)
  ROOT r = pred[] compare(a, b), direction=LT
}
ENTRY main {
  x = f32[8] parameter(0)
  i = s32[8] iota(), iota_dimension=0
  s = (f32[8], s32[8]) sort(x, i), dimensions={0}, is_stable=true, to_apply=lt
  ROOT t = (f32[2], s32[2]) topk(x), k=2, largest=false
}
)");
  ASSERT_NE(m, nullptr);
  const Instruction* s = FindInstruction(*m, "s");
  EXPECT_TRUE(s->attrs().is_stable);
  EXPECT_EQ(s->attrs().dimensions, (std::vector<int64_t>{0}));
  const Instruction* t = FindInstruction(*m, "t");
  EXPECT_EQ(t->attrs().k, 2);
  EXPECT_FALSE(t->attrs().largest);
  std::string printed = ExpectRoundTrip(PrintModule(*m));
  EXPECT_NE(printed.find("dimensions={0}, is_stable=true, to_apply=%lt"), std::string::npos);
  EXPECT_NE(printed.find("k=2, largest=false"), std::string::npos);
}

TEST(ParserTest, RngFftReducePrecisionAndLinalg) {
  auto m = MustParse(R"(HloModule m
ENTRY main {
  st = u64[2] parameter(0)
  g = (u64[2], u32[4]) rng-bit-generator(st), algorithm=rng_philox
  lo = f32[] parameter(1)
  r = f32[4] rng(lo, lo), distribution=rng_normal
  c = c64[8] parameter(2)
  f = c64[8] fft(c), fft_type=IFFT, fft_length={8}
  rp = f32[4] reduce-precision(r), exponent_bits=5, mantissa_bits=10
  a = f32[3,3] parameter(3)
  ch = f32[3,3] cholesky(a), lower=true
  ROOT ts = f32[3,3] triangular-solve(a, ch), left_side=true, lower=true, unit_diagonal=true, transpose_a=TRANSPOSE
}
)");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(FindInstruction(*m, "g")->attrs().rng_algorithm, RandomAlgorithm::kPhilox);
  EXPECT_EQ(FindInstruction(*m, "r")->attrs().rng_distribution, RandomDistribution::kNormal);
  EXPECT_EQ(FindInstruction(*m, "f")->attrs().fft_type, FftType::kIfft);
  EXPECT_EQ(FindInstruction(*m, "f")->attrs().fft_length, (std::vector<int64_t>{8}));
  EXPECT_EQ(FindInstruction(*m, "rp")->attrs().exponent_bits, 5);
  EXPECT_EQ(FindInstruction(*m, "rp")->attrs().mantissa_bits, 10);
  EXPECT_TRUE(FindInstruction(*m, "ch")->attrs().lower);
  const Instruction* ts = FindInstruction(*m, "ts");
  EXPECT_TRUE(ts->attrs().left_side);
  EXPECT_TRUE(ts->attrs().unit_diagonal);
  EXPECT_EQ(ts->attrs().transpose_a, TriangularSolveTranspose::kTranspose);
  std::string printed = ExpectRoundTrip(PrintModule(*m));
  EXPECT_NE(printed.find("algorithm=rng_philox"), std::string::npos);
  EXPECT_NE(printed.find("fft_type=IFFT, fft_length={8}"), std::string::npos);
}

TEST(ParserTest, BatchNorm) {
  auto m = MustParse(R"(HloModule m
ENTRY main {
  x = f32[2,4] parameter(0)
  s = f32[4] parameter(1)
  ROOT bn = (f32[2,4], f32[4], f32[4]) batch-norm-training(x, s, s), epsilon=0.001, feature_index=1
}
)");
  ASSERT_NE(m, nullptr);
  const Instruction* bn = m->entry_computation()->root_instruction();
  EXPECT_FLOAT_EQ(bn->attrs().epsilon, 0.001f);
  EXPECT_EQ(bn->attrs().feature_index, 1);
  std::string printed = ExpectRoundTrip(PrintModule(*m));
  EXPECT_NE(printed.find("epsilon=0.001, feature_index=1"), std::string::npos);
}

TEST(ParserTest, CollectivesKeepRawAttributes) {
  auto m = MustParse(R"(HloModule m, num_partitions=2, replica_count=2
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY main {
  x = f32[4] parameter(0), sharding={devices=[2]0,1}
  ar = f32[4] all-reduce(x), channel_id=1, replica_groups={{0,1}}, use_global_device_ids=true, to_apply=add
  ag = f32[8] all-gather(ar), channel_id=2, replica_groups=[1,2]<=[2], dimensions={0}
  cp = f32[8] collective-permute(ag), channel_id=3, source_target_pairs={{0,1},{1,0}}
  a2a = f32[8] all-to-all(cp), replica_groups={{0,1}}, dimensions={0}
  ROOT rs = f32[4] reduce-scatter(a2a), replica_groups={{0,1}}, dimensions={0}, to_apply=add
}
)");
  ASSERT_NE(m, nullptr);
  const Instruction* x = FindInstruction(*m, "x");
  ASSERT_NE(x->attrs().FindRaw("sharding"), nullptr);
  EXPECT_EQ(x->attrs().FindRaw("sharding")->value, "{devices=[2]0,1}");
  const Instruction* ag = FindInstruction(*m, "ag");
  EXPECT_EQ(ag->attrs().FindRaw("replica_groups")->value, "[1,2]<=[2]");
  EXPECT_EQ(ag->attrs().dimensions, (std::vector<int64_t>{0}));
  EXPECT_TRUE(FindInstruction(*m, "a2a")->attrs().has_dimensions);
  EXPECT_EQ(FindInstruction(*m, "cp")->attrs().FindRaw("source_target_pairs")->value,
            "{{0,1},{1,0}}");
  EXPECT_EQ(FindInstruction(*m, "ar")->to_apply()->name(), "add");
  ExpectRoundTrip(PrintModule(*m));
}

TEST(ParserTest, AsyncAndTokens) {
  auto m = MustParse(R"(HloModule m
callee {
  ROOT p = f32[4] parameter(0)
}
ENTRY main {
  x = f32[4] parameter(0)
  tok = token[] after-all()
  st = ((f32[4]), f32[4], s32[]) async-start(x), calls=callee, async_execution_thread="thread"
  d = f32[4] async-done(st), calls=callee
  inf = ((f32[4]), token[]) infeed(tok), infeed_config="cfg"
  of = token[] outfeed(d, tok), outfeed_shape=f32[4]{0}
  pid = u32[] partition-id()
  rid = u32[] replica-id()
  ROOT ad = f32[4] add-dependency(d, of)
}
)");
  ASSERT_NE(m, nullptr);
  EXPECT_TRUE(FindInstruction(*m, "tok")->shape().IsToken());
  EXPECT_EQ(FindInstruction(*m, "st")->called_computations()[0]->name(), "callee");
  EXPECT_EQ(FindInstruction(*m, "d")->called_computations().size(), 1u);
  EXPECT_EQ(FindInstruction(*m, "of")->attrs().FindRaw("outfeed_shape")->value, "f32[4]{0}");
  std::string printed = ExpectRoundTrip(PrintModule(*m));
  EXPECT_NE(printed.find("calls=%callee, async_execution_thread=\"thread\""), std::string::npos);
}

TEST(ParserTest, ControlPredecessors) {
  auto m = MustParse(R"(HloModule m
ENTRY main {
  a = f32[] parameter(0)
  b = f32[] negate(a), control-predecessors={c}
  c = f32[] exponential(a)
  ROOT d = f32[] add(b, c), control-predecessors={a, c}
}
)");
  ASSERT_NE(m, nullptr);
  const Instruction* b = FindInstruction(*m, "b");
  ASSERT_EQ(b->control_predecessors().size(), 1u);
  EXPECT_EQ(b->control_predecessors()[0]->name(), "c");
  EXPECT_EQ(FindInstruction(*m, "d")->control_predecessors().size(), 2u);
  EXPECT_EQ(FindInstruction(*m, "c")->control_successors().size(), 2u);
  std::string printed = ExpectRoundTrip(PrintModule(*m));
  EXPECT_NE(printed.find("control-predecessors={%c}"), std::string::npos);
  // c is printed before b.
  EXPECT_LT(printed.find("%c = "), printed.find("%b = "));
}

TEST(ParserTest, UnknownAttributesNeverFail) {
  auto m = MustParse(R"(HloModule m
ENTRY main {
  p = f32[] parameter(0), metadata={op_type="Add" op_name="a/b" source_file="x.py" source_line=3}
  ROOT n = f32[] negate(p), weird_attr={[(nested)]}, another="with, comma", statistics_viz={stat1=0.5}, origin={{"x"}}, result_accuracy={tolerance={atol=0 rtol=0 ulps=1}}, schedule=SCHEDULE_LATEST, dimensions={0}
}
)");
  ASSERT_NE(m, nullptr);
  const Instruction* n = FindInstruction(*m, "n");
  ASSERT_EQ(n->attrs().raw.size(), 7u);
  EXPECT_EQ(n->attrs().raw[0].key, "weird_attr");
  EXPECT_EQ(n->attrs().raw[0].value, "{[(nested)]}");
  EXPECT_EQ(n->attrs().raw[1].value, "\"with, comma\"");
  // dimensions= is not modelled for negate: kept raw.
  EXPECT_EQ(n->attrs().raw[6].key, "dimensions");
  EXPECT_EQ(FindInstruction(*m, "p")->attrs().raw[0].key, "metadata");
  ExpectRoundTrip(PrintModule(*m));
}

TEST(ParserTest, NamesWithDotsDashesAndReservedWords) {
  auto m = MustParse(R"(HloModule m
ENTRY %main.1-x {
  %ROOT = f32[] parameter(0)
  %a.b-c_d.1 = f32[] negate(%ROOT)
  ROOT %add.3-5 = f32[] add(%a.b-c_d.1, %ROOT)
}
)");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->entry_computation()->name(), "main.1-x");
  EXPECT_EQ(m->entry_computation()->root_instruction()->name(), "add.3-5");
  // Parsed names are reserved in the module.
  EXPECT_EQ(m->UniqueName("a.b-c_d.1"), "a.b-c_d.2");
  EXPECT_EQ(m->UniqueName("main.1-x"), "main.1-x.1");
}

TEST(ParserTest, UniqueIdsAssigned) {
  auto m = MustParse(
      "HloModule m\nENTRY e {\n  a = f32[] parameter(0)\n  ROOT b = f32[] negate(a)\n}\n");
  ASSERT_NE(m, nullptr);
  const auto& insts = m->entry_computation()->instructions();
  EXPECT_GE(insts.front()->unique_id(), 0);
  EXPECT_NE(insts.front()->unique_id(), insts.back()->unique_id());
}

TEST(ParserTest, MissingHeaderIsAccepted) {
  auto m = MustParse("ENTRY e {\n  ROOT a = f32[] parameter(0)\n}\n");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->entry_computation()->name(), "e");
}

TEST(ParserTest, WindowsLineEndings) {
  auto m = MustParse(
      "HloModule m\r\n\r\nENTRY e {\r\n  a = f32[] parameter(0)\r\n  ROOT b = f32[] negate(a), "
      "metadata={op_name=\"x\"}\r\n}\r\n");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(FindInstruction(*m, "b")->attrs().raw[0].value, "{op_name=\"x\"}");
}

}  // namespace
}  // namespace hlogym
