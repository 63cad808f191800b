// VerifyModule: structure and shape checks in the spirit of XLA's HloVerifier.
//
// Checked:
//  Structure
//   - an entry computation exists and belongs to the module; computation
//     names are unique;
//   - every computation has a root that belongs to it;
//   - operands, users and control edges are non-null, consistent both ways
//     and stay inside the computation; instruction parents are right;
//   - parameters are numbered 0..n-1 without gaps or duplicates and match the
//     computation's parameter list;
//   - instruction names are unique in the computation (in the module with
//     VerifierOptions::module_unique_names);
//   - called computations belong to the module and the call graph is acyclic;
//   - no cycle through operand and control edges;
//   - fixed-arity opcodes have the right operand count (OpcodeArity); the
//     number of called computations per opcode (while 2, select-and-scatter
//     2, reduce/map/sort/scatter/reduce-window/call/fusion 1, ...);
//   - layouts: minor_to_major is a permutation of the dimensions;
//   - the entry's parameters and root agree with entry_computation_layout
//     when that header attribute parses (element types and dims only).
//  Shapes (see shape_inference.h; compared ignoring layouts and dynamic
//  flags; instructions with unbounded `?` dimensions are skipped):
//   elementwise unary (type rules: is-finite -> pred, real/imag/abs of
//   complex -> real type, floor/ceil floats, clz/popcnt ints, not pred/int),
//   binary (same dims, no implicit broadcast; same element type; compare ->
//   pred; complex f32/f64 -> c64/c128; shifts ints; and/or/xor pred or ints),
//   select (pred array of the same dims or scalar), clamp (scalar bounds ok),
//   convert (no complex -> real), bitcast-convert (bit-width rule with the
//   extra last dim), reduce-precision, broadcast, reshape (element count),
//   transpose, reverse, slice, dynamic-slice (scalar or vector index form),
//   dynamic-update-slice, concatenate, pad, iota, get-tuple-element, tuple,
//   dot (batch/contracting sizes; the result type is the preferred element
//   type, integer results may not narrow), convolution (dim labels, feature
//   and batch group counts, window vs kernel, output spatial sizes), reduce
//   and reduce-window (variadic; reducer signature), select-and-scatter,
//   gather and scatter (full dimension-number rules incl. batching dims),
//   sort (comparator (T0,T0,T1,T1,...) -> pred[]), map, while, conditional,
//   call, fusion, bitcast (same total bits when both static), rng,
//   rng-bit-generator, all-reduce, all-gather, reduce-scatter, all-to-all,
//   collective-permute (single-operand form), batch-norm-{training,
//   inference,grad}, cholesky, triangular-solve, fft (all four types), topk,
//   constant (literal shape unless elided), get/set-dimension-size,
//   after-all, add-dependency, opt-barrier, domain, partition-id, replica-id.
//  Accepted without shape checks (structure only): custom-call, parameter
//   (beyond the entry layout), infeed, outfeed, send(-done), recv(-done),
//   async-start/update/done, *-start/*-done collectives, copy-start/done,
//   collective-permute with in-place operands, dynamic-reshape, ragged-dot,
//   ragged-all-to-all, scaled-dot, scan, shuffle, rng-get-and-update-state,
//   sparse dot (more than two operands).
//  Mixed precision: element types must match exactly for elementwise ops;
//   dot and convolution may mix operand types and choose the result type;
//   reducers accept init/input types that differ only in float precision.
#include "analysis/verifier.h"

#include <algorithm>
#include <functional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "analysis/shape_inference.h"
#include "hlo/status_macros.h"
#include "hlo/str_cat.h"

