// Reading and writing module files: plain text, gzip (.gz) or zstd (.zst),
// "-" for standard input/output.
#ifndef HLOGYM_TEXT_FILE_IO_H_
#define HLOGYM_TEXT_FILE_IO_H_

#include <memory>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "hlo/module.h"

namespace hlogym {

// The file's contents, decompressed according to its magic bytes (not its
// extension). NotFound / InvalidArgument errors name the file.
absl::StatusOr<std::string> ReadTextFile(const std::string& path);

// Writes `contents` (compressed when the path ends in .gz or .zst) to a
// temporary file beside `path` and renames it into place, so a failure never
// leaves a partial file. "-" writes to standard output.
absl::Status WriteTextFileAtomically(const std::string& path, std::string_view contents);

// ReadTextFile followed by ParseModule, with the path in error messages. A
// path that does not exist is looked up as a module name (LocateModule in
// text/module_locator.h: "gpt2/<name>", "<name>", "smoke/<name>").
absl::StatusOr<std::unique_ptr<Module>> LoadModule(const std::string& path);

}  // namespace hlogym

#endif  // HLOGYM_TEXT_FILE_IO_H_
