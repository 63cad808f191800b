#include "passes/pass_test_util.h"

#include <optional>
#include <regex>
#include <sstream>
#include <utility>

namespace hlogym::testing {
namespace {

// A pattern line: literal text, where {{regex}} spans are regular expressions.
std::regex CheckPattern(std::string_view pattern) {
  std::string regex;
  size_t i = 0;
  while (i < pattern.size()) {
    size_t open = pattern.find("{{", i);
    size_t end = open == std::string_view::npos ? pattern.size() : open;
    for (size_t j = i; j < end; ++j) {
      char c = pattern[j];
      if (std::string_view("\\^$.|?*+()[]{}").find(c) != std::string_view::npos) regex += '\\';
      regex += c;
    }
    if (open == std::string_view::npos) break;
    size_t close = pattern.find("}}", open + 2);
    if (close == std::string_view::npos) close = pattern.size();
    regex += "(?:" + std::string(pattern.substr(open + 2, close - open - 2)) + ")";
    i = close + 2;
  }
  return std::regex(regex);
}

}  // namespace

PassRun RunPass(Pass& pass, std::string_view hlo) {
  PassRun run;
  auto module = ParseModule(hlo, "test.hlo");
  EXPECT_TRUE(module.ok()) << module.status();
  if (!module.ok()) return run;
  run.module = std::move(*module);
  run.before = PrintModule(*run.module);
  const bool may_change = pass.MayChange(*run.module);
  auto changed = pass.Run(*run.module);
  EXPECT_TRUE(changed.ok()) << changed.status();
  if (!changed.ok()) return run;
  run.changed = *changed;
  EXPECT_TRUE(may_change || !run.changed)
      << "pass " << pass.name() << " changed a module its MayChange said it would not change";
  run.after = PrintModule(*run.module);
  absl::Status verified = VerifyModule(*run.module);
  EXPECT_TRUE(verified.ok()) << verified << "\n" << run.after;
  EXPECT_EQ(run.changed, run.before != run.after)
      << "pass " << pass.name() << " reported changed=" << run.changed << "\nbefore:\n"
      << run.before << "\nafter:\n"
      << run.after;
  return run;
}

PassRun RunPass(std::string_view pass_name, std::string_view hlo) {
  auto pass = PassRegistry::Builtin().Create(pass_name);
  EXPECT_TRUE(pass.ok()) << pass.status();
  if (!pass.ok()) return PassRun();
  return RunPass(**pass, hlo);
}

std::string WithSum(std::string_view entry) {
  return R"(HloModule m
sum {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}
)" + std::string(entry);
}

std::string MatchChecks(std::string_view text, std::string_view checks) {
  std::vector<std::string> lines;
  std::istringstream in{std::string(text)};
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  size_t next_line = 0;  // first line the next CHECK may match
  std::vector<std::pair<std::string, std::regex>> pending_nots;
  auto check_nots = [&](size_t from, size_t to) -> std::string {
    for (const auto& [source, regex] : pending_nots) {
      for (size_t l = from; l < to && l < lines.size(); ++l) {
        if (std::regex_search(lines[l], regex)) {
          return "CHECK-NOT: " + source + " matched line: " + lines[l];
        }
      }
    }
    pending_nots.clear();
    return "";
  };
  std::istringstream directives{std::string(checks)};
  for (std::string directive; std::getline(directives, directive);) {
    size_t start = directive.find_first_not_of(" \t");
    if (start == std::string::npos) continue;
    directive = directive.substr(start);
    auto take = [&](std::string_view prefix) -> std::optional<std::string> {
      if (directive.rfind(prefix, 0) != 0) return std::nullopt;
      std::string rest = directive.substr(prefix.size());
      size_t first = rest.find_first_not_of(' ');
      return first == std::string::npos ? "" : rest.substr(first);
    };
    if (auto pattern = take("CHECK-NOT:")) {
      pending_nots.emplace_back(*pattern, CheckPattern(*pattern));
    } else if (auto pattern = take("CHECK-NEXT:")) {
      std::regex regex = CheckPattern(*pattern);
      if (next_line >= lines.size() || !std::regex_search(lines[next_line], regex)) {
        return "CHECK-NEXT: " + *pattern + " does not match line: " +
               (next_line < lines.size() ? lines[next_line] : "<end of text>");
      }
      ++next_line;
    } else if (auto pattern = take("CHECK:")) {
      std::regex regex = CheckPattern(*pattern);
      size_t l = next_line;
      while (l < lines.size() && !std::regex_search(lines[l], regex)) ++l;
      if (l == lines.size()) return "CHECK: " + *pattern + " not found";
      if (std::string failure = check_nots(next_line, l); !failure.empty()) return failure;
      next_line = l + 1;
    } else {
      return "unknown directive: " + directive;
    }
  }
  return check_nots(next_line, lines.size());
}

}  // namespace hlogym::testing
