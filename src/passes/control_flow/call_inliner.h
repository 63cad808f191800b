// call-inliner: XLA's CallInliner.
//
// Implements: every kCall is replaced by a copy of its callee's body
// (parameters become the call's operands, the copy of the root replaces the
// call), visiting callees before callers so nested calls end up fully
// inlined; control predecessors of the call are kept on the copied
// instructions and its control successors on the copied root. When anything
// was inlined, dce runs afterwards (as XLA's pass does) to drop the callees
// nobody calls any more and dead instructions.
// Two registered variants, as XLA's pipelines use them:
//  - "call-inliner": inline every call (XLA's default options);
//  - "call-inliner-single-call-site": inline only calls to computations with
//    a single call site (CallInliner(/*single_call_site=*/true), the one the
//    CPU compiler runs).
// Leaves out: calls inside async computations, composite preservation,
// domain updates, and the inline-override policy hooks (none occur in
// single-device CPU graphs).
#ifndef HLOGYM_PASSES_CONTROL_FLOW_CALL_INLINER_H_
#define HLOGYM_PASSES_CONTROL_FLOW_CALL_INLINER_H_

#include <string>

#include "passes/pass.h"

namespace hlogym {

class CallInliner : public Pass {
 public:
  explicit CallInliner(bool single_call_site = false)
      : single_call_site_(single_call_site),
        name_(single_call_site ? "call-inliner-single-call-site" : "call-inliner") {}
  std::string_view name() const override { return name_; }
  absl::StatusOr<bool> Run(Module& module) override;
  bool MayChange(const Module& module) const override;

 private:
  bool single_call_site_;
  std::string name_;
};

}  // namespace hlogym

#endif  // HLOGYM_PASSES_CONTROL_FLOW_CALL_INLINER_H_