namespace hlogym {
namespace {

absl::Status CompError(const Computation& comp, std::string_view reason) {
  return absl::InvalidArgumentError(StrCat("in computation ", comp.name(), ": ", reason));
}
absl::Status InstError(const Computation& comp, const Instruction& inst, std::string_view reason) {
  return absl::InvalidArgumentError(
      StrCat("in computation ", comp.name(), ", instruction ", inst.name(), ": ", reason));
}

std::string S(const Shape& s) { return s.ToString(/*print_layout=*/false); }

absl::Status CheckLayouts(const Shape& shape) {
  if (shape.IsTuple()) {
    for (const Shape& e : shape.tuple_shapes()) {
      HLOGYM_RETURN_IF_ERROR(CheckLayouts(e));
    }
    return absl::OkStatus();
  }
  if (!shape.IsArray() || !shape.has_layout()) return absl::OkStatus();
  const auto& m2m = shape.layout()->minor_to_major;
  std::vector<bool> seen(shape.rank(), false);
  bool ok = static_cast<int64_t>(m2m.size()) == shape.rank();
  for (size_t i = 0; ok && i < m2m.size(); ++i) {
    ok = m2m[i] >= 0 && m2m[i] < shape.rank() && !seen[m2m[i]];
    if (ok) seen[m2m[i]] = true;
  }
  if (!ok) {
    return absl::InvalidArgumentError(StrCat("layout ", shape.layout()->ToString(),
                                             " is not a permutation of the dimensions of ",
                                             shape.ToString(false)));
  }
  return absl::OkStatus();
}

// Number of computations each opcode calls, when fixed.
std::optional<size_t> CalledCount(Opcode opcode) {
  switch (opcode) {
    case Opcode::kWhile:
    case Opcode::kSelectAndScatter:
      return 2;
    case Opcode::kReduce:
    case Opcode::kMap:
    case Opcode::kSort:
    case Opcode::kScatter:
    case Opcode::kReduceWindow:
    case Opcode::kCall:
    case Opcode::kFusion:
    case Opcode::kAllReduce:
    case Opcode::kReduceScatter:
    case Opcode::kAllReduceStart:
      return 1;
    case Opcode::kConditional:
    case Opcode::kCustomCall:
    case Opcode::kAsyncStart:
    case Opcode::kAsyncUpdate:
    case Opcode::kAsyncDone:
    case Opcode::kScan:
    case Opcode::kCollectiveReduce:
      return std::nullopt;
    default:
      return 0;
  }
}

// ---- entry_computation_layout parsing (lenient) ----

class LayoutShapeParser {
 public:
  explicit LayoutShapeParser(std::string_view text) : text_(text) {}

  void SkipSpace() {
    while (pos_ < text_.size()) {
      if (text_[pos_] == ' ' || text_[pos_] == '\n' || text_[pos_] == '\t' || text_[pos_] == '\r') {
        ++pos_;
      } else if (text_.substr(pos_, 2) == "/*") {
        size_t end = text_.find("*/", pos_ + 2);
        pos_ = end == std::string_view::npos ? text_.size() : end + 2;
      } else {
        break;
      }
    }
  }
  bool Consume(char c) {
    SkipSpace();
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  bool ConsumeStr(std::string_view s) {
    SkipSpace();
    if (text_.substr(pos_, s.size()) == s) {
      pos_ += s.size();
      return true;
    }
    return false;
  }
  bool AtEnd() {
    SkipSpace();
    return pos_ >= text_.size();
  }

  std::optional<Shape> ParseShape(int depth = 0) {
    if (depth > 64) return std::nullopt;
    SkipSpace();
    if (Consume('(')) {
      std::vector<Shape> elems;
      if (Consume(')')) return Shape::Tuple({});
      while (true) {
        auto e = ParseShape(depth + 1);
        if (!e) return std::nullopt;
        elems.push_back(std::move(*e));
        if (Consume(')')) break;
        if (!Consume(',')) return std::nullopt;
      }
      return Shape::Tuple(std::move(elems));
    }
    size_t start = pos_;
    while (pos_ < text_.size() && (std::isalnum(static_cast<unsigned char>(text_[pos_])))) ++pos_;
    std::string_view name = text_.substr(start, pos_ - start);
    if (name == "token") {
      if (!Consume('[') || !Consume(']')) return std::nullopt;
      return Shape::Token();
    }
    auto type = PrimitiveTypeFromName(name);
    if (!type || !IsArrayType(*type)) return std::nullopt;
    if (!Consume('[')) return std::nullopt;
    std::vector<int64_t> dims;
    std::vector<bool> dynamic;
    if (!Consume(']')) {
      while (true) {
        bool dyn = ConsumeStr("<=");
        SkipSpace();
        if (Consume('?')) {
          dims.push_back(Shape::kUnboundedSize);
          dynamic.push_back(true);
        } else {
          size_t s = pos_;
          int64_t v = 0;
          while (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) {
            if (v > (std::numeric_limits<int64_t>::max() - 9) / 10) return std::nullopt;
            v = v * 10 + (text_[pos_] - '0');
            ++pos_;
          }
          if (pos_ == s) return std::nullopt;
          dims.push_back(v);
          dynamic.push_back(dyn);
        }
        if (Consume(']')) break;
        if (!Consume(',')) return std::nullopt;
      }
    }
    Shape shape(*type, dims);
    for (size_t i = 0; i < dynamic.size(); ++i) {
      if (dynamic[i]) shape.set_dynamic_dimension(static_cast<int64_t>(i), true);
    }
    SkipSpace();
    if (pos_ < text_.size() && text_[pos_] == '{') {  // layout: skip, balanced
      int level = 0;
      while (pos_ < text_.size()) {
        char c = text_[pos_++];
        if (c == '{') ++level;
        if (c == '}' && --level == 0) break;
      }
      if (level != 0) return std::nullopt;
    }
    return shape;
  }

 private:
  std::string_view text_;
  size_t pos_ = 0;
};

// Parses "{(p0, p1)->result}"; nullopt when it does not parse.
std::optional<std::pair<std::vector<Shape>, Shape>> ParseEntryLayout(std::string_view text) {
  LayoutShapeParser p(text);
  if (!p.Consume('{') || !p.Consume('(')) return std::nullopt;
  std::vector<Shape> params;
  if (!p.Consume(')')) {
    while (true) {
      auto s = p.ParseShape();
      if (!s) return std::nullopt;
      params.push_back(std::move(*s));
      if (p.Consume(')')) break;
      if (!p.Consume(',')) return std::nullopt;
    }
  }
  if (!p.ConsumeStr("->")) return std::nullopt;
  auto result = p.ParseShape();
  if (!result || !p.Consume('}') || !p.AtEnd()) return std::nullopt;
  return std::make_pair(std::move(params), std::move(*result));
}

class Verifier {
 public:
  Verifier(const Module& module, const VerifierOptions& options)
      : module_(module), options_(options) {}

