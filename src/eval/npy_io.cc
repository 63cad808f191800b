#include "eval/npy_io.h"

#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <system_error>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "hlo/status_macros.h"

namespace hlogym {
namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicSize = 6;

// Sub-byte integers live one per byte in a Literal; only their low bits count.
bool IsSubByteInt(PrimitiveType type) {
  switch (type) {
    case PrimitiveType::kS1:
    case PrimitiveType::kS2:
    case PrimitiveType::kS4:
    case PrimitiveType::kU1:
    case PrimitiveType::kU2:
    case PrimitiveType::kU4:
      return true;
    default:
      return false;
  }
}

// The element type a descr names on its own (nullopt for raw "V" records).
std::optional<PrimitiveType> TypeOfDescr(char kind, int size) {
  switch (kind) {
    case 'b':
      if (size == 1) return PrimitiveType::kPred;
      break;
    case 'i':
      if (size == 1) return PrimitiveType::kS8;
      if (size == 2) return PrimitiveType::kS16;
      if (size == 4) return PrimitiveType::kS32;
      if (size == 8) return PrimitiveType::kS64;
      break;
    case 'u':
      if (size == 1) return PrimitiveType::kU8;
      if (size == 2) return PrimitiveType::kU16;
      if (size == 4) return PrimitiveType::kU32;
      if (size == 8) return PrimitiveType::kU64;
      break;
    case 'f':
      if (size == 2) return PrimitiveType::kF16;
      if (size == 4) return PrimitiveType::kF32;
      if (size == 8) return PrimitiveType::kF64;
      break;
    case 'c':
      if (size == 8) return PrimitiveType::kC64;
      if (size == 16) return PrimitiveType::kC128;
      break;
    default:
      break;
  }
  return std::nullopt;
}

absl::Status Malformed(std::string_view why) {
  return absl::InvalidArgumentError(absl::StrCat("malformed .npy data: ", std::string(why)));
}

// Finds `'key':` in the header dict and returns the text after the colon.
std::optional<std::string_view> ValueOf(std::string_view header, std::string_view key) {
  for (const char quote : {'\'', '"'}) {
    const std::string needle =
        absl::StrCat(std::string(1, quote), std::string(key), std::string(1, quote));
    size_t pos = header.find(needle);
    if (pos == std::string_view::npos) continue;
    pos += needle.size();
    while (pos < header.size() && header[pos] == ' ') ++pos;
    if (pos >= header.size() || header[pos] != ':') return std::nullopt;
    ++pos;
    while (pos < header.size() && header[pos] == ' ') ++pos;
    return header.substr(pos);
  }
  return std::nullopt;
}

std::string ShapeTuple(const std::vector<int64_t>& dims) {
  if (dims.size() == 1) return absl::StrCat("(", dims[0], ",)");
  return absl::StrCat("(", absl::StrJoin(dims, ", "), ")");
}

}  // namespace

bool NpyHasNativeDtype(PrimitiveType type) {
  if (!IsArrayType(type) || IsNarrowFloatType(type) || IsSubByteInt(type)) return false;
  return type != PrimitiveType::kBF16;
}

absl::StatusOr<std::string> NpyDescr(PrimitiveType type) {
  if (!IsArrayType(type)) {
    return absl::InvalidArgumentError(
        absl::StrCat("no .npy dtype for ", std::string(PrimitiveTypeName(type))));
  }
  if (type == PrimitiveType::kPred) return std::string("|b1");
  const int width = ByteWidth(type);
  char kind;
  if (!NpyHasNativeDtype(type)) {
    kind = 'u';  // raw bits
  } else if (IsComplexType(type)) {
    kind = 'c';
  } else if (IsFloatingPointType(type)) {
    kind = 'f';
  } else if (IsSignedIntegralType(type)) {
    kind = 'i';
  } else {
    kind = 'u';
  }
  return absl::StrCat(width == 1 ? "|" : "<", std::string(1, kind), width);
}

absl::StatusOr<std::string> EncodeNpy(const Literal& array) {
  const Shape& shape = array.shape();
  if (!shape.IsArray()) {
    return absl::InvalidArgumentError(
        absl::StrCat("only arrays can be saved as .npy, not ", shape.ToString()));
  }
  if (array.elided()) {
    return absl::InvalidArgumentError("an elided literal has no data to save");
  }
  HLOGYM_ASSIGN(descr, NpyDescr(shape.element_type()));
  std::string header =
      absl::StrCat("{'descr': '", descr,
                   "', 'fortran_order': False, 'shape': ", ShapeTuple(shape.dimensions()), ", }");
  // magic(6) + version(2) + length(2) + header + '\n', padded to 64 bytes.
  const size_t unpadded = kMagicSize + 2 + 2 + header.size() + 1;
  header.append((64 - unpadded % 64) % 64, ' ');
  header.push_back('\n');
  if (header.size() > 0xffff) return absl::InvalidArgumentError(".npy header too long");
  std::string out(kMagic, kMagicSize);
  out.push_back('\x01');
  out.push_back('\x00');
  out.push_back(static_cast<char>(header.size() & 0xff));
  out.push_back(static_cast<char>(header.size() >> 8));
  out += header;
  const auto raw = array.raw();
  out.append(reinterpret_cast<const char*>(raw.data()), raw.size());
  return out;
}

