// XLA's counter-based bit generators, computed directly on the CPU: the bits
// that XLA's RngBitGeneratorExpander (and with it XLA's CPU backend) produces
// for rng-bit-generator, and the building blocks of its RngExpander.
//
// Philox4x32-10 and ThreeFry2x32-20 follow the published algorithms (Salmon
// et al., "Parallel random numbers: as easy as 1, 2, 3", SC 2011) with the
// counter/key layout and the order in which XLA's HLO expansion lays the
// generated words out in the result:
//  - Philox, 32-bit results: n elements need ceil(n/4) counter values
//    c, c+1, ... (a 128-bit counter); block i fills elements 4i..4i+3 with
//    its four output words. 64-bit results: block i gives elements 2i, 2i+1
//    (words 0|1<<32 and 2|3<<32). Narrower results keep the low bits of the
//    32-bit ones. The counter advances by the number of blocks.
//  - ThreeFry, 32-bit results: the shape is split in two along its first
//    even dimension (else its largest one; a scalar counts as [2]); element
//    j of the half gets counter c + j and its two output words go to the
//    positions 2k and 2k+1 of the split dimension. 64-bit results use one
//    counter value per element (word 0 | word 1 << 32). The counter advances
//    by the number of counter values used.
//  - rng-bit-generator's state: element 0 is the key; ThreeFry's counter is
//    element 1 (state u64[2]); Philox's 128-bit counter is elements 1 (low)
//    and 2 (high) for a u64[3] state, and elements 1 (low) and 0 (high, the
//    key again) for a u64[2] state, whose new state keeps only the low word.
//    rng_default is Philox, as on XLA's CPU backend.
#ifndef HLOGYM_EVAL_PRNG_H_
#define HLOGYM_EVAL_PRNG_H_

#include <array>
#include <cstdint>

#include "absl/status/status.h"
#include "hlo/attributes.h"
#include "hlo/shape.h"

namespace hlogym::eval {

// One Philox4x32-10 block: the four output words for `counter` (low word
// first) under `key` (low word first).
std::array<uint32_t, 4> Philox4x32(std::array<uint32_t, 4> counter, std::array<uint32_t, 2> key);
// One ThreeFry2x32-20 block.
std::array<uint32_t, 2> ThreeFry2x32(std::array<uint32_t, 2> counter, std::array<uint32_t, 2> key);

// Fills `out` (a row-major array of `shape`, an integer type of 8, 16, 32 or
// 64 bits) with Philox bits for `key` and the 128-bit counter
// (`counter_lo`, `counter_hi`), which is advanced in place.
absl::Status PhiloxFill(uint64_t key, uint64_t& counter_lo, uint64_t& counter_hi,
                        const Shape& shape, uint8_t* out);
// The same with ThreeFry and a 64-bit counter.
absl::Status ThreeFryFill(uint64_t key, uint64_t& counter, const Shape& shape, uint8_t* out);

}  // namespace hlogym::eval

#endif  // HLOGYM_EVAL_PRNG_H_
