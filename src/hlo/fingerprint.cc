#include "hlo/fingerprint.h"

#include <algorithm>
#include <cstring>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_format.h"

namespace hlogym {
namespace {

constexpr uint64_t kSeedA = 0x9e3779b97f4a7c15ULL;
constexpr uint64_t kSeedB = 0xc2b2ae3d27d4eb4fULL;

inline uint64_t SplitMix(uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  x ^= x >> 31;
  return x;
}

inline uint64_t Murmur(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ULL;
  x ^= x >> 33;
  return x;
}

inline uint64_t Rotl(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }

// Two independent 64-bit lanes; deterministic (no per-process seed).
class Hasher {
 public:
  // Two multiply-rotate lanes with different constants (cheap per word); the
  // finalizer mixes them fully.
  void Add(uint64_t v) {
    a_ = Rotl((a_ ^ v) * 0x9fb21c651e98df25ULL, 29) + kSeedA;
    b_ = Rotl((b_ + v) * 0xd6e8feb86659fd93ULL, 37) ^ kSeedB;
    ++count_;
  }
  void AddSigned(int64_t v) { Add(static_cast<uint64_t>(v)); }
  void AddBool(bool v) { Add(v ? 1 : 0); }
  void Add(const Fingerprint& f) {
    Add(f.hi);
    Add(f.lo);
  }
  void AddBytes(const void* data, size_t size) {
    Add(size);
    const auto* p = static_cast<const unsigned char*>(data);
    size_t i = 0;
    for (; i + 8 <= size; i += 8) {
      uint64_t word;
      std::memcpy(&word, p + i, 8);
      Add(word);
    }
    uint64_t tail = 0;
    if (i < size) {
      std::memcpy(&tail, p + i, size - i);
      Add(tail);
    }
  }
  void AddString(std::string_view s) { AddBytes(s.data(), s.size()); }
  template <typename T>
  void AddInts(const std::vector<T>& v) {
    Add(v.size());
    for (const T& x : v) AddSigned(static_cast<int64_t>(x));
  }
  Fingerprint Finish() const {
    const uint64_t a = SplitMix(a_ ^ count_), b = Murmur(b_ + count_ * kSeedA);
    return Fingerprint{SplitMix(a ^ Murmur(b)), Murmur(b ^ SplitMix(a + kSeedB))};
  }