  absl::Status Run() {
    for (const auto& comp : module_.computations()) {
      if (comp == nullptr) return absl::InvalidArgumentError("module has a null computation");
      computations_.insert(comp.get());
      if (!comp_names_.insert(comp->name()).second) {
        return absl::InvalidArgumentError(
            StrCat("computation name ", comp->name(), " is used twice in the module"));
      }
    }
    const Computation* entry = module_.entry_computation();
    if (entry == nullptr) return absl::InvalidArgumentError("module has no entry computation");
    if (!computations_.contains(entry)) {
      return absl::InvalidArgumentError(
          StrCat("entry computation ", entry->name(), " does not belong to the module"));
    }
    for (const auto& comp : module_.computations()) {
      HLOGYM_RETURN_IF_ERROR(VerifyStructure(*comp));
    }
    HLOGYM_RETURN_IF_ERROR(VerifyCallGraph());
    for (const auto& comp : module_.computations()) {
      HLOGYM_RETURN_IF_ERROR(VerifyAcyclic(*comp));
    }
    for (const auto& comp : module_.computations()) {
      for (const auto& inst : comp->instructions()) {
        HLOGYM_RETURN_IF_ERROR(VerifyInstructionShape(*comp, *inst));
      }
    }
    return VerifyEntryLayout(*entry);
  }

