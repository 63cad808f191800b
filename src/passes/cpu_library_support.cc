#include "passes/cpu_library_support.h"

#include <cstdint>
#include <vector>

#include "hlo/computation.h"

namespace hlogym {
namespace {

// Size from which XLA's CPU compiler prefers its library for an instruction
// (the instruction's shape or any operand's).
constexpr int64_t kLibraryMinElements = 4096;
// YNN_MAX_TENSOR_RANK
constexpr int64_t kLibraryMaxRank = 8;

// An array of rank at most kLibraryMaxRank with no layout or the default
// major-to-minor one.
bool LibraryLayout(const Shape& shape) {
  if (!shape.IsArray() || shape.rank() > kLibraryMaxRank) return false;
  if (!shape.has_layout()) return true;
  const std::vector<int64_t>& m2m = shape.layout()->minor_to_major;
  for (size_t i = 0; i < m2m.size(); ++i) {
    if (m2m[i] != static_cast<int64_t>(m2m.size() - 1 - i)) return false;
  }
  return true;
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

}  // namespace

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
    supported = in == out && (in == T::kU8 || in == T::kS8 || in == T::kBF16 ||
                              in == T::kF16 || in == T::kF32 || in == T::kF64);
  }
  return supported && (result.ElementCount() >= kLibraryMinElements ||
                       input.ElementCount() >= kLibraryMinElements);
}

}  // namespace hlogym