 private:
  uint64_t a_ = 0x243f6a8885a308d3ULL;
  uint64_t b_ = 0x13198a2e03707344ULL;
  uint64_t count_ = 0;
};

void HashShape(Hasher& h, const Shape& shape) {
  h.Add(static_cast<uint64_t>(shape.element_type()));
  if (shape.IsTuple()) {
    h.Add(shape.tuple_shapes_size());
    for (const Shape& element : shape.tuple_shapes()) HashShape(h, element);
    return;
  }
  h.AddInts(shape.dimensions());
  for (int64_t i = 0; i < shape.rank(); ++i) h.AddBool(shape.is_dynamic_dimension(i));
  h.AddBool(shape.has_layout());
  if (shape.has_layout()) {
    h.AddInts(shape.layout()->minor_to_major);
    h.AddString(shape.layout()->details);
  }
}

void HashLiteral(Hasher& h, const Literal& literal) {
  HashShape(h, literal.shape());
  h.AddBool(literal.elided());
  h.AddBytes(literal.raw().data(), literal.raw().size());
  h.Add(literal.tuple_elements().size());
  for (const Literal& element : literal.tuple_elements()) HashLiteral(h, element);
}

void HashWindow(Hasher& h, const std::optional<Window>& window) {
  if (!window) return;  // presence is among the flags
  h.Add(window->dimensions.size());
  for (const WindowDimension& d : window->dimensions) {
    h.AddSigned(d.size);
    h.AddSigned(d.stride);
    h.AddSigned(d.padding_low);
    h.AddSigned(d.padding_high);
    h.AddSigned(d.window_dilation);
    h.AddSigned(d.base_dilation);
    h.AddBool(d.window_reversal);
  }
}

void HashAttributes(Hasher& h, const InstructionAttributes& a) {
  // Most fields keep their defaults; enums and flags are packed into two words
  // and empty vectors cost one word, so an ordinary instruction hashes fast.
  uint64_t enums = 0;
  for (uint64_t e :
       {static_cast<uint64_t>(a.comparison_direction), static_cast<uint64_t>(a.comparison_type),
        static_cast<uint64_t>(a.fusion_kind), static_cast<uint64_t>(a.rng_distribution),
        static_cast<uint64_t>(a.rng_algorithm), static_cast<uint64_t>(a.fft_type),
        static_cast<uint64_t>(a.transpose_a)}) {
    enums = (enums << 8) | (e & 0xff);
  }
  uint64_t flags = 0;
  for (bool b : {a.has_dimensions, a.indices_are_sorted, a.unique_indices, a.left_side, a.lower,
                 a.unit_diagonal, a.is_stable, a.largest, a.literal != nullptr,
                 a.window.has_value(), a.convolution_dimension_numbers.has_value(),
                 a.dot_dimension_numbers.has_value(), a.ragged_dot_dimension_numbers.has_value(),
                 a.gather_dimension_numbers.has_value(), a.scatter_dimension_numbers.has_value()}) {
    flags = (flags << 1) | (b ? 1 : 0);
  }
  h.Add(enums);
  h.Add(flags);
  h.AddSigned(a.parameter_number);
  h.AddSigned(a.tuple_index);
  h.AddSigned(a.iota_dimension);
  h.AddSigned(a.feature_group_count);
  h.AddSigned(a.batch_group_count);
  h.AddSigned(a.exponent_bits);
  h.AddSigned(a.mantissa_bits);
  h.AddSigned(a.feature_index);
  h.AddSigned(a.k);
  uint32_t epsilon_bits;
  std::memcpy(&epsilon_bits, &a.epsilon, sizeof(epsilon_bits));
  h.Add(epsilon_bits);
  h.AddInts(a.dimensions);
  h.Add(a.slice.size());
  for (const SliceDimension& s : a.slice) {
    h.AddSigned(s.start);
    h.AddSigned(s.limit);
    h.AddSigned(s.stride);
  }
  h.AddInts(a.dynamic_slice_sizes);
  h.Add(a.padding.size());
  for (const PaddingDimension& p : a.padding) {
    h.AddSigned(p.low);
    h.AddSigned(p.high);
    h.AddSigned(p.interior);
  }
  HashWindow(h, a.window);
  if (const auto& c = a.convolution_dimension_numbers) {
    h.AddSigned(c->input_batch_dimension);
    h.AddSigned(c->input_feature_dimension);
    h.AddInts(c->input_spatial_dimensions);
    h.AddSigned(c->kernel_input_feature_dimension);
    h.AddSigned(c->kernel_output_feature_dimension);
    h.AddInts(c->kernel_spatial_dimensions);
    h.AddSigned(c->output_batch_dimension);
    h.AddSigned(c->output_feature_dimension);
    h.AddInts(c->output_spatial_dimensions);
  }
  if (const auto& d = a.dot_dimension_numbers) {
    h.AddInts(d->lhs_batch_dimensions);
    h.AddInts(d->rhs_batch_dimensions);
    h.AddInts(d->lhs_contracting_dimensions);
    h.AddInts(d->rhs_contracting_dimensions);
  }
  if (const auto& r = a.ragged_dot_dimension_numbers) {
    h.AddInts(r->lhs_ragged_dimensions);
    h.AddInts(r->rhs_group_dimensions);
  }
  h.AddInts(a.operand_precision);
  if (const auto& g = a.gather_dimension_numbers) {
    h.AddInts(g->offset_dims);
    h.AddInts(g->collapsed_slice_dims);
    h.AddInts(g->start_index_map);
    h.AddSigned(g->index_vector_dim);
    h.AddInts(g->operand_batching_dims);
    h.AddInts(g->start_indices_batching_dims);
  }
  h.AddInts(a.gather_slice_sizes);
  if (const auto& s = a.scatter_dimension_numbers) {
    h.AddInts(s->update_window_dims);
    h.AddInts(s->inserted_window_dims);
    h.AddInts(s->scatter_dims_to_operand_dims);
    h.AddSigned(s->index_vector_dim);
    h.AddInts(s->input_batching_dims);
    h.AddInts(s->scatter_indices_batching_dims);
  }
  h.AddString(a.custom_call_target);
  h.AddInts(a.fft_length);
  if (a.literal) HashLiteral(h, *a.literal);
  for (const RawAttribute& raw : a.raw) {
    if (raw.key == "metadata") continue;
    h.AddString(raw.key);
    h.AddString(raw.value);
  }
}

class FingerprintComputer {
 public:
  Fingerprint Of(const Computation& computation) {
    if (auto it = memo_.find(&computation); it != memo_.end()) return it->second;
    // Guard against (invalid) recursive calls: a computation that reaches
    // itself hashes its recursive reference as a constant.
    memo_[&computation] = Fingerprint{0x5eed, 0x5eed};
    Fingerprint result = Compute(computation);
    memo_[&computation] = result;
    return result;
  }

