#include "passes/expanders/scan_expander.h"

#include <memory>
#include <vector>

#include "absl/strings/str_cat.h"
#include "analysis/shape_inference.h"
#include "hlo/query.h"
#include "hlo/scan_attributes.h"
#include "hlo/status_macros.h"
#include "passes/builders.h"
#include "passes/pass_utils.h"
#include "passes/while_loop/while_loop_analysis.h"

namespace hlogym {
namespace {

struct Builder {
  Computation* computation;
  bool with_layout;

  Instruction* S64(int64_t value) {
    return MakeScalarConstant(computation, PrimitiveType::kS64, static_cast<double>(value),
                              with_layout);
  }
};

// `count` get-tuple-elements of `tuple` from `start`.
absl::StatusOr<std::vector<Instruction*>> Elements(Instruction* tuple, int64_t start,
                                                   int64_t count) {
  std::vector<Instruction*> elements;
  for (int64_t i = 0; i < count; ++i) {
    HLOGYM_ASSIGN(element, MakeGetTupleElement(tuple, start + i));
    elements.push_back(element);
  }
  return elements;
}

// Start indices for a slice at `position` on `dim` (zero elsewhere): one
// shared zero constant.
std::vector<Instruction*> StartIndices(Builder& b, int64_t rank, int64_t dim,
                                       Instruction* position) {
  Instruction* zero = b.S64(0);
  std::vector<Instruction*> starts(rank, zero);
  starts[dim] = position;
  return starts;
}

absl::StatusOr<Instruction*> SliceAt(Builder& b, Instruction* input, int64_t dim,
                                     Instruction* position, const Shape& element_shape) {
  const Shape& shape = input->shape();
  std::vector<Instruction*> starts = StartIndices(b, shape.rank(), dim, position);
  std::vector<int64_t> sizes = shape.dimensions();
  sizes[dim] = 1;
  std::vector<Shape> start_shapes;
  for (Instruction* s : starts) start_shapes.push_back(s->shape());
  HLOGYM_ASSIGN(slice_shape, InferDynamicSliceShape(shape, start_shapes, sizes));
  auto slice = std::make_unique<Instruction>(Opcode::kDynamicSlice, slice_shape);
  slice->AppendOperand(input);
  for (Instruction* s : starts) slice->AppendOperand(s);
  slice->mutable_attrs().dynamic_slice_sizes = sizes;
  Instruction* added = AddWithLayoutOf(b.computation, std::move(slice), input);
  return MakeReshape(added, element_shape.dimensions());
}

absl::StatusOr<Instruction*> WriteAt(Builder& b, Instruction* array, Instruction* element,
                                     int64_t dim, Instruction* position) {
  std::vector<int64_t> dims = array->shape().dimensions();
  dims[dim] = 1;
  HLOGYM_ASSIGN(update, MakeReshape(element, dims));
  std::vector<Instruction*> starts = StartIndices(b, array->shape().rank(), dim, position);
  std::vector<Shape> start_shapes;
  for (Instruction* s : starts) start_shapes.push_back(s->shape());
  HLOGYM_ASSIGN(shape, InferDynamicUpdateSliceShape(array->shape(), update->shape(), start_shapes));
  auto dus = std::make_unique<Instruction>(Opcode::kDynamicUpdateSlice, shape);
  dus->AppendOperand(array);
  dus->AppendOperand(update);
  for (Instruction* s : starts) dus->AppendOperand(s);
  return AddWithLayoutOf(b.computation, std::move(dus), array);
}

std::unique_ptr<Computation> NewLoopComputation(Module& module, const std::string& name,
                                                const Shape& state, Instruction** param) {
  auto computation = std::make_unique<Computation>(module.UniqueName(name));
  computation->set_parent(&module);
  auto p =
      std::make_unique<Instruction>(Opcode::kParameter, state, module.UniqueName("loop_state"));
  p->mutable_attrs().parameter_number = 0;
  *param = computation->AddInstruction(std::move(p));
  return computation;
}

absl::StatusOr<Instruction*> Expand(Instruction* scan, const ScanAttributes& a) {
  Computation* parent = scan->parent();
  Module& module = *parent->parent();
  const bool with_layout = scan->shape().has_layout() ||
                           (scan->operand_count() > 0 && scan->operand(0)->shape().has_layout());
  const int64_t dim = a.scan_dimension;
  std::vector<Instruction*> inputs(scan->operands().begin(),
                                   scan->operands().begin() + a.num_inputs);
  std::vector<Instruction*> inits(scan->operands().begin() + a.num_inputs, scan->operands().end());
  const Computation& body_fn = *scan->to_apply();

  std::vector<Shape> state_shapes = {Shape::Scalar(PrimitiveType::kS64)};
  for (Instruction* init : inits) state_shapes.push_back(init->shape());
  for (Instruction* input : inputs) state_shapes.push_back(input->shape());
  for (int64_t k = 0; k < a.num_outputs; ++k) state_shapes.push_back(a.result_shapes[k]);
  Shape state = Shape::Tuple(state_shapes);
  if (with_layout) state.SetDefaultLayout();

  // index < length
  Instruction* cond_param = nullptr;
  auto cond =
      NewLoopComputation(module, absl::StrCat(scan->name(), "_condition"), state, &cond_param);
  {
    Builder b{cond.get(), with_layout};
    HLOGYM_ASSIGN(index, MakeGetTupleElement(cond_param, 0));
    HLOGYM_ASSIGN(less, MakeCompare(ComparisonDirection::kLt, index, b.S64(a.length)));
    cond->set_root_instruction(less);
  }

  Instruction* body_param = nullptr;
  auto body = NewLoopComputation(module, absl::StrCat(scan->name(), "_body"), state, &body_param);
  {
    Builder b{body.get(), with_layout};
    HLOGYM_ASSIGN(index, MakeGetTupleElement(body_param, 0));
    HLOGYM_ASSIGN(carries, Elements(body_param, 1, a.num_carries));
    HLOGYM_ASSIGN(arrays_in, Elements(body_param, 1 + a.num_carries, a.num_inputs));
    HLOGYM_ASSIGN(arrays_out,
                  Elements(body_param, 1 + a.num_carries + a.num_inputs, a.num_outputs));
    Instruction* position = index;
    if (a.is_reverse) {
      HLOGYM_ASSIGN(last, MakeBinary(Opcode::kSubtract, b.S64(a.length), b.S64(1)));
      HLOGYM_ASSIGN(flipped, MakeBinary(Opcode::kSubtract, last, index));
      position = flipped;
    }
    std::vector<Instruction*> args;
    for (int64_t i = 0; i < a.num_inputs; ++i) {
      HLOGYM_ASSIGN(slice, SliceAt(b, arrays_in[i], dim, position,
                                   body_fn.parameter_instruction(i)->shape()));
      args.push_back(slice);
    }
    args.insert(args.end(), carries.begin(), carries.end());
    HLOGYM_ASSIGN(result, InlineComputation(body.get(), body_fn, args));
    std::vector<Instruction*> values;
    if (result->shape().IsTuple()) {
      HLOGYM_ASSIGN(all, Elements(result, 0, a.num_outputs + a.num_carries));
      values = all;
    } else {
      values = {result};
    }
    std::vector<Instruction*> written;
    for (int64_t k = 0; k < a.num_outputs; ++k) {
      HLOGYM_ASSIGN(update, WriteAt(b, arrays_out[k], values[k], dim, position));
      written.push_back(update);
    }
    HLOGYM_ASSIGN(next_index, MakeBinary(Opcode::kAdd, index, b.S64(1)));
    std::vector<Instruction*> next = {next_index};
    for (int64_t c = 0; c < a.num_carries; ++c) next.push_back(values[a.num_outputs + c]);
    next.insert(next.end(), arrays_in.begin(), arrays_in.end());
    next.insert(next.end(), written.begin(), written.end());
    Instruction* root = MakeTuple(body.get(), next);
    root->set_shape(state);
    body->set_root_instruction(root);
  }
  Computation* cond_added = module.AddComputation(std::move(cond));
  Computation* body_added = module.AddComputation(std::move(body));

  Builder b{parent, with_layout};
  std::vector<Instruction*> init_state = {b.S64(0)};
  init_state.insert(init_state.end(), inits.begin(), inits.end());
  init_state.insert(init_state.end(), inputs.begin(), inputs.end());
  for (int64_t k = 0; k < a.num_outputs; ++k) {
    const Shape& out = a.result_shapes[k];
    Instruction* zero = MakeScalarConstant(parent, out.element_type(), 0, with_layout);
    HLOGYM_ASSIGN(zeros, MakeBroadcast(zero, out.dimensions(), {}));
    init_state.push_back(zeros);
  }
  Instruction* init_tuple = MakeTuple(parent, init_state);
  init_tuple->set_shape(state);
  auto loop = std::make_unique<Instruction>(Opcode::kWhile, state);
  loop->AppendOperand(init_tuple);
  loop->mutable_called_computations() = {cond_added, body_added};
  Instruction* while_op = parent->AddInstruction(std::move(loop));

  std::vector<Instruction*> results;
  HLOGYM_ASSIGN(outputs, Elements(while_op, 1 + a.num_carries + a.num_inputs, a.num_outputs));
  HLOGYM_ASSIGN(finals, Elements(while_op, 1, a.num_carries));
  results.insert(results.end(), outputs.begin(), outputs.end());
  results.insert(results.end(), finals.begin(), finals.end());
  Instruction* tuple = MakeTuple(parent, results);
  if (scan->shape().IsTuple()) {
    tuple->set_shape(scan->shape());
    return tuple;
  }
  HLOGYM_ASSIGN(single, MakeGetTupleElement(tuple, 0));
  single->set_shape(scan->shape());
  return single;
}

}  // namespace

absl::StatusOr<bool> ScanExpander::Run(Module& module) {
  // Read every scan first so a malformed one fails before anything changes.
  std::vector<std::pair<Instruction*, ScanAttributes>> work;
  for (Computation* computation : module.ComputationsCalleesFirst()) {
    for (Instruction* hlo : computation->MakeInstructionPostOrder()) {
      if (hlo->opcode() != Opcode::kScan) continue;
      absl::StatusOr<ScanAttributes> attrs = ReadScanAttributes(*hlo);
      if (absl::IsUnimplemented(attrs.status())) continue;  // left alone
      if (!attrs.ok()) return attrs.status();
      work.emplace_back(hlo, *std::move(attrs));
    }
  }
  for (auto& [scan, attrs] : work) {
    absl::StatusOr<Instruction*> expanded = Expand(scan, attrs);
    if (!expanded.ok()) {
      return absl::InternalError(
          absl::StrCat("scan_expander on ", scan->name(), ": ", expanded.status().message()));
    }
    HLOGYM_RETURN_IF_ERROR(scan->parent()->ReplaceInstruction(scan, *expanded));
  }
  if (!work.empty()) module.SortComputationsCalleesFirst();
  return !work.empty();
}

bool ScanExpander::MayChange(const Module& module) const {
  return ContainsOpcode(module, {Opcode::kScan});
}

}  // namespace hlogym
