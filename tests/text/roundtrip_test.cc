// Round trips (print(parse(print(parse(x)))) == print(parse(x))) over
// hand-written modules and every module under datasets/smoke, plus printer
// output details and file I/O.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "scratch.h"
#include "text/file_io.h"
#include "text/parser.h"
#include "text/printer.h"
#include "text_test_util.h"

namespace hlogym {
namespace {

using testing::ExpectRoundTrip;
using testing::FindInstruction;
using testing::MustParse;

const char kSmall[] = R"(HloModule small, entry_computation_layout={(f32[2]{0})->f32[2]{0}}

add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}

ENTRY main {
  p = f32[2]{0} parameter(0)
  z = f32[] constant(0)
  r = f32[] reduce(p, z), dimensions={0}, to_apply=add
  b = f32[2]{0} broadcast(r), dimensions={}
  ROOT m = f32[2]{0} multiply(p, b), metadata={op_name="mul"}
}
)";

TEST(PrinterTest, CanonicalLongForm) {
  auto m = MustParse(kSmall);
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(PrintModule(*m), R"(HloModule small, entry_computation_layout={(f32[2]{0})->f32[2]{0}}

%add (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(f32[] %a, f32[] %b)
}

ENTRY %main (p: f32[2]) -> f32[2] {
  %p = f32[2]{0} parameter(0)
  %z = f32[] constant(0)
  %r = f32[] reduce(f32[2]{0} %p, f32[] %z), dimensions={0}, to_apply=%add
  %b = f32[2]{0} broadcast(f32[] %r), dimensions={}
  ROOT %m = f32[2]{0} multiply(f32[2]{0} %p, f32[2]{0} %b), metadata={op_name="mul"}
}
)");
}

TEST(PrinterTest, ShortFormAndOptions) {
  auto m = MustParse(kSmall);
  ASSERT_NE(m, nullptr);
  std::string s = PrintModule(*m, PrintOptions::Short());
  EXPECT_NE(s.find("  ROOT m = f32[2]{0} multiply(p, b), metadata={op_name=\"mul\"}\n"),
            std::string::npos);
  EXPECT_NE(s.find("ENTRY main (p: f32[2]) -> f32[2] {"), std::string::npos);
  PrintOptions no_meta;
  no_meta.print_metadata = false;
  EXPECT_EQ(PrintModule(*m, no_meta).find("metadata"), std::string::npos);
  PrintOptions no_raw;
  no_raw.print_raw_attributes = false;
  EXPECT_EQ(PrintModule(*m, no_raw).find("metadata"), std::string::npos);
}

TEST(PrinterTest, PrintInstructionAndComputation) {
  auto m = MustParse(kSmall);
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(PrintInstruction(*FindInstruction(*m, "r")),
            "%r = f32[] reduce(f32[2]{0} %p, f32[] %z), dimensions={0}, to_apply=%add");
  EXPECT_EQ(PrintInstruction(*FindInstruction(*m, "m"), PrintOptions::Short()),
            "ROOT m = f32[2]{0} multiply(p, b), metadata={op_name=\"mul\"}");
  std::string c = PrintComputation(*m->FindComputation("add"));
  EXPECT_EQ(c.substr(0, 38), "%add (a: f32[], b: f32[]) -> f32[] {\n ");
}

// XLA's parser reads an absent transpose_a as its proto's invalid zero, which jaxlib's
// StableHLO import rejects: NO_TRANSPOSE is written out.
TEST(PrinterTest, TriangularSolveAlwaysSaysWhetherItTransposes) {
  auto m = MustParse(R"(HloModule m
ENTRY e {
  a = f32[3,3] parameter(0)
  b = f32[3,2] parameter(1)
  ROOT x = f32[3,2] triangular-solve(a, b), left_side=true, lower=true, transpose_a=NO_TRANSPOSE
}
)");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(PrintInstruction(*FindInstruction(*m, "x"), PrintOptions::Short()),
            "ROOT x = f32[3,2] triangular-solve(a, b), left_side=true, lower=true, "
            "transpose_a=NO_TRANSPOSE");
}

TEST(PrinterTest, IndexCommentsOnLongOperandLists) {
  auto m = MustParse(R"(HloModule m
ENTRY e {
  a = f32[] parameter(0)
  ROOT t = (f32[], f32[], f32[], f32[], f32[], f32[], f32[]) tuple(a, a, a, a, a, a, a)
}
)");
  ASSERT_NE(m, nullptr);
  std::string s = PrintModule(*m, PrintOptions::Short());
  EXPECT_NE(s.find("tuple(a, a, a, a, a, /*index=5*/a, a)"), std::string::npos) << s;
}