 private:
  absl::Status VerifyStructure(const Computation& comp) {
    absl::flat_hash_set<const Instruction*> members;
    for (const auto& inst : comp.instructions()) {
      if (inst == nullptr) return CompError(comp, "null instruction");
      members.insert(inst.get());
    }
    const Instruction* root = comp.root_instruction();
    if (root == nullptr) return CompError(comp, "no root instruction");
    if (!members.contains(root)) {
      return CompError(comp, StrCat("root ", root->name(), " does not belong to the computation"));
    }
    std::vector<const Instruction*> params_by_number;
    int64_t param_count = 0;
    if (!options_.module_unique_names) inst_names_.clear();
    for (const auto& up : comp.instructions()) {
      const Instruction& inst = *up;
      if (inst.parent() != &comp) {
        return InstError(comp, inst, "instruction's parent is not this computation");
      }
      if (!inst_names_.insert(inst.name()).second) {
        return InstError(
            comp, inst,
            StrCat("instruction name ", inst.name(),
                   options_.module_unique_names ? " is used twice in the module"
                                                : " is used twice in the computation"));
      }
      for (int64_t i = 0; i < inst.operand_count(); ++i) {
        const Instruction* op = inst.operand(i);
        if (op == nullptr) return InstError(comp, inst, StrCat("operand ", i, " is null"));
        if (!members.contains(op)) {
          return InstError(
              comp, inst,
              StrCat("operand ", i, " (", op->name(), ") belongs to another computation"));
        }
        const auto& users = op->users();
        if (std::find(users.begin(), users.end(), &inst) == users.end()) {
          return InstError(comp, inst,
                           StrCat("is not among the users of its operand ", op->name()));
        }
      }
      for (const Instruction* user : inst.users()) {
        if (user == nullptr) return InstError(comp, inst, "has a null user");
        if (!members.contains(user)) {
          return InstError(comp, inst,
                           StrCat("user ", user->name(), " belongs to another computation"));
        }
        const auto& ops = user->operands();
        if (std::find(ops.begin(), ops.end(), &inst) == ops.end()) {
          return InstError(
              comp, inst,
              StrCat("lists user ", user->name(), " which does not use it as an operand"));
        }
      }
      for (const Instruction* pred : inst.control_predecessors()) {
        if (pred == nullptr || !members.contains(pred)) {
          return InstError(comp, inst, "control predecessor outside the computation");
        }
        const auto& succ = pred->control_successors();
        if (std::find(succ.begin(), succ.end(), &inst) == succ.end()) {
          return InstError(
              comp, inst,
              StrCat("control predecessor ", pred->name(), " does not list it as a successor"));
        }
      }
      for (const Instruction* succ : inst.control_successors()) {
        if (succ == nullptr || !members.contains(succ)) {
          return InstError(comp, inst, "control successor outside the computation");
        }
        const auto& preds = succ->control_predecessors();
        if (std::find(preds.begin(), preds.end(), &inst) == preds.end()) {
          return InstError(
              comp, inst,
              StrCat("control successor ", succ->name(), " does not list it as a predecessor"));
        }
      }
      if (std::optional<int> arity = OpcodeArity(inst.opcode());
          arity.has_value() && inst.operand_count() != *arity) {
        return InstError(comp, inst,
                         StrCat(OpcodeName(inst.opcode()), " expects ", *arity, " operands, has ",
                                inst.operand_count()));
      }
      if (std::optional<size_t> n = CalledCount(inst.opcode());
          n.has_value() && inst.called_computations().size() != *n) {
        return InstError(comp, inst,
                         StrCat(OpcodeName(inst.opcode()), " expects ", *n,
                                " called computations, has ", inst.called_computations().size()));
      }
      for (const Computation* callee : inst.called_computations()) {
        if (callee == nullptr) return InstError(comp, inst, "null called computation");
        if (!computations_.contains(callee)) {
          return InstError(
              comp, inst,
              StrCat("calls computation ", callee->name(), " which does not belong to the module"));
        }
      }
      if (inst.opcode() == Opcode::kParameter) {
        ++param_count;
        const int64_t n = inst.attrs().parameter_number;
        if (n < 0 || n >= comp.instruction_count()) {
          return InstError(comp, inst, StrCat("parameter number ", n, " out of range"));
        }
        if (static_cast<int64_t>(params_by_number.size()) <= n) params_by_number.resize(n + 1);
        if (params_by_number[n] != nullptr) {
          return InstError(comp, inst,
                           StrCat("parameter number ", n, " is used twice (also by ",
                                  params_by_number[n]->name(), ")"));
        }
        params_by_number[n] = &inst;
      }
    }
    for (size_t i = 0; i < params_by_number.size(); ++i) {
      if (params_by_number[i] == nullptr) {
        return CompError(comp, StrCat("parameter number ", i,
                                      " is missing (parameters must be "
                                      "numbered 0..n-1)"));
      }
    }
    if (comp.num_parameters() != param_count) {
      return CompError(comp, StrCat("parameter list has ", comp.num_parameters(), " entries but ",
                                    param_count, " parameter instructions exist"));
    }
    for (int64_t i = 0; i < comp.num_parameters(); ++i) {
      if (comp.parameter_instruction(i) != params_by_number[i]) {
        return CompError(comp,
                         StrCat("parameter list entry ", i, " is not the parameter numbered ", i));
      }
    }
    return absl::OkStatus();
  }

  absl::Status VerifyCallGraph() {
    // 0 = unvisited, 1 = on stack, 2 = done.
    absl::flat_hash_map<const Computation*, int> state;
    std::vector<const Computation*> path;
    std::function<absl::Status(const Computation*)> visit =
        [&](const Computation* c) -> absl::Status {
      state[c] = 1;
      path.push_back(c);
      for (const auto& inst : c->instructions()) {
        for (const Computation* callee : inst->called_computations()) {
          int s = state[callee];
          if (s == 1) {
            return InstError(*c, *inst,
                             StrCat("calls computation ", callee->name(),
                                    " which (transitively) calls back: the call graph "
                                    "has a cycle"));
          }
          if (s == 0) {
            HLOGYM_RETURN_IF_ERROR(visit(callee));
          }
        }
      }
      path.pop_back();
      state[c] = 2;
      return absl::OkStatus();
    };
    for (const auto& comp : module_.computations()) {
      if (state[comp.get()] == 0) {
        HLOGYM_RETURN_IF_ERROR(visit(comp.get()));
      }
    }
    return absl::OkStatus();
  }

