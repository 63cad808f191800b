#include "passes/types/float_normalization.h"

#include <functional>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "hlo/status_macros.h"
#include "hlo/str_cat.h"
#include "passes/builders.h"
#include "passes/change_tracking.h"
#include "passes/cpu_library_support.h"
#include "passes/pass_utils.h"
#include "passes/simplifiers/dce.h"
#include "passes/simplifiers/tuple_simplifier.h"

namespace hlogym {
namespace {

bool Skipped(const Instruction* hlo) {
  switch (hlo->opcode()) {
    case Opcode::kTuple:
    case Opcode::kGetTupleElement:
    case Opcode::kConstant:
    case Opcode::kDomain:
    case Opcode::kParameter:
    case Opcode::kFusion:
    case Opcode::kConvert:
    case Opcode::kCall:
    case Opcode::kCustomCall:
    case Opcode::kWhile:
    case Opcode::kConditional:
    case Opcode::kBitcastConvert:
    case Opcode::kBitcast:
    case Opcode::kAsyncStart:
    case Opcode::kAsyncDone:
    case Opcode::kAsyncUpdate:
      return true;
    default:
      return hlo->HasSideEffect();
  }
}

bool CallsUnnormalizable(const Instruction* hlo) {
  return hlo->opcode() == Opcode::kAllReduce || hlo->opcode() == Opcode::kReduceScatter ||
         hlo->opcode() == Opcode::kAllReduceStart;
}

// A layout for `type` made from `layout`: the element size in bits ("E(n)")
// only belongs to sub-byte types.
void FixLayout(Shape& shape) {
  if (!shape.has_layout() || shape.layout()->details.empty()) return;
  Layout layout = *shape.layout();
  size_t at = layout.details.find("E(");
  if (at == std::string::npos) return;
  size_t end = layout.details.find(')', at);
  layout.details.erase(at, end == std::string::npos ? std::string::npos : end - at + 1);
  shape.set_layout(std::move(layout));
}

class Normalizer {
 public:
  Normalizer(Module& module, PrimitiveType low, PrimitiveType high, bool cpu_library_filter)
      : module_(module), low_(low), high_(high), cpu_library_filter_(cpu_library_filter) {}

  bool changed() const { return changed_; }

  absl::Status Handle(Instruction* hlo) {
    // Tuple results: only flat tuples (a variadic reduce or sort, a tuple
    // all-reduce or reduce-scatter, ...). XLA widens each low leaf of those
    // through a get-tuple-element and converts it back, as WidenTupleOutput
    // does; a collective's reducer keeps its type (CallsUnnormalizable).
    if (Skipped(hlo) || !IsArrayOrFlatTuple(hlo->shape())) return absl::OkStatus();
    if (cpu_library_filter_ && (YnnTakesReduceLike(*hlo) || YnnTakesDot(*hlo))) {
      return absl::OkStatus();
    }
    int low = 0;
    int high = 0;
    // Counts the array leaves of each type, as XLA counts subshapes.
    auto count = [&](const Shape& shape) {
      if (shape.IsArray()) {
        if (shape.element_type() == low_) ++low;
        if (shape.element_type() == high_) ++high;
        return shape.element_type() == low_;
      }
      bool has_low = false;
      for (const Shape& leaf : shape.tuple_shapes()) {
        has_low |= leaf.element_type() == low_;
        if (leaf.element_type() == low_) ++low;
        if (leaf.element_type() == high_) ++high;
      }
      return has_low;
    };
    for (Instruction* operand : hlo->operands()) {
      if (!operand->shape().IsArray()) return absl::OkStatus();
      count(operand->shape());
    }
    count(hlo->shape());
    std::vector<Computation*> low_computations;
    if (!CallsUnnormalizable(hlo)) {
      for (Computation* computation : hlo->called_computations()) {
        const Shape& root = computation->root_instruction()->shape();
        if (!IsArrayOrFlatTuple(root)) return absl::OkStatus();
        bool has_low = count(root);
        for (Instruction* parameter : computation->parameters()) {
          if (!parameter->shape().IsArray()) return absl::OkStatus();
          has_low |= count(parameter->shape());
        }
        if (has_low) low_computations.push_back(computation);
      }
    }
    if (low == 0) return absl::OkStatus();
    for (int64_t i = 0; i < hlo->operand_count(); ++i) {
      Instruction* operand = hlo->operand(i);
      if (operand->shape().element_type() != low_) continue;
      HLOGYM_ASSIGN(wide, Widen(operand));
      hlo->ReplaceOperandWith(i, wide);
      --low;
      ++high;
      changed_ = true;
    }
    if (hlo->shape().IsTuple()) {
      const int widened = CountLowLeaves(hlo->shape());
      HLOGYM_RETURN_IF_ERROR(WidenTupleOutput(hlo));
      low -= widened;
      high += widened;
    } else if (hlo->shape().element_type() == low_) {
      HLOGYM_RETURN_IF_ERROR(WidenOutput(hlo));
      --low;
      ++high;
    }
    if (low == 0 || high == 0) return absl::OkStatus();
    return WidenCalledComputations(hlo, low_computations);
  }

