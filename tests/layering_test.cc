// The layering of docs/ARCHITECTURE.md, checked on the sources: a file of one layer
// includes only its own layer and the layers beneath it (arrows point down),
// so that a change cannot quietly make a layer depend on one above it.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "scratch.h"

namespace hlogym {
namespace {

namespace fs = std::filesystem;

// Each layer (a folder of src/) and what it may include. text, analysis and
// eval are siblings over hlo; the deep-RL plugin (agents/rl) sits above the
// agents it registers with.
const std::map<std::string, std::set<std::string>>& Allowed() {
  static const auto* allowed = new std::map<std::string, std::set<std::string>>{
      {"hlo", {"hlo"}},
      {"text", {"hlo", "text"}},
      {"analysis", {"hlo", "analysis"}},
      {"eval", {"hlo", "eval"}},
      {"passes", {"hlo", "analysis", "eval", "passes"}},
      {"gym", {"hlo", "text", "analysis", "eval", "passes", "gym"}},
      {"agents", {"hlo", "text", "analysis", "eval", "passes", "gym", "agents"}},
      {"agents/rl", {"hlo", "text", "analysis", "eval", "passes", "gym", "agents", "agents/rl"}},
      {"cli", {"hlo", "text", "analysis", "eval", "passes", "gym", "agents", "agents/rl", "cli"}},
  };
  return *allowed;
}

// The layer of a path relative to src/ ("passes/simplifiers/cse.cc" -> "passes",
// "agents/rl/ppo.cc" -> "agents/rl"); "" when it names none.
std::string LayerOf(const std::string& relative) {
  if (relative.rfind("agents/rl/", 0) == 0) return "agents/rl";
  const std::string top = relative.substr(0, relative.find('/'));
  return Allowed().contains(top) && top != relative ? top : "";
}

// "file:line: layer includes ..." for every include that points up or sideways.
std::vector<std::string> Violations(const fs::path& src) {
  std::vector<std::string> found;
  const std::regex include_line(R"re(^\s*#\s*include\s+"([^"]+)")re");
  for (const fs::directory_entry& entry : fs::recursive_directory_iterator(src)) {
    if (!entry.is_regular_file()) continue;
    const std::string file = fs::relative(entry.path(), src).string();
    const std::string layer = LayerOf(file);
    if (layer.empty()) continue;
    std::ifstream in(entry.path());
    std::string line;
    for (int number = 1; std::getline(in, line); ++number) {
      std::smatch m;
      if (!std::regex_search(line, m, include_line)) continue;
      const std::string target = LayerOf(m[1].str());
      if (!target.empty() && !Allowed().at(layer).contains(target)) {
        found.push_back("src/" + file + ":" + std::to_string(number) + ": " + layer + " includes " +
                        m[1].str() + " (" + target + ")");
      }
    }
  }
  std::sort(found.begin(), found.end());
  return found;
}

TEST(LayeringTest, NoLayerIncludesOneAboveIt) {
  const fs::path src = fs::path(HLOGYM_SOURCE_DIR) / "src";
  ASSERT_TRUE(fs::is_directory(src)) << src;
  std::vector<std::string> violations = Violations(src);
  std::string listed;
  for (const std::string& v : violations) listed += v + "\n";
  EXPECT_TRUE(violations.empty()) << listed;
}

TEST(LayeringTest, TheCheckSeesAnIncludeThatPointsUp) {
  // A pass that includes the gym, and a core agent that includes the plugin.
  const fs::path src = testing::FreshScratchPath("src");
  fs::create_directories(src / "passes");
  fs::create_directories(src / "agents");
  std::ofstream(src / "passes" / "bad_pass.cc")
      << "#include \"hlo/module.h\"\n#include \"gym/environment.h\"\n";
  std::ofstream(src / "agents" / "agent.cc")
      << "#include \"gym/environment.h\"\n#include \"agents/rl/rl.h\"\n";
  std::vector<std::string> violations = Violations(src);
  ASSERT_EQ(violations.size(), 2u);
  EXPECT_EQ(violations[0].find("src/agents/agent.cc:2: agents includes agents/rl/rl.h"), 0u)
      << violations[0];
  EXPECT_EQ(violations[1].find("src/passes/bad_pass.cc:2: passes includes gym/environment.h"), 0u)
      << violations[1];
  fs::remove_all(src);
}

}  // namespace
}  // namespace hlogym
