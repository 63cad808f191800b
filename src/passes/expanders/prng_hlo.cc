#include "passes/expanders/prng_hlo.h"

#include <algorithm>
#include <cstring>
#include <memory>

#include "hlo/literal.h"
#include "hlo/module.h"

namespace hlogym {

Shape HloEmitter::MakeShape(PrimitiveType type, std::vector<int64_t> dims) const {
  Shape shape(type, std::move(dims));
  if (with_layout_) shape.SetDefaultLayout();
  return shape;
}

Instruction* HloEmitter::Add(Opcode opcode, Shape shape,
                             std::initializer_list<Instruction*> operands) {
  auto instruction = std::make_unique<Instruction>(opcode, std::move(shape));
  for (Instruction* operand : operands) instruction->AppendOperand(operand);
  return computation_->AddInstruction(std::move(instruction));
}

Instruction* HloEmitter::Parameter(int64_t number, Shape shape, std::string_view name) {
  Module* module = computation_->parent();
  auto p =
      std::make_unique<Instruction>(Opcode::kParameter, std::move(shape), module->UniqueName(name));
  p->mutable_attrs().parameter_number = number;
  return computation_->AddInstruction(std::move(p));
}

Instruction* HloEmitter::Int(PrimitiveType type, uint64_t bits) {
  Literal literal(Shape::Scalar(type));
  std::memcpy(literal.mutable_raw().data(), &bits, ByteWidth(type));  // little-endian
  auto c = std::make_unique<Instruction>(Opcode::kConstant, MakeShape(type, {}));
  c->mutable_attrs().literal = std::make_shared<const Literal>(std::move(literal));
  return computation_->AddInstruction(std::move(c));
}

Instruction* HloEmitter::Float(PrimitiveType type, double value) {
  auto c = std::make_unique<Instruction>(Opcode::kConstant, MakeShape(type, {}));
  c->mutable_attrs().literal = std::make_shared<const Literal>(Literal::Scalar(type, value));
  return computation_->AddInstruction(std::move(c));
}

Instruction* HloEmitter::Iota(PrimitiveType type, int64_t n) {
  Instruction* iota = Add(Opcode::kIota, MakeShape(type, {n}), {});
  iota->mutable_attrs().iota_dimension = 0;
  return iota;
}

Instruction* HloEmitter::Broadcast(Instruction* scalar, const std::vector<int64_t>& dims) {
  return Add(Opcode::kBroadcast, MakeShape(scalar->shape().element_type(), dims), {scalar});
}

Instruction* HloEmitter::Binary(Opcode opcode, Instruction* lhs, Instruction* rhs) {
  if (lhs->shape().IsScalar() && !rhs->shape().IsScalar()) {
    lhs = Broadcast(lhs, rhs->shape().dimensions());
  } else if (rhs->shape().IsScalar() && !lhs->shape().IsScalar()) {
    rhs = Broadcast(rhs, lhs->shape().dimensions());
  }
  return Add(opcode, MakeShape(lhs->shape().element_type(), lhs->shape().dimensions()), {lhs, rhs});
}

Instruction* HloEmitter::Unary(Opcode opcode, Instruction* operand) {
  return Add(opcode, MakeShape(operand->shape().element_type(), operand->shape().dimensions()),
             {operand});
}

Instruction* HloEmitter::Less(Instruction* lhs, Instruction* rhs) {
  Instruction* c = Binary(Opcode::kCompare, lhs, rhs);
  c->set_shape(MakeShape(PrimitiveType::kPred, c->shape().dimensions()));
  c->mutable_attrs().comparison_direction = ComparisonDirection::kLt;
  return c;
}

Instruction* HloEmitter::Select(Instruction* pred, Instruction* on_true, Instruction* on_false) {
  return Add(Opcode::kSelect,
             MakeShape(on_true->shape().element_type(), on_true->shape().dimensions()),
             {pred, on_true, on_false});
}

Instruction* HloEmitter::Convert(Instruction* operand, PrimitiveType type) {
  if (operand->shape().element_type() == type) return operand;
  return Add(Opcode::kConvert, MakeShape(type, operand->shape().dimensions()), {operand});
}

Instruction* HloEmitter::Reshape(Instruction* operand, std::vector<int64_t> dims,
                                 bool keep_identity) {
  if (!keep_identity && operand->shape().dimensions() == dims) return operand;
  return Add(Opcode::kReshape, MakeShape(operand->shape().element_type(), std::move(dims)),
             {operand});
}

Instruction* HloEmitter::Slice(Instruction* operand, const std::vector<int64_t>& starts,
                               const std::vector<int64_t>& limits, bool keep_identity) {
  if (!keep_identity && limits == operand->shape().dimensions() &&
      std::all_of(starts.begin(), starts.end(), [](int64_t s) { return s == 0; })) {
    return operand;
  }
  std::vector<int64_t> dims;
  std::vector<SliceDimension> slice;
  for (size_t i = 0; i < starts.size(); ++i) {
    dims.push_back(limits[i] - starts[i]);
    slice.push_back({starts[i], limits[i], 1});
  }
  Instruction* s = Add(Opcode::kSlice, MakeShape(operand->shape().element_type(), dims), {operand});
  s->mutable_attrs().slice = std::move(slice);
  return s;
}

Instruction* HloEmitter::Concatenate(const std::vector<Instruction*>& operands, int64_t dimension) {
  std::vector<int64_t> dims = operands[0]->shape().dimensions();
  dims[dimension] = 0;
  for (Instruction* op : operands) dims[dimension] += op->shape().dimensions(dimension);
  auto c = std::make_unique<Instruction>(Opcode::kConcatenate,
                                         MakeShape(operands[0]->shape().element_type(), dims));
  for (Instruction* op : operands) c->AppendOperand(op);
  c->mutable_attrs().dimensions = {dimension};
  return computation_->AddInstruction(std::move(c));
}

Instruction* HloEmitter::Tuple(const std::vector<Instruction*>& operands) {
  std::vector<Shape> shapes;
  for (Instruction* op : operands) shapes.push_back(op->shape());
  auto t = std::make_unique<Instruction>(Opcode::kTuple, Shape::Tuple(std::move(shapes)));
  for (Instruction* op : operands) t->AppendOperand(op);
  return computation_->AddInstruction(std::move(t));
}

Instruction* HloEmitter::Element(Instruction* vector, int64_t i) {
  return Reshape(Slice(vector, {i}, {i + 1}), {});
}

Instruction* HloEmitter::Low32(Instruction* u64) { return Convert(u64, PrimitiveType::kU32); }

Instruction* HloEmitter::High32(Instruction* u64) {
  return Convert(Binary(Opcode::kShiftRightLogical, u64, Int(PrimitiveType::kU64, 32)),
                 PrimitiveType::kU32);
}

Instruction* HloEmitter::Join64(Instruction* lo, Instruction* hi) {
  Instruction* high =
      Binary(Opcode::kShiftLeft, Convert(hi, PrimitiveType::kU64), Int(PrimitiveType::kU64, 32));
  return Binary(Opcode::kOr, Convert(lo, PrimitiveType::kU64), high);
}

namespace {

constexpr PrimitiveType kU32 = PrimitiveType::kU32;
constexpr PrimitiveType kU64 = PrimitiveType::kU64;

// Interleaves `parts` (each of `blocks` elements) as [blocks, parts.size()]
// and keeps the first `n`.
Instruction* Interleave(HloEmitter& e, const std::vector<Instruction*>& parts, int64_t blocks,
                        int64_t n) {
  std::vector<Instruction*> columns;
  for (Instruction* p : parts) columns.push_back(e.Reshape(p, {blocks, 1}));
  const int64_t k = static_cast<int64_t>(parts.size());
  Instruction* all = e.Reshape(e.Concatenate(columns, 1), {blocks * k});
  return e.Slice(all, {0}, {n});
}

}  // namespace

EmittedBits EmitPhiloxBits(HloEmitter& e, Instruction* key, Instruction* counter_lo,
                           Instruction* counter_hi, int64_t n, bool wide) {
  return EmitPhiloxBits(e, e.Low32(key), e.High32(key), counter_lo, counter_hi, n, wide);
}

EmittedBits EmitPhiloxBits(HloEmitter& e, Instruction* key_lo, Instruction* key_hi,
                           Instruction* counter_lo, Instruction* counter_hi, int64_t n, bool wide) {
  const int64_t per_block = wide ? 2 : 4;
  const int64_t blocks = (n + per_block - 1) / per_block;
  const std::vector<int64_t> dims = {blocks};
  // The 128-bit counters counter + i, i = 0..blocks-1.
  Instruction* lo = e.Binary(Opcode::kAdd, counter_lo, e.Iota(kU64, blocks));
  Instruction* hi_plus = e.Binary(Opcode::kAdd, counter_hi, e.Int(kU64, 1));
  Instruction* hi = e.Select(e.Less(lo, e.Broadcast(counter_lo, dims)), e.Broadcast(hi_plus, dims),
                             e.Broadcast(counter_hi, dims));
  Instruction* x[4] = {e.Low32(lo), e.High32(lo), e.Low32(hi), e.High32(hi)};
  Instruction* k0 = key_lo;
  Instruction* k1 = key_hi;
  for (int round = 0; round < 10; ++round) {
    Instruction* p0 = e.Binary(Opcode::kMultiply, e.Convert(x[0], kU64), e.Int(kU64, 0xD2511F53u));
    Instruction* p1 = e.Binary(Opcode::kMultiply, e.Convert(x[2], kU64), e.Int(kU64, 0xCD9E8D57u));
    Instruction* y0 = e.Binary(Opcode::kXor, e.Binary(Opcode::kXor, e.High32(p1), x[1]), k0);
    Instruction* y2 = e.Binary(Opcode::kXor, e.Binary(Opcode::kXor, e.High32(p0), x[3]), k1);
    x[0] = y0;
    x[1] = e.Low32(p1);
    x[2] = y2;
    x[3] = e.Low32(p0);
    if (round < 9) {
      k0 = e.Binary(Opcode::kAdd, k0, e.Int(kU32, 0x9E3779B9u));
      k1 = e.Binary(Opcode::kAdd, k1, e.Int(kU32, 0xBB67AE85u));
    }
  }
  EmittedBits out;
  if (wide) {
    out.bits = Interleave(e, {e.Join64(x[0], x[1]), e.Join64(x[2], x[3])}, blocks, n);
  } else {
    out.bits = Interleave(e, {x[0], x[1], x[2], x[3]}, blocks, n);
  }
  Instruction* new_lo = e.Binary(Opcode::kAdd, counter_lo, e.Int(kU64, blocks));
  out.counter_lo = new_lo;
  out.counter_hi = e.Select(e.Less(new_lo, counter_lo), hi_plus, counter_hi);
  return out;
}

HalfSplit SplitIntoHalves(const std::vector<int64_t>& dims) {
  HalfSplit s;
  if (dims.empty()) {
    s.scalar = true;
    return s;
  }
  int64_t split = -1;
  for (size_t i = 0; i < dims.size() && split < 0; ++i) {
    if (dims[i] % 2 == 0) split = static_cast<int64_t>(i);
  }
  if (split < 0) {
    split = 0;
    for (size_t i = 1; i < dims.size(); ++i) {
      if (dims[i] > dims[split]) split = static_cast<int64_t>(i);
    }
  }
  for (int64_t i = 0; i < split; ++i) s.pre *= dims[i];
  for (size_t i = split + 1; i < dims.size(); ++i) s.post *= dims[i];
  s.dim = dims[split];
  return s;
}

Instruction* EmitCombineHalves(HloEmitter& e, Instruction* x0, Instruction* x1, const HalfSplit& s,
                               const std::vector<int64_t>& dims) {
  if (s.scalar) return e.Reshape(e.Slice(x0, {0}, {1}), {});
  const int64_t hd = s.half();
  Instruction* a = e.Reshape(x0, {s.pre, hd, 1, s.post});
  Instruction* b = e.Reshape(x1, {s.pre, hd, 1, s.post});
  Instruction* both = e.Reshape(e.Concatenate({a, b}, 2), {s.pre, 2 * hd, s.post});
  return e.Reshape(e.Slice(both, {0, 0, 0}, {s.pre, s.dim, s.post}), dims);
}

EmittedBits EmitThreeFryBits(HloEmitter& e, Instruction* key, Instruction* counter,
                             const std::vector<int64_t>& dims, bool wide) {
  const HalfSplit s = SplitIntoHalves(dims);
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  const int64_t count = wide ? n : s.half_count();
  Instruction* c = e.Binary(Opcode::kAdd, counter, e.Iota(kU64, count));
  Instruction* x[2] = {e.Low32(c), e.High32(c)};
  Instruction* ks[3] = {e.Low32(key), e.High32(key), nullptr};
  ks[2] = e.Binary(Opcode::kXor, e.Binary(Opcode::kXor, e.Int(kU32, 0x1BD11BDAu), ks[0]), ks[1]);
  static constexpr int kRot[2][4] = {{13, 15, 26, 6}, {17, 29, 16, 24}};
  x[0] = e.Binary(Opcode::kAdd, x[0], ks[0]);
  x[1] = e.Binary(Opcode::kAdd, x[1], ks[1]);
  for (int group = 0; group < 5; ++group) {
    for (int r : kRot[group % 2]) {
      x[0] = e.Binary(Opcode::kAdd, x[0], x[1]);
      Instruction* rotated =
          e.Binary(Opcode::kOr, e.Binary(Opcode::kShiftLeft, x[1], e.Int(kU32, r)),
                   e.Binary(Opcode::kShiftRightLogical, x[1], e.Int(kU32, 32 - r)));
      x[1] = e.Binary(Opcode::kXor, rotated, x[0]);
    }
    x[0] = e.Binary(Opcode::kAdd, x[0], ks[(group + 1) % 3]);
    x[1] = e.Binary(Opcode::kAdd, x[1],
                    e.Binary(Opcode::kAdd, ks[(group + 2) % 3], e.Int(kU32, group + 1)));
  }
  EmittedBits out;
  out.bits =
      wide ? e.Reshape(e.Join64(x[0], x[1]), dims) : EmitCombineHalves(e, x[0], x[1], s, dims);
  out.counter_lo = e.Binary(Opcode::kAdd, counter, e.Int(kU64, count));
  return out;
}

}  // namespace hlogym