absl::StatusOr<Literal> DecodeNpy(std::string_view bytes,
                                  std::optional<PrimitiveType> expected_type) {
  if (bytes.size() < kMagicSize + 4 ||
      bytes.substr(0, kMagicSize) != std::string_view(kMagic, kMagicSize)) {
    return Malformed("missing \\x93NUMPY magic");
  }
  const int major = static_cast<uint8_t>(bytes[6]);
  size_t header_len, header_start;
  auto byte = [&](size_t i) { return static_cast<size_t>(static_cast<uint8_t>(bytes[i])); };
  if (major == 1) {
    header_len = byte(8) | byte(9) << 8;
    header_start = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12) return Malformed("truncated header length");
    header_len = byte(8) | byte(9) << 8 | byte(10) << 16 | byte(11) << 24;
    header_start = 12;
  } else {
    return Malformed(absl::StrCat("unsupported version ", major));
  }
  if (bytes.size() < header_start + header_len) return Malformed("truncated header");
  const std::string_view header = bytes.substr(header_start, header_len);
  const std::string_view data = bytes.substr(header_start + header_len);

  // descr
  auto descr_value = ValueOf(header, "descr");
  if (!descr_value || descr_value->empty() ||
      (descr_value->front() != '\'' && descr_value->front() != '"')) {
    return Malformed("no string 'descr'");
  }
  const size_t descr_end = descr_value->find(descr_value->front(), 1);
  if (descr_end == std::string_view::npos) return Malformed("unterminated 'descr'");
  const std::string descr(descr_value->substr(1, descr_end - 1));
  if (descr.size() < 3) return Malformed(absl::StrCat("unsupported descr '", descr, "'"));
  const char order = descr[0];
  if (order == '>') {
    return absl::InvalidArgumentError(
        absl::StrCat("big-endian .npy data ('", descr, "') is not supported"));
  }
  if (order != '<' && order != '|' && order != '=') {
    return Malformed(absl::StrCat("unsupported descr '", descr, "'"));
  }
  const char kind = descr[1];
  int size = 0;
  for (size_t i = 2; i < descr.size(); ++i) {
    if (descr[i] < '0' || descr[i] > '9')
      return Malformed(absl::StrCat("unsupported descr '", descr, "'"));
    size = size * 10 + (descr[i] - '0');
    if (size > 64) return Malformed(absl::StrCat("unsupported descr '", descr, "'"));
  }

  // fortran_order
  auto fortran = ValueOf(header, "fortran_order");
  if (!fortran) return Malformed("no 'fortran_order'");
  if (fortran->starts_with("True")) {
    return absl::InvalidArgumentError("Fortran-order .npy data is not supported (save C order)");
  }
  if (!fortran->starts_with("False")) return Malformed("bad 'fortran_order'");

  // shape
  auto shape_value = ValueOf(header, "shape");
  if (!shape_value || shape_value->empty() || shape_value->front() != '(') {
    return Malformed("no tuple 'shape'");
  }
  const size_t close = shape_value->find(')');
  if (close == std::string_view::npos) return Malformed("unterminated 'shape'");
  std::vector<int64_t> dims;
  {
    int64_t current = -1;
    for (char c : shape_value->substr(1, close - 1)) {
      if (c >= '0' && c <= '9') {
        current = (current < 0 ? 0 : current) * 10 + (c - '0');
        if (current > (int64_t{1} << 48)) return Malformed("dimension too large");
      } else if (c == ',') {
        if (current < 0) return Malformed("empty dimension in 'shape'");
        dims.push_back(current);
        current = -1;
      } else if (c != ' ' && c != 'L') {
        return Malformed(absl::StrCat("unexpected '", std::string(1, c), "' in 'shape'"));
      }
    }
    if (current >= 0) dims.push_back(current);
  }

  // element type
  std::optional<PrimitiveType> own = TypeOfDescr(kind, size);
  PrimitiveType type;
  if (expected_type) {
    type = *expected_type;
    if (!IsArrayType(type)) {
      return absl::InvalidArgumentError(
          absl::StrCat("cannot read .npy data as ", std::string(PrimitiveTypeName(type))));
    }
    const bool same = own && *own == type;
    // raw bits of the same width ("<u2" or "|V2" for bf16, ...)
    const bool raw_bits = !NpyHasNativeDtype(type) && (kind == 'u' || kind == 'i' || kind == 'V') &&
                          size == ByteWidth(type);
    if (!same && !raw_bits) {
      return absl::InvalidArgumentError(absl::StrCat(".npy descr '", descr, "' does not hold ",
                                                     std::string(PrimitiveTypeName(type)),
                                                     " elements"));
    }
  } else {
    if (!own)
      return absl::InvalidArgumentError(absl::StrCat("unsupported .npy descr '", descr, "'"));
    type = *own;
  }

  Literal literal(Shape(type, dims));
  const size_t expected_bytes = literal.raw().size();
  if (data.size() != expected_bytes) {
    return absl::InvalidArgumentError(absl::StrCat(".npy data has ", data.size(), " bytes, shape ",
                                                   ShapeTuple(dims), " of '", descr, "' needs ",
                                                   expected_bytes));
  }
  if (expected_bytes > 0) std::memcpy(literal.mutable_raw().data(), data.data(), expected_bytes);
  return literal;
}

