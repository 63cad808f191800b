// algsimp driver, building helpers, and the elementwise/scalar rewrites. See
// algebraic_simplifier.h for the list of rewrites.
#include "passes/simplifiers/algebraic_simplifier.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <memory>
#include <numeric>
#include <optional>

#include "absl/algorithm/container.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "hlo/float_bits.h"
#include "hlo/query.h"
#include "hlo/status_macros.h"
#include "passes/builders.h"
#include "passes/change_tracking.h"
#include "passes/pass_utils.h"
#include "passes/simplifiers/algebraic_simplifier_internal.h"

namespace hlogym {
namespace algsimp {

// ============================ building helpers ==============================

bool Visitor::Rewritable(const Instruction* hlo) {
  return hlo->control_predecessors().empty() && hlo->control_successors().empty() &&
         !hlo->HasSideEffect();
}

Instruction* Visitor::Add(Opcode opcode, Shape shape, std::span<Instruction* const> operands) {
  auto instruction = std::make_unique<Instruction>(opcode, std::move(shape));
  for (Instruction* operand : operands) instruction->AppendOperand(operand);
  return computation_->AddInstruction(std::move(instruction));
}

Instruction* Visitor::AddBroadcast(Instruction* operand, Shape shape, std::vector<int64_t> dims) {
  shape.set_element_type(operand->shape().element_type());
  Instruction* ops[] = {operand};
  Instruction* b = Add(Opcode::kBroadcast, std::move(shape), ops);
  b->mutable_attrs().dimensions = std::move(dims);
  return b;
}

Instruction* Visitor::AddReshape(Instruction* operand, Shape shape) {
  shape.set_element_type(operand->shape().element_type());
  Instruction* ops[] = {operand};
  return Add(Opcode::kReshape, std::move(shape), ops);
}

Instruction* Visitor::AddTranspose(Instruction* operand, std::vector<int64_t> perm) {
  std::vector<int64_t> dims;
  for (int64_t p : perm) dims.push_back(operand->shape().dimensions(p));
  Instruction* ops[] = {operand};
  Instruction* t = Add(Opcode::kTranspose,
                       MakeShapeLike(operand->shape().element_type(), dims, operand->shape()), ops);
  t->mutable_attrs().dimensions = std::move(perm);
  return t;
}

Instruction* Visitor::AddSlice(Instruction* operand, std::vector<SliceDimension> slice) {
  std::vector<int64_t> dims;
  for (const SliceDimension& s : slice) {
    dims.push_back(std::max<int64_t>(0, (s.limit - s.start + s.stride - 1) / s.stride));
  }
  Instruction* ops[] = {operand};
  Instruction* result = Add(
      Opcode::kSlice, MakeShapeLike(operand->shape().element_type(), dims, operand->shape()), ops);
  result->mutable_attrs().slice = std::move(slice);
  return result;
}

Instruction* Visitor::AddDynamicSlice(Instruction* operand, std::span<Instruction* const> starts,
                                      std::vector<int64_t> sizes) {
  std::vector<Instruction*> ops = {operand};
  ops.insert(ops.end(), starts.begin(), starts.end());
  Instruction* result =
      Add(Opcode::kDynamicSlice,
          MakeShapeLike(operand->shape().element_type(), sizes, operand->shape()), ops);
  result->mutable_attrs().dynamic_slice_sizes = std::move(sizes);
  return result;
}

Instruction* Visitor::AddReduce(Instruction* operand, Instruction* init, Shape shape,
                                std::vector<int64_t> dims, Computation* function) {
  Instruction* ops[] = {operand, init};
  Instruction* reduce = Add(Opcode::kReduce, std::move(shape), ops);
  reduce->mutable_attrs().dimensions = std::move(dims);
  reduce->mutable_called_computations() = {function};
  return reduce;
}

Computation* Visitor::ScalarAddComputation(PrimitiveType type) {
  Computation*& add = scalar_add_computations_[type];
  if (add == nullptr) {
    add = AddScalarBinaryComputation(*computation_->parent(), "scalar_add_computation",
                                     Opcode::kAdd, type, /*with_layout=*/true);
  }
  return add;
}

Instruction* Visitor::AddConvert(Instruction* operand, PrimitiveType type) {
  Instruction* ops[] = {operand};
  return Add(Opcode::kConvert, ChangeElementType(operand->shape(), type), ops);
}

Instruction* Visitor::AddCompare(Instruction* lhs, Instruction* rhs,
                                 ComparisonDirection direction) {
  Instruction* c =
      AddBinary(Opcode::kCompare, ChangeElementType(lhs->shape(), PrimitiveType::kPred), lhs, rhs);
  c->mutable_attrs().comparison_direction = direction;
  return c;
}

Instruction* Visitor::AddScalarConstant(PrimitiveType type, double value, const Shape& like) {
  Literal literal(Shape::Scalar(type));
  literal.SetFromDouble(0, value);
  Shape shape = Shape::Scalar(type);
  if (like.has_layout()) shape.SetDefaultLayout();
  auto constant = std::make_unique<Instruction>(Opcode::kConstant, std::move(shape));
  constant->mutable_attrs().literal = std::make_shared<const Literal>(std::move(literal));
  return computation_->AddInstruction(std::move(constant));
}

Instruction* Visitor::ScalarLike(const Shape& shape, double value) {
  Instruction* scalar = AddScalarConstant(shape.element_type(), value, shape);
  if (shape.rank() == 0) return scalar;
  return AddBroadcast(scalar, shape, {});
}

// ============================ replacing helpers =============================

void Visitor::RemoveDeadTree(Instruction* root) {
  // Deduplicates the worklist within this call only: removed_ may hold the
  // addresses of instructions deleted earlier in the sweep, which new
  // instructions can reuse, so it must not decide what is dead here.
  absl::flat_hash_set<const Instruction*> removed_here;
  std::vector<Instruction*> worklist = {root};
  while (!worklist.empty()) {
    Instruction* current = worklist.back();
    worklist.pop_back();
    if (removed_here.contains(current) || current->user_count() != 0 ||
        current == computation_->root_instruction()) {
      continue;
    }
    if (current != root &&
        (current->opcode() == Opcode::kParameter || current->HasSideEffect() ||
         !current->control_successors().empty() || !current->control_predecessors().empty())) {
      continue;
    }
    std::vector<Instruction*> operands = current->operands();
    if (!computation_->RemoveInstruction(current).ok()) continue;
    removed_here.insert(current);
    removed_.insert(current);
    for (Instruction* operand : operands) worklist.push_back(operand);
  }
}

bool Visitor::ReplaceIfCompatible(Instruction* old, Instruction* replacement) {
  if (old == replacement || !Rewritable(old)) return false;
  if (!old->shape().Compatible(replacement->shape())) return false;
  // Layout-insensitive, as XLA's before layout assignment; but a bitcast
  // reads its operand's physical layout (XLA's optimized modules have them),
  // so a value a bitcast reads keeps its layout: XLA would fold the copy in
  // bitcast(copy(x)) with another layout and change what the bitcast reads.
  if (!old->shape().Equal(replacement->shape(),
                          {.layouts = Shape::Layouts::kCompareMissingAsDefault}) &&
      absl::c_any_of(old->users(),
                     [](const Instruction* user) { return user->opcode() == Opcode::kBitcast; })) {
    return false;
  }
  if (!old->ReplaceAllUsesWith(replacement).ok()) return false;
  changed_ = true;
  RemoveDeadTree(old);
  return true;
}

absl::Status Visitor::ReplaceWithNew(Instruction* old, Instruction* made) {
  if (!old->shape().Compatible(made->shape())) {
    return absl::InternalError("algsimp: replacement of " + old->name() + " has shape " +
                               made->shape().ToString() + ", expected " + old->shape().ToString());
  }
  made->set_shape(old->shape());
  HLOGYM_RETURN_IF_ERROR(old->ReplaceAllUsesWith(made));
  changed_ = true;
  RemoveDeadTree(old);
  return absl::OkStatus();
}

absl::Status Visitor::ReplaceUsesKeepingOld(Instruction* old, Instruction* replacement) {
  HLOGYM_RETURN_IF_ERROR(old->ReplaceAllUsesWith(replacement));
  changed_ = true;
  return absl::OkStatus();
}

// ================================== driver ==================================

absl::StatusOr<bool> Visitor::Run(Computation* computation, std::optional<uint64_t> since,
                                  bool track_sweeps) {
  computation_ = computation;
  bool any_change = false;
  for (int sweep = 0; sweep < options_.max_sweeps; ++sweep) {
    uint64_t sweep_start = computation->parent()->change_clock();
    changed_ = false;
    removed_.clear();
    std::vector<Instruction*> order = computation->MakeInstructionPostOrder();
    for (Instruction* hlo : order) {
      if (removed_.contains(hlo)) continue;
      if (!Rewritable(hlo)) continue;
      // Every rule reads at most the instruction, its operands and theirs, its users and its
      // called computations: unchanged, they were seen and left alone before.
      if (since && !NeighborhoodChangedSince(*hlo, *since)) continue;
      HLOGYM_RETURN_IF_ERROR(Visit(hlo));
    }
    removed_.clear();
    if (!changed_) break;
    any_change = true;
    if (track_sweeps) since = sweep_start;
  }
  return any_change;
}

absl::Status Visitor::Visit(Instruction* hlo) {
  switch (hlo->opcode()) {
    case Opcode::kAbs:
      return HandleAbs(hlo);
    case Opcode::kAdd:
      return HandleAdd(hlo);
    case Opcode::kSubtract:
      return HandleSubtract(hlo);
    case Opcode::kMultiply:
      return HandleMultiply(hlo);
    case Opcode::kDivide:
      return HandleDivide(hlo);
    case Opcode::kRemainder:
      return HandleRemainder(hlo);
    case Opcode::kNegate:
      return HandleNegate(hlo);
    case Opcode::kNot:
      return HandleNot(hlo);
    case Opcode::kAnd:
      return HandleAnd(hlo);
    case Opcode::kOr:
      return HandleOr(hlo);
    // No xor rewrites: the pinned XLA's simplifier leaves xor(x, 0) and the
    // xor of two identical instructions alone (the rbg PRNG's Philox keys
    // keep such xors in XLA's modules until later passes).
    case Opcode::kMaximum:
      return HandleMaximum(hlo);
    case Opcode::kMinimum:
      return HandleMinimum(hlo);
    case Opcode::kClamp:
      return HandleClamp(hlo);
    case Opcode::kCompare:
      return HandleCompare(hlo);
    case Opcode::kSelect:
      return HandleSelect(hlo);
    case Opcode::kExp:
      return HandleExp(hlo);
    case Opcode::kLog:
      return HandleLog(hlo);
    case Opcode::kPower:
      return HandlePower(hlo);
    case Opcode::kRsqrt:
      return HandleRsqrt(hlo);
    case Opcode::kReal:
      return HandleReal(hlo);
    case Opcode::kImag:
      return HandleImag(hlo);
    case Opcode::kComplex:
      return HandleComplex(hlo);
    case Opcode::kConvert:
      return HandleConvert(hlo);
    case Opcode::kBitcastConvert:
      return HandleBitcastConvert(hlo);
    case Opcode::kConstant:
      return HandleConstant(hlo);
    case Opcode::kIota:
      return HandleIota(hlo);
    case Opcode::kCopy:
      return HandleCopy(hlo);
    case Opcode::kGetTupleElement:
      return HandleGetTupleElement(hlo);
    case Opcode::kSort:
      return HandleSort(hlo);
    case Opcode::kMap:
      return HandleMap(hlo);
    case Opcode::kBroadcast:
      return HandleBroadcast(hlo);
    case Opcode::kReshape:
      return HandleReshape(hlo);
    case Opcode::kTranspose:
      return HandleTranspose(hlo);
    case Opcode::kSlice:
      return HandleSlice(hlo);
    case Opcode::kConcatenate:
      return HandleConcatenate(hlo);
    case Opcode::kPad:
      return HandlePad(hlo);
    case Opcode::kReverse:
      return HandleReverse(hlo);
    case Opcode::kDynamicSlice:
      return HandleDynamicSlice(hlo);
    case Opcode::kDynamicUpdateSlice:
      return HandleDynamicUpdateSlice(hlo);
    case Opcode::kGather:
      return HandleGather(hlo);
    case Opcode::kScatter:
      return HandleScatter(hlo);
    case Opcode::kReduce:
      return HandleReduce(hlo);
    case Opcode::kReduceWindow:
      return HandleReduceWindow(hlo);
    case Opcode::kDot:
      return HandleDot(hlo);
    case Opcode::kConvolution:
      return HandleConvolution(hlo);
    default:
      return absl::OkStatus();
  }
}

// ============================ elementwise rules =============================

namespace {

bool IsConstant(const Instruction* hlo) { return hlo->opcode() == Opcode::kConstant; }
bool IsIntegral(const Instruction* hlo) { return IsIntegralType(hlo->shape().element_type()); }
bool IsFloat(const Instruction* hlo) { return IsFloatingPointType(hlo->shape().element_type()); }
bool IsPred(const Instruction* hlo) { return hlo->shape().element_type() == PrimitiveType::kPred; }

// broadcast(scalar constant) with any broadcast dims (m::Broadcast(m::ConstantScalar)).
bool IsBroadcastOfScalarConstant(const Instruction* hlo) {
  return hlo->opcode() == Opcode::kBroadcast && IsConstant(hlo->operand(0)) &&
         hlo->operand(0)->shape().rank() == 0 && IsReadableArrayConstant(hlo->operand(0));
}

// +-2^k (looking through one broadcast of an effective scalar constant).
bool IsAllFpConstantPowerOf2(const Instruction* hlo) {
  const Instruction* c = UnwrapBroadcastOfConstant(hlo);
  if (c == nullptr || !IsFloat(c)) return false;
  std::optional<double> value = ScalarConstantValue(c);
  if (!value) return false;
  int exponent;
  double mantissa = std::frexp(*value, &exponent);
  return mantissa == 0.5 || mantissa == -0.5;
}

}  // namespace

absl::Status Visitor::HandleAbs(Instruction* abs) {
  if (IsNonNegative(abs->operand(0))) ReplaceIfCompatible(abs, abs->operand(0));
  return absl::OkStatus();
}

absl::Status Visitor::HandleAdd(Instruction* add) {
  Instruction* lhs = add->operand(0);
  Instruction* rhs = add->operand(1);
  if (IsAll(rhs, 0) && ReplaceIfCompatible(add, lhs)) return absl::OkStatus();
  if (IsAll(lhs, 0) && ReplaceIfCompatible(add, rhs)) return absl::OkStatus();
  // Constants to the right.
  if (IsConstant(lhs) && !IsConstant(rhs)) {
    return ReplaceWithNew(add, AddBinary(Opcode::kAdd, add->shape(), rhs, lhs));
  }
  // (A + C1) + C2 => A + (C1 + C2), and (C1 - A) + C2 => (C1 + C2) - A.
  auto fold_constants = [&](Instruction* c1, Instruction* c2) -> Instruction* {
    Instruction* sum = AddBinary(Opcode::kAdd, c1->shape(), c1, c2);
    if (sum->shape().rank() == 0 && add->shape().rank() != 0) {
      sum = AddBroadcast(sum, add->shape(), {});
    }
    return sum;
  };
  if (lhs->opcode() == Opcode::kAdd) {
    Instruction* a = lhs->operand(0);
    Instruction* c1 = lhs->operand(1);
    if (!IsConstant(a) && IsConstant(c1) && IsConstant(rhs) &&
        c1->shape().Compatible(rhs->shape())) {
      Instruction* sum = fold_constants(c1, rhs);
      return ReplaceWithNew(add, AddBinary(Opcode::kAdd, add->shape(), a, sum));
    }
    if (!IsConstant(a) && IsBroadcastOfScalarConstant(c1) && IsBroadcastOfScalarConstant(rhs)) {
      Instruction* sum = fold_constants(c1->operand(0), rhs->operand(0));
      return ReplaceWithNew(add, AddBinary(Opcode::kAdd, add->shape(), a, sum));
    }
  }
  if (lhs->opcode() == Opcode::kSubtract) {
    Instruction* c1 = lhs->operand(0);
    Instruction* a = lhs->operand(1);
    if (!IsConstant(a) && IsConstant(c1) && IsConstant(rhs) &&
        c1->shape().Compatible(rhs->shape())) {
      Instruction* sum = fold_constants(c1, rhs);
      return ReplaceWithNew(add, AddBinary(Opcode::kSubtract, add->shape(), sum, a));
    }
    if (!IsConstant(a) && IsBroadcastOfScalarConstant(c1) && IsBroadcastOfScalarConstant(rhs)) {
      Instruction* sum = fold_constants(c1->operand(0), rhs->operand(0));
      return ReplaceWithNew(add, AddBinary(Opcode::kSubtract, add->shape(), sum, a));
    }
  }
  // A + dynamic-update-slice(broadcast(0), U, i...) (either order) =>
  // dynamic-update-slice(A, dynamic-slice(A, i...) + U, i...): only the
  // updated part is added (TensorFlow's while-loop gradients accumulate so).
  auto is_update_of_zeros = [](const Instruction* hlo) {
    return hlo->opcode() == Opcode::kDynamicUpdateSlice &&
           hlo->operand(0)->opcode() == Opcode::kBroadcast &&
           IsConstant(hlo->operand(0)->operand(0)) &&
           hlo->operand(0)->operand(0)->shape().ElementCount() == 1 &&
           IsAll(hlo->operand(0)->operand(0), 0);
  };
  if (is_update_of_zeros(rhs) || is_update_of_zeros(lhs)) {
    Instruction* update = is_update_of_zeros(rhs) ? rhs : lhs;
    Instruction* other = update == rhs ? lhs : rhs;
    const Shape& partial = update->operand(1)->shape();
    std::vector<Instruction*> slice_ops = {other};
    for (int64_t i = 2; i < update->operand_count(); ++i) slice_ops.push_back(update->operand(i));
    Instruction* sliced = Add(Opcode::kDynamicSlice, partial, slice_ops);
    sliced->mutable_attrs().dynamic_slice_sizes = partial.dimensions();
    Instruction* sum = AddBinary(Opcode::kAdd, partial, sliced, update->operand(1));
    std::vector<Instruction*> update_ops = {other, sum};
    for (int64_t i = 2; i < update->operand_count(); ++i) update_ops.push_back(update->operand(i));
    return ReplaceWithNew(add, Add(Opcode::kDynamicUpdateSlice, other->shape(), update_ops));
  }
  // A*C + B*C => (A+B)*C for integers or when C is +-2^k.
  if (lhs->opcode() == Opcode::kMultiply && rhs->opcode() == Opcode::kMultiply &&
      lhs->user_count() == 1 && rhs->user_count() == 1) {
    for (int c_index = 0; c_index < 2; ++c_index) {
      Instruction* c = lhs->operand(1 - c_index);
      Instruction* a = lhs->operand(c_index);
      Instruction* b = nullptr;
      if (rhs->operand(0) == c) {
        b = rhs->operand(1);
      } else if (rhs->operand(1) == c) {
        b = rhs->operand(0);
      }
      if (b == nullptr) continue;
      if (!IsIntegral(add) && !IsAllFpConstantPowerOf2(c)) continue;
      Instruction* sum = AddBinary(Opcode::kAdd, add->shape(), a, b);
      return ReplaceWithNew(add, AddBinary(Opcode::kMultiply, add->shape(), sum, c));
    }
  }
  // scatter(A, i, u) + B => scatter(A + B, i, u) (either order) for a
  // single-operand scatter-add with no other use; two of them merge
  // (MergeScatterAdds).
  auto is_scatter_add = [&](const Instruction* hlo) {
    if (hlo->opcode() != Opcode::kScatter || hlo->operand_count() != 3 || hlo->user_count() != 1 ||
        lhs == rhs || hlo->called_computations().size() != 1) {
      return false;
    }
    const Instruction* root = hlo->called_computations()[0]->root_instruction();
    return root->opcode() == Opcode::kAdd && root->operand(0)->opcode() == Opcode::kParameter &&
           root->operand(1)->opcode() == Opcode::kParameter;
  };
  const bool lhs_scatter = is_scatter_add(lhs);
  const bool rhs_scatter = is_scatter_add(rhs);
  if (!Rewritable(add) || !(lhs_scatter || rhs_scatter) ||
      !add->shape().Compatible((lhs_scatter ? lhs : rhs)->shape())) {
    return absl::OkStatus();
  }
  if (lhs_scatter && rhs_scatter) return MergeScatterAdds(add);
  Instruction* scatter = lhs_scatter ? lhs : rhs;
  Instruction* other = lhs_scatter ? rhs : lhs;
  Instruction* operand = scatter->operand(0);
  Instruction* sum = lhs_scatter ? AddBinary(Opcode::kAdd, add->shape(), operand, other)
                                 : AddBinary(Opcode::kAdd, add->shape(), other, operand);
  sum->set_shape(operand->shape());
  scatter->ReplaceOperandWith(0, sum);
  if (!ReplaceIfCompatible(add, scatter)) {
    return absl::InternalError("algsimp: could not merge " + add->name() + " into " +
                               scatter->name());
  }
  return absl::OkStatus();
}

// scatter(A, i, u) + scatter(B, j, v), both scatter-adds used only here, as
// XLA merges them: one scatter of A + B with the indices and the updates
// concatenated, along the one dimension where the index arrays differ (or the
// lowest, where none does), when the dimension numbers and index types agree,
// neither promises sorted or unique indices and the updates are fewer
// elements than the result; where only the concatenation is ruled out, the
// two scatters are chained instead.
absl::Status Visitor::MergeScatterAdds(Instruction* add) {
  Instruction* lhs = add->operand(0);
  Instruction* rhs = add->operand(1);
  Instruction* lhs_indices = lhs->operand(1);
  Instruction* rhs_indices = rhs->operand(1);
  Instruction* lhs_updates = lhs->operand(2);
  Instruction* rhs_updates = rhs->operand(2);
  const int64_t rank = lhs_indices->shape().rank();
  if (rank != rhs_indices->shape().rank()) return absl::OkStatus();
  const ScatterDimensionNumbers& dn = *lhs->attrs().scatter_dimension_numbers;
  const ScatterDimensionNumbers& rhs_dn = *rhs->attrs().scatter_dimension_numbers;
  int64_t lowest_equal = rank;
  int64_t lowest_equal_update = lhs_updates->shape().rank();
  std::optional<int64_t> index_concat, update_concat;
  for (int64_t d = rank - 1, update_dim = lhs_updates->shape().rank() - 1; d >= 0; --d) {
    if (d == dn.index_vector_dim) continue;
    while (absl::c_linear_search(dn.update_window_dims, update_dim)) --update_dim;
    const bool equal = lhs_indices->shape().dimensions(d) == rhs_indices->shape().dimensions(d);
    if (absl::c_linear_search(dn.scatter_indices_batching_dims, d)) {
      if (!equal) return absl::OkStatus();
      --update_dim;
      continue;
    }
    if (equal) {
      lowest_equal = d;
      lowest_equal_update = update_dim--;
      continue;
    }
    if (index_concat) return absl::OkStatus();  // two dimensions differ
    index_concat = d;
    update_concat = update_dim--;
  }
  if (!index_concat) {
    index_concat = lowest_equal;
    update_concat = lowest_equal_update;
  }
  if (*index_concat == rank) return absl::OkStatus();
  if (lhs_updates->shape().ElementCount() + rhs_updates->shape().ElementCount() >=
      lhs->shape().ElementCount()) {
    return absl::OkStatus();
  }
  auto window_of = [](const Instruction* scatter) {
    const ScatterDimensionNumbers& numbers = *scatter->attrs().scatter_dimension_numbers;
    std::vector<int64_t> window;
    for (int64_t d : numbers.update_window_dims) {
      window.push_back(scatter->operand(2)->shape().dimensions(d));
    }
    return window;
  };
  const bool same_numbers =
      dn.index_vector_dim == rhs_dn.index_vector_dim &&
      dn.scatter_dims_to_operand_dims == rhs_dn.scatter_dims_to_operand_dims &&
      dn.inserted_window_dims == rhs_dn.inserted_window_dims &&
      dn.update_window_dims == rhs_dn.update_window_dims &&
      dn.scatter_indices_batching_dims == rhs_dn.scatter_indices_batching_dims &&
      dn.input_batching_dims == rhs_dn.input_batching_dims;
  const bool may_concatenate = !lhs->attrs().unique_indices && !rhs->attrs().unique_indices &&
                               !lhs->attrs().indices_are_sorted && !rhs->attrs().indices_are_sorted;
  Instruction* sum = AddBinary(Opcode::kAdd, add->shape(), lhs->operand(0), rhs->operand(0));
  sum->set_shape(lhs->operand(0)->shape());
  if (same_numbers && may_concatenate &&
      lhs_indices->shape().element_type() == rhs_indices->shape().element_type() &&
      window_of(lhs) == window_of(rhs)) {
    auto concatenate = [&](Instruction* a, Instruction* b, int64_t dim) {
      std::vector<int64_t> dims = a->shape().dimensions();
      dims[dim] += b->shape().dimensions(dim);
      Instruction* ops[] = {a, b};
      Instruction* made = Add(Opcode::kConcatenate,
                              MakeShapeLike(a->shape().element_type(), dims, a->shape()), ops);
      made->mutable_attrs().dimensions = {dim};
      return made;
    };
    Instruction* indices = concatenate(lhs_indices, rhs_indices, *index_concat);
    Instruction* updates = concatenate(lhs_updates, rhs_updates, *update_concat);
    auto merged = lhs->CloneWithNewOperands({sum, indices, updates}, "");
    merged->set_name("");
    merged->mutable_attrs().indices_are_sorted = false;
    merged->mutable_attrs().unique_indices = false;
    return ReplaceWithNew(add, computation_->AddInstruction(std::move(merged)));
  }
  rhs->ReplaceOperandWith(0, sum);
  lhs->ReplaceOperandWith(0, rhs);
  if (!ReplaceIfCompatible(add, lhs)) {
    return absl::InternalError("algsimp: could not chain the scatters into " + add->name());
  }
  return absl::OkStatus();
}

absl::Status Visitor::HandleSubtract(Instruction* sub) {
  Instruction* lhs = sub->operand(0);
  Instruction* rhs = sub->operand(1);
  if (IsIntegral(sub) && lhs == rhs) {
    return ReplaceWithNew(sub, ScalarLike(sub->shape(), 0));
  }
  if (IsAll(rhs, 0) && ReplaceIfCompatible(sub, lhs)) return absl::OkStatus();
  // A - C => A + (-C).
  if (!IsConstant(lhs) && !IsComplexType(sub->shape().element_type()) &&
      (IsConstant(rhs) || (rhs->opcode() == Opcode::kBroadcast && IsConstant(rhs->operand(0))))) {
    Instruction* c = IsConstant(rhs) ? rhs : rhs->operand(0);
    Instruction* negated = AddUnary(Opcode::kNegate, c);
    if (rhs->opcode() == Opcode::kBroadcast) {
      negated = AddBroadcast(negated, rhs->shape(), rhs->attrs().dimensions);
    }
    return ReplaceWithNew(sub, AddBinary(Opcode::kAdd, sub->shape(), lhs, negated));
  }
  if (IsIntegral(sub)) {
    // A - (A - B) => B
    if (rhs->opcode() == Opcode::kSubtract && rhs->operand(0) == lhs &&
        ReplaceIfCompatible(sub, rhs->operand(1))) {
      return absl::OkStatus();
    }
    // A - (A + B) => -B, A - (B + A) => -B
    if (rhs->opcode() == Opcode::kAdd && (rhs->operand(0) == lhs || rhs->operand(1) == lhs)) {
      Instruction* b = rhs->operand(0) == lhs ? rhs->operand(1) : rhs->operand(0);
      return ReplaceWithNew(sub, AddUnary(Opcode::kNegate, b));
    }
    // (A + B) - A => B
    if (lhs->opcode() == Opcode::kAdd && (lhs->operand(0) == rhs || lhs->operand(1) == rhs)) {
      Instruction* b = lhs->operand(1) == rhs ? lhs->operand(0) : lhs->operand(1);
      if (ReplaceIfCompatible(sub, b)) return absl::OkStatus();
    }
  }
  return absl::OkStatus();
}

absl::Status Visitor::HandleMultiply(Instruction* mul) {
  Instruction* lhs = mul->operand(0);
  Instruction* rhs = mul->operand(1);
  const Shape& shape = mul->shape();
  if (IsAll(rhs, 1) && ReplaceIfCompatible(mul, lhs)) return absl::OkStatus();
  if (IsAll(lhs, 1) && ReplaceIfCompatible(mul, rhs)) return absl::OkStatus();
  if (IsIntegral(mul)) {
    if (IsAll(lhs, 0) && ReplaceIfCompatible(mul, lhs)) return absl::OkStatus();
    if (IsAll(rhs, 0) && ReplaceIfCompatible(mul, rhs)) return absl::OkStatus();
  }
  // (-A) * (-B) => A * B
  if (lhs->opcode() == Opcode::kNegate && rhs->opcode() == Opcode::kNegate) {
    mul->ReplaceOperandWith(0, lhs->operand(0));
    mul->ReplaceOperandWith(1, rhs->operand(0));
    MarkChanged();
    RemoveDeadTree(lhs);
    if (rhs != lhs) RemoveDeadTree(rhs);
    return absl::OkStatus();
  }
  // |A| * |A| => A * A for real A.
  if (lhs == rhs && lhs->opcode() == Opcode::kAbs &&
      !IsComplexType(lhs->operand(0)->shape().element_type())) {
    Instruction* a = lhs->operand(0);
    mul->ReplaceOperandWith(0, a);
    mul->ReplaceOperandWith(1, a);
    MarkChanged();
    RemoveDeadTree(lhs);
    return absl::OkStatus();
  }
  // A * convert(pred) => select(pred, A, 0)
  for (int i = 0; i < 2; ++i) {
    Instruction* convert = mul->operand(i);
    if (convert->opcode() == Opcode::kConvert && IsPred(convert->operand(0))) {
      Instruction* operand = mul->operand(1 - i);
      Instruction* zeros = ScalarLike(shape, 0);
      Instruction* ops[] = {convert->operand(0), operand, zeros};
      return ReplaceWithNew(mul, Add(Opcode::kSelect, shape, ops));
    }
  }
  // Matches mul(A, C) in either order with A non-constant and C a constant
  // (or, when `allow_broadcast`, a broadcast of a constant).
  auto match_mul_const = [](Instruction* hlo, bool allow_broadcast, Instruction** a,
                            Instruction** c) {
    if (hlo->opcode() != Opcode::kMultiply) return false;
    for (int i = 0; i < 2; ++i) {
      Instruction* x = hlo->operand(i);
      Instruction* y = hlo->operand(1 - i);
      if (IsConstant(x)) continue;
      if (IsConstant(y)) {
        *a = x;
        *c = y;
        return true;
      }
      if (allow_broadcast && y->opcode() == Opcode::kBroadcast && IsConstant(y->operand(0))) {
        *a = x;
        *c = y->operand(0);
        return true;
      }
    }
    return false;
  };
  auto product_of = [&](Instruction* c1, Instruction* c2) -> Instruction* {
    Instruction* product = AddBinary(Opcode::kMultiply, c1->shape(), c1, c2);
    if (product->shape().rank() == 0 && shape.rank() != 0) {
      product = AddBroadcast(product, shape, {});
    }
    return product;
  };
  {
    // mul(mul(A, C1), mul(B, C2)) => mul(mul(A, B), C1*C2)
    Instruction *a, *b, *c1, *c2;
    for (int i = 0; i < 2; ++i) {
      if (match_mul_const(mul->operand(i), false, &a, &c1) &&
          match_mul_const(mul->operand(1 - i), false, &b, &c2) &&
          c1->shape().Compatible(c2->shape())) {
        Instruction* ab = AddBinary(Opcode::kMultiply, shape, a, b);
        return ReplaceWithNew(mul, AddBinary(Opcode::kMultiply, shape, ab, product_of(c1, c2)));
      }
    }
    // mul(mul(A, C1), C2) => mul(A, C1*C2)
    for (int i = 0; i < 2; ++i) {
      Instruction* other = mul->operand(1 - i);
      if (match_mul_const(mul->operand(i), false, &a, &c1) && IsConstant(other) &&
          c1->shape().Compatible(other->shape())) {
        return ReplaceWithNew(mul, AddBinary(Opcode::kMultiply, shape, a, product_of(c1, other)));
      }
    }
    // mul(mul(A, C), broadcast(B)) => mul(A, broadcast(mul(B, C))), C scalar.
    for (int i = 0; i < 2; ++i) {
      Instruction* op = mul->operand(1 - i);
      Instruction* constant;
      if (match_mul_const(mul->operand(i), true, &a, &constant) && constant->shape().rank() == 0 &&
          op->opcode() == Opcode::kBroadcast && !IsConstant(op->operand(0))) {
        Instruction* bb = op->operand(0);
        Instruction* scaled_c = constant;
        if (bb->shape().rank() != 0) scaled_c = AddBroadcast(constant, bb->shape(), {});
        Instruction* new_mul = AddBinary(Opcode::kMultiply, bb->shape(), bb, scaled_c);
        Instruction* bcast = AddBroadcast(new_mul, shape, op->attrs().dimensions);
        return ReplaceWithNew(mul, AddBinary(Opcode::kMultiply, shape, a, bcast));
      }
    }
  }
  // (A * C1) * C2 with C1, C2 broadcast scalar constants (operand order fixed).
  if (lhs->opcode() == Opcode::kMultiply && IsBroadcastOfScalarConstant(lhs->operand(1)) &&
      IsBroadcastOfScalarConstant(rhs)) {
    Instruction* product = product_of(lhs->operand(1)->operand(0), rhs->operand(0));
    return ReplaceWithNew(mul, AddBinary(Opcode::kMultiply, shape, lhs->operand(0), product));
  }
  // sqrt(x) * sqrt(x) => x, rsqrt(x) * rsqrt(x) => 1/x for x >= 0.
  if (lhs->opcode() == rhs->opcode() &&
      (lhs->opcode() == Opcode::kSqrt || lhs->opcode() == Opcode::kRsqrt) &&
      lhs->operand(0) == rhs->operand(0) && IsNonNegative(lhs->operand(0))) {
    Instruction* x = lhs->operand(0);
    if (lhs->opcode() == Opcode::kSqrt) {
      ReplaceIfCompatible(mul, x);
      return absl::OkStatus();
    }
    return ReplaceWithNew(mul, AddBinary(Opcode::kDivide, shape, ScalarLike(x->shape(), 1), x));
  }
  // exp(A) * exp(B) => exp(A + B): one transcendental fewer, whoever else
  // uses the two exponentials.
  if (lhs->opcode() == Opcode::kExp && rhs->opcode() == Opcode::kExp) {
    Instruction* sum = AddBinary(Opcode::kAdd, shape, lhs->operand(0), rhs->operand(0));
    return ReplaceWithNew(mul, AddUnary(Opcode::kExp, sum));
  }
  return absl::OkStatus();
}

namespace {

// 1/c for one element, computed in the element type as XLA's InvertConstant
// does (f16/bf16 and narrow types through f32).
void InvertInto(const Literal& in, Literal& out) {
  const PrimitiveType type = in.shape().element_type();
  for (int64_t i = 0; i < in.element_count(); ++i) {
    if (IsComplexType(type)) {
      out.SetFromComplex(i, std::complex<double>(1.0) / in.GetAsComplex(i));
    } else if (type == PrimitiveType::kF64) {
      out.SetFromDouble(i, 1.0 / in.GetAsDouble(i));
    } else {
      float v = static_cast<float>(in.GetAsDouble(i));
      out.SetFromDouble(i, static_cast<double>(1.0f / v));
    }
  }
}

}  // namespace

absl::Status Visitor::HandleDivide(Instruction* divide) {
  Instruction* a = divide->operand(0);
  Instruction* b = divide->operand(1);
  const Shape& shape = divide->shape();
  const PrimitiveType type = shape.element_type();
  if (IsAll(b, 1) && ReplaceIfCompatible(divide, a)) return absl::OkStatus();

  // Integer division by a power of two => shifts.
  if (IsIntegralType(type)) {
    const Instruction* c = UnwrapBroadcastOfConstant(b);
    if (c != nullptr) {
      if (IsSignedIntegralType(type)) {
        const int64_t value = c->literal().GetAsInt64(0);
        if (value > 0 && std::has_single_bit(static_cast<uint64_t>(value))) {
          const int shift = std::countr_zero(static_cast<uint64_t>(value));
          Instruction* zero = ScalarLike(a->shape(), 0);
          Instruction* negative = AddCompare(a, zero, ComparisonDirection::kLt);
          Instruction* negated = AddUnary(Opcode::kNegate, a);
          Instruction* abs_ops[] = {negative, negated, a};
          Instruction* abs_value = Add(Opcode::kSelect, a->shape(), abs_ops);
          Instruction* quotient = AddBinary(Opcode::kShiftRightLogical, shape, abs_value,
                                            ScalarLike(abs_value->shape(), shift));
          Instruction* negated_quotient = AddUnary(Opcode::kNegate, quotient);
          Instruction* ops[] = {negative, negated_quotient, quotient};
          return ReplaceWithNew(divide, Add(Opcode::kSelect, shape, ops));
        }
      } else {
        const uint64_t value = c->literal().GetAsUint64(0);
        if (std::has_single_bit(value)) {
          const int shift = std::countr_zero(value);
          return ReplaceWithNew(divide, AddBinary(Opcode::kShiftRightLogical, shape, a,
                                                  ScalarLike(a->shape(), shift)));
        }
      }
    }
  }
  // exp(A) / exp(B) => exp(A - B); A / exp(B) => A * exp(-B). The pinned XLA
  // does both without asking for fast math (NumPyro's densities divide by
  // exponentials).
  if (b->opcode() == Opcode::kExp) {
    if (a->opcode() == Opcode::kExp) {
      Instruction* difference = AddBinary(Opcode::kSubtract, shape, a->operand(0), b->operand(0));
      return ReplaceWithNew(divide, AddUnary(Opcode::kExp, difference));
    }
    Instruction* negated = AddUnary(Opcode::kNegate, b->operand(0));
    return ReplaceWithNew(divide,
                          AddBinary(Opcode::kMultiply, shape, a, AddUnary(Opcode::kExp, negated)));
  }
  // A / pow(B, C) => A * pow(B, -C)
  if (b->opcode() == Opcode::kPower) {
    Instruction* negated = AddUnary(Opcode::kNegate, b->operand(1));
    Instruction* power = AddBinary(Opcode::kPower, b->operand(0)->shape(), b->operand(0), negated);
    return ReplaceWithNew(divide, AddBinary(Opcode::kMultiply, shape, a, power));
  }
  // A / sqrt(B) => A * rsqrt(B); A / rsqrt(B) => A * sqrt(B).
  if ((b->opcode() == Opcode::kSqrt || b->opcode() == Opcode::kRsqrt) && b->user_count() == 1) {
    Instruction* ops[] = {b->operand(0)};
    Instruction* inverse =
        Add(b->opcode() == Opcode::kSqrt ? Opcode::kRsqrt : Opcode::kSqrt, shape, ops);
    return ReplaceWithNew(divide, AddBinary(Opcode::kMultiply, shape, a, inverse));
  }
  if (IsIntegralType(type)) return absl::OkStatus();

  // A / C => A * (1 / C) for float and complex constants.
  if (!IsConstant(a) && (IsFloatingPointType(type) || IsComplexType(type))) {
    Instruction* c = nullptr;
    if (IsConstant(b)) {
      c = b;
    } else if (b->opcode() == Opcode::kBroadcast && IsConstant(b->operand(0))) {
      c = b->operand(0);
    }
    if (c != nullptr && IsReadableArrayConstant(c) && c->shape().element_type() == type) {
      Literal inverse(c->literal().shape());
      InvertInto(c->literal(), inverse);
      Shape cshape = c->shape();
      auto constant = std::make_unique<Instruction>(Opcode::kConstant, cshape);
      constant->mutable_attrs().literal = std::make_shared<const Literal>(std::move(inverse));
      Instruction* inv = computation_->AddInstruction(std::move(constant));
      if (b != c) inv = AddBroadcast(inv, b->shape(), b->attrs().dimensions);
      return ReplaceWithNew(divide, AddBinary(Opcode::kMultiply, shape, a, inv));
    }
  }
  // A / broadcast(B) => A * broadcast(1 / B): the reciprocal is taken on the
  // smaller operand (softmax's exp / broadcast(sum)). The pinned XLA does this
  // where B has no user but the broadcast (its dumps: of two divides by one
  // broadcast the first visited is rewritten, after which B has two users and
  // the second is not), before the reassociations below ((A / B) / broadcast(C)
  // takes this one), and not on complex types, where 1 / B does not keep Inf and
  // NaN (XLA asks for fast math there).
  if (!IsConstant(a) && b->opcode() == Opcode::kBroadcast && b->operand(0)->user_count() == 1 &&
      IsFloatingPointType(type) && b->operand(0)->shape().element_type() == type) {
    Instruction* y = b->operand(0);
    Instruction* recip = AddBinary(Opcode::kDivide, y->shape(), ScalarLike(y->shape(), 1), y);
    Instruction* recip_bcast = AddBroadcast(recip, b->shape(), b->attrs().dimensions);
    return ReplaceWithNew(divide, AddBinary(Opcode::kMultiply, shape, a, recip_bcast));
  }
  // (A / B) / (C / D) => (A * D) / (B * C)
  if (a->opcode() == Opcode::kDivide && b->opcode() == Opcode::kDivide) {
    Instruction* ad = AddBinary(Opcode::kMultiply, shape, a->operand(0), b->operand(1));
    Instruction* bc = AddBinary(Opcode::kMultiply, shape, a->operand(1), b->operand(0));
    return ReplaceWithNew(divide, AddBinary(Opcode::kDivide, shape, ad, bc));
  }
  // (A / B) / C => A / (B * C)
  if (a->opcode() == Opcode::kDivide) {
    Instruction* bc = AddBinary(Opcode::kMultiply, shape, a->operand(1), b);
    return ReplaceWithNew(divide, AddBinary(Opcode::kDivide, shape, a->operand(0), bc));
  }
  // A / (B / C) => (A * C) / B
  if (b->opcode() == Opcode::kDivide) {
    Instruction* ac = AddBinary(Opcode::kMultiply, shape, a, b->operand(1));
    return ReplaceWithNew(divide, AddBinary(Opcode::kDivide, shape, ac, b->operand(0)));
  }
  // convert(pred) / broadcast(Y) => broadcast(1 / Y) * convert(pred), Y scalar.
  if (a->opcode() == Opcode::kConvert && IsPred(a->operand(0)) &&
      b->opcode() == Opcode::kBroadcast && b->operand(0)->shape().rank() == 0) {
    Instruction* y = b->operand(0);
    Instruction* recip = AddBinary(Opcode::kDivide, y->shape(),
                                   AddScalarConstant(y->shape().element_type(), 1, y->shape()), y);
    Instruction* recip_bcast = AddBroadcast(recip, shape, {});
    return ReplaceWithNew(divide, AddBinary(Opcode::kMultiply, shape, recip_bcast, a));
  }
  return absl::OkStatus();
}

absl::Status Visitor::HandleRemainder(Instruction* rem) {
  Instruction* a = rem->operand(0);
  Instruction* b = rem->operand(1);
  const Shape& shape = rem->shape();
  // (A % B) % B => A % B
  if (a->opcode() == Opcode::kRemainder && a->operand(1) == b) {
    ReplaceIfCompatible(rem, a);
    return absl::OkStatus();
  }
  const PrimitiveType type = shape.element_type();
  if (IsIntegralType(type)) {
    const Instruction* c = UnwrapBroadcastOfConstant(b);
    if (c != nullptr) {
      if (IsSignedIntegralType(type)) {
        const int64_t value = c->literal().GetAsInt64(0);
        if (value > 0 && std::has_single_bit(static_cast<uint64_t>(value))) {
          Instruction* zero = ScalarLike(a->shape(), 0);
          Instruction* negative = AddCompare(a, zero, ComparisonDirection::kLt);
          Instruction* negated = AddUnary(Opcode::kNegate, a);
          Instruction* abs_ops[] = {negative, negated, a};
          Instruction* abs_value = Add(Opcode::kSelect, a->shape(), abs_ops);
          Instruction* masked =
              AddBinary(Opcode::kAnd, shape, abs_value, ScalarLike(abs_value->shape(), value - 1));
          Instruction* negated_masked = AddUnary(Opcode::kNegate, masked);
          Instruction* ops[] = {negative, negated_masked, masked};
          return ReplaceWithNew(rem, Add(Opcode::kSelect, shape, ops));
        }
      } else {
        const uint64_t value = c->literal().GetAsUint64(0);
        if (std::has_single_bit(value)) {
          Instruction* mask = AddScalarConstant(type, 0, shape);
          {
            Literal literal(Shape::Scalar(type));
            literal.SetFromUint64(0, value - 1);
            mask->mutable_attrs().literal = std::make_shared<const Literal>(std::move(literal));
          }
          if (b->shape().rank() != 0) mask = AddBroadcast(mask, b->shape(), {});
          return ReplaceWithNew(rem, AddBinary(Opcode::kAnd, shape, a, mask));
        }
      }
    }
  }
  // iota % N => iota when N >= the iota's size.
  if (a->opcode() == Opcode::kIota && b->opcode() == Opcode::kBroadcast &&
      IsEffectiveScalarConstant(b->operand(0)) && IsIntegral(a)) {
    const int64_t bound = a->shape().dimensions(a->attrs().iota_dimension);
    if (b->operand(0)->literal().GetAsInt64(0) >= bound) {
      ReplaceIfCompatible(rem, a);
    }
  }
  return absl::OkStatus();
}

absl::Status Visitor::HandleNegate(Instruction* negate) {
  Instruction* operand = negate->operand(0);
  if (operand->opcode() == Opcode::kNegate) ReplaceIfCompatible(negate, operand->operand(0));
  return absl::OkStatus();
}

absl::Status Visitor::HandleNot(Instruction* logical_not) {
  Instruction* operand = logical_not->operand(0);
  if (operand->opcode() == Opcode::kNot) ReplaceIfCompatible(logical_not, operand->operand(0));
  return absl::OkStatus();
}

absl::Status Visitor::HandleAnd(Instruction* hlo) {
  Instruction* lhs = hlo->operand(0);
  Instruction* rhs = hlo->operand(1);
  if (IsPred(lhs) && IsPred(rhs)) {
    if (IsAll(rhs, 1) && ReplaceIfCompatible(hlo, lhs)) return absl::OkStatus();
    if (IsAll(lhs, 1) && ReplaceIfCompatible(hlo, rhs)) return absl::OkStatus();
  }
  if (IsAll(rhs, 0) && ReplaceIfCompatible(hlo, rhs)) return absl::OkStatus();
  if (IsAll(lhs, 0) && ReplaceIfCompatible(hlo, lhs)) return absl::OkStatus();
  return absl::OkStatus();
}

absl::Status Visitor::HandleOr(Instruction* hlo) {
  Instruction* lhs = hlo->operand(0);
  Instruction* rhs = hlo->operand(1);
  if (IsPred(lhs) && IsPred(rhs)) {
    if (IsAll(rhs, 1) && ReplaceIfCompatible(hlo, rhs)) return absl::OkStatus();
    if (IsAll(lhs, 1) && ReplaceIfCompatible(hlo, lhs)) return absl::OkStatus();
  }
  if (IsAll(rhs, 0) && ReplaceIfCompatible(hlo, lhs)) return absl::OkStatus();
  if (IsAll(lhs, 0) && ReplaceIfCompatible(hlo, rhs)) return absl::OkStatus();
  return absl::OkStatus();
}

namespace {

bool IsNondecreasingSublinear(const Instruction* hlo) {
  switch (hlo->opcode()) {
    case Opcode::kCbrt:
    case Opcode::kErf:
    case Opcode::kLogistic:
    case Opcode::kTanh:
      return true;
    default:
      return false;
  }
}

// Whether lower < upper for two effective-scalar constants of the same type.
bool ConstantLess(const Instruction* lower, const Instruction* upper) {
  const PrimitiveType type = lower->shape().element_type();
  if (type != upper->shape().element_type()) return false;
  if (IsSignedIntegralType(type))
    return lower->literal().GetAsInt64(0) < upper->literal().GetAsInt64(0);
  if (IsUnsignedIntegralType(type)) {
    return lower->literal().GetAsUint64(0) < upper->literal().GetAsUint64(0);
  }
  if (IsFloatingPointType(type)) {
    return lower->literal().GetAsDouble(0) < upper->literal().GetAsDouble(0);
  }
  return false;
}

}  // namespace

absl::StatusOr<bool> Visitor::SimplifyMinOrMax(Instruction* hlo) {
  const bool is_max = hlo->opcode() == Opcode::kMaximum;
  const Opcode opposite = is_max ? Opcode::kMinimum : Opcode::kMaximum;
  Instruction* lhs = hlo->operand(0);
  Instruction* rhs = hlo->operand(1);
  if (lhs == rhs) {
    ReplaceIfCompatible(hlo, lhs);
    return true;
  }
  // max(x, lowest) => x, min(x, highest) => x. For floats XLA's CPU pipeline
  // also drops max(x, -inf) (observed in its dumps); -inf never wins a
  // NaN-propagating maximum.
  const PrimitiveType type = hlo->shape().element_type();
  auto is_identity = [&](const Instruction* operand) {
    return is_max ? IsAllLowest(operand) : IsAllHighest(operand);
  };
  if (IsIntegralType(type) || IsFloatingPointType(type)) {
    if (rhs->shape().element_type() == type && is_identity(lhs) && ReplaceIfCompatible(hlo, rhs)) {
      return true;
    }
    if (lhs->shape().element_type() == type && is_identity(rhs) && ReplaceIfCompatible(hlo, lhs)) {
      return true;
    }
  }
  // op(op(x, y), y) => op(x, y), also with x.
  if (lhs->opcode() == hlo->opcode() && (lhs->operand(0) == rhs || lhs->operand(1) == rhs)) {
    ReplaceIfCompatible(hlo, lhs);
    return true;
  }
  // op(x, op(x, y)) => op(x, y)
  if (rhs->opcode() == hlo->opcode() && rhs->operand(0) == lhs) {
    ReplaceIfCompatible(hlo, rhs);
    return true;
  }
  // op(y, op(x, y)) => op(y, x)
  if (rhs->opcode() == hlo->opcode() && rhs->operand(1) == lhs) {
    hlo->ReplaceOperandWith(1, rhs->operand(0));
    MarkChanged();
    RemoveDeadTree(rhs);
    return true;
  }
  // max(broadcast(c1), min(x, broadcast(c2))) and
  // min(broadcast(c2), max(x, broadcast(c1))) => clamp(c1, x, c2) when c1 < c2.
  for (int i = 0; i < 2; ++i) {
    Instruction* outer_bound = hlo->operand(i);
    Instruction* inner = hlo->operand(1 - i);
    if (outer_bound->opcode() != Opcode::kBroadcast ||
        !IsEffectiveScalarConstant(outer_bound->operand(0)) || inner->opcode() != opposite) {
      continue;
    }
    for (int j = 0; j < 2; ++j) {
      Instruction* inner_bound = inner->operand(j);
      Instruction* x = inner->operand(1 - j);
      Instruction* low = is_max ? outer_bound : inner_bound;
      Instruction* high = is_max ? inner_bound : outer_bound;
      if (inner_bound->opcode() == Opcode::kBroadcast &&
          IsEffectiveScalarConstant(inner_bound->operand(0)) &&
          ConstantLess(low->operand(0), high->operand(0))) {
        Instruction* ops[] = {low, x, high};
        HLOGYM_RETURN_IF_ERROR(ReplaceWithNew(hlo, Add(Opcode::kClamp, x->shape(), ops)));
        return true;
      }
    }
  }
  return false;
}

absl::Status Visitor::HandleMaximum(Instruction* max) {
  HLOGYM_ASSIGN(done, SimplifyMinOrMax(max));
  if (done) return absl::OkStatus();
  Instruction* lhs = max->operand(0);
  Instruction* rhs = max->operand(1);
  // max(x, clamp(x, y, z)) => clamp(x, y, z)
  for (int i = 0; i < 2; ++i) {
    Instruction* clamp = max->operand(1 - i);
    if (clamp->opcode() == Opcode::kClamp && clamp->operand(0) == max->operand(i) &&
        ReplaceIfCompatible(max, clamp)) {
      return absl::OkStatus();
    }
  }
  // max(f(x), f(y)) => f(max(x, y)) for nondecreasing sublinear f.
  if (lhs->opcode() == rhs->opcode() && IsNondecreasingSublinear(lhs) &&
      lhs->operand(0)->shape().Compatible(rhs->operand(0)->shape())) {
    Instruction* inner =
        AddBinary(Opcode::kMaximum, lhs->operand(0)->shape(), lhs->operand(0), rhs->operand(0));
    Instruction* ops[] = {inner};
    return ReplaceWithNew(max, Add(lhs->opcode(), max->shape(), ops));
  }
  return absl::OkStatus();
}

absl::Status Visitor::HandleMinimum(Instruction* min) { return SimplifyMinOrMax(min).status(); }

absl::Status Visitor::HandleClamp(Instruction* clamp) {
  Instruction* low = clamp->operand(0);
  Instruction* x = clamp->operand(1);
  Instruction* high = clamp->operand(2);
  if (x->opcode() == Opcode::kClamp && x->operand(0) == low && x->operand(2) == high) {
    ReplaceIfCompatible(clamp, x);
    return absl::OkStatus();
  }
  // clamp(0, partition-id, c) => partition-id where every id is at most c
  // (replica-id likewise): the ids are unsigned and below their count.
  const std::optional<double> bound = ScalarConstantValue(high);
  if ((x->opcode() == Opcode::kPartitionId || x->opcode() == Opcode::kReplicaId) &&
      IsConstant(low) && IsAll(low, 0) && IsIntegral(high) && bound &&
      computation_->parent() != nullptr) {
    const Module& module = *computation_->parent();
    const int64_t count =
        x->opcode() == Opcode::kPartitionId ? NumPartitions(module) : ReplicaCount(module);
    if (count != 1 && count <= static_cast<int64_t>(*bound) + 1) ReplaceIfCompatible(clamp, x);
  }
  return absl::OkStatus();
}

absl::Status Visitor::HandleCompare(Instruction* compare) {
  Instruction* lhs = compare->operand(0);
  Instruction* rhs = compare->operand(1);
  const ComparisonDirection dir = compare->attrs().comparison_direction;
  const Shape& shape = compare->shape();
  using D = ComparisonDirection;
  if (IsUnsignedIntegralType(lhs->shape().element_type())) {
    if (dir == D::kLt && IsAll(rhs, 0)) return ReplaceWithNew(compare, ScalarLike(shape, 0));
    if (dir == D::kGe && IsAll(rhs, 0)) return ReplaceWithNew(compare, ScalarLike(shape, 1));
    if (dir == D::kGt && IsAll(lhs, 0)) return ReplaceWithNew(compare, ScalarLike(shape, 0));
    if (dir == D::kLe && IsAll(lhs, 0)) return ReplaceWithNew(compare, ScalarLike(shape, 1));
  }
  if (dir == D::kLt && IsNonNegative(lhs) && IsAll(rhs, 0)) {
    return ReplaceWithNew(compare, ScalarLike(shape, 0));
  }
  if (dir == D::kGt && IsAll(lhs, 0) && IsNonNegative(rhs)) {
    return ReplaceWithNew(compare, ScalarLike(shape, 0));
  }
  if (dir == D::kGe && IsNonNegative(lhs) && IsAll(rhs, 0)) {
    return ReplaceWithNew(compare, ScalarLike(shape, 1));
  }
  if (dir == D::kLe && IsAll(lhs, 0) && IsNonNegative(rhs)) {
    return ReplaceWithNew(compare, ScalarLike(shape, 1));
  }
  if (lhs == rhs && IsIntegral(lhs)) {
    const bool value = dir == D::kEq || dir == D::kGe || dir == D::kLe;
    return ReplaceWithNew(compare, ScalarLike(shape, value ? 1 : 0));
  }
  if (IsPred(lhs) && IsPred(rhs)) {
    if (dir == D::kNe) {
      if (IsAll(rhs, 0)) {
        ReplaceIfCompatible(compare, lhs);
        return absl::OkStatus();
      }
      if (IsAll(lhs, 0)) {
        ReplaceIfCompatible(compare, rhs);
        return absl::OkStatus();
      }
    } else if (dir == D::kEq) {
      if (IsAll(rhs, 1)) {
        ReplaceIfCompatible(compare, lhs);
        return absl::OkStatus();
      }
      if (IsAll(lhs, 1)) {
        ReplaceIfCompatible(compare, rhs);
        return absl::OkStatus();
      }
    }
  }
  // select(a >= b, 1, 0) != 0 => a >= b
  if (dir == D::kNe && IsAll(rhs, 0) && lhs->opcode() == Opcode::kSelect) {
    Instruction* inner = lhs->operand(0);
    if (inner->opcode() == Opcode::kCompare && inner->attrs().comparison_direction == D::kGe &&
        IsAll(lhs->operand(1), 1) && IsAll(lhs->operand(2), 0) &&
        shape.Compatible(inner->shape()) && ReplaceIfCompatible(compare, inner)) {
      return absl::OkStatus();
    }
  }
  if (dir == D::kGt) {
    if (lhs->opcode() == Opcode::kMaximum) {
      Instruction* a = lhs->operand(0);
      Instruction* b = lhs->operand(1);
      if (rhs == a || rhs == b) {
        compare->ReplaceOperandWith(0, rhs == a ? b : a);
        MarkChanged();
        RemoveDeadTree(lhs);
        return absl::OkStatus();
      }
    } else if (rhs->opcode() == Opcode::kMinimum) {
      Instruction* a = rhs->operand(0);
      Instruction* b = rhs->operand(1);
      if (lhs == a || lhs == b) {
        compare->ReplaceOperandWith(1, lhs == a ? b : a);
        MarkChanged();
        RemoveDeadTree(rhs);
        return absl::OkStatus();
      }
    }
  }
  return absl::OkStatus();
}

absl::Status Visitor::HandleSelect(Instruction* select) {
  Instruction* pred = select->operand(0);
  Instruction* on_true = select->operand(1);
  Instruction* on_false = select->operand(2);
  if (on_true == on_false && ReplaceIfCompatible(select, on_true)) return absl::OkStatus();
  if (IsAll(pred, 1) && ReplaceIfCompatible(select, on_true)) return absl::OkStatus();
  if (IsAll(pred, 0) && ReplaceIfCompatible(select, on_false)) return absl::OkStatus();
  if (pred->opcode() == Opcode::kNot) {
    Instruction* ops[] = {pred->operand(0), on_false, on_true};
    return ReplaceWithNew(select, Add(Opcode::kSelect, select->shape(), ops));
  }
  if (IsPred(select)) {
    if (IsAll(on_true, 1) && IsAll(on_false, 0)) {
      ReplaceIfCompatible(select, pred);
      return absl::OkStatus();
    }
    if (IsAll(on_true, 0) && IsAll(on_false, 1) && pred->shape().Compatible(select->shape())) {
      return ReplaceWithNew(select, AddUnary(Opcode::kNot, pred));
    }
    if (pred->opcode() == Opcode::kCompare && pred->operand(0) == on_true &&
        pred->operand(1) == on_false) {
      switch (pred->attrs().comparison_direction) {
        case ComparisonDirection::kGt:
        case ComparisonDirection::kGe:
          return ReplaceWithNew(select, AddBinary(Opcode::kOr, select->shape(), on_true, on_false));
        case ComparisonDirection::kLt:
        case ComparisonDirection::kLe:
          return ReplaceWithNew(select,
                                AddBinary(Opcode::kAnd, select->shape(), on_true, on_false));
        case ComparisonDirection::kEq:
          ReplaceIfCompatible(select, on_false);
          return absl::OkStatus();
        case ComparisonDirection::kNe:
          ReplaceIfCompatible(select, on_true);
          return absl::OkStatus();
      }
    }
  }
  // select(p, xs, dus(xs, x, i)) => dus(xs, select(ds(p, i), ds(xs, i), x), i), and the same with
  // the operands swapped: the select then touches only the updated window (an environment's
  // auto-reset choosing between the stepped state and the old one). XLA tries the update on the
  // false side first; a scalar predicate is used whole.
  for (const int64_t update_side : {2, 1}) {
    Instruction* dus = select->operand(update_side);
    Instruction* xs = select->operand(3 - update_side);
    if (dus->opcode() != Opcode::kDynamicUpdateSlice || dus->users().size() != 1 ||
        dus->operand(0) != xs) {
      continue;
    }
    Instruction* x = dus->operand(1);
    const std::span<Instruction* const> starts = std::span(dus->operands()).subspan(2);
    const std::vector<int64_t>& sizes = x->shape().dimensions();
    Instruction* window_pred =
        pred->shape().rank() == 0 ? pred : AddDynamicSlice(pred, starts, sizes);
    Instruction* window = AddDynamicSlice(xs, starts, sizes);
    Instruction* ops[] = {window_pred, update_side == 2 ? window : x,
                          update_side == 2 ? x : window};
    Instruction* chosen = Add(Opcode::kSelect, x->shape(), ops);
    Instruction* update_ops[] = {xs, chosen};
    std::vector<Instruction*> dus_ops(std::begin(update_ops), std::end(update_ops));
    dus_ops.insert(dus_ops.end(), starts.begin(), starts.end());
    return ReplaceWithNew(select, Add(Opcode::kDynamicUpdateSlice, select->shape(), dus_ops));
  }
  return absl::OkStatus();
}

absl::Status Visitor::HandleExp(Instruction* exp) {
  const Instruction* c = UnwrapBroadcastOfConstant(exp->operand(0));
  if (c != nullptr && c->shape().rank() == 0 && IsAll(c, 0)) {
    return ReplaceWithNew(exp, ScalarLike(exp->shape(), 1));
  }
  return absl::OkStatus();
}

absl::Status Visitor::HandleLog(Instruction* log) {
  Instruction* operand = log->operand(0);
  const Shape& shape = log->shape();
  // log(exp(A)) => A
  if (operand->opcode() == Opcode::kExp && ReplaceIfCompatible(log, operand->operand(0))) {
    return absl::OkStatus();
  }
  // log(pow(A, B)) => select(B == 0, 0, B * log(|A|)) (no abs for complex).
  if (operand->opcode() == Opcode::kPower) {
    Instruction* a = operand->operand(0);
    Instruction* b = operand->operand(1);
    Instruction* abs_a = IsComplexType(a->shape().element_type()) ? a : AddUnary(Opcode::kAbs, a);
    Instruction* ops[] = {abs_a};
    Instruction* new_log = Add(Opcode::kLog, shape, ops);
    Instruction* product = AddBinary(Opcode::kMultiply, shape, new_log, b);
    Instruction* b_is_zero = AddCompare(b, ScalarLike(b->shape(), 0), ComparisonDirection::kEq);
    Instruction* select_ops[] = {b_is_zero, ScalarLike(shape, 0), product};
    return ReplaceWithNew(log, Add(Opcode::kSelect, shape, select_ops));
  }
  if (operand->opcode() == Opcode::kSqrt || operand->opcode() == Opcode::kRsqrt) {
    Instruction* ops[] = {operand->operand(0)};
    Instruction* new_log = Add(Opcode::kLog, shape, ops);
    const double factor = operand->opcode() == Opcode::kSqrt ? 0.5 : -0.5;
    return ReplaceWithNew(log,
                          AddBinary(Opcode::kMultiply, shape, new_log, ScalarLike(shape, factor)));
  }
  return absl::OkStatus();
}

absl::Status Visitor::HandlePower(Instruction* power) {
  Instruction* lhs = power->operand(0);
  Instruction* rhs = power->operand(1);
  const Shape& shape = power->shape();
  if (IsAll(rhs, 0)) return ReplaceWithNew(power, ScalarLike(shape, 1));
  if (IsAll(rhs, 1) && ReplaceIfCompatible(power, lhs)) return absl::OkStatus();
  // pow(exp(A), B) => exp(A * B)
  if (lhs->opcode() == Opcode::kExp) {
    Instruction* product = AddBinary(Opcode::kMultiply, shape, lhs->operand(0), rhs);
    return ReplaceWithNew(power, AddUnary(Opcode::kExp, product));
  }
  if (IsAll(rhs, 2)) return ReplaceWithNew(power, AddBinary(Opcode::kMultiply, shape, lhs, lhs));
  if (IsAll(rhs, 3)) {
    Instruction* square = AddBinary(Opcode::kMultiply, shape, lhs, lhs);
    return ReplaceWithNew(power, AddBinary(Opcode::kMultiply, shape, lhs, square));
  }
  if (IsAll(rhs, -1)) {
    return ReplaceWithNew(power,
                          AddBinary(Opcode::kDivide, shape, ScalarLike(lhs->shape(), 1), lhs));
  }
  if (IsFloat(rhs) && IsAll(rhs, 0.5) && IsNonNegative(lhs)) {
    Instruction* ops[] = {lhs};
    return ReplaceWithNew(power, Add(Opcode::kSqrt, shape, ops));
  }
  return absl::OkStatus();
}

absl::Status Visitor::HandleRsqrt(Instruction* rsqrt) {
  Instruction* operand = rsqrt->operand(0);
  if (operand->opcode() == Opcode::kPower && IsAll(operand->operand(1), -2) &&
      IsNonNegative(operand->operand(0))) {
    ReplaceIfCompatible(rsqrt, operand->operand(0));
    return absl::OkStatus();
  }
  if (operand->opcode() == Opcode::kDivide && IsAll(operand->operand(0), 1) &&
      IsNonNegative(operand->operand(1))) {
    Instruction* ops[] = {operand->operand(1)};
    return ReplaceWithNew(rsqrt, Add(Opcode::kSqrt, rsqrt->shape(), ops));
  }
  return absl::OkStatus();
}

absl::Status Visitor::HandleReal(Instruction* real) {
  Instruction* operand = real->operand(0);
  if (operand->opcode() == Opcode::kComplex) {
    ReplaceIfCompatible(real, operand->operand(0));
  } else if (!IsComplexType(operand->shape().element_type())) {
    ReplaceIfCompatible(real, operand);
  }
  return absl::OkStatus();
}

absl::Status Visitor::HandleImag(Instruction* imag) {
  Instruction* operand = imag->operand(0);
  if (operand->opcode() == Opcode::kComplex) {
    ReplaceIfCompatible(imag, operand->operand(1));
  } else if (!IsComplexType(operand->shape().element_type())) {
    return ReplaceWithNew(imag, ScalarLike(imag->shape(), 0));
  }
  return absl::OkStatus();
}

absl::Status Visitor::HandleComplex(Instruction* complex) {
  Instruction* re = complex->operand(0);
  Instruction* im = complex->operand(1);
  if (re->opcode() == Opcode::kReal && im->opcode() == Opcode::kImag &&
      re->operand(0) == im->operand(0)) {
    ReplaceIfCompatible(complex, re->operand(0));
  }
  return absl::OkStatus();
}

absl::Status Visitor::HandleBitcastConvert(Instruction* bitcast) {
  Instruction* operand = bitcast->operand(0);
  // Of a chain of bitcast-converts only the last counts.
  if (operand->opcode() == Opcode::kBitcastConvert) {
    Instruction* ops[] = {operand->operand(0)};
    return ReplaceWithNew(bitcast, Add(Opcode::kBitcastConvert, bitcast->shape(), ops));
  }
  // bitcast-convert(concatenate(bitcast-convert(a_i))) where each a_i has the
  // outer result's type: concatenate(a_i).
  if (operand->opcode() == Opcode::kConcatenate &&
      absl::c_all_of(operand->operands(), [&](const Instruction* in) {
        return in->opcode() == Opcode::kBitcastConvert &&
               in->operand(0)->shape().element_type() == bitcast->shape().element_type() &&
               in->operand(0)->shape().rank() == in->shape().rank();
      })) {
    std::vector<Instruction*> inputs;
    std::vector<int64_t> dims = operand->operand(0)->operand(0)->shape().dimensions();
    const int64_t dim = operand->attrs().dimensions[0];
    dims[dim] = 0;
    for (Instruction* in : operand->operands()) {
      inputs.push_back(in->operand(0));
      dims[dim] += in->operand(0)->shape().dimensions(dim);
    }
    // (Bit widths that change the shape are left alone.)
    if (dims != bitcast->shape().dimensions()) return absl::OkStatus();
    Instruction* concat =
        Add(Opcode::kConcatenate,
            MakeShapeLike(bitcast->shape().element_type(), dims, bitcast->shape()), inputs);
    concat->mutable_attrs().dimensions = {dim};
    return ReplaceWithNew(bitcast, concat);
  }
  // To its own type: the operand.
  ReplaceIfCompatible(bitcast, operand);
  return absl::OkStatus();
}

absl::Status Visitor::HandleConvert(Instruction* convert) {
  Instruction* operand = convert->operand(0);
  const PrimitiveType src = operand->shape().element_type();
  const PrimitiveType dst = convert->shape().element_type();
  if (src == dst) {
    ReplaceIfCompatible(convert, operand);
    return absl::OkStatus();
  }
  // convert(convert(A: T -> U) -> T) => A when T -> U keeps every value.
  if (operand->opcode() == Opcode::kConvert && operand->operand(0)->shape().element_type() == dst &&
      CastPreservesValues(dst, src)) {
    ReplaceIfCompatible(convert, operand->operand(0));
  }
  return absl::OkStatus();
}

namespace {

bool LiteralIsAllFirst(const Literal& literal) {
  const int64_t n = literal.element_count();
  if (n <= 1) return false;
  const int width = ByteWidth(literal.shape().element_type());
  std::span<const uint8_t> raw = literal.raw();
  for (int64_t i = 1; i < n; ++i) {
    if (!std::equal(raw.begin(), raw.begin() + width, raw.begin() + i * width)) return false;
  }
  return true;
}

// R1, n > 1 elements equal to i * stride (exactly); returns the stride.
std::optional<int64_t> LiteralR1IntegerStride(const Literal& literal) {
  const PrimitiveType type = literal.shape().element_type();
  if (literal.shape().rank() != 1 || literal.element_count() <= 1 || !IsIntegralType(type)) {
    return std::nullopt;
  }
  const int64_t stride = literal.GetAsInt64(1);
  for (int64_t i = 0; i < literal.element_count(); ++i) {
    if (literal.GetAsInt64(i) != static_cast<int64_t>(static_cast<uint64_t>(i) * stride)) {
      return std::nullopt;
    }
  }
  return stride;
}

bool LiteralIsR1Iota(const Literal& literal) {
  const PrimitiveType type = literal.shape().element_type();
  if (literal.shape().rank() != 1 || literal.element_count() <= 1) return false;
  if (IsIntegralType(type)) {
    auto stride = LiteralR1IntegerStride(literal);
    return stride && *stride == 1;
  }
  if (IsFloatingPointType(type)) {
    for (int64_t i = 0; i < literal.element_count(); ++i) {
      Literal expected(Shape::Scalar(type));
      expected.SetFromInt64(0, i);
      if (literal.GetBits(i) != expected.GetBits(0)) return false;
    }
    return true;
  }
  return false;
}

}  // namespace

absl::Status Visitor::HandleConstant(Instruction* constant) {
  if (!IsReadableArrayConstant(constant) ||
      constant->shape().element_type() == PrimitiveType::kToken) {
    return absl::OkStatus();
  }
  const Literal& literal = constant->literal();
  if (LiteralIsAllFirst(literal)) {
    Literal scalar(Shape::Scalar(constant->shape().element_type()));
    scalar.SetBits(0, literal.GetBits(0));
    Shape scalar_shape = Shape::Scalar(constant->shape().element_type());
    if (constant->shape().has_layout()) scalar_shape.SetDefaultLayout();
    auto made = std::make_unique<Instruction>(Opcode::kConstant, scalar_shape);
    made->mutable_attrs().literal = std::make_shared<const Literal>(std::move(scalar));
    Instruction* scalar_constant = computation_->AddInstruction(std::move(made));
    return ReplaceWithNew(constant, AddBroadcast(scalar_constant, constant->shape(), {}));
  }
  if (LiteralIsR1Iota(literal)) {
    Instruction* iota = Add(Opcode::kIota, constant->shape(), {});
    iota->mutable_attrs().iota_dimension = 0;
    return ReplaceWithNew(constant, iota);
  }
  if (std::optional<int64_t> stride = LiteralR1IntegerStride(literal)) {
    Instruction* iota = Add(Opcode::kIota, constant->shape(), {});
    iota->mutable_attrs().iota_dimension = 0;
    Instruction* factor = AddScalarConstant(constant->shape().element_type(), 0, constant->shape());
    {
      Literal value(Shape::Scalar(constant->shape().element_type()));
      value.SetFromInt64(0, *stride);
      factor->mutable_attrs().literal = std::make_shared<const Literal>(std::move(value));
    }
    Instruction* bcast = AddBroadcast(factor, constant->shape(), {});
    return ReplaceWithNew(constant, AddBinary(Opcode::kMultiply, constant->shape(), iota, bcast));
  }
  return absl::OkStatus();
}

absl::Status Visitor::HandleIota(Instruction* iota) {
  if (iota->shape().IsArray() && iota->shape().dimensions(iota->attrs().iota_dimension) <= 1) {
    return ReplaceWithNew(iota, ScalarLike(iota->shape(), 0));
  }
  return absl::OkStatus();
}

absl::Status Visitor::HandleCopy(Instruction* copy) {
  // Layout-insensitive: a copy only changes the layout. XLA keeps a sharded
  // copy at the entry root.
  if (copy->attrs().FindRaw("sharding") != nullptr && copy->IsRoot() && computation_->IsEntry()) {
    return absl::OkStatus();
  }
  ReplaceIfCompatible(copy, copy->operand(0));
  return absl::OkStatus();
}

absl::Status Visitor::HandleGetTupleElement(Instruction* gte) {
  Instruction* operand = gte->operand(0);
  if (operand->opcode() == Opcode::kTuple) {
    ReplaceIfCompatible(gte, operand->operand(gte->attrs().tuple_index));
  }
  return absl::OkStatus();
}

absl::Status Visitor::HandleSort(Instruction* sort) {
  if (sort->attrs().dimensions.empty()) return absl::OkStatus();
  Instruction* operand = sort->operand(0);
  const int64_t dim = sort->attrs().dimensions[0];
  if (IsZeroElementArray(operand->shape()) || operand->shape().dimensions(dim) <= 1) {
    if (sort->operand_count() == 1) {
      ReplaceIfCompatible(sort, operand);
      return absl::OkStatus();
    }
    Instruction* tuple = MakeTuple(computation_, sort->operands());
    return ReplaceWithNew(sort, tuple);
  }
  return absl::OkStatus();
}

absl::Status Visitor::HandleMap(Instruction* map) {
  Computation* callee = map->to_apply();
  if (callee == nullptr) return absl::OkStatus();
  Instruction* root = callee->root_instruction();
  if (root->opcode() == Opcode::kParameter) {
    ReplaceIfCompatible(map, map->operand(root->attrs().parameter_number));
    return absl::OkStatus();
  }
  if (root->opcode() == Opcode::kConstant) {
    if (root->shape().rank() != 0 || !IsReadableArrayConstant(root)) return absl::OkStatus();
    auto clone = root->CloneWithNewOperands({}, "");
    clone->mutable_shape() = root->shape();
    Instruction* constant = computation_->AddInstruction(std::move(clone));
    if (map->shape().rank() == 0) return ReplaceWithNew(map, constant);
    return ReplaceWithNew(map, AddBroadcast(constant, map->shape(), {}));
  }
  if (!IsElementwise(root->opcode()) || root->opcode() == Opcode::kFusion ||
      root->opcode() == Opcode::kBitcastConvert || root->opcode() == Opcode::kCopy) {
    return absl::OkStatus();
  }
  std::vector<Instruction*> operands;
  for (const Instruction* operand : root->operands()) {
    if (operand->opcode() != Opcode::kParameter) return absl::OkStatus();
    operands.push_back(map->operand(operand->attrs().parameter_number));
  }
  auto clone = root->CloneWithNewOperands(operands, "");
  clone->set_shape(map->shape());
  clone->set_name("");
  Instruction* made = computation_->AddInstruction(std::move(clone));
  return ReplaceWithNew(map, made);
}

}  // namespace algsimp

std::string AlgebraicSimplifier::TrackingKey() const {
  const AlgebraicSimplifierOptions& o = options_;
  std::string key = name_ + ":";
  for (bool flag :
       {o.enable_dot_strength_reduction, o.enable_dot_to_multiply_rewrite, o.minmax_propagate_nan,
        o.enable_sink_broadcast, o.enable_broadcast_degenerate_dimension,
        o.enable_reduce_of_reshape, o.enable_negative_padding_replacement,
        o.unconditionally_simplify_reduce_of_transpose_or_reshape,
        o.enable_dynamic_update_slice_to_pad_replacement, o.enable_conv_operand_swap,
        o.rewrite_reshape_transpose_as_slice_concatenate,
        o.enable_window_reduce_to_reduce_replacement}) {
    key += flag ? '1' : '0';
  }
  return absl::StrCat(key, ":", o.very_small_gather_size, ":", o.max_sweeps);
}

absl::StatusOr<bool> AlgebraicSimplifier::Run(Module& module) {
  TrackedRun run(module, TrackingKey());
  algsimp::Visitor visitor(options_);
  bool changed = false;
  for (Computation* computation : NonFusionComputations(module)) {
    if (!run.MustVisit(*computation)) continue;
    HLOGYM_ASSIGN(result, visitor.Run(computation, run.since(), run.enabled()));
    changed |= result;
  }
  run.Complete();
  return changed;
}

}  // namespace hlogym
