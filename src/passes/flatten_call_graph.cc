#include "passes/flatten_call_graph.h"

#include <algorithm>
#include <vector>

#include "passes/pass_utils.h"

namespace hlogym {
namespace {

// Points every reference of `instruction` to `from` at `to`.
void Redirect(Instruction* instruction, const Computation* from, Computation* to) {
  for (Computation*& callee : instruction->mutable_called_computations()) {
    if (callee == from) callee = to;
  }
}

// Clones the control-flow callees of `root` (recursively), so the clone tree
// shares nothing called sequentially with the original.
void CloneControlFlowSubtree(Module& module, Computation* root) {
  std::vector<Computation*> worklist = {root};
  while (!worklist.empty()) {
    Computation* current = worklist.back();
    worklist.pop_back();
    for (const auto& instruction : current->instructions()) {
      if (!IsControlFlowCaller(instruction->opcode())) continue;
      std::vector<Computation*> originals;
      for (Computation* callee : instruction->called_computations()) {
        if (callee != nullptr && std::find(originals.begin(), originals.end(), callee) ==
                                     originals.end()) {
          originals.push_back(callee);
        }
      }
      for (Computation* callee : originals) {
        Computation* clone = CloneComputation(module, *callee);
        Redirect(instruction.get(), callee, clone);
        worklist.push_back(clone);
      }
    }
  }
}

}  // namespace

absl::StatusOr<bool> FlattenCallGraph::Run(Module& module) {
  auto callers = ComputeCallers(module);
  bool changed = false;
  for (Computation* computation : module.MakeComputationPostOrder()) {
    auto it = callers.find(computation);
    if (it == callers.end()) continue;
    const std::vector<Instruction*>& sites = it->second;
    bool embedded = false;
    int control_flow_sites = 0;
    for (const Instruction* site : sites) {
      if (IsControlFlowCaller(site->opcode())) {
        ++control_flow_sites;
      } else {
        embedded = true;
      }
    }
    if (control_flow_sites == 0 || (!embedded && control_flow_sites == 1)) continue;
    bool skip_first = !embedded;
    for (Instruction* site : sites) {
      if (!IsControlFlowCaller(site->opcode())) continue;
      if (skip_first) {
        skip_first = false;
        continue;
      }
      Computation* clone = CloneComputation(module, *computation);
      Redirect(site, computation, clone);
      CloneControlFlowSubtree(module, clone);
      changed = true;
    }
  }
  if (changed) module.SortComputationsCalleesFirst();
  return changed;
}

}  // namespace hlogym
