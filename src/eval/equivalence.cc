#include "eval/equivalence.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "eval/value.h"
#include "hlo/computation.h"
#include "hlo/instruction.h"

namespace hlogym {
namespace {

using eval::Mix64;

bool IsIndexOperand(const Instruction& user, int64_t operand_index) {
  switch (user.opcode()) {
    case Opcode::kGather: return operand_index == 1;
    case Opcode::kDynamicSlice: return operand_index >= 1;
    case Opcode::kDynamicUpdateSlice: return operand_index >= 2;
    case Opcode::kScatter: return operand_index == (user.operand_count() - 1) / 2;
    default: return false;
  }
}

// The smallest dimension (>= 1) of what `user` indexes into.
int64_t IndexBound(const Instruction& user) {
  const Shape& s = user.operand(0)->shape();
  int64_t bound = std::numeric_limits<int64_t>::max();
  if (s.IsArray()) {
    for (int64_t d : s.dimensions()) {
      if (d >= 1) bound = std::min(bound, d);
    }
  }
  return bound == std::numeric_limits<int64_t>::max() ? 1 : bound;
}

// Walks the uses of `start` forward, to depth 12: into the parameters of
// called computations (call, fusion) and through every user for which
// `follows(user, operand_index)` holds. `visit(user, operand_index)` sees each
// use first; returning true ends the walk.
template <typename Follows, typename Visit>
void WalkUses(const Instruction* start, Follows follows, Visit visit) {
  std::vector<std::pair<const Instruction*, int>> stack = {{start, 0}};
  absl::flat_hash_map<const Instruction*, bool> seen;
  while (!stack.empty()) {
    auto [instr, depth] = stack.back();
    stack.pop_back();
    if (seen[instr] || depth > 12) continue;
    seen[instr] = true;
    for (const Instruction* user : instr->users()) {
      for (int64_t i = 0; i < user->operand_count(); ++i) {
        if (user->operand(i) != instr) continue;
        if (visit(*user, i)) return;
        if (user->opcode() == Opcode::kCall || user->opcode() == Opcode::kFusion) {
          if (!user->called_computations().empty() &&
              i < user->called_computations()[0]->num_parameters()) {
            stack.push_back({user->called_computations()[0]->parameter_instruction(i), depth + 1});
          }
        } else if (follows(*user, i)) {
          stack.push_back({user, depth + 1});
        }
      }
    }
  }
}

// Ops a parameter's value passes through unchanged in kind (shape ops,
// converts, adds), for both walks below.
bool PassesValueThrough(Opcode opcode) {
  switch (opcode) {
    case Opcode::kConvert: case Opcode::kReshape: case Opcode::kBroadcast:
    case Opcode::kBitcast: case Opcode::kCopy: case Opcode::kSlice:
    case Opcode::kConcatenate: case Opcode::kTranspose: case Opcode::kAdd:
    case Opcode::kDynamicSlice:
      return true;
    default:
      return false;
  }
}

// The smallest index bound among index operands reachable from `start`
// through elementwise/shape ops and into called computations; 0 if none.
int64_t FindIndexBound(const Instruction* start) {
  int64_t bound = 0;
  WalkUses(
      start,
      [](const Instruction& user, int64_t i) {
        return !IsIndexOperand(user, i) &&
               (PassesValueThrough(user.opcode()) || user.opcode() == Opcode::kSelect ||
                user.opcode() == Opcode::kClamp);
      },
      [&](const Instruction& user, int64_t i) {
        if (IsIndexOperand(user, i)) {
          const int64_t b = IndexBound(user);
          bound = bound == 0 ? b : std::min(bound, b);
        }
        return false;
      });
  return bound;
}

// Whether `start` reaches the operand of sqrt, rsqrt or log through
// elementwise/shape ops and into called computations: a variance, a scale or
// a norm, which is positive in the model and makes every output NaN when
// drawn negative (batch-norm inference, for one).
bool FeedsPositiveOnlyOp(const Instruction* start) {
  bool found = false;
  WalkUses(
      start, [](const Instruction& user, int64_t) { return PassesValueThrough(user.opcode()); },
      [&](const Instruction& user, int64_t) {
        const Opcode op = user.opcode();
        found = op == Opcode::kSqrt || op == Opcode::kRsqrt || op == Opcode::kLog;
        return found;
      });
  return found;
}

void FillLiteral(Literal& literal, uint64_t seed, double lo, double hi, int64_t ilo, int64_t ihi) {
  if (literal.shape().IsTuple()) {
    for (size_t i = 0; i < literal.mutable_tuple_elements().size(); ++i) {
      FillLiteral(literal.mutable_tuple_elements()[i], Mix64(seed + i + 1), lo, hi, ilo, ihi);
    }
    return;
  }
  if (!literal.shape().IsArray()) return;
  auto value = eval::NewArray(literal.shape());
  eval::FillDeterministic(*value, seed, lo, hi, ilo, ihi);
  if (value->size_bytes > 0 && literal.mutable_raw().size() == static_cast<size_t>(value->size_bytes)) {
    std::memcpy(literal.mutable_raw().data(), value->bytes(), value->size_bytes);
  }
}

std::string ElementText(const Literal& literal, int64_t index) {
  const PrimitiveType type = literal.shape().element_type();
  if (IsComplexType(type)) {
    auto c = literal.GetAsComplex(index);
    return absl::StrFormat("(%.9g, %.9g)", c.real(), c.imag());
  }
  if (IsFloatingPointType(type)) return absl::StrFormat("%.9g", literal.GetAsDouble(index));
  if (IsUnsignedIntegralType(type)) return absl::StrCat(literal.GetAsUint64(index));
  return absl::StrCat(literal.GetAsInt64(index));
}

bool FloatsMatch(double a, double b, double rtol, double atol, double* rel) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  if (std::isinf(a) || std::isinf(b)) return a == b;
  const double diff = std::fabs(a - b);
  const double scale = std::max(std::fabs(a), std::fabs(b));
  if (scale > 0) *rel = std::max(*rel, diff / scale);
  return diff <= atol + rtol * scale;
}

void CompareInto(const Literal& a, const Literal& b, const EquivalenceOptions& options,
                 std::vector<int64_t>& path, EquivalenceResult& result) {
  if (!result.equivalent) return;
  const Shape& sa = a.shape();
  const Shape& sb = b.shape();
  if (sa.IsTuple() || sb.IsTuple()) {
    if (!sa.IsTuple() || !sb.IsTuple() || a.tuple_elements().size() != b.tuple_elements().size()) {
      result.equivalent = false;
      result.output_index = path;
      result.message = absl::StrCat("output shapes differ: ", sa.ToString(false), " vs ",
                                    sb.ToString(false));
      return;
    }
    for (size_t i = 0; i < a.tuple_elements().size() && result.equivalent; ++i) {
      path.push_back(i);
      CompareInto(a.tuple_elements()[i], b.tuple_elements()[i], options, path, result);
      path.pop_back();
    }
    return;
  }
  if (sa.IsToken() && sb.IsToken()) return;
  if (sa.element_type() != sb.element_type() || sa.dimensions() != sb.dimensions()) {
    result.equivalent = false;
    result.output_index = path;
    result.message = absl::StrCat("output shapes differ: ", sa.ToString(false), " vs ",
                                  sb.ToString(false));
    return;
  }
  const PrimitiveType type = sa.element_type();
  const int64_t n = a.element_count();
  const bool low = type == PrimitiveType::kF16 || type == PrimitiveType::kBF16 ||
                   IsNarrowFloatType(type) ||
                   (options.computes_in_low_precision &&
                    (IsFloatingPointType(type) || IsComplexType(type)));
  const double rtol = low ? std::max(options.rtol, options.low_precision_rtol) : options.rtol;
  double atol = low ? std::max(options.atol, options.low_precision_atol) : options.atol;
  if (IsFloatingPointType(type)) {
    // Rounding errors scale with the largest values the array holds (a
    // reassociated sum or a bf16 ulp at the array's scale), not with the
    // element itself, so the absolute tolerance is at least rtol times the
    // array's largest finite magnitude.
    double scale = 0;
    for (int64_t i = 0; i < a.element_count(); ++i) {
      const double x = std::fabs(a.GetAsDouble(i)), y = std::fabs(b.GetAsDouble(i));
      if (std::isfinite(x)) scale = std::max(scale, x);
      if (std::isfinite(y)) scale = std::max(scale, y);
    }
    atol = std::max(atol, rtol * scale);
  }
  for (int64_t i = 0; i < n; ++i) {
    bool match;
    if (IsComplexType(type)) {
      const auto x = a.GetAsComplex(i), y = b.GetAsComplex(i);
      match = FloatsMatch(x.real(), y.real(), rtol, atol, &result.max_relative_error) &&
              FloatsMatch(x.imag(), y.imag(), rtol, atol, &result.max_relative_error);
    } else if (IsFloatingPointType(type)) {
      match = FloatsMatch(a.GetAsDouble(i), b.GetAsDouble(i), rtol, atol, &result.max_relative_error);
    } else {
      match = a.GetBits(i) == b.GetBits(i);
    }
    if (!match) {
      result.equivalent = false;
      result.output_index = path;
      result.element_index = i;
      result.value_a = ElementText(a, i);
      result.value_b = ElementText(b, i);
      result.message = absl::StrCat("output {", absl::StrJoin(path, ","), "} element ", i, ": ",
                                    result.value_a, " vs ", result.value_b);
      return;
    }
  }
}

void DigestInto(const Literal& literal, std::vector<int64_t>& path, std::string& out) {
  if (literal.shape().IsTuple()) {
    for (size_t i = 0; i < literal.tuple_elements().size(); ++i) {
      path.push_back(i);
      DigestInto(literal.tuple_elements()[i], path, out);
      path.pop_back();
    }
    return;
  }
  const Shape& shape = literal.shape();
  absl::StrAppend(&out, "output {", absl::StrJoin(path, ","), "} ", shape.ToString(false));
  if (!shape.IsArray()) {
    absl::StrAppend(&out, "\n");
    return;
  }
  const uint64_t hash = eval::HashBytes(literal.raw().data(), literal.raw().size(), 0);
  double sum = 0, mn = std::numeric_limits<double>::infinity(), mx = -mn;
  int64_t nans = 0;
  const int64_t n = literal.element_count();
  for (int64_t i = 0; i < n; ++i) {
    double v;
    if (IsComplexType(shape.element_type())) {
      v = std::abs(literal.GetAsComplex(i));
    } else if (IsUnsignedIntegralType(shape.element_type())) {
      v = static_cast<double>(literal.GetAsUint64(i));
    } else {
      v = literal.GetAsDouble(i);
    }
    if (std::isnan(v)) {
      ++nans;
      continue;
    }
    sum += v;
    mn = std::min(mn, v);
    mx = std::max(mx, v);
  }
  absl::StrAppend(&out, absl::StrFormat(" hash=%016x sum=%.9g min=%.9g max=%.9g nan=%d\n", hash,
                                        sum, n > nans ? mn : 0.0, n > nans ? mx : 0.0, nans));
}

}  // namespace

