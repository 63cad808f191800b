#include "passes/expanders/dynamic_dimension_inference.h"

#include <algorithm>
#include <functional>
#include <span>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "hlo/computation.h"
#include "hlo/opcode.h"
#include "hlo/shape_util.h"
#include "hlo/status_macros.h"
#include "passes/builders.h"

namespace hlogym {
namespace {

absl::Status NotModelled(const Instruction* hlo, const std::string& what) {
  return absl::UnimplementedError(
      absl::StrCat(hlo->name(), " (", std::string(OpcodeName(hlo->opcode())), "): ", what));
}

std::string IndexText(const std::vector<int64_t>& index) {
  return absl::StrCat("{", absl::StrJoin(index, ","), "}");
}

Shape& MutableSubshape(Shape& shape, const std::vector<int64_t>& index) {
  Shape* subshape = &shape;
  for (int64_t i : index) subshape = &subshape->mutable_tuple_shapes()[i];
  return *subshape;
}

// Whether any array in `shape` has a dynamic dimension that `has_size` says
// has no size (`index` is the tuple index walked so far).
bool HasUnsizedDynamicDimension(
    const Shape& shape, std::vector<int64_t>& index,
    const std::function<bool(const std::vector<int64_t>&, int64_t)>& has_size) {
  if (shape.IsTuple()) {
    for (int64_t i = 0; i < shape.tuple_shapes_size(); ++i) {
      index.push_back(i);
      if (HasUnsizedDynamicDimension(shape.tuple_shapes(i), index, has_size)) return true;
      index.pop_back();
    }
    return false;
  }
  if (!shape.IsArray()) return false;
  for (int64_t d = 0; d < shape.rank(); ++d) {
    if (shape.is_dynamic_dimension(d) && !has_size(index, d)) return true;
  }
  return false;
}

Instruction* S32Constant(Computation* computation, int64_t value) {
  return MakeScalarConstant(computation, PrimitiveType::kS32, static_cast<double>(value));
}

// XLA's way of making one size of two that meet in an elementwise op: the
// larger where the smaller is 1 (a size-1 operand broadcasts), else the
// smaller. Eleven instructions, in XLA's order.
absl::StatusOr<Instruction*> MergeSizes(Instruction* size, Instruction* current) {
  Computation* computation = current->parent();
  Instruction* one = S32Constant(computation, 1);
  HLOGYM_ASSIGN(size_less, MakeCompare(ComparisonDirection::kLt, size, current));
  HLOGYM_ASSIGN(size_one, MakeCompare(ComparisonDirection::kEq, size, one));
  HLOGYM_ASSIGN(size_broadcasts, MakeBinary(Opcode::kAnd, size_one, size_less));
  HLOGYM_ASSIGN(current_less, MakeCompare(ComparisonDirection::kLt, current, size));
  HLOGYM_ASSIGN(current_one, MakeCompare(ComparisonDirection::kEq, current, one));
  HLOGYM_ASSIGN(current_broadcasts, MakeBinary(Opcode::kAnd, current_one, current_less));
  HLOGYM_ASSIGN(one_broadcasts, MakeBinary(Opcode::kOr, size_broadcasts, current_broadcasts));
  HLOGYM_ASSIGN(larger, MakeBinary(Opcode::kMaximum, size, current));
  HLOGYM_ASSIGN(smaller, MakeBinary(Opcode::kMinimum, size, current));
  return MakeSelect(one_broadcasts, larger, smaller);
}

}  // namespace

absl::StatusOr<DynamicDimensionInference> DynamicDimensionInference::Run(Module& module) {
  DynamicDimensionInference inference;
  inference.module_ = &module;
  HLOGYM_RETURN_IF_ERROR(inference.InferComputation(module.entry_computation()));
  return inference;
}

absl::Status DynamicDimensionInference::InferComputation(Computation* computation) {
  for (Instruction* hlo : computation->MakeInstructionPostOrder()) {
    HLOGYM_RETURN_IF_ERROR(Infer(hlo));
  }
  return absl::OkStatus();
}

Instruction* DynamicDimensionInference::GetSize(const Instruction* hlo,
                                                const std::vector<int64_t>& index,
                                                int64_t dim) const {
  auto it = sizes_.find(hlo);
  if (it == sizes_.end()) return nullptr;
  auto entry = it->second.find(Key(IndexText(index), dim));
  return entry == it->second.end() ? nullptr : entry->second.size;
}

std::vector<std::pair<DynamicDimensionInference::Dimension, Instruction*>>
DynamicDimensionInference::SizesOf(const Instruction* hlo) const {
  std::vector<std::pair<Dimension, Instruction*>> result;
  auto it = sizes_.find(hlo);
  if (it == sizes_.end()) return result;
  for (const auto& [key, entry] : it->second) result.emplace_back(entry.dimension, entry.size);
  return result;
}

void DynamicDimensionInference::ForwardSizes(const Instruction* from, Instruction* to) {
  for (const auto& [dimension, size] : SizesOf(from)) {
    SetSize(to, dimension.index, dimension.dim, size);
  }
}

void DynamicDimensionInference::SetSize(Instruction* hlo, const std::vector<int64_t>& index,
                                        int64_t dim, Instruction* size, bool keep_dynamic_bit) {
  sizes_[hlo][Key(IndexText(index), dim)] = Entry{{index, dim}, size};
  if (!keep_dynamic_bit && hlo->shape().Subshape(index).is_dynamic_dimension(dim)) {
    MutableSubshape(hlo->mutable_shape(), index).set_dynamic_dimension(dim, false);
  }
}

absl::Status DynamicDimensionInference::Infer(Instruction* hlo) {
  // A dynamic operand dimension without a size is one XLA's inference could
  // not follow either (its padder then stops at the dynamic operand).
  for (const Instruction* operand : hlo->operands()) {
    std::vector<int64_t> index;
    auto has_size = [&](const std::vector<int64_t>& index, int64_t dim) {
      return GetSize(operand, index, dim) != nullptr;
    };
    if (HasUnsizedDynamicDimension(operand->shape(), index, has_size)) {
      return NotModelled(hlo, absl::StrCat("operand ", operand->name(),
                                           " has a dynamic dimension with no known size"));
    }
  }
  const Opcode opcode = hlo->opcode();
  if (opcode == Opcode::kGetDimensionSize) return InferGetDimensionSize(hlo);
  if (opcode == Opcode::kSetDimensionSize) {
    if (hlo->operand_count() != 2 || hlo->attrs().dimensions.size() != 1) {
      return NotModelled(hlo, "expected an operand, a size and one dimension");
    }
    const int64_t dim = hlo->attrs().dimensions[0];
    Instruction* size = hlo->operand(1);
    for (const auto& [dimension, operand_size] : SizesOf(hlo->operand(0))) {
      if (dimension.dim != dim) SetSize(hlo, {}, dimension.dim, operand_size, true);
    }
    // A constant size equal to the bound on a static result sets nothing.
    const bool sets_bound = size->opcode() == Opcode::kConstant &&
                            size->attrs().literal != nullptr && !size->attrs().literal->elided() &&
                            size->attrs().literal->GetAsInt64(0) == hlo->shape().dimensions(dim) &&
                            !hlo->shape().is_dynamic_dimension(dim);
    if (!sets_bound) SetSize(hlo, {}, dim, size, true);
    return absl::OkStatus();
  }
  switch (opcode) {
    // Sizes travel through tuples whatever their shapes say: a branch's
    // widened parameter is static, its elements' sizes are bound to it.
    case Opcode::kTuple:
      for (int64_t k = 0; k < hlo->operand_count(); ++k) {
        for (const auto& [dimension, size] : SizesOf(hlo->operand(k))) {
          std::vector<int64_t> index = {k};
          index.insert(index.end(), dimension.index.begin(), dimension.index.end());
          SetSize(hlo, index, dimension.dim, size);
        }
      }
      return absl::OkStatus();
    case Opcode::kGetTupleElement:
      for (const auto& [dimension, size] : SizesOf(hlo->operand(0))) {
        if (dimension.index.empty() || dimension.index[0] != hlo->attrs().tuple_index) continue;
        SetSize(hlo, std::vector<int64_t>(dimension.index.begin() + 1, dimension.index.end()),
                dimension.dim, size);
      }
      return absl::OkStatus();
    case Opcode::kConditional:
      return InferConditional(hlo);
    case Opcode::kWhile:
      return InferWhile(hlo);
    default:
      break;
  }
  if (hlo->shape().is_static()) return absl::OkStatus();  // nothing to record
  switch (opcode) {
    case Opcode::kParameter:
      if (HasSizes(hlo)) break;  // a branch's parameter, bound by its conditional
      return NotModelled(hlo, hlo->parent()->IsEntry()
                                  ? "a dynamic entry parameter (XLA pads it with PadToStatic)"
                                  : "a dynamic value passed into a computation");
    case Opcode::kClamp:
    case Opcode::kReverse:
      for (const Instruction* operand : hlo->operands()) {
        for (const auto& [dimension, size] : SizesOf(operand)) {
          SetSize(hlo, dimension.index, dimension.dim, size);
        }
      }
      break;
    case Opcode::kSelect:
    case Opcode::kMap:
      HLOGYM_RETURN_IF_ERROR(InferNary(hlo));
      break;
    case Opcode::kBroadcast:
      for (const auto& [dimension, size] : SizesOf(hlo->operand(0))) {
        SetSize(hlo, {}, hlo->attrs().dimensions[dimension.dim], size);
      }
      break;
    case Opcode::kTranspose: {
      const std::vector<int64_t> inverse = InversePermutation(hlo->attrs().dimensions);
      for (const auto& [dimension, size] : SizesOf(hlo->operand(0))) {
        SetSize(hlo, {}, inverse[dimension.dim], size);
      }
      break;
    }
    case Opcode::kReduce: {
      const int64_t inputs = hlo->operand_count() / 2;
      const std::vector<int64_t>& reduced = hlo->attrs().dimensions;
      for (int64_t i = 0; i < inputs; ++i) {
        for (const auto& [dimension, size] : SizesOf(hlo->operand(i))) {
          if (std::find(reduced.begin(), reduced.end(), dimension.dim) != reduced.end()) continue;
          const int64_t out =
              dimension.dim - std::count_if(reduced.begin(), reduced.end(),
                                            [&](int64_t r) { return r < dimension.dim; });
          if (hlo->shape().IsTuple()) {
            for (int64_t k = 0; k < inputs; ++k) SetSize(hlo, {k}, out, size);
          } else {
            SetSize(hlo, {}, out, size);
          }
        }
      }
      break;
    }
    case Opcode::kDot: {
      const DotDimensionNumbers& dnums = *hlo->attrs().dot_dimension_numbers;
      const int64_t batch = static_cast<int64_t>(dnums.lhs_batch_dimensions.size());
      const int64_t lhs_rank = hlo->operand(0)->shape().rank();
      const int64_t lhs_free =
          lhs_rank - batch - static_cast<int64_t>(dnums.lhs_contracting_dimensions.size());
      for (int64_t side = 0; side < 2; ++side) {
        const auto& batch_dims =
            side == 0 ? dnums.lhs_batch_dimensions : dnums.rhs_batch_dimensions;
        const auto& contracting =
            side == 0 ? dnums.lhs_contracting_dimensions : dnums.rhs_contracting_dimensions;
        for (const auto& [dimension, size] : SizesOf(hlo->operand(side))) {
          const int64_t d = dimension.dim;
          if (auto b = std::find(batch_dims.begin(), batch_dims.end(), d); b != batch_dims.end()) {
            SetSize(hlo, {}, b - batch_dims.begin(), size);
            continue;
          }
          if (std::find(contracting.begin(), contracting.end(), d) != contracting.end()) continue;
          int64_t free_position = 0;  // among this side's free dimensions
          for (int64_t e = 0; e < d; ++e) {
            if (std::find(batch_dims.begin(), batch_dims.end(), e) == batch_dims.end() &&
                std::find(contracting.begin(), contracting.end(), e) == contracting.end()) {
              ++free_position;
            }
          }
          SetSize(hlo, {}, batch + (side == 0 ? 0 : lhs_free) + free_position, size);
        }
      }
      break;
    }
    case Opcode::kGather:
      HLOGYM_RETURN_IF_ERROR(InferGather(hlo));
      break;
    case Opcode::kScatter:
      HLOGYM_RETURN_IF_ERROR(InferScatter(hlo));
      break;
    case Opcode::kSlice:
      HLOGYM_RETURN_IF_ERROR(InferSlice(hlo));
      break;
    case Opcode::kPad:
      HLOGYM_RETURN_IF_ERROR(InferPad(hlo));
      break;
    case Opcode::kReshape:
      HLOGYM_RETURN_IF_ERROR(InferReshape(hlo));
      break;
    case Opcode::kDynamicReshape:
      // Its operands after the first are the result's sizes; the padder makes
      // it a reshape where the sizes it sets lead their dimension groups.
      for (int64_t d = 0; d < hlo->shape().rank(); ++d) {
        if (hlo->shape().is_dynamic_dimension(d) && d + 1 < hlo->operand_count()) {
          SetSize(hlo, {}, d, hlo->operand(d + 1));
        }
      }
      break;
    case Opcode::kConcatenate: {
      // Along the axis: the static operands' sizes, plus each dynamic one's.
      const int64_t axis = hlo->attrs().dimensions[0];
      int64_t static_total = 0;
      std::vector<Instruction*> dynamic_sizes;
      for (const Instruction* operand : hlo->operands()) {
        if (Instruction* size = GetSize(operand, axis)) {
          dynamic_sizes.push_back(size);
        } else {
          static_total += operand->shape().dimensions(axis);
        }
        for (const auto& [dimension, size] : SizesOf(operand)) {
          if (dimension.dim != axis) SetSize(hlo, {}, dimension.dim, size);
        }
      }
      if (dynamic_sizes.empty()) break;
      Instruction* total = S32Constant(hlo->parent(), static_total);
      for (Instruction* size : dynamic_sizes) {
        HLOGYM_ASSIGN(sum, MakeBinary(Opcode::kAdd, total, size));
        total = sum;
      }
      SetSize(hlo, {}, axis, total);
      break;
    }
    case Opcode::kReduceWindow:
      HLOGYM_RETURN_IF_ERROR(InferReduceWindow(hlo));
      break;
    case Opcode::kSort: {
      for (int64_t k = 0; k < hlo->operand_count(); ++k) {
        for (const auto& [dimension, size] : SizesOf(hlo->operand(k))) {
          if (hlo->shape().IsTuple()) {
            SetSize(hlo, {k}, dimension.dim, size);
          } else {
            SetSize(hlo, {}, dimension.dim, size);
          }
        }
      }
      break;
    }
    case Opcode::kDynamicSlice:
      for (const auto& [dimension, size] : SizesOf(hlo->operand(0))) {
        const int64_t out = hlo->shape().dimensions(dimension.dim);
        if (out == 1) continue;
        if (out != hlo->operand(0)->shape().dimensions(dimension.dim)) {
          return NotModelled(hlo, "a partial dynamic-slice of a dynamic dimension");
        }
        SetSize(hlo, {}, dimension.dim, size);
      }
      break;
    case Opcode::kDynamicUpdateSlice:
      for (int64_t k = 0; k < 2; ++k) {
        for (const auto& [dimension, size] : SizesOf(hlo->operand(k))) {
          if (hlo->operand(k)->shape().dimensions(dimension.dim) !=
              hlo->shape().dimensions(dimension.dim)) {
            return NotModelled(hlo, "an update narrower than a dynamic dimension");
          }
          SetSize(hlo, {}, dimension.dim, size);
        }
      }
      break;
    default:
      if (IsElementwiseUnary(opcode)) {
        for (const auto& [dimension, size] : SizesOf(hlo->operand(0))) {
          SetSize(hlo, dimension.index, dimension.dim, size);
        }
      } else if (IsElementwiseBinary(opcode)) {
        HLOGYM_RETURN_IF_ERROR(InferNary(hlo));
      } else {
        return NotModelled(hlo, "dynamic dimensions through this opcode");
      }
  }
  std::vector<int64_t> index;
  auto has_size = [&](const std::vector<int64_t>& index, int64_t dim) {
    return GetSize(hlo, index, dim) != nullptr;
  };
  if (HasUnsizedDynamicDimension(hlo->shape(), index, has_size)) {
    return NotModelled(hlo, "a dynamic result dimension with no size from its operands");
  }
  return absl::OkStatus();
}

namespace {

// `tuple`'s first `count` elements, read one by one (XLA's TupleUtil
// ExtractPrefix): `count` get-tuple-elements and a tuple of them.
absl::StatusOr<Instruction*> ExtractPrefix(Instruction* tuple, int64_t count) {
  std::vector<Instruction*> elements;
  for (int64_t i = 0; i < count; ++i) {
    HLOGYM_ASSIGN(element, MakeGetTupleElement(tuple, i));
    elements.push_back(element);
  }
  return MakeTuple(tuple->parent(), elements);
}

// `tuple`'s elements read one by one, then `extra` after them (XLA's
// TupleUtil AppendSuffix).
absl::StatusOr<Instruction*> AppendSuffix(Instruction* tuple, std::span<Instruction* const> extra) {
  std::vector<Instruction*> elements;
  for (int64_t i = 0; i < tuple->shape().tuple_shapes_size(); ++i) {
    HLOGYM_ASSIGN(element, MakeGetTupleElement(tuple, i));
    elements.push_back(element);
  }
  elements.insert(elements.end(), extra.begin(), extra.end());
  return MakeTuple(tuple->parent(), elements);
}

// Gives `computation` (a branch, a loop's body or condition) the parameter
// `wide` (its old tuple and sizes after it): the old parameter's readers get
// a tuple of its first `count` elements, as XLA's widening (a call of the old
// computation on that tuple, inlined) leaves them.
absl::Status WidenParameter(Computation* computation, const Shape& wide, int64_t count) {
  Instruction* parameter = computation->parameter_instruction(0);
  const std::vector<Instruction*> readers = parameter->users();
  const bool was_root = computation->root_instruction() == parameter;
  parameter->set_shape(wide);
  HLOGYM_ASSIGN(narrow, ExtractPrefix(parameter, count));
  for (Instruction* reader : readers) reader->ReplaceUsesOfOperand(parameter, narrow);
  if (was_root) computation->set_root_instruction(narrow);
  return absl::OkStatus();
}

bool HasDynamicShape(const Computation& computation) {
  for (const auto& owned : computation.instructions()) {
    if (!owned->shape().is_static()) return true;
  }
  return false;
}

}  // namespace

// XLA's HandleConditional: the sizes a branch's operand carries are passed
// into the branch as extra tuple elements (one per distinct size), the
// sizes of the results leave it the same way (one per dynamic dimension,
// the bound where a branch has none), and a new conditional replaces the old.
absl::Status DynamicDimensionInference::InferConditional(Instruction* conditional) {
  const std::vector<Computation*> branches = conditional->called_computations();
  for (size_t b = 0; b < branches.size(); ++b) {
    for (size_t c = 0; c < b; ++c) {
      if (branches[b] == branches[c]) {
        return NotModelled(conditional, "two branches share one computation");
      }
    }
  }
  if (!conditional->shape().IsTuple()) {
    return NotModelled(conditional, "a result that is not a tuple");
  }
  bool widened = false;
  for (size_t b = 0; b < branches.size(); ++b) {
    Computation* branch = branches[b];
    Instruction* operand = conditional->operand(static_cast<int64_t>(b) + 1);
    const auto operand_sizes = SizesOf(operand);
    if (!operand_sizes.empty()) {
      if (!operand->shape().IsTuple()) {
        return NotModelled(conditional, "a dynamic branch operand that is not a tuple");
      }
      const int64_t count = operand->shape().tuple_shapes_size();
      std::vector<Instruction*> new_sizes;
      absl::flat_hash_map<const Instruction*, int64_t> slot_of;
      for (const auto& [dimension, size] : operand_sizes) {
        if (slot_of.contains(size)) continue;
        int64_t slot = -1;
        if (operand->opcode() == Opcode::kTuple) {
          for (int64_t j = 0; j < operand->operand_count(); ++j) {
            if (operand->operand(j) == size) slot = j;
          }
        }
        if (slot < 0) {
          slot = count + static_cast<int64_t>(new_sizes.size());
          new_sizes.push_back(size);
        }
        slot_of[size] = slot;
      }
      if (!new_sizes.empty()) {
        HLOGYM_ASSIGN(wide_operand, AppendSuffix(operand, new_sizes));
        conditional->ReplaceOperandWith(static_cast<int64_t>(b) + 1, wide_operand);
        HLOGYM_RETURN_IF_ERROR(WidenParameter(branch, wide_operand->shape(), count));
        widened = true;
      }
      Instruction* parameter = branch->parameter_instruction(0);
      absl::flat_hash_map<int64_t, Instruction*> read_slot;
      for (const auto& [dimension, size] : operand_sizes) {
        const int64_t slot = slot_of.at(size);
        Instruction*& read = read_slot[slot];
        if (read == nullptr) {
          HLOGYM_ASSIGN(element, MakeGetTupleElement(parameter, slot));
          read = element;
        }
        SetSize(parameter, dimension.index, dimension.dim, read);
      }
    }
    HLOGYM_RETURN_IF_ERROR(InferComputation(branch));
  }
  // One result slot per dynamic dimension any branch's root has.
  std::map<Key, Dimension> slots;
  for (Computation* branch : branches) {
    for (const auto& [dimension, size] : SizesOf(branch->root_instruction())) {
      slots.emplace(Key(IndexText(dimension.index), dimension.dim), dimension);
    }
  }
  if (slots.empty() && !widened) return absl::OkStatus();
  const int64_t count = conditional->shape().tuple_shapes_size();
  Shape result = conditional->shape();
  for (const auto& [key, dimension] : slots) {
    MutableSubshape(result, dimension.index).set_dynamic_dimension(dimension.dim, false);
  }
  for (Computation* branch : branches) {
    if (slots.empty()) break;
    Instruction* root = branch->root_instruction();
    std::vector<Instruction*> sizes;
    for (const auto& [key, dimension] : slots) {
      Instruction* size = GetSize(root, dimension.index, dimension.dim);
      if (size == nullptr) {
        size =
            S32Constant(branch, root->shape().Subshape(dimension.index).dimensions(dimension.dim));
      }
      sizes.push_back(size);
    }
    HLOGYM_ASSIGN(new_root, AppendSuffix(root, sizes));
    branch->set_root_instruction(new_root);
  }
  const bool with_layout = count > 0 && result.tuple_shapes(0).has_layout();
  for (size_t s = 0; s < slots.size(); ++s) {
    Shape size = Shape::Scalar(PrimitiveType::kS32);
    if (with_layout) size.SetDefaultLayout();
    result.mutable_tuple_shapes().push_back(size);
  }
  std::unique_ptr<Instruction> copy = conditional->CloneWithNewOperands(
      conditional->operands(), module_->UniqueName(conditional->name()));
  copy->set_shape(result);
  Instruction* new_conditional = conditional->parent()->AddInstruction(std::move(copy));
  HLOGYM_ASSIGN(replacement, ExtractPrefix(new_conditional, count));
  HLOGYM_RETURN_IF_ERROR(conditional->ReplaceAllUsesWith(replacement));
  HLOGYM_RETURN_IF_ERROR(conditional->parent()->RemoveInstruction(conditional));
  int64_t slot = count;
  for (const auto& [key, dimension] : slots) {
    HLOGYM_ASSIGN(size, MakeGetTupleElement(new_conditional, slot++));
    SetSize(replacement, dimension.index, dimension.dim, size);
  }
  return absl::OkStatus();
}

// XLA's HandleWhile: each dynamic dimension of the loop's state (no two
// sharing a slot, even with one size) gets an element after the state; the
// body passes it through and returns the size its result has, the
// condition ignores it, and a new loop replaces the old.
absl::Status DynamicDimensionInference::InferWhile(Instruction* loop) {
  Computation* condition = loop->called_computations()[0];
  Computation* body = loop->called_computations()[1];
  Instruction* init = loop->operand(0);
  const auto state_sizes = SizesOf(init);
  if (state_sizes.empty()) {
    if (!loop->shape().is_static() || HasDynamicShape(*body) || HasDynamicShape(*condition)) {
      return NotModelled(loop, "dynamic shapes inside a while loop whose state has none");
    }
    return absl::OkStatus();
  }
  if (!init->shape().IsTuple()) {
    return NotModelled(loop, "a dynamic loop state that is not a tuple");
  }
  if (body == condition) return NotModelled(loop, "one computation as body and condition");
  const int64_t count = init->shape().tuple_shapes_size();
  std::vector<Instruction*> sizes;
  for (const auto& [dimension, size] : state_sizes) sizes.push_back(size);
  HLOGYM_ASSIGN(wide_init, AppendSuffix(init, sizes));
  const Shape wide = wide_init->shape();

  // The body: the sizes come in through the new elements and go out as the
  // sizes of what it returns.
  HLOGYM_RETURN_IF_ERROR(WidenParameter(body, wide, count));
  Instruction* body_parameter = body->parameter_instruction(0);
  std::vector<Instruction*> through;
  for (size_t k = 0; k < state_sizes.size(); ++k) {
    HLOGYM_ASSIGN(read, MakeGetTupleElement(body_parameter, count + static_cast<int64_t>(k)));
    through.push_back(read);
    SetSize(body_parameter, state_sizes[k].first.index, state_sizes[k].first.dim, read);
  }
  HLOGYM_ASSIGN(passed, AppendSuffix(body->root_instruction(), through));
  body->set_root_instruction(passed);
  HLOGYM_RETURN_IF_ERROR(InferComputation(body));
  std::vector<Instruction*> returned;
  for (const auto& [dimension, size] : state_sizes) {
    Instruction* out = GetSize(passed, dimension.index, dimension.dim);
    if (out == nullptr) return NotModelled(loop, "a loop body whose result loses a dynamic size");
    returned.push_back(out);
  }
  HLOGYM_ASSIGN(prefix, ExtractPrefix(passed, count));
  std::vector<Instruction*> root_elements = prefix->operands();
  HLOGYM_RETURN_IF_ERROR(body->RemoveInstruction(prefix));
  root_elements.insert(root_elements.end(), returned.begin(), returned.end());
  body->set_root_instruction(MakeTuple(body, root_elements));

  // The condition reads the old elements only.
  HLOGYM_RETURN_IF_ERROR(WidenParameter(condition, wide, count));
  Instruction* condition_parameter = condition->parameter_instruction(0);
  for (size_t k = 0; k < state_sizes.size(); ++k) {
    HLOGYM_ASSIGN(read, MakeGetTupleElement(condition_parameter, count + static_cast<int64_t>(k)));
    SetSize(condition_parameter, state_sizes[k].first.index, state_sizes[k].first.dim, read);
  }
  HLOGYM_RETURN_IF_ERROR(InferComputation(condition));

  std::unique_ptr<Instruction> copy =
      loop->CloneWithNewOperands({wide_init}, module_->UniqueName(loop->name()));
  copy->set_shape(wide);
  Instruction* new_loop = loop->parent()->AddInstruction(std::move(copy));
  HLOGYM_ASSIGN(replacement, ExtractPrefix(new_loop, count));
  HLOGYM_RETURN_IF_ERROR(loop->ReplaceAllUsesWith(replacement));
  HLOGYM_RETURN_IF_ERROR(loop->parent()->RemoveInstruction(loop));
  for (size_t k = 0; k < state_sizes.size(); ++k) {
    HLOGYM_ASSIGN(size, MakeGetTupleElement(new_loop, count + static_cast<int64_t>(k)));
    SetSize(replacement, state_sizes[k].first.index, state_sizes[k].first.dim, size);
  }
  return absl::OkStatus();
}

absl::Status DynamicDimensionInference::InferNary(Instruction* hlo) {
  std::map<int64_t, Instruction*> merged;  // result dim -> size
  for (const Instruction* operand : hlo->operands()) {
    for (const auto& [dimension, size] : SizesOf(operand)) {
      if (!dimension.index.empty()) return NotModelled(hlo, "a tuple operand");
      auto [it, inserted] = merged.emplace(dimension.dim, size);
      if (!inserted && it->second != size) {
        HLOGYM_ASSIGN(combined, MergeSizes(size, it->second));
        it->second = combined;
      }
    }
  }
  for (const auto& [dim, size] : merged) SetSize(hlo, {}, dim, size);
  return absl::OkStatus();
}

// A dynamic dimension the reshape keeps whole keeps its size. One that is the
// major dimension of the dimensions it merges with, or that splits into
// dimensions whose major one is dynamic, gets its size scaled (XLA's
// arithmetic); its elements stay in front, so nothing needs padding. Any
// other split or merge XLA pads with masks, sorts and gathers, not modelled
// here.
absl::Status DynamicDimensionInference::InferReshape(Instruction* hlo) {
  const Shape& from = hlo->operand(0)->shape();
  const Shape& to = hlo->shape();
  if (to.rank() == 0) return absl::OkStatus();
  auto groups = ReshapeGroups(from.dimensions(), to.dimensions());
  if (!groups) return NotModelled(hlo, "element counts differ");
  Computation* computation = hlo->parent();
  const auto operand_sizes = SizesOf(hlo->operand(0));
  for (const auto& [dimension, size] : operand_sizes) {
    const int64_t d = dimension.dim;
    auto group = std::find_if(groups->begin(), groups->end(),
                              [&](const ReshapeGroup& g) { return g.a_begin <= d && d < g.a_end; });
    if (group == groups->end() || group->b_begin == group->b_end) {
      return NotModelled(hlo, "a reshape that drops a dynamic dimension");
    }
    const int64_t inputs = group->a_end - group->a_begin;
    const int64_t outputs = group->b_end - group->b_begin;
    const int64_t out = group->b_begin;
    if (inputs == 1 && outputs == 1) {
      SetSize(hlo, {}, out, size);
      continue;
    }
    int64_t dynamic_inputs = 0;
    for (const auto& [other, other_size] : operand_sizes) {
      if (group->a_begin <= other.dim && other.dim < group->a_end) ++dynamic_inputs;
    }
    const bool major_merges = outputs == 1 && d == group->a_begin && dynamic_inputs == 1;
    const bool splits_major = inputs == 1 && to.is_dynamic_dimension(out);
    for (int64_t o = out + 1; splits_major && o < group->b_end; ++o) {
      if (to.is_dynamic_dimension(o)) {
        return NotModelled(hlo, "a reshape that splits or merges a dynamic dimension");
      }
    }
    if (major_merges) {  // size * (out / in): the rows merged with it
      Instruction* total = S32Constant(computation, to.dimensions(out));
      Instruction* rows = S32Constant(computation, from.dimensions(d));
      HLOGYM_ASSIGN(per_row, MakeBinary(Opcode::kDivide, total, rows));
      HLOGYM_ASSIGN(merged, MakeBinary(Opcode::kMultiply, per_row, size));
      SetSize(hlo, {}, out, merged);
    } else if (splits_major) {  // size / (in / out)
      Instruction* factor = S32Constant(computation, from.dimensions(d) / to.dimensions(out));
      HLOGYM_ASSIGN(split, MakeBinary(Opcode::kDivide, size, factor));
      SetSize(hlo, {}, out, split);
    } else {
      return NotModelled(hlo, "a reshape that splits or merges a dynamic dimension");
    }
  }
  return absl::OkStatus();
}

absl::Status DynamicDimensionInference::InferGather(Instruction* hlo) {
  const GatherDimensionNumbers& dnums = *hlo->attrs().gather_dimension_numbers;
  if (!dnums.operand_batching_dims.empty()) return NotModelled(hlo, "batched gather");
  const std::vector<int64_t>& slice_sizes = hlo->attrs().gather_slice_sizes;
  const auto& collapsed = dnums.collapsed_slice_dims;
  for (const auto& [dimension, size] : SizesOf(hlo->operand(0))) {
    const int64_t d = dimension.dim;
    if (slice_sizes[d] == 1) continue;
    if (slice_sizes[d] != hlo->operand(0)->shape().dimensions(d)) {
      return NotModelled(hlo, "a partial slice of a dynamic operand dimension");
    }
    int64_t offset = 0;  // position of d among the operand dims the result keeps
    for (int64_t e = 0; e < d; ++e) {
      if (std::find(collapsed.begin(), collapsed.end(), e) == collapsed.end()) ++offset;
    }
    SetSize(hlo, {}, dnums.offset_dims[offset], size);
  }
  // The indices' batch dims are the result's dims that are not offset dims, in order.
  std::vector<int64_t> batch_result_dims;
  for (int64_t r = 0; r < hlo->shape().rank(); ++r) {
    if (std::find(dnums.offset_dims.begin(), dnums.offset_dims.end(), r) ==
        dnums.offset_dims.end()) {
      batch_result_dims.push_back(r);
    }
  }
  for (const auto& [dimension, size] : SizesOf(hlo->operand(1))) {
    const int64_t d = dimension.dim;
    if (d == dnums.index_vector_dim) continue;
    const int64_t position = d < dnums.index_vector_dim ? d : d - 1;
    SetSize(hlo, {}, batch_result_dims[position], size);
  }
  return absl::OkStatus();
}

absl::Status DynamicDimensionInference::InferScatter(Instruction* hlo) {
  if (hlo->operand_count() != 3) return NotModelled(hlo, "a scatter of several operands");
  const ScatterDimensionNumbers& dnums = *hlo->attrs().scatter_dimension_numbers;
  for (const auto& [dimension, size] : SizesOf(hlo->operand(0))) {
    SetSize(hlo, {}, dimension.dim, size);
  }
  // A dynamic update window dimension must be the operand's, with its size.
  const auto& window = dnums.update_window_dims;
  const auto& inserted = dnums.inserted_window_dims;
  for (const auto& [dimension, size] : SizesOf(hlo->operand(2))) {
    auto w = std::find(window.begin(), window.end(), dimension.dim);
    if (w == window.end()) continue;  // a scatter dimension: it vanishes
    int64_t operand_dim = -1;
    for (int64_t e = 0, seen = 0; e < hlo->operand(0)->shape().rank(); ++e) {
      if (std::find(inserted.begin(), inserted.end(), e) != inserted.end()) continue;
      if (seen++ == w - window.begin()) {
        operand_dim = e;
        break;
      }
    }
    if (operand_dim < 0 || GetSize(hlo->operand(0), operand_dim) != size) {
      return NotModelled(hlo, "a dynamic update window dimension the operand does not share");
    }
  }
  return absl::OkStatus();
}

// XLA's windowed output size with VALID padding: its padding is not counted
// (a cumulative sum's size comes out shorter than its result).
absl::Status DynamicDimensionInference::InferReduceWindow(Instruction* hlo) {
  if (!hlo->attrs().window.has_value()) return NotModelled(hlo, "a reduce-window with no window");
  const std::vector<WindowDimension>& window = hlo->attrs().window->dimensions;
  const int64_t inputs = hlo->operand_count() / 2;
  Computation* computation = hlo->parent();
  for (int64_t i = 0; i < inputs; ++i) {
    for (const auto& [dimension, size] : SizesOf(hlo->operand(i))) {
      const WindowDimension& w = window[dimension.dim];
      Instruction* result = size;
      const bool trivial = w.size == 1 && w.stride == 1 && w.padding_low == 0 &&
                           w.padding_high == 0 && w.window_dilation == 1 && w.base_dilation == 1;
      if (!trivial) {
        Instruction* stride = S32Constant(computation, w.stride);
        Instruction* extent = S32Constant(computation, (w.size - 1) * w.window_dilation + 1);
        HLOGYM_ASSIGN(ahead, MakeBinary(Opcode::kAdd, size, stride));
        HLOGYM_ASSIGN(room, MakeBinary(Opcode::kSubtract, ahead, extent));
        HLOGYM_ASSIGN(windows, MakeBinary(Opcode::kDivide, room, stride));
        result = windows;
      }
      if (hlo->shape().IsTuple()) {
        for (int64_t k = 0; k < inputs; ++k) SetSize(hlo, {k}, dimension.dim, result);
      } else {
        SetSize(hlo, {}, dimension.dim, result);
      }
    }
  }
  return absl::OkStatus();
}

absl::Status DynamicDimensionInference::InferSlice(Instruction* hlo) {
  Computation* computation = hlo->parent();
  for (const auto& [dimension, size] : SizesOf(hlo->operand(0))) {
    const SliceDimension& s = hlo->attrs().slice[dimension.dim];
    if ((s.limit - s.start + s.stride - 1) / s.stride == 1) continue;
    Instruction* result = size;
    if (s.start != 0) {
      HLOGYM_ASSIGN(shifted,
                    MakeBinary(Opcode::kSubtract, result, S32Constant(computation, s.start)));
      result = shifted;
    }
    if (s.stride != 1) {
      HLOGYM_ASSIGN(rounded,
                    MakeBinary(Opcode::kAdd, result, S32Constant(computation, s.stride - 1)));
      HLOGYM_ASSIGN(strided,
                    MakeBinary(Opcode::kDivide, rounded, S32Constant(computation, s.stride)));
      result = strided;
    }
    SetSize(hlo, {}, dimension.dim, result);
  }
  return absl::OkStatus();
}

absl::Status DynamicDimensionInference::InferPad(Instruction* hlo) {
  Computation* computation = hlo->parent();
  for (const auto& [dimension, size] : SizesOf(hlo->operand(0))) {
    const PaddingDimension& p = hlo->attrs().padding[dimension.dim];
    Instruction* result = size;
    if (p.interior != 0) {
      Instruction* one = S32Constant(computation, 1);
      Instruction* zero = S32Constant(computation, 0);
      Instruction* interior = S32Constant(computation, p.interior);
      HLOGYM_ASSIGN(gaps, MakeBinary(Opcode::kSubtract, result, one));
      HLOGYM_ASSIGN(some_gaps, MakeBinary(Opcode::kMaximum, gaps, zero));
      HLOGYM_ASSIGN(inserted, MakeBinary(Opcode::kMultiply, some_gaps, interior));
      HLOGYM_ASSIGN(widened, MakeBinary(Opcode::kAdd, inserted, result));
      result = widened;
    }
    HLOGYM_ASSIGN(padded,
                  MakeBinary(Opcode::kAdd, result, S32Constant(computation, p.low + p.high)));
    SetSize(hlo, {}, dimension.dim, padded);
  }
  return absl::OkStatus();
}

absl::Status DynamicDimensionInference::InferGetDimensionSize(Instruction* hlo) {
  if (hlo->operand_count() != 1 || hlo->attrs().dimensions.size() != 1) {
    return NotModelled(hlo, "expected one operand and one dimension");
  }
  const Instruction* operand = hlo->operand(0);
  const int64_t dim = hlo->attrs().dimensions[0];
  if (!operand->shape().IsArray() || dim < 0 || dim >= operand->shape().rank()) {
    return NotModelled(hlo, "dimensions={d} must name one dimension of the array operand");
  }
  Instruction* size = GetSize(operand, dim);
  if (size == nullptr) {
    size = MakeScalarConstant(hlo->parent(), PrimitiveType::kS32,
                              static_cast<double>(operand->shape().dimensions(dim)),
                              hlo->shape().has_layout());
  }
  return hlo->ReplaceAllUsesWith(size);
}

}  // namespace hlogym
