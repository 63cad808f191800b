#include "analysis/verifier.h"

#include <filesystem>
#include <fstream>
#include <string>

#include "analysis/shape_inference.h"
#include "gtest/gtest.h"
#include "hlo/module.h"
#include "text/file_io.h"
#include "text/parser.h"

namespace hlogym {
namespace {

// A module whose entry computation `main` has `body` as its instructions,
// preceded by `prelude` (other computations).
std::string Entry(const std::string& body, const std::string& prelude = "") {
  return "HloModule m\n\n" + prelude + "\nENTRY main {\n" + body + "\n}\n";
}

absl::Status Verify(const std::string& text) {
  auto module = ParseModule(text);
  if (!module.ok()) {
    ADD_FAILURE() << "parse failed: " << module.status() << "\n" << text;
    return module.status();
  }
  return VerifyModule(**module);
}

void ExpectValid(const std::string& text) {
  absl::Status st = Verify(text);
  EXPECT_TRUE(st.ok()) << st << "\n" << text;
}

// The error names the computation, the instruction and contains `reason`.
void ExpectInvalid(const std::string& text, const std::string& instruction,
                   const std::string& reason, const std::string& computation = "main") {
  absl::Status st = Verify(text);
  ASSERT_FALSE(st.ok()) << "expected an error about " << instruction << ": " << reason << "\n"
                        << text;
  std::string msg(st.message());
  EXPECT_NE(msg.find("in computation " + computation), std::string::npos) << msg;
  if (!instruction.empty()) {
    EXPECT_NE(msg.find("instruction " + instruction + ":"), std::string::npos) << msg;
  }
  EXPECT_NE(msg.find(reason), std::string::npos) << msg;
}

const char kAddF32[] = R"(
add_f32 {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}
)";

const char kLessF32[] = R"(
less_f32 {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT lt = pred[] compare(a, b), direction=LT
}
)";

// ---------------------------------------------------------------- structure