TEST(PrinterTest, LargeConstantsElided) {
  auto m = MustParse(R"(HloModule m
ENTRY e {
  a = s32[12] constant({0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11})
  ROOT b = s32[2] constant({1, 2})
}
)");
  ASSERT_NE(m, nullptr);
  PrintOptions options;
  options.print_large_constants = false;
  std::string s = PrintModule(*m, options);
  EXPECT_NE(s.find("s32[12] constant({...})"), std::string::npos) << s;
  EXPECT_NE(s.find("constant({1, 2})"), std::string::npos) << s;
  auto reparsed = MustParse(s);
  ASSERT_NE(reparsed, nullptr);
  EXPECT_TRUE(FindInstruction(*reparsed, "a")->literal().elided());
  EXPECT_NE(PrintModule(*m).find("constant({0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11})"),
            std::string::npos);
}

TEST(PrinterTest, ConstantValuesSurviveRoundTrip) {
  const char* text = R"(HloModule m
ENTRY e {
  a = f32[3] constant({0.1, -3.40282347e+38, 1e-45})
  b = bf16[2] constant({1.5, -inf})
  c = f64[] constant(0.30000000000000004)
  d = s64[] constant(-9223372036854775808)
  e = c64[] constant((1.25, -2))
  ROOT t = (f32[3], bf16[2]) tuple(a, b)
}
)";
  auto m = MustParse(text);
  ASSERT_NE(m, nullptr);
  auto m2 = MustParse(PrintModule(*m));
  ASSERT_NE(m2, nullptr);
  for (const char* name : {"a", "b", "c", "d", "e"}) {
    EXPECT_TRUE(FindInstruction(*m, name)->literal() == FindInstruction(*m2, name)->literal())
        << name;
  }
}

TEST(PrinterTest, CalleesBeforeCallersAndRootMarker) {
  auto m = MustParse(R"(HloModule m
ENTRY e {
  p = f32[] parameter(0)
  ROOT c = f32[] call(p), to_apply=callee
  dead = f32[] negate(p)
}
callee {
  ROOT q = f32[] parameter(0)
}
)");
  ASSERT_NE(m, nullptr);
  std::string s = PrintModule(*m);
  // Callees first, as XLA's parser needs, although the entry was read first.
  EXPECT_LT(s.find("%callee ("), s.find("ENTRY %e"));
  EXPECT_NE(s.find("ROOT %c = f32[] call(f32[] %p), to_apply=%callee"), std::string::npos);
  EXPECT_NE(s.find("  %dead = f32[] negate(f32[] %p)\n"), std::string::npos);
  ExpectRoundTrip(s);
}

// Hand-written modules covering many opcodes at once.
const char* const kHandWritten[] = {
    kSmall,
    R"(HloModule dyn
ENTRY e {
  p = f32[<=8,?]{1,0} parameter(0)
  s = s32[] get-dimension-size(p), dimensions={0}
  ROOT r = f32[<=8,?]{1,0} set-dimension-size(p, s), dimensions={0}
}
)",
    R"(HloModule tiles, is_scheduled=true
ENTRY e {
  p = bf16[256,128]{1,0:T(8,128)(2,1)S(1)} parameter(0)
  c = bf16[256,128]{0,1:T(8,128)(2,1)} copy(p)
  cs = (bf16[256,128]{1,0}, bf16[256,128]{1,0}, u32[]) copy-start(c), cross_program_prefetch_index=0
  ROOT cd = bf16[256,128]{1,0} copy-done(cs)
}
)",
    R"(HloModule map
f {
  a = f32[] parameter(0)
  ROOT n = f32[] negate(a)
}
ENTRY e {
  p = f32[4] parameter(0)
  m = f32[4] map(p), dimensions={0}, to_apply=f
  t = (f32[4]) tuple(m)
  ob = (f32[4]) opt-barrier(t)
  ROOT g = f32[4] get-tuple-element(t), index=0
}
)",
    R"(HloModule sendrecv
ENTRY e {
  tok = token[] after-all()
  r = (f32[4], u32[], token[]) recv(tok), channel_id=1, is_host_transfer=true
  rd = (f32[4], token[]) recv-done(r), channel_id=1, is_host_transfer=true
  d = f32[4] get-tuple-element(rd), index=0
  s = (f32[4], u32[], token[]) send(d, tok), channel_id=2
  sd = token[] send-done(s), channel_id=2
  ROOT res = f32[4] domain(d), domain={kind="sharding", entry={maximal device=0}, exit={replicated}}
}
)",
};

TEST(RoundTripTest, HandWritten) {
  int index = 0;
  for (const char* text : kHandWritten) {
    ExpectRoundTrip(text, "hand-written #" + std::to_string(index++));
  }
}

TEST(RoundTripTest, OpaqueAndEmptyTuple) {
  ExpectRoundTrip(R"(HloModule m
ENTRY e {
  p = opaque[] parameter(0)
  t = () tuple()
  ROOT r = (opaque[], ()) tuple(p, t)
}
)");
}

