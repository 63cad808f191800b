// Named pipelines. xla-cpu-default follows XLA's CPU compiler
// (RunHloPassesThroughLayoutAssn) up to layout assignment, limited to the
// passes hlogym implements; the rest are listed as missing.
#include <memory>
#include <vector>

#include "passes/registry.h"

namespace hlogym {

const std::vector<PipelineInfo>& BuiltinPipelines() {
  static const std::vector<PipelineInfo>* pipelines = new std::vector<PipelineInfo>();
  return *pipelines;
}

}  // namespace hlogym
