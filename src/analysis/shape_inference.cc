#include "analysis/shape_inference.h"

#include <algorithm>
#include <string>

#include "absl/algorithm/container.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "hlo/shape_util.h"
#include "hlo/status_macros.h"
#include "hlo/str_cat.h"

namespace hlogym {
namespace {

absl::Status Err(std::string message) { return absl::InvalidArgumentError(std::move(message)); }

std::string S(const Shape& shape) { return shape.ToString(/*print_layout=*/false); }
std::string Dims(std::span<const int64_t> dims) {
  return StrCat("{", absl::StrJoin(dims, ","), "}");
}
std::string TypeName(PrimitiveType t) { return std::string(PrimitiveTypeName(t)); }

absl::Status ExpectArray(const Shape& shape, std::string_view what) {
  if (!shape.IsArray()) return Err(StrCat(what, " must be an array, got ", S(shape)));
  return absl::OkStatus();
}

bool IsFloatOrComplex(PrimitiveType t) { return IsFloatingPointType(t) || IsComplexType(t); }
bool IsIntOrPred(PrimitiveType t) { return IsIntegralType(t) || t == PrimitiveType::kPred; }

// Element types equal up to floating-point precision (f32 vs bf16).
bool SameTypeIgnoringFp(PrimitiveType a, PrimitiveType b) {
  if (a == b) return true;
  return IsFloatingPointType(a) && IsFloatingPointType(b);
}

bool HasUnbounded(const Shape& shape) { return shape.is_unbounded_dynamic(); }

// Checks that `dims` are distinct and within [0, rank).
absl::Status CheckDimList(std::span<const int64_t> dims, int64_t rank, std::string_view what) {
  std::vector<bool> seen(static_cast<size_t>(std::max<int64_t>(rank, 0)), false);
  for (int64_t d : dims) {
    if (d < 0 || d >= rank) {
      return Err(
          StrCat(what, " ", Dims(dims), " has dimension ", d, " out of range for rank ", rank));
    }
    if (seen[d]) return Err(StrCat(what, " ", Dims(dims), " repeats dimension ", d));
    seen[d] = true;
  }
  return absl::OkStatus();
}

absl::Status CheckSorted(std::span<const int64_t> dims, std::string_view what) {
  for (size_t i = 1; i < dims.size(); ++i) {
    if (dims[i - 1] >= dims[i]) {
      return Err(StrCat(what, " ", Dims(dims), " must be sorted and unique"));
    }
  }
  return absl::OkStatus();
}

// Fits a 128-bit intermediate into a dimension size.
absl::StatusOr<int64_t> ToDim(__int128 v, std::string_view what) {
  if (v < 0) return Err(StrCat(what, " is negative (", static_cast<int64_t>(v), ")"));
  if (v > static_cast<__int128>(std::numeric_limits<int64_t>::max())) {
    return Err(StrCat(what, " overflows"));
  }
  return static_cast<int64_t>(v);
}

std::vector<const Shape*> ParamShapes(const Computation& comp) {
  std::vector<const Shape*> out;
  for (const Instruction* p : comp.parameters()) out.push_back(p ? &p->shape() : nullptr);
  return out;
}

const Shape* RootShape(const Computation* comp) {
  if (comp == nullptr || comp->root_instruction() == nullptr) return nullptr;
  return &comp->root_instruction()->shape();
}

// Checks a reducer (reduce, reduce-window, scatter, all-reduce): 2N scalar
// parameters (T0..TN-1, T0..TN-1) and result T0 (N == 1) or (T0..TN-1); the
// accumulator types Ti match `inits` and the inputs' element types up to
// floating-point precision. Returns the accumulator types.
absl::StatusOr<std::vector<PrimitiveType>> CheckReducer(const Computation* comp,
                                                        std::span<const Shape> inits,
                                                        std::span<const PrimitiveType> inputs) {
  if (comp == nullptr) return Err("missing reduction computation");
  const size_t n = inputs.size();
  std::vector<const Shape*> params = ParamShapes(*comp);
  const std::string cname = StrCat("reduction computation ", comp->name());
  if (params.size() != 2 * n) {
    return Err(StrCat(cname, " must take ", 2 * n, " parameters, takes ", params.size()));
  }
  const Shape* root = RootShape(comp);
  if (root == nullptr) return Err(StrCat(cname, " has no root"));
  std::vector<PrimitiveType> acc;
  if (n == 1 && root->IsArray()) {
    acc.push_back(root->element_type());
    if (!root->IsScalar()) return Err(StrCat(cname, " must return a scalar, returns ", S(*root)));
  } else {
    if (!root->IsTuple() || root->tuple_shapes_size() != static_cast<int64_t>(n)) {
      return Err(StrCat(cname, " must return ",
                        n == 1 ? "a scalar" : StrCat("a tuple of ", n, " scalars"), ", returns ",
                        S(*root)));
    }
    for (const Shape& e : root->tuple_shapes()) {
      if (!e.IsScalar()) {
        return Err(StrCat(cname, " must return scalars, returns ", S(*root)));
      }
      acc.push_back(e.element_type());
    }
  }
  for (size_t i = 0; i < n; ++i) {
    for (size_t which : {i, n + i}) {
      const Shape* p = params[which];
      if (p == nullptr) return Err(StrCat(cname, " is missing parameter ", which));
      if (!p->IsScalar() || p->element_type() != acc[i]) {
        return Err(StrCat(cname, " parameter ", which, " must be ", TypeName(acc[i]),
                          "[] like its result, is ", S(*p)));
      }
    }
    if (i < inits.size()) {
      if (!inits[i].IsScalar() || !SameTypeIgnoringFp(inits[i].element_type(), acc[i])) {
        return Err(StrCat("init value ", i, " must be a scalar of the accumulator type ",
                          TypeName(acc[i]), ", is ", S(inits[i])));
      }
    }
    if (!SameTypeIgnoringFp(inputs[i], acc[i])) {
      return Err(StrCat("input ", i, " element type ", TypeName(inputs[i]),
                        " does not match the accumulator type ", TypeName(acc[i]), " of ", cname));
    }
  }
  return acc;
}

Shape MakeTupleOrSingle(std::vector<Shape> shapes) {
  if (shapes.size() == 1) return std::move(shapes[0]);
  return Shape::Tuple(std::move(shapes));
}

// Checks that `comp` takes parameters compatible with `args` and returns
// `result`; used by call, fusion, while, conditional.
absl::Status CheckSignature(const Computation* comp, std::span<const Shape* const> args,
                            const Shape* result, std::string_view what) {
  if (comp == nullptr) return Err(StrCat("missing ", what));
  std::vector<const Shape*> params = ParamShapes(*comp);
  const std::string cname = StrCat(what, " ", comp->name());
  if (params.size() != args.size()) {
    return Err(StrCat(cname, " takes ", params.size(), " parameters but is given ", args.size(),
                      " operands"));
  }
  for (size_t i = 0; i < args.size(); ++i) {
    if (params[i] == nullptr) return Err(StrCat(cname, " is missing parameter ", i));
    if (!params[i]->Equal(*args[i], {.dynamic = false, .layouts = Shape::Layouts::kIgnore})) {
      return Err(StrCat(cname, " parameter ", i, " has shape ", S(*params[i]),
                        " but the operand has shape ", S(*args[i])));
    }
  }
  if (result != nullptr) {
    const Shape* root = RootShape(comp);
    if (root == nullptr) return Err(StrCat(cname, " has no root"));
    if (!root->Equal(*result, {.dynamic = false, .layouts = Shape::Layouts::kIgnore})) {
      return Err(
          StrCat(cname, " returns ", S(*root), " but the instruction has shape ", S(*result)));
    }
  }
  return absl::OkStatus();
}

// Dimensions after inserting a size-1 index vector dimension when
// index_vector_dim equals the rank (gather/scatter).
absl::StatusOr<std::vector<int64_t>> ExpandedIndices(const Shape& indices, int64_t index_vector_dim,
                                                     std::string_view what) {
  HLOGYM_RETURN_IF_ERROR(ExpectArray(indices, what));
  if (!IsIntegralType(indices.element_type())) {
    return Err(StrCat(what, " must have an integral element type, is ", S(indices)));
  }
  if (index_vector_dim < 0 || index_vector_dim > indices.rank()) {
    return Err(
        StrCat("index_vector_dim ", index_vector_dim, " out of range for ", what, " ", S(indices)));
  }
  std::vector<int64_t> dims = indices.dimensions();
  if (index_vector_dim == indices.rank()) dims.push_back(1);
  return dims;
}

// Start indices of dynamic-slice / dynamic-update-slice: one integral scalar
// per dimension, all of one type, or (old form) a single integral vector.
absl::Status CheckStartIndices(std::span<const Shape> idx, int64_t rank, std::string_view op,
                               const Shape& operand) {
  if (idx.size() == 1 && idx[0].IsArray() && idx[0].rank() == 1) {
    if (idx[0].dimensions(0) != rank || !IsIntegralType(idx[0].element_type())) {
      return Err(StrCat(op, " start index vector ", S(idx[0]),
                        " must be an integral vector of length ", rank));
    }
    return absl::OkStatus();
  }
  if (static_cast<int64_t>(idx.size()) != rank) {
    return Err(StrCat(op, " has ", idx.size(), " start indices for operand ", S(operand),
                      " of rank ", rank));
  }
  for (size_t i = 0; i < idx.size(); ++i) {
    if (!idx[i].IsScalar() || !IsIntegralType(idx[i].element_type())) {
      return Err(StrCat(op, " start index ", i, " must be an integral scalar, is ", S(idx[i])));
    }
    if (idx[i].element_type() != idx[0].element_type()) {
      return Err(StrCat(op, " start indices have different types: ", S(idx[0]), " vs ", S(idx[i])));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<Shape> InferUnaryShape(Opcode opcode, const Shape& operand) {
  if (opcode == Opcode::kCopy) return operand;
  HLOGYM_RETURN_IF_ERROR(ExpectArray(operand, StrCat("operand of ", OpcodeName(opcode))));
  const PrimitiveType t = operand.element_type();
  Shape result(t, operand.dimensions());
  auto need = [&](bool ok, std::string_view kind) -> absl::Status {
    if (ok) return absl::OkStatus();
    return Err(StrCat(OpcodeName(opcode), " expects ", kind, " operand, got ", S(operand)));
  };
  switch (opcode) {
    case Opcode::kFloor:
    case Opcode::kCeil:
    case Opcode::kRoundNearestAfz:
    case Opcode::kRoundNearestEven:
      HLOGYM_RETURN_IF_ERROR(need(IsFloatingPointType(t), "a floating-point"));
      return result;
    case Opcode::kCos:
    case Opcode::kSin:
    case Opcode::kExp:
    case Opcode::kExpm1:
    case Opcode::kLog:
    case Opcode::kLog1p:
    case Opcode::kLogistic:
    case Opcode::kRsqrt:
    case Opcode::kSqrt:
    case Opcode::kCbrt:
    case Opcode::kTanh:
    case Opcode::kTan:
    case Opcode::kAcos:
    case Opcode::kAcosh:
    case Opcode::kAsin:
    case Opcode::kAsinh:
    case Opcode::kAtan:
    case Opcode::kAtanh:
    case Opcode::kCosh:
    case Opcode::kSinh:
    case Opcode::kErf:
      HLOGYM_RETURN_IF_ERROR(need(IsFloatOrComplex(t), "a floating-point or complex"));
      return result;
    case Opcode::kReal:
    case Opcode::kImag:
      HLOGYM_RETURN_IF_ERROR(need(IsFloatOrComplex(t), "a floating-point or complex"));
      if (t == PrimitiveType::kC64) result.set_element_type(PrimitiveType::kF32);
      if (t == PrimitiveType::kC128) result.set_element_type(PrimitiveType::kF64);
      return result;
    case Opcode::kAbs:
      HLOGYM_RETURN_IF_ERROR(need(IsFloatOrComplex(t) || IsIntegralType(t), "a numeric"));
      if (t == PrimitiveType::kC64) result.set_element_type(PrimitiveType::kF32);
      if (t == PrimitiveType::kC128) result.set_element_type(PrimitiveType::kF64);
      return result;
    case Opcode::kNegate:
    case Opcode::kSign:
      HLOGYM_RETURN_IF_ERROR(need(IsFloatOrComplex(t) || IsIntegralType(t), "a numeric"));
      return result;
    case Opcode::kClz:
    case Opcode::kPopulationCount:
      HLOGYM_RETURN_IF_ERROR(need(IsIntegralType(t), "an integral"));
      return result;
    case Opcode::kNot:
      HLOGYM_RETURN_IF_ERROR(need(IsIntOrPred(t), "a pred or integral"));
      return result;
    case Opcode::kIsFinite:
      HLOGYM_RETURN_IF_ERROR(need(IsFloatingPointType(t), "a floating-point"));
      result.set_element_type(PrimitiveType::kPred);
      return result;
    default:
      return result;
  }
}

absl::StatusOr<Shape> InferBinaryShape(Opcode opcode, const Shape& lhs, const Shape& rhs) {
  HLOGYM_RETURN_IF_ERROR(ExpectArray(lhs, StrCat("lhs of ", OpcodeName(opcode))));
  HLOGYM_RETURN_IF_ERROR(ExpectArray(rhs, StrCat("rhs of ", OpcodeName(opcode))));
  if (lhs.dimensions() != rhs.dimensions()) {
    return Err(StrCat("binary op operands have different dimensions: ", S(lhs), " vs ", S(rhs)));
  }
  const PrimitiveType t = lhs.element_type();
  if (opcode == Opcode::kStochasticConvert) {
    // operand and random bits; the result type is the instruction's choice.
    return Shape(t, lhs.dimensions());
  }
  if (t != rhs.element_type()) {
    return Err(StrCat("binary op operands have different element types: ", S(lhs), " vs ", S(rhs)));
  }
  Shape result(t, lhs.dimensions());
  auto need = [&](bool ok, std::string_view kind) -> absl::Status {
    if (ok) return absl::OkStatus();
    return Err(StrCat(OpcodeName(opcode), " expects ", kind, " operands, got ", S(lhs)));
  };
  switch (opcode) {
    case Opcode::kCompare:
      result.set_element_type(PrimitiveType::kPred);
      return result;
    case Opcode::kComplex:
      HLOGYM_RETURN_IF_ERROR(
          need(t == PrimitiveType::kF32 || t == PrimitiveType::kF64, "f32 or f64"));
      result.set_element_type(t == PrimitiveType::kF32 ? PrimitiveType::kC64
                                                       : PrimitiveType::kC128);
      return result;
    case Opcode::kAnd:
    case Opcode::kOr:
    case Opcode::kXor:
      HLOGYM_RETURN_IF_ERROR(need(IsIntOrPred(t), "pred or integral"));
      return result;
    case Opcode::kShiftLeft:
    case Opcode::kShiftRightArithmetic:
    case Opcode::kShiftRightLogical:
    case Opcode::kMulhi:
      HLOGYM_RETURN_IF_ERROR(need(IsIntegralType(t), "integral"));
      return result;
    case Opcode::kAtan2:
      HLOGYM_RETURN_IF_ERROR(need(IsFloatOrComplex(t), "floating-point or complex"));
      return result;
    default:
      return result;
  }
}

absl::StatusOr<Shape> InferSelectShape(const Shape& pred, const Shape& on_true,
                                       const Shape& on_false) {
  if (!pred.IsArray() || pred.element_type() != PrimitiveType::kPred) {
    return Err(StrCat("select predicate must be a pred array, is ", S(pred)));
  }
  if (!on_true.Equal(on_false, {.dynamic = false, .layouts = Shape::Layouts::kIgnore})) {
    return Err(StrCat("select branches have different shapes: ", S(on_true), " vs ", S(on_false)));
  }
  if (on_true.IsTuple()) {
    if (!pred.IsScalar()) {
      return Err(StrCat("select of tuples needs a scalar predicate, got ", S(pred)));
    }
    return on_true;
  }
  HLOGYM_RETURN_IF_ERROR(ExpectArray(on_true, "select on_true"));
  if (!pred.IsScalar() && pred.dimensions() != on_true.dimensions()) {
    return Err(StrCat("select predicate dimensions differ from the operands: ", S(pred), " vs ",
                      S(on_true)));
  }
  return on_true;
}

absl::StatusOr<Shape> InferClampShape(const Shape& min, const Shape& operand, const Shape& max) {
  HLOGYM_RETURN_IF_ERROR(ExpectArray(min, "clamp min"));
  HLOGYM_RETURN_IF_ERROR(ExpectArray(operand, "clamp operand"));
  HLOGYM_RETURN_IF_ERROR(ExpectArray(max, "clamp max"));
  for (const Shape* bound : {&min, &max}) {
    if (bound->element_type() != operand.element_type()) {
      return Err(StrCat("clamp bound element type differs from the operand: ", S(*bound), " vs ",
                        S(operand)));
    }
    if (!bound->IsScalar() && bound->dimensions() != operand.dimensions()) {
      return Err(StrCat("clamp bound must be a scalar or match the operand dimensions: ", S(*bound),
                        " vs ", S(operand)));
    }
  }
  return Shape(operand.element_type(), operand.dimensions());
}

absl::StatusOr<Shape> InferConvertShape(const Shape& operand, PrimitiveType new_type) {
  HLOGYM_RETURN_IF_ERROR(ExpectArray(operand, "convert operand"));
  if (!IsArrayType(new_type)) {
    return Err(StrCat("convert result must be an array type, is ", TypeName(new_type)));
  }
  if (IsComplexType(operand.element_type()) && !IsComplexType(new_type)) {
    return Err(StrCat("convert from complex ", S(operand), " to real type ", TypeName(new_type),
                      " is not allowed (use real/imag)"));
  }
  return Shape(new_type, operand.dimensions());
}

absl::StatusOr<Shape> InferBitcastConvertShape(const Shape& operand, PrimitiveType new_type) {
  HLOGYM_RETURN_IF_ERROR(ExpectArray(operand, "bitcast-convert operand"));
  if (!IsArrayType(new_type)) {
    return Err(StrCat("bitcast-convert result must be an array type, is ", TypeName(new_type)));
  }
  const int in_bits = BitWidth(operand.element_type());
  const int out_bits = BitWidth(new_type);
  std::vector<int64_t> dims = operand.dimensions();
  if (in_bits == out_bits || in_bits == 0 || out_bits == 0) return Shape(new_type, dims);
  if (in_bits > out_bits) {
    if (in_bits % out_bits != 0) {
      return Err(StrCat("bitcast-convert between incompatible bit widths: ", S(operand), " to ",
                        TypeName(new_type)));
    }
    dims.push_back(in_bits / out_bits);
    return Shape(new_type, dims);
  }
  if (out_bits % in_bits != 0 || dims.empty() || dims.back() != out_bits / in_bits) {
    return Err(StrCat("bitcast-convert from ", S(operand), " to wider ", TypeName(new_type),
                      " needs a last dimension of ", out_bits / std::max(in_bits, 1)));
  }
  dims.pop_back();
  return Shape(new_type, dims);
}

absl::StatusOr<Shape> InferBroadcastShape(const Shape& operand,
                                          std::span<const int64_t> result_dims,
                                          std::span<const int64_t> dimensions) {
  HLOGYM_RETURN_IF_ERROR(ExpectArray(operand, "broadcast operand"));
  if (static_cast<int64_t>(dimensions.size()) != operand.rank()) {
    return Err(StrCat("broadcast dimensions ", Dims(dimensions),
                      " must have one entry per operand"
                      " dimension of ",
                      S(operand)));
  }
  const int64_t out_rank = static_cast<int64_t>(result_dims.size());
  HLOGYM_RETURN_IF_ERROR(CheckDimList(dimensions, out_rank, "broadcast dimensions"));
  for (int64_t i = 0; i < operand.rank(); ++i) {
    if (operand.dimensions(i) != result_dims[dimensions[i]]) {
      return Err(StrCat("broadcast operand dimension ", i, " (size ", operand.dimensions(i),
                        ") does not match result dimension ", dimensions[i], " (size ",
                        result_dims[dimensions[i]], "); operand ", S(operand)));
    }
  }
  return Shape(operand.element_type(),
               std::vector<int64_t>(result_dims.begin(), result_dims.end()));
}

absl::StatusOr<Shape> InferReshapeShape(const Shape& operand,
                                        std::span<const int64_t> result_dims) {
  HLOGYM_RETURN_IF_ERROR(ExpectArray(operand, "reshape operand"));
  Shape result(operand.element_type(),
               std::vector<int64_t>(result_dims.begin(), result_dims.end()));
  if (operand.is_static() && result.ElementCount() != operand.ElementCount()) {
    return Err(StrCat("reshape changes the element count: ", S(operand), " (",
                      operand.ElementCount(), ") to ", S(result), " (", result.ElementCount(),
                      ")"));
  }
  // A dynamic dimension the reshape keeps whole stays dynamic, as in XLA
  // (the rewriters that reshape around an op before the dynamic padder, such
  // as reduce-window-rewriter, keep it for the padder).
  if (!operand.is_static()) {
    if (auto groups = ReshapeGroups(operand.dimensions(), result.dimensions())) {
      for (const ReshapeGroup& g : *groups) {
        if (g.a_end - g.a_begin == 1 && g.b_end - g.b_begin == 1 &&
            operand.is_dynamic_dimension(g.a_begin)) {
          result.set_dynamic_dimension(g.b_begin, true);
        }
      }
    }
  }
  return result;
}

absl::StatusOr<Shape> InferTransposeShape(const Shape& operand,
                                          std::span<const int64_t> permutation) {
  HLOGYM_RETURN_IF_ERROR(ExpectArray(operand, "transpose operand"));
  if (static_cast<int64_t>(permutation.size()) != operand.rank()) {
    return Err(StrCat("transpose dimensions ", Dims(permutation),
                      " are not a permutation of the "
                      "dimensions of ",
                      S(operand)));
  }
  HLOGYM_RETURN_IF_ERROR(CheckDimList(permutation, operand.rank(), "transpose dimensions"));
  std::vector<int64_t> dims;
  for (int64_t p : permutation) dims.push_back(operand.dimensions(p));
  return Shape(operand.element_type(), dims);
}

absl::StatusOr<Shape> InferReverseShape(const Shape& operand, std::span<const int64_t> dimensions) {
  HLOGYM_RETURN_IF_ERROR(ExpectArray(operand, "reverse operand"));
  HLOGYM_RETURN_IF_ERROR(CheckDimList(dimensions, operand.rank(), "reverse dimensions"));
  return Shape(operand.element_type(), operand.dimensions());
}

absl::StatusOr<Shape> InferSliceShape(const Shape& operand, std::span<const SliceDimension> slice) {
  HLOGYM_RETURN_IF_ERROR(ExpectArray(operand, "slice operand"));
  if (static_cast<int64_t>(slice.size()) != operand.rank()) {
    return Err(StrCat("slice has ", slice.size(), " dimensions but the operand ", S(operand),
                      " has rank ", operand.rank()));
  }
  std::vector<int64_t> dims;
  for (int64_t i = 0; i < operand.rank(); ++i) {
    const SliceDimension& s = slice[i];
    if (s.stride <= 0)
      return Err(StrCat("slice stride ", s.stride, " in dimension ", i, " must be positive"));
    if (s.start < 0 || s.start > s.limit || s.limit > operand.dimensions(i)) {
      return Err(StrCat("slice [", s.start, ":", s.limit, "] in dimension ", i,
                        " is out of bounds for ", S(operand)));
    }
    dims.push_back((s.limit - s.start + s.stride - 1) / s.stride);
  }
  return Shape(operand.element_type(), dims);
}

absl::StatusOr<Shape> InferDynamicSliceShape(const Shape& operand,
                                             std::span<const Shape> start_indices,
                                             std::span<const int64_t> slice_sizes) {
  HLOGYM_RETURN_IF_ERROR(ExpectArray(operand, "dynamic-slice operand"));
  const int64_t rank = operand.rank();
  HLOGYM_RETURN_IF_ERROR(CheckStartIndices(start_indices, rank, "dynamic-slice", operand));
  if (static_cast<int64_t>(slice_sizes.size()) != rank) {
    return Err(StrCat("dynamic-slice sizes ", Dims(slice_sizes), " do not match the rank of ",
                      S(operand)));
  }
  for (int64_t i = 0; i < rank; ++i) {
    if (slice_sizes[i] < 0 || slice_sizes[i] > operand.dimensions(i)) {
      return Err(StrCat("dynamic-slice size ", slice_sizes[i], " in dimension ", i,
                        " is out of bounds for ", S(operand)));
    }
  }
  return Shape(operand.element_type(),
               std::vector<int64_t>(slice_sizes.begin(), slice_sizes.end()));
}

absl::StatusOr<Shape> InferDynamicUpdateSliceShape(const Shape& operand, const Shape& update,
                                                   std::span<const Shape> start_indices) {
  HLOGYM_RETURN_IF_ERROR(ExpectArray(operand, "dynamic-update-slice operand"));
  HLOGYM_RETURN_IF_ERROR(ExpectArray(update, "dynamic-update-slice update"));
  const int64_t rank = operand.rank();
  if (update.rank() != rank) {
    return Err(StrCat("dynamic-update-slice update ", S(update), " and operand ", S(operand),
                      " have different ranks"));
  }
  if (!SameTypeIgnoringFp(update.element_type(), operand.element_type())) {
    return Err(StrCat("dynamic-update-slice update ", S(update), " and operand ", S(operand),
                      " have different element types"));
  }
  HLOGYM_RETURN_IF_ERROR(CheckStartIndices(start_indices, rank, "dynamic-update-slice", operand));
  for (int64_t i = 0; i < rank; ++i) {
    if (update.dimensions(i) > operand.dimensions(i)) {
      return Err(StrCat("dynamic-update-slice update ", S(update), " is larger than operand ",
                        S(operand), " in dimension ", i));
    }
  }
  return Shape(operand.element_type(), operand.dimensions());
}

absl::StatusOr<Shape> InferConcatenateShape(std::span<const Shape> operands, int64_t dimension) {
  if (operands.empty()) return Err("concatenate needs at least one operand");
  const Shape& first = operands[0];
  HLOGYM_RETURN_IF_ERROR(ExpectArray(first, "concatenate operand"));
  if (dimension < 0 || dimension >= first.rank()) {
    return Err(StrCat("concatenate dimension ", dimension, " out of range for ", S(first)));
  }
  std::vector<int64_t> dims = first.dimensions();
  for (size_t i = 1; i < operands.size(); ++i) {
    const Shape& op = operands[i];
    HLOGYM_RETURN_IF_ERROR(ExpectArray(op, "concatenate operand"));
    if (op.rank() != first.rank()) {
      return Err(StrCat("concatenate operands have different ranks: ", S(first), " vs ", S(op)));
    }
    if (op.element_type() != first.element_type()) {
      return Err(
          StrCat("concatenate operands have different element types: ", S(first), " vs ", S(op)));
    }
    for (int64_t d = 0; d < first.rank(); ++d) {
      if (d != dimension && op.dimensions(d) != first.dimensions(d)) {
        return Err(StrCat("concatenate operands differ in non-concatenated dimension ", d, ": ",
                          S(first), " vs ", S(op)));
      }
    }
    dims[dimension] += op.dimensions(dimension);
  }
  return Shape(first.element_type(), dims);
}

absl::StatusOr<Shape> InferPadShape(const Shape& operand, const Shape& padding_value,
                                    std::span<const PaddingDimension> padding) {
  HLOGYM_RETURN_IF_ERROR(ExpectArray(operand, "pad operand"));
  if (!padding_value.IsScalar()) {
    return Err(StrCat("pad value must be a scalar, is ", S(padding_value)));
  }
  if (padding_value.element_type() != operand.element_type()) {
    return Err(StrCat("pad value ", S(padding_value), " and operand ", S(operand),
                      " have different element types"));
  }
  if (static_cast<int64_t>(padding.size()) != operand.rank()) {
    return Err(StrCat("pad config has ", padding.size(), " dimensions but the operand ", S(operand),
                      " has rank ", operand.rank()));
  }
  std::vector<int64_t> dims;
  for (int64_t i = 0; i < operand.rank(); ++i) {
    const PaddingDimension& p = padding[i];
    if (p.interior < 0) {
      return Err(StrCat("pad interior padding ", p.interior, " in dimension ", i,
                        " must not be negative"));
    }
    const __int128 d = operand.dimensions(i);
    __int128 size = d + p.low + p.high + std::max<__int128>(d - 1, 0) * p.interior;
    HLOGYM_ASSIGN(r, ToDim(size, StrCat("padded size of dimension ", i, " of ", S(operand))));
    dims.push_back(r);
  }
  return Shape(operand.element_type(), dims);
}

absl::StatusOr<Shape> InferDotShape(const Shape& lhs, const Shape& rhs,
                                    const DotDimensionNumbers& dnums, PrimitiveType result_type) {
  HLOGYM_RETURN_IF_ERROR(ExpectArray(lhs, "dot lhs"));
  HLOGYM_RETURN_IF_ERROR(ExpectArray(rhs, "dot rhs"));
  const auto& lb = dnums.lhs_batch_dimensions;
  const auto& rb = dnums.rhs_batch_dimensions;
  const auto& lc = dnums.lhs_contracting_dimensions;
  const auto& rc = dnums.rhs_contracting_dimensions;
  if (lb.size() != rb.size()) {
    return Err(StrCat("dot has ", lb.size(), " lhs batch dimensions but ", rb.size(),
                      " rhs batch dimensions"));
  }
  if (lc.size() != rc.size()) {
    return Err(StrCat("dot has ", lc.size(), " lhs contracting dimensions but ", rc.size(),
                      " rhs contracting dimensions"));
  }
  std::vector<int64_t> lhs_all(lb.begin(), lb.end());
  lhs_all.insert(lhs_all.end(), lc.begin(), lc.end());
  std::vector<int64_t> rhs_all(rb.begin(), rb.end());
  rhs_all.insert(rhs_all.end(), rc.begin(), rc.end());
  HLOGYM_RETURN_IF_ERROR(
      CheckDimList(lhs_all, lhs.rank(), StrCat("dot lhs batch+contracting dims of ", S(lhs))));
  HLOGYM_RETURN_IF_ERROR(
      CheckDimList(rhs_all, rhs.rank(), StrCat("dot rhs batch+contracting dims of ", S(rhs))));
  for (size_t i = 0; i < lc.size(); ++i) {
    if (lhs.dimensions(lc[i]) != rhs.dimensions(rc[i])) {
      return Err(StrCat("dot contracting dimensions differ in size: lhs ", S(lhs), " dimension ",
                        lc[i], " vs rhs ", S(rhs), " dimension ", rc[i]));
    }
  }
  for (size_t i = 0; i < lb.size(); ++i) {
    if (lhs.dimensions(lb[i]) != rhs.dimensions(rb[i])) {
      return Err(StrCat("dot batch dimensions differ in size: lhs ", S(lhs), " dimension ", lb[i],
                        " vs rhs ", S(rhs), " dimension ", rb[i]));
    }
  }
  if (!IsArrayType(result_type)) return Err("dot result must be an array");
  // preferred_element_type may widen but not narrow integers.
  if (!IsFloatOrComplex(lhs.element_type()) && IsIntegralType(result_type) &&
      BitWidth(result_type) < BitWidth(lhs.element_type())) {
    return Err(
        StrCat("dot result type ", TypeName(result_type), " is narrower than operand ", S(lhs)));
  }
  std::vector<int64_t> dims;
  for (int64_t d : lb) dims.push_back(lhs.dimensions(d));
  for (int64_t d = 0; d < lhs.rank(); ++d) {
    if (!absl::c_linear_search(lhs_all, d)) dims.push_back(lhs.dimensions(d));
  }
  for (int64_t d = 0; d < rhs.rank(); ++d) {
    if (!absl::c_linear_search(rhs_all, d)) dims.push_back(rhs.dimensions(d));
  }
  return Shape(result_type, dims);
}

absl::StatusOr<std::vector<int64_t>> InferWindowOutputDims(std::span<const int64_t> dims,
                                                           const Window& window) {
  if (window.dimensions.size() != dims.size()) {
    return Err(StrCat("window has ", window.dimensions.size(), " dimensions but the input has ",
                      dims.size()));
  }
  std::vector<int64_t> out;
  for (size_t i = 0; i < dims.size(); ++i) {
    const WindowDimension& w = window.dimensions[i];
    if (w.size <= 0)
      return Err(StrCat("window size ", w.size, " in dimension ", i, " must be positive"));
    if (w.stride <= 0)
      return Err(StrCat("window stride ", w.stride, " in dimension ", i, " must be positive"));
    if (w.base_dilation < 1 || w.window_dilation < 1) {
      return Err(StrCat("window dilation in dimension ", i, " must be at least 1"));
    }
    const __int128 in = dims[i];
    const __int128 dilated_in = in == 0 ? 0 : (in - 1) * w.base_dilation + 1;
    const __int128 padded = dilated_in + w.padding_low + w.padding_high;
    if (padded < 0) {
      return Err(StrCat("padded input size in window dimension ", i, " is negative"));
    }
    const __int128 dilated_window = static_cast<__int128>(w.size - 1) * w.window_dilation + 1;
    const __int128 o = padded < dilated_window ? 0 : (padded - dilated_window) / w.stride + 1;
    HLOGYM_ASSIGN(r, ToDim(o, StrCat("window output size in dimension ", i)));
    out.push_back(r);
  }
  return out;
}

absl::StatusOr<Shape> InferConvolutionShape(const Shape& lhs, const Shape& rhs,
                                            const ConvolutionDimensionNumbers& dn,
                                            const Window& window, int64_t feature_group_count,
                                            int64_t batch_group_count, PrimitiveType result_type) {
  HLOGYM_RETURN_IF_ERROR(ExpectArray(lhs, "convolution input"));
  HLOGYM_RETURN_IF_ERROR(ExpectArray(rhs, "convolution kernel"));
  const size_t ns = dn.input_spatial_dimensions.size();
  if (dn.kernel_spatial_dimensions.size() != ns || dn.output_spatial_dimensions.size() != ns) {
    return Err("convolution dimension numbers have different spatial dimension counts");
  }
  if (window.dimensions.size() != ns) {
    return Err(StrCat("convolution window has ", window.dimensions.size(),
                      " dimensions but there are ", ns, " spatial dimensions"));
  }
  const int64_t rank = static_cast<int64_t>(ns) + 2;
  if (lhs.rank() != rank || rhs.rank() != rank) {
    return Err(StrCat("convolution input ", S(lhs), " and kernel ", S(rhs), " must have rank ",
                      rank, " for ", ns, " spatial dimensions"));
  }
  std::vector<int64_t> in_dims = {dn.input_batch_dimension, dn.input_feature_dimension};
  in_dims.insert(in_dims.end(), dn.input_spatial_dimensions.begin(),
                 dn.input_spatial_dimensions.end());
  std::vector<int64_t> k_dims = {dn.kernel_input_feature_dimension,
                                 dn.kernel_output_feature_dimension};
  k_dims.insert(k_dims.end(), dn.kernel_spatial_dimensions.begin(),
                dn.kernel_spatial_dimensions.end());
  std::vector<int64_t> o_dims = {dn.output_batch_dimension, dn.output_feature_dimension};
  o_dims.insert(o_dims.end(), dn.output_spatial_dimensions.begin(),
                dn.output_spatial_dimensions.end());
  HLOGYM_RETURN_IF_ERROR(CheckDimList(in_dims, rank, "convolution input dimension numbers"));
  HLOGYM_RETURN_IF_ERROR(CheckDimList(k_dims, rank, "convolution kernel dimension numbers"));
  HLOGYM_RETURN_IF_ERROR(CheckDimList(o_dims, rank, "convolution output dimension numbers"));
  if (feature_group_count <= 0 || batch_group_count <= 0) {
    return Err(StrCat("convolution feature_group_count ", feature_group_count,
                      " and batch_group_count ", batch_group_count, " must be positive"));
  }
  if (feature_group_count > 1 && batch_group_count > 1) {
    return Err("convolution cannot have both feature_group_count and batch_group_count > 1");
  }
  const int64_t in_batch = lhs.dimensions(dn.input_batch_dimension);
  const int64_t in_features = lhs.dimensions(dn.input_feature_dimension);
  const int64_t k_in = rhs.dimensions(dn.kernel_input_feature_dimension);
  const int64_t k_out = rhs.dimensions(dn.kernel_output_feature_dimension);
  if (in_features % feature_group_count != 0 || in_features / feature_group_count != k_in) {
    return Err(StrCat("convolution input features (", in_features,
                      ") divided by "
                      "feature_group_count (",
                      feature_group_count, ") must equal the kernel input features (", k_in,
                      "); input ", S(lhs), ", kernel ", S(rhs)));
  }
  if (k_out % feature_group_count != 0) {
    return Err(StrCat("convolution kernel output features (", k_out,
                      ") must be a multiple of feature_group_count (", feature_group_count, ")"));
  }
  if (k_out % batch_group_count != 0 || in_batch % batch_group_count != 0) {
    return Err(StrCat("convolution kernel output features (", k_out, ") and input batch (",
                      in_batch, ") must be multiples of batch_group_count (", batch_group_count,
                      ")"));
  }
  std::vector<int64_t> spatial;
  for (size_t i = 0; i < ns; ++i) {
    const int64_t ks = rhs.dimensions(dn.kernel_spatial_dimensions[i]);
    if (window.dimensions[i].size != ks) {
      return Err(StrCat("convolution window size ", window.dimensions[i].size,
                        " in spatial dimension ", i, " differs from the kernel size ", ks, " of ",
                        S(rhs)));
    }
    spatial.push_back(lhs.dimensions(dn.input_spatial_dimensions[i]));
  }
  HLOGYM_ASSIGN(out_spatial, InferWindowOutputDims(spatial, window));
  std::vector<int64_t> dims(rank, 0);
  dims[dn.output_batch_dimension] = in_batch / batch_group_count;
  dims[dn.output_feature_dimension] = k_out;
  for (size_t i = 0; i < ns; ++i) dims[dn.output_spatial_dimensions[i]] = (out_spatial)[i];
  return Shape(result_type, dims);
}

absl::StatusOr<Shape> InferGatherShape(const Shape& operand, const Shape& start_indices,
                                       const GatherDimensionNumbers& dn,
                                       std::span<const int64_t> slice_sizes) {
  HLOGYM_RETURN_IF_ERROR(ExpectArray(operand, "gather operand"));
  HLOGYM_ASSIGN(expanded_or,
                ExpandedIndices(start_indices, dn.index_vector_dim, "gather start indices"));
  const std::vector<int64_t>& idx = expanded_or;
  const int64_t idx_rank = static_cast<int64_t>(idx.size());
  const int64_t batch_rank = idx_rank - 1;
  const int64_t out_rank = static_cast<int64_t>(dn.offset_dims.size()) + batch_rank;
  HLOGYM_RETURN_IF_ERROR(CheckSorted(dn.offset_dims, "gather offset_dims"));
  HLOGYM_RETURN_IF_ERROR(CheckDimList(dn.offset_dims, out_rank, "gather offset_dims"));
  HLOGYM_RETURN_IF_ERROR(CheckSorted(dn.collapsed_slice_dims, "gather collapsed_slice_dims"));
  HLOGYM_RETURN_IF_ERROR(
      CheckDimList(dn.collapsed_slice_dims, operand.rank(), "gather collapsed_slice_dims"));
  HLOGYM_RETURN_IF_ERROR(CheckSorted(dn.operand_batching_dims, "gather operand_batching_dims"));
  HLOGYM_RETURN_IF_ERROR(
      CheckDimList(dn.operand_batching_dims, operand.rank(), "gather operand_batching_dims"));
  HLOGYM_RETURN_IF_ERROR(
      CheckDimList(dn.start_index_map, operand.rank(), "gather start_index_map"));
  HLOGYM_RETURN_IF_ERROR(
      CheckDimList(dn.start_indices_batching_dims, idx_rank, "gather start_indices_batching_dims"));
  if (absl::c_linear_search(dn.start_indices_batching_dims, dn.index_vector_dim)) {
    return Err("gather start_indices_batching_dims must not contain index_vector_dim");
  }
  if (static_cast<int64_t>(dn.start_index_map.size()) != idx[dn.index_vector_dim]) {
    return Err(StrCat("gather start_index_map has ", dn.start_index_map.size(),
                      " entries but the index vector of ", S(start_indices), " has ",
                      idx[dn.index_vector_dim]));
  }
  for (int64_t d : dn.collapsed_slice_dims) {
    if (absl::c_linear_search(dn.operand_batching_dims, d)) {
      return Err(StrCat("gather dimension ", d, " is both collapsed and a batching dimension"));
    }
  }
  if (dn.operand_batching_dims.size() != dn.start_indices_batching_dims.size()) {
    return Err("gather operand_batching_dims and start_indices_batching_dims differ in length");
  }
  for (size_t i = 0; i < dn.operand_batching_dims.size(); ++i) {
    if (operand.dimensions(dn.operand_batching_dims[i]) != idx[dn.start_indices_batching_dims[i]]) {
      return Err(StrCat("gather batching dimension sizes differ: operand ", S(operand),
                        " dimension ", dn.operand_batching_dims[i], " vs start indices ",
                        S(start_indices), " dimension ", dn.start_indices_batching_dims[i]));
    }
  }
  if (static_cast<int64_t>(slice_sizes.size()) != operand.rank()) {
    return Err(StrCat("gather slice_sizes ", Dims(slice_sizes),
                      " must have one entry per "
                      "dimension of ",
                      S(operand)));
  }
  for (int64_t i = 0; i < operand.rank(); ++i) {
    if (slice_sizes[i] < 0 || slice_sizes[i] > operand.dimensions(i)) {
      return Err(StrCat("gather slice size ", slice_sizes[i], " in dimension ", i,
                        " is out of bounds for ", S(operand)));
    }
    if ((absl::c_linear_search(dn.collapsed_slice_dims, i) ||
         absl::c_linear_search(dn.operand_batching_dims, i)) &&
        slice_sizes[i] > 1) {
      return Err(StrCat("gather collapsed or batching dimension ", i,
                        " must have slice size at most 1, has ", slice_sizes[i]));
    }
  }
  std::vector<int64_t> offset_sizes;
  for (int64_t i = 0; i < operand.rank(); ++i) {
    if (!absl::c_linear_search(dn.collapsed_slice_dims, i) &&
        !absl::c_linear_search(dn.operand_batching_dims, i)) {
      offset_sizes.push_back(slice_sizes[i]);
    }
  }
  if (offset_sizes.size() != dn.offset_dims.size()) {
    return Err(StrCat("gather has ", dn.offset_dims.size(), " offset_dims but ",
                      offset_sizes.size(), " slice dimensions are neither collapsed nor batching"));
  }
  std::vector<int64_t> dims;
  size_t next_offset = 0;
  int64_t next_batch = 0;
  for (int64_t i = 0; i < out_rank; ++i) {
    if (absl::c_linear_search(dn.offset_dims, i)) {
      dims.push_back(offset_sizes[next_offset++]);
    } else {
      if (next_batch == dn.index_vector_dim) ++next_batch;
      dims.push_back(idx[next_batch++]);
    }
  }
  return Shape(operand.element_type(), dims);
}

absl::StatusOr<Shape> InferScatterShape(std::span<const Shape> operands,
                                        const Shape& scatter_indices,
                                        std::span<const Shape> updates,
                                        const ScatterDimensionNumbers& dn,
                                        const Computation* to_apply) {
  if (operands.empty() || operands.size() != updates.size()) {
    return Err(StrCat("scatter needs N operands and N updates, got ", operands.size(), " and ",
                      updates.size()));
  }
  const Shape& operand = operands[0];
  for (const Shape& op : operands) {
    HLOGYM_RETURN_IF_ERROR(ExpectArray(op, "scatter operand"));
    if (op.dimensions() != operand.dimensions()) {
      return Err(StrCat("scatter operands have different dimensions: ", S(operand), " vs ", S(op)));
    }
  }
  HLOGYM_ASSIGN(expanded_or,
                ExpandedIndices(scatter_indices, dn.index_vector_dim, "scatter indices"));
  const std::vector<int64_t>& idx = expanded_or;
  const int64_t idx_rank = static_cast<int64_t>(idx.size());
  HLOGYM_RETURN_IF_ERROR(CheckSorted(dn.update_window_dims, "scatter update_window_dims"));
  HLOGYM_RETURN_IF_ERROR(CheckSorted(dn.inserted_window_dims, "scatter inserted_window_dims"));
  HLOGYM_RETURN_IF_ERROR(
      CheckDimList(dn.inserted_window_dims, operand.rank(), "scatter inserted_window_dims"));
  HLOGYM_RETURN_IF_ERROR(CheckSorted(dn.input_batching_dims, "scatter input_batching_dims"));
  HLOGYM_RETURN_IF_ERROR(
      CheckDimList(dn.input_batching_dims, operand.rank(), "scatter input_batching_dims"));
  HLOGYM_RETURN_IF_ERROR(CheckDimList(dn.scatter_dims_to_operand_dims, operand.rank(),
                                      "scatter scatter_dims_to_operand_dims"));
  HLOGYM_RETURN_IF_ERROR(CheckDimList(dn.scatter_indices_batching_dims, idx_rank,
                                      "scatter scatter_indices_batching_dims"));
  if (absl::c_linear_search(dn.scatter_indices_batching_dims, dn.index_vector_dim)) {
    return Err("scatter scatter_indices_batching_dims must not contain index_vector_dim");
  }
  for (int64_t d : dn.inserted_window_dims) {
    if (absl::c_linear_search(dn.input_batching_dims, d)) {
      return Err(StrCat("scatter dimension ", d, " is both inserted and a batching dimension"));
    }
  }
  if (static_cast<int64_t>(dn.scatter_dims_to_operand_dims.size()) != idx[dn.index_vector_dim]) {
    return Err(StrCat("scatter scatter_dims_to_operand_dims has ",
                      dn.scatter_dims_to_operand_dims.size(), " entries but the index vector of ",
                      S(scatter_indices), " has ", idx[dn.index_vector_dim]));
  }
  if (dn.input_batching_dims.size() != dn.scatter_indices_batching_dims.size()) {
    return Err("scatter input_batching_dims and scatter_indices_batching_dims differ in length");
  }
  for (size_t i = 0; i < dn.input_batching_dims.size(); ++i) {
    if (operand.dimensions(dn.input_batching_dims[i]) != idx[dn.scatter_indices_batching_dims[i]]) {
      return Err(StrCat("scatter batching dimension sizes differ: operand ", S(operand),
                        " dimension ", dn.input_batching_dims[i], " vs indices ",
                        S(scatter_indices), " dimension ", dn.scatter_indices_batching_dims[i]));
    }
  }
  const int64_t window_rank = static_cast<int64_t>(dn.update_window_dims.size());
  if (window_rank + static_cast<int64_t>(dn.inserted_window_dims.size()) +
          static_cast<int64_t>(dn.input_batching_dims.size()) !=
      operand.rank()) {
    return Err(StrCat("scatter update_window_dims (", window_rank, ") + inserted_window_dims (",
                      dn.inserted_window_dims.size(), ") + input_batching_dims (",
                      dn.input_batching_dims.size(), ") must equal the operand rank of ",
                      S(operand)));
  }
  std::vector<int64_t> window_bounds;
  for (int64_t i = 0; i < operand.rank(); ++i) {
    if (!absl::c_linear_search(dn.inserted_window_dims, i) &&
        !absl::c_linear_search(dn.input_batching_dims, i)) {
      window_bounds.push_back(operand.dimensions(i));
    }
  }
  std::vector<PrimitiveType> input_types;
  for (size_t u = 0; u < updates.size(); ++u) {
    const Shape& upd = updates[u];
    HLOGYM_RETURN_IF_ERROR(ExpectArray(upd, "scatter updates"));
    const int64_t expected_rank = window_rank + idx_rank - 1;
    if (upd.rank() != expected_rank) {
      return Err(StrCat("scatter updates ", S(upd), " must have rank ", expected_rank,
                        " (update_window_dims plus scatter dimensions of ", S(scatter_indices),
                        ")"));
    }
    HLOGYM_RETURN_IF_ERROR(
        CheckDimList(dn.update_window_dims, upd.rank(), "scatter update_window_dims"));
    size_t w = 0;
    int64_t next_scatter = 0;
    for (int64_t d = 0; d < upd.rank(); ++d) {
      if (absl::c_linear_search(dn.update_window_dims, d)) {
        if (upd.dimensions(d) > window_bounds[w]) {
          return Err(StrCat("scatter updates ", S(upd), " window dimension ", d,
                            " is larger than the operand ", S(operand)));
        }
        ++w;
      } else {
        if (next_scatter == dn.index_vector_dim) ++next_scatter;
        if (upd.dimensions(d) != idx[next_scatter]) {
          return Err(StrCat("scatter updates ", S(upd), " scatter dimension ", d,
                            " does not match the indices ", S(scatter_indices)));
        }
        ++next_scatter;
      }
    }
    if (!SameTypeIgnoringFp(upd.element_type(), operands[u].element_type())) {
      return Err(StrCat("scatter updates ", S(upd), " and operand ", S(operands[u]),
                        " have different element types"));
    }
    input_types.push_back(upd.element_type());
  }
  std::vector<Shape> inits;
  for (const Shape& op : operands) inits.push_back(Shape::Scalar(op.element_type()));
  HLOGYM_ASSIGN(acc, CheckReducer(to_apply, inits, input_types));
  std::vector<Shape> results;
  for (const Shape& op : operands) results.push_back(Shape(op.element_type(), op.dimensions()));
  return MakeTupleOrSingle(std::move(results));
}

absl::StatusOr<Shape> InferReduceShape(std::span<const Shape> inputs, std::span<const Shape> inits,
                                       std::span<const int64_t> dimensions,
                                       const Computation* to_apply) {
  if (inputs.empty() || inputs.size() != inits.size()) {
    return Err(StrCat("reduce needs N inputs and N init values, got ", inputs.size() + inits.size(),
                      " operands"));
  }
  std::vector<PrimitiveType> types;
  for (const Shape& in : inputs) {
    HLOGYM_RETURN_IF_ERROR(ExpectArray(in, "reduce input"));
    if (in.dimensions() != inputs[0].dimensions()) {
      return Err(StrCat("reduce inputs have different dimensions: ", S(inputs[0]), " vs ", S(in)));
    }
    types.push_back(in.element_type());
  }
  HLOGYM_RETURN_IF_ERROR(CheckDimList(dimensions, inputs[0].rank(), "reduce dimensions"));
  HLOGYM_ASSIGN(acc, CheckReducer(to_apply, inits, types));
  std::vector<int64_t> dims;
  for (int64_t d = 0; d < inputs[0].rank(); ++d) {
    if (!absl::c_linear_search(dimensions, d)) dims.push_back(inputs[0].dimensions(d));
  }
  std::vector<Shape> results;
  for (PrimitiveType t : acc) results.push_back(Shape(t, dims));
  return MakeTupleOrSingle(std::move(results));
}

absl::StatusOr<Shape> InferReduceWindowShape(std::span<const Shape> inputs,
                                             std::span<const Shape> inits, const Window& window,
                                             const Computation* to_apply) {
  if (inputs.empty() || inputs.size() != inits.size()) {
    return Err(StrCat("reduce-window needs N inputs and N init values, got ",
                      inputs.size() + inits.size(), " operands"));
  }
  std::vector<PrimitiveType> types;
  for (const Shape& in : inputs) {
    HLOGYM_RETURN_IF_ERROR(ExpectArray(in, "reduce-window input"));
    if (in.dimensions() != inputs[0].dimensions()) {
      return Err(
          StrCat("reduce-window inputs have different dimensions: ", S(inputs[0]), " vs ", S(in)));
    }
    types.push_back(in.element_type());
  }
  HLOGYM_ASSIGN(out, InferWindowOutputDims(inputs[0].dimensions(), window));
  HLOGYM_ASSIGN(acc, CheckReducer(to_apply, inits, types));
  std::vector<Shape> results;
  for (PrimitiveType t : acc) {
    Shape result(t, out);
    // As XLA's: a dynamic input dimension gives a dynamic output dimension.
    for (int64_t d = 0; d < inputs[0].rank(); ++d) {
      if (inputs[0].is_dynamic_dimension(d)) result.set_dynamic_dimension(d, true);
    }
    results.push_back(std::move(result));
  }
  return MakeTupleOrSingle(std::move(results));
}

namespace {

std::vector<Shape> OperandShapes(const Instruction& inst, int64_t begin = 0, int64_t end = -1) {
  std::vector<Shape> out;
  if (end < 0) end = inst.operand_count();
  for (int64_t i = begin; i < end && i < inst.operand_count(); ++i) {
    out.push_back(inst.operand(i)->shape());
  }
  return out;
}

const Computation* Called(const Instruction& inst, size_t i) {
  const auto& called = inst.called_computations();
  return i < called.size() ? called[i] : nullptr;
}

absl::Status NeedOperands(const Instruction& inst, int64_t n, bool at_least = false) {
  if (at_least ? inst.operand_count() < n : inst.operand_count() != n) {
    return Err(StrCat(OpcodeName(inst.opcode()), " expects ", at_least ? "at least " : "", n,
                      " operands, has ", inst.operand_count()));
  }
  return absl::OkStatus();
}

absl::Status NeedCalled(const Instruction& inst, size_t n) {
  if (inst.called_computations().size() != n) {
    return Err(StrCat(OpcodeName(inst.opcode()), " expects ", n, " called computations, has ",
                      inst.called_computations().size()));
  }
  for (const Computation* c : inst.called_computations()) {
    if (c == nullptr) return Err("null called computation");
  }
  return absl::OkStatus();
}

absl::StatusOr<std::optional<Shape>> Wrap(absl::StatusOr<Shape> s) {
  if (!s.ok()) return s.status();
  return std::optional<Shape>(std::move(*s));
}

// Checks a computation of N scalar parameters with the given element types
// that returns a scalar of `result` type (nullopt: any scalar type).
absl::Status CheckScalarComputation(const Computation* comp, std::span<const PrimitiveType> params,
                                    std::optional<PrimitiveType> result, std::string_view what) {
  if (comp == nullptr) return Err(StrCat("missing ", what));
  std::vector<const Shape*> ps = ParamShapes(*comp);
  const std::string cname = StrCat(what, " ", comp->name());
  if (ps.size() != params.size()) {
    return Err(StrCat(cname, " must take ", params.size(), " parameters, takes ", ps.size()));
  }
  for (size_t i = 0; i < ps.size(); ++i) {
    if (ps[i] == nullptr || !ps[i]->IsScalar() || ps[i]->element_type() != params[i]) {
      return Err(StrCat(cname, " parameter ", i, " must be ", TypeName(params[i]), "[], is ",
                        ps[i] ? S(*ps[i]) : "missing"));
    }
  }
  const Shape* root = RootShape(comp);
  if (root == nullptr) return Err(StrCat(cname, " has no root"));
  if (!root->IsScalar() || (result.has_value() && root->element_type() != *result)) {
    return Err(StrCat(cname, " must return ",
                      result.has_value() ? TypeName(*result) + "[]" : "a scalar", ", returns ",
                      S(*root)));
  }
  return absl::OkStatus();
}

bool AnyUnbounded(const Instruction& inst) {
  if (HasUnbounded(inst.shape())) return true;
  for (const Instruction* op : inst.operands()) {
    if (op != nullptr && HasUnbounded(op->shape())) return true;
  }
  return false;
}

// The shapes of the instructions whose rules take more than a few lines, by
// opcode (InferShape dispatches here). nullopt: the rule checks the operands
// and leaves the result shape free.

// Every operand of `inst` an array with the first one's dimensions (`what`
// names the instruction in the errors).
absl::Status ExpectArraysOfOneShape(const Instruction& inst, std::string_view what) {
  const Shape& first = inst.operand(0)->shape();
  for (const Instruction* operand : inst.operands()) {
    const Shape& shape = operand->shape();
    HLOGYM_RETURN_IF_ERROR(ExpectArray(shape, StrCat(what, " operand")));
    if (shape.dimensions() != first.dimensions()) {
      return Err(StrCat(what, " operands have different dimensions: ", S(first), " vs ", S(shape)));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<std::optional<Shape>> ShapeOfSelectAndScatter(const Instruction& inst) {
  const InstructionAttributes& a = inst.attrs();
  auto op = [&](int64_t i) -> const Shape& { return inst.operand(i)->shape(); };
  HLOGYM_RETURN_IF_ERROR(NeedOperands(inst, 3));
  HLOGYM_RETURN_IF_ERROR(NeedCalled(inst, 2));
  HLOGYM_RETURN_IF_ERROR(ExpectArray(op(0), "select-and-scatter operand"));
  HLOGYM_RETURN_IF_ERROR(ExpectArray(op(1), "select-and-scatter source"));
  const PrimitiveType t = op(0).element_type();
  const PrimitiveType sel_params[] = {t, t};
  HLOGYM_RETURN_IF_ERROR(CheckScalarComputation(Called(inst, 0), sel_params, PrimitiveType::kPred,
                                                "select computation"));
  const Shape init_shapes[] = {op(2)};
  const PrimitiveType src_types[] = {op(1).element_type()};
  HLOGYM_ASSIGN(acc, CheckReducer(Called(inst, 1), init_shapes, src_types));
  HLOGYM_ASSIGN(out, InferWindowOutputDims(op(0).dimensions(), a.window.value_or(Window{})));
  if (out != op(1).dimensions()) {
    return Err(StrCat("select-and-scatter source ", S(op(1)),
                      " does not match the window "
                      "output dimensions ",
                      Dims(out), " of operand ", S(op(0))));
  }
  return std::optional<Shape>(Shape(t, op(0).dimensions()));
}

absl::StatusOr<std::optional<Shape>> ShapeOfSort(const Instruction& inst) {
  const InstructionAttributes& a = inst.attrs();
  auto op = [&](int64_t i) -> const Shape& { return inst.operand(i)->shape(); };
  HLOGYM_RETURN_IF_ERROR(NeedOperands(inst, 1, /*at_least=*/true));
  HLOGYM_RETURN_IF_ERROR(NeedCalled(inst, 1));
  std::vector<PrimitiveType> params;
  HLOGYM_RETURN_IF_ERROR(ExpectArraysOfOneShape(inst, "sort"));
  for (int64_t i = 0; i < inst.operand_count(); ++i) {
    params.push_back(op(i).element_type());
    params.push_back(op(i).element_type());
  }
  if (a.dimensions.size() != 1 || a.dimensions[0] < 0 || a.dimensions[0] >= op(0).rank()) {
    return Err(StrCat("sort dimension ", Dims(a.dimensions), " out of range for ", S(op(0))));
  }
  HLOGYM_RETURN_IF_ERROR(
      CheckScalarComputation(Called(inst, 0), params, PrimitiveType::kPred, "sort comparator"));
  std::vector<Shape> results;
  for (int64_t i = 0; i < inst.operand_count(); ++i) {
    results.push_back(Shape(op(i).element_type(), op(i).dimensions()));
  }
  return std::optional<Shape>(MakeTupleOrSingle(std::move(results)));
}

absl::StatusOr<std::optional<Shape>> ShapeOfMap(const Instruction& inst) {
  const InstructionAttributes& a = inst.attrs();
  auto op = [&](int64_t i) -> const Shape& { return inst.operand(i)->shape(); };
  HLOGYM_RETURN_IF_ERROR(NeedOperands(inst, 1, /*at_least=*/true));
  HLOGYM_RETURN_IF_ERROR(NeedCalled(inst, 1));
  std::vector<PrimitiveType> params;
  HLOGYM_RETURN_IF_ERROR(ExpectArraysOfOneShape(inst, "map"));
  for (int64_t i = 0; i < inst.operand_count(); ++i) {
    params.push_back(op(i).element_type());
  }
  if (a.has_dimensions) {
    bool identity = static_cast<int64_t>(a.dimensions.size()) == op(0).rank();
    for (size_t i = 0; identity && i < a.dimensions.size(); ++i) {
      identity = a.dimensions[i] == static_cast<int64_t>(i);
    }
    if (!identity) {
      return Err(StrCat("map dimensions ", Dims(a.dimensions),
                        " must be all dimensions in "
                        "order for ",
                        S(op(0))));
    }
  }
  HLOGYM_RETURN_IF_ERROR(
      CheckScalarComputation(Called(inst, 0), params, std::nullopt, "map computation"));
  return std::optional<Shape>(
      Shape(RootShape(Called(inst, 0))->element_type(), op(0).dimensions()));
}

absl::StatusOr<std::optional<Shape>> ShapeOfConditional(const Instruction& inst) {
  const Shape& shape = inst.shape();
  auto op = [&](int64_t i) -> const Shape& { return inst.operand(i)->shape(); };
  HLOGYM_RETURN_IF_ERROR(NeedOperands(inst, 1, /*at_least=*/true));
  const Shape& sel = op(0);
  const size_t branches = inst.called_computations().size();
  if (!sel.IsScalar() ||
      (sel.element_type() != PrimitiveType::kPred && sel.element_type() != PrimitiveType::kS32)) {
    return Err(StrCat("conditional selector must be pred[] or s32[], is ", S(sel)));
  }
  if (sel.element_type() == PrimitiveType::kPred && branches != 2) {
    return Err(StrCat("conditional with a pred selector needs 2 branches, has ", branches));
  }
  if (branches < 1) return Err("conditional needs at least one branch");
  if (static_cast<int64_t>(branches) != inst.operand_count() - 1) {
    return Err(StrCat("conditional has ", branches, " branches but ", inst.operand_count() - 1,
                      " branch operands"));
  }
  for (size_t b = 0; b < branches; ++b) {
    const Shape* args[] = {&op(b + 1)};
    HLOGYM_RETURN_IF_ERROR(
        CheckSignature(Called(inst, b), args, &shape, StrCat("conditional branch ", b)));
  }
  return std::optional<Shape>(shape);
}

absl::StatusOr<std::optional<Shape>> ShapeOfAllGatherOrReduceScatter(const Instruction& inst) {
  const Opcode opcode = inst.opcode();
  const InstructionAttributes& a = inst.attrs();
  const Shape& shape = inst.shape();
  auto op = [&](int64_t i) -> const Shape& { return inst.operand(i)->shape(); };
  HLOGYM_RETURN_IF_ERROR(NeedOperands(inst, 1, /*at_least=*/true));
  if (a.dimensions.size() != 1) {
    return Err(StrCat(OpcodeName(opcode), " needs one dimension, has ", Dims(a.dimensions)));
  }
  const int64_t dim = a.dimensions[0];
  std::vector<Shape> outs;
  if (shape.IsTuple()) {
    outs = shape.tuple_shapes();
  } else {
    outs.push_back(shape);
  }
  if (static_cast<int64_t>(outs.size()) != inst.operand_count()) {
    return Err(StrCat(OpcodeName(opcode), " has ", inst.operand_count(),
                      " operands but the result has ", outs.size(), " elements"));
  }
  for (int64_t i = 0; i < inst.operand_count(); ++i) {
    const Shape& in = op(i);
    const Shape& out = outs[i];
    HLOGYM_RETURN_IF_ERROR(ExpectArray(in, StrCat(OpcodeName(opcode), " operand")));
    HLOGYM_RETURN_IF_ERROR(ExpectArray(out, StrCat(OpcodeName(opcode), " result")));
    if (dim < 0 || dim >= in.rank() || in.rank() != out.rank() ||
        in.element_type() != out.element_type()) {
      return Err(StrCat(OpcodeName(opcode), " operand ", S(in), " and result ", S(out),
                        " are inconsistent for dimension ", dim));
    }
    for (int64_t d = 0; d < in.rank(); ++d) {
      const int64_t small = opcode == Opcode::kAllGather ? in.dimensions(d) : out.dimensions(d);
      const int64_t big = opcode == Opcode::kAllGather ? out.dimensions(d) : in.dimensions(d);
      const bool ok = d == dim ? (small == 0 ? big == 0 : big % small == 0) : small == big;
      if (!ok) {
        return Err(StrCat(OpcodeName(opcode), " operand ", S(in), " and result ", S(out),
                          " differ in dimension ", d));
      }
    }
  }
  return std::nullopt;
}

absl::StatusOr<std::optional<Shape>> ShapeOfBatchNorm(const Instruction& inst) {
  const Opcode opcode = inst.opcode();
  const InstructionAttributes& a = inst.attrs();
  auto op = [&](int64_t i) -> const Shape& { return inst.operand(i)->shape(); };
  const int64_t n = opcode == Opcode::kBatchNormTraining ? 3 : 5;
  HLOGYM_RETURN_IF_ERROR(NeedOperands(inst, n));
  const Shape& x = op(0);
  HLOGYM_RETURN_IF_ERROR(ExpectArray(x, "batch-norm operand"));
  if (!IsFloatingPointType(x.element_type())) {
    return Err(StrCat("batch-norm operand must be floating-point, is ", S(x)));
  }
  if (a.feature_index < 0 || a.feature_index >= x.rank()) {
    return Err(StrCat("batch-norm feature_index ", a.feature_index, " out of range for ", S(x)));
  }
  const Shape feature(x.element_type(), {x.dimensions(a.feature_index)});
  for (int64_t i = 1; i < n; ++i) {
    const bool full = opcode == Opcode::kBatchNormGrad && i == 4;
    const Shape& expected = full ? x : feature;
    if (!op(i).Equal(Shape(expected.element_type(), expected.dimensions()),
                     {.dynamic = false, .layouts = Shape::Layouts::kIgnore})) {
      return Err(StrCat("batch-norm operand ", i, " must be ", S(expected), ", is ", S(op(i))));
    }
  }
  if (opcode == Opcode::kBatchNormInference) {
    return std::optional<Shape>(Shape(x.element_type(), x.dimensions()));
  }
  return std::optional<Shape>(
      Shape::Tuple({Shape(x.element_type(), x.dimensions()), feature, feature}));
}

absl::StatusOr<std::optional<Shape>> ShapeOfTriangularSolve(const Instruction& inst) {
  const InstructionAttributes& a = inst.attrs();
  auto op = [&](int64_t i) -> const Shape& { return inst.operand(i)->shape(); };
  HLOGYM_RETURN_IF_ERROR(NeedOperands(inst, 2));
  const Shape& am = op(0);
  const Shape& b = op(1);
  HLOGYM_RETURN_IF_ERROR(ExpectArray(am, "triangular-solve a"));
  HLOGYM_RETURN_IF_ERROR(ExpectArray(b, "triangular-solve b"));
  if (am.element_type() != b.element_type() || !IsFloatOrComplex(am.element_type())) {
    return Err(StrCat("triangular-solve operands must share a floating-point type: ", S(am), " vs ",
                      S(b)));
  }
  const int64_t r = am.rank();
  if (r < 2 || b.rank() != r || am.dimensions(r - 1) != am.dimensions(r - 2)) {
    return Err(StrCat("triangular-solve needs a square a and b of the same rank >= 2: ", S(am),
                      " vs ", S(b)));
  }
  for (int64_t d = 0; d < r - 2; ++d) {
    if (am.dimensions(d) != b.dimensions(d)) {
      return Err(StrCat("triangular-solve batch dimensions differ: ", S(am), " vs ", S(b)));
    }
  }
  const int64_t bdim = b.dimensions(a.left_side ? r - 2 : r - 1);
  if (bdim != am.dimensions(r - 1)) {
    return Err(StrCat("triangular-solve a ", S(am), " does not match b ", S(b),
                      a.left_side ? " (left side)" : " (right side)"));
  }
  return std::optional<Shape>(Shape(b.element_type(), b.dimensions()));
}

absl::StatusOr<std::optional<Shape>> ShapeOfFft(const Instruction& inst) {
  const InstructionAttributes& a = inst.attrs();
  auto op = [&](int64_t i) -> const Shape& { return inst.operand(i)->shape(); };
  HLOGYM_RETURN_IF_ERROR(NeedOperands(inst, 1));
  const Shape& x = op(0);
  HLOGYM_RETURN_IF_ERROR(ExpectArray(x, "fft operand"));
  const auto& len = a.fft_length;
  const int64_t n = static_cast<int64_t>(len.size());
  if (n < 1 || n > 3 || x.rank() < n) {
    return Err(StrCat("fft_length ", Dims(len),
                      " must have 1 to 3 entries and at most the "
                      "rank of ",
                      S(x)));
  }
  std::vector<int64_t> dims = x.dimensions();
  const int64_t off = x.rank() - n;
  switch (a.fft_type) {
    case FftType::kFft:
    case FftType::kIfft:
      if (!IsComplexType(x.element_type())) {
        return Err(StrCat("FFT/IFFT need a complex operand, got ", S(x)));
      }
      return std::optional<Shape>(Shape(x.element_type(), dims));
    case FftType::kRfft: {
      if (x.element_type() != PrimitiveType::kF32 && x.element_type() != PrimitiveType::kF64) {
        return Err(StrCat("RFFT needs an f32 or f64 operand, got ", S(x)));
      }
      for (int64_t i = 0; i < n; ++i) {
        if (dims[off + i] != len[i]) {
          return Err(StrCat("RFFT operand ", S(x), " does not end in fft_length ", Dims(len)));
        }
      }
      dims.back() = len.back() == 0 ? 0 : len.back() / 2 + 1;
      return std::optional<Shape>(Shape(
          x.element_type() == PrimitiveType::kF32 ? PrimitiveType::kC64 : PrimitiveType::kC128,
          dims));
    }
    case FftType::kIrfft: {
      if (!IsComplexType(x.element_type())) {
        return Err(StrCat("IRFFT needs a complex operand, got ", S(x)));
      }
      for (int64_t i = 0; i + 1 < n; ++i) {
        if (dims[off + i] != len[i]) {
          return Err(StrCat("IRFFT operand ", S(x), " does not match fft_length ", Dims(len)));
        }
      }
      const int64_t expect_last = len.back() == 0 ? 0 : len.back() / 2 + 1;
      if (dims.back() != expect_last) {
        return Err(StrCat("IRFFT operand ", S(x), " last dimension must be ", expect_last,
                          " for fft_length ", Dims(len)));
      }
      dims.back() = len.back();
      return std::optional<Shape>(
          Shape(x.element_type() == PrimitiveType::kC64 ? PrimitiveType::kF32 : PrimitiveType::kF64,
                dims));
    }
  }
  return std::nullopt;
}

absl::StatusOr<std::optional<Shape>> ShapeOfGetTupleElement(const Instruction& inst) {
  const InstructionAttributes& a = inst.attrs();
  auto op = [&](int64_t i) -> const Shape& { return inst.operand(i)->shape(); };
  HLOGYM_RETURN_IF_ERROR(NeedOperands(inst, 1));
  if (!op(0).IsTuple()) {
    return Err(StrCat("get-tuple-element operand must be a tuple, is ", S(op(0))));
  }
  if (a.tuple_index < 0 || a.tuple_index >= op(0).tuple_shapes_size()) {
    return Err(StrCat("get-tuple-element index ", a.tuple_index, " out of range for ", S(op(0))));
  }
  return std::optional<Shape>(op(0).tuple_shapes(a.tuple_index));
}

absl::StatusOr<std::optional<Shape>> ShapeOfDot(const Instruction& inst) {
  const InstructionAttributes& a = inst.attrs();
  const Shape& shape = inst.shape();
  auto op = [&](int64_t i) -> const Shape& { return inst.operand(i)->shape(); };
  HLOGYM_RETURN_IF_ERROR(NeedOperands(inst, 2, /*at_least=*/true));
  if (inst.operand_count() > 2) return std::nullopt;  // sparse dot with metadata
  DotDimensionNumbers dn;
  if (a.dot_dimension_numbers.has_value()) dn = *a.dot_dimension_numbers;
  if (!a.operand_precision.empty() && a.operand_precision.size() != 2) {
    return Err(
        StrCat("dot operand_precision must have 2 entries, has ", a.operand_precision.size()));
  }
  return Wrap(InferDotShape(op(0), op(1), dn, shape.element_type()));
}

absl::StatusOr<std::optional<Shape>> ShapeOfConvolution(const Instruction& inst) {
  const InstructionAttributes& a = inst.attrs();
  const Shape& shape = inst.shape();
  auto op = [&](int64_t i) -> const Shape& { return inst.operand(i)->shape(); };
  HLOGYM_RETURN_IF_ERROR(NeedOperands(inst, 2));
  if (!a.convolution_dimension_numbers.has_value()) {
    return Err("convolution has no dim_labels");
  }
  Window window = a.window.value_or(Window{});
  return Wrap(InferConvolutionShape(op(0), op(1), *a.convolution_dimension_numbers, window,
                                    a.feature_group_count, a.batch_group_count,
                                    shape.element_type()));
}

absl::StatusOr<std::optional<Shape>> ShapeOfReduce(const Instruction& inst) {
  const InstructionAttributes& a = inst.attrs();
  if (inst.operand_count() < 2 || inst.operand_count() % 2 != 0) {
    return Err(
        StrCat("reduce needs an even number (>= 2) of operands, has ", inst.operand_count()));
  }
  HLOGYM_RETURN_IF_ERROR(NeedCalled(inst, 1));
  const int64_t n = inst.operand_count() / 2;
  std::vector<Shape> ins = OperandShapes(inst, 0, n), inits = OperandShapes(inst, n);
  return Wrap(InferReduceShape(ins, inits, a.dimensions, Called(inst, 0)));
}

absl::StatusOr<std::optional<Shape>> ShapeOfReduceWindow(const Instruction& inst) {
  const InstructionAttributes& a = inst.attrs();
  if (inst.operand_count() < 2 || inst.operand_count() % 2 != 0) {
    return Err(StrCat("reduce-window needs an even number (>= 2) of operands, has ",
                      inst.operand_count()));
  }
  HLOGYM_RETURN_IF_ERROR(NeedCalled(inst, 1));
  const int64_t n = inst.operand_count() / 2;
  std::vector<Shape> ins = OperandShapes(inst, 0, n), inits = OperandShapes(inst, n);
  Window window = a.window.value_or(Window{});
  return Wrap(InferReduceWindowShape(ins, inits, window, Called(inst, 0)));
}

absl::StatusOr<std::optional<Shape>> ShapeOfScatter(const Instruction& inst) {
  const InstructionAttributes& a = inst.attrs();
  auto op = [&](int64_t i) -> const Shape& { return inst.operand(i)->shape(); };
  if (inst.operand_count() < 3 || inst.operand_count() % 2 != 1) {
    return Err(StrCat("scatter needs 2N+1 operands, has ", inst.operand_count()));
  }
  HLOGYM_RETURN_IF_ERROR(NeedCalled(inst, 1));
  if (!a.scatter_dimension_numbers.has_value()) {
    return Err("scatter has no dimension numbers");
  }
  const int64_t n = (inst.operand_count() - 1) / 2;
  std::vector<Shape> ops = OperandShapes(inst, 0, n), upd = OperandShapes(inst, n + 1);
  return Wrap(InferScatterShape(ops, op(n), upd, *a.scatter_dimension_numbers, Called(inst, 0)));
}

absl::StatusOr<std::optional<Shape>> ShapeOfBitcast(const Instruction& inst) {
  const Shape& shape = inst.shape();
  auto op = [&](int64_t i) -> const Shape& { return inst.operand(i)->shape(); };
  HLOGYM_RETURN_IF_ERROR(NeedOperands(inst, 1));
  const Shape& in = op(0);
  if (in.IsArray() && shape.IsArray() && in.is_static() && shape.is_static()) {
    const __int128 in_bits = static_cast<__int128>(in.ElementCount()) * BitWidth(in.element_type());
    const __int128 out_bits =
        static_cast<__int128>(shape.ElementCount()) * BitWidth(shape.element_type());
    if (in_bits != out_bits) {
      return Err(StrCat("bitcast changes the data size: ", S(in), " to ", S(shape)));
    }
  }
  return std::nullopt;
}

absl::StatusOr<std::optional<Shape>> ShapeOfRng(const Instruction& inst) {
  const InstructionAttributes& a = inst.attrs();
  const Shape& shape = inst.shape();
  auto op = [&](int64_t i) -> const Shape& { return inst.operand(i)->shape(); };
  HLOGYM_RETURN_IF_ERROR(NeedOperands(inst, 2));
  HLOGYM_RETURN_IF_ERROR(ExpectArray(shape, "rng result"));
  for (int64_t i = 0; i < 2; ++i) {
    if (!op(i).IsScalar() || op(i).element_type() != shape.element_type()) {
      return Err(StrCat("rng parameter ", i, " must be a scalar of the result type ",
                        TypeName(shape.element_type()), ", is ", S(op(i))));
    }
  }
  if (a.rng_distribution == RandomDistribution::kNormal &&
      !IsFloatingPointType(shape.element_type())) {
    return Err(StrCat("rng_normal needs a floating-point type, result is ", S(shape)));
  }
  return std::nullopt;
}

absl::StatusOr<std::optional<Shape>> ShapeOfRngBitGenerator(const Instruction& inst) {
  const Shape& shape = inst.shape();
  auto op = [&](int64_t i) -> const Shape& { return inst.operand(i)->shape(); };
  HLOGYM_RETURN_IF_ERROR(NeedOperands(inst, 1));
  if (!shape.IsTuple() || shape.tuple_shapes_size() != 2) {
    return Err(StrCat("rng-bit-generator result must be a (state, bits) tuple, is ", S(shape)));
  }
  if (!shape.tuple_shapes(0).Equal(op(0), {.dynamic = false, .layouts = Shape::Layouts::kIgnore})) {
    return Err(StrCat("rng-bit-generator state output ", S(shape.tuple_shapes(0)),
                      " differs from the state operand ", S(op(0))));
  }
  const Shape& bits = shape.tuple_shapes(1);
  if (!bits.IsArray() || !IsIntegralType(bits.element_type())) {
    return Err(StrCat("rng-bit-generator output must be an integral array, is ", S(bits)));
  }
  return std::nullopt;
}

absl::StatusOr<std::optional<Shape>> ShapeOfCholesky(const Instruction& inst) {
  auto op = [&](int64_t i) -> const Shape& { return inst.operand(i)->shape(); };
  HLOGYM_RETURN_IF_ERROR(NeedOperands(inst, 1));
  const Shape& x = op(0);
  HLOGYM_RETURN_IF_ERROR(ExpectArray(x, "cholesky operand"));
  if (!IsFloatOrComplex(x.element_type()) || x.rank() < 2 ||
      x.dimensions(x.rank() - 1) != x.dimensions(x.rank() - 2)) {
    return Err(StrCat("cholesky needs floating-point square matrices (rank >= 2), got ", S(x)));
  }
  return std::optional<Shape>(Shape(x.element_type(), x.dimensions()));
}

absl::StatusOr<std::optional<Shape>> ShapeOfTopK(const Instruction& inst) {
  const InstructionAttributes& a = inst.attrs();
  auto op = [&](int64_t i) -> const Shape& { return inst.operand(i)->shape(); };
  HLOGYM_RETURN_IF_ERROR(NeedOperands(inst, 1));
  const Shape& x = op(0);
  HLOGYM_RETURN_IF_ERROR(ExpectArray(x, "topk operand"));
  if (x.rank() < 1 || a.k < 0 || a.k > x.dimensions(x.rank() - 1)) {
    return Err(StrCat("topk k=", a.k, " out of range for ", S(x)));
  }
  std::vector<int64_t> dims = x.dimensions();
  dims.back() = a.k;
  return std::optional<Shape>(
      Shape::Tuple({Shape(x.element_type(), dims), Shape(PrimitiveType::kS32, dims)}));
}

absl::StatusOr<std::optional<Shape>> ShapeOfConstant(const Instruction& inst) {
  const InstructionAttributes& a = inst.attrs();
  const Shape& shape = inst.shape();
  if (a.literal == nullptr) return std::nullopt;
  if (a.literal->elided()) return std::nullopt;
  if (!a.literal->shape().Equal(shape, {.dynamic = false, .layouts = Shape::Layouts::kIgnore})) {
    return Err(StrCat("constant literal has shape ", S(a.literal->shape()),
                      " but the instruction has shape ", S(shape)));
  }
  return std::nullopt;
}

absl::StatusOr<std::optional<Shape>> ShapeOfSetDimensionSize(const Instruction& inst) {
  const InstructionAttributes& a = inst.attrs();
  auto op = [&](int64_t i) -> const Shape& { return inst.operand(i)->shape(); };
  HLOGYM_RETURN_IF_ERROR(NeedOperands(inst, 2));
  HLOGYM_RETURN_IF_ERROR(ExpectArray(op(0), "set-dimension-size operand"));
  if (a.dimensions.size() != 1 || a.dimensions[0] < 0 || a.dimensions[0] >= op(0).rank()) {
    return Err(StrCat("set-dimension-size dimension ", Dims(a.dimensions), " out of range for ",
                      S(op(0))));
  }
  if (!op(1).IsScalar() || op(1).element_type() != PrimitiveType::kS32) {
    return Err(StrCat("set-dimension-size size must be s32[], is ", S(op(1))));
  }
  return std::optional<Shape>(Shape(op(0).element_type(), op(0).dimensions()));
}

}  // namespace

absl::StatusOr<std::optional<Shape>> InferShape(const Instruction& inst) {
  using R = absl::StatusOr<std::optional<Shape>>;
  const R kFree = std::optional<Shape>();
  for (const Instruction* op : inst.operands()) {
    if (op == nullptr) return Err("null operand");
  }
  if (AnyUnbounded(inst)) return kFree;
  const Opcode opcode = inst.opcode();
  const InstructionAttributes& a = inst.attrs();
  const Shape& shape = inst.shape();
  auto op = [&](int64_t i) -> const Shape& { return inst.operand(i)->shape(); };

  if (opcode == Opcode::kConvert || opcode == Opcode::kBitcastConvert ||
      opcode == Opcode::kReducePrecision || IsElementwiseUnary(opcode)) {
    HLOGYM_RETURN_IF_ERROR(NeedOperands(inst, 1));
    if (opcode == Opcode::kConvert) return Wrap(InferConvertShape(op(0), shape.element_type()));
    if (opcode == Opcode::kBitcastConvert) {
      return Wrap(InferBitcastConvertShape(op(0), shape.element_type()));
    }
    if (opcode == Opcode::kReducePrecision) {
      if (!op(0).IsArray() || !IsFloatingPointType(op(0).element_type())) {
        return Err(StrCat("reduce-precision expects a floating-point operand, got ", S(op(0))));
      }
      if (a.exponent_bits < 1 || a.mantissa_bits < 0) {
        return Err(StrCat("reduce-precision needs exponent_bits >= 1 and mantissa_bits >= 0, got ",
                          a.exponent_bits, " and ", a.mantissa_bits));
      }
      return std::optional<Shape>(Shape(op(0).element_type(), op(0).dimensions()));
    }
    return Wrap(InferUnaryShape(opcode, op(0)));
  }
  if (IsElementwiseBinary(opcode)) {
    HLOGYM_RETURN_IF_ERROR(NeedOperands(inst, 2));
    if (opcode == Opcode::kStochasticConvert) {
      HLOGYM_ASSIGN(s, InferBinaryShape(opcode, op(0), op(1)));
      return std::optional<Shape>(Shape(shape.element_type(), s.dimensions()));
    }
    return Wrap(InferBinaryShape(opcode, op(0), op(1)));
  }

  switch (opcode) {
    case Opcode::kSelect:
      HLOGYM_RETURN_IF_ERROR(NeedOperands(inst, 3));
      return Wrap(InferSelectShape(op(0), op(1), op(2)));
    case Opcode::kClamp:
      HLOGYM_RETURN_IF_ERROR(NeedOperands(inst, 3));
      return Wrap(InferClampShape(op(0), op(1), op(2)));
    case Opcode::kBroadcast:
      HLOGYM_RETURN_IF_ERROR(NeedOperands(inst, 1));
      HLOGYM_RETURN_IF_ERROR(ExpectArray(shape, "broadcast result"));
      return Wrap(InferBroadcastShape(op(0), shape.dimensions(), a.dimensions));
    case Opcode::kReshape:
      HLOGYM_RETURN_IF_ERROR(NeedOperands(inst, 1));
      HLOGYM_RETURN_IF_ERROR(ExpectArray(shape, "reshape result"));
      if (!shape.is_static()) return kFree;
      return Wrap(InferReshapeShape(op(0), shape.dimensions()));
    case Opcode::kDynamicReshape:
      return kFree;
    case Opcode::kTranspose:
      HLOGYM_RETURN_IF_ERROR(NeedOperands(inst, 1));
      return Wrap(InferTransposeShape(op(0), a.dimensions));
    case Opcode::kReverse:
      HLOGYM_RETURN_IF_ERROR(NeedOperands(inst, 1));
      return Wrap(InferReverseShape(op(0), a.dimensions));
    case Opcode::kSlice:
      HLOGYM_RETURN_IF_ERROR(NeedOperands(inst, 1));
      return Wrap(InferSliceShape(op(0), a.slice));
    case Opcode::kDynamicSlice: {
      HLOGYM_RETURN_IF_ERROR(NeedOperands(inst, 2, /*at_least=*/true));
      std::vector<Shape> idx = OperandShapes(inst, 1);
      return Wrap(InferDynamicSliceShape(op(0), idx, a.dynamic_slice_sizes));
    }
    case Opcode::kDynamicUpdateSlice: {
      HLOGYM_RETURN_IF_ERROR(NeedOperands(inst, 2, /*at_least=*/true));
      std::vector<Shape> idx = OperandShapes(inst, 2);
      return Wrap(InferDynamicUpdateSliceShape(op(0), op(1), idx));
    }
    case Opcode::kConcatenate: {
      HLOGYM_RETURN_IF_ERROR(NeedOperands(inst, 1, /*at_least=*/true));
      if (a.dimensions.size() != 1) {
        return Err(StrCat("concatenate needs exactly one dimension, has ", Dims(a.dimensions)));
      }
      std::vector<Shape> ops = OperandShapes(inst);
      return Wrap(InferConcatenateShape(ops, a.dimensions[0]));
    }
    case Opcode::kPad:
      HLOGYM_RETURN_IF_ERROR(NeedOperands(inst, 2));
      return Wrap(InferPadShape(op(0), op(1), a.padding));
    case Opcode::kIota:
      HLOGYM_RETURN_IF_ERROR(ExpectArray(shape, "iota result"));
      if (shape.rank() == 0) return Err("iota result must have rank >= 1");
      if (a.iota_dimension < 0 || a.iota_dimension >= shape.rank()) {
        return Err(StrCat("iota_dimension ", a.iota_dimension, " out of range for ", S(shape)));
      }
      return kFree;
    case Opcode::kGetTupleElement:
      return ShapeOfGetTupleElement(inst);
    case Opcode::kTuple:
      return std::optional<Shape>(Shape::Tuple(OperandShapes(inst)));
    case Opcode::kDot:
      return ShapeOfDot(inst);
    case Opcode::kConvolution:
      return ShapeOfConvolution(inst);
    case Opcode::kReduce:
      return ShapeOfReduce(inst);
    case Opcode::kReduceWindow:
      return ShapeOfReduceWindow(inst);
    case Opcode::kSelectAndScatter:
      return ShapeOfSelectAndScatter(inst);
    case Opcode::kGather: {
      HLOGYM_RETURN_IF_ERROR(NeedOperands(inst, 2));
      if (!a.gather_dimension_numbers.has_value()) return Err("gather has no dimension numbers");
      return Wrap(
          InferGatherShape(op(0), op(1), *a.gather_dimension_numbers, a.gather_slice_sizes));
    }
    case Opcode::kScatter:
      return ShapeOfScatter(inst);
    case Opcode::kSort:
      return ShapeOfSort(inst);
    case Opcode::kMap:
      return ShapeOfMap(inst);
    case Opcode::kWhile: {
      HLOGYM_RETURN_IF_ERROR(NeedOperands(inst, 1));
      HLOGYM_RETURN_IF_ERROR(NeedCalled(inst, 2));
      const Shape* args[] = {&shape};
      const Shape pred = Shape::Scalar(PrimitiveType::kPred);
      HLOGYM_RETURN_IF_ERROR(CheckSignature(Called(inst, 0), args, &pred, "while condition"));
      HLOGYM_RETURN_IF_ERROR(CheckSignature(Called(inst, 1), args, &shape, "while body"));
      return std::optional<Shape>(op(0));
    }
    case Opcode::kConditional:
      return ShapeOfConditional(inst);
    case Opcode::kCall:
    case Opcode::kFusion:
    case Opcode::kAsyncStart: {
      if (opcode != Opcode::kAsyncStart) HLOGYM_RETURN_IF_ERROR(NeedCalled(inst, 1));
      if (opcode == Opcode::kAsyncStart) return kFree;
      std::vector<const Shape*> args;
      for (const Instruction* o : inst.operands()) args.push_back(&o->shape());
      HLOGYM_RETURN_IF_ERROR(CheckSignature(
          Called(inst, 0), args, &shape, opcode == Opcode::kCall ? "callee" : "fused computation"));
      return std::optional<Shape>(shape);
    }
    case Opcode::kBitcast:
      return ShapeOfBitcast(inst);
    case Opcode::kRng:
      return ShapeOfRng(inst);
    case Opcode::kRngBitGenerator:
      return ShapeOfRngBitGenerator(inst);
    case Opcode::kAllReduce:
    case Opcode::kCollectiveBroadcast:
    case Opcode::kCollectiveReduce: {
      std::vector<Shape> ops = OperandShapes(inst);
      if (ops.empty()) return kFree;
      return std::optional<Shape>(MakeTupleOrSingle(std::move(ops)));
    }
    case Opcode::kAllGather:
    case Opcode::kReduceScatter:
      return ShapeOfAllGatherOrReduceScatter(inst);
    case Opcode::kAllToAll: {
      std::vector<Shape> ops = OperandShapes(inst);
      if (ops.empty()) return kFree;
      return std::optional<Shape>(MakeTupleOrSingle(std::move(ops)));
    }
    case Opcode::kCollectivePermute:
      if (inst.operand_count() == 1) return std::optional<Shape>(op(0));
      return kFree;
    case Opcode::kBatchNormTraining:
    case Opcode::kBatchNormInference:
    case Opcode::kBatchNormGrad:
      return ShapeOfBatchNorm(inst);
    case Opcode::kCholesky:
      return ShapeOfCholesky(inst);
    case Opcode::kTriangularSolve:
      return ShapeOfTriangularSolve(inst);
    case Opcode::kFft:
      return ShapeOfFft(inst);
    case Opcode::kTopK:
      return ShapeOfTopK(inst);
    case Opcode::kConstant:
      return ShapeOfConstant(inst);
    case Opcode::kGetDimensionSize: {
      HLOGYM_RETURN_IF_ERROR(NeedOperands(inst, 1));
      HLOGYM_RETURN_IF_ERROR(ExpectArray(op(0), "get-dimension-size operand"));
      if (a.dimensions.size() != 1 || a.dimensions[0] < 0 || a.dimensions[0] >= op(0).rank()) {
        return Err(StrCat("get-dimension-size dimension ", Dims(a.dimensions), " out of range for ",
                          S(op(0))));
      }
      return std::optional<Shape>(Shape::Scalar(PrimitiveType::kS32));
    }
    case Opcode::kSetDimensionSize:
      return ShapeOfSetDimensionSize(inst);
    case Opcode::kAfterAll:
      for (int64_t i = 0; i < inst.operand_count(); ++i) {
        if (!op(i).IsToken())
          return Err(StrCat("after-all operand ", i, " must be a token, is ", S(op(i))));
      }
      return std::optional<Shape>(Shape::Token());
    case Opcode::kAddDependency:
      HLOGYM_RETURN_IF_ERROR(NeedOperands(inst, 2));
      return std::optional<Shape>(op(0));
    case Opcode::kOptimizationBarrier:
    case Opcode::kDomain:
      HLOGYM_RETURN_IF_ERROR(NeedOperands(inst, 1));
      return std::optional<Shape>(op(0));
    case Opcode::kPartitionId:
    case Opcode::kReplicaId:
      return std::optional<Shape>(Shape::Scalar(PrimitiveType::kU32));
    default:
      return kFree;
  }
}

}  // namespace hlogym