 private:
  Fingerprint Local(const Instruction& instruction) {
    Hasher h;
    h.Add(static_cast<uint64_t>(instruction.opcode()));
    HashShape(h, instruction.shape());
    HashAttributes(h, instruction.attrs());
    h.Add(instruction.operand_count());
    h.Add(instruction.control_predecessors().size());
    h.Add(instruction.called_computations().size());
    for (const Computation* callee : instruction.called_computations()) {
      if (callee == nullptr) {
        h.Add(0);
      } else {
        h.Add(Of(*callee));
      }
    }
    return h.Finish();
  }

  Fingerprint Compute(const Computation& computation) {
    // Instructions in the computation's stable post order (which follows the
    // list order where the edges allow): passes visit them in that order, so
    // it is part of what determines a pass's result.
    const std::vector<Instruction*> post = computation.MakeInstructionPostOrder();
    const size_t n = post.size();
    absl::flat_hash_map<const Instruction*, int64_t> index;
    index.reserve(n);
    for (size_t i = 0; i < n; ++i) index[post[i]] = static_cast<int64_t>(i);
    auto position = [&](const Instruction* inst) -> int64_t {
      auto it = index.find(inst);
      return it == index.end() ? -1 : it->second;
    };
    Hasher h;
    h.Add(n);
    for (const Instruction* inst : post) {
      h.Add(Local(*inst));
      for (const Instruction* operand : inst->operands()) h.AddSigned(position(operand));
      for (const Instruction* pred : inst->control_predecessors()) h.AddSigned(position(pred));
    }
    h.AddSigned(position(computation.root_instruction()));
    h.Add(computation.num_parameters());
    for (const RawAttribute& raw : computation.raw_attributes()) {
      h.AddString(raw.key);
      h.AddString(raw.value);
    }
    return h.Finish();
  }

  absl::flat_hash_map<const Computation*, Fingerprint> memo_;
};

}  // namespace

std::string Fingerprint::ToString() const { return absl::StrFormat("%016x%016x", hi, lo); }

Fingerprint ComputationFingerprint(const Computation& computation) {
  FingerprintComputer computer;
  return computer.Of(computation);
}

Fingerprint ModuleFingerprint(const Module& module) {
  FingerprintComputer computer;
  Hasher h;
  h.Add(module.computations().size());
  // Where each computation stands in creation order (what passes that walk
  // XLA's own list of computations see), so that states alike in print but
  // not in that order do not share step-cache entries.
  std::vector<int64_t> creation;
  for (const auto& computation : module.computations()) {
    creation.push_back(computation->creation_index());
  }
  std::vector<int64_t> sorted = creation;
  std::sort(sorted.begin(), sorted.end());
  int64_t entry = -1, i = 0;
  for (const auto& computation : module.computations()) {
    if (computation.get() == module.entry_computation()) entry = i;
    h.Add(computer.Of(*computation));
    h.Add(static_cast<uint64_t>(std::lower_bound(sorted.begin(), sorted.end(), creation[i]) -
                                sorted.begin()));
    ++i;
  }
  h.AddSigned(entry);
  for (const RawAttribute& raw : module.raw_attributes()) {
    h.AddString(raw.key);
    h.AddString(raw.value);
  }
  return h.Finish();
}

}  // namespace hlogym