 private:
  static bool IsArrayOrFlatTuple(const Shape& shape) {
    if (shape.IsArray()) return true;
    if (!shape.IsTuple()) return false;
    for (const Shape& leaf : shape.tuple_shapes()) {
      if (!leaf.IsArray()) return false;
    }
    return true;
  }

  int CountLowLeaves(const Shape& tuple) const {
    int n = 0;
    for (const Shape& leaf : tuple.tuple_shapes()) n += leaf.element_type() == low_ ? 1 : 0;
    return n;
  }

  // The elements of the flat tuple `hlo`: its operands when it is a tuple
  // instruction (what tuple-simplifier would leave of XLA's
  // get-tuple-elements), else get-tuple-elements of it.
  absl::StatusOr<std::vector<Instruction*>> Elements(Instruction* hlo) {
    if (hlo->opcode() == Opcode::kTuple) return hlo->operands();
    std::vector<Instruction*> elements;
    for (int64_t i = 0; i < static_cast<int64_t>(hlo->shape().tuple_shapes().size()); ++i) {
      HLOGYM_ASSIGN(gte, MakeGetTupleElement(hlo, i));
      elements.push_back(gte);
    }
    return elements;
  }

  // Gives the low-type leaves of the tuple-shaped `hlo` the high type; its
  // users get a tuple of its elements with those leaves converted back.
  absl::Status WidenTupleOutput(Instruction* hlo) {
    if (CountLowLeaves(hlo->shape()) == 0) return absl::OkStatus();
    const Shape original = hlo->shape();
    const std::vector<Instruction*> users = hlo->users();
    const bool is_root = hlo->IsRoot();
    for (Shape& leaf : hlo->mutable_shape().mutable_tuple_shapes()) {
      if (leaf.element_type() != low_) continue;
      leaf.set_element_type(high_);
      FixLayout(leaf);
    }
    HLOGYM_ASSIGN(elements, Elements(hlo));
    for (size_t i = 0; i < elements.size(); ++i) {
      if (original.tuple_shapes()[i].element_type() != low_) continue;
      HLOGYM_ASSIGN(back, MakeConvert((elements)[i], low_));
      back->set_shape(original.tuple_shapes()[i]);
      (elements)[i] = back;
    }
    Instruction* back = MakeTuple(hlo->parent(), elements);
    for (Instruction* user : users) user->ReplaceUsesOfOperand(hlo, back);
    if (is_root) hlo->parent()->set_root_instruction(back);
    changed_ = true;
    return absl::OkStatus();
  }

  // `operand` (of the low type) in the high type. A convert from the high
  // type is not looked through: that would drop its rounding to the low type,
  // which XLA keeps here (it drops only the converts back after a widened
  // output, see WidenOutput); looking through it made bf16 graphs differ
  // from XLA's results and op counts.
  absl::StatusOr<Instruction*> Widen(Instruction* operand) {
    HLOGYM_ASSIGN(convert, MakeConvert(operand, high_));
    FixLayout(convert->mutable_shape());
    return convert;
  }

  // Gives `hlo` the high type and converts it back for its users; users
  // that convert it to the high type take the wide value directly.
  absl::Status WidenOutput(Instruction* hlo) {
    const Shape original = hlo->shape();
    const std::vector<Instruction*> users = hlo->users();
    const bool is_root = hlo->IsRoot();
    hlo->mutable_shape().set_element_type(high_);
    FixLayout(hlo->mutable_shape());
    HLOGYM_ASSIGN(back, MakeConvert(hlo, low_));
    back->set_shape(original);
    std::vector<Instruction*> widening;
    for (Instruction* user : users) {
      if (user->opcode() == Opcode::kConvert && user->shape().element_type() == high_) {
        widening.push_back(user);
      } else {
        user->ReplaceUsesOfOperand(hlo, back);
      }
    }
    for (Instruction* convert : widening) {
      HLOGYM_RETURN_IF_ERROR(convert->ReplaceAllUsesWith(hlo));
    }
    if (is_root) hlo->parent()->set_root_instruction(back);
    changed_ = true;
    return absl::OkStatus();
  }

  absl::Status WidenCalledComputations(Instruction* hlo,
                                       const std::vector<Computation*>& computations) {
    for (Computation* computation : computations) {
      Computation* clone = CloneComputation(module_, *computation);
      for (Computation*& called : hlo->mutable_called_computations()) {
        if (called == computation) called = clone;
      }
      changed_ = true;
      Instruction* root = clone->root_instruction();
      // A root that was already widened keeps its rounding to the low type
      // before it is widened again, as in XLA (an accumulation in a reducer
      // rounds at every step; without it a bf16 GNN's segment sums differ
      // from XLA's by 7%).
      if (root->shape().IsTuple() && CountLowLeaves(root->shape()) > 0) {
        HLOGYM_ASSIGN(elements, Elements(root));
        for (Instruction*& element : elements) {
          if (element->shape().element_type() != low_) continue;
          HLOGYM_ASSIGN(wide, Widen(element));
          element = wide;
        }
        clone->set_root_instruction(MakeTuple(clone, elements));
      } else if (root->shape().element_type() == low_) {
        HLOGYM_ASSIGN(wide, Widen(root));
        clone->set_root_instruction(wide);
      }
      for (Instruction* parameter : clone->parameters()) {
        if (parameter->shape().element_type() != low_) continue;
        HLOGYM_RETURN_IF_ERROR(WidenOutput(parameter));
      }
      added_computations_ = true;
    }
    return absl::OkStatus();
  }

