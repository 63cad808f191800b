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

}  // namespace hlogym
