#include "passes/cpu_library_support.h"

#include <algorithm>
#include <cstdint>
#include <vector>

#include "hlo/computation.h"
#include "passes/pass_utils.h"

namespace hlogym {
namespace {

// Size from which XLA's CPU compiler prefers its library for an instruction
// (the instruction's shape or any operand's).
constexpr int64_t kLibraryMinElements = 4096;
// YNN_MAX_TENSOR_RANK
constexpr int64_t kLibraryMaxRank = 8;
// A dot none of whose m, k and n reaches this is too small for the library.
constexpr int64_t kLibraryDotMinDimension = 8;

// An array of rank at most kLibraryMaxRank with no layout or the default
// major-to-minor one.
bool LibraryLayout(const Shape& shape) {
  return shape.IsArray() && shape.rank() <= kLibraryMaxRank && HasDefaultMinorToMajor(shape);
}

// Whether the reducer is exactly `opcode` of its two parameters.
bool IsBinaryOfParams(const Computation* reducer, Opcode opcode) {
  if (reducer == nullptr || reducer->num_parameters() != 2 || reducer->instruction_count() != 3) {
    return false;
  }
  const Instruction* root = reducer->root_instruction();
  return root->opcode() == opcode && root->operand(0)->opcode() == Opcode::kParameter &&
         root->operand(1)->opcode() == Opcode::kParameter && root->operand(0) != root->operand(1);
}

// The new dimensions a reduce-window gives YNNPACK, or -1 when it cannot.
int64_t WindowedDimensions(const Instruction& reduce_window) {
  const std::optional<Window>& window = reduce_window.attrs().window;
  if (!window.has_value()) return -1;
  int64_t windowed = 0;
  for (const WindowDimension& dim : window->dimensions) {
    if (dim.size <= 1 && dim.stride <= 1) continue;
    if ((dim.size > 1 && dim.stride != dim.size) || dim.base_dilation != 1 ||
        dim.window_dilation != 1 || dim.window_reversal) {
      return -1;
    }
    ++windowed;
  }
  return windowed;
}

// Whether `dims` are exactly first, first + 1, ... in order.
bool AreConsecutiveFrom(const std::vector<int64_t>& dims, int64_t first) {
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] != first + static_cast<int64_t>(i)) return false;
  }
  return true;
}

// The product of the dimensions of `shape` outside `a` and `b`.
int64_t ProductOfOtherDimensions(const Shape& shape, const std::vector<int64_t>& a,
                                 const std::vector<int64_t>& b) {
  int64_t product = 1;
  for (int64_t d = 0; d < shape.rank(); ++d) {
    if (std::find(a.begin(), a.end(), d) == a.end() &&
        std::find(b.begin(), b.end(), d) == b.end()) {
      product *= shape.dimensions(d);
    }
  }
  return product;
}

}  // namespace

bool YnnTakesDot(const Instruction& hlo) {
  if (hlo.opcode() != Opcode::kDot || hlo.operand_count() != 2) return false;
  const std::optional<DotDimensionNumbers>& dnums = hlo.attrs().dot_dimension_numbers;
  if (!dnums.has_value()) return false;
  const Shape& lhs = hlo.operand(0)->shape();
  const Shape& rhs = hlo.operand(1)->shape();
  const Shape& out = hlo.shape();
  if (!LibraryLayout(lhs) || !LibraryLayout(rhs) || !LibraryLayout(out)) return false;
  using T = PrimitiveType;
  const T l = lhs.element_type();
  const T r = rhs.element_type();
  const T o = out.element_type();
  const bool types = (l == r && l == o && (l == T::kF64 || l == T::kF32)) ||
                     (l == T::kBF16 && r == T::kBF16 && o == T::kF32) ||
                     (l == T::kS8 && r == T::kS8 && o == T::kS32) ||
                     (l == T::kU8 && r == T::kS8 && o == T::kS32);
  if (!types) return false;
  const int64_t batch = static_cast<int64_t>(dnums->lhs_batch_dimensions.size());
  const int64_t contracted = static_cast<int64_t>(dnums->lhs_contracting_dimensions.size());
  // [batch..., m..., k...] on the left; batch first on the right, its k and n in either order.
  if (!AreConsecutiveFrom(dnums->lhs_batch_dimensions, 0) ||
      !AreConsecutiveFrom(dnums->rhs_batch_dimensions, 0) ||
      !AreConsecutiveFrom(dnums->lhs_contracting_dimensions, lhs.rank() - contracted)) {
    return false;
  }
  int64_t k = 1;
  for (int64_t d : dnums->lhs_contracting_dimensions) k *= lhs.dimensions(d);
  const int64_t m =
      ProductOfOtherDimensions(lhs, dnums->lhs_batch_dimensions, dnums->lhs_contracting_dimensions);
  const int64_t n =
      ProductOfOtherDimensions(rhs, dnums->rhs_batch_dimensions, dnums->rhs_contracting_dimensions);
  return batch == static_cast<int64_t>(dnums->rhs_batch_dimensions.size()) && m > 1 && n > 1 &&
         std::max({m, k, n}) >= kLibraryDotMinDimension;
}

bool YnnTakesReduceLike(const Instruction& hlo) {
  if (hlo.operand_count() != 2 || hlo.called_computations().empty()) return false;
  const Shape& input = hlo.operand(0)->shape();
  const Shape& result = hlo.shape();
  if (!LibraryLayout(input) || !LibraryLayout(result) ||
      hlo.operand(1)->shape().element_type() != result.element_type()) {
    return false;
  }
  if (hlo.opcode() == Opcode::kReduce) {
    if (hlo.attrs().dimensions.empty()) return false;
  } else if (hlo.opcode() == Opcode::kReduceWindow) {
    const int64_t windowed = WindowedDimensions(hlo);
    if (windowed <= 0 || result.rank() + windowed > kLibraryMaxRank) return false;
  } else {
    return false;
  }
  using T = PrimitiveType;
  const T in = input.element_type();
  const T out = result.element_type();
  const Computation* reducer = hlo.to_apply();
  bool supported = false;
  if (IsBinaryOfParams(reducer, Opcode::kAdd)) {
    supported = (in == out && (in == T::kF64 || in == T::kF32)) ||
                (out == T::kF32 && (in == T::kF16 || in == T::kBF16)) ||
                (out == T::kS32 && (in == T::kS8 || in == T::kU8));
  } else if (IsBinaryOfParams(reducer, Opcode::kMaximum) ||
             IsBinaryOfParams(reducer, Opcode::kMinimum)) {
    supported = in == out && (in == T::kU8 || in == T::kS8 || in == T::kBF16 || in == T::kF16 ||
                              in == T::kF32 || in == T::kF64);
  }
  return supported && (result.ElementCount() >= kLibraryMinElements ||
                       input.ElementCount() >= kLibraryMinElements);
}

}  // namespace hlogym
