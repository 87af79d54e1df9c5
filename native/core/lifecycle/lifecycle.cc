#include "core/lifecycle/lifecycle.h"

#include <mutex>

#include "core/platform/thread.h"
#include "core/region/shared_region.h"

namespace bulwark {
namespace lifecycle {

namespace {

void AtProcessExit() {
  Sampler::Instance().Shutdown();
  RegionRegistry::Instance().CloseAll();
}

}  // namespace

void EnvStarted(const SamplerOptions& defaults) {
  static std::once_flag registered;
  std::call_once(registered, [] { OnProcessExit(AtProcessExit); });
  Sampler::Instance().Acquire(defaults);
}

void EnvEnded(uint64_t envId, bool usedSampler) {
  RegionRegistry::Instance().CloseOwnedBy(envId);
  if (usedSampler) Sampler::Instance().Release();
}

}  // namespace lifecycle
}  // namespace bulwark
