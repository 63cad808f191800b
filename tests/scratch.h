// Where the unit tests write files: one folder per test process (ctest runs each test in a
// process of its own, several at once), under GoogleTest's temporary directory ($TEST_TMPDIR or
// /tmp), removed with everything in it when the process exits, so that test runs leave nothing
// behind.
#ifndef HLOGYM_TESTS_SCRATCH_H_
#define HLOGYM_TESTS_SCRATCH_H_

#include <unistd.h>

#include <filesystem>
#include <string>
#include <string_view>
#include <system_error>

#include "gtest/gtest.h"

namespace hlogym::testing {

// The process's scratch folder, made on first use.
inline const std::filesystem::path& ScratchDir() {
  struct Folder {
    std::filesystem::path path = std::filesystem::path(::testing::TempDir()) /
                                 ("hlogym_tests_" + std::to_string(::getpid()));
    Folder() {
      std::filesystem::remove_all(path);
      std::filesystem::create_directories(path);
    }
    ~Folder() {
      std::error_code ignored;  // nothing to report to at exit
      std::filesystem::remove_all(path, ignored);
    }
  };
  static const Folder folder;
  return folder.path;
}

// `name` in the scratch folder, with nothing there: whatever an earlier test of the same
// process left under that name is removed.
inline std::filesystem::path FreshScratchPath(std::string_view name) {
  std::filesystem::path path = ScratchDir() / name;
  std::filesystem::remove_all(path);
  return path;
}

}  // namespace hlogym::testing

#endif  // HLOGYM_TESTS_SCRATCH_H_