 public:
  bool added_computations() const { return added_computations_; }

 private:
  Module& module_;
  PrimitiveType low_;
  PrimitiveType high_;
  bool cpu_library_filter_;
  bool changed_ = false;
  bool added_computations_ = false;
};

// The computations normalization must leave as they are: those called by instructions whose
// called computations stay unchanged (`keeps`). A computation that other instructions call too
// is cloned for the keeping callers first, as XLA does, and the clone is the one left alone
// (*cloned says whether that happened).
absl::flat_hash_set<const Computation*> ComputationsToSkip(
    Module& module, const std::function<bool(const Instruction&)>& keeps, bool* cloned) {
  absl::flat_hash_set<const Computation*> called_by_others;
  std::vector<Instruction*> keeping;
  for (const auto& computation : module.computations()) {
    for (const auto& instruction : computation->instructions()) {
      if (keeps(*instruction)) {
        keeping.push_back(instruction.get());
      } else {
        for (Computation* called : instruction->called_computations()) {
          called_by_others.insert(called);
        }
      }
    }
  }
  absl::flat_hash_set<const Computation*> skip;
  absl::flat_hash_map<const Computation*, Computation*> clones;
  for (Instruction* instruction : keeping) {
    // Read through the const list: the mutable one counts as a change (change tracking).
    for (size_t i = 0; i < instruction->called_computations().size(); ++i) {
      Computation* called = instruction->called_computations()[i];
      if (!called_by_others.contains(called)) {
        skip.insert(called);
        continue;
      }
      Computation*& clone = clones[called];
      if (clone == nullptr) clone = CloneComputation(module, *called);
      instruction->mutable_called_computations()[i] = clone;
      skip.insert(clone);
    }
  }
  *cloned = !clones.empty();
  return skip;
}

}  // namespace

FloatNormalization::FloatNormalization(PrimitiveType low, PrimitiveType high,
                                       bool cpu_library_filter)
    : low_(low),
      high_(high),
      cpu_library_filter_(cpu_library_filter),
      name_(absl::StrCat("float-normalization-", std::string(PrimitiveTypeName(low)))) {}

absl::StatusOr<bool> FloatNormalization::Run(Module& module) {
  // What the pass does depends on the whole module: it skips only a module that did not
  // change at all since its last complete run.
  TrackedRun run(module, TrackingKey());
  if (!run.MustVisitModule()) return false;
  if (!MayChange(module)) return false;
  bool cloned = false;
  const absl::flat_hash_set<const Computation*> skip = ComputationsToSkip(
      module,
      [&](const Instruction& instruction) {
        return CallsUnnormalizable(&instruction) ||
               (cpu_library_filter_ && YnnTakesReduceLike(instruction));
      },
      &cloned);
  Normalizer normalizer(module, low_, high_, cpu_library_filter_);
  for (Computation* computation : module.MakeComputationPostOrder()) {
    if (skip.contains(computation)) continue;
    for (Instruction* instruction : computation->MakeInstructionPostOrder()) {
      HLOGYM_RETURN_IF_ERROR(normalizer.Handle(instruction));
    }
  }
  if (!normalizer.changed()) {
    run.Complete();
    return cloned;
  }
  if (normalizer.added_computations() || cloned) module.SortComputationsCalleesFirst();
  TupleSimplifier tuple_simplifier;
  if (auto s = tuple_simplifier.Run(module); !s.ok()) return s.status();
  HloDce dce;
  if (auto s = dce.Run(module); !s.ok()) return s.status();
  run.Complete();
  return true;
}

std::string FloatNormalization::TrackingKey() const {
  return StrCat(name(), ":", static_cast<int>(high_), ":", cpu_library_filter_ ? 1 : 0);
}

bool FloatNormalization::MayChange(const Module& module) const {
  // Its walk over every shape costs as much as a run with little to do; a module unchanged
  // since its last run needs neither.
  if (UnchangedSinceLastRun(module, TrackingKey())) return false;
  // Nothing of the low type anywhere: nothing to normalize.
  for (const auto& computation : module.computations()) {
    for (const auto& instruction : computation->instructions()) {
      if (instruction->shape().IsArray() && instruction->shape().element_type() == low_) {
        return true;
      }
    }
  }
  return false;
}

}  // namespace hlogym