TEST(VerifierStructure, SimpleModuleIsValid) {
  ExpectValid(Entry(R"(
  p0 = f32[2,3]{1,0} parameter(0)
  p1 = f32[2,3]{1,0} parameter(1)
  ROOT add.3 = f32[2,3]{1,0} add(p0, p1))"));
}

Instruction* FindInst(Module& module, const std::string& name) {
  for (const auto& comp : module.computations()) {
    for (const auto& inst : comp->instructions()) {
      if (inst->name() == name) return inst.get();
    }
  }
  return nullptr;
}

TEST(VerifierStructure, ParameterGapProgrammatic) {
  auto module = ParseModule(Entry(R"(
  p0 = f32[2] parameter(0)
  p1 = f32[2] parameter(1)
  ROOT a = f32[2] add(p0, p1))"));
  ASSERT_TRUE(module.ok()) << module.status();
  FindInst(**module, "p1")->mutable_attrs().parameter_number = 2;
  absl::Status st = VerifyModule(**module);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(std::string(st.message()).find("in computation main"), std::string::npos) << st;
  EXPECT_NE(std::string(st.message()).find("parameter number 1 is missing"), std::string::npos)
      << st;
}

TEST(VerifierStructure, ParameterDuplicateProgrammatic) {
  auto module = ParseModule(Entry(R"(
  p0 = f32[2] parameter(0)
  p1 = f32[2] parameter(1)
  ROOT a = f32[2] add(p0, p1))"));
  ASSERT_TRUE(module.ok()) << module.status();
  FindInst(**module, "p1")->mutable_attrs().parameter_number = 0;
  absl::Status st = VerifyModule(**module);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(std::string(st.message()).find("instruction p1: parameter number 0 is used twice"),
            std::string::npos)
      << st;
}

TEST(VerifierStructure, ModuleWideNames) {
  const std::string text = Entry(R"(
  x = f32[3] parameter(0)
  ROOT c = f32[3] call(x), to_apply=callee)",
                                 R"(
callee {
  x = f32[3] parameter(0)
  ROOT n = f32[3] negate(x)
}
)");
  auto module = ParseModule(text);
  ASSERT_TRUE(module.ok()) << module.status();
  EXPECT_TRUE(VerifyModule(**module).ok());
  VerifierOptions options;
  options.module_unique_names = true;
  absl::Status st = VerifyModule(**module, options);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(std::string(st.message()).find("used twice in the module"), std::string::npos) << st;
}

TEST(VerifierStructure, OperandFromOtherComputation) {
  auto module = ParseModule(Entry(R"(
  x = f32[3] parameter(0)
  ROOT c = f32[3] call(x), to_apply=callee)",
                                  R"(
callee {
  y = f32[3] parameter(0)
  ROOT n = f32[3] negate(y)
}
)"));
  ASSERT_TRUE(module.ok()) << module.status();
  FindInst(**module, "n")->ReplaceOperandWith(0, FindInst(**module, "x"));
  absl::Status st = VerifyModule(**module);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(std::string(st.message()).find("another computation"), std::string::npos) << st;
}

TEST(VerifierStructure, CallGraphCycleProgrammatic) {
  auto module = ParseModule(Entry(R"(
  p = f32[] parameter(0)
  ROOT c = f32[] call(p), to_apply=callee)",
                                  R"(
leaf {
  r = f32[] parameter(0)
  ROOT n = f32[] negate(r)
}

callee {
  q = f32[] parameter(0)
  ROOT c2 = f32[] call(q), to_apply=leaf
}
)"));
  ASSERT_TRUE(module.ok()) << module.status();
  // Make callee call main instead of leaf.
  Computation* callee = (*module)->FindComputation("callee");
  ASSERT_NE(callee, nullptr);
  callee->root_instruction()->mutable_called_computations()[0] = (*module)->entry_computation();
  absl::Status st = VerifyModule(**module);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(std::string(st.message()).find("call graph has a cycle"), std::string::npos) << st;
}

TEST(VerifierStructure, OperandCycleProgrammatic) {
  auto module = ParseModule(Entry(R"(
  p = f32[] parameter(0)
  a = f32[] negate(p)
  b = f32[] negate(a)
  ROOT c = f32[] add(b, p))"));
  ASSERT_TRUE(module.ok()) << module.status();
  Computation* main = (*module)->entry_computation();
  Instruction* a = nullptr;
  Instruction* b = nullptr;
  for (const auto& inst : main->instructions()) {
    if (inst->name() == "a") a = inst.get();
    if (inst->name() == "b") b = inst.get();
  }
  ASSERT_TRUE(a && b);
  a->ReplaceOperandWith(0, b);
  absl::Status st = VerifyModule(**module);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(std::string(st.message()).find("cycle"), std::string::npos) << st;
}

TEST(VerifierStructure, DuplicateNamesProgrammatic) {
  auto module = ParseModule(Entry(R"(
  p = f32[] parameter(0)
  a = f32[] negate(p)
  ROOT b = f32[] negate(a))"));
  ASSERT_TRUE(module.ok()) << module.status();
  for (const auto& inst : (*module)->entry_computation()->instructions()) {
    if (inst->name() == "b") inst->set_name("a");
  }
  absl::Status st = VerifyModule(**module);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(std::string(st.message()).find("used twice"), std::string::npos) << st;
}

TEST(VerifierStructure, MissingEntry) {
  Module module("m");
  absl::Status st = VerifyModule(module);
  EXPECT_FALSE(st.ok());
}

TEST(VerifierStructure, ArityProgrammatic) {
  auto module = ParseModule(Entry(R"(
  p = f32[] parameter(0)
  ROOT a = f32[] negate(p))"));
  ASSERT_TRUE(module.ok()) << module.status();
  Instruction* root = (*module)->entry_computation()->root_instruction();
  root->AppendOperand(root->operand(0));
  absl::Status st = VerifyModule(**module);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(std::string(st.message()).find("expects 1 operands"), std::string::npos) << st;
}

TEST(VerifierStructure, BadLayoutProgrammatic) {
  auto module = ParseModule(Entry(R"(
  p = f32[2,3]{1,0} parameter(0)
  ROOT n = f32[2,3] negate(p))"));
  ASSERT_TRUE(module.ok()) << module.status();
  Layout layout;
  layout.minor_to_major = {1, 1};
  FindInst(**module, "p")->mutable_shape().set_layout(layout);
  absl::Status st = VerifyModule(**module);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(std::string(st.message()).find("instruction p: layout {1,1} is not a permutation"),
            std::string::npos)
      << st;
}

TEST(VerifierStructure, EntryLayoutMatches) {
  ExpectValid(
      R"(HloModule m, entry_computation_layout={(f32[2,3]{1,0}, /*index=1*/s32[])->f32[2,3]{1,0}}

ENTRY main {
  p = f32[2,3]{1,0} parameter(0)
  i = s32[] parameter(1)
  ROOT n = f32[2,3]{1,0} negate(p)
}
)");
}

TEST(VerifierStructure, EntryLayoutMismatch) {
  ExpectInvalid(R"(HloModule m, entry_computation_layout={(f32[2,3]{1,0})->f32[3,2]{1,0}}

ENTRY main {
  p = f32[2,3]{1,0} parameter(0)
  ROOT n = f32[2,3]{1,0} negate(p)
}
)",
                "n", "entry_computation_layout");
}

// ---------------------------------------------------------------- elementwise

TEST(VerifierElementwise, UnaryValid) {
  ExpectValid(Entry(R"(
  p = f32[4] parameter(0)
  c = c64[4] parameter(1)
  i = s32[4] parameter(2)
  e = f32[4] exponential(p)
  f = pred[4] is-finite(p)
  r = f32[4] real(c)
  ab = f32[4] abs(c)
  im = f32[4] imag(c)
  z = s32[4] count-leading-zeros(i)
  ROOT t = (f32[4], pred[4], f32[4], f32[4], f32[4], s32[4]) tuple(e, f, r, ab, im, z))"));
}

TEST(VerifierElementwise, UnaryWrongType) {
  ExpectInvalid(Entry(R"(
  p = f32[4] parameter(0)
  ROOT f = f32[4] is-finite(p))"),
                "f", "does not match the expected shape pred[4]");
}

TEST(VerifierElementwise, UnaryIntOnly) {
  ExpectInvalid(Entry(R"(
  p = f32[4] parameter(0)
  ROOT z = f32[4] popcnt(p))"),
                "z", "integral");
}

TEST(VerifierElementwise, BinaryDims) {
  ExpectInvalid(Entry(R"(
  a = f32[2,3] parameter(0)
  b = f32[3,2] parameter(1)
  ROOT add.3 = f32[2,3] add(a, b))"),
                "add.3", "binary op operands have different dimensions: f32[2,3] vs f32[3,2]");
}

TEST(VerifierElementwise, BinaryNoImplicitScalarBroadcast) {
  ExpectInvalid(Entry(R"(
  a = f32[2,3] parameter(0)
  b = f32[] parameter(1)
  ROOT m = f32[2,3] multiply(a, b))"),
                "m", "different dimensions");
}

TEST(VerifierElementwise, BinaryTypes) {
  ExpectInvalid(Entry(R"(
  a = f32[2] parameter(0)
  b = bf16[2] parameter(1)
  ROOT m = f32[2] multiply(a, b))"),
                "m", "different element types");
}

TEST(VerifierElementwise, CompareValidAndInvalid) {
  ExpectValid(Entry(R"(
  a = s32[2] parameter(0)
  b = s32[2] parameter(1)
  ROOT c = pred[2] compare(a, b), direction=LT)"));
  ExpectInvalid(Entry(R"(
  a = s32[2] parameter(0)
  b = s32[2] parameter(1)
  ROOT c = s32[2] compare(a, b), direction=LT)"),
                "c", "expected shape pred[2]");
}

TEST(VerifierElementwise, ComplexAndShifts) {
  ExpectValid(Entry(R"(
  a = f32[2] parameter(0)
  b = f32[2] parameter(1)
  i = u32[2] parameter(2)
  c = c64[2] complex(a, b)
  s = u32[2] shift-right-logical(i, i)
  ROOT t = (c64[2], u32[2]) tuple(c, s))"));
  ExpectInvalid(Entry(R"(
  a = f32[2] parameter(0)
  ROOT s = f32[2] shift-left(a, a))"),
                "s", "integral");
}

TEST(VerifierElementwise, AndOnFloatInvalid) {
  ExpectInvalid(Entry(R"(
  a = f32[2] parameter(0)
  ROOT s = f32[2] and(a, a))"),
                "s", "pred or integral");
}

TEST(VerifierElementwise, SelectValid) {
  ExpectValid(Entry(R"(
  p = pred[2] parameter(0)
  ps = pred[] parameter(1)
  a = f32[2] parameter(2)
  b = f32[2] parameter(3)
  s1 = f32[2] select(p, a, b)
  ROOT s2 = f32[2] select(ps, s1, b))"));
}

TEST(VerifierElementwise, SelectBadPred) {
  ExpectInvalid(Entry(R"(
  p = pred[3] parameter(0)
  a = f32[2] parameter(1)
  ROOT s = f32[2] select(p, a, a))"),
                "s", "predicate dimensions");
}

TEST(VerifierElementwise, ClampScalarBounds) {
  ExpectValid(Entry(R"(
  lo = f32[] parameter(0)
  x = f32[5] parameter(1)
  hi = f32[5] parameter(2)
  ROOT c = f32[5] clamp(lo, x, hi))"));
  ExpectInvalid(Entry(R"(
  lo = f32[2] parameter(0)
  x = f32[5] parameter(1)
  ROOT c = f32[5] clamp(lo, x, lo))"),
                "c", "clamp bound");
}

TEST(VerifierElementwise, ConvertAndReducePrecision) {
  ExpectValid(Entry(R"(
  x = f32[5] parameter(0)
  c = s8[5] convert(x)
  r = f32[5] reduce-precision(x), exponent_bits=5, mantissa_bits=10
  ROOT t = (s8[5], f32[5]) tuple(c, r))"));
  ExpectInvalid(Entry(R"(
  x = c64[5] parameter(0)
  ROOT c = f32[5] convert(x))"),
                "c", "complex");
  ExpectInvalid(Entry(R"(
  x = f32[5] parameter(0)
  ROOT c = s8[4] convert(x))"),
                "c", "expected shape s8[5]");
}

TEST(VerifierElementwise, BitcastConvert) {
  ExpectValid(Entry(R"(
  x = f32[5] parameter(0)
  a = u32[5] bitcast-convert(x)
  b = u8[5,4] bitcast-convert(x)
  c = f32[5] bitcast-convert(b)
  ROOT t = (u32[5], u8[5,4], f32[5]) tuple(a, b, c))"));
  ExpectInvalid(Entry(R"(
  x = f32[5] parameter(0)
  ROOT b = u8[5] bitcast-convert(x))"),
                "b", "expected shape u8[5,4]");
}

// ---------------------------------------------------------------- shape ops

TEST(VerifierShapeOps, Broadcast) {
  ExpectValid(Entry(R"(
  x = f32[3] parameter(0)
  s = f32[] parameter(1)
  b = f32[2,3] broadcast(x), dimensions={1}
  bs = f32[2,3] broadcast(s), dimensions={}
  ROOT a = f32[2,3] add(b, bs))"));
  ExpectInvalid(Entry(R"(
  x = f32[3] parameter(0)
  ROOT b = f32[2,3] broadcast(x), dimensions={0})"),
                "b", "does not match result dimension 0");
  ExpectInvalid(Entry(R"(
  x = f32[3] parameter(0)
  ROOT b = f32[2,3] broadcast(x), dimensions={5})"),
                "b", "out of range");
}

TEST(VerifierShapeOps, Reshape) {
  ExpectValid(Entry(R"(
  x = f32[2,3] parameter(0)
  ROOT r = f32[3,1,2] reshape(x))"));
  ExpectInvalid(Entry(R"(
  x = f32[2,3] parameter(0)
  ROOT r = f32[7] reshape(x))"),
                "r", "element count");
}

TEST(VerifierShapeOps, Transpose) {
  ExpectValid(Entry(R"(
  x = f32[2,3,4] parameter(0)
  ROOT t = f32[4,2,3] transpose(x), dimensions={2,0,1})"));
  ExpectInvalid(Entry(R"(
  x = f32[2,3,4] parameter(0)
  ROOT t = f32[4,2,3] transpose(x), dimensions={2,0,0})"),
                "t", "repeats dimension 0");
  ExpectInvalid(Entry(R"(
  x = f32[2,3,4] parameter(0)
  ROOT t = f32[2,3,4] transpose(x), dimensions={2,0,1})"),
                "t", "expected shape f32[4,2,3]");
}

TEST(VerifierShapeOps, Slice) {
  ExpectValid(Entry(R"(
  x = f32[10,6] parameter(0)
  ROOT s = f32[3,6] slice(x), slice={[1:8:3], [0:6]})"));
  ExpectInvalid(Entry(R"(
  x = f32[10,6] parameter(0)
  ROOT s = f32[3,6] slice(x), slice={[1:11:3], [0:6]})"),
                "s", "out of bounds");
  ExpectInvalid(Entry(R"(
  x = f32[10,6] parameter(0)
  ROOT s = f32[2,6] slice(x), slice={[1:8:3], [0:6]})"),
                "s", "expected shape f32[3,6]");
}

TEST(VerifierShapeOps, DynamicSlice) {
  ExpectValid(Entry(R"(
  x = f32[10,6] parameter(0)
  i = s32[] parameter(1)
  j = s32[] parameter(2)
  ROOT d = f32[2,6] dynamic-slice(x, i, j), dynamic_slice_sizes={2,6})"));
  ExpectInvalid(Entry(R"(
  x = f32[10,6] parameter(0)
  i = s32[] parameter(1)
  ROOT d = f32[2,6] dynamic-slice(x, i), dynamic_slice_sizes={2,6})"),
                "d", "start indices");
  ExpectInvalid(Entry(R"(
  x = f32[10,6] parameter(0)
  i = s32[] parameter(1)
  ROOT d = f32[2,7] dynamic-slice(x, i, i), dynamic_slice_sizes={2,7})"),
                "d", "out of bounds");
}

TEST(VerifierShapeOps, DynamicUpdateSlice) {
  ExpectValid(Entry(R"(
  x = f32[10,6] parameter(0)
  u = f32[2,6] parameter(1)
  i = s32[] parameter(2)
  ROOT d = f32[10,6] dynamic-update-slice(x, u, i, i))"));
  ExpectInvalid(Entry(R"(
  x = f32[10,6] parameter(0)
  u = f32[2,7] parameter(1)
  i = s32[] parameter(2)
  ROOT d = f32[10,6] dynamic-update-slice(x, u, i, i))"),
                "d", "larger than operand");
}

TEST(VerifierShapeOps, Concatenate) {
  ExpectValid(Entry(R"(
  a = f32[2,3] parameter(0)
  b = f32[4,3] parameter(1)
  ROOT c = f32[6,3] concatenate(a, b), dimensions={0})"));
  ExpectInvalid(Entry(R"(
  a = f32[2,3] parameter(0)
  b = f32[4,2] parameter(1)
  ROOT c = f32[6,3] concatenate(a, b), dimensions={0})"),
                "c", "non-concatenated dimension 1");
}

TEST(VerifierShapeOps, Pad) {
  ExpectValid(Entry(R"(
  a = f32[3,4] parameter(0)
  z = f32[] constant(0)
  ROOT p = f32[8,3] pad(a, z), padding=1_2_1x0_-1)"));
  ExpectInvalid(Entry(R"(
  a = f32[3,4] parameter(0)
  z = f32[] constant(0)
  ROOT p = f32[8,4] pad(a, z), padding=1_2_1x0_-1)"),
                "p", "expected shape f32[8,3]");
  ExpectInvalid(Entry(R"(
  a = f32[3,4] parameter(0)
  z = f32[] constant(0)
  ROOT p = f32[8] pad(a, z), padding=1_2_1)"),
                "p", "pad config");
}

TEST(VerifierShapeOps, Reverse) {
  ExpectValid(Entry(R"(
  a = f32[3,4] parameter(0)
  ROOT r = f32[3,4] reverse(a), dimensions={0,1})"));
  ExpectInvalid(Entry(R"(
  a = f32[3,4] parameter(0)
  ROOT r = f32[3,4] reverse(a), dimensions={2})"),
                "r", "out of range");
}

TEST(VerifierShapeOps, Iota) {
  ExpectValid(Entry(R"(
  ROOT i = s32[3,4] iota(), iota_dimension=1)"));
  ExpectInvalid(Entry(R"(
  ROOT i = s32[3,4] iota(), iota_dimension=2)"),
                "i", "iota_dimension");
}

TEST(VerifierShapeOps, TupleAndGetTupleElement) {
  ExpectValid(Entry(R"(
  a = f32[3] parameter(0)
  b = s32[] parameter(1)
  t = (f32[3], s32[]) tuple(a, b)
  ROOT g = s32[] get-tuple-element(t), index=1)"));
  ExpectInvalid(Entry(R"(
  a = f32[3] parameter(0)
  b = s32[] parameter(1)
  t = (f32[3], s32[]) tuple(a, b)
  ROOT g = s32[] get-tuple-element(t), index=2)"),
                "g", "index 2 out of range");
  ExpectInvalid(Entry(R"(
  a = f32[3] parameter(0)
  b = s32[] parameter(1)
  ROOT t = (f32[3], f32[]) tuple(a, b))"),
                "t", "expected shape (f32[3], s32[])");
}

TEST(VerifierShapeOps, BitcastAndCopy) {
  ExpectValid(Entry(R"(
  a = f32[3,4]{1,0} parameter(0)
  b = f32[12]{0} bitcast(a)
  ROOT c = f32[12]{0} copy(b))"));
  ExpectInvalid(Entry(R"(
  a = f32[3,4]{1,0} parameter(0)
  ROOT b = f32[13]{0} bitcast(a))"),
                "b", "data size");
}

TEST(VerifierShapeOps, Constant) {
  ExpectValid(Entry(R"(
  ROOT c = f32[2] constant({1, 2}))"));
}

// ---------------------------------------------------------------- dot / conv

TEST(VerifierDot, Valid) {
  ExpectValid(Entry(R"(
  a = f32[8,2,3] parameter(0)
  b = f32[8,3,5] parameter(1)
  ROOT d = f32[8,2,5] dot(a, b), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={1})"));
}

TEST(VerifierDot, PreferredElementType) {
  ExpectValid(Entry(R"(
  a = bf16[2,3] parameter(0)
  b = bf16[3,5] parameter(1)
  ROOT d = f32[2,5] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0})"));
}

TEST(VerifierDot, ContractingMismatch) {
  ExpectInvalid(Entry(R"(
  a = f32[2,3] parameter(0)
  b = f32[4,5] parameter(1)
  ROOT d = f32[2,5] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0})"),
                "d", "contracting dimensions differ in size");
}

TEST(VerifierDot, WrongResult) {
  ExpectInvalid(Entry(R"(
  a = f32[2,3] parameter(0)
  b = f32[3,5] parameter(1)
  ROOT d = f32[5,2] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0})"),
                "d", "expected shape f32[2,5]");
}

TEST(VerifierConvolution, Valid) {
  ExpectValid(Entry(R"(
  x = f32[1,8,8,3] parameter(0)
  k = f32[3,3,3,16] parameter(1)
  ROOT c = f32[1,4,4,16] convolution(x, k), window={size=3x3 stride=2x2 pad=1_1x1_1}, dim_labels=b01f_01io->b01f)"));
}

TEST(VerifierConvolution, GroupedValid) {
  ExpectValid(Entry(R"(
  x = f32[2,8,6] parameter(0)
  k = f32[3,2,6] parameter(1)
  ROOT c = f32[2,8,6] convolution(x, k), window={size=3 pad=1_1}, dim_labels=b0f_0io->b0f, feature_group_count=3)"));
}

TEST(VerifierConvolution, FeatureMismatch) {
  ExpectInvalid(Entry(R"(
  x = f32[1,8,8,3] parameter(0)
  k = f32[3,3,4,16] parameter(1)
  ROOT c = f32[1,8,8,16] convolution(x, k), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f)"),
                "c", "kernel input features");
}

TEST(VerifierConvolution, WrongOutput) {
  ExpectInvalid(Entry(R"(
  x = f32[1,8,8,3] parameter(0)
  k = f32[3,3,3,16] parameter(1)
  ROOT c = f32[1,8,8,16] convolution(x, k), window={size=3x3}, dim_labels=b01f_01io->b01f)"),
                "c", "expected shape f32[1,6,6,16]");
}

// ---------------------------------------------------------------- reductions

TEST(VerifierReduce, Valid) {
  ExpectValid(Entry(R"(
  x = f32[4,5] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[5] reduce(x, z), dimensions={0}, to_apply=add_f32)",
                    kAddF32));
}

TEST(VerifierReduce, Variadic) {
  ExpectValid(Entry(R"(
  x = f32[4,5] parameter(0)
  i = s32[4,5] parameter(1)
  z = f32[] constant(0)
  zi = s32[] constant(0)
  ROOT r = (f32[4], s32[4]) reduce(x, i, z, zi), dimensions={1}, to_apply=argmax)",
                    R"(
argmax {
  a = f32[] parameter(0)
  ai = s32[] parameter(1)
  b = f32[] parameter(2)
  bi = s32[] parameter(3)
  g = pred[] compare(a, b), direction=GT
  v = f32[] select(g, a, b)
  vi = s32[] select(g, ai, bi)
  ROOT t = (f32[], s32[]) tuple(v, vi)
}
)"));
}

TEST(VerifierReduce, WrongDims) {
  ExpectInvalid(Entry(R"(
  x = f32[4,5] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[4] reduce(x, z), dimensions={0}, to_apply=add_f32)",
                      kAddF32),
                "r", "expected shape f32[5]");
}

TEST(VerifierReduce, BadReducer) {
  ExpectInvalid(Entry(R"(
  x = s32[4,5] parameter(0)
  z = s32[] constant(0)
  ROOT r = s32[5] reduce(x, z), dimensions={0}, to_apply=add_f32)",
                      kAddF32),
                "r", "accumulator type");
}

TEST(VerifierReduceWindow, ValidAndInvalid) {
  ExpectValid(Entry(R"(
  x = f32[4,6] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[2,3] reduce-window(x, z), window={size=2x2 stride=2x2}, to_apply=add_f32)",
                    kAddF32));
  ExpectInvalid(Entry(R"(
  x = f32[4,6] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[2,3] reduce-window(x, z), window={size=2 stride=2}, to_apply=add_f32)",
                      kAddF32),
                "r", "window has 1 dimensions");
}

const char kGeSelect[] = R"(
ge_f32 {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT g = pred[] compare(a, b), direction=GE
}
)";

TEST(VerifierSelectAndScatter, ValidAndInvalid) {
  const std::string prelude = std::string(kAddF32) + kGeSelect;
  ExpectValid(Entry(R"(
  x = f32[4,6] parameter(0)
  s = f32[2,3] parameter(1)
  z = f32[] constant(0)
  ROOT r = f32[4,6] select-and-scatter(x, s, z), window={size=2x2 stride=2x2}, select=ge_f32, scatter=add_f32)",
                    prelude));
  ExpectInvalid(Entry(R"(
  x = f32[4,6] parameter(0)
  s = f32[2,2] parameter(1)
  z = f32[] constant(0)
  ROOT r = f32[4,6] select-and-scatter(x, s, z), window={size=2x2 stride=2x2}, select=ge_f32, scatter=add_f32)",
                      prelude),
                "r", "source");
}

// ---------------------------------------------------------------- gather/scatter

TEST(VerifierGather, Valid) {
  ExpectValid(Entry(R"(
  x = f32[5,7] parameter(0)
  i = s32[3,1] parameter(1)
  ROOT g = f32[3,7] gather(x, i), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,7})"));
}

TEST(VerifierGather, BatchingDims) {
  ExpectValid(Entry(R"(
  x = f32[4,5,7] parameter(0)
  i = s32[4,3,1] parameter(1)
  ROOT g = f32[4,3,7] gather(x, i), offset_dims={2}, collapsed_slice_dims={1}, start_index_map={1}, operand_batching_dims={0}, start_indices_batching_dims={0}, index_vector_dim=2, slice_sizes={1,1,7})"));
}

TEST(VerifierGather, BadSliceSize) {
  ExpectInvalid(Entry(R"(
  x = f32[5,7] parameter(0)
  i = s32[3,1] parameter(1)
  ROOT g = f32[3,7] gather(x, i), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={2,7})"),
                "g", "slice size at most 1");
}

TEST(VerifierGather, WrongResult) {
  ExpectInvalid(Entry(R"(
  x = f32[5,7] parameter(0)
  i = s32[3,1] parameter(1)
  ROOT g = f32[7,3] gather(x, i), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,7})"),
                "g", "expected shape f32[3,7]");
}

TEST(VerifierScatter, Valid) {
  ExpectValid(Entry(R"(
  x = f32[5,7] parameter(0)
  i = s32[3,1] parameter(1)
  u = f32[3,7] parameter(2)
  ROOT s = f32[5,7] scatter(x, i, u), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add_f32)",
                    kAddF32));
}

TEST(VerifierScatter, BadUpdates) {
  ExpectInvalid(Entry(R"(
  x = f32[5,7] parameter(0)
  i = s32[3,1] parameter(1)
  u = f32[4,7] parameter(2)
  ROOT s = f32[5,7] scatter(x, i, u), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add_f32)",
                      kAddF32),
                "s", "does not match the indices");
}

// ---------------------------------------------------------------- sort / map

TEST(VerifierSort, Valid) {
  ExpectValid(Entry(R"(
  x = f32[4,5] parameter(0)
  ROOT s = f32[4,5] sort(x), dimensions={1}, to_apply=less_f32)",
                    kLessF32));
}

TEST(VerifierSort, MultiOperand) {
  ExpectValid(Entry(R"(
  x = f32[5] parameter(0)
  i = s32[5] parameter(1)
  ROOT s = (f32[5], s32[5]) sort(x, i), dimensions={0}, to_apply=cmp)",
                    R"(
cmp {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  c = s32[] parameter(2)
  d = s32[] parameter(3)
  ROOT lt = pred[] compare(a, b), direction=LT
}
)"));
}

TEST(VerifierSort, BadComparator) {
  ExpectInvalid(Entry(R"(
  x = f32[5] parameter(0)
  i = s32[5] parameter(1)
  ROOT s = (f32[5], s32[5]) sort(x, i), dimensions={0}, to_apply=less_f32)",
                      kLessF32),
                "s", "must take 4 parameters");
}

TEST(VerifierMap, ValidAndInvalid) {
  ExpectValid(Entry(R"(
  x = f32[5] parameter(0)
  y = f32[5] parameter(1)
  ROOT m = f32[5] map(x, y), dimensions={0}, to_apply=add_f32)",
                    kAddF32));
  ExpectInvalid(Entry(R"(
  x = f32[5] parameter(0)
  y = f32[6] parameter(1)
  ROOT m = f32[5] map(x, y), dimensions={0}, to_apply=add_f32)",
                      kAddF32),
                "m", "different dimensions");
}

// ---------------------------------------------------------------- control flow

const char kWhileComps[] = R"(
cond {
  p = (s32[], f32[3]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(10)
  ROOT lt = pred[] compare(i, n), direction=LT
}

body {
  p = (s32[], f32[3]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  x = f32[3] get-tuple-element(p), index=1
  one = s32[] constant(1)
  i2 = s32[] add(i, one)
  ROOT t = (s32[], f32[3]) tuple(i2, x)
}

bad_cond {
  p = (s32[], f32[3]) parameter(0)
  ROOT i = s32[] get-tuple-element(p), index=0
}
)";

TEST(VerifierControlFlow, WhileValid) {
  ExpectValid(Entry(R"(
  x = f32[3] parameter(0)
  z = s32[] constant(0)
  t = (s32[], f32[3]) tuple(z, x)
  ROOT w = (s32[], f32[3]) while(t), condition=cond, body=body)",
                    kWhileComps));
}

TEST(VerifierControlFlow, WhileConditionNotPred) {
  ExpectInvalid(Entry(R"(
  x = f32[3] parameter(0)
  z = s32[] constant(0)
  t = (s32[], f32[3]) tuple(z, x)
  ROOT w = (s32[], f32[3]) while(t), condition=bad_cond, body=body)",
                      kWhileComps),
                "w", "while condition bad_cond returns s32[]");
}

TEST(VerifierControlFlow, WhileOperandMismatch) {
  ExpectInvalid(Entry(R"(
  x = f32[3] parameter(0)
  z = s32[] constant(0)
  t = (s32[], f32[3], s32[]) tuple(z, x, z)
  ROOT w = (s32[], f32[3]) while(t), condition=cond, body=body)",
                      kWhileComps),
                "w", "expected shape");
}

const char kBranches[] = R"(
br_neg {
  p = f32[3] parameter(0)
  ROOT n = f32[3] negate(p)
}

br_exp {
  p = f32[3] parameter(0)
  ROOT e = f32[3] exponential(p)
}

br_s32 {
  p = s32[] parameter(0)
  one = f32[] constant(1)
  ROOT b = f32[3] broadcast(one), dimensions={}
}
)";

TEST(VerifierControlFlow, ConditionalValid) {
  ExpectValid(Entry(R"(
  b = pred[] parameter(0)
  x = f32[3] parameter(1)
  ROOT c = f32[3] conditional(b, x, x), true_computation=br_neg, false_computation=br_exp)",
                    kBranches));
  ExpectValid(Entry(R"(
  b = s32[] parameter(0)
  x = f32[3] parameter(1)
  ROOT c = f32[3] conditional(b, x, x), branch_computations={br_neg, br_exp})",
                    kBranches));
}

TEST(VerifierControlFlow, ConditionalBranchParamMismatch) {
  ExpectInvalid(Entry(R"(
  b = s32[] parameter(0)
  x = f32[3] parameter(1)
  ROOT c = f32[3] conditional(b, x, x), branch_computations={br_neg, br_s32})",
                      kBranches),
                "c", "conditional branch 1 br_s32 parameter 0");
}

TEST(VerifierControlFlow, ConditionalBadSelector) {
  ExpectInvalid(Entry(R"(
  b = f32[] parameter(0)
  x = f32[3] parameter(1)
  ROOT c = f32[3] conditional(b, x, x), branch_computations={br_neg, br_exp})",
                      kBranches),
                "c", "selector");
}

TEST(VerifierControlFlow, CallValidAndInvalid) {
  ExpectValid(Entry(R"(
  x = f32[3] parameter(0)
  ROOT c = f32[3] call(x), to_apply=br_neg)",
                    kBranches));
  ExpectInvalid(Entry(R"(
  x = f32[4] parameter(0)
  ROOT c = f32[3] call(x), to_apply=br_neg)",
                      kBranches),
                "c", "callee br_neg parameter 0");
}

TEST(VerifierControlFlow, FusionValidAndInvalid) {
  const char fused[] = R"(
fused_add {
  a = f32[3] parameter(0)
  b = f32[3] parameter(1)
  ROOT s = f32[3] add(a, b)
}
)";
  ExpectValid(Entry(R"(
  x = f32[3] parameter(0)
  ROOT f = f32[3] fusion(x, x), kind=kLoop, calls=fused_add)",
                    fused));
  ExpectInvalid(Entry(R"(
  x = f32[3] parameter(0)
  ROOT f = f32[4] fusion(x, x), kind=kLoop, calls=fused_add)",
                      fused),
                "f", "fused computation fused_add returns f32[3]");
}