std::vector<Literal> MakeRandomArguments(const Module& module, uint64_t seed,
                                         const RandomInputOptions& options) {
  std::vector<Literal> arguments;
  const Computation* entry = module.entry_computation();
  if (entry == nullptr) return arguments;
  const double lo = options.positive_floats ? 0.5 : options.float_low;
  const double hi = options.positive_floats ? 1.5 : options.float_high;
  for (int64_t p = 0; p < entry->num_parameters(); ++p) {
    const Instruction* param = entry->parameter_instruction(p);
    Shape shape = param->shape();
    Literal literal(shape);
    const uint64_t param_seed =
        Mix64(Mix64(seed) ^ (static_cast<uint64_t>(p) * 0x100000001b3ULL) ^
              (static_cast<uint64_t>(shape.element_type()) << 56));
    int64_t ilo = options.int_low, ihi = options.int_high;
    if (shape.IsArray() && (IsIntegralType(shape.element_type()))) {
      const int64_t bound = FindIndexBound(param);
      if (bound > 0) {
        ilo = 0;
        ihi = bound - 1;
      }
    }
    // Parameters that only make sense positive get [0.5, 1.5] like --positive.
    const bool positive = shape.IsArray() && IsFloatingPointType(shape.element_type()) &&
                          FeedsPositiveOnlyOp(param);
    FillLiteral(literal, param_seed, positive ? 0.5 : lo, positive ? 1.5 : hi, ilo, ihi);
    arguments.push_back(std::move(literal));
  }
  return arguments;
}

