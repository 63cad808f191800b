// NumPy .npy files for exchanging evaluator inputs and outputs with other
// runtimes (XLA through jaxlib, NumPy scripts).
//
// Format written: .npy version 1.0 (magic "\x93NUMPY", version bytes 1 0, a
// little-endian uint16 header length, an ASCII dict
// "{'descr': ..., 'fortran_order': False, 'shape': (...), }" padded with
// spaces and ended by '\n' so that the data starts at a multiple of 64
// bytes), then the raw little-endian C-order (row-major) elements, which is
// exactly a Literal's storage.
//
// Element types without a NumPy dtype are written as the unsigned integer of
// their storage width holding the raw bits: bf16 as "<u2", the f8/f4 formats
// as "|u1"; sub-byte integers (one byte per element in a Literal) as "|i1" or
// "|u1". The real type must then travel beside the file (the run manifest
// that `hlogym run --save-inputs/--save-outputs` writes records it).
//
// The reader accepts versions 1.0, 2.0 and 3.0, C order only, little-endian
// or byte-order-free descrs. When the expected element type is given, a file
// whose descr is that type's own dtype or its raw-bits dtype (same width:
// "<u2"/"<i2"/"|V2" for bf16, ...) is accepted as that type.
#ifndef HLOGYM_EVAL_NPY_IO_H_
#define HLOGYM_EVAL_NPY_IO_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "hlo/literal.h"
#include "hlo/primitive_type.h"
#include "hlo/shape.h"

namespace hlogym {

// The NumPy descr written for `type` ("<f4", "|b1", "<u2" for bf16, ...);
// InvalidArgument for tuple/token/opaque.
absl::StatusOr<std::string> NpyDescr(PrimitiveType type);
// Whether NpyDescr(type) is the type's own dtype (false for bf16, the f8/f4
// formats and the sub-byte integers, which are written as raw bits).
bool NpyHasNativeDtype(PrimitiveType type);

// The bytes of an .npy file holding `array` (an array literal, not elided).
absl::StatusOr<std::string> EncodeNpy(const Literal& array);

// Parses an .npy file's bytes. Without `expected_type` the element type comes
// from the descr (u2 stays u16); with it, the descr must be compatible (see
// above). InvalidArgument on malformed input or a size mismatch.
absl::StatusOr<Literal> DecodeNpy(std::string_view bytes,
                                  std::optional<PrimitiveType> expected_type = std::nullopt);

// File versions (WriteNpyFile writes a temporary file and renames it).
absl::Status WriteNpyFile(const std::string& path, const Literal& array);
absl::StatusOr<Literal> ReadNpyFile(const std::string& path,
                                    std::optional<PrimitiveType> expected_type = std::nullopt);

// One array leaf of a literal saved under a directory.
struct NpyLeaf {
  std::string file;                  // file name inside the directory
  std::vector<int64_t> tuple_index;  // index path inside the saved literal
  Shape shape;                       // the leaf's array shape (real element type)
  std::string descr;                 // the NumPy descr written
};

// The file name of the leaf of `stem` at `tuple_index`: "stem.npy" for the
// empty path, "stem.1.0.npy" for {1, 0}.
std::string NpyLeafFileName(std::string_view stem, const std::vector<int64_t>& tuple_index);

// Writes every array leaf of `literal` as DIR/<stem>[.i.j...].npy (tokens and
// empty tuples write nothing) and returns the leaves in depth-first order.
// The directory is created when missing.
absl::StatusOr<std::vector<NpyLeaf>> SaveLiteralLeaves(const std::string& dir,
                                                       std::string_view stem,
                                                       const Literal& literal);

// Reads back a literal of `shape` saved by SaveLiteralLeaves (each leaf's
// shape and type must match; a token leaf needs no file).
absl::StatusOr<Literal> LoadLiteralLeaves(const std::string& dir, std::string_view stem,
                                          const Shape& shape);

}  // namespace hlogym

#endif  // HLOGYM_EVAL_NPY_IO_H_
