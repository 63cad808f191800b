// Builders the linear-algebra expanders (cholesky, eigh, qr, triangular-solve)
// share: the computation an expansion is written in, and the operations on the
// two minor dimensions of batched matrices [batch..., rows, cols].
#ifndef HLOGYM_PASSES_EXPANDERS_MATRIX_BUILDERS_H_
#define HLOGYM_PASSES_EXPANDERS_MATRIX_BUILDERS_H_

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "hlo/computation.h"
#include "hlo/instruction.h"
#include "hlo/module.h"

namespace hlogym {

// The computation an expansion is built in, named module.UniqueName(name),
// with one parameter per operand of `op` (parameter i named names[i]). It is
// not in the module yet: Module::AddComputation takes `owned` once its root is
// set.
struct ExpansionComputation {
  std::unique_ptr<Computation> owned;
  std::vector<Instruction*> parameters;
};
ExpansionComputation StartExpansion(Module& module, std::string_view name, const Instruction& op,
                                    const std::vector<std::string>& names);

// A `value` of `type` broadcast to `dims`.
absl::StatusOr<Instruction*> MakeFull(Computation* computation, PrimitiveType type, double value,
                                      std::span<const int64_t> dims, bool layout);

// Rows [r0, r1) and columns [c0, c1) of every matrix of `x`.
absl::StatusOr<Instruction*> SliceMinor(Instruction* x, int64_t r0, int64_t r1, int64_t c0,
                                        int64_t c1);

// op(x) * op(y) per batch element, where op transposes the two minor
// dimensions when asked (real types only, so no conjugation); HIGHEST
// precision, as XLA's expansions ask for.
absl::StatusOr<Instruction*> BatchDot(Instruction* x, bool transpose_x, Instruction* y,
                                      bool transpose_y);

// A dynamic-update-slice of `update` into `x` at `starts` (one s32 scalar per
// dimension), with the layout of `x`.
absl::StatusOr<Instruction*> UpdateAt(Instruction* x, Instruction* update,
                                      const std::vector<Instruction*>& starts);

// `update` written into every matrix of `x` at row `r`, column `c` (UpdateAt
// with s32 constant starts).
absl::StatusOr<Instruction*> UpdateMinor(Instruction* x, Instruction* update, int64_t r, int64_t c,
                                         bool layout);

// Matrices in the form XLA's builder library gives them (its lib/matrix.cc), which XLA's
// expanders written with that library (QR, triangular solve) leave in a module: built the same
// way, the passes after an expansion meet what they meet in XLA, and the op counts agree.

// The identity [m, n] of `type`: u32 vector iotas broadcast over the matrix, compared, converted.
absl::StatusOr<Instruction*> IdentityMatrix(Computation* computation, PrimitiveType type, int64_t m,
                                            int64_t n, bool layout);
// pred[dims] over the two minor dimensions of `dims`, true where row + diagonal `direction` col
// (kGe: the lower triangle, -1 the strict one; kEq: a diagonal): s32 vector iotas, the diagonal
// added to the rows' even where it is 0, both broadcast over the matrix, compared, and the
// result broadcast over the batch dimensions (an identity broadcast where there are none).
absl::StatusOr<Instruction*> TriangleMask(Computation* computation, std::span<const int64_t> dims,
                                          int64_t diagonal, ComparisonDirection direction,
                                          bool layout);
// x with zeros outside its lower triangle (lower) or outside its upper one.
absl::StatusOr<Instruction*> Triangle(Instruction* x, bool lower, bool layout);
// The main diagonal of every matrix of x [batch..., m, n], summed out of the masked matrix.
absl::StatusOr<Instruction*> MatrixDiagonal(Instruction* x, bool layout);

}  // namespace hlogym

#endif  // HLOGYM_PASSES_EXPANDERS_MATRIX_BUILDERS_H_
