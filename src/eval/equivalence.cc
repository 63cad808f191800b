#include "eval/equivalence.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <complex>
#include <cstring>
#include <limits>
#include <optional>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "eval/value.h"
#include "hlo/array_allocator.h"
#include "hlo/computation.h"
#include "hlo/instruction.h"
#include "hlo/query.h"
#include "hlo/status_macros.h"

namespace hlogym {
namespace {

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

// The elements of a real array literal as doubles, read in their own C++ type
// (one typed load each, not a decode per bit pattern): outputs have millions
// of elements, and the check reads each of them twice.
ArrayVector<double> ElementsAsDoubles(const Literal& array) {
  const int64_t n = array.element_count();
  ArrayVector<double> out(static_cast<size_t>(n));
  const bool typed = eval::DispatchType(array.shape().element_type(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (eval::kIsComplex<T>) {
      for (int64_t i = 0; i < n; ++i) out[i] = array.GetAsDouble(i);
    } else {
      const uint8_t* bytes = array.raw().data();
      for (int64_t i = 0; i < n; ++i) {
        T v;
        std::memcpy(&v, bytes + i * sizeof(T), sizeof(T));
        out[i] = static_cast<double>(static_cast<eval::Wide<T>>(v));
      }
    }
  });
  if (!typed) {
    for (int64_t i = 0; i < n; ++i) out[i] = array.GetAsDouble(i);
  }
  return out;
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
      result.message =
          absl::StrCat("output shapes differ: ", sa.ToString(false), " vs ", sb.ToString(false));
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
    result.message =
        absl::StrCat("output shapes differ: ", sa.ToString(false), " vs ", sb.ToString(false));
    return;
  }
  const PrimitiveType type = sa.element_type();
  const int64_t n = a.element_count();
  const bool low =
      type == PrimitiveType::kF16 || type == PrimitiveType::kBF16 || IsNarrowFloatType(type) ||
      (options.computes_in_low_precision && (IsFloatingPointType(type) || IsComplexType(type)));
  const double rtol = low ? std::max(options.rtol, options.low_precision_rtol) : options.rtol;
  double atol = low ? std::max(options.atol, options.low_precision_atol) : options.atol;
  // Integers and predicates must match bit for bit: where the bytes do, there
  // is no element to look at.
  const bool exact = !IsFloatingPointType(type) && !IsComplexType(type);
  if (exact && std::ranges::equal(a.raw(), b.raw())) return;
  ArrayVector<double> xs, ys;
  if (IsFloatingPointType(type)) {
    xs = ElementsAsDoubles(a);
    ys = ElementsAsDoubles(b);
    // Rounding errors scale with the largest values the array holds (a
    // reassociated sum or a bf16 ulp at the array's scale), not with the
    // element itself, so the absolute tolerance is at least rtol times the
    // array's largest finite magnitude.
    double scale = 0;
    for (int64_t i = 0; i < n; ++i) {
      const double x = std::fabs(xs[i]), y = std::fabs(ys[i]);
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
      match = FloatsMatch(xs[i], ys[i], rtol, atol, &result.max_relative_error);
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

// Whether every element of an array literal has the same bits.
bool IsConstantArray(const Literal& array) {
  const int64_t n = array.element_count();
  for (int64_t i = 1; i < n; ++i) {
    if (array.GetBits(i) != array.GetBits(0)) return false;
  }
  return true;
}

// The sum, extremes and NaN count of an output, for its digest.
struct DigestStats {
  double sum = 0;
  double min = std::numeric_limits<double>::infinity();
  double max = -std::numeric_limits<double>::infinity();
  int64_t nans = 0;

  void Add(double v) {
    if (std::isnan(v)) {
      ++nans;
      return;
    }
    sum += v;
    min = std::min(min, v);
    max = std::max(max, v);
  }
  void Merge(const DigestStats& other) {
    sum += other.sum;
    min = std::min(min, other.min);
    max = std::max(max, other.max);
    nans += other.nans;
  }
};

// f32 and f64, the types of outputs with millions of elements, read directly in eight
// interleaved lanes (eight independent chains of additions instead of one); the lanes are
// merged in a fixed order, so the digest is the same on every machine.
template <typename T>
DigestStats FloatStats(const uint8_t* bytes, int64_t n) {
  constexpr int kLanes = 8;
  std::array<DigestStats, kLanes> lanes;
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    T v[kLanes];
    std::memcpy(v, bytes + i * sizeof(T), sizeof(v));
    for (int k = 0; k < kLanes; ++k) {
      const double x = v[k];
      const bool nan = std::isnan(x);
      lanes[k].nans += nan;
      lanes[k].sum += nan ? 0.0 : x;
      // A NaN compares false: it never becomes the minimum or the maximum.
      lanes[k].min = x < lanes[k].min ? x : lanes[k].min;
      lanes[k].max = x > lanes[k].max ? x : lanes[k].max;
    }
  }
  for (int k = 1; k < kLanes; ++k) lanes[0].Merge(lanes[k]);
  for (; i < n; ++i) {
    T v;
    std::memcpy(&v, bytes + i * sizeof(T), sizeof(T));
    lanes[0].Add(v);
  }
  return lanes[0];
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
  const int64_t n = literal.element_count();
  DigestStats stats;
  if (shape.element_type() == PrimitiveType::kF32) {
    stats = FloatStats<float>(literal.raw().data(), n);
  } else if (shape.element_type() == PrimitiveType::kF64) {
    stats = FloatStats<double>(literal.raw().data(), n);
  } else {
    for (int64_t i = 0; i < n; ++i) {
      if (IsComplexType(shape.element_type())) {
        stats.Add(std::abs(literal.GetAsComplex(i)));
      } else if (IsUnsignedIntegralType(shape.element_type())) {
        stats.Add(static_cast<double>(literal.GetAsUint64(i)));
      } else {
        stats.Add(literal.GetAsDouble(i));
      }
    }
  }
  const bool any = n > stats.nans;
  absl::StrAppend(
      &out, absl::StrFormat(" hash=%016x sum=%.9g min=%.9g max=%.9g nan=%d\n", hash, stats.sum,
                            any ? stats.min : 0.0, any ? stats.max : 0.0, stats.nans));
}

}  // namespace

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

// Whether `value` (an instruction of the entry) depends on an entry parameter.
bool ReadsParameters(const Instruction* value) {
  if (value == nullptr) return false;
  std::vector<const Instruction*> stack = {value};
  absl::flat_hash_set<const Instruction*> seen;
  while (!stack.empty()) {
    const Instruction* instruction = stack.back();
    stack.pop_back();
    if (!seen.insert(instruction).second) continue;
    if (instruction->opcode() == Opcode::kParameter) return true;
    for (const Instruction* operand : instruction->operands()) stack.push_back(operand);
  }
  return false;
}

// The instruction of `module`'s entry that produces the output at `path`.
const Instruction* OutputProducer(const Module& module, const std::vector<int64_t>& path) {
  const Instruction* instruction = module.entry_computation()->root_instruction();
  for (int64_t i : path) {
    if (instruction->opcode() != Opcode::kTuple || i >= instruction->operand_count())
      return nullptr;
    instruction = instruction->operand(i);
  }
  return instruction;
}

}  // namespace

std::string VacuousOutputReason(const Module& original, const Literal& output,
                                const std::vector<Literal>& arguments) {
  const std::vector<LiteralLeaf> leaves = output.ArrayLeaves();
  for (const auto& [path, leaf] : leaves) {
    const PrimitiveType type = leaf->shape().element_type();
    const int64_t n = leaf->element_count();
    if (n == 0 || !(IsFloatingPointType(type) || IsComplexType(type))) continue;
    int64_t nans = 0, finite = 0;
    const ArrayVector<double> reals =
        IsComplexType(type) ? ArrayVector<double>() : ElementsAsDoubles(*leaf);
    for (int64_t i = 0; i < n; ++i) {
      const double x = IsComplexType(type) ? std::abs(leaf->GetAsComplex(i)) : reals[i];
      nans += std::isnan(x) ? 1 : 0;
      finite += std::isfinite(x) ? 1 : 0;
    }
    // A NaN or infinity the module writes whatever its inputs (a search's "no best yet") is an
    // output like any other; only one the inputs lead to means these inputs make no sense.
    if (finite > 0) continue;
    const Instruction* producer = OutputProducer(original, path);
    if (producer != nullptr && !ReadsParameters(producer)) continue;
    const char* what = nans == n ? "NaN" : nans == 0 ? "infinite" : "NaN or infinite";
    return absl::StrCat("output {", absl::StrJoin(path, ","), "} ", leaf->shape().ToString(false),
                        " of the original is all ", what, " on these inputs");
  }
  bool all_constant = !leaves.empty(), any_multi = false;
  for (const auto& [path, leaf] : leaves) {
    all_constant = all_constant && IsConstantArray(*leaf);
    any_multi = any_multi || leaf->element_count() >= 2;
  }
  if (!all_constant || !any_multi) return "";
  bool inputs_vary = false;
  for (const Literal& argument : arguments) {
    for (const auto& [path, leaf] : argument.ArrayLeaves()) {
      inputs_vary = inputs_vary || !IsConstantArray(*leaf);
    }
  }
  const Computation* entry = original.entry_computation();
  if (!inputs_vary || entry == nullptr || !ReadsParameters(entry->root_instruction())) return "";
  const Literal& first = *leaves.front().array;
  return absl::StrCat("every output of the original is constant on these inputs (output {",
                      absl::StrJoin(leaves.front().index, ","), "} is all ",
                      first.element_count() > 0 ? ElementText(first, 0) : "empty",
                      ") although the inputs vary");
}

namespace {

bool IsWidenedType(PrimitiveType type) {
  return type == PrimitiveType::kBF16 || type == PrimitiveType::kF16 || type == PrimitiveType::kF32;
}

void WidenShape(Shape& shape) {
  if (shape.IsTuple()) {
    for (Shape& element : shape.mutable_tuple_shapes()) WidenShape(element);
  } else if (IsWidenedType(shape.element_type())) {
    shape.set_element_type(PrimitiveType::kF64);
  }
}

// `from` converted into `to` (an array of the same shape) by a typed loop where that is exact
// (widening to f64) or rounds to nearest even as SetFromDouble does (f64 to f32); false, with
// nothing written, for other pairs. Element by element through doubles, the f64 look spent a
// third of its time converting a ResNet training step's 50 million parameters and back.
bool ConvertFloatArray(const Literal& from, Literal& to) {
  const PrimitiveType to_type = to.shape().element_type();
  bool converted = false;
  eval::DispatchType(from.shape().element_type(), [&](auto from_tag) {
    using From = typename decltype(from_tag)::type;
    if constexpr (eval::kIsFloat<From>) {
      const auto* src = reinterpret_cast<const From*>(from.raw().data());
      const int64_t n = to.element_count();
      if (to_type == PrimitiveType::kF64) {
        auto* dst = reinterpret_cast<double*>(to.mutable_raw().data());
        for (int64_t i = 0; i < n; ++i) {
          dst[i] = static_cast<double>(static_cast<eval::Wide<From>>(src[i]));
        }
        converted = true;
      } else if (std::is_same_v<From, double> && to_type == PrimitiveType::kF32) {
        auto* dst = reinterpret_cast<float*>(to.mutable_raw().data());
        for (int64_t i = 0; i < n; ++i) dst[i] = static_cast<float>(src[i]);
        converted = true;
      }
    }
  });
  return converted;
}

// `from` with each array leaf converted (through double) to the element type
// of the same leaf of `to`.
Literal ConvertLeaves(const Literal& from, const Shape& to) {
  if (to.IsTuple()) {
    std::vector<Literal> elements;
    elements.reserve(to.tuple_shapes_size());
    for (int64_t i = 0; i < to.tuple_shapes_size(); ++i) {
      elements.push_back(ConvertLeaves(from.tuple_elements()[i], to.tuple_shapes(i)));
    }
    return Literal::Tuple(to, std::move(elements));
  }
  if (!to.IsArray() || from.shape().element_type() == to.element_type()) return from;
  Literal out(to);
  if (!ConvertFloatArray(from, out)) {
    for (int64_t i = 0; i < out.element_count(); ++i) out.SetFromDouble(i, from.GetAsDouble(i));
  }
  return out;
}

Shape Widened(Shape shape) {
  WidenShape(shape);
  return shape;
}

// `literal` (f64, widened) with each element that is not a whole number scaled by 1 + step.
Literal WithFractionsMoved(const Literal& literal, double step) {
  Literal moved = literal;
  if (!moved.shape().IsArray() || moved.shape().element_type() != PrimitiveType::kF64) return moved;
  for (int64_t i = 0; i < moved.element_count(); ++i) {
    const double value = moved.GetAsDouble(i);
    if (std::isfinite(value) && value != std::trunc(value))
      moved.SetFromDouble(i, value * (1 + step));
  }
  return moved;
}

// `a` (the original, or a candidate) computed in f64 on `args`, converted to the output types of
// `like` (the original's output); with `constant_step`, every float constant that is not a whole
// number scaled by 1 + constant_step first.
absl::StatusOr<Literal> F64Reference(const Module& a, const std::vector<Literal>& args,
                                     const Shape& like, const EquivalenceOptions& options,
                                     double constant_step = 0) {
  std::unique_ptr<Module> widened = WidenedToF64(a);
  if (constant_step != 0) {
    for (const auto& computation : widened->computations()) {
      for (const auto& instruction : computation->instructions()) {
        if (instruction->opcode() != Opcode::kConstant || instruction->attrs().literal == nullptr ||
            instruction->attrs().literal->elided()) {
          continue;
        }
        instruction->mutable_attrs().literal = std::make_shared<const Literal>(
            WithFractionsMoved(*instruction->attrs().literal, constant_step));
      }
    }
  }
  std::vector<Literal> wide_args;
  for (const Literal& arg : args) wide_args.push_back(ConvertLeaves(arg, Widened(arg.shape())));
  HLOGYM_ASSIGN(reference, Evaluate(*widened, wide_args, options.evaluator));
  return ConvertLeaves(reference, like);
}

// Whether `b` computed in f64 gives `reference` (the original computed in
// f64) within the f32 tolerances: then the two modules compute the same
// function on these inputs, whatever their f32 outputs say.
bool SameInF64(const Module& b, const std::vector<Literal>& args, const Literal& reference,
               const EquivalenceOptions& options) {
  absl::StatusOr<Literal> wide = F64Reference(b, args, reference.shape(), options);
  if (!wide.ok()) return false;
  EquivalenceOptions strict = options;
  strict.computes_in_low_precision = false;  // neither side rounds to bf16 now
  return CompareLiterals(reference, *wide, strict).equivalent;
}

// Whether `b` computed in f64 with its fractional constants moved by one f32 rounding step (all
// up, or all down) gives `reference`, the original's f64 result: then `b` computes the original's
// function, and only the rounding of constants it holds where the original computes them (a
// reciprocal algsimp folded, x / 127.5 made x * 0.00784313772) puts some value on the other side
// of a threshold in f64 too (a quantizer's round to nearest at a tie).
bool SameWithConstantsRoundedOtherwise(const Module& b, const std::vector<Literal>& args,
                                       const Literal& reference,
                                       const EquivalenceOptions& options) {
  EquivalenceOptions strict = options;
  strict.computes_in_low_precision = false;
  for (const double step : {-0x1p-24, 0x1p-24}) {
    absl::StatusOr<Literal> moved = F64Reference(b, args, reference.shape(), options, step);
    if (moved.ok() && CompareLiterals(reference, *moved, strict).equivalent) return true;
  }
  return false;
}

// Whether the original `a`, summing in another order XLA may take (EquivalenceOptions::
// sums_reordered), misses its own outputs `ra` on `args`: why, or "" when it does not (or the
// look cannot be taken).
std::string OrderOfSumsDecides(const Module& a, const std::vector<Literal>& args, const Literal& ra,
                               const EquivalenceOptions& options) {
  if (!options.sums_reordered) return "";
  absl::StatusOr<std::unique_ptr<Module>> reordered = options.sums_reordered(a);
  if (!reordered.ok()) return "";
  absl::StatusOr<Literal> outputs = Evaluate(**reordered, args, options.evaluator);
  if (!outputs.ok()) return "";
  EquivalenceResult moved = CompareLiterals(ra, *outputs, options);
  return moved.equivalent ? "" : moved.message;
}

// Where an integer output's values come from when they are indices chosen by
// comparing floats: the elements of `key` along `dimension`, by an
// argmax/argmin reduce (the output lacks that dimension), top-k or a sort
// (the output has it).
struct IndexSelection {
  const Instruction* key = nullptr;
  int64_t dimension = 0;
  bool reduced = false;
};

std::optional<IndexSelection> FindIndexSelection(const Instruction* instruction) {
  while (instruction != nullptr &&
         (instruction->opcode() == Opcode::kConvert || instruction->opcode() == Opcode::kCopy)) {
    instruction = instruction->operand(0);
  }
  if (instruction == nullptr || instruction->opcode() != Opcode::kGetTupleElement)
    return std::nullopt;
  const Instruction* producer = instruction->operand(0);
  const int64_t index = instruction->attrs().tuple_index;
  if (index < 1 || producer->operand_count() < 1) return std::nullopt;
  IndexSelection selection;
  selection.key = producer->operand(0);
  const Shape& key = selection.key->shape();
  if (!key.IsArray() || !IsFloatingPointType(key.element_type()) || key.rank() == 0) {
    return std::nullopt;
  }
  const std::vector<int64_t>& dims = producer->attrs().dimensions;
  switch (producer->opcode()) {
    case Opcode::kTopK:
      if (index != 1) return std::nullopt;
      selection.dimension = key.rank() - 1;
      return selection;
    case Opcode::kCustomCall:
      if (producer->attrs().custom_call_target != "TopK" || index != 1) return std::nullopt;
      selection.dimension = key.rank() - 1;
      return selection;
    case Opcode::kReduce:  // (values, indices) reduced together: argmax/argmin
      if (producer->operand_count() != 4 || index != 1 || dims.size() != 1) return std::nullopt;
      selection.dimension = dims[0];
      selection.reduced = true;
      return selection;
    case Opcode::kSort:  // (keys, iota, ...) sorted together
      if (producer->operand_count() < 2 || dims.size() != 1) return std::nullopt;
      selection.dimension = dims[0];
      return selection;
    default:
      return std::nullopt;
  }
}

// The value of the entry instruction `key` of `module` on `args`: the module
// evaluated with `key` added to its outputs.
absl::StatusOr<Literal> EvaluateKey(const Module& module, const Instruction* key,
                                    const std::vector<Literal>& args,
                                    const EvaluatorOptions& options) {
  if (key->parent() != module.entry_computation()) {
    return absl::FailedPreconditionError("the key is not in the entry computation");
  }
  std::unique_ptr<Module> probe = module.Clone();
  Computation* entry = probe->entry_computation();
  Instruction* root = entry->root_instruction();
  Instruction* key_copy = nullptr;
  for (const auto& instruction : entry->instructions()) {
    if (instruction->name() == key->name()) key_copy = instruction.get();
  }
  if (key_copy == nullptr) return absl::InternalError("the key was lost in the clone");
  auto tuple = std::make_unique<Instruction>(
      Opcode::kTuple, Shape::Tuple({root->shape(), key_copy->shape()}), "hlogym.tie.key");
  tuple->AppendOperand(root);
  tuple->AppendOperand(key_copy);
  entry->set_root_instruction(entry->AddInstruction(std::move(tuple)));
  HLOGYM_ASSIGN(outputs, Evaluate(*probe, args, options));
  return std::move(outputs.mutable_tuple_elements()[1]);
}

Literal* MutableLeafAt(Literal& literal, const std::vector<int64_t>& path) {
  Literal* leaf = &literal;
  for (int64_t i : path) leaf = &leaf->mutable_tuple_elements()[i];
  return leaf;
}

// Whether every element where the integer leaves `want` and `got` differ
// picks an index whose key ties, within the tolerance, with the index `want`
// picks; `note` says how many and by how much.
bool DiffersOnlyOnTies(const Literal& want, const Literal& got, const Literal& key,
                       const IndexSelection& selection, double rtol, double atol,
                       std::string* note) {
  const std::vector<int64_t>& out_dims = want.shape().dimensions();
  const std::vector<int64_t>& key_dims = key.shape().dimensions();
  const std::vector<int64_t> out_strides = eval::RowMajorStrides(out_dims);
  const std::vector<int64_t> key_strides = eval::RowMajorStrides(key_dims);
  double scale = 0;
  for (int64_t i = 0; i < key.element_count(); ++i) {
    const double x = key.GetAsDouble(i);
    if (std::isfinite(x)) scale = std::max(scale, std::fabs(x));
  }
  atol = std::max(atol, rtol * scale);
  int64_t differing = 0;
  double largest_gap = 0;
  for (int64_t i = 0; i < want.element_count(); ++i) {
    if (want.GetBits(i) == got.GetBits(i)) continue;
    ++differing;
    // The key each side picked: the output's position with the picked index
    // put in (top-k, sort) or inserted at (argmax) the selection dimension.
    std::vector<int64_t> position;
    for (size_t d = 0; d < out_dims.size(); ++d) {
      position.push_back((i / out_strides[d]) % out_dims[d]);
    }
    const auto key_at = [&](int64_t picked, double* value) {
      if (picked < 0 || picked >= key_dims[selection.dimension]) return false;
      std::vector<int64_t> at = position;
      if (selection.reduced) {
        if (selection.dimension > static_cast<int64_t>(at.size())) return false;
        at.insert(at.begin() + selection.dimension, picked);
      } else {
        if (selection.dimension >= static_cast<int64_t>(at.size())) return false;
        at[selection.dimension] = picked;
      }
      if (at.size() != key_dims.size()) return false;
      int64_t linear = 0;
      for (size_t d = 0; d < at.size(); ++d) linear += at[d] * key_strides[d];
      *value = key.GetAsDouble(linear);
      return true;
    };
    double a, b, unused = 0;
    if (!key_at(want.GetAsInt64(i), &a) || !key_at(got.GetAsInt64(i), &b)) return false;
    if (!FloatsMatch(a, b, rtol, atol, &unused)) return false;
    largest_gap = std::max(largest_gap, std::fabs(a - b));
  }
  *note = absl::StrCat(differing, " indices differ where their keys (", selection.key->name(),
                       ") tie within ", absl::StrFormat("%.3g", largest_gap));
  return true;
}

}  // namespace

std::unique_ptr<Module> WidenedToF64(const Module& module) {
  std::unique_ptr<Module> widened = module.Clone();
  for (const auto& computation : widened->computations()) {
    // A bitcast-convert reinterprets the bits of its operand's own type: it
    // keeps its types, its operand is narrowed back to what it was and a
    // floating result is widened after it. Found before anything is widened,
    // with its operand's shape then.
    std::vector<std::pair<Instruction*, Shape>> bitcasts;
    for (const auto& instruction : computation->instructions()) {
      if (instruction->opcode() == Opcode::kBitcastConvert) {
        bitcasts.emplace_back(instruction.get(), instruction->operand(0)->shape());
      }
    }
    for (const auto& instruction : computation->instructions()) {
      if (instruction->opcode() == Opcode::kBitcastConvert) continue;
      WidenShape(instruction->mutable_shape());
      if (instruction->opcode() == Opcode::kConstant && instruction->attrs().literal != nullptr) {
        const Literal& literal = *instruction->attrs().literal;
        if (!literal.elided()) {
          instruction->mutable_attrs().literal =
              std::make_shared<const Literal>(ConvertLeaves(literal, Widened(literal.shape())));
        }
      }
    }
    for (auto& [bitcast, operand_shape] : bitcasts) {
      if (!(bitcast->operand(0)->shape() == operand_shape)) {
        auto narrow = std::make_unique<Instruction>(Opcode::kConvert, operand_shape);
        narrow->AppendOperand(bitcast->operand(0));
        bitcast->ReplaceOperandWith(0, computation->AddInstruction(std::move(narrow)));
      }
      const Shape wide_shape = Widened(bitcast->shape());
      if (wide_shape == bitcast->shape()) continue;
      const std::vector<Instruction*> users = bitcast->users();
      auto wide = std::make_unique<Instruction>(Opcode::kConvert, wide_shape);
      wide->AppendOperand(bitcast);
      Instruction* widened_result = computation->AddInstruction(std::move(wide));
      for (Instruction* user : users) user->ReplaceUsesOfOperand(bitcast, widened_result);
      if (computation->root_instruction() == bitcast)
        computation->set_root_instruction(widened_result);
    }
  }
  return widened;
}

namespace {

// `module`'s static form (EquivalenceOptions::static_form), or why a check of
// it cannot be judged.
absl::StatusOr<std::unique_ptr<Module>> StaticForm(const Module& module,
                                                   const EquivalenceOptions& options) {
  if (!options.static_form) {
    return absl::FailedPreconditionError(
        absl::StrCat("not judged: ", module.name(),
                     " has dynamic dimensions, and the evaluator computes static shapes only"));
  }
  absl::StatusOr<std::unique_ptr<Module>> padded = options.static_form(module);
  if (!padded.ok()) {
    return absl::FailedPreconditionError(
        absl::StrCat("not judged: ", module.name(),
                     " has dynamic dimensions the evaluator cannot pad to static shapes (",
                     padded.status().message(), ")"));
  }
  return padded;
}

// Where a trial's draw leaves the original's outputs vacuous (VacuousOutputReason), the inputs
// are drawn again, in this order, and the first draw with outputs that say something is the
// trial's: the same rules from another seed (a divisor drawn as 1 makes every remainder 0), then,
// for a module with integer parameters, integers in {0, 1}: an attention mask given as integers
// (HF's BERT through torchax) turns 1 - mask into -6 for a 7, and -6 times the lowest float into
// infinity, so every output is NaN.
constexpr uint64_t kRedrawSeedOffset = 0x9e3779b97f4a7c15ULL;

bool HasIntegerLeaf(const Shape& shape) {
  if (!shape.IsTuple()) return IsIntegralType(shape.element_type());
  return std::any_of(shape.tuple_shapes().begin(), shape.tuple_shapes().end(), HasIntegerLeaf);
}

bool HasIntegerParameter(const Module& module) {
  const Computation* entry = module.entry_computation();
  for (int64_t p = 0; p < entry->num_parameters(); ++p) {
    if (HasIntegerLeaf(entry->parameter_instruction(p)->shape())) return true;
  }
  return false;
}

struct Draw {
  uint64_t seed_offset = 0;  // added to the trial's seed
  RandomInputOptions inputs;
};

// The rules' own draw, then the redraws, in order.
std::vector<Draw> Draws(const Module& module, const RandomInputOptions& inputs) {
  std::vector<Draw> draws = {{0, inputs}, {kRedrawSeedOffset, inputs}};
  if (inputs.int_high > std::max<int64_t>(inputs.int_low, 1) && HasIntegerParameter(module)) {
    RandomInputOptions flags = inputs;
    flags.int_low = std::max<int64_t>(inputs.int_low, 0);
    flags.int_high = 1;
    draws.push_back({kRedrawSeedOffset, flags});
  }
  return draws;
}

}  // namespace

absl::StatusOr<EquivalenceReference> EquivalenceReference::Make(const Module& original,
                                                                const EquivalenceOptions& options) {
  if (original.entry_computation() == nullptr) {
    return absl::InvalidArgumentError("module has no entry computation");
  }
  EquivalenceReference reference;
  reference.original_ = &original;
  reference.options_ = options;
  if (reference.options_.evaluator.max_instructions == 0) {
    reference.options_.evaluator.max_instructions = options.max_instructions;
  }
  reference.low_precision_ = ComputesInLowPrecision(original);
  if (HasDynamicShapes(original)) {
    absl::StatusOr<std::unique_ptr<Module>> padded = StaticForm(original, options);
    if (!padded.ok()) {
      reference.not_judged_ = std::string(padded.status().message());
      return reference;
    }
    reference.static_original_ = std::move(*padded);
    reference.original_ = reference.static_original_.get();
  }
  const Module& evaluated = *reference.original_;
  const std::vector<Draw> draws = Draws(evaluated, options.inputs);
  for (int t = 0; t < std::max(options.trials, 1); ++t) {
    // The first draw whose outputs say something; the rule's own draw when none does.
    std::optional<Trial> kept;
    for (const Draw& draw : draws) {
      if (kept && kept->vacuous_reason.empty()) break;
      absl::StatusOr<std::vector<Literal>> args =
          MakeRandomArguments(evaluated, options.seed + t + draw.seed_offset, draw.inputs);
      if (!args.ok()) return args.status();
      absl::StatusOr<Literal> outputs = Evaluate(evaluated, *args, reference.options_.evaluator);
      if (absl::IsDeadlineExceeded(outputs.status())) {
        if (kept) break;  // a redraw that runs too long does not lose the first draw
        reference.not_judged_ = absl::StrCat("not judged: evaluating ", original.name(), ": ",
                                             outputs.status().message());
        reference.trials_.clear();
        return reference;
      }
      if (!outputs.ok()) {
        if (kept) break;  // a redraw the module cannot evaluate ends the redraws, not the check
        return absl::Status(
            outputs.status().code(),
            absl::StrCat("evaluating ", original.name(), ": ", outputs.status().message()));
      }
      std::string vacuous = VacuousOutputReason(evaluated, *outputs, *args);
      if (!kept || vacuous.empty()) {
        kept = Trial{*std::move(args), *std::move(outputs), std::move(vacuous)};
      }
    }
    reference.trials_.push_back(*std::move(kept));
  }
  return reference;
}

absl::StatusOr<EquivalenceResult> EquivalenceReference::Check(const Module& b) const {
  const EquivalenceOptions& options = options_;
  EquivalenceResult result;
  if (!not_judged_.empty()) {
    result.equivalent = false;
    result.judged = false;
    result.message = not_judged_;
    return result;
  }
  std::unique_ptr<Module> b_static;
  if (HasDynamicShapes(b)) {
    // The original's static form exists (or it has no dynamic dimensions),
    // this module's may not: what a module left dynamic by passes that take
    // dynamic dimensions for static computes cannot be told, and in XLA it may
    // be something else, so it is rejected rather than let through unjudged.
    absl::StatusOr<std::unique_ptr<Module>> padded =
        options.static_form ? options.static_form(b)
                            : absl::FailedPreconditionError("no static form was asked for");
    if (!padded.ok()) {
      result.equivalent = false;
      result.message =
          absl::StrCat(b.name(),
                       " has dynamic dimensions that cannot be padded to static shapes, so it "
                       "cannot be checked (",
                       padded.status().message(), ")");
      return result;
    }
    b_static = *std::move(padded);
  }
  return CheckStatic(b_static != nullptr ? *b_static : b);
}

absl::StatusOr<EquivalenceResult> EquivalenceReference::CheckStatic(const Module& b) const {
  const Module& a = *original_;
  const EquivalenceOptions& options = options_;
  EquivalenceResult result;
  const Computation* ea = a.entry_computation();
  const Computation* eb = b.entry_computation();
  if (eb == nullptr) return absl::InvalidArgumentError("module has no entry computation");
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
  compare_options.computes_in_low_precision |= low_precision_ || ComputesInLowPrecision(b);
  // A trial whose reference output is all NaN, or constant although the
  // inputs vary, cannot tell two modules apart: equal outputs there are no
  // evidence, so with no meaningful trial the result is not judged.
  int meaningful_trials = 0;
  std::string vacuous_reason;
  for (size_t t = 0; t < trials_.size(); ++t) {
    const std::vector<Literal>& args = trials_[t].arguments;
    const Literal& ra = trials_[t].outputs;
    auto rb = Evaluate(b, args, options.evaluator);
    if (absl::IsDeadlineExceeded(rb.status())) {
      result.equivalent = false;
      result.judged = false;
      result.message =
          absl::StrCat("not judged: evaluating ", b.name(), ": ", rb.status().message());
      return result;
    }
    if (!rb.ok()) {
      return absl::Status(rb.status().code(),
                          absl::StrCat("evaluating ", b.name(), ": ", rb.status().message()));
    }
    EquivalenceResult trial = CompareLiterals(ra, *rb, compare_options);
    // Integer outputs that are indices picked by comparing floats (argmax,
    // top-k, sort) may differ where two keys tie within rounding: such an
    // output is taken as equal, and the comparison goes on with the rest.
    while (!trial.equivalent && trial.element_index >= 0) {
      const Literal* want = &ra;
      for (int64_t i : trial.output_index) want = &want->tuple_elements()[i];
      if (!IsIntegralType(want->shape().element_type())) break;
      std::optional<IndexSelection> selection =
          FindIndexSelection(OutputProducer(a, trial.output_index));
      if (!selection.has_value()) break;
      absl::StatusOr<Literal> key = EvaluateKey(a, selection->key, args, options.evaluator);
      if (!key.ok()) break;
      const bool low = compare_options.computes_in_low_precision;
      const double rtol = low ? std::max(options.rtol, options.low_precision_rtol) : options.rtol;
      const double atol = low ? std::max(options.atol, options.low_precision_atol) : options.atol;
      Literal* got = MutableLeafAt(*rb, trial.output_index);
      std::string note;
      if (!DiffersOnlyOnTies(*want, *got, *key, *selection, rtol, atol, &note)) break;
      absl::StrAppend(&result.ties, result.ties.empty() ? "" : "; ", "output {",
                      absl::StrJoin(trial.output_index, ","), "}: ", note);
      *got = *want;
      trial = CompareLiterals(ra, *rb, compare_options);
    }
    if (trials_[t].vacuous_reason.empty()) {
      ++meaningful_trials;
    } else if (vacuous_reason.empty()) {
      vacuous_reason = absl::StrCat("trial ", t, ": ", trials_[t].vacuous_reason);
    }
    if (!trial.equivalent && trial.element_index >= 0 && options.f64_reference) {
      absl::StatusOr<Literal> reference = F64Reference(a, args, ra.shape(), options);
      if (!reference.ok()) {
        trial.message += absl::StrCat("; no f64 reference: ", reference.status().message());
      } else {
        EquivalenceResult optimized = CompareLiterals(*reference, *rb, compare_options);
        if (optimized.equivalent) {
          result.by_f64_reference = true;
          continue;
        }
        EquivalenceResult original = CompareLiterals(*reference, ra, compare_options);
        if (!original.equivalent) {
          trial.judged = false;
          trial.message = absl::StrCat(
              "not judged: the original itself misses its f64 reference on these inputs (",
              original.message, "), so rounding decides: ", trial.message);
        } else if (SameInF64(b, args, *reference, options)) {
          // Computed without rounding, both give the same: f32 rounding puts
          // some value on the other side of a threshold (a ReLU's 0, a
          // comparison's tie), which neither module computes wrongly.
          trial.judged = false;
          trial.message = absl::StrCat(
              "not judged: both modules compute the same in f64, but in f32 this one misses the "
              "original's f64 result (",
              optimized.message, "), so rounding at a threshold decides: ", trial.message);
        } else if (SameWithConstantsRoundedOtherwise(b, args, *reference, options)) {
          trial.judged = false;
          trial.message = absl::StrCat(
              "not judged: in f64 this one misses the original's result (", optimized.message,
              ") but gives it with its fractional constants one f32 rounding step away, so how "
              "constants folded in f32 round decides: ",
              trial.message);
        } else if (std::string moved = OrderOfSumsDecides(a, args, ra, compare_options);
                   !moved.empty()) {
          trial.judged = false;
          trial.message = absl::StrCat(
              "not judged: the original itself, summing in the order XLA's tree_reduction_rewriter "
              "gives its reduces, misses its own outputs on these inputs (",
              moved, "), so the order of its sums decides: ", trial.message);
        } else {
          trial.message += absl::StrCat("; the original matches its f64 reference, this does not: ",
                                        optimized.message);
        }
      }
    }
    result.max_relative_error = std::max(result.max_relative_error, trial.max_relative_error);
    if (!trial.equivalent) {
      trial.trial = static_cast<int>(t);
      trial.max_relative_error = result.max_relative_error;
      return trial;
    }
  }
  if (meaningful_trials == 0) {
    result.equivalent = false;
    result.judged = false;
    result.message =
        absl::StrCat("not judged: ", vacuous_reason, ", so equal outputs are no evidence");
  }
  return result;
}

bool EquivalenceReference::vacuous() const {
  return std::all_of(trials_.begin(), trials_.end(),
                     [](const Trial& t) { return !t.vacuous_reason.empty(); });
}

absl::StatusOr<EquivalenceResult> CheckEquivalent(const Module& a, const Module& b,
                                                  const EquivalenceOptions& options) {
  if (b.entry_computation() == nullptr) {
    return absl::InvalidArgumentError("module has no entry computation");
  }
  absl::StatusOr<EquivalenceResult> result;
  {
    absl::StatusOr<EquivalenceReference> reference = EquivalenceReference::Make(a, options);
    result = reference.ok() ? reference->Check(b) : reference.status();
  }
  // The check's arrays are freed now; the blocks they leave for reuse go back to the system.
  ReleaseCachedArrayBytes();
  return result;
}

std::string DigestLiteral(const Literal& literal) {
  std::string out;
  std::vector<int64_t> path;
  DigestInto(literal, path, out);
  return out;
}

}  // namespace hlogym