std::vector<std::filesystem::path> SmokeFiles() {
  std::vector<std::filesystem::path> files;
  std::filesystem::path root = std::filesystem::path(HLOGYM_SOURCE_DIR) / "datasets" / "smoke";
  std::error_code ec;
  if (!std::filesystem::exists(root, ec)) return files;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(root, ec)) {
    if (!entry.is_regular_file()) continue;
    std::string name = entry.path().filename().string();
    auto ends_with = [&](std::string_view s) {
      return name.size() >= s.size() && name.compare(name.size() - s.size(), s.size(), s) == 0;
    };
    if (ends_with(".hlo") || ends_with(".hlo.gz") || ends_with(".hlo.zst") ||
        (ends_with(".txt") && name != "default_suite.txt")) {
      files.push_back(entry.path());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

TEST(RoundTripTest, EverySmokeFile) {
  std::vector<std::filesystem::path> files = SmokeFiles();
  if (files.empty()) FAIL() << "no datasets/smoke files";
  for (const auto& path : files) {
    auto text = ReadTextFile(path.string());
    ASSERT_TRUE(text.ok()) << text.status().message();
    std::string printed = ExpectRoundTrip(*text, path.string());
    EXPECT_FALSE(printed.empty()) << path;
    // The op count is the parser's instruction count; every instruction
    // line of the input became an instruction.
    auto module = ParseModule(*text, path.string());
    ASSERT_TRUE(module.ok());
    EXPECT_GT((*module)->instruction_count(), 0) << path;
  }
}

TEST(RoundTripTest, SmokeDebugInfoKeepsStackFrames) {
  std::filesystem::path path =
      std::filesystem::path(HLOGYM_SOURCE_DIR) / "datasets" / "smoke" / "cnn_train.debuginfo.hlo";
  if (!std::filesystem::exists(path)) FAIL();
  auto module = LoadModule(path.string());
  ASSERT_TRUE(module.ok()) << module.status().message();
  EXPECT_EQ((*module)->trailer().rfind("FileNames", 0), 0u);
  EXPECT_NE((*module)->trailer().find("StackFrames"), std::string::npos);
}

// ---------------------------------------------------------------------------
// File I/O.

class FileIoTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ =
        testing::FreshScratchPath(::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
  }
  std::filesystem::path dir_;
};

TEST_F(FileIoTest, PlainGzipAndZstdRoundTrip) {
  std::string contents = std::string(kSmall) + std::string(100000, ' ');
  for (const char* name : {"a.hlo", "b.hlo.gz", "c.hlo.zst"}) {
    std::string path = (dir_ / name).string();
    ASSERT_TRUE(WriteTextFileAtomically(path, contents).ok()) << name;
    auto read = ReadTextFile(path);
    ASSERT_TRUE(read.ok()) << read.status().message();
    EXPECT_EQ(*read, contents) << name;
  }
  // Compressed files really are compressed.
  EXPECT_LT(std::filesystem::file_size(dir_ / "b.hlo.gz"), contents.size() / 10);
  EXPECT_LT(std::filesystem::file_size(dir_ / "c.hlo.zst"), contents.size() / 10);
  // No temporary files are left behind.
  int count = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir_)) (void)e, ++count;
  EXPECT_EQ(count, 3);
}

TEST_F(FileIoTest, DetectsCompressionByMagicNotExtension) {
  std::string gz = (dir_ / "x.gz").string();
  ASSERT_TRUE(WriteTextFileAtomically(gz, kSmall).ok());
  std::filesystem::rename(gz, dir_ / "renamed.hlo");
  auto module = LoadModule((dir_ / "renamed.hlo").string());
  ASSERT_TRUE(module.ok()) << module.status().message();
  EXPECT_EQ((*module)->name(), "small");
}

TEST_F(FileIoTest, Errors) {
  auto missing = ReadTextFile((dir_ / "nope.hlo").string());
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  EXPECT_NE(std::string(missing.status().message()).find("nope.hlo"), std::string::npos);

  // Truncated gzip.
  std::string gz = (dir_ / "t.hlo.gz").string();
  ASSERT_TRUE(WriteTextFileAtomically(gz, std::string(kSmall) + std::string(5000, 'x')).ok());
  std::string bytes;
  {
    std::ifstream in(gz, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  {
    std::ofstream out(gz, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size() / 2));
  }
  auto truncated = ReadTextFile(gz);
  EXPECT_FALSE(truncated.ok());

  // Parse errors carry the file name.
  std::string bad = (dir_ / "bad.hlo").string();
  ASSERT_TRUE(
      WriteTextFileAtomically(bad, "HloModule m\nENTRY e {\n  ROOT a = f32[] bogus()\n}\n").ok());
  auto module = LoadModule(bad);
  ASSERT_FALSE(module.ok());
  EXPECT_EQ(std::string(module.status().message()), bad + ":3:18: error: unknown opcode 'bogus'");

  // Writing into a missing directory fails without creating anything.
  EXPECT_FALSE(WriteTextFileAtomically((dir_ / "no" / "such" / "dir.hlo").string(), "x").ok());
}

TEST_F(FileIoTest, AtomicOverwrite) {
  std::string path = (dir_ / "o.hlo").string();
  ASSERT_TRUE(WriteTextFileAtomically(path, "first").ok());
  ASSERT_TRUE(WriteTextFileAtomically(path, "second").ok());
  auto read = ReadTextFile(path);
  ASSERT_TRUE(read.ok());
  EXPECT_EQ(*read, "second");
}

}  // namespace
}  // namespace hlogym
