// Malformed inputs: the parser returns "FILE:LINE:COL: error: ..." pointing
// at the offending token, and never crashes.
#include <string>

#include "gtest/gtest.h"
#include "text/parser.h"
#include "text_test_util.h"

namespace hlogym {
namespace {

using testing::ParseError;

struct ErrorCase {
  const char* name;
  const char* text;
  const char* location;  // "bad.hlo:LINE:COL: error: "
  const char* message;   // substring of the message
};

const ErrorCase kCases[] = {
    {"UnknownOpcode",
     "HloModule m\nENTRY e {\n  a = f32[] parameter(0)\n  ROOT b = f32[] frobnicate(a)\n}\n",
     "bad.hlo:4:18: error: ", "unknown opcode 'frobnicate'"},
    {"UndefinedOperand",
     "HloModule m\nENTRY e {\n  a = f32[] parameter(0)\n  ROOT b = f32[] negate(%zz)\n}\n",
     "bad.hlo:4:25: error: ", "use of undefined instruction 'zz'"},
    {"UndefinedComputation",
     "HloModule m\nENTRY e {\n  a = f32[4] parameter(0)\n  z = f32[] constant(0)\n  ROOT r = f32[] "
     "reduce(a, z), dimensions={0}, to_apply=nope\n}\n",
     "bad.hlo:5:57: error: ", "use of undefined computation 'nope'"},
    {"DuplicateInstruction",
     "HloModule m\nENTRY e {\n  a = f32[] parameter(0)\n  a = f32[] negate(a)\n}\n",
     "bad.hlo:4:3: error: ", "duplicate instruction name 'a'"},
    {"DuplicateModuleAttribute",
     "HloModule m, replica_count=4, num_partitions=1, replica_count=4\nENTRY e {\n  ROOT a = "
     "f32[] parameter(0)\n}\n",
     "bad.hlo:1:49: error: ", "duplicate module attribute 'replica_count'"},
    {"DuplicateComputation",
     "HloModule m\nc {\n  ROOT a = f32[] parameter(0)\n}\nc {\n  ROOT a = f32[] parameter(0)\n}\n",
     "bad.hlo:5:1: error: ", "duplicate computation name 'c'"},
    {"BadElementType", "HloModule m\nENTRY e {\n  ROOT a = f31[] parameter(0)\n}\n",
     "bad.hlo:3:12: error: ", "unknown element type 'f31'"},
    {"UnclosedDims", "HloModule m\nENTRY e {\n  ROOT a = f32[2 parameter(0)\n}\n",
     "bad.hlo:3:18: error: ", "expected ',' or ']'"},
    {"MissingEquals", "HloModule m\nENTRY e {\n  ROOT a f32[] parameter(0)\n}\n",
     "bad.hlo:3:10: error: ", "expected '=' after instruction name 'a'"},
    {"UnterminatedString",
     "HloModule m\nENTRY e {\n  ROOT a = f32[] parameter(0), metadata={op_name=\"abc}\n}\n",
     "bad.hlo:3:50: error: ", "unterminated string"},
    {"UnterminatedComment",
     "HloModule m\nENTRY e {\n  /* never closed\n  ROOT a = f32[] parameter(0)\n}\n",
     "bad.hlo:3:3: error: ", "unterminated comment"},
    {"WrongArity", "HloModule m\nENTRY e {\n  a = f32[] parameter(0)\n  ROOT b = f32[] add(a)\n}\n",
     "bad.hlo:4:18: error: ", "'add' expects 2 operands, got 1"},
    {"WrongArityUnary",
     "HloModule m\nENTRY e {\n  a = f32[] parameter(0)\n  ROOT b = f32[] negate(a, a)\n}\n",
     "bad.hlo:4:18: error: ", "'negate' expects 1 operand, got 2"},
    {"UnclosedComputation", "HloModule m\nENTRY e {\n  ROOT a = f32[] parameter(0)\n",
     "bad.hlo:2:1: error: ", "is not closed"},
    {"EmptyComputation", "HloModule m\nENTRY e {\n}\n",
     "bad.hlo:2:1: error: ", "has no instructions"},
    {"TwoRoots",
     "HloModule m\nENTRY e {\n  ROOT a = f32[] parameter(0)\n  ROOT b = f32[] negate(a)\n}\n",
     "bad.hlo:4:3: error: ", "more than one ROOT"},
    {"BadDirection",
     "HloModule m\nENTRY e {\n  a = f32[] parameter(0)\n  ROOT b = pred[] compare(a, a), "
     "direction=XX\n}\n",
     "bad.hlo:4:44: error: ", "unknown comparison direction 'XX'"},
    {"MissingDirection",
     "HloModule m\nENTRY e {\n  a = f32[] parameter(0)\n  ROOT b = pred[] compare(a, a)\n}\n",
     "bad.hlo:4:19: error: ", "compare requires 'direction='"},
    {"DuplicateTypedAttribute",
     "HloModule m\nENTRY e {\n  a = f32[2] parameter(0)\n  ROOT b = f32[2] reverse(a), "
     "dimensions={0}, dimensions={0}\n}\n",
     "bad.hlo:4:47: error: ", "duplicate attribute 'dimensions'"},
    {"BadSlice",
     "HloModule m\nENTRY e {\n  a = f32[4] parameter(0)\n  ROOT b = f32[2] slice(a), "
     "slice={[0;2]}\n}\n",
     "bad.hlo:4:38: error: ", "expected ':' in slice, got ';'"},
    {"BadWindowField",
     "HloModule m\nENTRY e {\n  a = f32[4] parameter(0)\n  z = f32[] constant(0)\n  ROOT b = "
     "f32[2] reduce-window(a, z), window={size=2 strid=2}, to_apply=e\n}\n",
     "bad.hlo:5:55: error: ", "unknown window field 'strid'"},
    {"WindowRankMismatch",
     "HloModule m\nENTRY e {\n  a = f32[4] parameter(0)\n  z = f32[] constant(0)\n  ROOT b = "
     "f32[2] reduce-window(a, z), window={size=2x2 stride=2}, to_apply=e\n}\n",
     "bad.hlo:5:57: error: ", "window field 'stride' has 1 dimensions, expected 2"},
    {"BadDimLabels",
     "HloModule m\nENTRY e {\n  a = f32[1,2,2,1] parameter(0)\n  ROOT c = f32[1,2,2,1] "
     "convolution(a, a), window={size=1x1}, dim_labels=b01f_01io->b0f\n}\n",
     "bad.hlo:4:74: error: ", "dim_labels parts must have the same rank"},
    {"IntegerOverflow",
     "HloModule m\nENTRY e {\n  ROOT a = f32[99999999999999999999999] parameter(0)\n}\n",
     "bad.hlo:3:16: error: ", "integer is too large"},
    {"ConstantOutOfRange", "HloModule m\nENTRY e {\n  ROOT a = s8[2] constant({1, 300})\n}\n",
     "bad.hlo:3:31: error: ", "integer '300' is out of range for s8"},
    {"TooFewArrayElements", "HloModule m\nENTRY e {\n  ROOT a = f32[3] constant({1, 2})\n}\n",
     "bad.hlo:3:33: error: ", "expected ','"},
    {"MissingGteIndex",
     "HloModule m\nENTRY e {\n  a = (f32[]) parameter(0)\n  ROOT b = f32[] "
     "get-tuple-element(a)\n}\n",
     "bad.hlo:4:18: error: ", "requires 'index='"},
    {"WhileWithoutBody",
     "HloModule m\nc {\n  p = f32[] parameter(0)\n  ROOT r = pred[] constant(true)\n}\nENTRY e {\n "
     " a = f32[] parameter(0)\n  ROOT w = f32[] while(a), condition=c\n}\n",
     "bad.hlo:8:18: error: ", "requires exactly one 'body='"},
    {"Cycle", "HloModule m\nENTRY e {\n  a = f32[] negate(b)\n  ROOT b = f32[] negate(a)\n}\n",
     "bad.hlo:", "cycle"},
    {"RecursiveCall",
     "HloModule m\nf {\n  p = f32[] parameter(0)\n  ROOT c = f32[] call(p), to_apply=g\n}\ng {\n  "
     "p = f32[] parameter(0)\n  ROOT c = f32[] call(p), to_apply=f\n}\nENTRY e {\n  p = f32[] "
     "parameter(0)\n  ROOT c = f32[] call(p), to_apply=f\n}\n",
     "bad.hlo:", "recursively"},
    {"ParameterGap",
     "HloModule m\nENTRY e {\n  a = f32[] parameter(0)\n  ROOT b = f32[] parameter(2)\n}\n",
     "bad.hlo:2:1: error: ", "not contiguous"},
    {"DuplicateParameter",
     "HloModule m\nENTRY e {\n  a = f32[] parameter(0)\n  ROOT b = f32[] parameter(0)\n}\n",
     "bad.hlo:4:8: error: ", "duplicate parameter number 0"},
    {"SignatureMismatch",
     "HloModule m\nENTRY e (x: f32[], y: f32[]) -> f32[] {\n  ROOT a = f32[] parameter(0)\n}\n",
     "bad.hlo:2:7: error: ", "lists 2 parameters but the body has 1"},
    {"TwoEntries",
     "HloModule m\nENTRY a {\n  ROOT p = f32[] parameter(0)\n}\nENTRY b {\n  ROOT p = f32[] "
     "parameter(0)\n}\n",
     "bad.hlo:5:1: error: ", "more than one ENTRY"},
    {"NoComputations", "HloModule m\n", "bad.hlo:2:1: error: ", "module has no computations"},
    {"UnbalancedRaw",
     "HloModule m\nENTRY e {\n  ROOT a = f32[] parameter(0), sharding={replicated]\n}\n",
     "bad.hlo:3:52: error: ", "mismatched ']'"},
    {"BadLayout", "HloModule m\nENTRY e {\n  ROOT a = f32[2,3]{0} parameter(0)\n}\n",
     "bad.hlo:3:20: error: ", "layout has 1 dimensions but the shape has rank 2"},
    {"BadPred", "HloModule m\nENTRY e {\n  ROOT a = pred[] constant(yes)\n}\n",
     "bad.hlo:3:28: error: ", "expected a pred value"},
    {"MissingOperandParen",
     "HloModule m\nENTRY e {\n  a = f32[] parameter(0)\n  ROOT b = f32[] negate a\n}\n",
     "bad.hlo:4:25: error: ", "expected '(' after opcode 'negate'"},
    {"BadParameterNumber", "HloModule m\nENTRY e {\n  ROOT a = f32[] parameter(-1)\n}\n",
     "bad.hlo:3:28: error: ", "parameter number out of range"},
    {"DeepTupleShape", nullptr, "bad.hlo:", "too deep"},
    // Inputs that stand in for HLO text: each is named, with the way to HLO text.
    {"StableHlo",
     "module @jit_f attributes {mhlo.num_partitions = 1 : i32} {\n  func.func public "
     "@main(%arg0: tensor<4xf32>) -> tensor<4xf32> {\n    return %arg0 : tensor<4xf32>\n  }\n}\n",
     "bad.hlo:1:1: error: ", "MLIR (StableHLO) text, not HLO text"},
    {"StableHloAfterComments", "// from jax\n\n#loc1 = loc(\"x\")\nmodule @m {\n}\n",
     "bad.hlo:1:1: error: ", "as_text(dialect=\"hlo\")"},
    {"BinaryProto",
     "\x0a\x0cjit__lambda_\x12\x05"
     "entry",
     "bad.hlo:1:1: error: ", "binary data, not HLO text"},
};

class ParserErrorTest : public ::testing::TestWithParam<ErrorCase> {};

TEST_P(ParserErrorTest, ReportsLocationAndMessage) {
  const ErrorCase& c = GetParam();
  std::string text;
  if (c.text != nullptr) {
    text = c.text;
  } else {
    text = "HloModule m\nENTRY e {\n  ROOT a = " + std::string(500, '(') + "f32[]" +
           std::string(500, ')') + " parameter(0)\n}\n";
  }
  std::string error = ParseError(text);
  ASSERT_FALSE(error.empty()) << "parsed successfully:\n" << text;
  EXPECT_EQ(error.substr(0, std::string(c.location).size()), c.location) << error;
  EXPECT_NE(error.find(c.message), std::string::npos) << error;
}

INSTANTIATE_TEST_SUITE_P(Malformed, ParserErrorTest, ::testing::ValuesIn(kCases),
                         [](const ::testing::TestParamInfo<ErrorCase>& info) {
                           return std::string(info.param.name);
                         });

// Every prefix of a valid module either parses or fails cleanly.
TEST(ParserErrorFuzzTest, EveryPrefixFailsCleanly) {
  const std::string text = R"(HloModule m, entry_computation_layout={(f32[4]{0})->f32[]}

add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b), metadata={op_name="x/y" source_line=3}
}

ENTRY %main (p: f32[4]) -> f32[] {
  %p = f32[4]{0} parameter(0)
  %c = (f32[], s32[2]) constant((1.5, {1, 2}))
  %z = f32[] constant(0)
  ROOT %r = f32[] reduce(f32[4]{0} %p, f32[] %z), dimensions={0}, to_apply=%add /*index=5*/
}
)";
  for (size_t n = 0; n <= text.size(); ++n) {
    auto module = ParseModule(std::string_view(text).substr(0, n), "prefix");
    if (!module.ok()) {
      EXPECT_EQ(std::string(module.status().message()).rfind("prefix:", 0), 0u);
    }
  }
  // Byte flips: never crash.
  for (size_t i = 0; i < text.size(); i += 3) {
    for (char c : {'{', '}', '(', ')', ',', '"', '%', '\0', '9', '-'}) {
      std::string mutated = text;
      mutated[i] = c;
      (void)ParseModule(mutated, "mutated");
    }
  }
}

}  // namespace
}  // namespace hlogym
