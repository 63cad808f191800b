#include "passes/expanders/dynamic_padder.h"

#include <algorithm>
#include <limits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "hlo/query.h"
#include "hlo/shape_util.h"
#include "hlo/status_macros.h"
#include "passes/builders.h"
#include "passes/control_flow/call_inliner.h"
#include "passes/control_flow/conditional_canonicalizer.h"
#include "passes/control_flow/flatten_call_graph.h"
#include "passes/expanders/dynamic_dimension_inference.h"
#include "passes/pass_utils.h"
#include "passes/simplifiers/dce.h"

namespace hlogym {
namespace {

absl::Status Malformed(const Instruction* hlo, const std::string& what) {
  return absl::InvalidArgumentError(absl::StrCat(hlo->name(), ": ", what));
}

// The dimension a get-/set-dimension-size reads or writes, checked.
absl::StatusOr<int64_t> SizeDimension(const Instruction* hlo, int64_t operands) {
  if (hlo->operand_count() != operands) {
    return Malformed(hlo, absl::StrCat("expected ", operands, " operand(s)"));
  }
  const Shape& shape = hlo->operand(0)->shape();
  const std::vector<int64_t>& dims = hlo->attrs().dimensions;
  if (!shape.IsArray() || dims.size() != 1 || dims[0] < 0 || dims[0] >= shape.rank()) {
    return Malformed(hlo, "dimensions={d} must name one dimension of the array operand");
  }
  return dims[0];
}

// The size a get-dimension-size reads when it is known without padding:
// a constant for a static dimension, the size operand of a
// set-dimension-size of that dimension; nullptr otherwise.
absl::StatusOr<Instruction*> KnownSize(Instruction* get_size, bool with_layout) {
  HLOGYM_ASSIGN(dim, SizeDimension(get_size, 1));
  const Shape& result = get_size->shape();
  if (!result.IsScalar() || result.element_type() != PrimitiveType::kS32) {
    return Malformed(get_size, "get-dimension-size must return s32[]");
  }
  Instruction* operand = get_size->operand(0);
  if (!operand->shape().is_dynamic_dimension(dim)) {
    return MakeScalarConstant(get_size->parent(), PrimitiveType::kS32,
                              static_cast<double>(operand->shape().dimensions(dim)), with_layout);
  }
  if (operand->opcode() == Opcode::kSetDimensionSize) {
    HLOGYM_ASSIGN(set_dim, SizeDimension(operand, 2));
    if (set_dim == dim && operand->operand(1)->shape().Compatible(result)) {
      return operand->operand(1);
    }
  }
  return nullptr;
}

// Whether the module has anything for the padder: a dimension size read or
// written, a SetBound, or a dynamic shape.
bool HasWork(const Module& module) {
  for (const auto& computation : module.computations()) {
    for (const auto& owned : computation->instructions()) {
      const Instruction* hlo = owned.get();
      if (hlo->opcode() == Opcode::kGetDimensionSize ||
          hlo->opcode() == Opcode::kSetDimensionSize ||
          (hlo->opcode() == Opcode::kCustomCall && hlo->attrs().custom_call_target == "SetBound") ||
          !hlo->shape().is_static()) {
        return true;
      }
    }
  }
  return false;
}

absl::Status NotPadded(const Instruction* hlo, const std::string& what) {
  return absl::UnimplementedError(
      absl::StrCat(hlo->name(), " (", std::string(OpcodeName(hlo->opcode())), "): ", what));
}

// `hlo` with its dynamic bits cleared: XLA builds the masks and broadcasts
// around a set-dimension-size (whose own bit goes only when it is removed)
// in static shapes.
Instruction* Static(Instruction* hlo) {
  if (hlo->shape().IsArray() && !hlo->shape().is_static()) {
    Shape& shape = hlo->mutable_shape();
    for (int64_t d = 0; d < shape.rank(); ++d) shape.set_dynamic_dimension(d, false);
  }
  return hlo;
}

// XLA's mask of one dynamic dimension: the elements of `operand` at or past
// `size` along `dim` become `value` (five instructions, never shared).
absl::StatusOr<Instruction*> PadWithScalar(Instruction* operand, int64_t dim, Instruction* size,
                                           Instruction* value) {
  Computation* computation = operand->parent();
  const std::vector<int64_t>& dims = operand->shape().dimensions();
  Instruction* iota =
      MakeIota(computation, PrimitiveType::kS32, dims, dim, operand->shape().has_layout());
  HLOGYM_ASSIGN(bound, MakeBroadcast(size, dims, {}));
  HLOGYM_ASSIGN(inside, MakeCompare(ComparisonDirection::kLt, iota, bound));
  HLOGYM_ASSIGN(fill, MakeBroadcast(value, dims, {}));
  if (operand->shape().has_layout()) {  // the scalars they broadcast may have none
    bound->mutable_shape().SetDefaultLayout();
    fill->mutable_shape().SetDefaultLayout();
  }
  HLOGYM_ASSIGN(select, MakeSelect(inside, operand, fill));
  return Static(select);
}

// The value XLA pads operand `i` of `hlo` with, creating it where XLA does;
// nullptr for operands XLA leaves unmasked. `dim` is the dynamic dimension.
absl::StatusOr<Instruction*> PaddingValue(Instruction* hlo, int64_t i, int64_t dim) {
  const Opcode opcode = hlo->opcode();
  Computation* computation = hlo->parent();
  switch (opcode) {
    case Opcode::kReduce: {
      const int64_t inputs = hlo->operand_count() / 2;
      const std::vector<int64_t>& reduced = hlo->attrs().dimensions;
      if (i >= inputs || std::find(reduced.begin(), reduced.end(), dim) == reduced.end()) {
        return nullptr;
      }
      return hlo->operand(inputs + i);
    }
    case Opcode::kDot: {
      const DotDimensionNumbers& dnums = *hlo->attrs().dot_dimension_numbers;
      const auto& contracting =
          i == 0 ? dnums.lhs_contracting_dimensions : dnums.rhs_contracting_dimensions;
      if (std::find(contracting.begin(), contracting.end(), dim) == contracting.end()) {
        return nullptr;
      }
      return MakeScalarConstant(computation, hlo->operand(0)->shape().element_type(), 0,
                                hlo->shape().has_layout());
    }
    case Opcode::kReduceWindow: {
      const int64_t inputs = hlo->operand_count() / 2;
      if (i >= inputs || hlo->attrs().window->dimensions[dim].size == 1) return nullptr;
      return hlo->operand(inputs + i);
    }
    case Opcode::kPad:
      return i == 0 ? hlo->operand(1) : nullptr;
    case Opcode::kScatter: {
      if (i != 1) return nullptr;
      // Indices past the size point out of bounds, so their updates are dropped.
      const PrimitiveType type = hlo->operand(1)->shape().element_type();
      const int width = BitWidth(type);
      Literal highest = Literal::Scalar(type, int64_t{0});
      if (IsSignedIntegralType(type)) {
        highest.SetFromInt64(
            0, width >= 64 ? std::numeric_limits<int64_t>::max() : (int64_t{1} << (width - 1)) - 1);
      } else {
        highest.SetFromInt64(
            0, width >= 63 ? std::numeric_limits<int64_t>::max() : (int64_t{1} << width) - 1);
      }
      return MakeConstant(computation, std::move(highest), hlo->shape().has_layout());
    }
    case Opcode::kParameter:
    case Opcode::kGather:
    case Opcode::kDynamicSlice:
    case Opcode::kDynamicUpdateSlice:
    case Opcode::kGetDimensionSize:
    case Opcode::kSetDimensionSize:
    case Opcode::kConcatenate:
    case Opcode::kReshape:
    case Opcode::kReverse:
    case Opcode::kTuple:
    case Opcode::kGetTupleElement:
    case Opcode::kAllReduce:
    case Opcode::kReduceScatter:
    case Opcode::kBroadcast:
    case Opcode::kTranspose:
    case Opcode::kSort:
    case Opcode::kSlice:
    case Opcode::kDomain:
    case Opcode::kCustomCall:
      return nullptr;
    default:
      if (IsElementwise(opcode)) return nullptr;
      return NotPadded(hlo, "a dynamic operand dimension this opcode cannot take");
  }
}

// A concatenation along a dynamic dimension, in the pinned XLA's form: the
// first operand padded to the result's bound, each next one written where
// the sizes before it end.
absl::Status PadConcatenate(Instruction* concat, DynamicDimensionInference& sizes) {
  const int64_t axis = concat->attrs().dimensions[0];
  bool dynamic = false;
  for (const Instruction* operand : concat->operands()) {
    dynamic = dynamic || sizes.GetSize(operand, axis) != nullptr;
  }
  if (!dynamic) return absl::OkStatus();
  Computation* computation = concat->parent();
  const int64_t rank = concat->shape().rank();
  std::vector<Instruction*> starts;
  for (int64_t d = 0; d < rank; ++d)
    starts.push_back(MakeScalarConstant(computation, PrimitiveType::kS32, 0));
  Instruction* first = concat->operand(0);
  Instruction* zero = MakeScalarConstant(computation, concat->shape().element_type(), 0,
                                         concat->shape().has_layout());
  std::vector<PaddingDimension> padding(rank);
  padding[axis].high = concat->shape().dimensions(axis) - first->shape().dimensions(axis);
  HLOGYM_ASSIGN(padded, MakePad(first, zero, padding));
  Instruction* result = Static(padded);
  Instruction* offset = starts[axis];
  for (int64_t i = 0; i < concat->operand_count(); ++i) {
    Instruction* operand = concat->operand(i);
    if (i > 0) {
      std::vector<Instruction*> at = starts;
      at[axis] = offset;
      HLOGYM_ASSIGN(written, MakeDynamicUpdateSlice(result, operand, at));
      result = Static(written);
    }
    Instruction* size = sizes.GetSize(operand, axis);
    if (size == nullptr) {
      size = MakeScalarConstant(computation, PrimitiveType::kS32,
                                static_cast<double>(operand->shape().dimensions(axis)));
    }
    HLOGYM_ASSIGN(next, MakeBinary(Opcode::kAdd, offset, size));
    offset = next;  // the last one is read by nothing
  }
  sizes.ForwardSizes(concat, result);
  return concat->ReplaceAllUsesWith(result);
}

// A reversal of a dynamic dimension: the elements sit at the front, so XLA
// pads the reversed array by the bound and slices from bound - size.
absl::Status PadReverse(Instruction* reverse, DynamicDimensionInference& sizes) {
  Instruction* operand = reverse->operand(0);
  const std::vector<int64_t>& reversed = reverse->attrs().dimensions;
  bool dynamic = false;
  for (int64_t dim : reversed) dynamic = dynamic || sizes.GetSize(operand, dim) != nullptr;
  if (!dynamic) return absl::OkStatus();
  Computation* computation = reverse->parent();
  Instruction* copy = computation->AddInstruction(
      reverse->CloneWithNewOperands({operand}, computation->parent()->UniqueName(reverse->name())));
  Static(copy);
  Instruction* zero = MakeScalarConstant(computation, reverse->shape().element_type(), 0,
                                         reverse->shape().has_layout());
  const int64_t rank = reverse->shape().rank();
  std::vector<PaddingDimension> padding(rank);
  std::vector<Instruction*> starts;
  for (int64_t d = 0; d < rank; ++d) {
    Instruction* size = std::find(reversed.begin(), reversed.end(), d) != reversed.end()
                            ? sizes.GetSize(operand, d)
                            : nullptr;
    const int64_t bound = reverse->shape().dimensions(d);
    if (size == nullptr) {
      starts.push_back(MakeScalarConstant(computation, PrimitiveType::kS32, 0));
      continue;
    }
    padding[d].high = bound;
    Instruction* bound_constant =
        MakeScalarConstant(computation, PrimitiveType::kS32, static_cast<double>(bound));
    HLOGYM_ASSIGN(start, MakeBinary(Opcode::kSubtract, bound_constant, size));
    starts.push_back(start);
  }
  HLOGYM_ASSIGN(padded, MakePad(copy, zero, padding));
  HLOGYM_ASSIGN(sliced, MakeDynamicSlice(Static(padded), starts, reverse->shape().dimensions()));
  sizes.ForwardSizes(reverse, sliced);
  return reverse->ReplaceAllUsesWith(Static(sliced));
}

// A dynamic-reshape becomes a reshape where each size it sets is the major
// dimension of its group (its elements stay in front); splits and merges
// that need a mask are not modelled.
absl::Status PadDynamicReshape(Instruction* reshape, DynamicDimensionInference& sizes) {
  Instruction* operand = reshape->operand(0);
  const Shape& to = reshape->shape();
  auto groups = ReshapeGroups(operand->shape().dimensions(), to.dimensions());
  if (!groups) return NotPadded(reshape, "element counts differ");
  for (const ReshapeGroup& g : *groups) {
    for (int64_t o = g.b_begin; o < g.b_end; ++o) {
      const bool minor = o != g.b_begin;
      if (minor && sizes.GetSize(reshape, o) != nullptr) {
        return NotPadded(reshape, "a reshape that splits or merges a dynamic dimension");
      }
    }
    for (int64_t i = g.a_begin + 1; i < g.a_end; ++i) {
      if (sizes.GetSize(operand, i) != nullptr) {
        return NotPadded(reshape, "a reshape that splits or merges a dynamic dimension");
      }
    }
  }
  HLOGYM_ASSIGN(plain, MakeReshape(operand, to.dimensions()));
  Static(plain);
  sizes.ForwardSizes(reshape, plain);
  return reshape->ReplaceAllUsesWith(plain);
}

// A sort along a dynamic dimension: the elements past the size sort last,
// through one more operand (whether an element is inside) and a comparator
// that puts an inside element before an outside one.
absl::Status PadSort(Instruction* sort, DynamicDimensionInference& sizes) {
  const int64_t axis = sort->attrs().dimensions[0];
  Instruction* size = nullptr;
  for (const Instruction* operand : sort->operands()) {
    if (size == nullptr) size = sizes.GetSize(operand, axis);
  }
  if (size == nullptr) return absl::OkStatus();
  Computation* computation = sort->parent();
  Module& module = *computation->parent();
  const Shape& keys = sort->operand(0)->shape();
  Instruction* iota =
      MakeIota(computation, PrimitiveType::kS32, keys.dimensions(), axis, keys.has_layout());
  HLOGYM_ASSIGN(bound, MakeBroadcast(size, keys.dimensions(), {}));
  if (keys.has_layout()) bound->mutable_shape().SetDefaultLayout();
  HLOGYM_ASSIGN(inside, MakeCompare(ComparisonDirection::kLt, iota, bound));

  Computation* comparator = CloneComputation(module, *sort->to_apply());
  const Shape flag = Shape::Scalar(PrimitiveType::kPred);
  Instruction* flags[2];
  for (int64_t side = 0; side < 2; ++side) {
    auto parameter = std::make_unique<Instruction>(
        Opcode::kParameter, flag, module.UniqueName(side == 0 ? "inbound_lhs" : "inbound_rhs"));
    parameter->mutable_attrs().parameter_number = comparator->num_parameters();
    flags[side] = comparator->AddInstruction(std::move(parameter));
  }
  HLOGYM_ASSIGN(rhs_outside, MakeUnary(Opcode::kNot, flags[1]));
  HLOGYM_ASSIGN(before, MakeBinary(Opcode::kOr, comparator->root_instruction(), rhs_outside));
  HLOGYM_ASSIGN(root, MakeBinary(Opcode::kAnd, flags[0], before));
  comparator->set_root_instruction(root);

  std::vector<Shape> results;
  if (sort->shape().IsTuple()) {
    results = sort->shape().tuple_shapes();
  } else {
    results.push_back(sort->shape());
  }
  results.push_back(inside->shape());
  for (Shape& result : results) {
    if (result.IsArray()) {
      for (int64_t d = 0; d < result.rank(); ++d) result.set_dynamic_dimension(d, false);
    }
  }
  if (sort->shape().IsTuple()) {  // grows a result in place; its readers read what they read
    sort->AppendOperand(inside);
    sort->set_shape(Shape::Tuple(results));
    sort->mutable_called_computations() = {comparator};
    return absl::OkStatus();
  }
  std::vector<Instruction*> operands = sort->operands();
  operands.push_back(inside);
  std::unique_ptr<Instruction> copy =
      sort->CloneWithNewOperands(operands, module.UniqueName(sort->name()));
  copy->set_shape(Shape::Tuple(results));
  copy->mutable_called_computations() = {comparator};
  Instruction* padded = computation->AddInstruction(std::move(copy));
  HLOGYM_ASSIGN(keys_sorted, MakeGetTupleElement(padded, 0));
  sizes.ForwardSizes(sort, keys_sorted);
  return sort->ReplaceAllUsesWith(keys_sorted);
}

// An elementwise binary op whose operands have different sizes for one
// dimension: where one size is 1 and the other larger, XLA broadcasts that
// operand's first element along the dimension (seventeen instructions).
absl::Status PadBinaryOperands(Instruction* hlo, const DynamicDimensionInference& sizes) {
  Instruction* lhs = hlo->operand(0);
  Instruction* rhs = hlo->operand(1);
  if (!lhs->shape().IsArray() || lhs->shape().rank() == 0) return absl::OkStatus();
  Computation* computation = hlo->parent();
  for (int64_t dim = 0; dim < lhs->shape().rank(); ++dim) {
    Instruction* lhs_size = sizes.GetSize(lhs, dim);
    Instruction* rhs_size = sizes.GetSize(rhs, dim);
    if (lhs_size == nullptr || rhs_size == nullptr || lhs_size == rhs_size) continue;
    Instruction* one = MakeScalarConstant(computation, PrimitiveType::kS32, 1);
    auto broadcast_first = [&](Instruction* operand, Instruction* size,
                               Instruction* other) -> absl::StatusOr<Instruction*> {
      HLOGYM_ASSIGN(smaller, MakeCompare(ComparisonDirection::kLt, size, other));
      HLOGYM_ASSIGN(is_one, MakeCompare(ComparisonDirection::kEq, size, one));
      HLOGYM_ASSIGN(broadcasts, MakeBinary(Opcode::kAnd, is_one, smaller));
      const std::vector<int64_t>& dims = operand->shape().dimensions();
      HLOGYM_ASSIGN(everywhere, MakeBroadcast(broadcasts, dims, {}));
      std::vector<SliceDimension> first;
      for (int64_t d = 0; d < operand->shape().rank(); ++d) {
        first.push_back({0, d == dim ? 1 : dims[d], 1});
      }
      HLOGYM_ASSIGN(slice, MakeSlice(operand, first));
      Static(slice);
      std::vector<int64_t> kept_dims, kept;
      for (int64_t d = 0; d < operand->shape().rank(); ++d) {
        if (d == dim) continue;
        kept_dims.push_back(dims[d]);
        kept.push_back(d);
      }
      HLOGYM_ASSIGN(reshaped, MakeReshape(slice, kept_dims));
      HLOGYM_ASSIGN(spread, MakeBroadcast(reshaped, dims, kept));
      HLOGYM_ASSIGN(select, MakeSelect(everywhere, spread, operand));
      return Static(select);
    };
    HLOGYM_ASSIGN(new_lhs, broadcast_first(lhs, lhs_size, rhs_size));
    HLOGYM_ASSIGN(new_rhs, broadcast_first(rhs, rhs_size, lhs_size));
    hlo->ReplaceOperandWith(0, new_lhs);
    hlo->ReplaceOperandWith(1, new_rhs);
    lhs = new_lhs;
    rhs = new_rhs;
  }
  return absl::OkStatus();
}

// XLA's DynamicPadder on a module with dynamic dimensions, where every one
// of them is of a kind DynamicDimensionInference models: the sizes inferred,
// the operands of reduces, dots, pads, reduce-windows and scatters masked
// past them, concatenations, sorts, reversals, dynamic-reshapes and binary
// ops of different sizes rewritten, get-dimension-size reading them,
// set-dimension-size and SetBound gone, and every shape static.
// Unimplemented otherwise, with the module part-way.
absl::Status PadDynamicDimensions(Module& module) {
  HLOGYM_ASSIGN(sizes, DynamicDimensionInference::Run(module));  // the rewrites add to it
  for (Computation* computation : module.MakeComputationPostOrder()) {
    for (Instruction* hlo : computation->MakeInstructionPostOrder()) {
      if (hlo->opcode() == Opcode::kReverse) {
        HLOGYM_RETURN_IF_ERROR(PadReverse(hlo, sizes));
        continue;
      }
      if (hlo->opcode() == Opcode::kConcatenate) {
        HLOGYM_RETURN_IF_ERROR(PadConcatenate(hlo, sizes));
        continue;
      }
      if (hlo->opcode() == Opcode::kSort) {
        HLOGYM_RETURN_IF_ERROR(PadSort(hlo, sizes));
        continue;
      }
      if (hlo->opcode() == Opcode::kDynamicReshape) {
        HLOGYM_RETURN_IF_ERROR(PadDynamicReshape(hlo, sizes));
        continue;
      }
      if (IsElementwiseBinary(hlo->opcode())) {
        HLOGYM_RETURN_IF_ERROR(PadBinaryOperands(hlo, sizes));
        continue;
      }
      for (int64_t i = 0; i < hlo->operand_count(); ++i) {
        Instruction* operand = hlo->operand(i);
        if (!operand->shape().IsArray()) continue;
        Instruction* padded = operand;
        for (const auto& [dimension, size] : sizes.SizesOf(operand)) {
          HLOGYM_ASSIGN(value, PaddingValue(hlo, i, dimension.dim));
          if (value == nullptr) continue;
          HLOGYM_ASSIGN(masked, PadWithScalar(padded, dimension.dim, size, value));
          padded = masked;
        }
        if (padded != operand) hlo->ReplaceOperandWith(i, padded);
      }
    }
  }
  Instruction* root = module.entry_computation()->root_instruction();
  if (sizes.HasSizes(root)) {
    return NotPadded(root, "a dynamic result of the module (XLA slices it with SliceToDynamic)");
  }
  for (Computation* computation : module.MakeComputationPostOrder()) {
    for (Instruction* hlo : computation->MakeInstructionPostOrder()) {
      if (hlo->opcode() == Opcode::kSetDimensionSize ||
          (hlo->opcode() == Opcode::kCustomCall && hlo->attrs().custom_call_target == "SetBound")) {
        HLOGYM_RETURN_IF_ERROR(hlo->ReplaceAllUsesWith(hlo->operand(0)));
      }
    }
  }
  HLOGYM_ASSIGN(removed, HloDce().Run(module));
  (void)removed;
  for (const auto& computation : module.computations()) {
    for (const auto& owned : computation->instructions()) {
      if (!owned->shape().is_static()) {
        std::string operands;
        for (const Instruction* operand : owned->operands()) {
          absl::StrAppend(&operands, operands.empty() ? "" : ", ", operand->name(), " ",
                          operand->shape().ToString());
        }
        return NotPadded(owned.get(), absl::StrCat("a dynamic dimension left after padding: ",
                                                   owned->shape().ToString(), " of ", operands));
      }
    }
  }
  return absl::OkStatus();
}

// How XLA's padder starts, where the module has anything for it to do:
// flattening the call graph (a computation called from several places,
// reducers included, gets a copy per caller), inlining every call and
// removing dead code; its pass dumps of PyTorch/XLA's batch norms show the
// copied reducers. True if it changed the module.
absl::StatusOr<bool> FlattenAndInline(Module& module) {
  HLOGYM_ASSIGN(flattened, FlattenCallGraph().Run(module));
  HLOGYM_ASSIGN(inlined, CallInliner().Run(module));
  HLOGYM_ASSIGN(cleaned, HloDce().Run(module));
  return flattened || inlined || cleaned;
}

}  // namespace

absl::StatusOr<bool> DynamicPadder::Run(Module& module) {
  // Check every instruction the pass reads before changing anything more.
  const std::vector<Computation*> computations = module.MakeComputationPostOrder();
  for (Computation* computation : computations) {
    for (const auto& owned : computation->instructions()) {
      const Instruction* hlo = owned.get();
      if (hlo->opcode() == Opcode::kGetDimensionSize) {
        HLOGYM_ASSIGN(dim, SizeDimension(hlo, 1));
        (void)dim;
      } else if (hlo->opcode() == Opcode::kSetDimensionSize) {
        HLOGYM_ASSIGN(dim, SizeDimension(hlo, 2));
        (void)dim;
      } else if (hlo->opcode() == Opcode::kCustomCall &&
                 hlo->attrs().custom_call_target == "SetBound" && hlo->operand_count() < 1) {
        return Malformed(hlo, "SetBound needs an operand");
      }
    }
  }
  if (!HasWork(module)) return false;
  HLOGYM_ASSIGN(rewrote, FlattenAndInline(module));
  // Dynamic dimensions are padded all or nothing: first on a copy, so that a
  // module with a kind the inference does not model is left as it was.
  if (HasDynamicShapes(module) && PadDynamicDimensions(*module.Clone()).ok()) {
    HLOGYM_RETURN_IF_ERROR(PadDynamicDimensions(module));
    return true;
  }
  for (Computation* computation : module.MakeComputationPostOrder()) {
    for (Instruction* hlo : computation->MakeInstructionPostOrder()) {
      if (hlo->opcode() != Opcode::kGetDimensionSize) continue;
      HLOGYM_ASSIGN(size, KnownSize(hlo, hlo->shape().has_layout()));
      if (size == nullptr) continue;
      HLOGYM_RETURN_IF_ERROR(hlo->ReplaceAllUsesWith(size));
      rewrote = true;
    }
  }
  // A set-dimension-size whose result is static (its size a constant equal
  // to the dimension: TensorFlow's top_k and argsort write one per result)
  // sets nothing the padder must keep: its users read the operand, as XLA's
  // padder forwards every set-dimension-size once the sizes are inferred.
  for (Computation* computation : module.MakeComputationPostOrder()) {
    for (Instruction* hlo : computation->MakeInstructionPostOrder()) {
      if (hlo->opcode() != Opcode::kSetDimensionSize || !hlo->shape().is_static()) continue;
      Instruction* operand = hlo->operand(0);
      if (!operand->shape().Compatible(hlo->shape())) continue;
      HLOGYM_RETURN_IF_ERROR(hlo->ReplaceAllUsesWith(operand));
      rewrote = true;
    }
  }
  for (Computation* computation : module.MakeComputationPostOrder()) {
    for (Instruction* hlo : computation->MakeInstructionPostOrder()) {
      if (hlo->opcode() != Opcode::kCustomCall || hlo->attrs().custom_call_target != "SetBound") {
        continue;
      }
      Instruction* operand = hlo->operand(0);
      // Compatible compares dynamic dimensions too.
      if (!operand->shape().Compatible(hlo->shape())) continue;
      HLOGYM_RETURN_IF_ERROR(hlo->ReplaceAllUsesWith(operand));
      rewrote = true;
    }
  }
  if (rewrote) {
    // The replaced instructions go, with any other dead code.
    HloDce dce;
    HLOGYM_ASSIGN(removed, dce.Run(module));
    (void)removed;
  }
  return rewrote;
}

bool DynamicPadder::MayChange(const Module& module) const { return HasWork(module); }

absl::StatusOr<std::unique_ptr<Module>> PaddedToStatic(const Module& module) {
  std::unique_ptr<Module> padded = module.Clone();
  if (!HasDynamicShapes(*padded)) return padded;
  // What XLA's pipeline does before its padder: conditionals return tuples,
  // every computation has one caller, calls are inlined.
  HLOGYM_RETURN_IF_ERROR(ConditionalCanonicalizer().Run(*padded).status());
  HLOGYM_RETURN_IF_ERROR(FlattenAndInline(*padded).status());
  HLOGYM_RETURN_IF_ERROR(PadDynamicDimensions(*padded));
  return padded;
}

}  // namespace hlogym
