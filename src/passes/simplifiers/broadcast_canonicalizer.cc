#include "passes/simplifiers/broadcast_canonicalizer.h"

#include <algorithm>
#include <numeric>
#include <vector>

#include "hlo/query.h"
#include "hlo/status_macros.h"
#include "passes/builders.h"

namespace hlogym {
namespace {

// An array broadcast whose dimensions are not in order: what the pass rewrites.
bool IsUnsortedBroadcast(const Instruction& hlo) {
  if (hlo.opcode() != Opcode::kBroadcast || !hlo.shape().IsArray()) return false;
  const std::vector<int64_t>& dims = hlo.attrs().dimensions;
  return !std::is_sorted(dims.begin(), dims.end());
}

}  // namespace

bool BroadcastCanonicalizer::MayChange(const Module& module) const {
  return ContainsInstruction(module, Opcode::kBroadcast, IsUnsortedBroadcast);
}

absl::StatusOr<bool> BroadcastCanonicalizer::Run(Module& module) {
  bool changed = false;
  for (const auto& owned : module.computations()) {
    Computation* computation = owned.get();
    std::vector<Instruction*> broadcasts;
    for (const auto& hlo : computation->instructions()) {
      if (IsUnsortedBroadcast(*hlo)) broadcasts.push_back(hlo.get());
    }
    for (Instruction* broadcast : broadcasts) {
      Instruction* operand = broadcast->operand(0);
      const std::vector<int64_t> original = broadcast->attrs().dimensions;
      std::vector<int64_t> sorted = original;
      std::sort(sorted.begin(), sorted.end());
      std::vector<int64_t> sizes = broadcast->shape().dimensions();
      for (size_t i = 0; i < sorted.size(); ++i) sizes[sorted[i]] = operand->shape().dimensions(i);
      HLOGYM_ASSIGN(canonical, MakeBroadcast(operand, sizes, sorted));
      // Result dim original[k] holds operand dim k, which the sorted
      // broadcast puts at sorted[k].
      std::vector<int64_t> permutation(broadcast->shape().rank());
      std::iota(permutation.begin(), permutation.end(), 0);
      for (size_t k = 0; k < original.size(); ++k) permutation[original[k]] = sorted[k];
      HLOGYM_ASSIGN(transpose, MakeTranspose(canonical, permutation));
      // The broadcast's shape, layout included, so that a bitcast reading it sees the same values.
      transpose->set_shape(broadcast->shape());
      HLOGYM_RETURN_IF_ERROR(computation->ReplaceInstruction(broadcast, transpose));
      changed = true;
    }
  }
  return changed;
}

}  // namespace hlogym