namespace {

bool IsLowPrecisionFloat(const Shape& shape) {
  if (shape.IsTuple()) {
    for (const Shape& element : shape.tuple_shapes()) {
      if (IsLowPrecisionFloat(element)) return true;
    }
    return false;
  }
  PrimitiveType type = shape.element_type();
  return type == PrimitiveType::kF16 || type == PrimitiveType::kBF16 || IsNarrowFloatType(type);
}

}  // namespace

bool ComputesInLowPrecision(const Module& module) {
  for (const auto& computation : module.computations()) {
    for (const auto& instruction : computation->instructions()) {
      if (IsLowPrecisionFloat(instruction->shape())) return true;
    }
  }
  return false;
}

EquivalenceResult CompareLiterals(const Literal& a, const Literal& b,
                                  const EquivalenceOptions& options) {
  EquivalenceResult result;
  std::vector<int64_t> path;
  CompareInto(a, b, options, path, result);
  return result;
}

namespace {

bool IsWidenedType(PrimitiveType type) {
  return type == PrimitiveType::kBF16 || type == PrimitiveType::kF16 ||
         type == PrimitiveType::kF32;
}

void WidenShape(Shape& shape) {
  if (shape.IsTuple()) {
    for (Shape& element : shape.mutable_tuple_shapes()) WidenShape(element);
  } else if (IsWidenedType(shape.element_type())) {
    shape.set_element_type(PrimitiveType::kF64);
  }
}

// `from` with each array leaf converted (through double) to the element type
// of the same leaf of `to`.
Literal ConvertLeaves(const Literal& from, const Shape& to) {
  Literal out(to);
  if (to.IsTuple()) {
    for (int64_t i = 0; i < to.tuple_shapes_size(); ++i) {
      out.mutable_tuple_elements()[i] = ConvertLeaves(from.tuple_elements()[i], to.tuple_shapes(i));
    }
    return out;
  }
  if (!to.IsArray()) return from;
  if (from.shape().element_type() == to.element_type()) return from;
  for (int64_t i = 0; i < out.element_count(); ++i) out.SetFromDouble(i, from.GetAsDouble(i));
  return out;
}

Shape Widened(Shape shape) {
  WidenShape(shape);
  return shape;
}

// The original computed in f64 on `args`, converted to the output types of
// `like` (the original's output).
absl::StatusOr<Literal> F64Reference(const Module& a, const std::vector<Literal>& args,
                                     const Shape& like, const EquivalenceOptions& options) {
  std::unique_ptr<Module> widened = WidenedToF64(a);
  if (widened == nullptr) return absl::FailedPreconditionError("the module uses bitcast-convert");
  std::vector<Literal> wide_args;
  for (const Literal& arg : args) wide_args.push_back(ConvertLeaves(arg, Widened(arg.shape())));
  absl::StatusOr<Literal> reference = Evaluate(*widened, wide_args, options.evaluator);
  if (!reference.ok()) return reference.status();
  return ConvertLeaves(*reference, like);
}

}  // namespace

