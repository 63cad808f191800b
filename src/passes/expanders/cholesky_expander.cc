#include "passes/expanders/cholesky_expander.h"

#include <algorithm>
#include <cctype>
#include <limits>
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

constexpr int64_t kBlockSize = 128;

// Shapes of the (batched) matrices being built: batch dimensions, then two
// matrix dimensions.
struct Batch {
  std::vector<int64_t> dims;  // batch dimensions only
  bool layout = false;

  int64_t rank() const { return static_cast<int64_t>(dims.size()) + 2; }
  std::vector<int64_t> Matrix(int64_t rows, int64_t cols) const {
    std::vector<int64_t> result = dims;
    result.push_back(rows);
    result.push_back(cols);
    return result;
  }
};

absl::StatusOr<Instruction*> TransposeMinor(Instruction* x) {
  std::vector<int64_t> permutation(x->shape().rank());
  for (size_t d = 0; d < permutation.size(); ++d) permutation[d] = d;
  std::swap(permutation[permutation.size() - 1], permutation[permutation.size() - 2]);
  return MakeTranspose(x, permutation);
}

absl::StatusOr<Instruction*> IsNan(Instruction* x) {
  return MakeCompare(ComparisonDirection::kNe, x, x);
}

struct Factorized {
  Instruction* l;
  Instruction* error;  // pred[batch..., 1, 1]
};

// The unblocked algorithm on a [batch..., k, k] block: a counted loop over
// the columns j, each adding column j of (A - L L^T) / sqrt(its diagonal).
absl::StatusOr<Factorized> Unblocked(Instruction* a, const Batch& batch) {
  Computation* computation = a->parent();
  const PrimitiveType type = a->shape().element_type();
  const int64_t k = a->shape().dimensions().back();
  const std::vector<int64_t> matrix = batch.Matrix(k, k);
  const std::vector<int64_t> error_dims = batch.Matrix(1, 1);
  HLOGYM_ASSIGN(l0, MakeFull(computation, type, 0, matrix, batch.layout));
  HLOGYM_ASSIGN(error0, MakeFull(computation, PrimitiveType::kPred, 0, error_dims, batch.layout));
  auto body =
      [&](Instruction* j,
          const std::vector<Instruction*>& state) -> absl::StatusOr<std::vector<Instruction*>> {
    Computation* body = j->parent();
    Instruction* body_a = state[0];
    Instruction* body_l = state[1];
    Instruction* error = state[2];
    const int64_t rank = batch.rank();
    auto iota = [&](int64_t dimension) {
      auto instruction =
          std::make_unique<Instruction>(Opcode::kIota, Shape(PrimitiveType::kS32, matrix));
      instruction->mutable_attrs().iota_dimension = dimension;
      return AddWithLayoutOf(body, std::move(instruction), body_a);
    };
    Instruction* row = iota(rank - 1);
    Instruction* col = iota(rank - 2);
    HLOGYM_ASSIGN(lower, MakeCompare(ComparisonDirection::kGe, col, row));
    HLOGYM_ASSIGN(j_b, MakeBroadcast(j, matrix, {}));
    HLOGYM_ASSIGN(in_column, MakeCompare(ComparisonDirection::kEq, row, j_b));
    HLOGYM_ASSIGN(mask, MakeBinary(Opcode::kAnd, lower, in_column));
    HLOGYM_ASSIGN(zeros, MakeFull(body, type, 0, matrix, batch.layout));
    HLOGYM_ASSIGN(l_square, BatchDot(body_l, false, body_l, true));
    HLOGYM_ASSIGN(residual, MakeBinary(Opcode::kSubtract, body_a, l_square));
    // The diagonal element (j, j) of every matrix.
    std::vector<Instruction*> ds_operands = {residual};
    std::vector<Shape> start_shapes;
    for (int64_t d = 0; d < rank; ++d) {
      ds_operands.push_back(
          d >= rank - 2 ? j : MakeScalarConstant(body, PrimitiveType::kS32, 0, batch.layout));
      start_shapes.push_back(ds_operands.back()->shape());
    }
    HLOGYM_ASSIGN(ds_shape, InferDynamicSliceShape(residual->shape(), start_shapes, error_dims));
    auto ds = std::make_unique<Instruction>(Opcode::kDynamicSlice, ds_shape);
    for (Instruction* operand : ds_operands) ds->AppendOperand(operand);
    ds->mutable_attrs().dynamic_slice_sizes = error_dims;
    Instruction* diagonal = AddWithLayoutOf(body, std::move(ds), residual);
    HLOGYM_ASSIGN(root, MakeUnary(Opcode::kSqrt, diagonal));
    HLOGYM_ASSIGN(nan, IsNan(root));
    HLOGYM_ASSIGN(new_error, MakeBinary(Opcode::kOr, error, nan));
    HLOGYM_ASSIGN(flat_root, MakeReshape(root, batch.dims));
    std::vector<int64_t> batch_map(batch.dims.size());
    for (size_t d = 0; d < batch_map.size(); ++d) batch_map[d] = d;
    HLOGYM_ASSIGN(root_b, MakeBroadcast(flat_root, matrix, batch_map));
    HLOGYM_ASSIGN(scaled, MakeBinary(Opcode::kDivide, residual, root_b));
    HLOGYM_ASSIGN(column, MakeSelect(mask, scaled, zeros));
    HLOGYM_ASSIGN(new_l, MakeBinary(Opcode::kAdd, column, body_l));
    return std::vector<Instruction*>{body_a, new_l, new_error};
  };
  HLOGYM_ASSIGN(results, MakeCountedLoop(computation, k, {a, l0, error0}, body));
  return Factorized{(results)[1], (results)[2]};
}

