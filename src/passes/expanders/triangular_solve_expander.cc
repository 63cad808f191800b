#include "passes/expanders/triangular_solve_expander.h"

#include <algorithm>
#include <cctype>
#include <memory>
#include <numeric>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "analysis/shape_inference.h"
#include "hlo/query.h"
#include "hlo/status_macros.h"
#include "passes/builders.h"
#include "passes/expanders/matrix_builders.h"
#include "passes/pass_utils.h"
#include "passes/while_loop/while_util.h"

namespace hlogym {
namespace {

// What the callee solves: op(a) x = b (left side) or x op(a) = b.
struct Problem {
  bool left_side = true;
  bool lower = true;
  bool transpose = false;  // TRANSPOSE or ADJOINT (the same for real types)
  bool unit_diagonal = false;
};

// The element type, the layout flag and the batch dimensions shared by the
// instructions the expansion builds.
struct Context {
  PrimitiveType type = PrimitiveType::kF32;
  bool layout = false;
  std::vector<int64_t> batch;  // batch dimensions of a and b

  int64_t batch_rank() const { return static_cast<int64_t>(batch.size()); }
  std::vector<int64_t> Matrix(int64_t rows, int64_t cols) const {
    std::vector<int64_t> dims = batch;
    dims.push_back(rows);
    dims.push_back(cols);
    return dims;
  }
  std::vector<int64_t> BatchMap() const {
    std::vector<int64_t> map(batch.size());
    std::iota(map.begin(), map.end(), 0);
    return map;
  }
};

// x divided by y, where y is [batch..., 1, 1]: y is broadcast over the
// matrix dimensions of x.
absl::StatusOr<Instruction*> DivideByScalarMatrix(Instruction* x, Instruction* y,
                                                  const Context& context) {
  HLOGYM_ASSIGN(flat, MakeReshape(y, context.batch));
  const std::vector<int64_t> map = context.BatchMap();
  HLOGYM_ASSIGN(broadcast, MakeBroadcast(flat, x->shape().dimensions(), map));
  return MakeBinary(Opcode::kDivide, x, broadcast);
}

// --- the direct solve ---------------------------------------------------------

// Solves row by row (left side) or column by column (right side), unrolled.
absl::StatusOr<Instruction*> SolveDirectly(Instruction* a, Instruction* b, const Problem& p,
                                           const Context& context) {
  const int64_t rank = b->shape().rank();
  const int64_t rows = b->shape().dimensions(rank - 2);
  const int64_t cols = b->shape().dimensions(rank - 1);
  const int64_t n = a->shape().dimensions(rank - 1);
  // op(a) is lower triangular exactly when lower != transpose. A left solve
  // with a lower op(a) starts at the first row; a right solve with a lower
  // op(a) starts at the last column.
  const bool effective_lower = p.lower != p.transpose;
  const bool forward = p.left_side ? effective_lower : !effective_lower;
  for (int64_t step = 0; step < n; ++step) {
    const int64_t j = forward ? step : n - 1 - step;
    // The solved part: indices [lo, hi) of b's solved dimension.
    const int64_t lo = forward ? 0 : j + 1;
    const int64_t hi = forward ? j : n;
    Instruction* piece = nullptr;
    if (p.left_side) {
      HLOGYM_ASSIGN(row, SliceMinor(b, j, j + 1, 0, cols));
      piece = row;
    } else {
      HLOGYM_ASSIGN(col, SliceMinor(b, 0, rows, j, j + 1));
      piece = col;
    }
    if (hi > lo) {
      // Left: op(a)[j, lo:hi] @ x[lo:hi, :]; right: x[:, lo:hi] @ op(a)[lo:hi, j].
      // op(a)[r, c] is a[c, r] when transposed.
      const bool a_row_major = p.left_side != p.transpose;  // slice a's row j
      Instruction* a_part = nullptr;
      if (a_row_major) {
        HLOGYM_ASSIGN(part, SliceMinor(a, j, j + 1, lo, hi));
        a_part = part;
      } else {
        HLOGYM_ASSIGN(part, SliceMinor(a, lo, hi, j, j + 1));
        a_part = part;
      }
      Instruction* product = nullptr;
      if (p.left_side) {
        HLOGYM_ASSIGN(solved, SliceMinor(b, lo, hi, 0, cols));
        HLOGYM_ASSIGN(dot, BatchDot(a_part, p.transpose, solved, false));
        product = dot;
      } else {
        HLOGYM_ASSIGN(solved, SliceMinor(b, 0, rows, lo, hi));
        HLOGYM_ASSIGN(dot, BatchDot(solved, false, a_part, p.transpose));
        product = dot;
      }
      HLOGYM_ASSIGN(rest, MakeBinary(Opcode::kSubtract, piece, product));
      piece = rest;
    }
    if (!p.unit_diagonal) {
      HLOGYM_ASSIGN(diagonal, SliceMinor(a, j, j + 1, j, j + 1));
      HLOGYM_ASSIGN(divided, DivideByScalarMatrix(piece, diagonal, context));
      piece = divided;
    }
    HLOGYM_ASSIGN(updated, p.left_side ? UpdateMinor(b, piece, j, 0, context.layout)
                                       : UpdateMinor(b, piece, 0, j, context.layout));
    b = updated;
  }
  return b;
}

// --- the blocked solve --------------------------------------------------------

// The diagonal blocks of the (masked) a as [batch..., num_blocks, k, k]; the
// last one, when n is not a multiple of k, is padded with the identity. One
// block (n == k) is a as XLA's builder makes it: broadcast to [1, batch...,
// n, n] and transposed. Several are sliced out one by one, where XLA gathers
// them (matrices above the block size, 128 by default).
absl::StatusOr<Instruction*> DiagonalBlocks(Instruction* a, int64_t k, const Context& context) {
  Computation* computation = a->parent();
  const int64_t n = a->shape().dimensions().back();
  if (n == k) {
    std::vector<int64_t> widened = {1};
    widened.insert(widened.end(), a->shape().dimensions().begin(), a->shape().dimensions().end());
    std::vector<int64_t> kept(a->shape().rank());
    std::iota(kept.begin(), kept.end(), 1);
    HLOGYM_ASSIGN(broadcast, MakeBroadcast(a, widened, kept));
    std::vector<int64_t> permutation(kept.begin(), kept.end() - 2);
    permutation.insert(permutation.end(), {0, a->shape().rank() - 1, a->shape().rank()});
    return MakeTranspose(broadcast, permutation);
  }
  const int64_t full = n / k;
  const int64_t rest = n % k;
  std::vector<int64_t> block_dims = context.batch;
  block_dims.push_back(1);
  block_dims.push_back(k);
  block_dims.push_back(k);
  std::vector<Instruction*> blocks;
  for (int64_t i = 0; i < full; ++i) {
    HLOGYM_ASSIGN(sliced, SliceMinor(a, i * k, (i + 1) * k, i * k, (i + 1) * k));
    HLOGYM_ASSIGN(reshaped, MakeReshape(sliced, block_dims));
    blocks.push_back(reshaped);
  }
  if (rest != 0) {
    // The last rest x rest block padded with zero rows to k x rest, beside
    // [k, k - rest] of zeros over the identity: the identity on the padded
    // part of the diagonal.
    const int64_t padded_size = k - rest;
    HLOGYM_ASSIGN(last, SliceMinor(a, n - rest, n, n - rest, n));
    std::vector<PaddingDimension> below(last->shape().rank());
    below[below.size() - 2].high = padded_size;
    HLOGYM_ASSIGN(
        padded,
        MakePad(last, MakeScalarConstant(computation, context.type, 0, context.layout), below));
    HLOGYM_ASSIGN(
        eye, IdentityMatrix(computation, context.type, padded_size, padded_size, context.layout));
    std::vector<PaddingDimension> above(2);
    above[0].low = rest;
    HLOGYM_ASSIGN(
        eye_below,
        MakePad(eye, MakeScalarConstant(computation, context.type, 0, context.layout), above));
    HLOGYM_ASSIGN(eye_batched, MakeBroadcast(eye_below, context.Matrix(k, padded_size),
                                             std::vector<int64_t>{context.batch_rank(),
                                                                  context.batch_rank() + 1}));
    Instruction* halves[] = {padded, eye_batched};
    HLOGYM_ASSIGN(completed, MakeConcatenate(halves, context.batch_rank() + 1));
    HLOGYM_ASSIGN(reshaped, MakeReshape(completed, block_dims));
    blocks.push_back(reshaped);
  }
  if (blocks.size() == 1) return blocks[0];
  return MakeConcatenate(blocks, context.batch_rank());
}

// Inverts every (triangular, non-singular) block of [batch..., num_blocks,
// k, k] at once.
absl::StatusOr<Instruction*> InvertDiagonalBlocks(Instruction* blocks, bool lower,
                                                  const Context& context) {
  Computation* computation = blocks->parent();
  const std::vector<int64_t> original = blocks->shape().dimensions();
  const int64_t k = original.back();
  int64_t count = 1;
  for (size_t d = 0; d + 2 < original.size(); ++d) count *= original[d];
  const std::vector<int64_t> dims = {count, k, k};
  HLOGYM_ASSIGN(flat, MakeReshape(blocks, dims));
  HLOGYM_ASSIGN(triangle, Triangle(flat, lower, context.layout));
  HLOGYM_ASSIGN(diagonals, MatrixDiagonal(triangle, context.layout));  // [count, k]
  // Columns divided by the diagonal: a unit triangle u = t d^-1, whose
  // inverse d t^-1 gives t^-1 after the rows are divided by it.
  const int64_t column_map[] = {0, 2};
  HLOGYM_ASSIGN(by_column, MakeBroadcast(diagonals, dims, column_map));
  HLOGYM_ASSIGN(unit, MakeBinary(Opcode::kDivide, triangle, by_column));

  // The inverse is built one row at a time from the row of u and the rows
  // already inverted: the state starts as -I with +1 at the first row to be
  // taken as done (the top one for lower, the bottom one for upper), and
  // row j becomes -(u's row j) . state, which leaves u's row j's inverse
  // there since the state still holds -1 at (j, j).
  HLOGYM_ASSIGN(eye, IdentityMatrix(computation, context.type, k, k, context.layout));
  HLOGYM_ASSIGN(minus_eye, MakeUnary(Opcode::kNegate, eye));
  const std::vector<int64_t> one_dims = {1, 1};
  HLOGYM_ASSIGN(
      one, MakeReshape(MakeScalarConstant(computation, context.type, 1, context.layout), one_dims));
  Instruction* first =
      MakeScalarConstant(computation, PrimitiveType::kS32, lower ? 0 : k - 1, context.layout);
  HLOGYM_ASSIGN(start_block, UpdateAt(minus_eye, one, {first, first}));
  const int64_t block_map[] = {1, 2};
  HLOGYM_ASSIGN(start, MakeBroadcast(start_block, dims, block_map));
  auto body =
      [&](Instruction* i,
          const std::vector<Instruction*>& state) -> absl::StatusOr<std::vector<Instruction*>> {
    Computation* body = i->parent();
    Instruction* inverse = state[0];
    Instruction* input = state[1];
    // Row j: i going down (lower), k - 1 - i going up (upper); i counts
    // from 1, as in XLA's loop.
    Instruction* j = i;
    if (!lower) {
      HLOGYM_ASSIGN(back, MakeBinary(Opcode::kSubtract,
                                     MakeScalarConstant(body, PrimitiveType::kS32,
                                                        static_cast<double>(k - 1), context.layout),
                                     i));
      j = back;
    }
    Instruction* zero = MakeScalarConstant(body, PrimitiveType::kS32, 0, context.layout);
    const std::vector<Instruction*> starts = {zero, j, zero};
    std::vector<Shape> start_shapes;
    for (const Instruction* s : starts) start_shapes.push_back(s->shape());
    const std::vector<int64_t> row_dims = {count, 1, k};
    HLOGYM_ASSIGN(row_shape, InferDynamicSliceShape(input->shape(), start_shapes, row_dims));
    auto ds = std::make_unique<Instruction>(Opcode::kDynamicSlice, row_shape);
    ds->AppendOperand(input);
    for (Instruction* s : starts) ds->AppendOperand(s);
    ds->mutable_attrs().dynamic_slice_sizes = row_dims;
    Instruction* row = AddWithLayoutOf(body, std::move(ds), input);
    HLOGYM_ASSIGN(product, BatchDot(row, false, inverse, false));
    HLOGYM_ASSIGN(negated, MakeUnary(Opcode::kNegate, product));
    HLOGYM_ASSIGN(updated, UpdateAt(inverse, negated, starts));
    return std::vector<Instruction*>{updated, input};
  };
  HLOGYM_ASSIGN(results, MakeCountedLoop(computation, k - 1, {start, unit}, body, /*first=*/1));
  const int64_t row_map[] = {0, 1};
  HLOGYM_ASSIGN(by_row, MakeBroadcast(diagonals, dims, row_map));
  HLOGYM_ASSIGN(inverse, MakeBinary(Opcode::kDivide, (results)[0], by_row));
  return MakeReshape(inverse, original);
}

// The solution from the inverted diagonal blocks, block by block (unrolled).
absl::StatusOr<Instruction*> SolveWithInvertedBlocks(Instruction* a, Instruction* b,
                                                     Instruction* inverses, const Problem& p,
                                                     const Context& context) {
  const int64_t rank = b->shape().rank();
  const int64_t rows = b->shape().dimensions(rank - 2);
  const int64_t cols = b->shape().dimensions(rank - 1);
  const int64_t n = a->shape().dimensions(rank - 1);
  const int64_t k = inverses->shape().dimensions().back();
  const int64_t num_blocks = (n + k - 1) / k;
  const bool effective_lower = p.lower != p.transpose;
  const bool forward = p.left_side ? effective_lower : !effective_lower;
  // Left: op(a)[block j, solved] comes from a's rows of block j when not
  // transposed; right: op(a)[solved, block j] comes from a's columns of
  // block j when not transposed.
  const bool a_rows_of_block = p.left_side != p.transpose;
  Instruction* x = nullptr;
  for (int64_t step = 0; step < num_blocks; ++step) {
    const int64_t j = forward ? step : num_blocks - 1 - step;
    const int64_t begin = j * k;
    const int64_t end = std::min(begin + k, n);
    const int64_t size = end - begin;
    // The inverted diagonal block j, [batch..., size, size].
    std::vector<SliceDimension> slice;
    for (int64_t d = 0; d < context.batch_rank(); ++d) slice.push_back({0, context.batch[d], 1});
    slice.push_back({j, j + 1, 1});
    slice.push_back({0, size, 1});
    slice.push_back({0, size, 1});
    HLOGYM_ASSIGN(sliced, MakeSlice(inverses, slice));
    HLOGYM_ASSIGN(inverse, MakeReshape(sliced, context.Matrix(size, size)));
    Instruction* remainder = nullptr;
    if (p.left_side) {
      HLOGYM_ASSIGN(part, SliceMinor(b, begin, end, 0, cols));
      remainder = part;
    } else {
      HLOGYM_ASSIGN(part, SliceMinor(b, 0, rows, begin, end));
      remainder = part;
    }
    if (x != nullptr) {
      const int64_t lo = forward ? 0 : end;
      const int64_t hi = forward ? begin : n;
      Instruction* panel = nullptr;
      if (a_rows_of_block) {
        HLOGYM_ASSIGN(s, SliceMinor(a, begin, end, lo, hi));
        panel = s;
      } else {
        HLOGYM_ASSIGN(s, SliceMinor(a, lo, hi, begin, end));
        panel = s;
      }
      Instruction* product = nullptr;
      if (p.left_side) {
        HLOGYM_ASSIGN(dot, BatchDot(panel, p.transpose, x, false));
        product = dot;
      } else {
        HLOGYM_ASSIGN(dot, BatchDot(x, false, panel, p.transpose));
        product = dot;
      }
      HLOGYM_ASSIGN(rest, MakeBinary(Opcode::kSubtract, remainder, product));
      remainder = rest;
    }
    Instruction* update = nullptr;
    if (p.left_side) {
      HLOGYM_ASSIGN(dot, BatchDot(inverse, p.transpose, remainder, false));
      update = dot;
    } else {
      HLOGYM_ASSIGN(dot, BatchDot(remainder, false, inverse, p.transpose));
      update = dot;
    }
    if (x == nullptr) {
      x = update;
    } else {
      const int64_t dimension = p.left_side ? rank - 2 : rank - 1;
      std::vector<Instruction*> parts =
          forward ? std::vector<Instruction*>{x, update} : std::vector<Instruction*>{update, x};
      HLOGYM_ASSIGN(joined, MakeConcatenate(parts, dimension));
      x = joined;
    }
  }
  return x;
}

absl::StatusOr<Instruction*> SolveByInvertingDiagonalBlocks(Instruction* a, Instruction* b,
                                                            const Problem& p, int64_t block_size,
                                                            const Context& context) {
  Computation* computation = a->parent();
  const int64_t n = a->shape().dimensions().back();
  const std::vector<int64_t> matrix = context.Matrix(n, n);
  Instruction* masked = nullptr;
  if (p.unit_diagonal) {
    // The strict triangle, then ones on the diagonal.
    HLOGYM_ASSIGN(strict, TriangleMask(computation, matrix, p.lower ? -1 : 0,
                                       ComparisonDirection::kGe, context.layout));
    HLOGYM_ASSIGN(zeros, MakeFull(computation, context.type, 0, matrix, context.layout));
    HLOGYM_ASSIGN(kept, p.lower ? MakeSelect(strict, a, zeros) : MakeSelect(strict, zeros, a));
    HLOGYM_ASSIGN(eye, IdentityMatrix(computation, context.type, n, n, context.layout));
    Instruction* eyes = eye;
    if (context.batch_rank() > 0) {
      HLOGYM_ASSIGN(broadcast, MakeBroadcast(eye, matrix,
                                             std::vector<int64_t>{context.batch_rank(),
                                                                  context.batch_rank() + 1}));
      eyes = broadcast;
    }
    HLOGYM_ASSIGN(with_ones, MakeBinary(Opcode::kAdd, kept, eyes));
    masked = with_ones;
  } else {
    HLOGYM_ASSIGN(triangle, Triangle(a, p.lower, context.layout));
    masked = triangle;
  }
  const int64_t k = std::min(block_size, n);
  HLOGYM_ASSIGN(blocks, DiagonalBlocks(masked, k, context));
  HLOGYM_ASSIGN(inverses, InvertDiagonalBlocks(blocks, p.lower, context));
  return SolveWithInvertedBlocks(masked, b, inverses, p, context);
}

// XLA's choice between the special cases, the direct and the blocked solve.
absl::StatusOr<Instruction*> BuildSolve(Instruction* a, Instruction* b, const Problem& p,
                                        int64_t block_size, bool use_direct_solves,
                                        const Context& context) {
  const int64_t n = a->shape().dimensions().back();
  if (b->shape().ElementCount() == 0) return b;
  if (n == 1) {
    if (p.unit_diagonal) return b;
    return DivideByScalarMatrix(b, a, context);
  }
  int64_t batch = 1;
  for (int64_t d : context.batch) batch *= d;
  if (use_direct_solves && batch > block_size / 16 && n < block_size / 4) {
    return SolveDirectly(a, b, p, context);
  }
  return SolveByInvertingDiagonalBlocks(a, b, p, block_size, context);
}

absl::StatusOr<Computation*> BuildComputation(Module& module, const Instruction& solve,
                                              const std::string& name, int64_t block_size,
                                              bool use_direct_solves) {
  const Shape& a_shape = solve.operand(0)->shape();
  ExpansionComputation expansion = StartExpansion(module, name, solve, {"a", "b"});
  const std::vector<Instruction*>& parameters = expansion.parameters;
  Context context;
  context.type = a_shape.element_type();
  context.layout = a_shape.has_layout();
  context.batch.assign(a_shape.dimensions().begin(), a_shape.dimensions().end() - 2);
  const auto& attrs = solve.attrs();
  Problem problem;
  problem.left_side = attrs.left_side;
  problem.lower = attrs.lower;
  problem.transpose = attrs.transpose_a != TriangularSolveTranspose::kNoTranspose;
  problem.unit_diagonal = attrs.unit_diagonal;
  HLOGYM_ASSIGN(result, BuildSolve(parameters[0], parameters[1], problem, block_size,
                                   use_direct_solves, context));
  expansion.owned->set_root_instruction(result);
  return module.AddComputation(std::move(expansion.owned));
}

absl::Status Invalid(const Instruction& instruction, std::string_view why) {
  return absl::InvalidArgumentError(
      absl::StrCat("triangular_solve_expander: ", instruction.name(), ": ", std::string(why)));
}

// Whether the pass expands `instruction`: a well-formed triangular-solve of
// static real floating-point arrays. Complex and dynamic ones are left alone;
// malformed ones are an error.
absl::StatusOr<bool> Expandable(const Instruction& instruction) {
  if (instruction.opcode() != Opcode::kTriangularSolve) return false;
  if (instruction.operand_count() != 2) return Invalid(instruction, "needs two operands");
  const Shape& a = instruction.operand(0)->shape();
  const Shape& b = instruction.operand(1)->shape();
  const Shape& result = instruction.shape();
  if (!a.IsArray() || !b.IsArray() || !result.IsArray()) {
    return Invalid(instruction, "operands and result must be arrays");
  }
  if (IsComplexType(a.element_type()) || IsComplexType(b.element_type())) return false;
  if (!a.is_static() || !b.is_static() || !result.is_static()) return false;
  if (!IsFloatingPointType(a.element_type()) || a.element_type() != b.element_type() ||
      result.element_type() != b.element_type()) {
    return Invalid(instruction, absl::StrCat("needs one floating-point type, got ",
                                             a.ToString(false), " and ", b.ToString(false)));
  }
  const int64_t rank = a.rank();
  if (rank < 2 || b.rank() != rank) {
    return Invalid(instruction, absl::StrCat("needs a and b of one rank >= 2, got ",
                                             a.ToString(false), " and ", b.ToString(false)));
  }
  if (a.dimensions(rank - 1) != a.dimensions(rank - 2)) {
    return Invalid(instruction, absl::StrCat("a is not square: ", a.ToString(false)));
  }
  for (int64_t d = 0; d < rank - 2; ++d) {
    if (a.dimensions(d) != b.dimensions(d)) {
      return Invalid(instruction, absl::StrCat("batch dimensions differ: ", a.ToString(false),
                                               " and ", b.ToString(false)));
    }
  }
  const bool left = instruction.attrs().left_side;
  if (b.dimensions(left ? rank - 2 : rank - 1) != a.dimensions(rank - 1)) {
    return Invalid(instruction,
                   absl::StrCat("a ", a.ToString(false), " does not fit b ", b.ToString(false),
                                left ? " (left side)" : " (right side)"));
  }
  if (result.dimensions() != b.dimensions()) {
    return Invalid(instruction, absl::StrCat("result ", result.ToString(false),
                                             " is not shaped like b ", b.ToString(false)));
  }
  return true;
}

std::string CalleeName(const Instruction& solve) {
  const auto& attrs = solve.attrs();
  std::string name =
      absl::StrCat("xla.triangular_solve_", solve.operand(0)->shape().ToString(false), "_",
                   solve.operand(1)->shape().ToString(false), "_",
                   attrs.left_side ? "left" : "right", "_", attrs.lower ? "lower" : "upper", "_",
                   std::string(TriangularSolveTransposeName(attrs.transpose_a)), "_",
                   attrs.unit_diagonal ? "unit" : "nonunit");
  return HloIdentifier(std::move(name));
}

}  // namespace

absl::StatusOr<bool> TriangularSolveExpander::Run(Module& module) {
  return ExpandIntoCalls(module, {.expandable = Expandable,
                                  .callee_name = CalleeName,
                                  .build = [&](const Instruction& solve, const std::string& name) {
                                    return BuildComputation(module, solve, name, block_size_,
                                                            use_direct_solves_);
                                  }});
}

bool TriangularSolveExpander::MayChange(const Module& module) const {
  return ContainsOpcode(module, {Opcode::kTriangularSolve});
}

}  // namespace hlogym