std::unique_ptr<Module> WidenedToF64(const Module& module) {
  std::unique_ptr<Module> widened = module.Clone();
  for (const auto& computation : widened->computations()) {
    for (const auto& instruction : computation->instructions()) {
      if (instruction->opcode() == Opcode::kBitcastConvert) return nullptr;
      WidenShape(instruction->mutable_shape());
      if (instruction->opcode() == Opcode::kConstant && instruction->attrs().literal != nullptr) {
        const Literal& literal = *instruction->attrs().literal;
        if (!literal.elided()) {
          instruction->mutable_attrs().literal = std::make_shared<const Literal>(
              ConvertLeaves(literal, Widened(literal.shape())));
        }
      }
    }
  }
  return widened;
}

absl::StatusOr<EquivalenceResult> CheckEquivalent(const Module& a, const Module& b,
                                                  const EquivalenceOptions& options) {
  EquivalenceResult result;
  const Computation* ea = a.entry_computation();
  const Computation* eb = b.entry_computation();
  if (ea == nullptr || eb == nullptr) {
    return absl::InvalidArgumentError("module has no entry computation");
  }
  if (ea->num_parameters() != eb->num_parameters()) {
    result.equivalent = false;
    result.message = absl::StrCat("entry parameter counts differ: ", ea->num_parameters(), " vs ",
                                  eb->num_parameters());
    return result;
  }
  for (int64_t p = 0; p < ea->num_parameters(); ++p) {
    Shape x = ea->parameter_instruction(p)->shape(), y = eb->parameter_instruction(p)->shape();
    x.clear_layout();
    y.clear_layout();
    if (!(x == y)) {
      result.equivalent = false;
      result.message = absl::StrCat("entry parameter ", p, " shapes differ: ", x.ToString(), " vs ",
                                    y.ToString());
      return result;
    }
  }
  EquivalenceOptions compare_options = options;
  compare_options.computes_in_low_precision |=
      ComputesInLowPrecision(a) || ComputesInLowPrecision(b);
  for (int t = 0; t < std::max(options.trials, 1); ++t) {
    std::vector<Literal> args = MakeRandomArguments(a, options.seed + t, options.inputs);
    auto ra = Evaluate(a, args, options.evaluator);
    if (!ra.ok()) {
      return absl::Status(ra.status().code(), absl::StrCat("evaluating ", a.name(), ": ", ra.status().message()));
    }
    auto rb = Evaluate(b, args, options.evaluator);
    if (!rb.ok()) {
      return absl::Status(rb.status().code(), absl::StrCat("evaluating ", b.name(), ": ", rb.status().message()));
    }
    EquivalenceResult trial = CompareLiterals(*ra, *rb, compare_options);
    if (!trial.equivalent && trial.element_index >= 0 && options.f64_reference) {
      absl::StatusOr<Literal> reference = F64Reference(a, args, ra->shape(), options);
      if (!reference.ok()) {
        trial.message += absl::StrCat("; no f64 reference: ", reference.status().message());
      } else {
        EquivalenceResult optimized = CompareLiterals(*reference, *rb, compare_options);
        if (optimized.equivalent) {
          result.by_f64_reference = true;
          continue;
        }
        EquivalenceResult original = CompareLiterals(*reference, *ra, compare_options);
        if (!original.equivalent) {
          trial.judged = false;
          trial.message = absl::StrCat(
              "not judged: the original itself misses its f64 reference on these inputs (",
              original.message, "), so rounding decides: ", trial.message);
        } else {
          trial.message += absl::StrCat("; the original matches its f64 reference, this does not: ",
                                        optimized.message);
        }
      }
    }
    result.max_relative_error = std::max(result.max_relative_error, trial.max_relative_error);
    if (!trial.equivalent) {
      trial.trial = t;
      trial.max_relative_error = result.max_relative_error;
      return trial;
    }
  }
  return result;
}

std::string DigestLiteral(const Literal& literal) {
  std::string out;
  std::vector<int64_t> path;
  DigestInto(literal, path, out);
  return out;
}

}  // namespace hlogym
