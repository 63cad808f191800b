#include "passes/expanders/select_and_scatter_expander.h"

#include <memory>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "analysis/shape_inference.h"
#include "hlo/query.h"
#include "hlo/status_macros.h"
#include "passes/builders.h"
#include "passes/pass_utils.h"

namespace hlogym {
namespace {

bool Matches(const Instruction* instruction) {
  return instruction->opcode() == Opcode::kSelectAndScatter && instruction->operand_count() == 3 &&
         instruction->called_computations().size() == 2 &&
         instruction->operand(0)->shape().IsArray() &&
         instruction->operand(0)->shape().rank() > 0 && instruction->attrs().window.has_value();
}

// A scalar shape, with a layout when `with_layout`.
Shape ScalarShape(PrimitiveType type, bool with_layout) {
  Shape shape = Shape::Scalar(type);
  if (with_layout) shape.SetDefaultLayout();
  return shape;
}

// The reduce-window reducer over (value, iota_0, ..., iota_{rank-1}) pairs.
absl::StatusOr<Computation*> MakeReducer(Module& module, const Computation& select,
                                         PrimitiveType value_type, int64_t rank, bool with_layout) {
  auto reducer = std::make_unique<Computation>(
      module.UniqueName(absl::StrCat(select.name(), ".reduce_window")));
  Computation* comp = reducer.get();
  comp->set_parent(&module);
  auto parameter = [&](int64_t number, PrimitiveType type, const char* name) {
    auto p = std::make_unique<Instruction>(Opcode::kParameter, ScalarShape(type, with_layout),
                                           module.UniqueName(name));
    p->mutable_attrs().parameter_number = number;
    return comp->AddInstruction(std::move(p));
  };
  const int64_t rhs_begin = rank + 1;
  Instruction* value_lhs = parameter(0, value_type, "operand_lhs");
  std::vector<Instruction*> iota_lhs, iota_rhs;
  for (int64_t i = 0; i < rank; ++i)
    iota_lhs.push_back(parameter(1 + i, PrimitiveType::kS32, "iota_lhs"));
  Instruction* value_rhs = parameter(rhs_begin, value_type, "operand_rhs");
  for (int64_t i = 0; i < rank; ++i) {
    iota_rhs.push_back(parameter(rhs_begin + 1 + i, PrimitiveType::kS32, "iota_rhs"));
  }
  // The select computation, inlined on (value_lhs, value_rhs).
  if (select.num_parameters() != 2) {
    return absl::InvalidArgumentError(
        absl::StrCat("select computation ", select.name(), " must have two parameters"));
  }
  absl::flat_hash_map<const Instruction*, Instruction*> map;
  map[select.parameter_instruction(0)] = value_lhs;
  map[select.parameter_instruction(1)] = value_rhs;
  for (Instruction* instruction : select.MakeInstructionPostOrder()) {
    if (instruction->opcode() == Opcode::kParameter) continue;
    std::vector<Instruction*> operands;
    for (Instruction* operand : instruction->operands()) operands.push_back(map.at(operand));
    map[instruction] = comp->AddInstruction(instruction->CloneWithNewOperands(operands, ""));
  }
  Instruction* selected = map.at(select.root_instruction());
  if (!selected->shape().IsScalar() || selected->shape().element_type() != PrimitiveType::kPred) {
    return absl::InvalidArgumentError(
        absl::StrCat("select computation ", select.name(), " must return pred[]"));
  }
  Instruction* neg_one = MakeScalarConstant(comp, PrimitiveType::kS32, -1, with_layout);
  HLOGYM_ASSIGN(lhs_real, MakeCompare(ComparisonDirection::kNe, iota_lhs[0], neg_one));
  HLOGYM_ASSIGN(rhs_real, MakeCompare(ComparisonDirection::kNe, iota_rhs[0], neg_one));
  HLOGYM_ASSIGN(rhs_padding, MakeUnary(Opcode::kNot, rhs_real));
  auto keep_lhs = MakeBinary(Opcode::kAnd, selected, lhs_real);
  if (!keep_lhs.ok()) return keep_lhs.status();
  keep_lhs = MakeBinary(Opcode::kOr, *keep_lhs, rhs_padding);
  if (!keep_lhs.ok()) return keep_lhs.status();
  std::vector<Instruction*> results;
  HLOGYM_ASSIGN(value, MakeSelect(*keep_lhs, value_lhs, value_rhs));
  results.push_back(value);
  for (int64_t i = 0; i < rank; ++i) {
    HLOGYM_ASSIGN(index, MakeSelect(*keep_lhs, iota_lhs[i], iota_rhs[i]));
    results.push_back(index);
  }
  comp->set_root_instruction(MakeTuple(comp, results));
  return module.AddComputation(std::move(reducer));
}

absl::StatusOr<Instruction*> Expand(Instruction* sas) {
  Computation* computation = sas->parent();
  Module& module = *computation->parent();
  Instruction* operand = sas->operand(0);
  Instruction* source = sas->operand(1);
  Instruction* init = sas->operand(2);
  const Shape& operand_shape = operand->shape();
  const int64_t rank = operand_shape.rank();
  const bool with_layout = operand_shape.has_layout();
  if (!source->shape().IsArray() || source->shape().rank() != rank) {
    return absl::InvalidArgumentError(
        absl::StrCat(sas->name(), ": source and operand ranks differ"));
  }
  HLOGYM_ASSIGN(reducer, MakeReducer(module, *sas->called_computations()[0],
                                     operand_shape.element_type(), rank, with_layout));

  Shape iota_shape = operand_shape;
  iota_shape.set_element_type(PrimitiveType::kS32);
  std::vector<Instruction*> inputs = {operand};
  for (int64_t i = 0; i < rank; ++i) {
    auto iota = std::make_unique<Instruction>(Opcode::kIota, iota_shape);
    iota->mutable_attrs().iota_dimension = i;
    inputs.push_back(AddWithLayoutOf(computation, std::move(iota), operand));
  }
  Instruction* neg_one = MakeScalarConstant(computation, PrimitiveType::kS32, -1, with_layout);
  std::vector<Instruction*> inits = {init};
  for (int64_t i = 0; i < rank; ++i) inits.push_back(neg_one);
  std::vector<Shape> input_shapes, init_shapes;
  for (Instruction* input : inputs) input_shapes.push_back(input->shape());
  for (Instruction* value : inits) init_shapes.push_back(value->shape());
  HLOGYM_ASSIGN(window_shape,
                InferReduceWindowShape(input_shapes, init_shapes, *sas->attrs().window, reducer));
  auto reduce_window = std::make_unique<Instruction>(Opcode::kReduceWindow, window_shape);
  for (Instruction* input : inputs) reduce_window->AppendOperand(input);
  for (Instruction* value : inits) reduce_window->AppendOperand(value);
  reduce_window->mutable_attrs().window = sas->attrs().window;
  reduce_window->mutable_called_computations().push_back(reducer);
  Instruction* windowed = AddWithLayoutOf(computation, std::move(reduce_window), operand);

  std::vector<int64_t> index_dims = source->shape().dimensions();
  index_dims.push_back(1);
  std::vector<Instruction*> positions;
  for (int64_t i = 1; i <= rank; ++i) {
    HLOGYM_ASSIGN(element, MakeGetTupleElement(windowed, i));
    HLOGYM_ASSIGN(reshaped, MakeReshape(element, index_dims));
    positions.push_back(reshaped);
  }
  HLOGYM_ASSIGN(indices, MakeConcatenate(positions, rank));
  HLOGYM_ASSIGN(base, MakeBroadcast(init, sas->shape().dimensions(), {}));

  ScatterDimensionNumbers dnums;
  for (int64_t i = 0; i < rank; ++i) {
    dnums.inserted_window_dims.push_back(i);
    dnums.scatter_dims_to_operand_dims.push_back(i);
  }
  dnums.index_vector_dim = rank;
  Computation* scatter_computation = sas->called_computations()[1];
  std::vector<Shape> operands = {base->shape()}, updates = {source->shape()};
  HLOGYM_ASSIGN(scatter_shape,
                InferScatterShape(operands, indices->shape(), updates, dnums, scatter_computation));
  auto scatter = std::make_unique<Instruction>(Opcode::kScatter, scatter_shape);
  scatter->AppendOperand(base);
  scatter->AppendOperand(indices);
  scatter->AppendOperand(source);
  scatter->mutable_attrs().scatter_dimension_numbers = dnums;
  scatter->mutable_called_computations().push_back(scatter_computation);
  Instruction* result = AddWithLayoutOf(computation, std::move(scatter), operand);
  result->set_shape(sas->shape());
  return result;
}

}  // namespace

absl::StatusOr<bool> SelectAndScatterExpander::Run(Module& module) {
  HLOGYM_ASSIGN(changed, ExpandMatchingInstructions(module, name(), Matches, Expand));
  if (changed) module.SortComputationsCalleesFirst();
  return changed;
}

bool SelectAndScatterExpander::MayChange(const Module& module) const {
  return ContainsOpcode(module, {Opcode::kSelectAndScatter});
}

}  // namespace hlogym
