#include "passes/builders.h"

#include <cctype>
#include <memory>
#include <numeric>

#include "absl/container/flat_hash_map.h"
#include "analysis/shape_inference.h"
#include "hlo/status_macros.h"

namespace hlogym {
namespace {

std::unique_ptr<Instruction> NewInstruction(Opcode opcode, Shape shape,
                                            std::span<Instruction* const> operands) {
  auto instruction = std::make_unique<Instruction>(opcode, std::move(shape));
  for (Instruction* operand : operands) instruction->AppendOperand(operand);
  return instruction;
}

// Adds an instruction with the inferred `shape` (or returns the inference
// error); callers then set the opcode's attributes.
absl::StatusOr<Instruction*> FinishPlain(absl::StatusOr<Shape> shape, Opcode opcode,
                                         std::vector<Instruction*> operands) {
  if (!shape.ok()) return shape.status();
  auto instruction = NewInstruction(opcode, std::move(*shape), operands);
  return AddWithLayoutOf(operands[0]->parent(), std::move(instruction), operands[0]);
}

}  // namespace

Instruction* AddWithLayoutOf(Computation* computation, std::unique_ptr<Instruction> instruction,
                             const Instruction* like) {
  if (like != nullptr && (like->shape().has_layout() ||
                          (like->shape().IsTuple() && !like->shape().tuple_shapes().empty()))) {
    instruction->mutable_shape().SetDefaultLayout();
  }
  return computation->AddInstruction(std::move(instruction));
}

absl::StatusOr<Instruction*> MakeUnary(Opcode opcode, Instruction* operand) {
  return FinishPlain(InferUnaryShape(opcode, operand->shape()), opcode, {operand});
}

absl::StatusOr<Instruction*> MakeBinary(Opcode opcode, Instruction* lhs, Instruction* rhs) {
  return FinishPlain(InferBinaryShape(opcode, lhs->shape(), rhs->shape()), opcode, {lhs, rhs});
}

absl::StatusOr<Instruction*> MakeCompare(ComparisonDirection direction, Instruction* lhs,
                                         Instruction* rhs, ComparisonType type) {
  auto compare = MakeBinary(Opcode::kCompare, lhs, rhs);
  if (!compare.ok()) return compare;
  (*compare)->mutable_attrs().comparison_direction = direction;
  (*compare)->mutable_attrs().comparison_type = type;
  return compare;
}

absl::StatusOr<Instruction*> MakeSelect(Instruction* pred, Instruction* on_true,
                                        Instruction* on_false) {
  return FinishPlain(InferSelectShape(pred->shape(), on_true->shape(), on_false->shape()),
                     Opcode::kSelect, {pred, on_true, on_false});
}

absl::StatusOr<Instruction*> MakeConvert(Instruction* operand, PrimitiveType type) {
  return FinishPlain(InferConvertShape(operand->shape(), type), Opcode::kConvert, {operand});
}

absl::StatusOr<Instruction*> MakeBroadcast(Instruction* operand,
                                           std::span<const int64_t> result_dims,
                                           std::span<const int64_t> dimensions) {
  auto made = FinishPlain(InferBroadcastShape(operand->shape(), result_dims, dimensions),
                          Opcode::kBroadcast, {operand});
  if (made.ok()) (*made)->mutable_attrs().dimensions.assign(dimensions.begin(), dimensions.end());
  return made;
}

absl::StatusOr<Instruction*> MakeReshape(Instruction* operand,
                                         std::span<const int64_t> result_dims) {
  return FinishPlain(InferReshapeShape(operand->shape(), result_dims), Opcode::kReshape, {operand});
}

absl::StatusOr<Instruction*> MakeTranspose(Instruction* operand,
                                           std::span<const int64_t> permutation) {
  auto made = FinishPlain(InferTransposeShape(operand->shape(), permutation), Opcode::kTranspose,
                          {operand});
  if (made.ok()) {
    (*made)->mutable_attrs().dimensions.assign(permutation.begin(), permutation.end());
  }
  return made;
}

absl::StatusOr<Instruction*> MakeSlice(Instruction* operand,
                                       std::span<const SliceDimension> slice) {
  auto made = FinishPlain(InferSliceShape(operand->shape(), slice), Opcode::kSlice, {operand});
  if (made.ok()) (*made)->mutable_attrs().slice.assign(slice.begin(), slice.end());
  return made;
}

absl::StatusOr<Instruction*> MakeConcatenate(std::span<Instruction* const> operands,
                                             int64_t dimension) {
  if (operands.empty()) return absl::InvalidArgumentError("concatenate needs operands");
  std::vector<Shape> shapes;
  for (const Instruction* operand : operands) shapes.push_back(operand->shape());
  auto made = FinishPlain(InferConcatenateShape(shapes, dimension), Opcode::kConcatenate,
                          std::vector<Instruction*>(operands.begin(), operands.end()));
  if (made.ok()) (*made)->mutable_attrs().dimensions = {dimension};
  return made;
}

absl::StatusOr<Instruction*> MakePad(Instruction* operand, Instruction* padding_value,
                                     std::span<const PaddingDimension> padding) {
  auto made = FinishPlain(InferPadShape(operand->shape(), padding_value->shape(), padding),
                          Opcode::kPad, {operand, padding_value});
  if (made.ok()) (*made)->mutable_attrs().padding.assign(padding.begin(), padding.end());
  return made;
}

absl::StatusOr<Instruction*> MakeDynamicSlice(Instruction* operand,
                                              std::span<Instruction* const> starts,
                                              std::span<const int64_t> sizes) {
  std::vector<Shape> start_shapes;
  std::vector<Instruction*> operands = {operand};
  for (Instruction* start : starts) {
    start_shapes.push_back(start->shape());
    operands.push_back(start);
  }
  auto made = FinishPlain(InferDynamicSliceShape(operand->shape(), start_shapes,
                                                 std::vector<int64_t>(sizes.begin(), sizes.end())),
                          Opcode::kDynamicSlice, operands);
  if (made.ok()) (*made)->mutable_attrs().dynamic_slice_sizes.assign(sizes.begin(), sizes.end());
  return made;
}

absl::StatusOr<Instruction*> MakeDynamicUpdateSlice(Instruction* operand, Instruction* update,
                                                    std::span<Instruction* const> starts) {
  std::vector<Shape> start_shapes;
  std::vector<Instruction*> operands = {operand, update};
  for (Instruction* start : starts) {
    start_shapes.push_back(start->shape());
    operands.push_back(start);
  }
  return FinishPlain(InferDynamicUpdateSliceShape(operand->shape(), update->shape(), start_shapes),
                     Opcode::kDynamicUpdateSlice, operands);
}

absl::StatusOr<Instruction*> MakeDot(Instruction* lhs, Instruction* rhs,
                                     const DotDimensionNumbers& dnums, PrimitiveType result_type) {
  auto made = FinishPlain(InferDotShape(lhs->shape(), rhs->shape(), dnums, result_type),
                          Opcode::kDot, {lhs, rhs});
  if (made.ok()) (*made)->mutable_attrs().dot_dimension_numbers = dnums;
  return made;
}

absl::StatusOr<Instruction*> MakeReduce(Instruction* input, Instruction* init,
                                        std::span<const int64_t> dimensions,
                                        Computation* to_apply) {
  Shape inputs[] = {input->shape()};
  Shape inits[] = {init->shape()};
  auto made = FinishPlain(InferReduceShape(inputs, inits, dimensions, to_apply), Opcode::kReduce,
                          {input, init});
  if (made.ok()) {
    (*made)->mutable_attrs().dimensions.assign(dimensions.begin(), dimensions.end());
    (*made)->mutable_called_computations() = {to_apply};
  }
  return made;
}

absl::StatusOr<Instruction*> MakeGetTupleElement(Instruction* tuple, int64_t index) {
  const Shape& shape = tuple->shape();
  if (!shape.IsTuple() || index < 0 || index >= shape.tuple_shapes_size()) {
    return absl::InvalidArgumentError("get-tuple-element index " + std::to_string(index) +
                                      " out of range for " + shape.ToString());
  }
  auto gte = std::make_unique<Instruction>(Opcode::kGetTupleElement, shape.tuple_shapes(index));
  gte->mutable_attrs().tuple_index = index;
  gte->AppendOperand(tuple);
  return tuple->parent()->AddInstruction(std::move(gte));
}

Instruction* MakeTuple(Computation* computation, std::span<Instruction* const> operands) {
  std::vector<Shape> shapes;
  for (const Instruction* operand : operands) shapes.push_back(operand->shape());
  return computation->AddInstruction(
      NewInstruction(Opcode::kTuple, Shape::Tuple(std::move(shapes)), operands));
}

Instruction* MakeMap(Computation* computation, const Shape& shape,
                     std::span<Instruction* const> operands, Computation* to_apply) {
  auto map = NewInstruction(Opcode::kMap, shape, operands);
  map->mutable_attrs().dimensions.resize(shape.rank());
  std::iota(map->mutable_attrs().dimensions.begin(), map->mutable_attrs().dimensions.end(), 0);
  map->mutable_attrs().has_dimensions = true;
  map->mutable_called_computations().push_back(to_apply);
  return computation->AddInstruction(std::move(map));
}

Instruction* MakeConstant(Computation* computation, Literal literal, bool with_layout) {
  Shape shape = literal.shape();
  if (with_layout) shape.SetDefaultLayout();
  auto constant = std::make_unique<Instruction>(Opcode::kConstant, std::move(shape));
  constant->mutable_attrs().literal = std::make_shared<const Literal>(std::move(literal));
  return computation->AddInstruction(std::move(constant));
}

Instruction* MakeScalarConstant(Computation* computation, PrimitiveType type, double value,
                                bool with_layout) {
  Literal literal(Shape::Scalar(type));
  literal.SetFromDouble(0, value);
  return MakeConstant(computation, std::move(literal), with_layout);
}

Instruction* MakeIota(Computation* computation, PrimitiveType type, std::vector<int64_t> dims,
                      int64_t dimension, bool with_layout) {
  Shape shape(type, std::move(dims));
  if (with_layout) shape.SetDefaultLayout();
  auto iota = std::make_unique<Instruction>(Opcode::kIota, shape);
  iota->mutable_attrs().iota_dimension = dimension;
  return computation->AddInstruction(std::move(iota));
}

Computation* AddScalarBinaryComputation(Module& module, std::string_view name, Opcode opcode,
                                        PrimitiveType type, bool with_layout, std::string_view lhs,
                                        std::string_view rhs) {
  auto computation = std::make_unique<Computation>(module.UniqueName(name));
  computation->set_parent(&module);
  Shape scalar = Shape::Scalar(type);
  if (with_layout) scalar.SetDefaultLayout();
  auto binary = std::make_unique<Instruction>(opcode, scalar);
  for (int64_t i = 0; i < 2; ++i) {
    auto parameter = std::make_unique<Instruction>(Opcode::kParameter, scalar,
                                                   module.UniqueName(i == 0 ? lhs : rhs));
    parameter->mutable_attrs().parameter_number = i;
    binary->AppendOperand(computation->AddInstruction(std::move(parameter)));
  }
  computation->set_root_instruction(computation->AddInstruction(std::move(binary)));
  return module.AddComputation(std::move(computation));
}

std::string HloIdentifier(std::string name) {
  for (char& c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '.' && c != '-') c = '_';
  }
  return name;
}

