// libFuzzer target for the HLO text parser. Besides "never crash", it checks
// the round-trip property on every input the parser accepts: printing,
// re-parsing and printing again gives the same text.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "analysis/verifier.h"
#include "text/parser.h"
#include "text/printer.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto module = hlogym::ParseModule(text, "fuzz");
  if (!module.ok()) return 0;
  (void)hlogym::VerifyModule(**module);
  (void)(*module)->Clone();
  std::string printed = hlogym::PrintModule(**module);
  auto reparsed = hlogym::ParseModule(printed, "printed");
  if (!reparsed.ok()) {
    std::fprintf(stderr, "printed module does not parse: %s\n--- printed ---\n%s\n",
                 std::string(reparsed.status().message()).c_str(), printed.c_str());
    std::abort();
  }
  std::string reprinted = hlogym::PrintModule(**reparsed);
  if (reprinted != printed) {
    std::fprintf(stderr, "round trip is not stable\n--- first ---\n%s\n--- second ---\n%s\n",
                 printed.c_str(), reprinted.c_str());
    std::abort();
  }
  return 0;
}
