// Small passes and modules for the gym tests, independent of the built-in
// passes (which other tests cover).
#ifndef HLOGYM_TESTS_GYM_GYM_TEST_UTIL_H_
#define HLOGYM_TESTS_GYM_GYM_TEST_UTIL_H_

#include <filesystem>
#include <fstream>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "hlo/status_macros.h"
#include "passes/pass.h"
#include "passes/registry.h"
#include "scratch.h"

namespace hlogym::testing {

// Removes unused non-parameter instructions everywhere (to a fixed point).
class TestDce : public Pass {
 public:
  std::string_view name() const override { return "test-dce"; }
  absl::StatusOr<bool> Run(Module& module) override {
    bool changed = false, again = true;
    while (again) {
      again = false;
      for (const auto& computation : module.computations()) {
        std::vector<Instruction*> dead;
        for (const auto& inst : computation->instructions()) {
          if (inst->user_count() == 0 && !inst->IsRoot() && inst->opcode() != Opcode::kParameter &&
              inst->control_successors().empty()) {
            dead.push_back(inst.get());
          }
        }
        for (Instruction* inst : dead) {
          HLOGYM_RETURN_IF_ERROR(computation->RemoveInstruction(inst));
          changed = again = true;
        }
      }
    }
    return changed;
  }
};

// add(x, zero constant) -> x (leaves the add dead).
class TestAddZero : public Pass {
 public:
  std::string_view name() const override { return "test-add-zero"; }
  absl::StatusOr<bool> Run(Module& module) override {
    bool changed = false;
    for (const auto& computation : module.computations()) {
      for (const auto& inst : computation->instructions()) {
        if (inst->opcode() != Opcode::kAdd || inst->user_count() + (inst->IsRoot() ? 1 : 0) == 0) {
          continue;
        }
        Instruction* c = inst->operand(1);
        if (c->IsConstant() && c->literal().IsAll(0) &&
            inst->operand(0)->shape() == inst->shape()) {
          HLOGYM_RETURN_IF_ERROR(inst->ReplaceAllUsesWith(inst->operand(0)));
          changed = true;
        }
      }
    }
    return changed;
  }
};

class TestNoop : public Pass {
 public:
  std::string_view name() const override { return "test-noop"; }
  // Its pre-check rules every module out, so the gym never runs it.
  bool MayChange(const Module&) const override { return false; }
  absl::StatusOr<bool> Run(Module&) override { return false; }
};

// Fails after scribbling on the module (the gym must not keep the scribble).
class TestFail : public Pass {
 public:
  std::string_view name() const override { return "test-fail"; }
  absl::StatusOr<bool> Run(Module& module) override {
    module.entry_computation()->root_instruction()->set_name("scribbled");
    return absl::InternalError("test-fail always fails");
  }
};

class TestThrow : public Pass {
 public:
  std::string_view name() const override { return "test-throw"; }
  absl::StatusOr<bool> Run(Module&) override { throw std::runtime_error("test-throw threw"); }
};

inline const PassRegistry& TestRegistry() {
  static const PassRegistry* registry = [] {
    auto* r = new PassRegistry();
    r->Register({"test-dce", "dce", [] { return std::make_unique<TestDce>(); }});
    r->Register({"test-add-zero", "x+0", [] { return std::make_unique<TestAddZero>(); }});
    r->Register({"test-noop", "nothing", [] { return std::make_unique<TestNoop>(); }});
    r->Register({"test-fail", "fails", [] { return std::make_unique<TestFail>(); }});
    r->Register({"test-throw", "throws", [] { return std::make_unique<TestThrow>(); }});
    return r;
  }();
  return *registry;
}

// 7 instructions: one dead multiply, one add of zero.
inline constexpr const char* kTestModule = R"(HloModule test

ENTRY main {
  p = f32[4] parameter(0)
  c = f32[4] constant({0, 0, 0, 0})
  dead = f32[4] multiply(p, p)
  a = f32[4] add(p, c)
  e = f32[4] exponential(a)
  t = f32[4] tanh(e)
  ROOT r = f32[4] negate(t)
}
)";

// Writes kTestModule (or `text`) to a file in the scratch folder; returns its path.
inline std::string WriteTestModule(const std::string& name, const char* text = kTestModule) {
  const std::filesystem::path path = FreshScratchPath(name);
  std::ofstream(path) << text;
  return path.string();
}

}  // namespace hlogym::testing

#endif  // HLOGYM_TESTS_GYM_GYM_TEST_UTIL_H_
