// Builders for the instructions passes create. Each one infers the result
// shape with src/analysis/shape_inference (so a malformed request is an
// error, not a malformed module), adds the instruction to the operands'
// computation under a fresh name derived from the opcode, and returns it.
// Results get the default layout when the first operand has a layout.
#ifndef HLOGYM_PASSES_BUILDERS_H_
#define HLOGYM_PASSES_BUILDERS_H_

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "hlo/computation.h"
#include "hlo/instruction.h"
#include "hlo/literal.h"
#include "hlo/module.h"

namespace hlogym {

absl::StatusOr<Instruction*> MakeUnary(Opcode opcode, Instruction* operand);
absl::StatusOr<Instruction*> MakeBinary(Opcode opcode, Instruction* lhs, Instruction* rhs);
absl::StatusOr<Instruction*> MakeCompare(ComparisonDirection direction, Instruction* lhs,
                                         Instruction* rhs,
                                         ComparisonType type = ComparisonType::kUnset);
absl::StatusOr<Instruction*> MakeSelect(Instruction* pred, Instruction* on_true,
                                        Instruction* on_false);
absl::StatusOr<Instruction*> MakeConvert(Instruction* operand, PrimitiveType type);
// `dimensions[i]` is the result dimension that operand dimension i maps to.
absl::StatusOr<Instruction*> MakeBroadcast(Instruction* operand,
                                           std::span<const int64_t> result_dims,
                                           std::span<const int64_t> dimensions);
absl::StatusOr<Instruction*> MakeReshape(Instruction* operand,
                                         std::span<const int64_t> result_dims);
absl::StatusOr<Instruction*> MakeTranspose(Instruction* operand,
                                           std::span<const int64_t> permutation);
absl::StatusOr<Instruction*> MakeSlice(Instruction* operand, std::span<const SliceDimension> slice);
absl::StatusOr<Instruction*> MakeConcatenate(std::span<Instruction* const> operands,
                                             int64_t dimension);
absl::StatusOr<Instruction*> MakePad(Instruction* operand, Instruction* padding_value,
                                     std::span<const PaddingDimension> padding);
// `operand` at `starts` (one s32[] per dimension) for `sizes`.
absl::StatusOr<Instruction*> MakeDynamicSlice(Instruction* operand,
                                              std::span<Instruction* const> starts,
                                              std::span<const int64_t> sizes);
// `operand` with `update` written at `starts` (one s32[] per dimension).
absl::StatusOr<Instruction*> MakeDynamicUpdateSlice(Instruction* operand, Instruction* update,
                                                    std::span<Instruction* const> starts);
absl::StatusOr<Instruction*> MakeDot(Instruction* lhs, Instruction* rhs,
                                     const DotDimensionNumbers& dnums, PrimitiveType result_type);
absl::StatusOr<Instruction*> MakeReduce(Instruction* input, Instruction* init,
                                        std::span<const int64_t> dimensions, Computation* to_apply);
absl::StatusOr<Instruction*> MakeGetTupleElement(Instruction* tuple, int64_t index);
Instruction* MakeTuple(Computation* computation, std::span<Instruction* const> operands);
// `to_apply` applied elementwise to `operands` (each of `shape`'s dimensions), as a map.
Instruction* MakeMap(Computation* computation, const Shape& shape,
                     std::span<Instruction* const> operands, Computation* to_apply);
// A constant holding `literal` (its shape gets the default layout when
// `with_layout`).
Instruction* MakeConstant(Computation* computation, Literal literal, bool with_layout = true);
// A scalar constant of `type` with `value` converted to it.
Instruction* MakeScalarConstant(Computation* computation, PrimitiveType type, double value,
                                bool with_layout = true);
// An iota of `type`[dims] counting along `dimension` (the default layout when `with_layout`).
Instruction* MakeIota(Computation* computation, PrimitiveType type, std::vector<int64_t> dims,
                      int64_t dimension, bool with_layout = true);

// A new computation named `name` (made unique) with scalar `type`
// parameters `lhs` and `rhs` that returns `opcode` of them, added to
// `module`: the reducers passes create. Scalars get the default layout when
// `with_layout`.
Computation* AddScalarBinaryComputation(Module& module, std::string_view name, Opcode opcode,
                                        PrimitiveType type, bool with_layout,
                                        std::string_view lhs = "lhs", std::string_view rhs = "rhs");

// `name` with every character that cannot appear in an HLO name replaced by
// '_' (f32[2,4,4] -> f32_2_4_4_): for the computations expanders name after a
// shape, as XLA does.
std::string HloIdentifier(std::string name);

// Replaces `instruction` by a `call` of `callee` with the same operands and
// shape: how the expanders (cholesky, qr, eigh, triangular-solve) hand an
// instruction to the computation that implements it.
absl::Status ReplaceWithCall(Instruction* instruction, Computation* callee);

// The run of an expander that turns instructions into calls (XLA's
// OpExpanderPass with one callee per name): every instruction for which
// `expandable` is true becomes a call of the computation `callee_name` names
// for it, built by `build` the first time that name comes up. Whether anything
// was expanded; the module's computations are then sorted callees first.
struct CallExpansion {
  std::function<absl::StatusOr<bool>(const Instruction&)> expandable;
  std::function<std::string(const Instruction&)> callee_name;
  std::function<absl::StatusOr<Computation*>(const Instruction&, const std::string& name)> build;
};
absl::StatusOr<bool> ExpandIntoCalls(Module& module, const CallExpansion& expansion);

// Adds `instruction` to `computation` after giving its shape the default
// layout if `like` has a layout: the common tail of the builders.
Instruction* AddWithLayoutOf(Computation* computation, std::unique_ptr<Instruction> instruction,
                             const Instruction* like);

}  // namespace hlogym

#endif  // HLOGYM_PASSES_BUILDERS_H_
