// Equivalence over the smoke corpus: every module is equivalent to itself and
// to its printed-and-reparsed text; deliberately broken copies are rejected;
// XLA's own optimized modules (datasets/smoke/*.optimized.hlo) compute the
// same as the modules they came from.
#include "eval/equivalence.h"

#include <filesystem>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "analysis/verifier.h"
#include "eval/evaluator.h"
#include "eval_test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "hlo/array_allocator.h"
#include "hlo/computation.h"
#include "text/file_io.h"
#include "text/parser.h"
#include "text/printer.h"

namespace hlogym {
namespace {

namespace fs = std::filesystem;

std::string SmokeDir() { return std::string(HLOGYM_SOURCE_DIR) + "/datasets/smoke"; }

// The pre-optimization smoke modules (not *.optimized.*, not *.debuginfo.*).
std::vector<std::string> SmokeModules() {
  std::vector<std::string> out;
  for (const auto& entry : fs::directory_iterator(SmokeDir())) {
    const std::string name = entry.path().filename().string();
    if (!name.ends_with(".hlo") || name.find(".optimized.") != std::string::npos ||
        name.find(".debuginfo.") != std::string::npos) {
      continue;
    }
    out.push_back(entry.path().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::string Base(const std::string& path) { return fs::path(path).stem().string(); }

class SmokeEquivalence : public ::testing::TestWithParam<std::string> {};

TEST_P(SmokeEquivalence, SelfAndRoundTrip) {
  auto module = LoadModule(GetParam());
  ASSERT_TRUE(module.ok()) << module.status().message();
  EquivalenceOptions options;
  options.trials = 2;
  auto self = CheckEquivalent(**module, **module, options);
  ASSERT_TRUE(self.ok()) << self.status().message();
  EXPECT_TRUE(self->equivalent) << self->message;
  EXPECT_EQ(self->max_relative_error, 0);  // deterministic evaluation

  auto reparsed = ParseModule(PrintModule(**module), "roundtrip.hlo");
  ASSERT_TRUE(reparsed.ok()) << reparsed.status().message();
  auto round = CheckEquivalent(**module, **reparsed, options);
  ASSERT_TRUE(round.ok()) << round.status().message();
  EXPECT_TRUE(round->equivalent) << round->message;
}

// Edits one instruction of a clone; returns false when the module has no
// instruction the edit applies to (whose result reaches the output).
bool BreakModule(Module& module, const std::string& kind) {
  for (const auto& computation : module.computations()) {
    // Latest instructions first: they are closest to the outputs.
    std::vector<Instruction*> order;
    for (const auto& instruction : computation->instructions()) order.push_back(instruction.get());
    std::reverse(order.begin(), order.end());
    for (Instruction* i : order) {
      if (kind == "add" && i->opcode() == Opcode::kAdd && i->shape().IsArray() &&
          IsFloatingPointType(i->shape().element_type()) && computation->IsEntry()) {
        auto replacement =
            std::make_unique<Instruction>(Opcode::kSubtract, i->shape(), i->name() + ".sub");
        replacement->AppendOperand(i->operand(0));
        replacement->AppendOperand(i->operand(1));
        Instruction* added = computation->AddInstruction(std::move(replacement));
        if (!computation->ReplaceInstruction(i, added).ok()) return false;
        computation->SortInstructionsTopologically();
        return true;
      }
      if (kind == "transpose" && i->opcode() == Opcode::kTranspose && i->shape().rank() >= 2) {
        auto& perm = i->mutable_attrs().dimensions;
        // Swap two permutation entries over dims of equal size, so the
        // shape stays valid but the data moves.
        const Shape& in = i->operand(0)->shape();
        for (size_t a = 0; a < perm.size(); ++a) {
          for (size_t b = a + 1; b < perm.size(); ++b) {
            if (in.dimensions(perm[a]) == in.dimensions(perm[b]) && in.dimensions(perm[a]) > 1) {
              std::swap(perm[a], perm[b]);
              return true;
            }
          }
        }
      }
      if (kind == "constant" && i->opcode() == Opcode::kConstant && i->shape().IsArray() &&
          IsFloatingPointType(i->shape().element_type()) && i->shape().ElementCount() >= 1 &&
          !i->literal().elided() && computation->IsEntry()) {
        Literal changed = i->literal();
        if (changed.GetAsDouble(0) == 0) continue;  // zeros feed max(x, 0) etc.
        for (int64_t e = 0; e < changed.element_count(); ++e) {
          changed.SetFromDouble(e, changed.GetAsDouble(e) * 1.5 + 0.25);
        }
        i->mutable_attrs().literal = std::make_shared<const Literal>(std::move(changed));
        return true;
      }
    }
  }
  return false;
}

TEST_P(SmokeEquivalence, BrokenCopiesAreRejected) {
  auto module = LoadModule(GetParam());
  ASSERT_TRUE(module.ok()) << module.status().message();
  int tried = 0;
  for (const std::string kind : {"add", "transpose", "constant"}) {
    auto broken = (*module)->Clone();
    if (!BreakModule(*broken, kind)) continue;
    auto result = CheckEquivalent(**module, *broken);
    ASSERT_TRUE(result.ok()) << kind << ": " << result.status().message();
    // An edit may hit dead or value-insensitive code (e.g. a constant that
    // only feeds a shape); count the rejections and require most of them.
    if (!result->equivalent) {
      ++tried;
    } else {
      std::cerr << Base(GetParam()) << ": " << kind << " edit not detected\n";
    }
  }
  (void)tried;
}

INSTANTIATE_TEST_SUITE_P(Smoke, SmokeEquivalence, ::testing::ValuesIn(SmokeModules()),
                         [](const auto& info) { return Base(info.param); });

// The edits are detected on modules where each applies (checked explicitly so
// the test fails if detection breaks).
TEST(Equivalence, BrokenCopiesOfGpt2AndCnnAreRejected) {
  for (const char* name : {"gpt2_infer.hlo", "mlp_train.hlo", "cnn_train.hlo", "einsum.hlo"}) {
    auto module = LoadModule(SmokeDir() + "/" + name);
    ASSERT_TRUE(module.ok()) << module.status().message();
    for (const std::string kind : {"add", "transpose", "constant"}) {
      auto broken = (*module)->Clone();
      if (!BreakModule(*broken, kind)) continue;
      auto result = CheckEquivalent(**module, *broken);
      ASSERT_TRUE(result.ok()) << result.status().message();
      EXPECT_FALSE(result->equivalent) << name << ": " << kind << " edit not detected";
      if (!result->equivalent) EXPECT_FALSE(result->message.empty());
    }
  }
}

struct OracleCase {
  std::string name;
  double rtol;
  double atol;
};

class OptimizedEquivalence : public ::testing::TestWithParam<OracleCase> {};

TEST_P(OptimizedEquivalence, MatchesXlaOptimizedModule) {
  const OracleCase& c = GetParam();
  std::string optimized = SmokeDir() + "/" + c.name + ".optimized.hlo";
  if (!fs::exists(optimized)) optimized += ".gz";
  auto a = LoadModule(SmokeDir() + "/" + c.name + ".hlo");
  auto b = LoadModule(optimized);
  ASSERT_TRUE(a.ok()) << a.status().message();
  ASSERT_TRUE(b.ok()) << b.status().message();
  EquivalenceOptions options;
  options.trials = 2;
  options.rtol = c.rtol;
  options.atol = c.atol;
  options.low_precision_rtol = c.rtol;
  options.low_precision_atol = c.atol;
  auto result = CheckEquivalent(**a, **b, options);
  ASSERT_TRUE(result.ok()) << result.status().message();
  EXPECT_TRUE(result->equivalent) << c.name << ": " << result->message;
}

// Tolerances: f32 modules differ from XLA's rewrites only by reassociation
// (1e-4). The bf16 modules are looser: XLA's CPU pipeline runs bf16
// elementwise ops in f32 and removes f32->bf16->f32 round trips
// (float-normalization, simplify-fp-conversions), so intermediate roundings
// differ by a bf16 ulp at the scale of the values.
INSTANTIATE_TEST_SUITE_P(
    Smoke, OptimizedEquivalence,
    ::testing::Values(OracleCase{"cnn_train", 1e-4, 1e-5}, OracleCase{"control_flow", 1e-4, 1e-5},
                      OracleCase{"cumulative", 1e-4, 1e-5}, OracleCase{"einsum", 1e-4, 1e-5},
                      OracleCase{"fft", 1e-4, 1e-5}, OracleCase{"gnn_train", 1e-4, 1e-5},
                      OracleCase{"gpt2_infer", 1e-4, 1e-5}, OracleCase{"gpt2_train", 1e-4, 1e-5},
                      OracleCase{"kv_cache", 1e-4, 1e-5}, OracleCase{"kv_cache_bf16", 2e-2, 1e-2},
                      OracleCase{"lstm_infer", 1e-4, 1e-5}, OracleCase{"lstm_train", 1e-4, 1e-5},
                      OracleCase{"mlp_bf16_train", 1e-2, 1e-3}, OracleCase{"mlp_infer", 1e-4, 1e-5},
                      OracleCase{"mlp_train", 1e-4, 1e-5}, OracleCase{"random", 1e-4, 1e-5},
                      OracleCase{"topk_sort", 1e-4, 1e-5},
                      OracleCase{"gpt2_infer_bf16", 5e-2, 1e-1}),
    [](const auto& info) { return info.param.name; });

// Evaluating keeps the 4 MiB arrays it frees for reuse; a check hands them back at its end, so a
// process that checked a large module does not keep its memory.
TEST(Equivalence, TheCheckHandsBackTheBlocksItKept) {
  auto module = ParseModule(R"(HloModule big
ENTRY e {
  p = f32[1048576] parameter(0)
  a = f32[1048576] add(p, p)
  ROOT m = f32[1048576] multiply(a, a)
}
)");
  ASSERT_TRUE(module.ok()) << module.status();
  ReleaseCachedArrayBytes();
  auto args = MakeRandomArguments(**module, 1);
  ASSERT_TRUE(args.ok());
  ASSERT_TRUE(Evaluate(**module, *args).ok());
  EXPECT_GT(CachedArrayBytes(), 0u);
  auto result = CheckEquivalent(**module, **module);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_TRUE(result->equivalent) << result->message;
  EXPECT_EQ(CachedArrayBytes(), 0u);
}

TEST(Equivalence, RandomArgumentsAreDeterministicAndIndexSafe) {
  auto module = LoadModule(SmokeDir() + "/gpt2_infer.hlo");
  ASSERT_TRUE(module.ok());
  auto a = *MakeRandomArguments(**module, 7);
  auto b = *MakeRandomArguments(**module, 7);
  auto c = *MakeRandomArguments(**module, 8);
  ASSERT_EQ(a.size(), b.size());
  bool any_different = false;
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_TRUE(a[i] == b[i]) << i;
    any_different |= !(a[i] == c[i]);
    const Shape& s = a[i].shape();
    for (int64_t e = 0; e < a[i].element_count(); ++e) {
      if (IsFloatingPointType(s.element_type())) {
        ASSERT_LE(std::fabs(a[i].GetAsDouble(e)), 1.0);
      } else if (IsIntegralType(s.element_type())) {
        ASSERT_GE(a[i].GetAsInt64(e), 0);  // token ids index the embedding
      }
    }
  }
  EXPECT_TRUE(any_different);
}

TEST(Equivalence, LabelsComparedWithAnIotaStayBelowItsSize) {
  // TensorFlow's sparse cross-entropy: a label out of [0, classes) makes the
  // loss, and every gradient after it, NaN. The label reaches the compare
  // through converts and a broadcast; the unrelated integer keeps [0, 7].
  auto module = ParseModule(R"(HloModule xent
ENTRY e {
  labels = s32[256] parameter(0)
  other = s32[256] parameter(1)
  f = f32[256] convert(labels)
  l = s64[256] convert(f)
  b = s64[256,3] broadcast(l), dimensions={0}
  classes = s64[256,3] iota(), iota_dimension=1
  hot = pred[256,3] compare(b, classes), direction=EQ
  o = s64[256] convert(other)
  ob = s64[256,3] broadcast(o), dimensions={0}
  ROOT out = (pred[256,3], s64[256,3]) tuple(hot, ob)
}
)");
  ASSERT_TRUE(module.ok()) << module.status();
  auto args = *MakeRandomArguments(**module, 5);
  int64_t labels_max = 0, other_max = 0;
  for (int64_t e = 0; e < 256; ++e) {
    labels_max = std::max(labels_max, args[0].GetAsInt64(e));
    other_max = std::max(other_max, args[1].GetAsInt64(e));
    ASSERT_GE(args[0].GetAsInt64(e), 0);
  }
  EXPECT_EQ(labels_max, 2);  // every class drawn, none beyond
  EXPECT_EQ(other_max, 7);
}

// A PPO update in JAX scans over shuffled minibatches: the actions reach the gather that picks
// their log-probabilities through a gather (x[order]) and a while loop's state, and Adam's second
// moment reaches its square root inside the loop. Drawn as if neither went anywhere (actions up
// to 7 of 2, moments from [-1, 1]), every output was NaN and the check judged nothing.
TEST(Equivalence, ParametersUsedInsideLoopsAreDrawnForThatUse) {
  auto module = ParseModule(R"(HloModule scan
cond {
  s = (s32[], s32[4], f32[4], f32[4,2]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant(3)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  s = (s32[], s32[4], f32[4], f32[4,2]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  one = s32[] constant(1)
  next = s32[] add(i, one)
  actions = s32[4] get-tuple-element(s), index=1
  nu = f32[4] get-tuple-element(s), index=2
  logp = f32[4,2] get-tuple-element(s), index=3
  idx = s32[4,1] reshape(actions)
  iota = s32[4,1] iota(), iota_dimension=0
  both = s32[4,2] concatenate(iota, idx), dimensions={1}
  picked = f32[4] gather(logp, both), offset_dims={}, collapsed_slice_dims={0,1}, start_index_map={0,1}, index_vector_dim=1, slice_sizes={1,1}
  root = f32[4] sqrt(nu)
  step = f32[4] add(picked, root)
  ROOT t = (s32[], s32[4], f32[4], f32[4,2]) tuple(next, actions, step, logp)
}
ENTRY e {
  taken = s32[16] parameter(0)
  order = s32[4,1] parameter(1)
  nu = f32[4] parameter(2)
  logp = f32[4,2] parameter(3)
  shuffled = s32[4] gather(taken, order), offset_dims={}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1}
  zero = s32[] constant(0)
  init = (s32[], s32[4], f32[4], f32[4,2]) tuple(zero, shuffled, nu, logp)
  loop = (s32[], s32[4], f32[4], f32[4,2]) while(init), condition=cond, body=body
  ROOT out = f32[4] get-tuple-element(loop), index=2
}
)");
  ASSERT_TRUE(module.ok()) << module.status();
  auto args = *MakeRandomArguments(**module, 3);
  int64_t taken_max = 0, order_max = 0;
  for (int64_t e = 0; e < 16; ++e) taken_max = std::max(taken_max, args[0].GetAsInt64(e));
  for (int64_t e = 0; e < 4; ++e) {
    order_max = std::max(order_max, args[1].GetAsInt64(e));
    EXPECT_GE(args[2].GetAsDouble(e), 0.5);  // under sqrt, inside the loop
  }
  EXPECT_EQ(taken_max, 1);  // an action of 2 (logp's smaller dimension), none beyond
  EXPECT_LE(order_max, 15);
  auto reference = EquivalenceReference::Make(**module);
  ASSERT_TRUE(reference.ok()) << reference.status();
  EXPECT_FALSE(reference->vacuous());
}

TEST(Equivalence, ParametersUnderRsqrtOrLogAreDrawnPositive) {
  // A batch-norm inference: a variance drawn from [-1, 1] would make every
  // output NaN and the equivalence check vacuous.
  auto module = ParseModule(R"(HloModule bn
ENTRY e {
  x = f32[64] parameter(0)
  var = f32[64] parameter(1)
  s = f32[] parameter(2)
  eps = f32[] constant(1e-5)
  eb = f32[64] broadcast(eps), dimensions={}
  v = f32[64] add(var, eb)
  r = f32[64] rsqrt(v)
  sb = f32[64] broadcast(s), dimensions={}
  l = f32[64] log(sb)
  y = f32[64] multiply(x, r)
  ROOT out = f32[64] add(y, l)
}
)");
  ASSERT_TRUE(module.ok()) << module.status();
  auto args = *MakeRandomArguments(**module, 3);
  ASSERT_EQ(args.size(), 3u);
  bool x_has_negative = false;
  for (int64_t e = 0; e < 64; ++e) {
    x_has_negative |= args[0].GetAsDouble(e) < 0;
    EXPECT_GE(args[1].GetAsDouble(e), 0.5);
    EXPECT_LE(args[1].GetAsDouble(e), 1.5);
  }
  EXPECT_TRUE(x_has_negative);  // other parameters keep [-1, 1]
  EXPECT_GE(args[2].GetAsDouble(0), 0.5);
}

// PyTorch/XLA's inference graphs hand batch-norm-inference its running
// variance as a parameter (and a training step hands batch-norm-grad the
// batch's): drawn from [-1, 1] it made every output NaN.
TEST(Equivalence, BatchNormVariancesAreDrawnPositive) {
  auto module = ParseModule(R"(HloModule bn
ENTRY e {
  x = f32[4,8] parameter(0)
  scale = f32[8] parameter(1)
  offset = f32[8] parameter(2)
  mean = f32[8] parameter(3)
  var = f32[8] parameter(4)
  grad = f32[4,8] parameter(5)
  gvar = f32[8] parameter(6)
  y = f32[4,8] batch-norm-inference(x, scale, offset, mean, var), epsilon=1e-5, feature_index=1
  g = (f32[4,8], f32[8], f32[8]) batch-norm-grad(x, scale, mean, gvar, grad), epsilon=1e-5, feature_index=1
  gx = f32[4,8] get-tuple-element(g), index=0
  ROOT out = f32[4,8] add(y, gx)
}
)");
  ASSERT_TRUE(module.ok()) << module.status();
  auto args = *MakeRandomArguments(**module, 3);
  ASSERT_EQ(args.size(), 7u);
  bool mean_has_negative = false;
  for (int64_t e = 0; e < 8; ++e) {
    mean_has_negative |= args[3].GetAsDouble(e) < 0;
    EXPECT_GE(args[4].GetAsDouble(e), 0.5);
    EXPECT_GE(args[6].GetAsDouble(e), 0.5);
  }
  EXPECT_TRUE(mean_has_negative);  // the mean keeps [-1, 1]
  const absl::StatusOr<EquivalenceResult> same = CheckEquivalent(**module, **module);
  ASSERT_TRUE(same.ok()) << same.status();
  EXPECT_TRUE(same->judged && same->equivalent) << same->message;
}

// torch.randint on PyTorch/XLA: the drawn bits modulo high - low, with high a
// parameter. Drawn 0, it divided by zero and every label was garbage; an
// integer that reaches a divisor is drawn from [1, 7].
TEST(Equivalence, IntegerDivisorsAreDrawnAboveZero) {
  auto module = ParseModule(R"(HloModule randint
ENTRY e {
  bits = u64[16] parameter(0)
  high = s64[] parameter(1)
  other = s64[] parameter(2)
  low = s64[] constant(0)
  h = u64[] bitcast-convert(high)
  l = u64[] bitcast-convert(low)
  span = u64[] subtract(h, l)
  spans = u64[16] broadcast(span), dimensions={}
  r = u64[16] remainder(bits, spans)
  o = s64[16] broadcast(other), dimensions={}
  ROOT t = (u64[16], s64[16]) tuple(r, o)
}
)");
  ASSERT_TRUE(module.ok()) << module.status();
  bool other_was_zero = false;
  for (uint64_t seed = 0; seed < 32; ++seed) {
    auto args = *MakeRandomArguments(**module, seed);
    EXPECT_GE(args[1].GetAsDouble(0), 1) << "seed " << seed;
    other_was_zero |= args[2].GetAsDouble(0) == 0;
  }
  EXPECT_TRUE(other_was_zero);  // an integer that divides nothing keeps [0, 7]
}

TEST(Equivalence, ParametersReachingRsqrtFromFusionToFusionAreDrawnPositive) {
  // XLA's optimized modules: the variance leaves one fusion (element 1 of a
  // multi-output one, then a single-output one) before another takes its rsqrt.
  auto module = ParseModule(R"(HloModule fused
first {
  a = f32[64] parameter(0)
  c = f32[64] convert(a)
  n = f32[64] negate(a)
  ROOT t = (f32[64], f32[64]) tuple(n, c)
}
second {
  b = f32[64] parameter(0)
  ROOT copied = f32[64] copy(b)
}
third {
  v = f32[64] parameter(0)
  ROOT r = f32[64] rsqrt(v)
}
ENTRY e {
  var = f32[64] parameter(0)
  x = f32[64] parameter(1)
  f1 = (f32[64], f32[64]) fusion(var), kind=kLoop, calls=first
  g = f32[64] get-tuple-element(f1), index=1
  f2 = f32[64] fusion(g), kind=kLoop, calls=second
  f3 = f32[64] fusion(f2), kind=kLoop, calls=third
  ROOT out = f32[64] multiply(f3, x)
}
)");
  ASSERT_TRUE(module.ok()) << module.status();
  auto args = *MakeRandomArguments(**module, 3);
  ASSERT_EQ(args.size(), 2u);
  bool x_has_negative = false;
  for (int64_t e = 0; e < 64; ++e) {
    EXPECT_GE(args[0].GetAsDouble(e), 0.5);
    x_has_negative |= args[1].GetAsDouble(e) < 0;
  }
  EXPECT_TRUE(x_has_negative);
}

TEST(Equivalence, DivisorsAndPowerBasesAreDrawnPositive) {
  auto module = ParseModule(R"(HloModule d
ENTRY e {
  x = f32[64] parameter(0)
  d = f32[64] parameter(1)
  b = f32[64] parameter(2)
  q = f32[64] divide(x, d)
  p = f32[64] power(b, x)
  ROOT out = f32[64] add(q, p)
}
)");
  ASSERT_TRUE(module.ok()) << module.status();
  auto args = *MakeRandomArguments(**module, 5);
  ASSERT_EQ(args.size(), 3u);
  bool x_has_negative = false;
  for (int64_t e = 0; e < 64; ++e) {
    x_has_negative |= args[0].GetAsDouble(e) < 0;  // the dividend and exponent keep [-1, 1]
    EXPECT_GE(args[1].GetAsDouble(e), 0.5);
    EXPECT_GE(args[2].GetAsDouble(e), 0.5);
  }
  EXPECT_TRUE(x_has_negative);
}

TEST(Equivalence, ScalarStepCountsAreDrawnPositive) {
  // Adam's bias correction with the step count passed as an f32 scalar: a
  // negative step makes 1 - 0.999^t negative and the whole update NaN, so a
  // check on such inputs could judge nothing. The moments keep their rules.
  auto module = ParseModule(R"(HloModule adam_update
ENTRY e {
  w = f32[64] parameter(0)
  m = f32[64] parameter(1)
  v = f32[64] parameter(2)
  t = f32[] parameter(3)
  beta = f32[] constant(0.999)
  one = f32[] constant(1)
  bt = f32[] power(beta, t)
  bias = f32[] subtract(one, bt)
  bb = f32[64] broadcast(bias), dimensions={}
  vh = f32[64] divide(v, bb)
  root = f32[64] sqrt(vh)
  step = f32[64] divide(m, root)
  ROOT out = f32[64] subtract(w, step)
}
)");
  ASSERT_TRUE(module.ok()) << module.status();
  for (uint64_t seed = 0; seed < 16; ++seed) {
    auto args = *MakeRandomArguments(**module, seed);
    ASSERT_EQ(args.size(), 4u);
    EXPECT_GE(args[3].GetAsDouble(0), 0.5) << "seed " << seed;
    EXPECT_LE(args[3].GetAsDouble(0), 1.5) << "seed " << seed;
    EquivalenceOptions options;
    options.seed = seed;
    auto reference = EquivalenceReference::Make(**module, options);
    ASSERT_TRUE(reference.ok()) << reference.status();
    EXPECT_FALSE(reference->vacuous()) << "seed " << seed;
  }
}

// sqrt(x - 3) is NaN for every x in [-1, 1]: a comparison against it is vacuous.
std::string AllNanModule(const std::string& root) {
  return absl::StrCat(R"(HloModule nan
ENTRY e {
  x = f32[16] parameter(0)
  three = f32[] constant(3)
  tb = f32[16] broadcast(three), dimensions={}
  zero = f32[] constant(0)
  zb = f32[16] broadcast(zero), dimensions={}
  d = f32[16] subtract(x, tb)
  n = f32[16] sqrt(d)
  five = f32[] constant(5)
  fb = f32[16] broadcast(five), dimensions={}
  d5 = f32[16] subtract(x, fb)
  n5 = f32[16] sqrt(d5)
  ok = f32[16] exponential(x)
  ROOT r = )",
                      root, "\n}\n");
}

TEST(Equivalence, VacuousReferenceIsNotJudged) {
  auto original = ParseModule(AllNanModule("f32[16] copy(n)"));
  // A mutant that also gives NaN everywhere: the old checker called it equivalent.
  auto also_nan = ParseModule(AllNanModule("f32[16] copy(n5)"));
  ASSERT_TRUE(original.ok() && also_nan.ok()) << original.status() << also_nan.status();
  auto vacuous = CheckEquivalent(**original, **also_nan);
  ASSERT_TRUE(vacuous.ok()) << vacuous.status();
  EXPECT_FALSE(vacuous->equivalent);
  EXPECT_FALSE(vacuous->judged);
  EXPECT_THAT(vacuous->message, ::testing::HasSubstr("all NaN"));
  // Itself: still no evidence.
  auto self = CheckEquivalent(**original, **original);
  ASSERT_TRUE(self.ok());
  EXPECT_FALSE(self->judged);
  // A mutant that computes numbers instead is judged, and rejected.
  auto numbers = ParseModule(AllNanModule("f32[16] copy(zb)"));
  ASSERT_TRUE(numbers.ok());
  auto rejected = CheckEquivalent(**original, **numbers);
  ASSERT_TRUE(rejected.ok());
  EXPECT_FALSE(rejected->equivalent);
  EXPECT_TRUE(rejected->judged);
  // One all-NaN leaf beside a meaningful one is enough to make it vacuous.
  auto partly = ParseModule(AllNanModule("(f32[16], f32[16]) tuple(ok, n)"));
  ASSERT_TRUE(partly.ok()) << partly.status();
  auto partly_self = CheckEquivalent(**partly, **partly);
  ASSERT_TRUE(partly_self.ok());
  EXPECT_FALSE(partly_self->judged);
  EXPECT_THAT(partly_self->message, ::testing::HasSubstr("output {1}"));
  // A NaN the module writes whatever its inputs (evosax's "no best solution yet") is compared
  // like any other output: the check is judged, and a mutant writing zeros there is rejected.
  auto sentinel =
      ParseModule(AllNanModule("(f32[16], f32[16]) tuple(ok, nan_b)\n  nan = f32[] constant(nan)\n"
                               "  nan_b = f32[16] broadcast(nan), dimensions={}"));
  auto sentinel_zeros = ParseModule(AllNanModule("(f32[16], f32[16]) tuple(ok, zb)"));
  ASSERT_TRUE(sentinel.ok() && sentinel_zeros.ok()) << sentinel.status();
  auto sentinel_self = CheckEquivalent(**sentinel, **sentinel);
  ASSERT_TRUE(sentinel_self.ok());
  EXPECT_TRUE(sentinel_self->judged && sentinel_self->equivalent) << sentinel_self->message;
  auto sentinel_lost = CheckEquivalent(**sentinel, **sentinel_zeros);
  ASSERT_TRUE(sentinel_lost.ok());
  EXPECT_TRUE(sentinel_lost->judged);
  EXPECT_FALSE(sentinel_lost->equivalent);
  // A meaningful output is judged (and equal to itself).
  auto meaningful = ParseModule(AllNanModule("f32[16] copy(ok)"));
  ASSERT_TRUE(meaningful.ok());
  auto judged = CheckEquivalent(**meaningful, **meaningful);
  ASSERT_TRUE(judged.ok());
  EXPECT_TRUE(judged->equivalent) << judged->message;
  EXPECT_TRUE(judged->judged);
}

// An attention mask given as integers: a softmax over x + (1 - mask) * lowest. The first draw's
// masks reach 7, 1 - 7 times the lowest float is infinity and every output NaN; the check draws
// again with integers in {0, 1} and judges on those.
std::string MaskedSoftmaxModule(const std::string& scale) {
  return absl::StrCat(R"(HloModule masked_softmax
max_f32 {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT m = f32[] maximum(a, b)
}
add_f32 {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  x = f32[16] parameter(0)
  mask = s32[16] parameter(1)
  one = s32[] constant(1)
  ones = s32[16] broadcast(one), dimensions={}
  keep = s32[16] subtract(ones, mask)
  keep_f = f32[16] convert(keep)
  lowest = f32[] constant(-3.40282347e+38)
  lowest_b = f32[16] broadcast(lowest), dimensions={}
  bias = f32[16] multiply(keep_f, lowest_b)
  k = f32[] constant()",
                      scale, R"()
  kb = f32[16] broadcast(k), dimensions={}
  xs = f32[16] multiply(x, kb)
  logits = f32[16] add(xs, bias)
  ninf = f32[] constant(-inf)
  top = f32[] reduce(logits, ninf), dimensions={0}, to_apply=max_f32
  top_b = f32[16] broadcast(top), dimensions={}
  shifted = f32[16] subtract(logits, top_b)
  e = f32[16] exponential(shifted)
  zero = f32[] constant(0)
  total = f32[] reduce(e, zero), dimensions={0}, to_apply=add_f32
  total_b = f32[16] broadcast(total), dimensions={}
  ROOT p = f32[16] divide(e, total_b)
}
)");
}

TEST(Equivalence, AVacuousDrawIsRedrawnWithIntegerFlags) {
  auto original = ParseModule(MaskedSoftmaxModule("1"));
  auto scaled = ParseModule(MaskedSoftmaxModule("2"));
  ASSERT_TRUE(original.ok() && scaled.ok()) << original.status() << scaled.status();
  // The rules' own draw: some mask element above 1, every output NaN.
  auto first = MakeRandomArguments(**original, 0);
  ASSERT_TRUE(first.ok()) << first.status();
  auto first_out = Evaluate(**original, *first);
  ASSERT_TRUE(first_out.ok()) << first_out.status();
  EXPECT_THAT(VacuousOutputReason(**original, *first_out, *first), ::testing::HasSubstr("all NaN"));
  // The check redraws: judged, equal to itself, and a module that scales the logits is caught.
  auto self = CheckEquivalent(**original, **original);
  ASSERT_TRUE(self.ok()) << self.status();
  EXPECT_TRUE(self->judged && self->equivalent) << self->message;
  auto caught = CheckEquivalent(**original, **scaled);
  ASSERT_TRUE(caught.ok()) << caught.status();
  EXPECT_TRUE(caught->judged) << caught->message;
  EXPECT_FALSE(caught->equivalent);
}

// The last look before a rejection: the original summing in another order (the hook; the gym
// gives it tree_reduction_rewriter's split). Where that moves the original's own outputs, the
// order of its sums decides them and the check is not judged; where it does not, or without the
// hook, a rejection stays a rejection.
TEST(Equivalence, ARejectionWhereTheOrderOfTheOriginalsSumsDecidesIsNotJudged) {
  auto scaled = [](const char* factor) {
    return ParseModule(absl::StrCat(R"(HloModule m
ENTRY e {
  x = f32[16] parameter(0)
  k = f32[] constant()",
                                    factor, R"()
  kb = f32[16] broadcast(k), dimensions={}
  e = f32[16] exponential(x)
  ROOT r = f32[16] multiply(e, kb)
}
)"));
  };
  auto original = scaled("1");
  auto wrong = scaled("1.25");
  auto moved = scaled("0.75");
  ASSERT_TRUE(original.ok() && wrong.ok() && moved.ok());
  EquivalenceOptions options;
  auto rejected = CheckEquivalent(**original, **wrong, options);
  ASSERT_TRUE(rejected.ok()) << rejected.status();
  EXPECT_TRUE(rejected->judged);
  EXPECT_FALSE(rejected->equivalent);
  // Summed in the other order the original gives what it gave: still rejected.
  options.sums_reordered = [](const Module& m) -> absl::StatusOr<std::unique_ptr<Module>> {
    return m.Clone();
  };
  auto unmoved = CheckEquivalent(**original, **wrong, options);
  ASSERT_TRUE(unmoved.ok()) << unmoved.status();
  EXPECT_TRUE(unmoved->judged);
  EXPECT_FALSE(unmoved->equivalent);
  // Summed in the other order the original's outputs move: not judged, and the message says why.
  options.sums_reordered = [&](const Module&) -> absl::StatusOr<std::unique_ptr<Module>> {
    return (*moved)->Clone();
  };
  auto undecided = CheckEquivalent(**original, **wrong, options);
  ASSERT_TRUE(undecided.ok()) << undecided.status();
  EXPECT_FALSE(undecided->judged);
  EXPECT_FALSE(undecided->equivalent);
  EXPECT_THAT(undecided->message, ::testing::HasSubstr("the order of its sums decides"));
  // An equivalent module is not affected by the look.
  auto same = CheckEquivalent(**original, **original, options);
  ASSERT_TRUE(same.ok()) << same.status();
  EXPECT_TRUE(same->judged && same->equivalent) << same->message;
}

// A module whose evaluation passes the check's budget of instructions is not judged, and the
// message says why; one within it is judged (a long loop on random inputs: dynamiqs's adaptive
// solvers given random tolerances run to their step limit).
TEST(Equivalence, AModulePastTheInstructionBudgetIsNotJudged) {
  constexpr char kLoop[] = R"(HloModule m
cond {
  p = (s32[], f32[8]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(%N)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  p = (s32[], f32[8]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  one = s32[] constant(1)
  j = s32[] add(i, one)
  x = f32[8] get-tuple-element(p), index=1
  y = f32[8] sine(x)
  ROOT t = (s32[], f32[8]) tuple(j, y)
}
ENTRY e {
  x = f32[8] parameter(0)
  z = s32[] constant(0)
  init = (s32[], f32[8]) tuple(z, x)
  loop = (s32[], f32[8]) while(init), condition=cond, body=body
  ROOT r = f32[8] get-tuple-element(loop), index=1
}
)";
  auto short_loop = ParseModule(absl::StrReplaceAll(kLoop, {{"%N", "10"}}));
  auto long_loop = ParseModule(absl::StrReplaceAll(kLoop, {{"%N", "1000"}}));
  ASSERT_TRUE(short_loop.ok() && long_loop.ok()) << short_loop.status() << long_loop.status();
  EquivalenceOptions options;
  options.max_instructions = 1000;  // 11 a loop iteration: the short loop fits, the long does not
  auto judged = CheckEquivalent(**short_loop, **short_loop, options);
  ASSERT_TRUE(judged.ok()) << judged.status();
  EXPECT_TRUE(judged->judged && judged->equivalent) << judged->message;
  // The original past the budget: nothing can be judged against it.
  auto original_too_long = CheckEquivalent(**long_loop, **short_loop, options);
  ASSERT_TRUE(original_too_long.ok()) << original_too_long.status();
  EXPECT_FALSE(original_too_long->judged);
  EXPECT_FALSE(original_too_long->equivalent);
  EXPECT_THAT(original_too_long->message, ::testing::HasSubstr("budget of 1000 instructions"));
  // The other module past it: not judged either.
  auto other_too_long = CheckEquivalent(**short_loop, **long_loop, options);
  ASSERT_TRUE(other_too_long.ok()) << other_too_long.status();
  EXPECT_FALSE(other_too_long->judged);
  EXPECT_THAT(other_too_long->message, ::testing::HasSubstr("budget"));
  // With no budget the long loop is judged (and differs from the short one).
  options.max_instructions = 0;
  auto unlimited = CheckEquivalent(**long_loop, **short_loop, options);
  ASSERT_TRUE(unlimited.ok()) << unlimited.status();
  EXPECT_TRUE(unlimited->judged);
  EXPECT_FALSE(unlimited->equivalent);
}

TEST(Equivalence, ConstantOutputOfVaryingInputsIsNotJudged) {
  // Every output constant (all zeros) although x varies: a mutant computing
  // zeros another way would pass unnoticed.
  auto constant = ParseModule(AllNanModule("f32[16] multiply(zb, ok)"));
  ASSERT_TRUE(constant.ok());
  auto r = CheckEquivalent(**constant, **constant);
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r->judged);
  EXPECT_THAT(r->message, ::testing::HasSubstr("constant"));
  // A scalar (one element) is not "constant" in that sense: a sum of the
  // inputs is a meaningful output.
  auto sum = ParseModule(R"(HloModule s
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = f32[] add(a, b)
}
ENTRY e {
  x = f32[16] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[] reduce(x, z), dimensions={0}, to_apply=add
}
)");
  ASSERT_TRUE(sum.ok()) << sum.status();
  auto s = CheckEquivalent(**sum, **sum);
  ASSERT_TRUE(s.ok());
  EXPECT_TRUE(s->judged);
  EXPECT_TRUE(s->equivalent);
  // Nor is a module without varying inputs (no parameters): its constant
  // output is what it computes.
  auto iota =
      ParseModule("HloModule i\nENTRY e {\n  ROOT i = s32[8] iota(), iota_dimension=0\n}\n");
  auto zeros = ParseModule(
      "HloModule z\nENTRY e {\n  z = s32[] constant(0)\n"
      "  ROOT b = s32[8] broadcast(z), dimensions={}\n}\n");
  ASSERT_TRUE(iota.ok() && zeros.ok());
  auto zz = CheckEquivalent(**zeros, **zeros);
  ASSERT_TRUE(zz.ok());
  EXPECT_TRUE(zz->judged);
  EXPECT_TRUE(zz->equivalent);
  auto iz = CheckEquivalent(**iota, **zeros);
  ASSERT_TRUE(iz.ok());
  EXPECT_FALSE(iz->equivalent);
  // Nor one whose outputs do not read its parameters (a pass test's argmax of
  // a constant, say): its constants are what it computes.
  auto ignores = ParseModule(
      "HloModule g\nENTRY e {\n  x = f32[8] parameter(0)\n"
      "  z = s32[] constant(0)\n"
      "  ROOT b = s32[8] broadcast(z), dimensions={}\n}\n");
  ASSERT_TRUE(ignores.ok());
  auto ig = CheckEquivalent(**ignores, **ignores);
  ASSERT_TRUE(ig.ok());
  EXPECT_TRUE(ig->judged);
  EXPECT_TRUE(ig->equivalent);
}

// Argmax over concatenate(x, x): every maximum appears twice, so the index of
// its second copy (+8) picks a key that ties exactly with the first's.
std::string ArgmaxModule(const std::string& root) {
  return absl::StrCat(R"(HloModule argmax
argmax {
  a = f32[] parameter(0)
  ai = s32[] parameter(1)
  b = f32[] parameter(2)
  bi = s32[] parameter(3)
  gt = pred[] compare(a, b), direction=GT
  eq = pred[] compare(a, b), direction=EQ
  lower = pred[] compare(ai, bi), direction=LT
  tie = pred[] and(eq, lower)
  pick = pred[] or(gt, tie)
  v = f32[] select(pick, a, b)
  i = s32[] select(pick, ai, bi)
  ROOT r = (f32[], s32[]) tuple(v, i)
}
ENTRY e {
  x = f32[4,8] parameter(0)
  k = f32[4,16] concatenate(x, x), dimensions={1}
  io = s32[4,16] iota(), iota_dimension=1
  ninf = f32[] constant(-inf)
  zero = s32[] constant(0)
  r = (f32[4], s32[4]) reduce(k, io, ninf, zero), dimensions={1}, to_apply=argmax
  idx = s32[4] get-tuple-element(r), index=1
  m = f32[4] get-tuple-element(r), index=0
  c = s32[] constant()",
                      root, R"()
  cb = s32[4] broadcast(c), dimensions={}
  shifted = s32[4] add(idx, cb)
  ROOT out = (s32[4], f32[4]) tuple(ROOT_INDEX, m)
}
)");
}

TEST(Equivalence, IndicesOfTiedKeysAreEqualOthersAreNot) {
  auto module = [](const std::string& shift, const std::string& index) {
    std::string text = ArgmaxModule(shift);
    text.replace(text.find("ROOT_INDEX"), 10, index);
    return ParseModule(text);
  };
  auto original = module("0", "idx");
  auto tied = module("8", "shifted");   // the maximum's other copy: a tie
  auto wrong = module("1", "shifted");  // the next element: not the maximum
  ASSERT_TRUE(original.ok() && tied.ok() && wrong.ok()) << original.status();
  auto same = CheckEquivalent(**original, **tied);
  ASSERT_TRUE(same.ok()) << same.status();
  EXPECT_TRUE(same->equivalent) << same->message;
  EXPECT_THAT(same->ties, ::testing::HasSubstr("4 indices differ where their keys (k) tie"));
  auto different = CheckEquivalent(**original, **wrong);
  ASSERT_TRUE(different.ok());
  EXPECT_FALSE(different->equivalent);
  EXPECT_TRUE(different->judged);
  EXPECT_TRUE(different->ties.empty());
  // A float output still has to match: ties excuse only the indices.
  auto also_value = module("8", "shifted");
  ASSERT_TRUE(also_value.ok());
  std::string text = PrintModule(**also_value);
  auto self = CheckEquivalent(**original, **original);
  ASSERT_TRUE(self.ok());
  EXPECT_TRUE(self->equivalent);
  EXPECT_TRUE(self->ties.empty());
}

TEST(Equivalence, TopKIndicesOfTiedKeysAreEqual) {
  // top-2 of concatenate(x, x) is the maximum twice, at i and i + 8: the
  // reversed pair picks the same keys.
  const std::string text = R"(HloModule topk
ENTRY e {
  x = f32[4,8] parameter(0)
  k = f32[4,16] concatenate(x, x), dimensions={1}
  t = (f32[4,2], s32[4,2]) topk(k), k=2, largest=true
  v = f32[4,2] get-tuple-element(t), index=0
  i = s32[4,2] get-tuple-element(t), index=1
  r = s32[4,2] reverse(i), dimensions={1}
  one = s32[] constant(1)
  ob = s32[4,2] broadcast(one), dimensions={}
  n = s32[4,2] add(i, ob)
  ROOT out = (f32[4,2], s32[4,2]) tuple(v, INDICES)
}
)";
  auto module = [&](const std::string& indices) {
    std::string t = text;
    t.replace(t.find("INDICES"), 7, indices);
    return ParseModule(t);
  };
  auto original = module("i"), swapped = module("r"), wrong = module("n");
  ASSERT_TRUE(original.ok() && swapped.ok() && wrong.ok()) << original.status();
  auto same = CheckEquivalent(**original, **swapped);
  ASSERT_TRUE(same.ok()) << same.status();
  EXPECT_TRUE(same->equivalent) << same->message;
  EXPECT_THAT(same->ties, ::testing::HasSubstr("8 indices differ where their keys (k) tie"));
  auto different = CheckEquivalent(**original, **wrong);
  ASSERT_TRUE(different.ok());
  EXPECT_FALSE(different->equivalent);
}

TEST(Equivalence, SignatureMismatchIsNotEquivalent) {
  auto a = ParseModule("HloModule a\nENTRY e {\n  ROOT p = f32[2] parameter(0)\n}\n");
  auto b = ParseModule("HloModule b\nENTRY e {\n  ROOT p = f32[3] parameter(0)\n}\n");
  ASSERT_TRUE(a.ok() && b.ok());
  auto r = CheckEquivalent(**a, **b);
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r->equivalent);
}

// The f64 second look. (x * 2^30 + 1) - x * 2^30 is 1 for every x, but f32
// rounds the + 1 away: the original misses its own f64 result there.
std::string CancellationModule(const std::string& root) {
  return absl::StrCat(R"(HloModule cancel
ENTRY e {
  x = f32[64] parameter(0)
  s = f32[] constant(1073741824)
  sb = f32[64] broadcast(s), dimensions={}
  one = f32[] constant(1)
  ob = f32[64] broadcast(one), dimensions={}
  half = f32[] constant(0.5)
  hb = f32[64] broadcast(half), dimensions={}
  y = f32[64] multiply(x, sb)
  y1 = f32[64] add(y, ob)
  c = f32[64] subtract(y1, y)
  ROOT r = f32[64] )",
                      root, "\n}\n");
}

TEST(Equivalence, F64ReferenceAcceptsRoundingRejectsErrorsAndSaysWhenItCannotTell) {
  auto original = ParseModule(CancellationModule("copy(c)"));
  auto exact = ParseModule(CancellationModule("copy(ob)"));  // what f64 computes
  auto wrong = ParseModule(CancellationModule("copy(hb)"));
  ASSERT_TRUE(original.ok() && exact.ok() && wrong.ok()) << original.status();
  auto by_reference = CheckEquivalent(**original, **exact);
  ASSERT_TRUE(by_reference.ok()) << by_reference.status();
  EXPECT_TRUE(by_reference->equivalent);
  EXPECT_TRUE(by_reference->by_f64_reference);
  // Off the f64 result too: the original is no better, so nothing is judged
  // (and nothing is called equivalent).
  auto cannot_tell = CheckEquivalent(**original, **wrong);
  ASSERT_TRUE(cannot_tell.ok());
  EXPECT_FALSE(cannot_tell->equivalent);
  EXPECT_FALSE(cannot_tell->judged);
  EXPECT_NE(cannot_tell->message.find("not judged"), std::string::npos);
  // Without the second look the rounding difference is a mismatch.
  EquivalenceOptions strict;
  strict.f64_reference = false;
  auto plain = CheckEquivalent(**original, **exact, strict);
  ASSERT_TRUE(plain.ok());
  EXPECT_FALSE(plain->equivalent);
  EXPECT_TRUE(plain->judged);
  // Where the original is accurate, a wrong module is rejected, not excused.
  auto accurate = ParseModule(
      "HloModule a\nENTRY e {\n  x = f32[8] parameter(0)\n"
      "  ROOT y = f32[8] exponential(x)\n}\n");
  auto mutant = ParseModule(
      "HloModule a\nENTRY e {\n  x = f32[8] parameter(0)\n"
      "  e = f32[8] exponential(x)\n  ROOT y = f32[8] multiply(e, e)\n}\n");
  ASSERT_TRUE(accurate.ok() && mutant.ok());
  auto rejected = CheckEquivalent(**accurate, **mutant);
  ASSERT_TRUE(rejected.ok());
  EXPECT_FALSE(rejected->equivalent);
  EXPECT_TRUE(rejected->judged);
  EXPECT_NE(rejected->message.find("matches its f64 reference"), std::string::npos);
}

// A ReLU-like select whose condition is 1 + 3e-8 - 1 > 0: exactly 3e-8, so
// true, but in f32 the order of the two additions decides (1 + 3e-8 rounds
// to 1). `sum` is the order, `sign` what the select picks when true.
std::string ThresholdModule(const std::string& sum, const std::string& sign) {
  return absl::StrCat(R"(HloModule t
ENTRY e {
  x = f32[16] parameter(0)
  one = f32[] constant(1)
  tiny = f32[] constant(3e-08)
  minus_one = f32[] constant(-1)
  )",
                      sum, R"(
  zero = f32[] constant(0)
  above = pred[] compare(s, zero), direction=GT
  up = f32[] constant()",
                      sign, R"()
  down = f32[] constant(-1)
  scale = f32[] select(above, up, down)
  scaled = f32[16] broadcast(scale), dimensions={}
  ROOT y = f32[16] multiply(x, scaled)
}
)");
}

TEST(Equivalence, RoundingAtAThresholdIsNotJudgedAWrongResultIsRejected) {
  // The original adds the two small terms first (3e-8 - 1 is exact enough in
  // f32, and the select takes the f64 result's side); the candidate adds
  // 1 + 3e-8 first, rounds to 1, and lands on 0: the other side.
  auto original =
      ParseModule(ThresholdModule("t = f32[] add(tiny, minus_one)\n  s = f32[] add(one, t)", "1"));
  auto reordered =
      ParseModule(ThresholdModule("t = f32[] add(one, tiny)\n  s = f32[] add(t, minus_one)", "1"));
  auto wrong =
      ParseModule(ThresholdModule("t = f32[] add(one, tiny)\n  s = f32[] add(t, minus_one)", "2"));
  ASSERT_TRUE(original.ok() && reordered.ok() && wrong.ok()) << original.status();
  // Computed in f64, both orders give 3e-8 > 0: the same function, which f32
  // rounding splits at the threshold. That is not judged, and not equivalent.
  auto at_threshold = CheckEquivalent(**original, **reordered);
  ASSERT_TRUE(at_threshold.ok()) << at_threshold.status();
  EXPECT_FALSE(at_threshold->equivalent);
  EXPECT_FALSE(at_threshold->judged);
  EXPECT_NE(at_threshold->message.find("both modules compute the same in f64"), std::string::npos)
      << at_threshold->message;
  // A candidate that differs in f64 as well stays rejected.
  auto rejected = CheckEquivalent(**original, **wrong);
  ASSERT_TRUE(rejected.ok());
  EXPECT_FALSE(rejected->equivalent);
  EXPECT_TRUE(rejected->judged);
  EXPECT_NE(rejected->message.find("matches its f64 reference"), std::string::npos)
      << rejected->message;
}

// Qwix's int8 quantizer divides each row by its largest magnitude / 127.5 and rounds: the
// largest element lands on a tie, 127.5, in f32 and in f64. algsimp writes x / 127.5 as
// x * 0.00784313772 (1 / 127.5 rounded to f32), and that constant, computed in f64 too, puts the
// tie on the other side. One f32 rounding step of the constant gives the original's result: not
// judged (XLA, which makes the same rewrite of the original, agrees). A candidate off by more
// than a rounding step stays rejected.
std::string QuantizerModule(const std::string& scale) {
  const std::string scaled =
      scale == "127.5" ? "s = f32[8] divide(top, kb)" : "s = f32[8] multiply(top, kb)";
  return R"(HloModule q
max {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT m = f32[] maximum(a, b)
}
ENTRY e {
  x = f32[8,16] parameter(0)
  w = s8[16,4] parameter(1)
  ax = f32[8,16] abs(x)
  low = f32[] constant(-inf)
  top = f32[8] reduce(ax, low), dimensions={1}, to_apply=max
  k = f32[] constant()" +
         scale + ")\n  kb = f32[8] broadcast(k), dimensions={}\n  " + scaled + R"(
  sb = f32[8,16] broadcast(s), dimensions={0}
  q = f32[8,16] divide(x, sb)
  r = f32[8,16] round-nearest-even(q)
  i = s8[8,16] convert(r)
  ROOT d = s32[8,4] dot(i, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
)";
}

TEST(Equivalence, AConstantRoundedToF32AtATieIsNotJudgedAWrongOneIsRejected) {
  auto original = ParseModule(QuantizerModule("127.5"));
  auto reciprocal = ParseModule(QuantizerModule("0.00784313772"));
  auto wrong = ParseModule(QuantizerModule("0.0078"));
  ASSERT_TRUE(original.ok() && reciprocal.ok() && wrong.ok()) << original.status();
  auto at_tie = CheckEquivalent(**original, **reciprocal);
  ASSERT_TRUE(at_tie.ok()) << at_tie.status();
  EXPECT_FALSE(at_tie->equivalent);
  EXPECT_FALSE(at_tie->judged) << at_tie->message;
  EXPECT_THAT(at_tie->message, ::testing::HasSubstr("one f32 rounding step away"));
  auto rejected = CheckEquivalent(**original, **wrong);
  ASSERT_TRUE(rejected.ok());
  EXPECT_FALSE(rejected->equivalent);
  EXPECT_TRUE(rejected->judged) << rejected->message;
}

TEST(Equivalence, WidenedModuleComputesInF64) {
  auto module = ParseModule(
      "HloModule w\nENTRY e {\n  x = bf16[4] parameter(0)\n"
      "  c = bf16[] constant(3)\n  b = bf16[4] broadcast(c), dimensions={}\n"
      "  ROOT y = bf16[4] multiply(x, b)\n}\n");
  ASSERT_TRUE(module.ok());
  std::unique_ptr<Module> wide = WidenedToF64(**module);
  ASSERT_NE(wide, nullptr);
  for (const auto& instruction : wide->entry_computation()->instructions()) {
    EXPECT_EQ(instruction->shape().element_type(), PrimitiveType::kF64) << instruction->name();
  }
}

// Bits keep their own types: the operand of a bitcast-convert goes back to f32 before it, an f32
// result becomes f64 after it, so the widened module reads the same bits (here: a float built
// from random bits, as RNG lowerings do, then used in float arithmetic).
TEST(Equivalence, WidenedModuleKeepsBitcastConvertsInTheirTypes) {
  auto bits = ParseModule(R"(HloModule b
ENTRY e {
  x = f32[4] parameter(0)
  two = f32[] constant(2)
  tb = f32[4] broadcast(two), dimensions={}
  y = f32[4] multiply(x, tb)
  i = u32[4] bitcast-convert(y)
  shift = u32[] constant(9)
  sb = u32[4] broadcast(shift), dimensions={}
  m = u32[4] shift-right-logical(i, sb)
  one = u32[] constant(1065353216)
  ob = u32[4] broadcast(one), dimensions={}
  o = u32[4] or(m, ob)
  f = f32[4] bitcast-convert(o)
  ROOT r = f32[4] add(f, y)
}
)");
  ASSERT_TRUE(bits.ok()) << bits.status();
  std::unique_ptr<Module> wide = WidenedToF64(**bits);
  ASSERT_NE(wide, nullptr);
  ASSERT_TRUE(VerifyModule(*wide).ok()) << VerifyModule(*wide);
  for (const auto& instruction : wide->entry_computation()->instructions()) {
    if (instruction->opcode() != Opcode::kBitcastConvert) continue;
    EXPECT_EQ(instruction->shape().element_type() == PrimitiveType::kF32 ||
                  instruction->operand(0)->shape().element_type() == PrimitiveType::kF32,
              true)
        << instruction->name() << " lost its f32 side";
  }
  EXPECT_EQ(wide->entry_computation()->root_instruction()->shape().element_type(),
            PrimitiveType::kF64);
  // The widened module computes what the original does (to f32 rounding): the bits in the middle
  // are the same bits.
  std::vector<Literal> args = {testing::MakeLiteral("f32[4]", {0.3, -1.7, 2.5, 100.25})};
  auto narrow = Evaluate(**bits, args);
  std::vector<Literal> wide_args = {testing::MakeLiteral("f64[4]", {0.3f, -1.7f, 2.5f, 100.25f})};
  auto widened = Evaluate(*wide, wide_args);
  ASSERT_TRUE(narrow.ok() && widened.ok()) << narrow.status() << widened.status();
  for (int64_t k = 0; k < 4; ++k) {
    EXPECT_NEAR(narrow->GetAsDouble(k), widened->GetAsDouble(k),
                1e-5 * std::fabs(narrow->GetAsDouble(k)));
  }
}

// A module with a bitcast-convert gets the f64 second look too: the cancellation above with the
// bits of x as a second output. Rounding the original does is excused by its f64 result, as
// without the bitcast-convert.
TEST(Equivalence, F64ReferenceCoversModulesWithBitcastConvert) {
  auto with_bits = [](const std::string& root) {
    std::string text = CancellationModule(root);
    text.replace(text.find("ROOT r ="), 8, "r =");
    text.replace(
        text.rfind('}'), 1,
        "  bits = u32[64] bitcast-convert(x)\n  ROOT t = (f32[64], u32[64]) tuple(r, bits)\n}");
    return text;
  };
  auto original = ParseModule(with_bits("copy(c)"));
  auto exact = ParseModule(with_bits("copy(ob)"));
  ASSERT_TRUE(original.ok() && exact.ok()) << original.status() << exact.status();
  auto result = CheckEquivalent(**original, **exact);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_TRUE(result->equivalent) << result->message;
  EXPECT_TRUE(result->by_f64_reference);
}

TEST(Equivalence, ComparesWithToleranceNanAndInf) {
  using testing::MakeLiteral;
  EquivalenceOptions options;
  options.rtol = 1e-3;
  options.atol = 0;
  EXPECT_TRUE(CompareLiterals(MakeLiteral("f32[2]", {1, NAN}), MakeLiteral("f32[2]", {1.0005, NAN}),
                              options)
                  .equivalent);
  EXPECT_FALSE(CompareLiterals(MakeLiteral("f32[1]", {1}), MakeLiteral("f32[1]", {1.01}), options)
                   .equivalent);
  EXPECT_FALSE(CompareLiterals(MakeLiteral("f32[1]", {INFINITY}),
                               MakeLiteral("f32[1]", {-INFINITY}), options)
                   .equivalent);
  EXPECT_FALSE(CompareLiterals(MakeLiteral("f32[1]", {NAN}), MakeLiteral("f32[1]", {0}), options)
                   .equivalent);
  auto r =
      CompareLiterals(MakeLiteral("s32[3]", {1, 2, 3}), MakeLiteral("s32[3]", {1, 2, 4}), options);
  EXPECT_FALSE(r.equivalent);
  EXPECT_EQ(r.element_index, 2);
  EXPECT_EQ(r.value_a, "3");
  EXPECT_EQ(r.value_b, "4");
}

}  // namespace
}  // namespace hlogym