TEST(VerifierControlFlow, CustomCallIsOpaque) {
  ExpectValid(Entry(R"(
  x = f32[3] parameter(0)
  ROOT c = (s8[7], f32[]) custom-call(x), custom_call_target="foo")"));
}

TEST(VerifierControlFlow, ErrorInNestedComputation) {
  ExpectInvalid(Entry(R"(
  x = f32[3] parameter(0)
  ROOT c = f32[3] call(x), to_apply=callee)",
                      R"(
callee {
  p = f32[3] parameter(0)
  ROOT bad = f32[4] negate(p)
}
)"),
                "bad", "expected shape f32[3]", "callee");
}

// ---------------------------------------------------------------- misc ops

TEST(VerifierMisc, RngAndRngBitGenerator) {
  ExpectValid(Entry(R"(
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  s = u64[2] parameter(2)
  r = f32[3,4] rng(a, b), distribution=rng_uniform
  g = (u64[2], u32[8]) rng-bit-generator(s), algorithm=rng_default
  ROOT t = (f32[3,4], (u64[2], u32[8])) tuple(r, g))"));
  ExpectInvalid(Entry(R"(
  a = f32[2] parameter(0)
  ROOT r = f32[3,4] rng(a, a), distribution=rng_uniform)"),
                "r", "scalar");
  ExpectInvalid(Entry(R"(
  s = u64[2] parameter(0)
  ROOT g = (u64[3], u32[8]) rng-bit-generator(s), algorithm=rng_default)"),
                "g", "state");
}

TEST(VerifierMisc, Collectives) {
  ExpectValid(Entry(R"(
  x = f32[4,6] parameter(0)
  ar = f32[4,6] all-reduce(x), replica_groups={}, to_apply=add_f32
  ag = f32[8,6] all-gather(x), dimensions={0}, replica_groups={}
  rs = f32[4,3] reduce-scatter(x), dimensions={1}, replica_groups={}, to_apply=add_f32
  a2a = f32[4,6] all-to-all(x), dimensions={0}, replica_groups={}
  cp = f32[4,6] collective-permute(x), source_target_pairs={{0,1},{1,0}}
  ROOT t = (f32[4,6], f32[8,6], f32[4,3], f32[4,6], f32[4,6]) tuple(ar, ag, rs, a2a, cp))",
                    kAddF32));
  ExpectInvalid(Entry(R"(
  x = f32[4,6] parameter(0)
  ROOT ag = f32[7,6] all-gather(x), dimensions={0}, replica_groups={})"),
                "ag", "differ in dimension 0");
  ExpectInvalid(Entry(R"(
  x = f32[4,6] parameter(0)
  ROOT ar = f32[4,5] all-reduce(x), replica_groups={}, to_apply=add_f32)",
                      kAddF32),
                "ar", "expected shape f32[4,6]");
}