absl::Status WriteNpyFile(const std::string& path, const Literal& array) {
  HLOGYM_ASSIGN(bytes, EncodeNpy(array));
  const std::string tmp = absl::StrCat(path, ".tmp");
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) return absl::PermissionDeniedError(absl::StrCat(path, ": cannot write"));
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    out.close();
    if (!out) {
      std::error_code ec;
      std::filesystem::remove(tmp, ec);
      return absl::InternalError(absl::StrCat(path, ": write failed"));
    }
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    std::filesystem::remove(tmp, ec);
    return absl::InternalError(absl::StrCat(path, ": cannot rename into place"));
  }
  return absl::OkStatus();
}

absl::StatusOr<Literal> ReadNpyFile(const std::string& path,
                                    std::optional<PrimitiveType> expected_type) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat(path, ": cannot open"));
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto literal = DecodeNpy(bytes, expected_type);
  if (!literal.ok()) {
    return absl::Status(literal.status().code(),
                        absl::StrCat(path, ": ", literal.status().message()));
  }
  return literal;
}

std::string NpyLeafFileName(std::string_view stem, const std::vector<int64_t>& tuple_index) {
  std::string name{stem};
  for (int64_t i : tuple_index) absl::StrAppend(&name, ".", i);
  return absl::StrCat(name, ".npy");
}

namespace {

absl::Status SaveLeaf(const std::string& dir, std::string_view stem, const LiteralLeaf& array,
                      std::vector<NpyLeaf>& leaves) {
  NpyLeaf leaf;
  leaf.file = NpyLeafFileName(stem, array.index);
  leaf.tuple_index = array.index;
  leaf.shape = array.array->shape();
  HLOGYM_ASSIGN(descr, NpyDescr(leaf.shape.element_type()));
  leaf.descr = descr;
  HLOGYM_RETURN_IF_ERROR(
      WriteNpyFile((std::filesystem::path(dir) / leaf.file).string(), *array.array));
  leaves.push_back(std::move(leaf));
  return absl::OkStatus();
}

absl::StatusOr<Literal> LoadFrom(const std::string& dir, std::string_view stem, const Shape& shape,
                                 std::vector<int64_t>& path) {
  if (shape.IsTuple()) {
    Literal literal(shape);
    for (int64_t i = 0; i < shape.tuple_shapes_size(); ++i) {
      path.push_back(i);
      auto element = LoadFrom(dir, stem, shape.tuple_shapes(i), path);
      path.pop_back();
      if (!element.ok()) return element.status();
      literal.mutable_tuple_elements()[i] = std::move(*element);
    }
    return literal;
  }
  if (!shape.IsArray()) return Literal(shape);
  const std::string file = (std::filesystem::path(dir) / NpyLeafFileName(stem, path)).string();
  HLOGYM_ASSIGN(literal, ReadNpyFile(file, shape.element_type()));
  if (literal.shape().dimensions() != shape.dimensions()) {
    return absl::InvalidArgumentError(absl::StrCat(file, ": shape ",
                                                   literal.shape().ToString(false), " where ",
                                                   shape.ToString(false), " is expected"));
  }
  // Keep the expected shape (layout, dynamic dimensions); the data is row-major either way.
  Literal out(shape);
  if (!out.mutable_raw().empty()) {
    std::memcpy(out.mutable_raw().data(), literal.raw().data(), out.mutable_raw().size());
  }
  return out;
}

}  // namespace

absl::StatusOr<std::vector<NpyLeaf>> SaveLiteralLeaves(const std::string& dir,
                                                       std::string_view stem,
                                                       const Literal& literal) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return absl::PermissionDeniedError(absl::StrCat(dir, ": cannot create directory"));
  std::vector<NpyLeaf> leaves;
  for (const LiteralLeaf& leaf : literal.ArrayLeaves()) {
    HLOGYM_RETURN_IF_ERROR(SaveLeaf(dir, stem, leaf, leaves));
  }
  return leaves;
}

absl::StatusOr<Literal> LoadLiteralLeaves(const std::string& dir, std::string_view stem,
                                          const Shape& shape) {
  std::vector<int64_t> path;
  return LoadFrom(dir, stem, shape, path);
}

}  // namespace hlogym