  // Iterative DFS over operand and control-predecessor edges.
  absl::Status VerifyAcyclic(const Computation& comp) {
    absl::flat_hash_map<const Instruction*, int> state;
    for (const auto& up : comp.instructions()) {
      if (state[up.get()] != 0) continue;
      std::vector<std::pair<const Instruction*, size_t>> stack = {{up.get(), 0}};
      state[up.get()] = 1;
      while (!stack.empty()) {
        auto& [inst, next] = stack.back();
        const size_t n_ops = inst->operands().size();
        const size_t n_all = n_ops + inst->control_predecessors().size();
        if (next == n_all) {
          state[inst] = 2;
          stack.pop_back();
          continue;
        }
        const Instruction* dep =
            next < n_ops ? inst->operands()[next] : inst->control_predecessors()[next - n_ops];
        ++next;
        int& s = state[dep];
        if (s == 1) {
          return InstError(comp, *dep, "is part of a cycle through operand/control edges");
        }
        if (s == 0) {
          s = 1;
          stack.push_back({dep, 0});
        }
      }
    }
    return absl::OkStatus();
  }

  absl::Status VerifyInstructionShape(const Computation& comp, const Instruction& inst) {
    absl::Status st = CheckLayouts(inst.shape());
    if (!st.ok()) return InstError(comp, inst, std::string(st.message()));
    const Shape& shape = inst.shape();
    if (shape.element_type() == PrimitiveType::kInvalid) {
      return InstError(comp, inst, "has an invalid shape");
    }
    absl::StatusOr<std::optional<Shape>> inferred = InferShape(inst);
    if (!inferred.ok()) return InstError(comp, inst, std::string(inferred.status().message()));
    if (inferred->has_value() &&
        !(*inferred)->Equal(shape, {.dynamic = false, .layouts = Shape::Layouts::kIgnore})) {
      return InstError(comp, inst,
                       StrCat("shape ", S(shape), " does not match the expected shape ",
                              S(**inferred), " of ", OpcodeName(inst.opcode())));
    }
    return absl::OkStatus();
  }

  absl::Status VerifyEntryLayout(const Computation& entry) {
    const RawAttribute* raw = nullptr;
    for (const RawAttribute& attr : module_.raw_attributes()) {
      if (attr.key == "entry_computation_layout") raw = &attr;
    }
    if (raw == nullptr) return absl::OkStatus();
    auto parsed = ParseEntryLayout(raw->value);
    if (!parsed.has_value()) return absl::OkStatus();
    const auto& [params, result] = *parsed;
    if (static_cast<int64_t>(params.size()) != entry.num_parameters()) {
      return CompError(
          entry, StrCat("entry_computation_layout has ", params.size(),
                        " parameters but the entry computation has ", entry.num_parameters()));
    }
    for (size_t i = 0; i < params.size(); ++i) {
      const Instruction* p = entry.parameter_instruction(static_cast<int64_t>(i));
      if (!params[i].Equal(p->shape(), {.dynamic = false, .layouts = Shape::Layouts::kIgnore})) {
        return InstError(
            entry, *p,
            StrCat("shape ", S(p->shape()), " differs from entry_computation_layout parameter ", i,
                   " ", S(params[i])));
      }
    }
    const Instruction* root = entry.root_instruction();
    if (!result.Equal(root->shape(), {.dynamic = false, .layouts = Shape::Layouts::kIgnore})) {
      return InstError(entry, *root,
                       StrCat("root shape ", S(root->shape()),
                              " differs from the entry_computation_layout result ", S(result)));
    }
    return absl::OkStatus();
  }

  const Module& module_;
  const VerifierOptions& options_;
  absl::flat_hash_set<const Computation*> computations_;
  absl::flat_hash_set<std::string> comp_names_;
  absl::flat_hash_set<std::string> inst_names_;
};

}  // namespace

absl::Status VerifyModule(const Module& module, const VerifierOptions& options) {
  return Verifier(module, options).Run();
}

}  // namespace hlogym
