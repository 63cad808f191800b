#include "passes/control_flow/flatten_call_graph.h"

#include <algorithm>
#include <vector>

#include "passes/change_tracking.h"
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
        if (callee != nullptr &&
            std::find(originals.begin(), originals.end(), callee) == originals.end()) {
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
  // What the pass does depends on the whole module: it skips only a module that did not
  // change at all since its last complete run.
  TrackedRun run(module, std::string(name()));
  if (!run.MustVisitModule()) return false;
  // Callers before callees: a caller's clone adds call sites to what it calls,
  // which then get their own clones in this same run (callees first would
  // leave those shared, for the next run to split).
  std::vector<Computation*> order = module.MakeComputationPostOrder();
  std::reverse(order.begin(), order.end());
  bool changed = false;
  // Kept up to date as clones are added (what ComputeCallers would give after each), since a
  // walk of the module per computation made the pass quadratic.
  CallerMap callers = ComputeCallers(module);
  for (Computation* computation : order) {
    auto it = callers.find(computation);
    if (it == callers.end() || it->second.size() < 2) continue;
    // Every call site after the first gets its own clone, whatever its
    // context: XLA at the pinned version also splits reducers and comparators
    // shared by several reduce / reduce-window / sort instructions.
    const std::vector<Instruction*> sites = std::move(it->second);
    it->second = {sites[0]};
    for (size_t i = 1; i < sites.size(); ++i) {
      const int64_t first_new = module.computation_count();
      Computation* clone = CloneComputation(module, *computation);
      Redirect(sites[i], computation, clone);
      CloneControlFlowSubtree(module, clone);
      // The clones' own call sites, now that they call the subtree's clones.
      for (int64_t c = first_new; c < module.computation_count(); ++c) {
        AddCallSites(*module.computations()[c], callers);
      }
      callers[clone].push_back(sites[i]);
      changed = true;
    }
  }
  if (changed) module.SortComputationsCalleesFirst();
  run.Complete();
  return changed;
}

bool FlattenCallGraph::MayChange(const Module& module) const {
  // Cloning needs a computation with two call sites, so two calling instructions.
  int callers = 0;
  for (const auto& computation : module.computations()) {
    for (const auto& instruction : computation->instructions()) {
      for (const Computation* callee : instruction->called_computations()) {
        if (callee == nullptr) continue;
        if (++callers >= 2) return true;
        break;
      }
    }
  }
  return false;
}

}  // namespace hlogym