// The blocked factorization of the lower triangle of `a`.
absl::StatusOr<Instruction*> Blocked(Instruction* a, const Batch& batch) {
  Computation* computation = a->parent();
  const PrimitiveType type = a->shape().element_type();
  const int64_t n = a->shape().dimensions().back();
  HLOGYM_ASSIGN(zero_l, MakeFull(computation, type, 0, a->shape().dimensions(), batch.layout));
  Instruction* l = zero_l;
  HLOGYM_ASSIGN(error0,
                MakeFull(computation, PrimitiveType::kPred, 0, batch.Matrix(1, 1), batch.layout));
  Instruction* error = error0;
  for (int64_t i = 0; i < n; i += kBlockSize) {
    const int64_t k = std::min(kBlockSize, n - i);
    HLOGYM_ASSIGN(panel0, SliceMinor(a, i, n, i, i + k));
    Instruction* panel = panel0;
    if (i > 0) {
      HLOGYM_ASSIGN(lhs, SliceMinor(l, i, n, 0, i));
      HLOGYM_ASSIGN(rhs, SliceMinor(l, i, i + k, 0, i));
      HLOGYM_ASSIGN(delta, BatchDot(lhs, false, rhs, true));
      HLOGYM_ASSIGN(updated, MakeBinary(Opcode::kSubtract, panel, delta));
      panel = updated;
    }
    HLOGYM_ASSIGN(x, SliceMinor(panel, 0, k, 0, k));
    Factorized factorized{};
    if (k == 1) {
      HLOGYM_ASSIGN(root, MakeUnary(Opcode::kSqrt, x));
      HLOGYM_ASSIGN(nan, IsNan(root));
      factorized = {root, nan};
    } else {
      HLOGYM_ASSIGN(unblocked, Unblocked(x, batch));
      factorized = unblocked;
    }
    HLOGYM_ASSIGN(new_error, MakeBinary(Opcode::kOr, error, factorized.error));
    error = new_error;
    HLOGYM_ASSIGN(with_block, UpdateMinor(l, factorized.l, i, i, batch.layout));
    l = with_block;
    if (i + k < n) {
      HLOGYM_ASSIGN(below, SliceMinor(panel, k, n - i, 0, k));
      auto solve = std::make_unique<Instruction>(Opcode::kTriangularSolve, below->shape());
      solve->AppendOperand(factorized.l);
      solve->AppendOperand(below);
      InstructionAttributes& attrs = solve->mutable_attrs();
      attrs.left_side = false;
      attrs.lower = true;
      attrs.unit_diagonal = false;
      attrs.transpose_a = TriangularSolveTranspose::kAdjoint;
      Instruction* update = AddWithLayoutOf(computation, std::move(solve), below);
      HLOGYM_ASSIGN(with_panel, UpdateMinor(l, update, i + k, i, batch.layout));
      l = with_panel;
    }
  }
  HLOGYM_ASSIGN(flat_error, MakeReshape(error, batch.dims));
  std::vector<int64_t> batch_map(batch.dims.size());
  for (size_t d = 0; d < batch_map.size(); ++d) batch_map[d] = d;
  HLOGYM_ASSIGN(error_b, MakeBroadcast(flat_error, a->shape().dimensions(), batch_map));
  HLOGYM_ASSIGN(nans, MakeFull(computation, type, std::numeric_limits<double>::quiet_NaN(),
                               a->shape().dimensions(), batch.layout));
  return MakeSelect(error_b, nans, l);
}

absl::StatusOr<Computation*> BuildComputation(Module& module, const Instruction& cholesky,
                                              const std::string& name) {
  const Shape& shape = cholesky.operand(0)->shape();
  ExpansionComputation expansion = StartExpansion(module, name, cholesky, {"a"});
  Instruction* a = expansion.parameters[0];
  Batch batch;
  batch.dims.assign(shape.dimensions().begin(), shape.dimensions().end() - 2);
  batch.layout = shape.has_layout();
  const bool lower = cholesky.attrs().lower;
  Instruction* input = a;
  if (!lower) {
    HLOGYM_ASSIGN(transposed, TransposeMinor(a));
    input = transposed;
  }
  HLOGYM_ASSIGN(l, Blocked(input, batch));
  Instruction* result = l;
  if (!lower) {
    HLOGYM_ASSIGN(transposed, TransposeMinor(l));
    result = transposed;
  }
  expansion.owned->set_root_instruction(result);
  return module.AddComputation(std::move(expansion.owned));
}

bool Matches(const Instruction* instruction) {
  if (instruction->opcode() != Opcode::kCholesky || instruction->operand_count() != 1) {
    return false;
  }
  const Shape& shape = instruction->operand(0)->shape();
  return shape.IsArray() && IsFloatingPointType(shape.element_type()) && shape.rank() >= 2 &&
         shape.dimensions(shape.rank() - 1) == shape.dimensions(shape.rank() - 2) &&
         shape.is_static() && instruction->shape().IsArray();
}

}  // namespace

bool CholeskyExpander::MayChange(const Module& module) const {
  return ContainsOpcode(module, {Opcode::kCholesky});
}

absl::StatusOr<bool> CholeskyExpander::Run(Module& module) {
  return ExpandIntoCalls(
      module,
      {.expandable = [](const Instruction& instruction) -> absl::StatusOr<bool> {
         return Matches(&instruction);
       },
       .callee_name =
           [](const Instruction& cholesky) {
             return HloIdentifier(absl::StrCat("xla.cholesky_",
                                               cholesky.operand(0)->shape().ToString(false), "_",
                                               cholesky.attrs().lower ? "lower" : "upper"));
           },
       .build = [&](const Instruction& cholesky,
                    const std::string& name) { return BuildComputation(module, cholesky, name); }});
}

}  // namespace hlogym
