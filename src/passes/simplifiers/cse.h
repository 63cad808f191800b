// cse: XLA's HloCSE as the CPU pipeline runs it before layout assignment
// (is_layout_sensitive=false, all computations, control dependencies
// respected).
//
// Implements, in every computation:
//  - constants: constants with the same value and shape (layouts ignored)
//    are merged into the first one in instruction order;
//  - instructions: in post order, an instruction equal to an earlier one is
//    replaced by it, and operands this leaves dead are removed. Equal means
//    XLA's IdenticalIgnoringCommutativeOperandOrder: same opcode, shape
//    (layouts ignored), attributes (including sharding and the other
//    semantic raw attributes; metadata ignored), the same operands
//    (either order for commutative binary ops; two iotas with the same
//    dimension and shape count as the same operand) and called computations
//    that are the same or structurally equal (so two reduces whose
//    to_apply are separate but identical regions merge);
//  - an instruction whose operands include two distinct but equal iotas
//    is made to use the first one twice;
//  - skipped as XLA skips them: instructions without operands (other than
//    partition-id and replica-id), instructions with side effects (through
//    called computations too), instructions with control dependencies.
// Leaves out: kDomain-based constant partitioning, the multi-output fusion
// root deduplication, the must-fuse frontend attribute, the only_scalars and
// only_fusion_computations options and the layout-sensitive variant.
#ifndef HLOGYM_PASSES_SIMPLIFIERS_CSE_H_
#define HLOGYM_PASSES_SIMPLIFIERS_CSE_H_

#include "passes/pass.h"

namespace hlogym {

class HloCse : public Pass {
 public:
  std::string_view name() const override { return "cse"; }
  absl::StatusOr<bool> Run(Module& module) override;
};

}  // namespace hlogym

#endif  // HLOGYM_PASSES_SIMPLIFIERS_CSE_H_