TEST(VerifierMisc, BatchNorm) {
  ExpectValid(Entry(R"(
  x = f32[2,3,4] parameter(0)
  s = f32[3] parameter(1)
  o = f32[3] parameter(2)
  t = (f32[2,3,4], f32[3], f32[3]) batch-norm-training(x, s, o), epsilon=0.001, feature_index=1
  i = f32[2,3,4] batch-norm-inference(x, s, o, s, o), epsilon=0.001, feature_index=1
  g = (f32[2,3,4], f32[3], f32[3]) batch-norm-grad(x, s, o, s, x), epsilon=0.001, feature_index=1
  ROOT r = ((f32[2,3,4], f32[3], f32[3]), f32[2,3,4], (f32[2,3,4], f32[3], f32[3])) tuple(t, i, g))"));
  ExpectInvalid(Entry(R"(
  x = f32[2,3,4] parameter(0)
  s = f32[4] parameter(1)
  ROOT t = (f32[2,3,4], f32[3], f32[3]) batch-norm-training(x, s, s), epsilon=0.001, feature_index=1)"),
                "t", "batch-norm operand 1");
}

TEST(VerifierMisc, CholeskyTriangularSolve) {
  ExpectValid(Entry(R"(
  a = f32[2,4,4] parameter(0)
  b = f32[2,4,3] parameter(1)
  c = f32[2,4,4] cholesky(a), lower=true
  ROOT s = f32[2,4,3] triangular-solve(c, b), left_side=true, lower=true, transpose_a=NO_TRANSPOSE)"));
  ExpectInvalid(Entry(R"(
  a = f32[2,4,3] parameter(0)
  ROOT c = f32[2,4,3] cholesky(a), lower=true)"),
                "c", "square");
  ExpectInvalid(Entry(R"(
  a = f32[2,4,4] parameter(0)
  b = f32[2,4,3] parameter(1)
  ROOT s = f32[2,4,3] triangular-solve(a, b), left_side=false, lower=true, transpose_a=NO_TRANSPOSE)"),
                "s", "does not match b");
}

TEST(VerifierMisc, Fft) {
  ExpectValid(Entry(R"(
  x = f32[4,8] parameter(0)
  r = c64[4,5] fft(x), fft_type=RFFT, fft_length={8}
  i = f32[4,8] fft(r), fft_type=IRFFT, fft_length={8}
  c = c64[4,5] fft(r), fft_type=FFT, fft_length={5}
  ROOT t = (f32[4,8], c64[4,5]) tuple(i, c))"));
  ExpectInvalid(Entry(R"(
  x = f32[4,8] parameter(0)
  ROOT r = c64[4,8] fft(x), fft_type=RFFT, fft_length={8})"),
                "r", "expected shape c64[4,5]");
}

TEST(VerifierMisc, TopK) {
  ExpectValid(Entry(R"(
  x = f32[4,8] parameter(0)
  ROOT t = (f32[4,3], s32[4,3]) topk(x), k=3, largest=true)"));
  ExpectInvalid(Entry(R"(
  x = f32[4,8] parameter(0)
  ROOT t = (f32[4,9], s32[4,9]) topk(x), k=9, largest=true)"),
                "t", "out of range");
}

TEST(VerifierMisc, DimensionSize) {
  ExpectValid(Entry(R"(
  x = f32[4,8] parameter(0)
  ROOT g = s32[] get-dimension-size(x), dimensions={1})"));
  ExpectInvalid(Entry(R"(
  x = f32[4,8] parameter(0)
  ROOT g = s32[] get-dimension-size(x), dimensions={2})"),
                "g", "out of range");
}

TEST(VerifierMisc, TokensAndIds) {
  ExpectValid(Entry(R"(
  x = f32[4] parameter(0)
  t0 = token[] after-all()
  t1 = token[] after-all(t0, t0)
  d = f32[4] add-dependency(x, t1)
  o = f32[4] opt-barrier(d)
  pid = u32[] partition-id()
  rid = u32[] replica-id()
  ROOT r = (f32[4], u32[], u32[]) tuple(o, pid, rid))"));
  ExpectInvalid(Entry(R"(
  ROOT pid = s32[] partition-id())"),
                "pid", "expected shape u32[]");
  ExpectInvalid(Entry(R"(
  x = f32[4] parameter(0)
  ROOT t = token[] after-all(x))"),
                "t", "must be a token");
}

// ---------------------------------------------------------------- inference API

TEST(ShapeInference, DotApi) {
  DotDimensionNumbers dn;
  dn.lhs_contracting_dimensions = {1};
  dn.rhs_contracting_dimensions = {0};
  auto s = InferDotShape(Shape(PrimitiveType::kF32, {2, 3}), Shape(PrimitiveType::kF32, {3, 4}), dn,
                         PrimitiveType::kF32);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->ToString(false), "f32[2,4]");
}

TEST(ShapeInference, WindowOutput) {
  Window w;
  w.dimensions.push_back(WindowDimension{3, 2, 1, 1, 1, 1, false});
  auto s = InferWindowOutputDims(std::vector<int64_t>{8}, w);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ((*s)[0], 4);
  w.dimensions[0].stride = 0;
  EXPECT_FALSE(InferWindowOutputDims(std::vector<int64_t>{8}, w).ok());
}

TEST(ShapeInference, HugeValuesDoNotCrash) {
  ExpectInvalid(Entry(R"(
  a = f32[3] parameter(0)
  z = f32[] constant(0)
  ROOT p = f32[3] pad(a, z), padding=9223372036854775807_9223372036854775807)"),
                "p", "");
}

// ---------------------------------------------------------------- real graphs

TEST(VerifierRealGraphs, SmokeDatasetVerifies) {
  namespace fs = std::filesystem;
  const fs::path root = fs::path(HLOGYM_SOURCE_DIR) / "datasets" / "smoke";
  if (!fs::exists(root)) FAIL() << "no " << root;
  int count = 0;
  for (const auto& entry : fs::recursive_directory_iterator(root)) {
    if (!entry.is_regular_file()) continue;
    const std::string path = entry.path().string();
    auto ends = [&](std::string_view suffix) {
      return path.size() >= suffix.size() &&
             path.compare(path.size() - suffix.size(), suffix.size(), suffix) == 0;
    };
    if (!ends(".hlo") && !ends(".txt") && !ends(".hlo.gz")) continue;
    if (ends(".txt")) {  // skip non-module text (suite lists and the like)
      std::ifstream in(path);
      std::string head(9, '\0');
      in.read(head.data(), 9);
      if (head != "HloModule") continue;
    }
    auto module = LoadModule(path);
    if (!module.ok()) {
      ADD_FAILURE() << path << ": " << module.status();
      continue;
    }
    ++count;
    absl::Status st = VerifyModule(**module);
    EXPECT_TRUE(st.ok()) << path << ": " << st;
  }
  EXPECT_GT(count, 0);
}

}  // namespace
}  // namespace hlogym

namespace hlogym {
namespace {

// Corrupting any single instruction's shape gives an error or OK, never a
// crash (the verifier runs on anything the parser accepts).
TEST(VerifierRobustness, MutatedShapesNeverCrash) {
  const std::string path = std::string(HLOGYM_SOURCE_DIR) + "/datasets/smoke/control_flow.hlo";
  if (!std::filesystem::exists(path)) FAIL() << "no " << path;
  auto module = LoadModule(path);
  ASSERT_TRUE(module.ok()) << module.status();
  const Shape replacements[] = {Shape(PrimitiveType::kF32, {7}), Shape::Scalar(PrimitiveType::kS32),
                                Shape::Tuple({}), Shape::Token()};
  int errors = 0;
  int tried = 0;
  for (const auto& comp : (*module)->computations()) {
    for (const auto& inst : comp->instructions()) {
      if (++tried > 400) break;
      for (const Shape& replacement : replacements) {
        Shape saved = inst->shape();
        inst->set_shape(replacement);
        if (!VerifyModule(**module).ok()) ++errors;
        inst->set_shape(saved);
      }
    }
  }
  EXPECT_GT(errors, 0);
  EXPECT_TRUE(VerifyModule(**module).ok());
}

}  // namespace
}  // namespace hlogym
