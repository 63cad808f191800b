#include "passes/while_loop/while_util.h"

#include <memory>

#include "absl/strings/str_cat.h"
#include "hlo/module.h"
#include "hlo/status_macros.h"
#include "passes/builders.h"

namespace hlogym {
namespace {

// A new (not yet added) computation of `module` with one parameter.
std::unique_ptr<Computation> NewComputation(Module& module, std::string_view name,
                                            const Shape& parameter_shape, Instruction** parameter) {
  auto computation = std::make_unique<Computation>(module.UniqueName(name));
  computation->set_parent(&module);
  auto param = std::make_unique<Instruction>(Opcode::kParameter, parameter_shape,
                                             module.UniqueName("loop_state"));
  param->mutable_attrs().parameter_number = 0;
  *parameter = computation->AddInstruction(std::move(param));
  return computation;
}

// XLA creates each loop computation with a throwaway root of zeros
// (constant + broadcast per array, a tuple of those for tuples) before the
// real root; it stays behind, dead, and counts until DCE runs.
absl::Status AddPlaceholderZeros(Computation* computation, const Shape& shape, bool with_layout) {
  if (shape.IsTuple()) {
    std::vector<Instruction*> elements;
    for (const Shape& element : shape.tuple_shapes()) {
      if (!element.IsArray()) return absl::OkStatus();
      Instruction* zero = MakeScalarConstant(computation, element.element_type(), 0, with_layout);
      HLOGYM_ASSIGN(broadcast, MakeBroadcast(zero, element.dimensions(), {}));
      elements.push_back(broadcast);
    }
    MakeTuple(computation, elements);
    return absl::OkStatus();
  }
  if (!shape.IsArray()) return absl::OkStatus();
  Instruction* zero = MakeScalarConstant(computation, shape.element_type(), 0, with_layout);
  return MakeBroadcast(zero, shape.dimensions(), {}).status();
}

}  // namespace

absl::StatusOr<std::vector<Instruction*>> MakeCountedLoop(
    Computation* computation, int64_t trip_count, const std::vector<Instruction*>& init_values,
    const CountedLoopBody& body, int64_t first) {
  Module* module = computation->parent();
  if (module == nullptr) return absl::InternalError("computation is not in a module");
  if (trip_count < 0 || first < 0 || first + trip_count > INT32_MAX) {
    return absl::UnimplementedError(
        absl::StrCat("loop trip count ", trip_count, " does not fit an s32 induction variable"));
  }
  const bool with_layout = !init_values.empty() && init_values[0]->shape().has_layout();
  Instruction* start =
      MakeScalarConstant(computation, PrimitiveType::kS32, static_cast<double>(first), with_layout);
  std::vector<Instruction*> init = {start};
  init.insert(init.end(), init_values.begin(), init_values.end());
  Instruction* init_tuple = MakeTuple(computation, init);
  const Shape state_shape = init_tuple->shape();

  Instruction* cond_param = nullptr;
  auto cond = NewComputation(*module, "while_cond", state_shape, &cond_param);
  {
    if (absl::Status s =
            AddPlaceholderZeros(cond.get(), Shape(PrimitiveType::kPred, {}), with_layout);
        !s.ok()) {
      return s;
    }
    HLOGYM_ASSIGN(i, MakeGetTupleElement(cond_param, 0));
    Instruction* limit = MakeScalarConstant(cond.get(), PrimitiveType::kS32,
                                            static_cast<double>(first + trip_count), with_layout);
    HLOGYM_ASSIGN(less, MakeCompare(ComparisonDirection::kLt, i, limit));
    cond->set_root_instruction(less);
  }

  Instruction* body_param = nullptr;
  auto body_computation = NewComputation(*module, "while_body", state_shape, &body_param);
  {
    HLOGYM_RETURN_IF_ERROR(AddPlaceholderZeros(body_computation.get(), state_shape, with_layout));
    std::vector<Instruction*> elements;
    for (int64_t k = 0; k < state_shape.tuple_shapes_size(); ++k) {
      HLOGYM_ASSIGN(element, MakeGetTupleElement(body_param, k));
      elements.push_back(element);
    }
    std::vector<Instruction*> state(elements.begin() + 1, elements.end());
    HLOGYM_ASSIGN(next, body(elements[0], state));
    if (next.size() != state.size()) {
      return absl::InternalError("loop body returned the wrong number of values");
    }
    Instruction* one =
        MakeScalarConstant(body_computation.get(), PrimitiveType::kS32, 1, with_layout);
    HLOGYM_ASSIGN(next_i, MakeBinary(Opcode::kAdd, elements[0], one));
    std::vector<Instruction*> results = {next_i};
    for (size_t k = 0; k < next.size(); ++k) {
      Instruction* value = (next)[k];
      if (!value->shape().Compatible(state[k]->shape())) {
        return absl::InternalError(absl::StrCat("loop body changed the shape of state element ", k,
                                                " to ", value->shape().ToString()));
      }
      results.push_back(value);
    }
    Instruction* root = MakeTuple(body_computation.get(), results);
    root->set_shape(state_shape);
    body_computation->set_root_instruction(root);
  }
  Computation* cond_added = module->AddComputation(std::move(cond));
  Computation* body_added = module->AddComputation(std::move(body_computation));
  auto loop = std::make_unique<Instruction>(Opcode::kWhile, state_shape);
  loop->AppendOperand(init_tuple);
  loop->mutable_called_computations() = {cond_added, body_added};
  Instruction* added = computation->AddInstruction(std::move(loop));
  std::vector<Instruction*> outputs;
  for (size_t k = 1; k <= init_values.size(); ++k) {
    HLOGYM_ASSIGN(element, MakeGetTupleElement(added, static_cast<int64_t>(k)));
    outputs.push_back(element);
  }
  return outputs;
}

absl::StatusOr<Instruction*> InitElement(Instruction* init, int64_t index) {
  if (init->opcode() == Opcode::kTuple) return init->operand(index);
  return MakeGetTupleElement(init, index);
}

}  // namespace hlogym
