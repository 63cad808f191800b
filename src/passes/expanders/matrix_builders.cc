#include "passes/expanders/matrix_builders.h"

#include <memory>
#include <vector>

#include "analysis/shape_inference.h"
#include "hlo/status_macros.h"
#include "passes/builders.h"

namespace hlogym {

ExpansionComputation StartExpansion(Module& module, std::string_view name, const Instruction& op,
                                    const std::vector<std::string>& names) {
  ExpansionComputation expansion;
  expansion.owned = std::make_unique<Computation>(module.UniqueName(std::string(name)));
  expansion.owned->set_parent(&module);
  for (int64_t i = 0; i < op.operand_count(); ++i) {
    auto parameter = std::make_unique<Instruction>(Opcode::kParameter, op.operand(i)->shape(),
                                                   module.UniqueName(names[i]));
    parameter->mutable_attrs().parameter_number = i;
    expansion.parameters.push_back(expansion.owned->AddInstruction(std::move(parameter)));
  }
  return expansion;
}

absl::StatusOr<Instruction*> MakeFull(Computation* computation, PrimitiveType type, double value,
                                      std::span<const int64_t> dims, bool layout) {
  return MakeBroadcast(MakeScalarConstant(computation, type, value, layout), dims, {});
}

absl::StatusOr<Instruction*> SliceMinor(Instruction* x, int64_t r0, int64_t r1, int64_t c0,
                                        int64_t c1) {
  const auto& dims = x->shape().dimensions();
  std::vector<SliceDimension> slice;
  for (size_t d = 0; d + 2 < dims.size(); ++d) slice.push_back({0, dims[d], 1});
  slice.push_back({r0, r1, 1});
  slice.push_back({c0, c1, 1});
  return MakeSlice(x, slice);
}

absl::StatusOr<Instruction*> BatchDot(Instruction* x, bool transpose_x, Instruction* y,
                                      bool transpose_y) {
  const int64_t rank = x->shape().rank();
  DotDimensionNumbers dnums;
  for (int64_t d = 0; d + 2 < rank; ++d) {
    dnums.lhs_batch_dimensions.push_back(d);
    dnums.rhs_batch_dimensions.push_back(d);
  }
  dnums.lhs_contracting_dimensions = {transpose_x ? rank - 2 : rank - 1};
  dnums.rhs_contracting_dimensions = {transpose_y ? rank - 1 : rank - 2};
  HLOGYM_ASSIGN(dot, MakeDot(x, y, dnums, x->shape().element_type()));
  dot->mutable_attrs().operand_precision = {Precision::kHighest, Precision::kHighest};
  return dot;
}

absl::StatusOr<Instruction*> UpdateAt(Instruction* x, Instruction* update,
                                      const std::vector<Instruction*>& starts) {
  std::vector<Shape> start_shapes;
  for (const Instruction* start : starts) start_shapes.push_back(start->shape());
  HLOGYM_ASSIGN(shape, InferDynamicUpdateSliceShape(x->shape(), update->shape(), start_shapes));
  auto dus = std::make_unique<Instruction>(Opcode::kDynamicUpdateSlice, shape);
  dus->AppendOperand(x);
  dus->AppendOperand(update);
  for (Instruction* start : starts) dus->AppendOperand(start);
  return AddWithLayoutOf(x->parent(), std::move(dus), x);
}

absl::StatusOr<Instruction*> UpdateMinor(Instruction* x, Instruction* update, int64_t r, int64_t c,
                                         bool layout) {
  const int64_t rank = x->shape().rank();
  std::vector<Instruction*> starts;
  for (int64_t d = 0; d < rank; ++d) {
    const double start = d == rank - 2 ? r : d == rank - 1 ? c : 0;
    starts.push_back(MakeScalarConstant(x->parent(), PrimitiveType::kS32, start, layout));
  }
  return UpdateAt(x, update, starts);
}

namespace {

// `rows` and `cols` (vectors) broadcast over [m, n] and compared: rows[r] `direction` cols[c].
absl::StatusOr<Instruction*> CompareOverMatrix(Instruction* rows, Instruction* cols,
                                               ComparisonDirection direction) {
  const std::vector<int64_t> matrix = {rows->shape().dimensions(0), cols->shape().dimensions(0)};
  HLOGYM_ASSIGN(col_matrix, MakeBroadcast(cols, matrix, std::vector<int64_t>{1}));
  HLOGYM_ASSIGN(row_matrix, MakeBroadcast(rows, matrix, std::vector<int64_t>{0}));
  return MakeCompare(direction, row_matrix, col_matrix);
}

}  // namespace

absl::StatusOr<Instruction*> IdentityMatrix(Computation* computation, PrimitiveType type, int64_t m,
                                            int64_t n, bool layout) {
  Instruction* rows = MakeIota(computation, PrimitiveType::kU32, {m}, 0, layout);
  Instruction* cols = MakeIota(computation, PrimitiveType::kU32, {n}, 0, layout);
  HLOGYM_ASSIGN(equal, CompareOverMatrix(rows, cols, ComparisonDirection::kEq));
  return MakeConvert(equal, type);
}

absl::StatusOr<Instruction*> TriangleMask(Computation* computation, std::span<const int64_t> dims,
                                          int64_t diagonal, ComparisonDirection direction,
                                          bool layout) {
  const int64_t nb = static_cast<int64_t>(dims.size()) - 2;
  Instruction* cols = MakeIota(computation, PrimitiveType::kS32, {dims[nb + 1]}, 0, layout);
  Instruction* rows = MakeIota(computation, PrimitiveType::kS32, {dims[nb]}, 0, layout);
  HLOGYM_ASSIGN(offset, MakeFull(computation, PrimitiveType::kS32, static_cast<double>(diagonal),
                                 std::vector<int64_t>{dims[nb]}, layout));
  HLOGYM_ASSIGN(shifted, MakeBinary(Opcode::kAdd, rows, offset));
  HLOGYM_ASSIGN(mask, CompareOverMatrix(shifted, cols, direction));
  return MakeBroadcast(mask, dims, std::vector<int64_t>{nb, nb + 1});
}

absl::StatusOr<Instruction*> Triangle(Instruction* x, bool lower, bool layout) {
  Computation* computation = x->parent();
  const std::vector<int64_t>& dims = x->shape().dimensions();
  HLOGYM_ASSIGN(mask,
                TriangleMask(computation, dims, lower ? 0 : -1, ComparisonDirection::kGe, layout));
  HLOGYM_ASSIGN(zeros, MakeFull(computation, x->shape().element_type(), 0, dims, layout));
  return lower ? MakeSelect(mask, x, zeros) : MakeSelect(mask, zeros, x);
}

absl::StatusOr<Instruction*> MatrixDiagonal(Instruction* x, bool layout) {
  Computation* computation = x->parent();
  const std::vector<int64_t>& dims = x->shape().dimensions();
  const int64_t rank = static_cast<int64_t>(dims.size());
  const PrimitiveType type = x->shape().element_type();
  HLOGYM_ASSIGN(mask, TriangleMask(computation, dims, 0, ComparisonDirection::kEq, layout));
  HLOGYM_ASSIGN(zeros, MakeFull(computation, type, 0, dims, layout));
  HLOGYM_ASSIGN(on_diagonal, MakeSelect(mask, x, zeros));
  Computation* add = AddScalarBinaryComputation(*computation->parent(), "add", Opcode::kAdd, type,
                                                layout, "x", "y");
  // Summing out the longer of the two dimensions leaves the diagonal's length.
  const int64_t summed[] = {dims[rank - 2] >= dims[rank - 1] ? rank - 2 : rank - 1};
  return MakeReduce(on_diagonal, MakeScalarConstant(computation, type, 0, layout), summed, add);
}

}  // namespace hlogym
