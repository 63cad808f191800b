// HLO emitters for XLA's counter-based bit generators (Philox4x32-10 and
// ThreeFry2x32-20) and the distributions XLA's RngExpander builds on them,
// shared by rng-bit-generator-expander and rng-expander. They produce plain
// elementwise/shape HLO (iota, add, multiply, shifts, xor, convert, slice,
// reshape, concatenate, select) computing exactly the bits that
// src/eval/prng.h documents and the evaluator computes natively.
#ifndef HLOGYM_PASSES_EXPANDERS_PRNG_HLO_H_
#define HLOGYM_PASSES_EXPANDERS_PRNG_HLO_H_

#include <cstdint>
#include <initializer_list>
#include <string_view>
#include <vector>

#include "hlo/computation.h"
#include "hlo/instruction.h"

namespace hlogym {

// Appends instructions with known-good shapes to one computation (shapes get
// the default layout when `with_layout`). Binary ops broadcast a scalar
// operand to the other operand's dimensions.
class HloEmitter {
 public:
  HloEmitter(Computation* computation, bool with_layout)
      : computation_(computation), with_layout_(with_layout) {}

  Computation* computation() const { return computation_; }
  Shape MakeShape(PrimitiveType type, std::vector<int64_t> dims) const;

  Instruction* Parameter(int64_t number, Shape shape, std::string_view name);
  // Scalar constants: integers from their bits, floats from a double.
  Instruction* Int(PrimitiveType type, uint64_t bits);
  Instruction* Float(PrimitiveType type, double value);
  Instruction* Iota(PrimitiveType type, int64_t n);
  Instruction* Broadcast(Instruction* scalar, const std::vector<int64_t>& dims);
  Instruction* Binary(Opcode opcode, Instruction* lhs, Instruction* rhs);
  Instruction* Unary(Opcode opcode, Instruction* operand);
  Instruction* Less(Instruction* lhs, Instruction* rhs);  // unsigned / float LT
  Instruction* Select(Instruction* pred, Instruction* on_true, Instruction* on_false);
  Instruction* Convert(Instruction* operand, PrimitiveType type);
  // Reshape and Slice return the operand itself where they would not change it,
  // unless `keep_identity` (XLA's builder library emits such no-ops, and a pass
  // that follows XLA's form must too).
  Instruction* Reshape(Instruction* operand, std::vector<int64_t> dims, bool keep_identity = false);
  // Slice with unit strides.
  Instruction* Slice(Instruction* operand, const std::vector<int64_t>& starts,
                     const std::vector<int64_t>& limits, bool keep_identity = false);
  Instruction* Concatenate(const std::vector<Instruction*>& operands, int64_t dimension);
  Instruction* Tuple(const std::vector<Instruction*>& operands);

  // Element `i` of a rank-1 array as a scalar.
  Instruction* Element(Instruction* vector, int64_t i);
  // The low and high 32-bit halves of a u64 array.
  Instruction* Low32(Instruction* u64);
  Instruction* High32(Instruction* u64);
  // lo | hi << 32 of two u32 arrays.
  Instruction* Join64(Instruction* lo, Instruction* hi);

 private:
  Instruction* Add(Opcode opcode, Shape shape, std::initializer_list<Instruction*> operands);

  Computation* computation_;
  bool with_layout_;
};

// Random bits as a flat array of `n` elements of u32 (`wide` false) or u64,
// and the advanced counter.
struct EmittedBits {
  Instruction* bits = nullptr;
  Instruction* counter_lo = nullptr;
  Instruction* counter_hi = nullptr;  // Philox only
};

// Philox with the key given as its low and high u32 halves (scalars);
// `counter_lo`, `counter_hi` are u64 scalars.
EmittedBits EmitPhiloxBits(HloEmitter& e, Instruction* key_lo, Instruction* key_hi,
                           Instruction* counter_lo, Instruction* counter_hi, int64_t n, bool wide);
// Philox: `key`, `counter_lo`, `counter_hi` are u64 scalars.
EmittedBits EmitPhiloxBits(HloEmitter& e, Instruction* key, Instruction* counter_lo,
                           Instruction* counter_hi, int64_t n, bool wide);

// ThreeFry bits laid out in `dims` (u32 when !wide, else u64); `key` and
// `counter` are u64 scalars.
EmittedBits EmitThreeFryBits(HloEmitter& e, Instruction* key, Instruction* counter,
                             const std::vector<int64_t>& dims, bool wide);

// The split both ThreeFry and the normal distribution use: the shape's
// first even dimension (else its largest), into halves of ceil(d/2).
struct HalfSplit {
  bool scalar = false;
  int64_t pre = 1, dim = 2, post = 1;
  int64_t half() const { return (dim + 1) / 2; }
  int64_t half_count() const { return scalar ? 1 : pre * half() * post; }
};
HalfSplit SplitIntoHalves(const std::vector<int64_t>& dims);

// Interleaves two flat arrays of half_count() elements (x0 for even, x1 for
// odd positions along the split dimension) into an array of `dims`.
Instruction* EmitCombineHalves(HloEmitter& e, Instruction* x0, Instruction* x1,
                               const HalfSplit& split, const std::vector<int64_t>& dims);

}  // namespace hlogym

#endif  // HLOGYM_PASSES_EXPANDERS_PRNG_HLO_H_
