#include "passes/expanders/rng_expander.h"

#include <cmath>
#include <limits>
#include <map>
#include <memory>
#include <numbers>

#include "absl/strings/str_cat.h"
#include "hlo/query.h"
#include "hlo/status_macros.h"
#include "passes/expanders/prng_hlo.h"

namespace hlogym {
namespace {

bool IsLowFloat(PrimitiveType t) { return t == PrimitiveType::kF16 || t == PrimitiveType::kBF16; }

absl::Status CheckSupported(const Instruction& rng) {
  auto bad = [&](const std::string& why) {
    return absl::InvalidArgumentError(absl::StrCat(rng.name(), ": rng ", why));
  };
  const Shape& shape = rng.shape();
  if (!shape.IsArray() || rng.operand_count() != 2) {
    return bad("must have two operands and an array result");
  }
  for (const Instruction* op : rng.operands()) {
    if (!op->shape().IsArray() || !op->shape().IsScalar() ||
        op->shape().element_type() != shape.element_type()) {
      return bad("operands must be scalars of the result's element type");
    }
  }
  for (int64_t d : shape.dimensions()) {
    if (d < 0) return bad("result must have static dimensions");
  }
  const PrimitiveType t = shape.element_type();
  const bool is_float = t == PrimitiveType::kF32 || t == PrimitiveType::kF64 || IsLowFloat(t);
  const bool is_int = t == PrimitiveType::kS32 || t == PrimitiveType::kU32 ||
                      t == PrimitiveType::kS64 || t == PrimitiveType::kU64;
  if (!is_float && !is_int) {
    return bad(absl::StrCat("of type ", std::string(PrimitiveTypeName(t)),
                            " cannot be expanded (32/64-bit integers and f16/bf16/f32/f64 only)"));
  }
  if (!is_float && rng.attrs().rng_distribution == RandomDistribution::kNormal) {
    return bad("rng_normal needs a floating-point result");
  }
  return absl::OkStatus();
}

// Uniform floats in [a, b) from `bits` (flat, u32 for f32, u64 for f64).
Instruction* UniformFloat(HloEmitter& e, Instruction* bits, Instruction* a, Instruction* b,
                          PrimitiveType type) {
  const int width = BitWidth(bits->shape().element_type());
  const int mantissa = type == PrimitiveType::kF64 ? std::numeric_limits<double>::digits - 1
                                                   : std::numeric_limits<float>::digits - 1;
  Instruction* top = e.Binary(Opcode::kShiftRightLogical, bits,
                              e.Int(bits->shape().element_type(), width - mantissa));
  Instruction* unit =
      e.Binary(Opcode::kMultiply, e.Convert(top, type), e.Float(type, std::ldexp(1.0, -mantissa)));
  return e.Binary(Opcode::kAdd,
                  e.Binary(Opcode::kMultiply, unit, e.Binary(Opcode::kSubtract, b, a)), a);
}

// The computation (key, state, a, b) -> draws, for `shape` of `type`.
Computation* BuildDistribution(Module& module, RandomDistribution distribution, PrimitiveType type,
                               const std::vector<int64_t>& dims, bool layout) {
  auto owned = std::make_unique<Computation>(module.UniqueName("rng"));
  owned->set_parent(&module);
  HloEmitter e(owned.get(), layout);
  constexpr PrimitiveType kU64 = PrimitiveType::kU64;
  Instruction* key = e.Parameter(0, e.MakeShape(kU64, {}), "key");
  Instruction* state = e.Parameter(1, e.MakeShape(kU64, {2}), "state");
  Instruction* a = e.Parameter(2, e.MakeShape(type, {}), "a_or_mean");
  Instruction* b = e.Parameter(3, e.MakeShape(type, {}), "b_or_sigma");
  Instruction* lo = e.Element(state, 0);
  Instruction* hi = e.Element(state, 1);
  const bool wide = BitWidth(type) == 64;
  const PrimitiveType bits_type = wide ? kU64 : PrimitiveType::kU32;
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  Instruction* result = nullptr;
  if (distribution == RandomDistribution::kNormal) {
    const HalfSplit s = SplitIntoHalves(dims);
    const int64_t h = s.half_count();
    Instruction* bits = EmitPhiloxBits(e, key, lo, hi, 2 * h, wide).bits;
    Instruction* u = UniformFloat(e, bits, e.Float(type, 0.0), e.Float(type, 1.0), type);
    const int64_t outer = h / s.post;
    Instruction* pairs = e.Reshape(u, {outer, 2, s.post});
    Instruction* x0 = e.Reshape(e.Slice(pairs, {0, 0, 0}, {outer, 1, s.post}), {h});
    Instruction* x1 = e.Reshape(e.Slice(pairs, {0, 1, 0}, {outer, 2, s.post}), {h});
    Instruction* u1 = e.Binary(Opcode::kMaximum, x0, e.Float(type, 1.0e-7f));
    Instruction* v1 =
        e.Binary(Opcode::kMultiply, e.Float(type, 2.0f * std::numbers::pi_v<float>), x1);
    Instruction* u2 = e.Unary(Opcode::kSqrt, e.Binary(Opcode::kMultiply, e.Float(type, -2.0f),
                                                      e.Unary(Opcode::kLog, u1)));
    Instruction* z0 = e.Binary(Opcode::kMultiply, e.Unary(Opcode::kSin, v1), u2);
    Instruction* z1 = e.Binary(Opcode::kMultiply, e.Unary(Opcode::kCos, v1), u2);
    Instruction* z = EmitCombineHalves(e, z0, z1, s, dims);
    result = e.Binary(Opcode::kAdd, a, e.Binary(Opcode::kMultiply, b, z));
  } else {
    Instruction* bits = EmitPhiloxBits(e, key, lo, hi, n, wide).bits;
    if (IsFloatingPointType(type)) {
      result = e.Reshape(UniformFloat(e, bits, a, b, type), dims);
    } else {
      Instruction* range =
          e.Binary(Opcode::kSubtract, e.Convert(b, bits_type), e.Convert(a, bits_type));
      Instruction* d = e.Binary(Opcode::kRemainder, bits, range);
      Instruction* half = e.Binary(Opcode::kShiftRightLogical, d, e.Int(bits_type, 1));
      Instruction* sum = e.Binary(Opcode::kAdd, a, e.Convert(half, type));
      sum = e.Binary(Opcode::kAdd, sum, e.Convert(e.Binary(Opcode::kSubtract, d, half), type));
      result = e.Reshape(sum, dims);
    }
  }
  owned->set_root_instruction(result);
  return module.AddComputation(std::move(owned));
}

}  // namespace

absl::StatusOr<bool> RngExpander::Run(Module& module) {
  std::vector<Instruction*> rngs;
  for (const auto& computation : module.computations()) {
    for (const auto& instruction : computation->instructions()) {
      if (instruction->opcode() == Opcode::kRng) rngs.push_back(instruction.get());
    }
  }
  for (Instruction* rng : rngs) {
    HLOGYM_RETURN_IF_ERROR(CheckSupported(*rng));
  }
  std::map<std::string, Computation*> cache;
  for (Instruction* rng : rngs) {
    Computation* parent = rng->parent();
    const Shape& shape = rng->shape();
    const bool layout = shape.has_layout();
    HloEmitter e(parent, layout);
    const PrimitiveType type = shape.element_type();
    const PrimitiveType compute = IsLowFloat(type) ? PrimitiveType::kF32 : type;
    const std::vector<int64_t> dims = shape.dimensions();
    int64_t n = 1;
    for (int64_t d : dims) n *= d;

    const std::string cache_key =
        absl::StrCat(static_cast<int>(rng->attrs().rng_distribution), "|",
                     std::string(PrimitiveTypeName(compute)), "|", Shape(compute, dims).ToString(),
                     "|", layout ? "L" : "");
    Computation*& distribution = cache[cache_key];
    if (distribution == nullptr) {
      distribution =
          BuildDistribution(module, rng->attrs().rng_distribution, compute, dims, layout);
    }

    auto seed_call =
        std::make_unique<Instruction>(Opcode::kCustomCall, e.MakeShape(PrimitiveType::kU64, {}));
    seed_call->mutable_attrs().custom_call_target = "GetRngSeed";
    Instruction* seed = parent->AddInstruction(std::move(seed_call));
    const uint64_t id = static_cast<uint64_t>(rng->unique_id());
    Instruction* key = e.Binary(Opcode::kXor, seed,
                                e.Int(PrimitiveType::kU64, (id * 0x9E3779B97F4A7C15ULL) >> 32));
    auto get_state = std::make_unique<Instruction>(Opcode::kRngGetAndUpdateState,
                                                   e.MakeShape(PrimitiveType::kU64, {2}));
    get_state->mutable_attrs().SetRaw("delta", std::to_string(n * (BitWidth(compute) / 32)));
    Instruction* state = parent->AddInstruction(std::move(get_state));

    auto call = std::make_unique<Instruction>(Opcode::kCall, e.MakeShape(compute, dims));
    call->AppendOperand(key);
    call->AppendOperand(state);
    call->AppendOperand(e.Convert(rng->operand(0), compute));
    call->AppendOperand(e.Convert(rng->operand(1), compute));
    call->mutable_called_computations().push_back(distribution);
    Instruction* draws = parent->AddInstruction(std::move(call));
    Instruction* replacement = e.Convert(draws, type);
    if (replacement != draws)
      replacement->set_shape(shape);
    else
      draws->set_shape(shape);

    for (Instruction* pred : rng->control_predecessors()) pred->AddControlDependencyTo(seed);
    for (Instruction* pred : rng->control_predecessors()) pred->AddControlDependencyTo(state);
    for (Instruction* succ : rng->control_successors()) draws->AddControlDependencyTo(succ);
    rng->DropAllControlDeps();
    HLOGYM_RETURN_IF_ERROR(parent->ReplaceInstruction(rng, replacement));
  }
  if (!rngs.empty()) module.SortComputationsCalleesFirst();
  return !rngs.empty();
}

bool RngExpander::MayChange(const Module& module) const {
  return ContainsOpcode(module, {Opcode::kRng});
}

}  // namespace hlogym
