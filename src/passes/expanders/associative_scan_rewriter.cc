#include "passes/expanders/associative_scan_rewriter.h"

#include <memory>
#include <optional>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "hlo/query.h"
#include "hlo/scan_attributes.h"
#include "hlo/status_macros.h"
#include "passes/builders.h"
#include "passes/pass_utils.h"
#include "passes/simplifiers/reduce_window_rewriter.h"
#include "passes/simplifiers/reduce_window_util.h"

namespace hlogym {
namespace {

bool IsScalarOrTupleOfScalars(const Shape& shape) {
  if (shape.IsTuple()) {
    for (const Shape& element : shape.tuple_shapes()) {
      if (!element.IsScalar()) return false;
    }
    return true;
  }
  return shape.IsScalar();
}

std::optional<Shape> ScalarShapeOf(const Shape& shape) {
  if (shape.IsArray()) return Shape::Scalar(shape.element_type());
  if (!shape.IsTuple()) return std::nullopt;
  std::vector<Shape> elements;
  for (const Shape& element : shape.tuple_shapes()) {
    if (!element.IsArray()) return std::nullopt;
    elements.push_back(Shape::Scalar(element.element_type()));
  }
  return Shape::Tuple(std::move(elements));
}

// Whether every element of a (non-elided) array constant equals the first.
bool IsUniform(const Literal& literal) {
  if (literal.elided() || !literal.shape().IsArray() || literal.element_count() == 0) {
    return false;
  }
  const uint64_t first = literal.GetBits(0);
  for (int64_t i = 1; i < literal.element_count(); ++i) {
    if (literal.GetBits(i) != first) return false;
  }
  return true;
}

Literal FirstAsScalar(const Literal& literal) {
  Literal scalar(Shape::Scalar(literal.shape().element_type()));
  scalar.SetBits(0, literal.GetBits(0));
  return scalar;
}

struct Scalarized {
  bool ok = false;
  Computation* computation = nullptr;  // the original when already scalar
  std::unique_ptr<Computation> fresh;  // to add when it is a new one
};

// The computation with every shape made scalar, when each instruction
// allows it; nothing is added to the module.
Scalarized Scalarize(Module& module, const Computation& comp) {
  Scalarized out;
  bool already = true;
  for (const auto& owned : comp.instructions()) {
    if (!IsScalarOrTupleOfScalars(owned->shape())) already = false;
  }
  if (already) {
    out.ok = true;
    out.computation = const_cast<Computation*>(&comp);
    return out;
  }
  auto copy = std::make_unique<Computation>(module.UniqueName(comp.name() + "_scalarized"));
  copy->set_parent(&module);
  absl::flat_hash_map<const Instruction*, Instruction*> map;
  for (Instruction* hlo : comp.MakeInstructionPostOrder()) {
    std::optional<Shape> shape = ScalarShapeOf(hlo->shape());
    if (!shape) return out;
    std::vector<Instruction*> operands;
    for (Instruction* operand : hlo->operands()) operands.push_back(map.at(operand));
    Instruction* made = nullptr;
    switch (hlo->opcode()) {
      case Opcode::kParameter:
      case Opcode::kTuple:
      case Opcode::kGetTupleElement: {
        auto clone = hlo->CloneWithNewOperands(operands, module.UniqueName(hlo->name()));
        clone->set_shape(*shape);
        made = copy->AddInstruction(std::move(clone));
        break;
      }
      case Opcode::kConstant: {
        if (!hlo->attrs().literal || !hlo->shape().IsArray()) return out;
        const Literal& literal = hlo->literal();
        if (hlo->shape().IsScalar()) {
          made =
              copy->AddInstruction(hlo->CloneWithNewOperands({}, module.UniqueName(hlo->name())));
        } else if (IsUniform(literal)) {
          made = MakeConstant(copy.get(), FirstAsScalar(literal), /*with_layout=*/false);
        } else {
          return out;
        }
        break;
      }
      case Opcode::kBroadcast:
        if (!hlo->operand(0)->shape().IsScalar()) return out;
        made = operands[0];
        break;
      case Opcode::kBitcast:
        if (hlo->operand(0)->shape().element_type() != hlo->shape().element_type()) return out;
        made = operands[0];
        break;
      case Opcode::kReshape:
        made = operands[0];
        break;
      default: {
        if (!IsElementwise(hlo->opcode()) || !hlo->called_computations().empty()) return out;
        auto clone = hlo->CloneWithNewOperands(operands, module.UniqueName(hlo->name()));
        clone->set_shape(*shape);
        made = copy->AddInstruction(std::move(clone));
        break;
      }
    }
    map[hlo] = made;
  }
  // Parameters must survive as parameters (a parameter forwarded by a
  // reshape is still the parameter), in their order.
  for (int64_t i = 0; i < comp.num_parameters(); ++i) {
    if (map.at(comp.parameter_instruction(i))->opcode() != Opcode::kParameter) return out;
  }
  copy->set_root_instruction(map.at(comp.root_instruction()));
  out.ok = true;
  out.fresh = std::move(copy);
  return out;
}

// The scalar behind a scan init through broadcasts, reshapes and same-type
// bitcasts: a scalar instruction or a uniform constant; nullptr otherwise.
Instruction* ScalarInitSource(Instruction* init) {
  while (init->opcode() == Opcode::kBroadcast || init->opcode() == Opcode::kReshape ||
         init->opcode() == Opcode::kBitcast) {
    if (init->opcode() == Opcode::kBitcast &&
        init->shape().element_type() != init->operand(0)->shape().element_type()) {
      return nullptr;
    }
    init = init->operand(0);
  }
  if (init->shape().IsScalar()) return init;
  if (init->opcode() == Opcode::kConstant && init->attrs().literal && IsUniform(init->literal())) {
    return init;
  }
  return nullptr;
}

bool ConstantIsAll(const Instruction* source, double value) {
  return source->opcode() == Opcode::kConstant && source->attrs().literal &&
         source->literal().IsAll(value);
}

// Folding the init in at both levels of the split scan changes nothing.
bool TreeSafeInit(const Instruction* combine, const Instruction* source) {
  switch (combine->opcode()) {
    case Opcode::kMinimum:
    case Opcode::kMaximum:
      return true;
    case Opcode::kAdd:
    case Opcode::kOr:
    case Opcode::kXor:
      return ConstantIsAll(source, 0);
    case Opcode::kMultiply:
      return ConstantIsAll(source, 0) || ConstantIsAll(source, 1);
    default:
      return false;
  }
}

// The standard associative form: one input, one carry, to_apply returning
// tuple(x, x) over two parameters of the carry's type, users that are
// get-tuple-elements or dead.
bool IsStandardAssociativeScan(const Instruction* scan, const ScanAttributes& a) {
  if (!a.is_associative.value_or(false) || a.num_inputs != 1 || a.num_carries != 1 ||
      a.num_outputs != 1) {
    return false;
  }
  const Computation* body = scan->to_apply();
  const Instruction* root = body->root_instruction();
  if (body->num_parameters() != 2 || root->opcode() != Opcode::kTuple ||
      root->operand_count() != 2 || root->operand(0) != root->operand(1) ||
      root->operand(0)->operand_count() != 2) {
    return false;
  }
  if (scan->operand(0)->shape().element_type() != scan->operand(1)->shape().element_type()) {
    return false;
  }
  for (const Instruction* user : scan->users()) {
    if (user->opcode() != Opcode::kGetTupleElement && (user->user_count() > 0 || user->IsRoot())) {
      return false;
    }
  }
  return a.length > 0;
}

absl::StatusOr<bool> TryRewrite(Instruction* scan, const ScanAttributes& a, int64_t base) {
  if (!IsStandardAssociativeScan(scan, a) || a.is_reverse || scan->IsRoot()) return false;
  for (const Instruction* user : scan->users()) {
    if (user->opcode() == Opcode::kGetTupleElement && user->attrs().tuple_index == 1 &&
        (user->user_count() > 0 || user->IsRoot())) {
      return false;
    }
  }
  Instruction* init_source = ScalarInitSource(scan->operand(1));
  if (init_source == nullptr) return false;
  const bool single = base == 0 || a.length <= base;
  const Instruction* combine = scan->to_apply()->root_instruction()->operand(0);
  if (!single && !TreeSafeInit(combine, init_source)) return false;
  Computation* parent = scan->parent();
  Module& module = *parent->parent();
  Scalarized scalar = Scalarize(module, *scan->to_apply());
  if (!scalar.ok) return false;

  // From here on the module changes.
  Computation* scalar_fn = scalar.computation;
  if (scalar.fresh) scalar_fn = module.AddComputation(std::move(scalar.fresh));
  const bool with_layout = scan->operand(0)->shape().has_layout();
  Instruction* init = init_source;
  if (!init_source->shape().IsScalar()) {
    init = MakeConstant(parent, FirstAsScalar(init_source->literal()), with_layout);
  }
  auto wrapper =
      std::make_unique<Computation>(module.UniqueName(scalar_fn->name() + "_rw_wrapper"));
  wrapper->set_parent(&module);
  {
    auto carry = std::make_unique<Instruction>(Opcode::kParameter,
                                               scalar_fn->parameter_instruction(1)->shape(),
                                               module.UniqueName("carry_0"));
    carry->mutable_attrs().parameter_number = 0;
    Instruction* carry_param = wrapper->AddInstruction(std::move(carry));
    auto input = std::make_unique<Instruction>(Opcode::kParameter,
                                               scalar_fn->parameter_instruction(0)->shape(),
                                               module.UniqueName("input_0"));
    input->mutable_attrs().parameter_number = 1;
    Instruction* input_param = wrapper->AddInstruction(std::move(input));
    auto call =
        std::make_unique<Instruction>(Opcode::kCall, scalar_fn->root_instruction()->shape());
    call->AppendOperand(input_param);
    call->AppendOperand(carry_param);
    call->mutable_called_computations() = {scalar_fn};
    Instruction* call_added = wrapper->AddInstruction(std::move(call));
    HLOGYM_ASSIGN(element, MakeGetTupleElement(call_added, 1));
    wrapper->set_root_instruction(element);
  }
  Computation* reducer = module.AddComputation(std::move(wrapper));

  Instruction* input = scan->operand(0);
  Window window;
  window.dimensions.resize(input->shape().rank());
  window.dimensions[a.scan_dimension].size = a.length;
  window.dimensions[a.scan_dimension].padding_low = a.length - 1;
  HLOGYM_ASSIGN(rw, MakeReduceWindow({input}, {init}, window, reducer));
  Instruction* result = rw;
  if (!single) {
    // The two-level split reduce-window-rewriter makes of a long cumulative
    // reduce-window is the one XLA builds here. A temporary tuple holds on
    // to what replaces the reduce-window.
    Instruction* holder = MakeTuple(parent, std::vector<Instruction*>{rw});
    HLOGYM_ASSIGN(split, RewriteCumulativeReduceWindow(rw, base));
    if (!split) {
      return absl::InternalError(
          absl::StrCat("associative-scan-rewriter: could not split the scan of ", scan->name()));
    }
    result = holder->operand(0);
    HLOGYM_RETURN_IF_ERROR(parent->RemoveInstruction(holder));
  }
  Instruction* tuple = MakeTuple(parent, std::vector<Instruction*>{result, scan->operand(1)});
  tuple->set_shape(scan->shape());
  HLOGYM_RETURN_IF_ERROR(parent->ReplaceInstruction(scan, tuple));
  return true;
}

}  // namespace

bool AssociativeScanRewriter::MayChange(const Module& module) const {
  return ContainsOpcode(module, {Opcode::kScan});
}

absl::StatusOr<bool> AssociativeScanRewriter::Run(Module& module) {
  if (base_length_ == 1) return false;
  std::vector<std::pair<Instruction*, ScanAttributes>> scans;
  for (Computation* computation : module.ComputationsCalleesFirst()) {
    for (Instruction* hlo : computation->MakeInstructionPostOrder()) {
      if (hlo->opcode() != Opcode::kScan) continue;
      absl::StatusOr<ScanAttributes> attrs = ReadScanAttributes(*hlo);
      if (absl::IsUnimplemented(attrs.status())) continue;
      if (!attrs.ok()) return attrs.status();
      scans.emplace_back(hlo, *std::move(attrs));
    }
  }
  bool changed = false;
  for (auto& [scan, attrs] : scans) {
    HLOGYM_ASSIGN(rewritten, TryRewrite(scan, attrs, base_length_));
    changed |= rewritten;
  }
  if (changed) module.SortComputationsCalleesFirst();
  return changed;
}

}  // namespace hlogym
