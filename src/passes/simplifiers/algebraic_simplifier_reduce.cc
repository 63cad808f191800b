// algsimp: rewrites of reduce and dot. See algebraic_simplifier.h.
#include <algorithm>
#include <functional>
#include <numeric>
#include <vector>

#include "absl/algorithm/container.h"
#include "hlo/status_macros.h"
#include "passes/builders.h"
#include "passes/simplifiers/algebraic_simplifier_internal.h"

namespace hlogym::algsimp {
namespace {

enum class ReductionKind { kOther, kAdd, kMul, kAnd, kOr, kMax, kMin };

// The binary op a reduction computation applies to its two parameters.
ReductionKind KindOf(const Computation* computation) {
  if (computation == nullptr || computation->num_parameters() != 2) return ReductionKind::kOther;
  const Instruction* root = computation->root_instruction();
  if (root == nullptr || root->operand_count() != 2) return ReductionKind::kOther;
  const Instruction* a = root->operand(0);
  const Instruction* b = root->operand(1);
  if (a->opcode() != Opcode::kParameter || b->opcode() != Opcode::kParameter || a == b) {
    return ReductionKind::kOther;
  }
  switch (root->opcode()) {
    case Opcode::kAdd:
      return ReductionKind::kAdd;
    case Opcode::kMultiply:
      return ReductionKind::kMul;
    case Opcode::kAnd:
      return ReductionKind::kAnd;
    case Opcode::kOr:
      return ReductionKind::kOr;
    case Opcode::kMaximum:
      return ReductionKind::kMax;
    case Opcode::kMinimum:
      return ReductionKind::kMin;
    default:
      return ReductionKind::kOther;
  }
}

bool ReductionComputationsEquivalent(const Computation* a, const Computation* b) {
  if (a == b) return true;
  ReductionKind ka = KindOf(a);
  ReductionKind kb = KindOf(b);
  return ka == kb && (ka == ReductionKind::kAdd || ka == ReductionKind::kMul ||
                      ka == ReductionKind::kAnd || ka == ReductionKind::kOr);
}

bool IsScalarConstantZero(const Instruction* hlo) {
  return hlo->opcode() == Opcode::kConstant && IsEffectiveScalarConstant(hlo) && IsAll(hlo, 0);
}

std::vector<int64_t> DeleteDims(const std::vector<int64_t>& dims,
                                const std::vector<int64_t>& to_delete) {
  std::vector<int64_t> result;
  for (int64_t i = 0; i < static_cast<int64_t>(dims.size()); ++i) {
    if (std::find(to_delete.begin(), to_delete.end(), i) == to_delete.end()) {
      result.push_back(dims[i]);
    }
  }
  return result;
}

bool IsCompareOf(const Instruction* hlo, const Instruction* a, const Instruction* b,
                 ComparisonDirection direction) {
  return hlo->opcode() == Opcode::kCompare && hlo->operand(0) == a && hlo->operand(1) == b &&
         hlo->attrs().comparison_direction == direction;
}

// `hlo` is `opcode`(x, y) with x matching `first` and y `second`, or swapped.
template <typename F, typename G>
bool IsCommutedPair(const Instruction* hlo, Opcode opcode, F first, G second) {
  if (hlo->opcode() != opcode) return false;
  const Instruction* x = hlo->operand(0);
  const Instruction* y = hlo->operand(1);
  return (first(x) && second(y)) || (first(y) && second(x));
}

// Whether `reduce` is the variadic reduce JAX emits for argmax (argmin with
// `direction` kLt): reduce((x, iota), (-inf, i)) (+inf for argmin) whose
// reducer keeps value a over b when a `direction` b (or a is NaN, for floats)
// and on equal values keeps the smaller index. Its first output is then
// max(x) (min(x)), NaN propagating like maximum (minimum).
bool IsArgMinMax(const Instruction* reduce, ComparisonDirection direction) {
  if (reduce->opcode() != Opcode::kReduce || reduce->operand_count() != 4 ||
      !reduce->shape().IsTuple() || reduce->operand(1)->opcode() != Opcode::kIota) {
    return false;
  }
  const Instruction* value_init = reduce->operand(2);
  if (value_init->opcode() != Opcode::kConstant || value_init->shape().rank() != 0 ||
      !(direction == ComparisonDirection::kGt ? IsAllLowest(value_init)
                                              : IsAllHighest(value_init))) {
    return false;
  }
  const Computation* f = reduce->to_apply();
  if (f == nullptr || f->num_parameters() != 4) return false;
  const Instruction* root = f->root_instruction();
  if (root->opcode() != Opcode::kTuple || root->operand_count() != 2) return false;
  const Instruction* a = f->parameter_instruction(0);
  const Instruction* a_index = f->parameter_instruction(1);
  const Instruction* b = f->parameter_instruction(2);
  const Instruction* b_index = f->parameter_instruction(3);
  const Instruction* value = root->operand(0);
  const Instruction* index = root->operand(1);
  if (value->opcode() != Opcode::kSelect || value->operand(1) != a || value->operand(2) != b ||
      index->opcode() != Opcode::kSelect || index->operand(1) != a_index ||
      index->operand(2) != b_index) {
    return false;
  }
  const Instruction* a_wins = value->operand(0);
  auto strictly_better = [&](const Instruction* c) { return IsCompareOf(c, a, b, direction); };
  auto is_nan = [&](const Instruction* c) {
    return IsCompareOf(c, a, a, ComparisonDirection::kNe);
  };
  const bool wins_ok = IsFloatingPointType(a->shape().element_type())
                           ? IsCommutedPair(a_wins, Opcode::kOr, strictly_better, is_nan)
                           : strictly_better(a_wins);
  if (!wins_ok) return false;
  auto tie_to_smaller = [&](const Instruction* c) {
    return IsCommutedPair(
        c, Opcode::kAnd,
        [&](const Instruction* e) { return IsCompareOf(e, a, b, ComparisonDirection::kEq); },
        [&](const Instruction* l) {
          return IsCompareOf(l, a_index, b_index, ComparisonDirection::kLt);
        });
  };
  return IsCommutedPair(
      index->operand(0), Opcode::kOr, [&](const Instruction* w) { return w == a_wins; },
      tie_to_smaller);
}

}  // namespace

// =============================== reduce-window ==============================

namespace {

// The pad's value and the reduce-window's init value are the same: one
// instruction, or two constants of one value (after the pad's is converted
// to the init's type).
bool SamePadAndInitValue(const Instruction* pad_value, const Instruction* init) {
  if (pad_value == init) return true;
  if (pad_value->opcode() != Opcode::kConstant || init->opcode() != Opcode::kConstant) {
    return false;
  }
  const Literal& a = *pad_value->attrs().literal;
  const Literal& b = *init->attrs().literal;
  if (a == b) return true;
  return pad_value->shape().element_type() != init->shape().element_type() &&
         a.shape().ElementCount() == 1 && b.shape().ElementCount() == 1 &&
         a.GetAsDouble(0) == b.GetAsDouble(0);
}

bool HasInteriorPadding(const std::vector<PaddingDimension>& padding) {
  return absl::c_any_of(padding, [](const PaddingDimension& p) { return p.interior != 0; });
}

}  // namespace

absl::Status Visitor::HandleReduceWindow(Instruction* reduce_window) {
  const int64_t input_count = reduce_window->operand_count() / 2;
  const bool multi_output = reduce_window->shape().IsTuple();
  if (input_count < 1 || !reduce_window->attrs().window.has_value() ||
      reduce_window->called_computations().empty()) {
    return absl::OkStatus();
  }
  // The inputs share their dimensions, and so do the outputs: the first of
  // each stands for all.
  const Shape& first_input = reduce_window->operand(0)->shape();
  const Shape& first_output =
      multi_output ? reduce_window->shape().tuple_shapes(0) : reduce_window->shape();
  if (!first_input.IsArray() || !first_output.IsArray()) return absl::OkStatus();
  // Each output as `element(i)` makes it, one per input; a tuple of them where
  // the reduce-window is variadic.
  auto replace_with_each = [&](const std::function<Instruction*(int64_t)>& element) {
    if (!multi_output) return ReplaceWithNew(reduce_window, element(0));
    std::vector<Instruction*> elements;
    for (int64_t i = 0; i < input_count; ++i) elements.push_back(element(i));
    return ReplaceWithNew(reduce_window, Add(Opcode::kTuple, reduce_window->shape(), elements));
  };
  // Nothing to reduce: the init values everywhere.
  if (IsZeroElementArray(first_input) || IsZeroElementArray(first_output)) {
    return replace_with_each([&](int64_t i) {
      return AddBroadcast(reduce_window->operand(input_count + i),
                          multi_output ? reduce_window->shape().tuple_shapes(i) : first_output, {});
    });
  }
  Computation* function = reduce_window->called_computations()[0];
  // A scalar window over scalars is the scalars (a variadic one only where its
  // reducer ends in a tuple, as XLA asks).
  if (first_input.rank() == 0 &&
      (!multi_output || (function->root_instruction() != nullptr &&
                         function->root_instruction()->opcode() == Opcode::kTuple))) {
    if (!multi_output) {
      ReplaceIfCompatible(reduce_window, reduce_window->operand(0));
      return absl::OkStatus();
    }
    return replace_with_each([&](int64_t i) { return reduce_window->operand(i); });
  }
  // The other rules are for a reduce-window of one input.
  if (multi_output || input_count != 1) return absl::OkStatus();
  Instruction* operand = reduce_window->operand(0);
  Instruction* init = reduce_window->operand(1);
  const Shape& shape = reduce_window->shape();
  const Window& window = *reduce_window->attrs().window;
  const ReductionKind kind = KindOf(function);

  // A cumulative sum of a broadcast constant c: c * (1 + iota) along the one
  // dimension its window runs over.
  Instruction* source = operand;
  while (source->opcode() == Opcode::kReshape || source->opcode() == Opcode::kConvert ||
         source->opcode() == Opcode::kSlice || source->opcode() == Opcode::kCopy) {
    source = source->operand(0);
  }
  if (source->opcode() == Opcode::kBroadcast && source->operand(0)->shape().rank() == 0 &&
      IsScalarConstantZero(init) && kind == ReductionKind::kAdd) {
    Instruction* value = source->operand(0);
    while (value->opcode() == Opcode::kConvert || value->opcode() == Opcode::kReshape) {
      value = value->operand(0);
    }
    // XLA stops here when the broadcast value is not a constant.
    if (value->opcode() != Opcode::kConstant) return absl::OkStatus();
    int64_t summed = -1;
    bool cumulative = true;
    for (int64_t i = 0; i < static_cast<int64_t>(window.dimensions.size()) && cumulative; ++i) {
      const WindowDimension& d = window.dimensions[i];
      if (d.size > 1) {
        cumulative = summed == -1 && d.size == operand->shape().dimensions(i) && d.stride == 1 &&
                     d.padding_low == d.size - 1 && d.padding_high == 0 && d.window_dilation == 1 &&
                     d.base_dilation == 1 && !d.window_reversal;
        summed = i;
      } else {
        cumulative = d.padding_low == 0 && d.padding_high == 0 && d.base_dilation == 1;
      }
    }
    if (cumulative && summed != -1) {
      if (value->shape().rank() != 0)
        value = AddReshape(value, Shape::Scalar(value->shape().element_type()));
      const PrimitiveType type = shape.element_type();
      if (value->shape().element_type() != type) value = AddConvert(value, type);
      const PrimitiveType count_type = value->shape().element_type() == PrimitiveType::kS64
                                           ? PrimitiveType::kS64
                                           : PrimitiveType::kS32;
      Shape count_shape = MakeShapeLike(count_type, shape.dimensions(), shape);
      Instruction* iota = Add(Opcode::kIota, count_shape, {});
      iota->mutable_attrs().iota_dimension = summed;
      Instruction* one = AddScalarConstant(count_type, 1, count_shape);
      Instruction* count =
          AddBinary(Opcode::kAdd, count_shape, iota, AddBroadcast(one, count_shape, {}));
      if (count_type != type) count = AddConvert(count, type);
      return ReplaceWithNew(reduce_window, AddBinary(Opcode::kMultiply, shape,
                                                     AddBroadcast(value, shape, {}), count));
    }
  }

  // Windows of one element: the reduction with the init value, elementwise
  // (and a pad with the init value where the window pads).
  const bool unit_windows = absl::c_all_of(window.dimensions, [](const WindowDimension& d) {
    return d.size == 1 && d.stride == 1 && d.window_dilation == 1 && d.base_dilation == 1 &&
           !d.window_reversal;
  });
  if (unit_windows &&
      (kind == ReductionKind::kAdd || kind == ReductionKind::kMin || kind == ReductionKind::kMax)) {
    const Opcode opcode = function->root_instruction()->opcode();
    Instruction* made =
        AddBinary(opcode, operand->shape(), operand, AddBroadcast(init, operand->shape(), {}));
    if (absl::c_any_of(window.dimensions, [](const WindowDimension& d) {
          return d.padding_low > 0 || d.padding_high > 0;
        })) {
      std::vector<PaddingDimension> padding;
      for (const WindowDimension& d : window.dimensions)
        padding.push_back({d.padding_low, d.padding_high, 0});
      Instruction* ops[] = {made, init};
      made = Add(Opcode::kPad, shape, ops);
      made->mutable_attrs().padding = std::move(padding);
    }
    return ReplaceWithNew(reduce_window, made);
  }

  // A window over whole dimensions (no stride, dilation or padding): a
  // reduce, reshaped to keep those dimensions as 1s.
  if (options_.enable_window_reduce_to_reduce_replacement) {
    std::vector<int64_t> reduced;
    bool plain = true;
    for (int64_t i = 0; i < static_cast<int64_t>(window.dimensions.size()) && plain; ++i) {
      const WindowDimension& d = window.dimensions[i];
      if (d.stride != 1 || d.window_dilation != 1 || d.base_dilation != 1 || d.padding_low != 0 ||
          d.padding_high != 0) {
        plain = false;
      } else if (d.size != 1) {
        if (shape.dimensions(i) == 1) {
          reduced.push_back(i);
        } else {
          plain = false;
        }
      }
    }
    if (plain && !reduced.empty()) {
      Shape reduce_shape =
          MakeShapeLike(shape.element_type(), DeleteDims(shape.dimensions(), reduced), shape);
      Instruction* reduce = AddReduce(operand, init, reduce_shape, reduced, function);
      return ReplaceWithNew(reduce_window, AddReshape(reduce, shape));
    }
  }

  // A pad (or a convert of one) before the window folds into its padding
  // when it pads with the init value.
  Instruction* pad = nullptr;
  Instruction* convert = nullptr;
  if (operand->opcode() == Opcode::kPad) {
    pad = operand;
  } else if (operand->opcode() == Opcode::kConvert &&
             operand->operand(0)->opcode() == Opcode::kPad) {
    convert = operand;
    pad = operand->operand(0);
    // XLA keeps a pad that is small next to the one dimension a window runs
    // over (under a tenth of it).
    std::vector<int64_t> running;
    for (int64_t i = 0; i < static_cast<int64_t>(window.dimensions.size()); ++i) {
      if (window.dimensions[i].size != 1) running.push_back(i);
    }
    if (running.size() == 1) {
      const PaddingDimension& p = pad->attrs().padding[running[0]];
      const double ratio = static_cast<double>(p.low + p.high) /
                           static_cast<double>(operand->shape().dimensions(running[0]));
      if (ratio < 0.1) return absl::OkStatus();
    }
  } else {
    return absl::OkStatus();
  }
  const std::vector<PaddingDimension>& padding = pad->attrs().padding;
  const bool base_dilated = absl::c_any_of(
      window.dimensions, [](const WindowDimension& d) { return d.base_dilation != 1; });
  if (HasInteriorPadding(padding) && base_dilated) return absl::OkStatus();
  if (!SamePadAndInitValue(pad->operand(1), init)) return absl::OkStatus();

  Instruction* padded = pad->operand(0);
  Instruction* new_operand =
      convert == nullptr ? padded : AddConvert(padded, convert->shape().element_type());
  // Each window then reads one unpadded element: a broadcast.
  const bool effective_broadcast = [&] {
    for (int64_t i = 0; i < static_cast<int64_t>(padding.size()); ++i) {
      const PaddingDimension& p = padding[i];
      const WindowDimension& d = window.dimensions[i];
      const bool padded_dim = p.low != 0 || p.high != 0;
      if (d.stride != 1 || p.low != p.high || p.interior != 0) return false;
      if (padded_dim && padded->shape().dimensions(i) != 1) return false;
      if (padded_dim && d.size < p.low + 1) return false;
      if (padded->shape().dimensions(i) != 1 && d.size != 1) return false;
    }
    return true;
  }();
  if (effective_broadcast) {
    // XLA's broadcast sequence: a reshape keeping the dimensions the output
    // has at the same size (the others are 1s), broadcast along them.
    std::vector<int64_t> kept_dims, kept_sizes;
    for (int64_t i = 0; i < new_operand->shape().rank(); ++i) {
      if (new_operand->shape().dimensions(i) == shape.dimensions(i)) {
        kept_dims.push_back(i);
        kept_sizes.push_back(shape.dimensions(i));
      }
    }
    Instruction* kept = AddReshape(new_operand, MakeShapeLike(new_operand->shape().element_type(),
                                                              kept_sizes, new_operand->shape()));
    return ReplaceWithNew(reduce_window, AddBroadcast(kept, shape, kept_dims));
  }
  Window folded = window;
  for (size_t i = 0; i < folded.dimensions.size(); ++i) {
    WindowDimension& d = folded.dimensions[i];
    d.padding_low += d.base_dilation * padding[i].low;
    d.padding_high += d.base_dilation * padding[i].high;
    if (padding[i].interior != 0) d.base_dilation = 1 + padding[i].interior;
  }
  Instruction* ops[] = {new_operand, init};
  Instruction* made = Add(Opcode::kReduceWindow, shape, ops);
  made->mutable_attrs().window = std::move(folded);
  made->mutable_called_computations() = {function};
  return ReplaceWithNew(reduce_window, made);
}

// ================================== reduce ==================================

absl::Status Visitor::HandleReduce(Instruction* reduce) {
  const int64_t input_count = reduce->operand_count() / 2;
  if (input_count < 1) return absl::OkStatus();
  const bool multi_output = reduce->shape().IsTuple();
  Instruction* arg = reduce->operand(0);
  Instruction* init = reduce->operand(input_count);
  const Shape& result_shape = multi_output ? reduce->shape().tuple_shapes(0) : reduce->shape();
  const std::vector<int64_t> dims = reduce->attrs().dimensions;
  if (!arg->shape().IsArray() || !result_shape.IsArray()) return absl::OkStatus();

  // Nothing to reduce: broadcast the init values.
  if (IsZeroElementArray(arg->shape()) || IsZeroElementArray(result_shape)) {
    if (!multi_output) return ReplaceWithNew(reduce, AddBroadcast(init, result_shape, {}));
    std::vector<Instruction*> elements;
    for (int64_t i = 0; i < input_count; ++i) {
      elements.push_back(
          AddBroadcast(reduce->operand(input_count + i), reduce->shape().tuple_shapes(i), {}));
    }
    std::vector<Shape> shapes;
    for (Instruction* e : elements) shapes.push_back(e->shape());
    return ReplaceWithNew(reduce, Add(Opcode::kTuple, Shape::Tuple(shapes), elements));
  }
  // No elements are combined: a reshape.
  if (result_shape.ElementCount() == arg->shape().ElementCount()) {
    if (!multi_output) return ReplaceWithNew(reduce, AddReshape(arg, result_shape));
    std::vector<Instruction*> elements;
    for (int64_t i = 0; i < input_count; ++i) {
      elements.push_back(AddReshape(reduce->operand(i), reduce->shape().tuple_shapes(i)));
    }
    std::vector<Shape> shapes;
    for (Instruction* e : elements) shapes.push_back(e->shape());
    return ReplaceWithNew(reduce, Add(Opcode::kTuple, Shape::Tuple(shapes), elements));
  }
  // argmax/argmin of a broadcast scalar constant: that constant at index 0.
  if ((IsArgMinMax(reduce, ComparisonDirection::kGt) ||
       IsArgMinMax(reduce, ComparisonDirection::kLt)) &&
      arg->opcode() == Opcode::kBroadcast && arg->operand(0)->opcode() == Opcode::kConstant &&
      arg->operand(0)->shape().rank() == 0 &&
      absl::c_linear_search(dims, reduce->operand(1)->attrs().iota_dimension)) {
    const Shape& index_shape = reduce->shape().tuple_shapes(1);
    Instruction* elements[] = {
        AddBroadcast(arg->operand(0), result_shape, {}),
        AddBroadcast(AddScalarConstant(index_shape.element_type(), 0, index_shape), index_shape,
                     {})};
    return ReplaceWithNew(reduce, Add(Opcode::kTuple, reduce->shape(), elements));
  }
  if (multi_output) return absl::OkStatus();
  // The single-output rules, in order; the first that applies rewrites.
  for (auto rule : {&Visitor::ReduceOfNegate, &Visitor::ReduceOfTranspose, &Visitor::ReduceOfReduce,
                    &Visitor::ReduceOfReshape, &Visitor::ReduceOfConcatenate,
                    &Visitor::ReduceBesideArgMinMax, &Visitor::ReduceOfBroadcast}) {
    HLOGYM_ASSIGN(applied, (this->*rule)(reduce));
    if (applied) return absl::OkStatus();
  }
  return absl::OkStatus();
}

// reduce(-x, 0, +) => -reduce(x, 0, +) for floats.
absl::StatusOr<bool> Visitor::ReduceOfNegate(Instruction* reduce) {
  Instruction* arg = reduce->operand(0);
  Instruction* init = reduce->operand(1);
  Computation* function = reduce->to_apply();
  const ReductionKind kind = KindOf(function);
  if (IsFloatingPointType(reduce->shape().element_type()) && arg->opcode() == Opcode::kNegate &&
      IsScalarConstantZero(init) && kind == ReductionKind::kAdd) {
    std::vector<Instruction*> users = reduce->users();
    const bool was_root = reduce->IsRoot();
    Instruction* negate_operand = arg->operand(0);
    reduce->ReplaceOperandWith(0, negate_operand);
    Instruction* negated = AddUnary(Opcode::kNegate, reduce);
    for (Instruction* user : users) user->ReplaceUsesOfOperand(reduce, negated);
    if (was_root) computation_->set_root_instruction(negated);
    MarkChanged();
    RemoveDeadTree(arg);
    return true;
  }
  return false;
}

// reduce(transpose(x)) => reduce(x) with permuted dims (then a transpose
// if the kept dims are out of order).
absl::StatusOr<bool> Visitor::ReduceOfTranspose(Instruction* reduce) {
  Instruction* arg = reduce->operand(0);
  Instruction* init = reduce->operand(1);
  const std::vector<int64_t> dims = reduce->attrs().dimensions;
  Computation* function = reduce->to_apply();
  if (arg->opcode() == Opcode::kTranspose &&
      (options_.unconditionally_simplify_reduce_of_transpose_or_reshape ||
       reduce->shape().rank() < 2 || arg->user_count() == 1 ||
       std::all_of(arg->users().begin(), arg->users().end(),
                   [](const Instruction* u) { return u->opcode() == Opcode::kReduce; }))) {
    const std::vector<int64_t>& perm = arg->attrs().dimensions;
    std::vector<int64_t> new_dims;
    for (int64_t d : dims) new_dims.push_back(perm[d]);
    Instruction* x = arg->operand(0);
    Shape new_shape = MakeShapeLike(reduce->shape().element_type(),
                                    DeleteDims(x->shape().dimensions(), new_dims), reduce->shape());
    Instruction* new_reduce = AddReduce(x, init, new_shape, new_dims, function);
    std::vector<int64_t> new_perm;
    for (int64_t p : perm) {
      if (!absl::c_linear_search(new_dims, p)) new_perm.push_back(p);
    }
    if (IsSortedDims(new_perm)) {
      HLOGYM_RETURN_IF_ERROR(ReplaceWithNew(reduce, new_reduce));
      return true;
    }
    for (int64_t& p : new_perm) {
      const int64_t old = p;
      for (int64_t r : new_dims) {
        if (old > r) --p;
      }
    }
    HLOGYM_RETURN_IF_ERROR(ReplaceWithNew(reduce, AddTranspose(new_reduce, new_perm)));
    return true;
  }
  return false;
}

// reduce(reduce(x)) with the same computation and init => one reduce.
absl::StatusOr<bool> Visitor::ReduceOfReduce(Instruction* reduce) {
  Instruction* arg = reduce->operand(0);
  Instruction* init = reduce->operand(1);
  const std::vector<int64_t> dims = reduce->attrs().dimensions;
  Computation* function = reduce->to_apply();
  if (arg->opcode() == Opcode::kReduce && arg->operand_count() == 2 &&
      init->Identical(*arg->operand(1)) &&
      ReductionComputationsEquivalent(function, arg->to_apply())) {
    std::vector<int64_t> arg_dims = arg->attrs().dimensions;
    std::sort(arg_dims.begin(), arg_dims.end());
    std::vector<int64_t> outer = dims;
    std::sort(outer.begin(), outer.end());
    for (int64_t a : arg_dims) {
      for (int64_t& d : outer) {
        if (d >= a) ++d;
      }
    }
    std::vector<int64_t> merged;
    std::merge(arg_dims.begin(), arg_dims.end(), outer.begin(), outer.end(),
               std::back_inserter(merged));
    Instruction* made = AddReduce(arg->operand(0), init, reduce->shape(), merged, function);
    HLOGYM_RETURN_IF_ERROR(ReplaceWithNew(reduce, made));
    return true;
  }
  return false;
}

// reduce(concatenate(a, b, ...)) over the concatenated dimension =>
// map(map(reduce(a), reduce(b)), ...) with the reducer as the map's function,
// folded left to right; map then becomes the reducer's own instruction. As
// XLA's default (enable_unconditional_reduce_of_concat_replacement).
absl::StatusOr<bool> Visitor::ReduceOfConcatenate(Instruction* reduce) {
  Instruction* arg = reduce->operand(0);
  const std::vector<int64_t>& dims = reduce->attrs().dimensions;
  if (arg->opcode() != Opcode::kConcatenate ||
      !absl::c_linear_search(dims, arg->attrs().dimensions[0])) {
    return false;
  }
  Instruction* init = reduce->operand(1);
  Computation* function = reduce->to_apply();
  const Shape& shape = reduce->shape();
  Instruction* running = nullptr;
  for (Instruction* piece : arg->operands()) {
    Instruction* part = AddReduce(piece, init, shape, dims, function);
    if (running == nullptr) {
      running = part;
      continue;
    }
    Instruction* ops[] = {running, part};
    running = MakeMap(computation_, shape, ops, function);
  }
  HLOGYM_RETURN_IF_ERROR(ReplaceWithNew(reduce, running));
  return true;
}

// reduce(reshape(x)).
absl::StatusOr<bool> Visitor::ReduceOfReshape(Instruction* reduce) {
  Instruction* arg = reduce->operand(0);
  Instruction* init = reduce->operand(1);
  const std::vector<int64_t> dims = reduce->attrs().dimensions;
  Computation* function = reduce->to_apply();
  if (options_.enable_reduce_of_reshape && arg->opcode() == Opcode::kReshape) {
    Instruction* x = arg->operand(0);
    auto unmodified = DimensionsUnmodifiedByReshape(x->shape(), arg->shape());
    const int64_t rank = arg->shape().rank();
    std::vector<bool> in_output(rank, true), dim_unmodified(rank, false);
    for (int64_t d : dims) in_output[d] = false;
    for (const auto& [in, out] : unmodified) dim_unmodified[out] = true;
    bool kept_dims_unmodified = true;
    for (int64_t i = 0; i < rank; ++i) {
      if (in_output[i] && !dim_unmodified[i]) kept_dims_unmodified = false;
    }
    if (kept_dims_unmodified) {
      std::vector<int64_t> keep;
      for (const auto& [in, out] : unmodified) {
        if (in_output[out]) keep.push_back(in);
      }
      std::vector<int64_t> new_dims;
      for (int64_t i = 0; i < x->shape().rank(); ++i) {
        if (!absl::c_linear_search(keep, i)) new_dims.push_back(i);
      }
      Instruction* made = AddReduce(x, init, reduce->shape(), new_dims, function);
      HLOGYM_RETURN_IF_ERROR(ReplaceWithNew(reduce, made));
      return true;
    }
    if ((arg->user_count() == 1 ||
         options_.unconditionally_simplify_reduce_of_transpose_or_reshape) &&
        std::all_of(dims.begin(), dims.end(), [&](int64_t d) { return dim_unmodified[d]; })) {
      std::vector<int64_t> new_dims;
      for (int64_t d : dims) {
        for (const auto& [in, out] : unmodified) {
          if (out == d) new_dims.push_back(in);
        }
      }
      Shape new_shape =
          MakeShapeLike(reduce->shape().element_type(),
                        DeleteDims(x->shape().dimensions(), new_dims), reduce->shape());
      Instruction* new_reduce = AddReduce(x, init, new_shape, new_dims, function);
      HLOGYM_RETURN_IF_ERROR(ReplaceWithNew(reduce, AddReshape(new_reduce, reduce->shape())));
      return true;
    }
  }
  return false;
}

// reduce(x, -inf, max) next to an argmax of x over the same dims => the
// argmax's value output (likewise min/+inf/argmin).
absl::StatusOr<bool> Visitor::ReduceBesideArgMinMax(Instruction* reduce) {
  Instruction* arg = reduce->operand(0);
  Instruction* init = reduce->operand(1);
  const std::vector<int64_t> dims = reduce->attrs().dimensions;
  Computation* function = reduce->to_apply();
  const ReductionKind kind = KindOf(function);
  const bool scalar_init = init->opcode() == Opcode::kConstant && init->shape().rank() == 0;
  const bool is_max = kind == ReductionKind::kMax && scalar_init && IsAllLowest(init);
  const bool is_min = kind == ReductionKind::kMin && scalar_init && IsAllHighest(init);
  if (is_max || is_min) {
    const ComparisonDirection direction =
        is_max ? ComparisonDirection::kGt : ComparisonDirection::kLt;
    for (Instruction* user : arg->users()) {
      if (user != reduce && user->operand(0) == arg && user->attrs().dimensions == dims &&
          IsArgMinMax(user, direction)) {
        Instruction* ops[] = {user};
        Instruction* value = Add(Opcode::kGetTupleElement, user->shape().tuple_shapes(0), ops);
        value->mutable_attrs().tuple_index = 0;
        HLOGYM_RETURN_IF_ERROR(ReplaceWithNew(reduce, value));
        return true;
      }
    }
  }
  return false;
}

absl::StatusOr<bool> Visitor::ReduceOfBroadcast(Instruction* reduce) {
  Instruction* arg = reduce->operand(0);
  Instruction* init = reduce->operand(1);
  const std::vector<int64_t> dims = reduce->attrs().dimensions;
  Computation* function = reduce->to_apply();
  const ReductionKind kind = KindOf(function);
  if (arg->opcode() == Opcode::kBroadcast) {
    Instruction* x = arg->operand(0);
    const std::vector<int64_t>& bdims = arg->attrs().dimensions;
    // reduce(broadcast(scalar)) over everything with min/max/and/or => op(x, init).
    if ((kind == ReductionKind::kMax || kind == ReductionKind::kMin ||
         kind == ReductionKind::kAnd || kind == ReductionKind::kOr) &&
        x->shape().rank() == 0 && static_cast<int64_t>(dims.size()) == arg->shape().rank() &&
        x->shape().element_type() == reduce->shape().element_type()) {
      HLOGYM_RETURN_IF_ERROR(ReplaceWithNew(
          reduce, AddBinary(function->root_instruction()->opcode(), reduce->shape(), x, init)));
      return true;
    }
    // Reducing only dims the broadcast kept: reduce first, then broadcast.
    std::vector<int64_t> new_dims;
    bool all_from_operand = true;
    for (int64_t d : dims) {
      auto it = std::find(bdims.begin(), bdims.end(), d);
      if (it == bdims.end()) {
        all_from_operand = false;
        break;
      }
      new_dims.push_back(it - bdims.begin());
    }
    if (all_from_operand) {
      Shape new_shape =
          MakeShapeLike(reduce->shape().element_type(),
                        DeleteDims(x->shape().dimensions(), new_dims), reduce->shape());
      Instruction* new_reduce = AddReduce(x, init, new_shape, new_dims, function);
      std::vector<int64_t> new_bdims;
      for (int64_t i = 0; i < x->shape().rank(); ++i) {
        if (absl::c_linear_search(new_dims, i)) continue;
        const int64_t bdim = bdims[i];
        int64_t shift = 0;
        for (int64_t d : dims) shift += d < bdim ? 1 : 0;
        new_bdims.push_back(bdim - shift);
      }
      HLOGYM_RETURN_IF_ERROR(
          ReplaceWithNew(reduce, AddBroadcast(new_reduce, reduce->shape(), new_bdims)));
      return true;
    }
    // Summing only dims the broadcast added: broadcast(init + x * count).
    if (kind == ReductionKind::kAdd && IsSortedDims(bdims) &&
        x->shape().element_type() == reduce->shape().element_type()) {
      bool only_added = true;
      int64_t count = 1;
      std::vector<int64_t> new_bdims;
      int64_t removed = 0;
      for (int64_t i = 0; i < arg->shape().rank(); ++i) {
        const bool added = !absl::c_linear_search(bdims, i);
        const bool reduced = absl::c_linear_search(dims, i);
        if (reduced && !added) {
          only_added = false;
          break;
        }
        if (reduced) {
          count *= arg->shape().dimensions(i);
          ++removed;
        } else if (!added) {
          new_bdims.push_back(i - removed);
        }
      }
      if (only_added) {
        Instruction* scaled =
            AddBinary(Opcode::kMultiply, x->shape(), x, ScalarLike(x->shape(), count));
        Instruction* init_b = x->shape().rank() == 0 ? init : AddBroadcast(init, x->shape(), {});
        Instruction* sum = AddBinary(Opcode::kAdd, x->shape(), init_b, scaled);
        HLOGYM_RETURN_IF_ERROR(
            ReplaceWithNew(reduce, AddBroadcast(sum, reduce->shape(), new_bdims)));
        return true;
      }
    }
  }
  return false;
}

// =================================== dot ====================================

namespace {

// The result dimensions of a dot: batch, lhs free, rhs free.
std::vector<int64_t> DotDims(const Shape& lhs, const Shape& rhs, const DotDimensionNumbers& dn) {
  std::vector<int64_t> dims;
  for (int64_t d : dn.lhs_batch_dimensions) dims.push_back(lhs.dimensions(d));
  for (int64_t i = 0; i < lhs.rank(); ++i) {
    if (!absl::c_linear_search(dn.lhs_batch_dimensions, i) &&
        !absl::c_linear_search(dn.lhs_contracting_dimensions, i)) {
      dims.push_back(lhs.dimensions(i));
    }
  }
  for (int64_t i = 0; i < rhs.rank(); ++i) {
    if (!absl::c_linear_search(dn.rhs_batch_dimensions, i) &&
        !absl::c_linear_search(dn.rhs_contracting_dimensions, i)) {
      dims.push_back(rhs.dimensions(i));
    }
  }
  return dims;
}

bool HasDefaultAlgorithm(const Instruction* dot) {
  const RawAttribute* algorithm = dot->attrs().FindRaw("algorithm");
  return algorithm == nullptr || algorithm->value == "dot_any_f32_f32_f32" ||
         algorithm->value == "dot_f32_f32_f32";
}

// Whether every dimension of a dot operand is a batch or a contracting one
// (no dimension of its own reaches the result).
bool OnlyBatchAndContracting(const Instruction* operand, const std::vector<int64_t>& batch,
                             const std::vector<int64_t>& contracting) {
  return static_cast<int64_t>(batch.size() + contracting.size()) == operand->shape().rank();
}

}  // namespace

absl::Status Visitor::RewriteDotWithoutContractingAsMultiply(Instruction* dot) {
  const DotDimensionNumbers& dn = *dot->attrs().dot_dimension_numbers;
  Instruction* lhs = dot->operand(0);
  Instruction* rhs = dot->operand(1);
  const Shape& shape = dot->shape();
  const PrimitiveType type = shape.element_type();
  auto normalize = [&](Instruction* operand, const std::vector<int64_t>& batch) {
    std::vector<int64_t> perm = batch;
    for (int64_t i = 0; i < operand->shape().rank(); ++i) {
      if (!absl::c_linear_search(batch, i)) perm.push_back(i);
    }
    if (!IsSortedDims(perm)) operand = AddTranspose(operand, perm);
    if (operand->shape().element_type() != type) operand = AddConvert(operand, type);
    return operand;
  };
  Instruction* new_lhs = normalize(lhs, dn.lhs_batch_dimensions);
  Instruction* new_rhs = normalize(rhs, dn.rhs_batch_dimensions);
  const int64_t lhs_rank = lhs->shape().rank();
  if (shape.rank() != lhs_rank) {
    std::vector<int64_t> bdims(lhs_rank);
    std::iota(bdims.begin(), bdims.end(), 0);
    new_lhs = AddBroadcast(new_lhs, shape, bdims);
  }
  if (shape.rank() != rhs->shape().rank()) {
    std::vector<int64_t> bdims(dn.lhs_batch_dimensions.size());
    std::iota(bdims.begin(), bdims.end(), 0);
    for (int64_t i = lhs_rank; i < shape.rank(); ++i) bdims.push_back(i);
    new_rhs = AddBroadcast(new_rhs, shape, bdims);
  }
  return ReplaceWithNew(dot, AddBinary(Opcode::kMultiply, shape, new_lhs, new_rhs));
}

// A dot one of whose operands is only batch and contracting dimensions (a
// vector per batch) as reduce(multiply): each operand transposed to [batch,
// own, contracting], converted to the result type, the one without dimensions
// of its own broadcast to the other, the product summed over the contracting
// dimensions in f32 (f64 stays f64; integers in their own type), then
// converted back.
absl::Status Visitor::RewriteBatchPlusContractingAsReduce(Instruction* dot) {
  const DotDimensionNumbers& dn = *dot->attrs().dot_dimension_numbers;
  const Shape& shape = dot->shape();
  const PrimitiveType type = shape.element_type();
  const int64_t batch = static_cast<int64_t>(dn.lhs_batch_dimensions.size());
  const int64_t contracting = static_cast<int64_t>(dn.lhs_contracting_dimensions.size());
  auto normalize = [&](Instruction* operand, const std::vector<int64_t>& batch_dims,
                       const std::vector<int64_t>& contracting_dims) {
    std::vector<int64_t> perm = batch_dims;
    for (int64_t i = 0; i < operand->shape().rank(); ++i) {
      if (!absl::c_linear_search(batch_dims, i) && !absl::c_linear_search(contracting_dims, i)) {
        perm.push_back(i);
      }
    }
    perm.insert(perm.end(), contracting_dims.begin(), contracting_dims.end());
    if (!IsSortedDims(perm)) operand = AddTranspose(operand, perm);
    if (operand->shape().element_type() != type) operand = AddConvert(operand, type);
    return operand;
  };
  Instruction* lhs =
      normalize(dot->operand(0), dn.lhs_batch_dimensions, dn.lhs_contracting_dimensions);
  Instruction* rhs =
      normalize(dot->operand(1), dn.rhs_batch_dimensions, dn.rhs_contracting_dimensions);
  const int64_t lhs_own = lhs->shape().rank() - batch - contracting;
  const int64_t rhs_own = rhs->shape().rank() - batch - contracting;
  // Broadcasts `vector` (no dimensions of its own) to `other`'s shape.
  auto broadcast_to = [&](Instruction* vector, Instruction* other, int64_t own) {
    std::vector<int64_t> dims(batch);
    std::iota(dims.begin(), dims.end(), 0);
    for (int64_t i = 0; i < contracting; ++i) dims.push_back(batch + own + i);
    return AddBroadcast(vector, other->shape(), std::move(dims));
  };
  if (rhs_own > 0) lhs = broadcast_to(lhs, rhs, rhs_own);
  if (lhs_own > 0) rhs = broadcast_to(rhs, lhs, lhs_own);
  Instruction* product = AddBinary(Opcode::kMultiply, lhs->shape(), lhs, rhs);
  PrimitiveType accumulation = type;
  if (IsFloatingPointType(type) && type != PrimitiveType::kF64) accumulation = PrimitiveType::kF32;
  if (accumulation != type) product = AddConvert(product, accumulation);
  const int64_t own = std::max(lhs_own, rhs_own);
  std::vector<int64_t> reduce_dims(contracting);
  std::iota(reduce_dims.begin(), reduce_dims.end(), batch + own);
  Instruction* sum = AddReduce(product, AddScalarConstant(accumulation, 0, product->shape()),
                               ChangeElementType(shape, accumulation), std::move(reduce_dims),
                               ScalarAddComputation(accumulation));
  if (accumulation != type) sum = AddConvert(sum, type);
  return ReplaceWithNew(dot, sum);
}

absl::StatusOr<bool> Visitor::RemoveDegenerateDimensionFromDot(Instruction* dot) {
  Instruction* lhs = dot->operand(0);
  Instruction* rhs = dot->operand(1);
  const DotDimensionNumbers& dn = *dot->attrs().dot_dimension_numbers;
  auto dim_map = [](const Shape& s, int64_t* degenerate) {
    std::vector<int64_t> map(s.rank(), -1);
    for (int64_t i = 0; i < s.rank(); ++i) {
      if (s.dimensions(i) == 1) {
        ++*degenerate;
      } else {
        map[i] = i - *degenerate;
      }
    }
    return map;
  };
  int64_t lhs_degenerate = 0, rhs_degenerate = 0;
  std::vector<int64_t> lhs_map = dim_map(lhs->shape(), &lhs_degenerate);
  std::vector<int64_t> rhs_map = dim_map(rhs->shape(), &rhs_degenerate);
  if (lhs_degenerate == 0 && rhs_degenerate == 0) return false;
  DotDimensionNumbers new_dn;
  // Batch dims stay paired: drop a pair only when both sides are size 1
  // (a batch dim has the same size on both sides).
  for (size_t i = 0; i < dn.lhs_batch_dimensions.size(); ++i) {
    int64_t l = lhs_map[dn.lhs_batch_dimensions[i]];
    int64_t r = rhs_map[dn.rhs_batch_dimensions[i]];
    if (l != -1 && r != -1) {
      new_dn.lhs_batch_dimensions.push_back(l);
      new_dn.rhs_batch_dimensions.push_back(r);
    } else if ((l == -1) != (r == -1)) {
      return false;
    }
  }
  for (size_t i = 0; i < dn.lhs_contracting_dimensions.size(); ++i) {
    int64_t l = lhs_map[dn.lhs_contracting_dimensions[i]];
    int64_t r = rhs_map[dn.rhs_contracting_dimensions[i]];
    if (l != -1 && r != -1) {
      new_dn.lhs_contracting_dimensions.push_back(l);
      new_dn.rhs_contracting_dimensions.push_back(r);
    } else if ((l == -1) != (r == -1)) {
      return false;
    }
  }
  auto squeeze = [&](Instruction* operand, int64_t degenerate) -> Instruction* {
    if (degenerate == 0) return operand;
    std::vector<int64_t> kept;
    for (int64_t d : operand->shape().dimensions()) {
      if (d != 1) kept.push_back(d);
    }
    return AddReshape(operand,
                      MakeShapeLike(operand->shape().element_type(), kept, operand->shape()));
  };
  Instruction* new_lhs = squeeze(lhs, lhs_degenerate);
  Instruction* new_rhs = squeeze(rhs, rhs_degenerate);
  auto clone = dot->CloneWithNewOperands({new_lhs, new_rhs}, "");
  clone->set_name("");
  clone->mutable_attrs().dot_dimension_numbers = new_dn;
  clone->set_shape(MakeShapeLike(dot->shape().element_type(),
                                 DotDims(new_lhs->shape(), new_rhs->shape(), new_dn),
                                 dot->shape()));
  Instruction* new_dot = computation_->AddInstruction(std::move(clone));
  absl::Status status;
  if (new_dot->shape().Compatible(dot->shape())) {
    status = ReplaceWithNew(dot, new_dot);
  } else {
    status = ReplaceWithNew(dot, AddReshape(new_dot, dot->shape()));
  }
  if (!status.ok()) return status;
  return true;
}

absl::StatusOr<bool> Visitor::RemoveTransposesFromDotOperands(Instruction* dot) {
  Instruction* lhs = dot->operand(0);
  Instruction* rhs = dot->operand(1);
  const DotDimensionNumbers& dn = *dot->attrs().dot_dimension_numbers;
  const int64_t rank = dot->shape().rank();
  if (lhs->opcode() != Opcode::kTranspose || rhs->opcode() != Opcode::kTranspose ||
      lhs->attrs().dimensions != rhs->attrs().dimensions) {
    return false;
  }
  const std::vector<int64_t>& perm = lhs->attrs().dimensions;
  if (dn.lhs_batch_dimensions != dn.rhs_batch_dimensions ||
      dn.lhs_contracting_dimensions.size() != 1 || dn.rhs_contracting_dimensions.size() != 1 ||
      dn.lhs_contracting_dimensions[0] != rank - 1 ||
      dn.rhs_contracting_dimensions[0] != rank - 2 ||
      rank != static_cast<int64_t>(dn.lhs_batch_dimensions.size()) + 2 ||
      static_cast<int64_t>(perm.size()) != rank) {
    return false;
  }
  bool reorder;
  if (perm[rank - 2] == rank - 2 && perm[rank - 1] == rank - 1) {
    reorder = false;
  } else if (perm[rank - 2] == rank - 1 && perm[rank - 1] == rank - 2) {
    reorder = true;
  } else {
    return false;
  }
  Instruction* new_lhs = reorder ? rhs->operand(0) : lhs->operand(0);
  Instruction* new_rhs = reorder ? lhs->operand(0) : rhs->operand(0);
  auto clone = dot->CloneWithNewOperands({new_lhs, new_rhs}, "");
  clone->set_name("");
  if (reorder) {
    std::vector<Precision>& precision = clone->mutable_attrs().operand_precision;
    if (precision.size() == 2) std::swap(precision[0], precision[1]);
  }
  clone->set_shape(MakeShapeLike(dot->shape().element_type(),
                                 DotDims(new_lhs->shape(), new_rhs->shape(), dn), dot->shape()));
  Instruction* new_dot = computation_->AddInstruction(std::move(clone));
  Instruction* ops[] = {new_dot};
  Instruction* transpose = Add(Opcode::kTranspose, dot->shape(), ops);
  transpose->mutable_attrs().dimensions = perm;
  HLOGYM_RETURN_IF_ERROR(ReplaceWithNew(dot, transpose));
  return true;
}

// dot(reshape(transpose(x)), constant), the transpose reordering only the
// dims the reshape merges into the contracting dim: the reordering moves to
// the constant's side (reshape, transpose, reshape back; constant folding
// folds them), and the dot reads reshape(x). XLA's
// OptimizeDotOfReorderContractingDims; the constant may be either operand.
absl::StatusOr<bool> Visitor::MoveContractingReorderToConstant(Instruction* dot) {
  const DotDimensionNumbers& dn = *dot->attrs().dot_dimension_numbers;
  if (dn.lhs_contracting_dimensions.size() != 1) return false;
  const bool constant_first = dot->operand(0)->opcode() == Opcode::kConstant;
  Instruction* reshape = dot->operand(constant_first ? 1 : 0);
  Instruction* constant = dot->operand(constant_first ? 0 : 1);
  const int64_t reshape_contracting =
      (constant_first ? dn.rhs_contracting_dimensions : dn.lhs_contracting_dimensions)[0];
  const int64_t constant_contracting =
      (constant_first ? dn.lhs_contracting_dimensions : dn.rhs_contracting_dimensions)[0];
  if (reshape->opcode() != Opcode::kReshape ||
      reshape->operand(0)->opcode() != Opcode::kTranspose ||
      constant->opcode() != Opcode::kConstant) {
    return false;
  }
  Instruction* transpose = reshape->operand(0);
  Instruction* input = transpose->operand(0);
  const Shape& transposed = transpose->shape();
  // Every dim of the reshape but the contracting one passes through it.
  const std::vector<std::pair<int64_t, int64_t>> unmodified =
      DimensionsUnmodifiedByReshape(transposed, reshape->shape());
  if (static_cast<int64_t>(unmodified.size()) != reshape->shape().rank() - 1) return false;
  std::vector<bool> passes_through(transposed.rank(), false);
  for (const auto& [from, to] : unmodified) {
    if (to == reshape_contracting) return false;
    passes_through[from] = true;
  }
  // The merged dims, consecutive; the transpose leaves every other dim alone.
  std::vector<int64_t> merged;
  for (int64_t d = 0; d < transposed.rank(); ++d) {
    if (!passes_through[d]) merged.push_back(d);
  }
  if (merged.empty()) return false;
  const int64_t first = merged.front();
  const int64_t count = static_cast<int64_t>(merged.size());
  if (merged.back() != first + count - 1) return false;
  const std::vector<int64_t>& permutation = transpose->attrs().dimensions;
  for (int64_t d = 0; d < transposed.rank(); ++d) {
    if (passes_through[d] && permutation[d] != d) return false;
  }
  // The constant's contracting dim split as the transpose's output merges it,
  // those pieces put back in the input's order, merged again.
  const Shape& constant_shape = constant->shape();
  std::vector<int64_t> split_dims;
  for (int64_t d = 0; d < constant_shape.rank(); ++d) {
    if (d != constant_contracting) {
      split_dims.push_back(constant_shape.dimensions(d));
      continue;
    }
    for (int64_t j = 0; j < count; ++j) split_dims.push_back(transposed.dimensions(first + j));
  }
  Instruction* split = AddReshape(
      constant, MakeShapeLike(constant_shape.element_type(), split_dims, constant_shape));
  const std::vector<int64_t> inverse = InversePermutation(permutation);
  std::vector<int64_t> reorder(split_dims.size());
  std::iota(reorder.begin(), reorder.end(), 0);
  for (int64_t j = 0; j < count; ++j) {
    reorder[constant_contracting + j] = constant_contracting + inverse[first + j] - first;
  }
  Instruction* merged_back = AddReshape(AddTranspose(split, std::move(reorder)), constant_shape);
  Instruction* new_reshape = AddReshape(input, reshape->shape());
  auto clone = dot->CloneWithNewOperands(constant_first
                                             ? std::vector<Instruction*>{merged_back, new_reshape}
                                             : std::vector<Instruction*>{new_reshape, merged_back},
                                         "");
  clone->set_name("");
  HLOGYM_RETURN_IF_ERROR(ReplaceWithNew(dot, computation_->AddInstruction(std::move(clone))));
  return true;
}

absl::Status Visitor::HandleDot(Instruction* dot) {
  if (!dot->attrs().dot_dimension_numbers.has_value() || dot->operand_count() != 2) {
    return absl::OkStatus();
  }
  if (dot->attrs().FindRaw("sparsity") != nullptr) return absl::OkStatus();
  const DotDimensionNumbers& dn = *dot->attrs().dot_dimension_numbers;
  Instruction* lhs = dot->operand(0);
  Instruction* rhs = dot->operand(1);
  if (IsZeroElementArray(dot->shape()) || IsZeroElementArray(lhs->shape()) ||
      IsZeroElementArray(rhs->shape())) {
    return ReplaceWithNew(dot, ScalarLike(dot->shape(), 0));
  }
  if (HasDefaultAlgorithm(dot) && options_.enable_dot_to_multiply_rewrite &&
      dn.lhs_contracting_dimensions.empty()) {
    return RewriteDotWithoutContractingAsMultiply(dot);
  }
  // Strength reduction: a dot with a (batched) vector operand as
  // reduce(multiply). With it off, as in XLA:CPU's pipeline, XLA still
  // reduces a dot of two such vectors (its pass log on a causal linear
  // attention's normalizer).
  const bool lhs_vector =
      OnlyBatchAndContracting(lhs, dn.lhs_batch_dimensions, dn.lhs_contracting_dimensions);
  const bool rhs_vector =
      OnlyBatchAndContracting(rhs, dn.rhs_batch_dimensions, dn.rhs_contracting_dimensions);
  if (HasDefaultAlgorithm(dot) &&
      ((lhs_vector && rhs_vector) ||
       (options_.enable_dot_strength_reduction && (lhs_vector || rhs_vector)))) {
    return RewriteBatchPlusContractingAsReduce(dot);
  }
  absl::StatusOr<bool> done = MoveContractingReorderToConstant(dot);
  if (!done.ok() || *done) return done.status();
  done = RemoveDegenerateDimensionFromDot(dot);
  if (!done.ok() || *done) return done.status();
  done = RemoveTransposesFromDotOperands(dot);
  if (!done.ok()) return done.status();
  return absl::OkStatus();
}

}  // namespace hlogym::algsimp
