#include "passes/simplifiers/reduce_window_rewriter.h"

#include <memory>
#include <numeric>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "hlo/query.h"
#include "hlo/status_macros.h"
#include "hlo/str_cat.h"
#include "passes/builders.h"
#include "passes/change_tracking.h"
#include "passes/pass_utils.h"
#include "passes/simplifiers/reduce_window_util.h"

namespace hlogym {
namespace {

bool IsTrivial(const WindowDimension& d) {
  return d.size == 1 && d.stride == 1 && d.padding_low == 0 && d.padding_high == 0 &&
         d.window_dilation == 1 && d.base_dilation == 1 && !d.window_reversal;
}

// A copy of the tuple-returning `reducer` that returns only element `index`.
Computation* ReducerElement(Module& module, const Computation& reducer, int64_t index) {
  auto copy =
      std::make_unique<Computation>(module.UniqueName(absl::StrCat(reducer.name(), ".clone")));
  copy->set_parent(&module);
  // What the element needs, and every parameter (the map passes them all).
  const Instruction* element_root = reducer.root_instruction()->operand(index);
  absl::flat_hash_set<const Instruction*> live = {element_root};
  std::vector<const Instruction*> worklist = {element_root};
  while (!worklist.empty()) {
    const Instruction* instruction = worklist.back();
    worklist.pop_back();
    for (const Instruction* operand : instruction->operands()) {
      if (live.insert(operand).second) worklist.push_back(operand);
    }
  }
  absl::flat_hash_map<const Instruction*, Instruction*> map;
  for (Instruction* instruction : reducer.MakeInstructionPostOrder()) {
    if (instruction->opcode() != Opcode::kParameter && !live.contains(instruction)) continue;
    std::vector<Instruction*> operands;
    for (Instruction* operand : instruction->operands()) operands.push_back(map.at(operand));
    map[instruction] = copy->AddInstruction(
        instruction->CloneWithNewOperands(operands, module.UniqueName(instruction->name())));
  }
  copy->set_root_instruction(map.at(reducer.root_instruction()->operand(index)));
  return module.AddComputation(std::move(copy));
}

absl::StatusOr<bool> TryRewriteScan(Instruction* rw, int64_t base) {
  ReduceWindowOperands parts = SplitReduceWindowOperands(rw);
  const Shape& operand_shape = parts.inputs[0]->shape();
  const int64_t rank = operand_shape.rank();
  const Window& window = *rw->attrs().window;
  if (static_cast<int64_t>(window.dimensions.size()) != rank) return false;
  int64_t scan_dim = -1;
  for (int64_t i = 0; i < rank; ++i) {
    if (IsTrivial(window.dimensions[i])) continue;
    if (scan_dim != -1) return false;
    scan_dim = i;
  }
  if (scan_dim == -1) return false;
  const int64_t length = operand_shape.dimensions(scan_dim);
  const WindowDimension& wd = window.dimensions[scan_dim];
  const bool forward =
      (wd.padding_low == length - 1 || wd.padding_low == length) && wd.padding_high == 0;
  const bool reverse =
      (wd.padding_high == length - 1 || wd.padding_high == length) && wd.padding_low == 0;
  if (wd.stride != 1 || wd.size != length || (!forward && !reverse) || wd.window_reversal ||
      wd.base_dilation != 1 || wd.window_dilation != 1) {
    return false;
  }
  const bool exclusive = forward ? wd.padding_low == length : wd.padding_high == length;
  if (length <= base) return false;
  Computation* reducer = rw->to_apply();
  const Instruction* reducer_root = reducer->root_instruction();
  if (reducer_root->shape().IsTuple() && reducer_root->opcode() != Opcode::kTuple) return false;

  Computation* computation = rw->parent();
  Module& module = *computation->parent();
  const size_t n = parts.inputs.size();
  std::vector<int64_t> permutation(rank);
  std::iota(permutation.begin(), permutation.end(), 0);
  std::swap(permutation[scan_dim], permutation[rank - 1]);
  std::vector<Instruction*> sources = parts.inputs;
  if (scan_dim != rank - 1) {
    for (Instruction*& source : sources) {
      HLOGYM_ASSIGN(transposed, MakeTranspose(source, permutation));
      source = transposed;
    }
  }
  const int64_t padded = (length + base - 1) / base * base;
  if (padded != length) {
    for (size_t i = 0; i < n; ++i) {
      std::vector<PaddingDimension> padding(rank);
      padding[rank - 1].high = padded - length;
      HLOGYM_ASSIGN(pad, MakePad(sources[i], parts.inits[i], padding));
      sources[i] = pad;
    }
  }
  const int64_t rows = padded / base;
  std::vector<int64_t> tiled_dims = sources[0]->shape().dimensions();
  tiled_dims.back() = rows;
  tiled_dims.push_back(base);
  std::vector<Instruction*> tiled;
  for (Instruction* source : sources) {
    HLOGYM_ASSIGN(reshaped, MakeReshape(source, tiled_dims));
    tiled.push_back(reshaped);
  }
  // Scan within each row of `base` elements.
  Window row_window;
  row_window.dimensions.resize(rank + 1);
  row_window.dimensions[rank].size = base;
  (forward ? row_window.dimensions[rank].padding_low : row_window.dimensions[rank].padding_high) =
      base - 1;
  HLOGYM_ASSIGN(row_scan, MakeReduceWindow(tiled, parts.inits, row_window, reducer));
  // Row totals: the last (forward) or first (reverse) column.
  std::vector<Instruction*> row_scans, totals;
  for (size_t i = 0; i < n; ++i) {
    HLOGYM_ASSIGN(element, ResultElement(row_scan, static_cast<int64_t>(i)));
    row_scans.push_back(element);
    std::vector<SliceDimension> slice;
    for (int64_t d : tiled_dims) slice.push_back({0, d, 1});
    if (forward) {
      slice[rank].start = base - 1;
    } else {
      slice[rank].limit = 1;
    }
    HLOGYM_ASSIGN(column, MakeSlice(element, slice));
    std::vector<int64_t> column_dims(tiled_dims.begin(), tiled_dims.end() - 1);
    HLOGYM_ASSIGN(total, MakeReshape(column, column_dims));
    totals.push_back(total);
  }
  // Exclusive scan of the row totals, broadcast back over the rows.
  Window total_window;
  total_window.dimensions.resize(rank);
  total_window.dimensions[rank - 1].size = rows;
  (forward ? total_window.dimensions[rank - 1].padding_low
           : total_window.dimensions[rank - 1].padding_high) = rows;
  HLOGYM_ASSIGN(total_scan, MakeReduceWindow(totals, parts.inits, total_window, reducer));
  std::vector<Instruction*> carries;
  std::vector<int64_t> leading(rank);
  std::iota(leading.begin(), leading.end(), 0);
  for (size_t i = 0; i < n; ++i) {
    HLOGYM_ASSIGN(element, ResultElement(total_scan, static_cast<int64_t>(i)));
    std::vector<SliceDimension> slice;
    for (int64_t d : element->shape().dimensions()) slice.push_back({0, d, 1});
    slice[rank - 1] = forward ? SliceDimension{0, rows, 1} : SliceDimension{1, rows + 1, 1};
    HLOGYM_ASSIGN(carry, MakeSlice(element, slice));
    HLOGYM_ASSIGN(broadcast, MakeBroadcast(carry, tiled_dims, leading));
    carries.push_back(broadcast);
  }
  std::vector<Instruction*> map_operands = row_scans;
  map_operands.insert(map_operands.end(), carries.begin(), carries.end());
  std::vector<Instruction*> results;
  for (size_t i = 0; i < n; ++i) {
    Computation* combiner = reducer_root->shape().IsTuple()
                                ? ReducerElement(module, *reducer, static_cast<int64_t>(i))
                                : reducer;
    Shape map_shape(row_scans[i]->shape().element_type(), tiled_dims);
    auto map = std::make_unique<Instruction>(Opcode::kMap, map_shape);
    for (Instruction* operand : map_operands) map->AppendOperand(operand);
    map->mutable_attrs().dimensions.resize(rank + 1);
    std::iota(map->mutable_attrs().dimensions.begin(), map->mutable_attrs().dimensions.end(), 0);
    map->mutable_attrs().has_dimensions = true;
    map->mutable_called_computations().push_back(combiner);
    Instruction* scan = AddWithLayoutOf(computation, std::move(map), row_scans[i]);
    HLOGYM_ASSIGN(flat, MakeReshape(scan, sources[i]->shape().dimensions()));
    scan = flat;
    if (scan_dim != rank - 1) {
      HLOGYM_ASSIGN(back, MakeTranspose(scan, permutation));
      scan = back;
    }
    if (padded != length) {
      std::vector<SliceDimension> slice;
      for (int64_t d : operand_shape.dimensions()) slice.push_back({0, d, 1});
      HLOGYM_ASSIGN(unpadded, MakeSlice(scan, slice));
      scan = unpadded;
    }
    if (exclusive) {
      std::vector<PaddingDimension> padding(rank);
      (forward ? padding[scan_dim].low : padding[scan_dim].high) = 1;
      HLOGYM_ASSIGN(shifted, MakePad(scan, parts.inits[i], padding));
      scan = shifted;
    }
    results.push_back(scan);
  }
  HLOGYM_RETURN_IF_ERROR(ReplaceReduceWindow(rw, results));
  return true;
}

}  // namespace

absl::StatusOr<bool> RewriteCumulativeReduceWindow(Instruction* reduce_window,
                                                   int64_t base_length) {
  return TryRewriteScan(reduce_window, base_length);
}

absl::StatusOr<bool> ReduceWindowRewriter::Run(Module& module) {
  TrackedRun run(module, StrCat(name(), ":", base_length_));
  bool changed = false;
  std::vector<Computation*> computations;
  for (const auto& computation : module.computations()) computations.push_back(computation.get());
  for (Computation* computation : computations) {
    if (!run.MustVisit(*computation)) continue;
    std::vector<Instruction*> candidates;
    for (Instruction* instruction : computation->MakeInstructionPostOrder()) {
      if (instruction->opcode() != Opcode::kReduceWindow) continue;
      if (instruction->operand_count() < 2 || instruction->operand_count() % 2 != 0 ||
          !instruction->attrs().window.has_value() || instruction->to_apply() == nullptr ||
          !instruction->operand(0)->shape().IsArray()) {
        return absl::InvalidArgumentError(
            absl::StrCat(instruction->name(), ": malformed reduce-window"));
      }
      candidates.push_back(instruction);
    }
    for (Instruction* rw : candidates) {
      HLOGYM_ASSIGN(scan, TryRewriteScan(rw, base_length_));
      if (scan) {
        changed = true;
        continue;
      }
      if (rw->operand(0)->shape().rank() != 1) continue;
      HLOGYM_RETURN_IF_ERROR(ReplaceRankOneReduceWindowWithReshape(rw));
      changed = true;
    }
  }
  if (changed) module.SortComputationsCalleesFirst();
  run.Complete();
  return changed;
}

bool ReduceWindowRewriter::MayChange(const Module& module) const {
  return ContainsOpcode(module, {Opcode::kReduceWindow});
}

}  // namespace hlogym