absl::Status ReplaceWithCall(Instruction* instruction, Computation* callee) {
  auto call = std::make_unique<Instruction>(Opcode::kCall, instruction->shape());
  for (Instruction* operand : instruction->operands()) call->AppendOperand(operand);
  call->mutable_called_computations().push_back(callee);
  Computation* parent = instruction->parent();
  Instruction* added = parent->AddInstruction(std::move(call));
  return parent->ReplaceInstruction(instruction, added);
}

absl::StatusOr<bool> ExpandIntoCalls(Module& module, const CallExpansion& expansion) {
  std::vector<Instruction*> matched;
  for (const auto& computation : module.computations()) {
    for (const auto& instruction : computation->instructions()) {
      HLOGYM_ASSIGN(expandable, expansion.expandable(*instruction));
      if (expandable) matched.push_back(instruction.get());
    }
  }
  if (matched.empty()) return false;
  absl::flat_hash_map<std::string, Computation*> callees;
  for (Instruction* instruction : matched) {
    const std::string name = expansion.callee_name(*instruction);
    Computation*& callee = callees[name];
    if (callee == nullptr) {
      HLOGYM_ASSIGN(built, expansion.build(*instruction, name));
      callee = built;
    }
    HLOGYM_RETURN_IF_ERROR(ReplaceWithCall(instruction, callee));
  }
  module.SortComputationsCalleesFirst();
  return true;
}

}  // namespace hlogym
