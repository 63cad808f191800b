#include "gym/module_state.h"

namespace hlogym {

std::shared_ptr<const ModuleState> ModuleState::Make(std::unique_ptr<Module> module) {
  std::shared_ptr<ModuleState> state(new ModuleState());
  state->stats_ = ComputeOpStats(*module);
  state->module_ = std::move(module);
  return state;
}

const Fingerprint& ModuleState::fingerprint() const {
  std::call_once(fingerprint_once_, [this] { fingerprint_ = ModuleFingerprint(*module_); });
  return fingerprint_;
}

const CostFeatures& ModuleState::cost() const {
  std::call_once(cost_once_, [this] { cost_ = ComputeModuleCost(*module_); });
  return cost_;
}

}  // namespace hlogym
