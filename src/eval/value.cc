#include "eval/value.h"

#include <xxhash.h>

#include <atomic>
#include <bit>
#include <cmath>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "hlo/array_allocator.h"
#include "hlo/status_macros.h"

namespace hlogym::eval {

namespace {
std::atomic<int64_t> live_array_bytes{0};
}  // namespace

int64_t LiveArrayBytes() { return live_array_bytes.load(std::memory_order_relaxed); }

namespace {
// `data` for an array held in the Value's own `inline_data`: no count (the
// Value's own keeps it alive for whoever holds the Value).
void UseInlineData(Value& value) {
  value.data = std::shared_ptr<uint8_t[]>(std::shared_ptr<uint8_t[]>(), value.inline_data);
}
}  // namespace

std::shared_ptr<Value> NewArray(const Shape& shape) {
  auto value = std::make_shared<Value>(shape);
  const int64_t bytes = shape.ElementCount() * ByteWidth(shape.element_type());
  value->size_bytes = bytes;
  // Uninitialized on purpose: every kernel writes all of its output.
  if (bytes <= Value::kInlineBytes) {
    UseInlineData(*value);
    return value;
  }
  live_array_bytes.fetch_add(bytes, std::memory_order_relaxed);
  value->data = std::shared_ptr<uint8_t[]>(
      static_cast<uint8_t*>(AllocateArrayBytes(bytes)), [bytes](uint8_t* p) {
        live_array_bytes.fetch_sub(bytes, std::memory_order_relaxed);
        FreeArrayBytes(p, bytes);
      });
  return value;
}

std::shared_ptr<Value> ShareArray(const ValuePtr& source, const Shape& shape) {
  auto value = std::make_shared<Value>(shape);
  value->size_bytes = source->size_bytes;
  if (source->data.get() == source->inline_data) {
    // Not shared: `source` may go before the new value does.
    std::memcpy(value->inline_data, source->inline_data, source->size_bytes);
    UseInlineData(*value);
  } else {
    value->data = source->data;
  }
  return value;
}

std::shared_ptr<Value> OverwritableCopy(const ValuePtr& operand, const Shape& shape) {
  // An inline buffer has no count of its own (use_count 0): copied, as any short array is.
  if (operand.use_count() == 1 && operand->data.use_count() == 1 && operand->shape == shape) {
    return std::const_pointer_cast<Value>(operand);
  }
  auto out = NewArray(shape);
  if (out->size_bytes > 0) std::memcpy(out->bytes(), operand->bytes(), out->size_bytes);
  return out;
}

ValuePtr MakeTuple(const Shape& shape, std::vector<ValuePtr> elements) {
  auto value = std::make_shared<Value>(shape);
  value->elements = std::move(elements);
  return value;
}

ValuePtr MakeToken() {
  static const ValuePtr token = [] { return ValuePtr(std::make_shared<Value>(Shape::Token())); }();
  return token;
}

absl::StatusOr<ValuePtr> ValueFromLiteral(const Literal& literal) {
  const Shape& shape = literal.shape();
  if (literal.elided()) {
    return absl::InvalidArgumentError("elided literal has no value");
  }
  if (shape.IsTuple()) {
    std::vector<ValuePtr> elements;
    if (literal.tuple_elements().size() != static_cast<size_t>(shape.tuple_shapes_size())) {
      return absl::InvalidArgumentError("tuple literal does not match its shape");
    }
    for (const Literal& e : literal.tuple_elements()) {
      HLOGYM_ASSIGN(v, ValueFromLiteral(e));
      elements.push_back(std::move(v));
    }
    return MakeTuple(shape, std::move(elements));
  }
  if (shape.IsToken()) return MakeToken();
  if (!shape.IsArray()) {
    return absl::UnimplementedError(
        absl::StrCat("cannot evaluate values of shape ", shape.ToString()));
  }
  auto value = NewArray(shape);
  if (literal.raw().size() != static_cast<size_t>(value->size_bytes)) {
    return absl::InvalidArgumentError(absl::StrCat("literal of shape ", shape.ToString(), " has ",
                                                   literal.raw().size(), " bytes, expected ",
                                                   value->size_bytes));
  }
  if (value->size_bytes > 0) {
    std::memcpy(value->bytes(), literal.raw().data(), value->size_bytes);
  }
  return ValuePtr(value);
}

Literal ValueToLiteral(const Value& value) {
  if (value.shape.IsTuple()) {
    std::vector<Literal> elements;
    elements.reserve(value.elements.size());
    for (const ValuePtr& element : value.elements) elements.push_back(ValueToLiteral(*element));
    return Literal::Tuple(value.shape, std::move(elements));
  }
  if (!value.shape.IsArray()) return Literal(value.shape);
  return Literal::FromBytes(value.shape, {value.bytes(), static_cast<size_t>(value.size_bytes)});
}

std::vector<int64_t> RowMajorStrides(std::span<const int64_t> dims) {
  std::vector<int64_t> strides(dims.size());
  int64_t stride = 1;
  for (int64_t i = static_cast<int64_t>(dims.size()) - 1; i >= 0; --i) {
    strides[i] = stride;
    stride *= dims[i];
  }
  return strides;
}

namespace {

template <int N>
struct Bytes {
  uint8_t b[N];
};

template <typename E>
void StridedCopyTyped(std::span<const int64_t> dims, E* dst, std::span<const int64_t> dst_strides,
                      const E* src, std::span<const int64_t> src_strides) {
  const int64_t rank = static_cast<int64_t>(dims.size());
  for (int64_t d : dims) {
    if (d <= 0) return;
  }
  if (rank == 0) {
    *dst = *src;
    return;
  }
  const int64_t inner = dims[rank - 1];
  const int64_t ds = dst_strides[rank - 1];
  const int64_t ss = src_strides[rank - 1];
  std::vector<int64_t> index(rank, 0);
  while (true) {
    if (ds == 1 && ss == 1) {
      std::memcpy(dst, src, inner * sizeof(E));
    } else if (ss == 0) {
      const E v = *src;
      for (int64_t i = 0; i < inner; ++i) dst[i * ds] = v;
    } else {
      for (int64_t i = 0; i < inner; ++i) dst[i * ds] = src[i * ss];
    }
    // Advance the odometer over the outer dimensions.
    int64_t d = rank - 2;
    for (; d >= 0; --d) {
      ++index[d];
      dst += dst_strides[d];
      src += src_strides[d];
      if (index[d] < dims[d]) break;
      dst -= dst_strides[d] * dims[d];
      src -= src_strides[d] * dims[d];
      index[d] = 0;
    }
    if (d < 0) return;
  }
}

}  // namespace

void StridedCopy(int elem_size, std::span<const int64_t> dims, uint8_t* dst,
                 std::span<const int64_t> dst_strides, const uint8_t* src,
                 std::span<const int64_t> src_strides) {
  switch (elem_size) {
    case 1:
      return StridedCopyTyped(dims, dst, dst_strides, src, src_strides);
    case 2:
      return StridedCopyTyped(dims, reinterpret_cast<uint16_t*>(dst), dst_strides,
                              reinterpret_cast<const uint16_t*>(src), src_strides);
    case 4:
      return StridedCopyTyped(dims, reinterpret_cast<uint32_t*>(dst), dst_strides,
                              reinterpret_cast<const uint32_t*>(src), src_strides);
    case 8:
      return StridedCopyTyped(dims, reinterpret_cast<uint64_t*>(dst), dst_strides,
                              reinterpret_cast<const uint64_t*>(src), src_strides);
    case 16:
      return StridedCopyTyped(dims, reinterpret_cast<Bytes<16>*>(dst), dst_strides,
                              reinterpret_cast<const Bytes<16>*>(src), src_strides);
    default:
      break;
  }
}

uint64_t HashBytes(const void* data, size_t size, uint64_t seed) {
  return XXH3_64bits_withSeed(data, size, seed);
}

uint64_t HashValue(const Value& value, uint64_t seed) {
  std::string shape = value.shape.ToString(false);
  uint64_t h = HashBytes(shape.data(), shape.size(), seed);
  if (value.shape.IsArray()) h = HashBytes(value.bytes(), value.size_bytes, h);
  for (const ValuePtr& e : value.elements) h = HashValue(*e, h);
  return h;
}

void FillDeterministic(Value& value, uint64_t seed, double lo, double hi, int64_t int_lo,
                       int64_t int_hi) {
  const int64_t n = value.element_count();
  const PrimitiveType type = value.shape.element_type();
  bool handled = DispatchType(type, [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* out = value.mutable_as<T>();
    uint64_t state = Mix64(seed);
    for (int64_t i = 0; i < n; ++i) {
      state = Mix64(state + i);
      const double u = static_cast<double>(state >> 11) * 0x1.0p-53;  // [0, 1)
      if constexpr (kIsPred<T>) {
        out[i] = (state >> 63) != 0;
      } else if constexpr (kIsInt<T>) {
        int64_t a = int_lo, b = int_hi;
        if constexpr (std::is_unsigned_v<T>) a = std::max<int64_t>(a, 0);
        a = std::max<int64_t>(a, static_cast<int64_t>(std::numeric_limits<T>::min()));
        if constexpr (sizeof(T) < 8 || std::is_signed_v<T>) {
          b = std::min<int64_t>(b, static_cast<int64_t>(std::numeric_limits<T>::max()));
        }
        if (b < a) b = a;
        const uint64_t span = static_cast<uint64_t>(b - a) + 1;
        out[i] = static_cast<T>(a + static_cast<int64_t>(span == 0 ? state : state % span));
      } else if constexpr (kIsComplex<T>) {
        using R = typename T::value_type;
        const uint64_t s2 = Mix64(state ^ 0x5555);
        const double u2 = static_cast<double>(s2 >> 11) * 0x1.0p-53;
        out[i] = T(static_cast<R>(lo + (hi - lo) * u), static_cast<R>(lo + (hi - lo) * u2));
      } else {
        out[i] = ConvertElement<T>(lo + (hi - lo) * u);
      }
    }
  });
  if (!handled && value.shape.IsArray()) {
    // Types without a C++ type here: random bytes (sub-byte types masked).
    uint64_t state = Mix64(seed);
    const int bits = BitWidth(type);
    for (int64_t i = 0; i < value.size_bytes; ++i) {
      state = Mix64(state + i);
      uint8_t byte = static_cast<uint8_t>(state);
      if (bits < 8) byte &= static_cast<uint8_t>((1u << bits) - 1);
      value.bytes()[i] = byte;
    }
  }
}

std::vector<double> ToDoubles(const Value& v) {
  std::vector<double> out(v.element_count());
  DispatchType(v.shape.element_type(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* src = v.as<T>();
    for (size_t i = 0; i < out.size(); ++i) out[i] = ConvertElement<double>(src[i]);
  });
  return out;
}

}  // namespace hlogym::eval
