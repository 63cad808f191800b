// algsimp: rewrites of data-movement instructions (broadcast, reshape,
// transpose, slice, concatenate, pad, reverse, dynamic-slice,
// dynamic-update-slice, gather, scatter). See algebraic_simplifier.h.
#include <algorithm>

#include "absl/algorithm/container.h"
#include "hlo/status_macros.h"
#include "passes/builders.h"
#include "passes/simplifiers/algebraic_simplifier_internal.h"

namespace hlogym::algsimp {
namespace {

bool IsConstant(const Instruction* hlo) { return hlo->opcode() == Opcode::kConstant; }

bool IsScalarBroadcast(const Instruction* hlo) {
  return hlo->opcode() == Opcode::kBroadcast && hlo->operand(0)->shape().rank() == 0;
}

bool IsUnstridedSlice(const Instruction* slice) {
  for (const SliceDimension& s : slice->attrs().slice) {
    if (s.stride != 1) return false;
  }
  return true;
}

// An elementwise op whose result has its operands' dimensions.
bool IsShapePreservingElementwise(const Instruction* hlo) {
  if (!IsElementwise(hlo->opcode())) return false;
  switch (hlo->opcode()) {
    case Opcode::kCopy:
    case Opcode::kStochasticConvert:
      return false;
    case Opcode::kBitcastConvert:
      return BitWidth(hlo->shape().element_type()) ==
             BitWidth(hlo->operand(0)->shape().element_type());
    default:
      return true;
  }
}

bool IsDead(const Instruction* hlo) { return hlo->user_count() == 0 && !hlo->IsRoot(); }

}  // namespace

// ================================ broadcast =================================

absl::StatusOr<bool> Visitor::TrySinkBroadcastAfterElementwiseOps(Instruction* broadcast) {
  if (broadcast->shape().rank() == 0) return false;
  Instruction* operand = broadcast->operand(0);
  auto compatible = [&](const Instruction* hlo) {
    if (hlo->opcode() != Opcode::kBroadcast) return false;
    if (hlo->operand(0)->shape().rank() == 0) return true;
    return hlo->operand(0)->shape() == operand->shape() &&
           hlo->attrs().dimensions == broadcast->attrs().dimensions;
  };
  bool changed = false;
  std::vector<Instruction*> users = broadcast->users();
  for (Instruction* user : users) {
    if (IsDead(user) || !Rewritable(user) || !IsShapePreservingElementwise(user)) continue;
    if (!std::all_of(user->operands().begin(), user->operands().end(), compatible)) continue;
    std::vector<Instruction*> new_operands;
    for (Instruction* user_operand : user->operands()) {
      if (user_operand->operand(0)->shape().rank() == 0 && operand->shape().rank() != 0) {
        new_operands.push_back(AddBroadcast(
            user_operand->operand(0),
            ChangeElementType(operand->shape(), user_operand->shape().element_type()), {}));
      } else {
        new_operands.push_back(user_operand->operand(0));
      }
    }
    auto clone = user->CloneWithNewOperands(new_operands, "");
    clone->set_name("");
    clone->set_shape(ChangeElementType(operand->shape(), user->shape().element_type()));
    Instruction* new_user = computation_->AddInstruction(std::move(clone));
    Instruction* new_broadcast =
        AddBroadcast(new_user, user->shape(), broadcast->attrs().dimensions);
    new_broadcast->set_shape(user->shape());
    HLOGYM_RETURN_IF_ERROR(ReplaceUsesKeepingOld(user, new_broadcast));
    changed = true;
  }
  return changed;
}

absl::Status Visitor::HandleBroadcast(Instruction* broadcast) {
  Instruction* operand = broadcast->operand(0);
  std::vector<int64_t> dims = broadcast->attrs().dimensions;
  const Shape& shape = broadcast->shape();
  // A broadcast that adds no elements is a reshape (sorted dims) ...
  if (IsSortedDims(dims) && shape.ElementCount() == operand->shape().ElementCount()) {
    return ReplaceWithNew(broadcast, AddReshape(operand, shape));
  }
  // ... or a transpose (same rank).
  if (shape.rank() == operand->shape().rank() &&
      shape.ElementCount() == operand->shape().ElementCount()) {
    return ReplaceWithNew(broadcast, AddTranspose(operand, InversePermutation(dims)));
  }
  // broadcast(reshape that only inserts 1s) => broadcast of the reshape's operand.
  if (operand->opcode() == Opcode::kReshape) {
    auto degenerate = ReshapeMerelyInsertsOrDeletes1SizedDimensions(operand->operand(0)->shape(),
                                                                    operand->shape());
    if (degenerate && degenerate->deleted.empty()) {
      std::vector<int64_t> new_dims = dims;
      for (auto it = degenerate->inserted.rbegin(); it != degenerate->inserted.rend(); ++it) {
        new_dims.erase(new_dims.begin() + *it);
      }
      return ReplaceWithNew(broadcast, AddBroadcast(operand->operand(0), shape, new_dims));
    }
  }
  if (options_.enable_sink_broadcast) {
    HLOGYM_ASSIGN(sunk, TrySinkBroadcastAfterElementwiseOps(broadcast));
    if (sunk) return absl::OkStatus();
  }
  // A scalar broadcast feeding an op that permutes or subsets its elements
  // becomes a broadcast to that op's shape.
  if (operand->shape().rank() == 0) {
    std::vector<Instruction*> users = broadcast->users();
    for (Instruction* user : users) {
      if (IsDead(user) || !Rewritable(user)) continue;
      bool permutes = false;
      switch (user->opcode()) {
        case Opcode::kReshape:
        case Opcode::kReverse:
        case Opcode::kTranspose:
          permutes = true;
          break;
        case Opcode::kSort:
          permutes = !user->shape().IsTuple();
          break;
        case Opcode::kSlice:
          permutes = true;
          break;
        case Opcode::kDynamicSlice:
          permutes = user->operand(0) == broadcast;
          break;
        default:
          break;
      }
      if (!permutes || !user->shape().IsArray()) continue;
      Shape new_shape = user->shape();
      for (int64_t i = 0; i < new_shape.rank(); ++i) new_shape.set_dynamic_dimension(i, false);
      Instruction* new_broadcast = AddBroadcast(operand, new_shape, {});
      return ReplaceUsesKeepingOld(user, new_broadcast);
    }
    return absl::OkStatus();
  }
  // broadcast(iota) => iota
  if (operand->opcode() == Opcode::kIota) {
    Instruction* iota = Add(Opcode::kIota, shape, {});
    iota->mutable_attrs().iota_dimension = dims[operand->attrs().iota_dimension];
    return ReplaceWithNew(broadcast, iota);
  }
  // broadcast(broadcast(x)) => broadcast(x)
  if (operand->opcode() == Opcode::kBroadcast) {
    std::vector<int64_t> new_dims;
    for (int64_t d : operand->attrs().dimensions) new_dims.push_back(dims[d]);
    return ReplaceWithNew(broadcast, AddBroadcast(operand->operand(0), shape, new_dims));
  }
  // Drop the operand's size-1 dimensions.
  if (options_.enable_broadcast_degenerate_dimension) {
    const Shape& oshape = operand->shape();
    std::vector<int64_t> kept_dims, new_dims;
    for (int64_t i = 0; i < oshape.rank(); ++i) {
      if (oshape.dimensions(i) != 1) {
        kept_dims.push_back(oshape.dimensions(i));
        new_dims.push_back(dims[i]);
      }
    }
    if (static_cast<int64_t>(kept_dims.size()) != oshape.rank()) {
      Instruction* reshape =
          AddReshape(operand, MakeShapeLike(oshape.element_type(), kept_dims, oshape));
      return ReplaceWithNew(broadcast, AddBroadcast(reshape, shape, new_dims));
    }
  }
  return absl::OkStatus();
}

// ================================= reshape ==================================

absl::Status Visitor::HandleReshape(Instruction* reshape) {
  Instruction* operand = reshape->operand(0);
  const Shape& shape = reshape->shape();
  if (!shape.is_static() || !operand->shape().is_static()) return absl::OkStatus();
  if (IsZeroElementArray(shape)) {
    if (IsConstant(operand) && operand->shape() == shape) return absl::OkStatus();
    Shape literal_shape = shape;
    literal_shape.clear_layout();
    Literal literal(literal_shape);
    auto constant = std::make_unique<Instruction>(Opcode::kConstant, shape);
    constant->mutable_attrs().literal = std::make_shared<const Literal>(std::move(literal));
    return ReplaceWithNew(reshape, computation_->AddInstruction(std::move(constant)));
  }
  if (shape.Compatible(operand->shape())) {
    ReplaceIfCompatible(reshape, operand);
    return absl::OkStatus();
  }
  if (operand->opcode() == Opcode::kReshape) {
    return ReplaceWithNew(reshape, AddReshape(operand->operand(0), shape));
  }
  if (RemoveReshapeTransposeChain(reshape)) return absl::OkStatus();
  // reshape(broadcast(x)) => broadcast(x) when x's dims are left alone.
  if (operand->opcode() == Opcode::kBroadcast) {
    auto out_dims =
        ReshapeLeavesDimensionsUnmodified(operand->shape(), shape, operand->attrs().dimensions);
    if (out_dims) {
      return ReplaceWithNew(reshape, AddBroadcast(operand->operand(0), shape, *out_dims));
    }
  }
  // reshape(iota) => iota, or a mixed-radix sum of iotas.
  if (operand->opcode() == Opcode::kIota) {
    auto groups = ReshapeGroups(operand->shape().dimensions(), shape.dimensions());
    const int64_t iota_dim = operand->attrs().iota_dimension;
    if (groups) {
      for (const ReshapeGroup& g : *groups) {
        // The group holding the iota dimension as its first input dim and
        // ending right after it, with non-degenerate outputs.
        if (g.a_begin != iota_dim || g.a_end != iota_dim + 1 || g.b_end == g.b_begin) continue;
        int64_t first = g.b_begin;
        while (first < g.b_end && shape.dimensions(first) == 1) ++first;
        if (first == g.b_end) break;
        Instruction* result = nullptr;
        int64_t multiplier = 1;
        for (int64_t dim = g.b_end - 1; dim >= first; --dim) {
          Instruction* iota = Add(Opcode::kIota, shape, {});
          iota->mutable_attrs().iota_dimension = dim;
          if (result == nullptr) {
            result = iota;
          } else {
            Instruction* scaled =
                AddBinary(Opcode::kMultiply, shape, iota, ScalarLike(shape, multiplier));
            result = AddBinary(Opcode::kAdd, shape, result, scaled);
          }
          multiplier *= shape.dimensions(dim);
        }
        return ReplaceWithNew(reshape, result);
      }
    }
  }
  // reshape(dynamic-update-slice(a, u, starts)) => dynamic-update-slice(reshape(a), reshape(u),
  // starts') when the reshape only inserts or deletes size-1 dims and is the DUS's one user.
  if (operand->opcode() == Opcode::kDynamicUpdateSlice && operand->users().size() == 1 &&
      operand->attrs().FindRaw("sharding") == nullptr &&
      operand->operand(0)->attrs().FindRaw("sharding") == nullptr) {
    if (auto degenerate = ReshapeMerelyInsertsOrDeletes1SizedDimensions(operand->shape(), shape)) {
      return ReshapeAboveDynamicUpdateSlice(reshape, *degenerate);
    }
  }
  return absl::OkStatus();
}

absl::Status Visitor::ReshapeAboveDynamicUpdateSlice(Instruction* reshape,
                                                     const DegenerateReshape& degenerate) {
  Instruction* dus = reshape->operand(0);
  Instruction* update = dus->operand(1);
  Instruction* new_operand = AddReshape(dus->operand(0), reshape->shape());
  // One zero for every inserted dim, made even when none is (dead until DCE), as XLA does.
  Instruction* zero = ScalarLike(dus->operand(2)->shape(), 0);
  std::vector<int64_t> update_dims;
  std::vector<Instruction*> starts;
  const int64_t rank = update->shape().rank();
  for (int64_t d = 0; d <= rank; ++d) {  // one past the end: the trailing inserted dims
    if (absl::c_linear_search(degenerate.deleted, d)) continue;
    while (absl::c_linear_search(degenerate.inserted, static_cast<int64_t>(update_dims.size()))) {
      update_dims.push_back(1);
      starts.push_back(zero);
    }
    if (d < rank) {
      update_dims.push_back(update->shape().dimensions(d));
      starts.push_back(dus->operand(2 + d));
    }
  }
  Instruction* new_update = AddReshape(
      update, MakeShapeLike(update->shape().element_type(), update_dims, update->shape()));
  std::vector<Instruction*> operands = {new_operand, new_update};
  operands.insert(operands.end(), starts.begin(), starts.end());
  return ReplaceWithNew(reshape, Add(Opcode::kDynamicUpdateSlice, reshape->shape(), operands));
}

// ================================ transpose =================================

bool Visitor::RemoveReshapeTransposeChain(Instruction* start) {
  auto size_one_dims = [](const Shape& shape) {
    return std::count(shape.dimensions().begin(), shape.dimensions().end(), 1);
  };
  // A reshape that only inserts or deletes size-1 dimensions, with at most
  // one in its operand and one in its result.
  auto moves_a_size_one_dim = [&](const Instruction* reshape) {
    const Shape& from = reshape->operand(0)->shape();
    return reshape->opcode() == Opcode::kReshape && size_one_dims(from) <= 1 &&
           size_one_dims(reshape->shape()) <= 1 &&
           ReshapeMerelyInsertsOrDeletes1SizedDimensions(from, reshape->shape()).has_value();
  };
  // A transpose's permutation of the dimensions other than its operand's one
  // size-1 dimension (all of them where it has none or several).
  auto permutation_without_size_one = [&](const Instruction* transpose) {
    const Shape& from = transpose->operand(0)->shape();
    std::vector<int64_t> perm = transpose->attrs().dimensions;
    if (size_one_dims(from) != 1) return perm;
    const int64_t one = std::find(from.dimensions().begin(), from.dimensions().end(), 1) -
                        from.dimensions().begin();
    std::vector<int64_t> kept;
    for (int64_t p : perm) {
      if (p != one) kept.push_back(p > one ? p - 1 : p);
    }
    return kept;
  };
  std::vector<int64_t> composed;
  if (start->opcode() == Opcode::kTranspose) {
    if (IsIdentityPermutation(start->attrs().dimensions)) return false;
    composed = permutation_without_size_one(start);
  } else {
    if (!moves_a_size_one_dim(start)) return false;
    const int64_t kept =
        start->shape().rank() - static_cast<int64_t>(size_one_dims(start->shape()));
    composed.resize(kept);
    std::iota(composed.begin(), composed.end(), 0);
  }
  const Instruction* last = nullptr;
  for (const Instruction* link = start->operand(0);
       link->opcode() == Opcode::kReshape || link->opcode() == Opcode::kTranspose ||
       link->opcode() == Opcode::kBitcast;
       link = link->operand(0)) {
    if (link->opcode() == Opcode::kTranspose) {
      if (IsIdentityPermutation(link->attrs().dimensions)) return false;
      const std::vector<int64_t> inner = permutation_without_size_one(link);
      if (inner.size() != composed.size()) return false;
      std::vector<int64_t> next;
      for (int64_t p : composed) next.push_back(inner[p]);
      composed = std::move(next);
    } else if (!moves_a_size_one_dim(link)) {
      return false;  // a bitcast too: it is only a link where layouts count
    }
    last = link;
  }
  if (last == nullptr || !IsIdentityPermutation(composed)) return false;
  return ReplaceIfCompatible(start, last->operand(0));
}

absl::StatusOr<bool> Visitor::SimplifyTransposeOfBroadcast(Instruction* transpose) {
  Instruction* broadcast = transpose->operand(0);
  if (broadcast->opcode() != Opcode::kBroadcast || !IsSortedDims(broadcast->attrs().dimensions)) {
    return false;
  }
  std::vector<int64_t> inverse = InversePermutation(transpose->attrs().dimensions);
  std::vector<int64_t> new_dims;
  for (int64_t d : broadcast->attrs().dimensions) new_dims.push_back(inverse[d]);
  if (!IsSortedDims(new_dims)) return false;
  HLOGYM_RETURN_IF_ERROR(
      ReplaceWithNew(transpose, AddBroadcast(broadcast->operand(0), transpose->shape(), new_dims)));
  return true;
}

absl::Status Visitor::HandleTranspose(Instruction* transpose) {
  Instruction* operand = transpose->operand(0);
  const std::vector<int64_t>& perm = transpose->attrs().dimensions;
  if (IsSortedDims(perm)) {
    ReplaceIfCompatible(transpose, operand);
    return absl::OkStatus();
  }
  if (operand->opcode() == Opcode::kTranspose) {
    const std::vector<int64_t>& inner = operand->attrs().dimensions;
    std::vector<int64_t> composed;
    for (int64_t p : perm) composed.push_back(inner[p]);
    Instruction* made = AddTranspose(operand->operand(0), composed);
    return ReplaceWithNew(transpose, made);
  }
  if (RemoveReshapeTransposeChain(transpose)) return absl::OkStatus();
  // transpose(dot(a, b)) => dot(b, a) for a canonical dot whose last two
  // dims are swapped.
  if (operand->opcode() == Opcode::kDot && operand->user_count() == 1 &&
      operand->attrs().dot_dimension_numbers.has_value() && Rewritable(operand)) {
    const DotDimensionNumbers& dn = *operand->attrs().dot_dimension_numbers;
    Instruction* lhs = operand->operand(0);
    Instruction* rhs = operand->operand(1);
    const int64_t rank = operand->shape().rank();
    const int64_t nb = static_cast<int64_t>(dn.lhs_batch_dimensions.size());
    std::vector<int64_t> sorted_batch = dn.lhs_batch_dimensions;
    std::sort(sorted_batch.begin(), sorted_batch.end());
    bool batch_is_iota = true;
    for (int64_t i = 0; i < nb; ++i) batch_is_iota &= sorted_batch[i] == i;
    bool canonical =
        dn.lhs_batch_dimensions == dn.rhs_batch_dimensions && batch_is_iota &&
        !dn.lhs_contracting_dimensions.empty() &&
        static_cast<int64_t>(dn.lhs_contracting_dimensions.size()) + nb + 1 ==
            lhs->shape().rank() &&
        !dn.rhs_contracting_dimensions.empty() &&
        static_cast<int64_t>(dn.rhs_contracting_dimensions.size()) + nb + 1 == rhs->shape().rank();
    if (canonical && rank >= 2) {
      std::vector<int64_t> expected(rank);
      std::iota(expected.begin(), expected.end(), 0);
      std::swap(expected[rank - 1], expected[rank - 2]);
      if (perm == expected) {
        DotDimensionNumbers swapped = dn;
        std::swap(swapped.lhs_contracting_dimensions, swapped.rhs_contracting_dimensions);
        auto clone = operand->CloneWithNewOperands({rhs, lhs}, "");
        clone->set_name("");
        clone->mutable_attrs().dot_dimension_numbers = swapped;
        std::vector<Precision>& precision = clone->mutable_attrs().operand_precision;
        if (precision.size() == 2) std::swap(precision[0], precision[1]);
        clone->set_shape(transpose->shape());
        Instruction* made = computation_->AddInstruction(std::move(clone));
        return ReplaceWithNew(transpose, made);
      }
    }
  }
  // A transpose that only moves size-1 dims is a reshape.
  {
    std::vector<int64_t> non_degenerate;
    int64_t degenerate = 0;
    for (int64_t i = 0; i < static_cast<int64_t>(perm.size()); ++i) {
      if (transpose->shape().dimensions(i) != 1) {
        non_degenerate.push_back(perm[i]);
      } else {
        ++degenerate;
      }
    }
    if (degenerate > 0 && IsSortedDims(non_degenerate)) {
      return ReplaceWithNew(transpose, AddReshape(operand, transpose->shape()));
    }
  }
  absl::StatusOr<bool> done = RewriteDepthToSpaceAsSliceConcat(transpose);
  if (!done.ok() || *done) return done.status();
  done = SimplifyTransposeOfBroadcast(transpose);
  if (!done.ok()) return done.status();
  return absl::OkStatus();
}

// reshape(transpose(reshape(x))) where the inner reshape splits one dim of x
// into (H, C), the transpose moves H to an earlier position t, and the outer
// reshape merges H into dim t-1: the same as concatenating the H slices of x
// along dim s (C wide each) on dim t. The outer reshape is kept with the
// concatenate as its operand; the transpose and inner reshape are left dead
// (as XLA does) for DCE.
absl::StatusOr<bool> Visitor::RewriteDepthToSpaceAsSliceConcat(Instruction* transpose) {
  // XLA bounds the number of slices (kMaxChunksForTransformation).
  constexpr int64_t kMaxChunks = 5;
  if (!options_.rewrite_reshape_transpose_as_slice_concatenate || transpose->user_count() != 1) {
    return false;
  }
  Instruction* outer = transpose->users()[0];
  Instruction* inner = transpose->operand(0);
  if (outer->opcode() != Opcode::kReshape || inner->opcode() != Opcode::kReshape ||
      !Rewritable(outer)) {
    return false;
  }
  Instruction* x = inner->operand(0);
  const auto& xd = x->shape().dimensions();
  const auto& split = inner->shape().dimensions();
  const int64_t rank = x->shape().rank();
  if (static_cast<int64_t>(split.size()) != rank + 1) return false;
  // The split dim s: the first that differs, with x[s] = split[s] * split[s+1]
  // and every later dim shifted by one.
  int64_t s = 0;
  while (s < rank && split[s] == xd[s]) ++s;
  if (s == rank || xd[s] != split[s] * split[s + 1]) return false;
  for (int64_t d = s + 1; d < rank; ++d) {
    if (split[d + 1] != xd[d]) return false;
  }
  const int64_t chunks = split[s];
  const int64_t chunk_size = split[s + 1];
  if (chunks > kMaxChunks) return false;
  const std::vector<int64_t>& perm = transpose->attrs().dimensions;
  const int64_t t = std::find(perm.begin(), perm.end(), s) - perm.begin();
  if (t == s || t == s + 1 || t == 0) return false;
  for (int64_t p = 0; p <= rank; ++p) {
    if (p == t) continue;
    const int64_t expected = p - (p > t ? 1 : 0) + (p > s ? 1 : 0);
    if (perm[p] != expected) return false;
  }
  const auto& od = outer->shape().dimensions();
  if (static_cast<int64_t>(od.size()) != rank) return false;
  for (int64_t d = 0; d < rank; ++d) {
    const int64_t expected = d == t - 1 ? xd[d] * chunks : (d == s ? xd[d] / chunks : xd[d]);
    if (od[d] != expected) return false;
  }
  std::vector<Instruction*> slices;
  for (int64_t i = 0; i < chunks; ++i) {
    std::vector<SliceDimension> sl;
    for (int64_t d = 0; d < rank; ++d) {
      sl.push_back(d == s ? SliceDimension{i * chunk_size, (i + 1) * chunk_size, 1}
                          : SliceDimension{0, xd[d], 1});
    }
    slices.push_back(AddSlice(x, sl));
  }
  HLOGYM_ASSIGN(concat, MakeConcatenate(slices, t));
  outer->ReplaceOperandWith(0, concat);
  MarkChanged();
  return true;
}

// ================================== slice ===================================

absl::Status Visitor::HandleSlice(Instruction* slice) {
  Instruction* operand = slice->operand(0);
  const Shape& shape = slice->shape();
  const std::vector<SliceDimension>& sl = slice->attrs().slice;
  if (ReplaceIfCompatible(slice, operand)) return absl::OkStatus();
  const int64_t rank = shape.rank();

  if (operand->opcode() == Opcode::kPad) {
    Instruction* pad = operand;
    Instruction* pad_operand = pad->operand(0);
    bool undoes_pad = true, inside_pad = true, in_padding = false;
    std::vector<SliceDimension> moved = sl;
    for (int64_t i = 0; i < rank; ++i) {
      const SliceDimension& s = sl[i];
      const PaddingDimension& p = pad->attrs().padding[i];
      const int64_t edge = pad->shape().dimensions(i) - p.high;
      if (s.limit <= p.low || s.start >= edge) {
        in_padding = true;
        break;
      }
      if (s.start != p.low || s.stride - 1 != p.interior) undoes_pad = false;
      if (s.start < p.low || s.limit > edge || p.interior != 0 || s.stride != 1) {
        inside_pad = false;
      }
      moved[i].start -= p.low;
      moved[i].limit -= p.low;
    }
    if (in_padding) {
      return ReplaceWithNew(slice, AddBroadcast(pad->operand(1), shape, {}));
    }
    if (undoes_pad && ReplaceIfCompatible(slice, pad_operand)) return absl::OkStatus();
    if (inside_pad) return ReplaceWithNew(slice, AddSlice(pad_operand, moved));
  }
  // slice(slice(x)) => slice(x), both unstrided.
  if (operand->opcode() == Opcode::kSlice && IsUnstridedSlice(slice) && IsUnstridedSlice(operand)) {
    std::vector<SliceDimension> merged = sl;
    for (int64_t i = 0; i < rank; ++i) {
      merged[i].start += operand->attrs().slice[i].start;
      merged[i].limit += operand->attrs().slice[i].start;
    }
    return ReplaceWithNew(slice, AddSlice(operand->operand(0), merged));
  }
  if (operand->opcode() == Opcode::kBroadcast) {
    const std::vector<int64_t>& bdims = operand->attrs().dimensions;
    bool only_broadcast_dims_sliced = true;
    for (int64_t d : bdims) {
      if (sl[d].start != 0 || sl[d].stride != 1 || sl[d].limit != operand->shape().dimensions(d)) {
        only_broadcast_dims_sliced = false;
      }
    }
    if (only_broadcast_dims_sliced) {
      return ReplaceWithNew(slice, AddBroadcast(operand->operand(0), shape, bdims));
    }
  }
  // A one-element rank-1 slice of a concatenate reads one operand.
  if (shape.ElementCount() == 1 && rank == 1 && operand->opcode() == Opcode::kConcatenate) {
    int64_t start = 0;
    for (Instruction* piece : operand->operands()) {
      const int64_t size = piece->shape().dimensions(0);
      if (start + size > sl[0].start) {
        if (ReplaceIfCompatible(slice, piece)) return absl::OkStatus();
        std::vector<SliceDimension> inner = {{sl[0].start - start, sl[0].start - start + 1, 1}};
        return ReplaceWithNew(slice, AddSlice(piece, inner));
      }
      start += size;
    }
  }
  // slice(broadcast(x)) => broadcast(slice(x))
  if (operand->opcode() == Opcode::kBroadcast) {
    Instruction* x = operand->operand(0);
    std::vector<SliceDimension> inner;
    for (int64_t d : operand->attrs().dimensions) inner.push_back(sl[d]);
    Instruction* sliced = AddSlice(x, inner);
    return ReplaceWithNew(slice, AddBroadcast(sliced, shape, operand->attrs().dimensions));
  }
  // Slices of a concatenate that read one operand or a sub-range of them.
  if (operand->opcode() == Opcode::kConcatenate && IsUnstridedSlice(slice)) {
    const int64_t dim = operand->attrs().dimensions[0];
    const int64_t slice_start = sl[dim].start, slice_limit = sl[dim].limit;
    int64_t piece_start = 0;
    std::optional<int64_t> first, last;
    int64_t concat_start = 0;
    for (int64_t i = 0; i < operand->operand_count(); ++i) {
      const int64_t size = operand->operand(i)->shape().dimensions(dim);
      if (!first && piece_start <= slice_start && piece_start + size > slice_start) {
        first = i;
        concat_start = piece_start;
      }
      piece_start += size;
      if (!last && piece_start >= slice_limit) {
        last = i + 1;
        break;
      }
    }
    if (first && last) {
      if (*first + 1 == *last && operand->operand(*first)->shape().Compatible(shape) &&
          ReplaceIfCompatible(slice, operand->operand(*first))) {
        return absl::OkStatus();
      }
      if (*last - *first < operand->operand_count()) {
        Instruction* source = operand->operand(*first);
        if (*first + 1 != *last) {
          std::vector<Instruction*> pieces(operand->operands().begin() + *first,
                                           operand->operands().begin() + *last);
          std::vector<int64_t> dims = operand->shape().dimensions();
          dims[dim] = 0;
          for (Instruction* p : pieces) dims[dim] += p->shape().dimensions(dim);
          Instruction* concat =
              Add(Opcode::kConcatenate,
                  MakeShapeLike(operand->shape().element_type(), dims, operand->shape()), pieces);
          concat->mutable_attrs().dimensions = {dim};
          source = concat;
        }
        std::vector<SliceDimension> inner = sl;
        inner[dim].start = slice_start - concat_start;
        inner[dim].limit = inner[dim].start + shape.dimensions(dim);
        return ReplaceWithNew(slice, AddSlice(source, inner));
      }
    }
  }
  // slice(reshape(x)) => reshape(slice(x)) where the slice keeps a prefix of
  // the major dimension alone: its elements are then a prefix of x's too,
  // which a slice of x's minor dimensions (all of them, then part of one)
  // keeps, as XLA's TryToReorderSliceAndReshape finds.
  if (operand->opcode() == Opcode::kReshape && IsUnstridedSlice(slice) && rank > 0 &&
      sl[0].start == 0 && shape.ElementCount() > 0) {
    bool only_a_major_prefix = true;
    for (int64_t i = 1; i < rank; ++i) {
      only_a_major_prefix &= sl[i].start == 0 && sl[i].limit == operand->shape().dimensions(i);
    }
    Instruction* x = operand->operand(0);
    std::vector<SliceDimension> inner;
    int64_t left = shape.ElementCount();
    for (int64_t i = x->shape().rank() - 1; i >= 0 && only_a_major_prefix; --i) {
      const int64_t size = x->shape().dimensions(i);
      if (left >= size) {
        only_a_major_prefix = size > 0 && left % size == 0;
        if (only_a_major_prefix) left /= size;
        inner.insert(inner.begin(), {0, size, 1});
      } else {
        inner.insert(inner.begin(), {0, left, 1});
        left = 1;
      }
    }
    if (only_a_major_prefix) return ReplaceWithNew(slice, AddReshape(AddSlice(x, inner), shape));
  }
  // slice(reverse(x)) => reverse(slice(x)): the slice mirrored along the
  // reversed dimensions (from its last picked element, stride kept), as XLA's
  // TryToReorderSliceAndReverse does; where every reversed dimension is left
  // with one element, the slice alone (the reverse does nothing there).
  if (operand->opcode() == Opcode::kReverse) {
    const std::vector<int64_t>& reversed = operand->attrs().dimensions;
    std::vector<SliceDimension> mirrored = sl;
    bool reverses_anything = false;
    for (int64_t d : reversed) {
      const SliceDimension& s = sl[d];
      const int64_t last = s.start + (s.limit - s.start - 1) / s.stride * s.stride;
      const int64_t size = operand->shape().dimensions(d);
      mirrored[d].start = size - 1 - last;
      mirrored[d].limit = size - s.start;
      reverses_anything |= shape.dimensions(d) > 1;
    }
    Instruction* sliced = AddSlice(operand->operand(0), mirrored);
    if (!reverses_anything) return ReplaceWithNew(slice, sliced);
    Instruction* ops[] = {sliced};
    Instruction* made = Add(Opcode::kReverse, shape, ops);
    made->mutable_attrs().dimensions = reversed;
    return ReplaceWithNew(slice, made);
  }
  // Strides that pick a single element.
  {
    bool redundant = false;
    std::vector<SliceDimension> fixed = sl;
    for (SliceDimension& s : fixed) {
      if (s.stride != 1 && (s.stride >= s.limit || s.start + s.stride >= s.limit)) {
        s.limit = s.start + 1;
        s.stride = 1;
        redundant = true;
      }
    }
    if (redundant) return ReplaceWithNew(slice, AddSlice(operand, fixed));
  }
  return absl::OkStatus();
}

// =============================== concatenate ================================

absl::Status Visitor::HandleConcatenate(Instruction* concat) {
  const std::vector<Instruction*> operands = concat->operands();
  const Shape& shape = concat->shape();
  const int64_t dim = concat->attrs().dimensions[0];
  if (operands.size() == 1) {
    ReplaceIfCompatible(concat, operands[0]);
    return absl::OkStatus();
  }
  std::vector<Instruction*> nonempty;
  for (Instruction* operand : operands) {
    if (!IsZeroElementArray(operand->shape())) nonempty.push_back(operand);
  }
  if (nonempty.size() < operands.size()) {
    if (nonempty.empty()) {
      ReplaceIfCompatible(concat, operands[0]);
      return absl::OkStatus();
    }
    if (nonempty.size() == 1) {
      ReplaceIfCompatible(concat, nonempty[0]);
      return absl::OkStatus();
    }
    Instruction* made = Add(Opcode::kConcatenate, shape, nonempty);
    made->mutable_attrs().dimensions = {dim};
    return ReplaceWithNew(concat, made);
  }
  // concat(x, concat(y, z)) => concat(x, y, z) along the same dimension.
  std::vector<Instruction*> flat;
  for (Instruction* operand : operands) {
    if (operand->opcode() == Opcode::kConcatenate && operand->attrs().dimensions[0] == dim) {
      for (Instruction* inner : operand->operands()) flat.push_back(inner);
    } else {
      flat.push_back(operand);
    }
  }
  if (flat.size() != operands.size()) {
    Instruction* made = Add(Opcode::kConcatenate, shape, flat);
    made->mutable_attrs().dimensions = {dim};
    return ReplaceWithNew(concat, made);
  }
  // Merge adjacent unstrided slices of one operand.
  std::vector<Instruction*> merged;
  for (size_t i = 0; i < operands.size();) {
    Instruction* first = operands[i];
    if (first->opcode() != Opcode::kSlice || !IsUnstridedSlice(first)) {
      merged.push_back(first);
      ++i;
      continue;
    }
    int64_t end = first->attrs().slice[dim].limit;
    size_t j = i + 1;
    while (j < operands.size()) {
      Instruction* next = operands[j];
      if (next->opcode() != Opcode::kSlice || !IsUnstridedSlice(next) ||
          next->operand(0) != first->operand(0) || next->attrs().slice[dim].start != end) {
        break;
      }
      bool same_starts = true;
      for (size_t k = 0; k < next->attrs().slice.size(); ++k) {
        if (static_cast<int64_t>(k) != dim &&
            next->attrs().slice[k].start != first->attrs().slice[k].start) {
          same_starts = false;
        }
      }
      if (!same_starts) break;
      end = next->attrs().slice[dim].limit;
      ++j;
    }
    if (j - i > 1) {
      std::vector<SliceDimension> s = first->attrs().slice;
      s[dim].limit = end;
      merged.push_back(AddSlice(first->operand(0), s));
    } else {
      merged.push_back(first);
    }
    i = j;
  }
  if (merged.size() < operands.size()) {
    if (merged.size() == 1) return ReplaceWithNew(concat, merged[0]);
    Instruction* made = Add(Opcode::kConcatenate, shape, merged);
    made->mutable_attrs().dimensions = {dim};
    return ReplaceWithNew(concat, made);
  }
  // Two operands, one a broadcast scalar: a pad.
  if (operands.size() == 2) {
    const bool low = IsScalarBroadcast(operands[0]);
    const bool high = IsScalarBroadcast(operands[1]);
    if (!low && !high) return absl::OkStatus();
    std::vector<PaddingDimension> padding(shape.rank());
    if (low) {
      padding[dim].low = operands[0]->shape().dimensions(dim);
    } else {
      padding[dim].high = operands[1]->shape().dimensions(dim);
    }
    Instruction* padded = low ? operands[1] : operands[0];
    Instruction* value = low ? operands[0]->operand(0) : operands[1]->operand(0);
    Instruction* ops[] = {padded, value};
    Instruction* pad = Add(Opcode::kPad, shape, ops);
    pad->mutable_attrs().padding = std::move(padding);
    return ReplaceWithNew(concat, pad);
  }
  // N copies of one operand of size 1 along `dim`: a broadcast.
  if (std::all_of(operands.begin(), operands.end(),
                  [&](Instruction* op) { return op == operands[0]; }) &&
      operands[0]->shape().dimensions(dim) == 1) {
    std::vector<int64_t> dims;
    std::vector<int64_t> bdims;
    for (int64_t i = 0; i < shape.rank(); ++i) {
      if (i == dim) continue;
      dims.push_back(operands[0]->shape().dimensions(i));
      bdims.push_back(i);
    }
    Instruction* reshape =
        AddReshape(operands[0], MakeShapeLike(shape.element_type(), dims, shape));
    return ReplaceWithNew(concat, AddBroadcast(reshape, shape, bdims));
  }
  return absl::OkStatus();
}

// =================================== pad ====================================

absl::Status Visitor::HandlePad(Instruction* pad) {
  Instruction* operand = pad->operand(0);
  const Shape& shape = pad->shape();
  const std::vector<PaddingDimension>& padding = pad->attrs().padding;
  if (IsZeroElementArray(operand->shape())) {
    return ReplaceWithNew(pad, AddBroadcast(pad->operand(1), shape, {}));
  }
  // Interior padding of size-1 dimensions does nothing.
  {
    bool cleared = false;
    std::vector<PaddingDimension> fixed = padding;
    for (int64_t i = 0; i < shape.rank(); ++i) {
      if (fixed[i].interior > 0 && operand->shape().dimensions(i) == 1) {
        fixed[i].interior = 0;
        cleared = true;
      }
    }
    if (cleared) {
      Instruction* ops[] = {operand, pad->operand(1)};
      Instruction* made = Add(Opcode::kPad, shape, ops);
      made->mutable_attrs().padding = std::move(fixed);
      return ReplaceWithNew(pad, made);
    }
  }
  bool all_zero = true, has_negative = false;
  std::vector<int64_t> padded;  // dims with edge or interior padding
  for (int64_t i = 0; i < shape.rank(); ++i) {
    const PaddingDimension& p = padding[i];
    if (p.low < 0 || p.high < 0) has_negative = true;
    if (p.low != 0 || p.high != 0) all_zero = false;
    if (p.low != 0 || p.high != 0 || p.interior != 0) padded.push_back(i);
  }
  if (all_zero && ReplaceIfCompatible(pad, operand)) return absl::OkStatus();
  // pad(broadcast(x)) => broadcast(pad(broadcast'(x))) where some dimension
  // is not padded and x's dimensions all are: the pad runs over the padded
  // dimensions alone. As in XLA, the one-use broadcast is narrowed in place.
  if (static_cast<int64_t>(padded.size()) < shape.rank() &&
      operand->opcode() == Opcode::kBroadcast && operand->user_count() == 1 &&
      operand->operand(0)->shape().rank() <= static_cast<int64_t>(padded.size())) {
    std::vector<int64_t> inner_dims;
    for (int64_t d : operand->attrs().dimensions) {
      auto it = std::find(padded.begin(), padded.end(), d);
      if (it == padded.end()) break;
      inner_dims.push_back(it - padded.begin());
    }
    if (inner_dims.size() == operand->attrs().dimensions.size()) {
      std::vector<int64_t> narrow_dims, padded_dims;
      std::vector<PaddingDimension> inner_padding;
      for (int64_t d : padded) {
        narrow_dims.push_back(operand->shape().dimensions(d));
        padded_dims.push_back(shape.dimensions(d));
        inner_padding.push_back(padding[d]);
      }
      operand->set_shape(
          MakeShapeLike(operand->shape().element_type(), narrow_dims, operand->shape()));
      operand->mutable_attrs().dimensions = std::move(inner_dims);
      Instruction* ops[] = {operand, pad->operand(1)};
      Instruction* inner =
          Add(Opcode::kPad, MakeShapeLike(shape.element_type(), padded_dims, shape), ops);
      inner->mutable_attrs().padding = std::move(inner_padding);
      return ReplaceWithNew(pad, AddBroadcast(inner, shape, padded));
    }
  }
  if (has_negative && options_.enable_negative_padding_replacement) {
    std::vector<PaddingDimension> nonnegative = padding;
    std::vector<int64_t> dims;
    for (int64_t i = 0; i < shape.rank(); ++i) {
      nonnegative[i].low = std::max<int64_t>(0, nonnegative[i].low);
      nonnegative[i].high = std::max<int64_t>(0, nonnegative[i].high);
      const int64_t n = operand->shape().dimensions(i);
      dims.push_back(nonnegative[i].low + nonnegative[i].high + n +
                     std::max<int64_t>(0, n - 1) * nonnegative[i].interior);
    }
    Instruction* ops[] = {operand, pad->operand(1)};
    Instruction* new_pad = Add(Opcode::kPad, MakeShapeLike(shape.element_type(), dims, shape), ops);
    new_pad->mutable_attrs().padding = nonnegative;
    std::vector<SliceDimension> sl;
    for (int64_t i = 0; i < shape.rank(); ++i) {
      int64_t start = padding[i].low < 0 ? -padding[i].low : 0;
      int64_t limit = dims[i] + (padding[i].high < 0 ? padding[i].high : 0);
      sl.push_back({start, limit, 1});
    }
    return ReplaceWithNew(pad, AddSlice(new_pad, sl));
  }
  return absl::OkStatus();
}

// ================================= reverse ==================================

absl::Status Visitor::HandleReverse(Instruction* reverse) {
  const std::vector<int64_t>& dims = reverse->attrs().dimensions;
  if (std::all_of(dims.begin(), dims.end(),
                  [&](int64_t d) { return reverse->shape().dimensions(d) == 1; })) {
    ReplaceIfCompatible(reverse, reverse->operand(0));
    return absl::OkStatus();
  }
  Instruction* inner = reverse->operand(0);
  if (inner->opcode() == Opcode::kReverse) {
    std::vector<int64_t> a = dims, b = inner->attrs().dimensions;
    std::sort(a.begin(), a.end());
    std::sort(b.begin(), b.end());
    std::vector<int64_t> sym;
    std::set_symmetric_difference(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(sym));
    if (sym.empty()) {
      ReplaceIfCompatible(reverse, inner->operand(0));
      return absl::OkStatus();
    }
    Instruction* ops[] = {inner->operand(0)};
    Instruction* made = Add(Opcode::kReverse, reverse->shape(), ops);
    made->mutable_attrs().dimensions = sym;
    return ReplaceWithNew(reverse, made);
  }
  // reverse(reshape(x)) => reshape(reverse(x)) for a reshape that only adds
  // 1s, the reversed dimensions taken back to x's (size-1 ones dropped); as
  // the pinned XLA does, also where the reshape has other users (not where it
  // drops 1s: a squeezed convolution kernel's reverse stays).
  std::optional<DegenerateReshape> degenerate =
      inner->opcode() == Opcode::kReshape ? ReshapeMerelyInsertsOrDeletes1SizedDimensions(
                                                inner->operand(0)->shape(), inner->shape())
                                          : std::nullopt;
  if (degenerate && degenerate->deleted.empty() && !degenerate->inserted.empty()) {
    Instruction* x = inner->operand(0);
    const std::vector<std::pair<int64_t, int64_t>> unmodified =
        DimensionsUnmodifiedByReshape(x->shape(), inner->shape());
    std::vector<int64_t> x_dims;
    for (int64_t d : dims) {
      if (reverse->shape().dimensions(d) == 1) continue;
      for (const auto& [in, out] : unmodified) {
        if (out == d) x_dims.push_back(in);
      }
    }
    std::sort(x_dims.begin(), x_dims.end());
    Instruction* ops[] = {x};
    Instruction* reversed = Add(Opcode::kReverse, x->shape(), ops);
    reversed->mutable_attrs().dimensions = std::move(x_dims);
    return ReplaceWithNew(reverse, AddReshape(reversed, reverse->shape()));
  }
  return absl::OkStatus();
}

// ============================== dynamic slices ==============================

namespace {

bool IsIntegralScalarConstant(const Instruction* hlo) {
  return hlo->opcode() == Opcode::kConstant && IsEffectiveScalarConstant(hlo) &&
         IsIntegralType(hlo->shape().element_type());
}

}  // namespace

Instruction* Visitor::WithWholeDimensionStartsZeroed(Instruction* hlo, int64_t first_start,
                                                     const Shape& window, const Shape& whole) {
  std::vector<int64_t> to_zero;
  for (int64_t d = 0; d < window.rank(); ++d) {
    Instruction* index = hlo->operand(first_start + d);
    if (!(IsConstant(index) && IsAll(index, 0)) && window.dimensions(d) == whole.dimensions(d)) {
      to_zero.push_back(d);
    }
  }
  if (to_zero.empty()) return nullptr;
  // One zero of the first start's type for every such dimension, as XLA makes it (the
  // instruction count follows); a start of another type, which XLA's verifier would reject,
  // gets a zero of its own.
  Instruction* zero = ScalarLike(hlo->operand(first_start)->shape(), 0);
  std::vector<Instruction*> ops = hlo->operands();
  for (int64_t d : to_zero) {
    Instruction*& start = ops[first_start + d];
    start = start->shape().element_type() == zero->shape().element_type()
                ? zero
                : ScalarLike(start->shape(), 0);
  }
  auto clone = hlo->CloneWithNewOperands(ops, "");
  clone->set_name("");
  return computation_->AddInstruction(std::move(clone));
}

absl::Status Visitor::HandleDynamicSlice(Instruction* ds) {
  Instruction* operand = ds->operand(0);
  const Shape& shape = ds->shape();
  if (shape.rank() == 0 || operand->shape().Compatible(shape)) {
    ReplaceIfCompatible(ds, operand);
    return absl::OkStatus();
  }
  const int64_t rank = operand->shape().rank();
  const std::vector<int64_t>& sizes = ds->attrs().dynamic_slice_sizes;
  if (Instruction* zeroed = WithWholeDimensionStartsZeroed(ds, 1, shape, operand->shape())) {
    return ReplaceWithNew(ds, zeroed);
  }
  // ds(broadcast(x)) => broadcast(ds(x))
  if (operand->opcode() == Opcode::kBroadcast) {
    Instruction* x = operand->operand(0);
    const std::vector<int64_t>& bdims = operand->attrs().dimensions;
    Instruction* inner = x;
    if (!bdims.empty()) {
      std::vector<Instruction*> ops = {x};
      std::vector<int64_t> new_sizes;
      for (int64_t d : bdims) {
        ops.push_back(ds->operand(1 + d));
        new_sizes.push_back(sizes[d]);
      }
      inner = Add(Opcode::kDynamicSlice,
                  MakeShapeLike(x->shape().element_type(), new_sizes, x->shape()), ops);
      inner->mutable_attrs().dynamic_slice_sizes = new_sizes;
    }
    return ReplaceWithNew(ds, AddBroadcast(inner, shape, bdims));
  }
  // ds(reshape(x)) for a reshape that only adds or drops 1s.
  if (operand->opcode() == Opcode::kReshape &&
      ReshapeMerelyInsertsOrDeletes1SizedDimensions(operand->operand(0)->shape(),
                                                    operand->shape())) {
    Instruction* x = operand->operand(0);
    auto unmodified = DimensionsUnmodifiedByReshape(x->shape(), operand->shape());
    Instruction* zero = ScalarLike(ds->operand(1)->shape(), 0);
    std::vector<Instruction*> starts(x->shape().rank(), zero);
    std::vector<int64_t> new_sizes(x->shape().rank(), 1);
    for (const auto& [in, out] : unmodified) {
      if (x->shape().dimensions(in) == 1) continue;
      starts[in] = ds->operand(1 + out);
      new_sizes[in] = sizes[out];
    }
    std::vector<Instruction*> ops = {x};
    ops.insert(ops.end(), starts.begin(), starts.end());
    Instruction* inner =
        Add(Opcode::kDynamicSlice, MakeShapeLike(shape.element_type(), new_sizes, shape), ops);
    inner->mutable_attrs().dynamic_slice_sizes = new_sizes;
    return ReplaceWithNew(ds, AddReshape(inner, shape));
  }
  // ds(transpose(x)) => transpose(ds(x))
  if (operand->opcode() == Opcode::kTranspose) {
    const std::vector<int64_t>& perm = operand->attrs().dimensions;
    Instruction* x = operand->operand(0);
    std::vector<int64_t> inverse = InversePermutation(perm);
    std::vector<Instruction*> ops = {x};
    std::vector<int64_t> new_sizes;
    for (int64_t i = 0; i < rank; ++i) {
      ops.push_back(ds->operand(1 + inverse[i]));
      new_sizes.push_back(sizes[inverse[i]]);
    }
    Instruction* inner =
        Add(Opcode::kDynamicSlice, MakeShapeLike(shape.element_type(), new_sizes, shape), ops);
    inner->mutable_attrs().dynamic_slice_sizes = new_sizes;
    Instruction* t_ops[] = {inner};
    Instruction* made = Add(Opcode::kTranspose, shape, t_ops);
    made->mutable_attrs().dimensions = perm;
    return ReplaceWithNew(ds, made);
  }
  // Constant indices => slice (indices clamped into range).
  if (!IsConstant(operand)) {
    bool all_constant = true;
    for (int64_t d = 0; d < rank; ++d) all_constant &= IsIntegralScalarConstant(ds->operand(d + 1));
    if (all_constant) {
      std::vector<SliceDimension> sl;
      for (int64_t d = 0; d < rank; ++d) {
        const Instruction* index = ds->operand(d + 1);
        const PrimitiveType type = index->shape().element_type();
        int64_t offset = IsUnsignedIntegralType(type)
                             ? static_cast<int64_t>(std::min<uint64_t>(
                                   index->literal().GetAsUint64(0), uint64_t{1} << 62))
                             : index->literal().GetAsInt64(0);
        if (offset < 0) return absl::OkStatus();
        const int64_t max_offset = operand->shape().dimensions(d) - shape.dimensions(d);
        offset = std::min(max_offset, offset);
        sl.push_back({offset, offset + shape.dimensions(d), 1});
      }
      return ReplaceWithNew(ds, AddSlice(operand, sl));
    }
  }
  // ds(iota * broadcast(s), i) of one s32/u32 element (a partition's offset
  // from its table) => reshape(convert(clamp(0, i, size - 1)) * s).
  if (rank == 1 && shape.dimensions(0) == 1 &&
      (shape.element_type() == PrimitiveType::kS32 ||
       shape.element_type() == PrimitiveType::kU32)) {
    Instruction* iota = operand;
    Instruction* stride = nullptr;
    if (iota->opcode() == Opcode::kMultiply && iota->operand(1)->opcode() == Opcode::kBroadcast &&
        iota->operand(1)->attrs().dimensions.empty() &&
        iota->operand(1)->operand(0)->shape().rank() == 0) {
      stride = iota->operand(1)->operand(0);
      iota = iota->operand(0);
    }
    Instruction* index = ds->operand(1);
    const PrimitiveType index_type = index->shape().element_type();
    if (iota->opcode() == Opcode::kIota &&
        (index_type == PrimitiveType::kS32 || index_type == PrimitiveType::kU32)) {
      Instruction* low = AddScalarConstant(index_type, 0, index->shape());
      Instruction* high =
          AddScalarConstant(index_type, operand->shape().dimensions(0) - 1, index->shape());
      Instruction* clamp_ops[] = {low, index, high};
      Instruction* value = Add(Opcode::kClamp, index->shape(), clamp_ops);
      if (index_type != shape.element_type()) value = AddConvert(value, shape.element_type());
      if (stride != nullptr) value = AddBinary(Opcode::kMultiply, value->shape(), value, stride);
      return ReplaceWithNew(ds, AddReshape(value, shape));
    }
  }
  // ds(ds(x, inner), outer) => ds(x, outer + clamp(0, inner, dim(x) - size)), changed in place;
  // the inner slice stays for its other users, or for DCE. As XLA does, the inner index is
  // bounded by the outer slice's size, and every dimension gets its add and clamp (constant
  // ones fold later).
  if (operand->opcode() == Opcode::kDynamicSlice) {
    Instruction* x = operand->operand(0);
    std::vector<Instruction*> starts;
    for (int64_t d = 0; d < rank; ++d) {
      Instruction* outer = ds->operand(1 + d);
      Instruction* inner = operand->operand(1 + d);
      const PrimitiveType inner_type = inner->shape().element_type();
      Instruction* clamp_ops[] = {
          AddScalarConstant(inner_type, 0, inner->shape()), inner,
          AddScalarConstant(inner_type, x->shape().dimensions(d) - sizes[d], inner->shape())};
      Instruction* clamped = Add(Opcode::kClamp, inner->shape(), clamp_ops);
      if (inner_type != outer->shape().element_type()) {
        clamped = AddConvert(clamped, outer->shape().element_type());
      }
      starts.push_back(AddBinary(Opcode::kAdd, outer->shape(), outer, clamped));
    }
    ds->ReplaceOperandWith(0, x);
    for (int64_t d = 0; d < rank; ++d) ds->ReplaceOperandWith(1 + d, starts[d]);
    MarkChanged();
  }
  return absl::OkStatus();
}

absl::Status Visitor::HandleDynamicUpdateSlice(Instruction* dus) {
  Instruction* base = dus->operand(0);
  Instruction* update = dus->operand(1);
  const Shape& shape = dus->shape();
  const int64_t rank = shape.rank();
  // dus(broadcast(scalar), update, constant indices) => pad(update, scalar)
  if (options_.enable_dynamic_update_slice_to_pad_replacement && IsScalarBroadcast(base) &&
      dus->operand_count() == 2 + rank) {
    bool ok = true;
    std::vector<PaddingDimension> padding(rank);
    for (int64_t d = 0; d < rank && ok; ++d) {
      const Instruction* index = dus->operand(2 + d);
      if (!IsIntegralScalarConstant(index) || index->shape().rank() != 0) {
        ok = false;
        break;
      }
      int64_t start = index->literal().GetAsInt64(0);
      const int64_t width = update->shape().dimensions(d);
      const int64_t full = shape.dimensions(d);
      start = std::max<int64_t>(0, start);
      start = std::min<int64_t>(full - width, start);
      padding[d] = {start, full - (start + width), 0};
    }
    if (ok) {
      Instruction* ops[] = {update, base->operand(0)};
      Instruction* pad = Add(Opcode::kPad, shape, ops);
      pad->mutable_attrs().padding = std::move(padding);
      return ReplaceWithNew(dus, pad);
    }
  }
  if (shape.Compatible(update->shape())) {
    ReplaceIfCompatible(dus, update);
    return absl::OkStatus();
  }
  if (Instruction* zeroed = WithWholeDimensionStartsZeroed(dus, 2, update->shape(), shape)) {
    return ReplaceWithNew(dus, zeroed);
  }
  if (IsZeroElementArray(update->shape())) {
    ReplaceIfCompatible(dus, base);
  }
  return absl::OkStatus();
}

// ================================== gather ==================================

namespace {

// The dims a pad pads (low, high or interior), ascending.
std::vector<int64_t> PaddedDims(const Instruction* pad) {
  std::vector<int64_t> dims;
  const std::vector<PaddingDimension>& padding = pad->attrs().padding;
  for (int64_t d = 0; d < static_cast<int64_t>(padding.size()); ++d) {
    if (padding[d] != PaddingDimension{}) dims.push_back(d);
  }
  return dims;
}

// A gather's passthrough dims, as XLA's sharding utilities define them: each
// operand dim that is neither collapsed nor a batching dim and whose slice is
// the whole dim, mapped to the offset dim it becomes (both ways).
struct Passthrough {
  absl::flat_hash_map<int64_t, int64_t> operand_to_output;
  absl::flat_hash_map<int64_t, int64_t> output_to_operand;
};
Passthrough GatherPassthroughDims(const Instruction* gather) {
  const GatherDimensionNumbers& dnums = *gather->attrs().gather_dimension_numbers;
  const std::vector<int64_t>& slice_sizes = gather->attrs().gather_slice_sizes;
  const Shape& operand = gather->operand(0)->shape();
  Passthrough result;
  int64_t skipped = 0;
  for (int64_t d = 0; d < operand.rank(); ++d) {
    if (absl::c_linear_search(dnums.collapsed_slice_dims, d) ||
        absl::c_linear_search(dnums.operand_batching_dims, d)) {
      ++skipped;
      continue;
    }
    if (slice_sizes[d] != operand.dimensions(d)) continue;
    const int64_t output = dnums.offset_dims[d - skipped];
    result.operand_to_output[d] = output;
    result.output_to_operand[output] = d;
  }
  return result;
}

// For explicit batching dims: the output dim of each start-indices dim (the
// output's non-offset dims follow the start indices' dims in order, the index
// vector dim skipped).
absl::flat_hash_map<int64_t, int64_t> StartIndicesDimToOutputDim(const Instruction* gather) {
  const GatherDimensionNumbers& dnums = *gather->attrs().gather_dimension_numbers;
  absl::flat_hash_map<int64_t, int64_t> result;
  int64_t start_dim = 0;
  for (int64_t output = 0; output < gather->shape().rank(); ++output) {
    if (absl::c_linear_search(dnums.offset_dims, output)) continue;
    if (start_dim == dnums.index_vector_dim) ++start_dim;
    if (absl::c_linear_search(dnums.start_indices_batching_dims, start_dim))
      result[start_dim] = output;
    ++start_dim;
  }
  return result;
}

// gather(pad(x)): whether the gather can read x and pad its result instead.
// Every padded dim must pass through the gather, or be an operand batching
// dim whose start-indices dim the indices (a pad) pad the same way; the
// indices may pad nothing else. Adds the batching dims to `passthrough`.
struct GatherOfPadPlan {
  bool transform = false;
  bool padded_batching_dims = false;
};
GatherOfPadPlan PlanGatherOfPad(const Instruction* gather, const std::vector<int64_t>& padded,
                                Passthrough& passthrough) {
  const GatherDimensionNumbers& dnums = *gather->attrs().gather_dimension_numbers;
  const Instruction* pad = gather->operand(0);
  const Instruction* indices = gather->operand(1);
  std::vector<std::pair<int64_t, int64_t>> batching;  // (operand dim, start-indices dim)
  for (int64_t d : padded) {
    if (passthrough.operand_to_output.contains(d)) continue;
    auto it = std::find(dnums.operand_batching_dims.begin(), dnums.operand_batching_dims.end(), d);
    if (it == dnums.operand_batching_dims.end()) return {};
    const int64_t start_dim =
        dnums.start_indices_batching_dims[it - dnums.operand_batching_dims.begin()];
    if (indices->opcode() != Opcode::kPad ||
        indices->attrs().padding[start_dim] != pad->attrs().padding[d]) {
      return {};
    }
    batching.emplace_back(d, start_dim);
  }
  if (batching.empty()) return {.transform = true};
  if (batching.size() != PaddedDims(indices).size()) return {};
  absl::flat_hash_map<int64_t, int64_t> to_output = StartIndicesDimToOutputDim(gather);
  for (const auto& [operand_dim, start_dim] : batching) {
    const int64_t output = to_output.at(start_dim);
    passthrough.operand_to_output[operand_dim] = output;
    passthrough.output_to_operand[output] = operand_dim;
  }
  return {.transform = true, .padded_batching_dims = true};
}

}  // namespace

Instruction* Visitor::AddGather(const Instruction* gather, Shape shape, Instruction* operand,
                                Instruction* indices, std::vector<int64_t> slice_sizes) {
  Instruction* ops[] = {operand, indices};
  Instruction* made = Add(Opcode::kGather, std::move(shape), ops);
  made->mutable_attrs().gather_dimension_numbers = gather->attrs().gather_dimension_numbers;
  made->mutable_attrs().gather_slice_sizes = std::move(slice_sizes);
  made->mutable_attrs().indices_are_sorted = gather->attrs().indices_are_sorted;
  return made;
}

// A scatter with nothing to scatter is its operands; one whose indices are empty updates the
// whole operand at once: the combiner applied elementwise (a map, which HandleMap then
// inlines), as XLA's HandleScatter does for a single-operand scatter.
absl::Status Visitor::HandleScatter(Instruction* scatter) {
  const int64_t inputs = scatter->operand_count() / 2;  // operands..., indices, updates...
  if (inputs < 1 || scatter->operand_count() != 2 * inputs + 1 ||
      scatter->called_computations().size() != 1) {
    return absl::OkStatus();
  }
  const Instruction* indices = scatter->operand(inputs);
  bool no_updates = true;
  for (int64_t i = inputs + 1; i < scatter->operand_count(); ++i) {
    no_updates &= IsZeroElementArray(scatter->operand(i)->shape());
  }
  if (no_updates) {
    if (inputs == 1) {
      ReplaceIfCompatible(scatter, scatter->operand(0));
      return absl::OkStatus();
    }
    Instruction* tuple = MakeTuple(computation_, std::span(scatter->operands()).first(inputs));
    if (!ReplaceIfCompatible(scatter, tuple)) {
      HLOGYM_RETURN_IF_ERROR(computation_->RemoveInstruction(tuple));
    }
    return absl::OkStatus();
  }
  Instruction* operand = scatter->operand(0);
  Instruction* updates = scatter->operand(2);
  if (inputs != 1 || !IsZeroElementArray(indices->shape()) ||
      !scatter->shape().Compatible(operand->shape()) ||
      !scatter->shape().Compatible(updates->shape())) {
    return absl::OkStatus();
  }
  Instruction* ops[] = {operand, updates};
  return ReplaceWithNew(
      scatter, MakeMap(computation_, scatter->shape(), ops, scatter->called_computations()[0]));
}

absl::Status Visitor::HandleGather(Instruction* gather) {
  if (!gather->attrs().gather_dimension_numbers) return absl::OkStatus();
  const GatherDimensionNumbers& dnums = *gather->attrs().gather_dimension_numbers;
  Instruction* operand = gather->operand(0);
  Instruction* indices = gather->operand(1);
  const Shape& operand_shape = operand->shape();
  if (IsZeroElementArray(operand_shape)) {
    return ReplaceWithNew(gather, ScalarLike(gather->shape(), 0));
  }
  // One element to gather: a broadcast of it.
  if (operand_shape.ElementCount() == 1) {
    Instruction* scalar = operand;
    if (operand_shape.rank() > 0) {
      scalar = AddReshape(operand, MakeShapeLike(operand_shape.element_type(), {}, operand_shape));
    }
    return ReplaceWithNew(gather, AddBroadcast(scalar, gather->shape(), {}));
  }
  // A few elements picked by implicit (trailing) scalar indices: a chain of
  // selects, each taking element i where the index is at least i (so indices
  // out of range clamp, as a gather's do).
  if (operand_shape.rank() == 1 && operand_shape.dimensions(0) <= options_.very_small_gather_size &&
      dnums.index_vector_dim == indices->shape().rank() && dnums.collapsed_slice_dims.size() == 1) {
    auto element = [&](int64_t i) {
      Instruction* slice = AddSlice(operand, {{i, i + 1, 1}});
      Instruction* scalar =
          AddReshape(slice, MakeShapeLike(operand_shape.element_type(), {}, operand_shape));
      return AddBroadcast(scalar, gather->shape(), {});
    };
    Instruction* result = element(0);
    for (int64_t i = 0; i < operand_shape.dimensions(0); ++i) {
      Instruction* at_least_i = AddCompare(
          indices, ScalarLike(indices->shape(), static_cast<double>(i)), ComparisonDirection::kGe);
      Instruction* ops[] = {at_least_i, element(i), result};
      result = Add(Opcode::kSelect, gather->shape(), ops);
    }
    return ReplaceWithNew(gather, result);
  }
  Passthrough passthrough = GatherPassthroughDims(gather);
  // gather(pad(x)) => pad(gather(x)): the padded dims pass through the gather
  // whole, so the gather reads x's and the pad follows it.
  if (operand->opcode() == Opcode::kPad) {
    Instruction* x = operand->operand(0);
    const std::vector<int64_t> padded = PaddedDims(operand);
    const GatherOfPadPlan plan = PlanGatherOfPad(gather, padded, passthrough);
    if (plan.transform) {
      Shape shape = gather->shape();
      std::vector<int64_t> slice_sizes = gather->attrs().gather_slice_sizes;
      for (int64_t d : padded) {
        shape.mutable_dimensions()[passthrough.operand_to_output.at(d)] = x->shape().dimensions(d);
        if (!absl::c_linear_search(dnums.operand_batching_dims, d))
          slice_sizes[d] = x->shape().dimensions(d);
      }
      Instruction* new_indices = plan.padded_batching_dims ? indices->operand(0) : indices;
      Instruction* inner = AddGather(gather, std::move(shape), x, new_indices, slice_sizes);
      std::vector<PaddingDimension> padding(gather->shape().rank());
      for (const auto& [output, operand_dim] : passthrough.output_to_operand) {
        if (absl::c_linear_search(padded, operand_dim))
          padding[output] = operand->attrs().padding[operand_dim];
      }
      Instruction* ops[] = {inner, operand->operand(1)};
      Instruction* made = Add(Opcode::kPad, gather->shape(), ops);
      made->mutable_attrs().padding = std::move(padding);
      return ReplaceWithNew(gather, made);
    }
  }
  // gather(reshape(pad(x))), the reshape a bitcast that keeps every padded dim
  // whole and the gather passing those dims through: the pad moves below the
  // gather of reshape(x).
  if (operand->opcode() == Opcode::kReshape && operand->operand(0)->opcode() == Opcode::kPad &&
      ReshapeIsBitcast(operand->operand(0)->shape(), operand->shape())) {
    Instruction* pad = operand->operand(0);
    Instruction* x = pad->operand(0);
    const std::vector<int64_t> padded = PaddedDims(pad);
    absl::flat_hash_map<int64_t, int64_t> unmodified;  // pad dim -> reshape dim
    for (const auto& [from, to] : DimensionsUnmodifiedByReshape(pad->shape(), operand->shape())) {
      unmodified[from] = to;
    }
    absl::flat_hash_map<int64_t, int64_t> reshape_to_pad;
    bool movable = true;
    for (int64_t d : padded) {
      auto it = unmodified.find(d);
      if (it == unmodified.end() || !passthrough.operand_to_output.contains(it->second)) {
        movable = false;
        break;
      }
      reshape_to_pad[it->second] = d;
    }
    if (movable) {
      Shape reshape_shape = operand->shape();
      Shape shape = gather->shape();
      std::vector<int64_t> slice_sizes = gather->attrs().gather_slice_sizes;
      for (const auto& [reshape_dim, pad_dim] : reshape_to_pad) {
        const int64_t size = x->shape().dimensions(pad_dim);
        reshape_shape.mutable_dimensions()[reshape_dim] = size;
        shape.mutable_dimensions()[passthrough.operand_to_output.at(reshape_dim)] = size;
        slice_sizes[reshape_dim] = size;
      }
      Instruction* new_reshape = AddReshape(x, std::move(reshape_shape));
      Instruction* inner = AddGather(gather, std::move(shape), new_reshape, indices, slice_sizes);
      std::vector<PaddingDimension> padding(gather->shape().rank());
      for (const auto& [output, reshape_dim] : passthrough.output_to_operand) {
        auto it = reshape_to_pad.find(reshape_dim);
        if (it != reshape_to_pad.end()) padding[output] = pad->attrs().padding[it->second];
      }
      Instruction* ops[] = {inner, pad->operand(1)};
      Instruction* made = Add(Opcode::kPad, gather->shape(), ops);
      made->mutable_attrs().padding = std::move(padding);
      return ReplaceWithNew(gather, made);
    }
  }
  return absl::OkStatus();
}

}  // namespace hlogym::algsimp
