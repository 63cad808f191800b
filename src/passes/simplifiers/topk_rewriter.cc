#include "passes/simplifiers/topk_rewriter.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "hlo/primitive_type.h"
#include "hlo/query.h"
#include "hlo/status_macros.h"
#include "passes/builders.h"

namespace hlogym {
namespace {

bool HasType(const Instruction* instruction, PrimitiveType type) {
  return instruction->shape().IsArray() && instruction->shape().element_type() == type;
}

bool IsParameter(const Instruction* instruction, int64_t number, PrimitiveType type) {
  return instruction->opcode() == Opcode::kParameter &&
         instruction->attrs().parameter_number == number && HasType(instruction, type);
}

// A scalar constant whose value, read as an unsigned integer, is `value`.
bool IsScalarConstant(const Instruction* instruction, uint64_t value) {
  if (instruction->opcode() != Opcode::kConstant || !instruction->shape().IsArray() ||
      instruction->shape().rank() != 0 || instruction->attrs().literal == nullptr ||
      instruction->literal().elided()) {
    return false;
  }
  const PrimitiveType type = instruction->shape().element_type();
  if (IsFloatingPointType(type)) return instruction->literal().GetAsDouble(0) == double(value);
  return static_cast<uint64_t>(instruction->literal().GetAsInt64(0)) == value;
}

bool IsCompare(const Instruction* instruction, ComparisonDirection direction) {
  return instruction->opcode() == Opcode::kCompare &&
         instruction->attrs().comparison_direction == direction;
}

bool IsBitcastConvertOf(const Instruction* instruction, PrimitiveType type,
                        const std::function<bool(const Instruction*)>& operand) {
  return instruction->opcode() == Opcode::kBitcastConvert && HasType(instruction, type) &&
         operand(instruction->operand(0));
}

// The float value of parameter `number`: the parameter itself, or (with
// `via_convert`) a convert of a bf16 parameter to `float_type`.
std::function<bool(const Instruction*)> FloatValue(int64_t number, PrimitiveType float_type,
                                                   bool via_convert) {
  return [=](const Instruction* instruction) {
    if (!via_convert) return IsParameter(instruction, number, float_type);
    return instruction->opcode() == Opcode::kConvert && HasType(instruction, float_type) &&
           IsParameter(instruction->operand(0), number, PrimitiveType::kBF16);
  };
}

// select(bits < 0, bits ^ max, bits), bits = bitcast-convert(value) as
// `int_type` with max = 2^(width-1) - 1, either operand order of the xor.
bool IsXorTotalOrderKey(const Instruction* key, int64_t number, PrimitiveType float_type,
                        PrimitiveType int_type, bool via_convert) {
  if (key->opcode() != Opcode::kSelect) return false;
  auto value = FloatValue(number, float_type, via_convert);
  auto bits = [&](const Instruction* i) { return IsBitcastConvertOf(i, int_type, value); };
  const uint64_t max = int_type == PrimitiveType::kS16 ? 0x7fff : 0x7fffffff;
  const Instruction* predicate = key->operand(0);
  const Instruction* flipped = key->operand(1);
  if (!IsCompare(predicate, ComparisonDirection::kLt) || !bits(predicate->operand(0)) ||
      !IsScalarConstant(predicate->operand(1), 0) || !bits(key->operand(2))) {
    return false;
  }
  if (flipped->opcode() != Opcode::kXor || !HasType(flipped, int_type)) return false;
  const Instruction* a = flipped->operand(0);
  const Instruction* b = flipped->operand(1);
  return (IsScalarConstant(a, max) && bits(b)) || (IsScalarConstant(b, max) && bits(a));
}

// The older form: select(s32 < 0, bitcast-convert-s32(max - u32), s32),
// where max is an s32 constant or a convert of one to u32.
bool IsSubtractTotalOrderKey(const Instruction* key, int64_t number, bool via_convert) {
  if (key->opcode() != Opcode::kSelect) return false;
  auto value = FloatValue(number, PrimitiveType::kF32, via_convert);
  auto as_s32 = [&](const Instruction* i) {
    return IsBitcastConvertOf(i, PrimitiveType::kS32, value);
  };
  auto as_u32 = [&](const Instruction* i) {
    return IsBitcastConvertOf(i, PrimitiveType::kU32, value);
  };
  const Instruction* predicate = key->operand(0);
  if (!IsCompare(predicate, ComparisonDirection::kLt) || !as_s32(predicate->operand(0)) ||
      !IsScalarConstant(predicate->operand(1), 0) || !as_s32(key->operand(2))) {
    return false;
  }
  const Instruction* flipped = key->operand(1);
  if (flipped->opcode() != Opcode::kBitcastConvert || !HasType(flipped, PrimitiveType::kS32)) {
    return false;
  }
  const Instruction* difference = flipped->operand(0);
  if (difference->opcode() != Opcode::kSubtract || !as_u32(difference->operand(1))) return false;
  const Instruction* max = difference->operand(0);
  if (max->opcode() == Opcode::kConvert && HasType(max, PrimitiveType::kU32)) {
    max = max->operand(0);
  }
  return IsScalarConstant(max, 0x7fffffff);
}

bool IsNanSafeGreaterThan(const Computation* comparator) {
  const Instruction* root = comparator->root_instruction();
  if (root == nullptr) return false;
  // select(broadcast(constant), p0 > p1, broadcast(constant)) with s32
  // indices as parameters 2 and 3.
  if (root->opcode() == Opcode::kSelect) {
    auto is_true_broadcast = [](const Instruction* i) {
      return i->opcode() == Opcode::kBroadcast && i->operand(0)->opcode() == Opcode::kConstant;
    };
    const Instruction* gt = root->operand(1);
    if (!is_true_broadcast(root->operand(0)) || !is_true_broadcast(root->operand(2)) ||
        !IsCompare(gt, ComparisonDirection::kGt) || comparator->num_parameters() != 4) {
      return false;
    }
    for (PrimitiveType type :
         {PrimitiveType::kBF16, PrimitiveType::kF32, PrimitiveType::kS32, PrimitiveType::kU32}) {
      if (IsParameter(gt->operand(0), 0, type) && IsParameter(gt->operand(1), 1, type) &&
          comparator->parameter_instruction(2) != nullptr &&
          HasType(comparator->parameter_instruction(2), PrimitiveType::kS32) &&
          comparator->parameter_instruction(3) != nullptr &&
          HasType(comparator->parameter_instruction(3), PrimitiveType::kS32)) {
        return true;
      }
    }
    return false;
  }
  if (!IsCompare(root, ComparisonDirection::kGt)) return false;
  const Instruction* lhs = root->operand(0);
  const Instruction* rhs = root->operand(1);
  auto both = [&](const std::function<bool(const Instruction*, int64_t)>& key) {
    return key(lhs, 0) && key(rhs, 1);
  };
  using PT = PrimitiveType;
  return both([](const Instruction* k, int64_t n) {
           return IsXorTotalOrderKey(k, n, PT::kF32, PT::kS32, false);
         }) ||
         both([](const Instruction* k, int64_t n) {
           return IsXorTotalOrderKey(k, n, PT::kBF16, PT::kS16, false);
         }) ||
         both([](const Instruction* k, int64_t n) {
           return IsXorTotalOrderKey(k, n, PT::kF32, PT::kS32, true);
         }) ||
         both([](const Instruction* k, int64_t n) {
           return IsSubtractTotalOrderKey(k, n, false);
         }) ||
         both(
             [](const Instruction* k, int64_t n) { return IsSubtractTotalOrderKey(k, n, true); }) ||
         both([](const Instruction* k, int64_t n) {
           for (PT type : {PT::kBF16, PT::kF32, PT::kS32, PT::kU32}) {
             if (IsParameter(k, n, type)) return true;
           }
           return false;
         });
}

// Whether `indices` holds each element's position along `dimension` of
// `data`: an s32 iota of data's shape counting along it, or a broadcast of
// a rank-1 iota into it.
bool IsIndexIota(const Instruction* indices, const Instruction* data, int64_t dimension) {
  if (!HasType(indices, PrimitiveType::kS32)) return false;
  if (indices->opcode() == Opcode::kIota) {
    return indices->shape().dimensions() == data->shape().dimensions() &&
           indices->attrs().iota_dimension == dimension;
  }
  if (indices->opcode() != Opcode::kBroadcast) return false;
  const Instruction* iota = indices->operand(0);
  return iota->opcode() == Opcode::kIota && HasType(iota, PrimitiveType::kS32) &&
         iota->shape().rank() == 1 &&
         iota->shape().dimensions(0) == data->shape().dimensions(dimension) &&
         indices->attrs().dimensions == std::vector<int64_t>{dimension};
}

// k if `sort` is a top-k: every use slices the first k elements along the
// sort dimension (whole along the others).
std::optional<int64_t> TopKOfSort(const Instruction* sort) {
  if (sort->opcode() != Opcode::kSort) return std::nullopt;
  if (sort->operand_count() != 1 && sort->operand_count() != 2) return std::nullopt;
  const Instruction* data = sort->operand(0);
  if (!data->shape().IsArray() || sort->attrs().dimensions.size() != 1) return std::nullopt;
  const int64_t dimension = sort->attrs().dimensions[0];
  if (dimension < 0 || dimension >= data->shape().rank()) return std::nullopt;
  if (sort->operand_count() == 2 && !IsIndexIota(sort->operand(1), data, dimension)) {
    return std::nullopt;
  }
  if (sort->to_apply() == nullptr || !IsNanSafeGreaterThan(sort->to_apply())) return std::nullopt;
  if (sort->IsRoot()) return std::nullopt;
  std::optional<int64_t> k;
  for (const Instruction* user : sort->users()) {
    const Instruction* slice = user;
    if (sort->operand_count() == 2) {
      if (user->opcode() != Opcode::kGetTupleElement || user->user_count() != 1 || user->IsRoot()) {
        return std::nullopt;
      }
      slice = user->users()[0];
    }
    if (slice->opcode() != Opcode::kSlice) return std::nullopt;
    const auto& dims = slice->operand(0)->shape().dimensions();
    const auto& ranges = slice->attrs().slice;
    if (ranges.size() != dims.size()) return std::nullopt;
    for (size_t i = 0; i < ranges.size(); ++i) {
      if (ranges[i].start != 0 || ranges[i].stride != 1) return std::nullopt;
      if (static_cast<int64_t>(i) != dimension && ranges[i].limit != dims[i]) return std::nullopt;
    }
    if (k.has_value() && *k != ranges[dimension].limit) return std::nullopt;
    k = ranges[dimension].limit;
  }
  return k;
}

// Replaces the slices of `sort` by the outputs of a TopK custom call.
absl::Status Rewrite(Instruction* sort, int64_t k) {
  Computation* computation = sort->parent();
  Instruction* input = sort->operand(0);
  const Shape& data_shape = input->shape();
  const PrimitiveType type = data_shape.element_type();
  const int64_t rank = data_shape.rank();
  const int64_t dimension = sort->attrs().dimensions[0];
  const int64_t n = data_shape.dimensions(dimension);
  int64_t batch = 1;
  if (rank >= 2) {
    for (int64_t d : data_shape.dimensions()) batch *= d;
    batch = n == 0 ? 0 : batch / n;
    if (rank > 2) {
      std::vector<int64_t> flat =
          dimension == 0 ? std::vector<int64_t>{n, batch} : std::vector<int64_t>{batch, n};
      HLOGYM_ASSIGN(reshaped, MakeReshape(input, flat));
      input = reshaped;
    }
    if (dimension == 0) {
      HLOGYM_ASSIGN(transposed, MakeTranspose(input, std::vector<int64_t>{1, 0}));
      input = transposed;
    }
  }
  std::vector<int64_t> out_dims =
      rank >= 2 ? std::vector<int64_t>{batch, k} : std::vector<int64_t>{k};
  Shape values_shape(type, out_dims);
  Shape indices_shape(PrimitiveType::kS32, out_dims);
  auto call = std::make_unique<Instruction>(Opcode::kCustomCall,
                                            Shape::Tuple({values_shape, indices_shape}));
  call->AppendOperand(input);
  call->mutable_attrs().custom_call_target = "TopK";
  call->mutable_called_computations() = {sort->to_apply()};
  Instruction* topk = AddWithLayoutOf(computation, std::move(call), input);
  HLOGYM_ASSIGN(values, MakeGetTupleElement(topk, 0));
  HLOGYM_ASSIGN(indices, MakeGetTupleElement(topk, 1));
  Instruction* outputs[2] = {values, indices};
  for (Instruction*& output : outputs) {
    if (rank >= 2 && dimension == 0) {
      HLOGYM_ASSIGN(transposed, MakeTranspose(output, std::vector<int64_t>{1, 0}));
      output = transposed;
    }
    if (rank > 2) {
      std::vector<int64_t> dims = data_shape.dimensions();
      dims[dimension] = k;
      HLOGYM_ASSIGN(reshaped, MakeReshape(output, dims));
      output = reshaped;
    }
  }
  const std::vector<Instruction*> users = sort->users();
  for (Instruction* user : users) {
    if (sort->operand_count() == 2) {
      const int64_t index = user->attrs().tuple_index;
      if (index != 0 && index != 1) {
        return absl::InternalError("topk-rewriter: sort output index out of range");
      }
      const std::vector<Instruction*> slices = user->users();
      for (Instruction* slice : slices) {
        HLOGYM_RETURN_IF_ERROR(slice->ReplaceAllUsesWith(outputs[index]));
      }
    } else {
      HLOGYM_RETURN_IF_ERROR(user->ReplaceAllUsesWith(outputs[0]));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<bool> TopkRewriter::Run(Module& module) {
  bool changed = false;
  for (const auto& computation : module.computations()) {
    for (Instruction* instruction : computation->MakeInstructionPostOrder()) {
      std::optional<int64_t> k = TopKOfSort(instruction);
      if (!k.has_value()) continue;
      const Instruction* data = instruction->operand(0);
      const PrimitiveType type = data->shape().element_type();
      if (type != PrimitiveType::kF32 && type != PrimitiveType::kBF16) continue;
      const int64_t dimension = instruction->attrs().dimensions[0];
      if (dimension != 0 && dimension != data->shape().rank() - 1) continue;
      if (f32_only_ && type != PrimitiveType::kF32) continue;
      HLOGYM_RETURN_IF_ERROR(Rewrite(instruction, *k));
      changed = true;
    }
  }
  return changed;
}

// A candidate is a sort used only through slices.
bool TopkRewriter::MayChange(const Module& module) const {
  return ContainsOpcode(module, {Opcode::kSort}) && ContainsOpcode(module, {Opcode::kSlice});
}

}  // namespace hlogym
