// The native side's lifetime in a process, in one place: what a JavaScript environment (the main thread or a
// worker) holds, and what process exit gives back.
//
// - EnvStarted: an environment uses the sampler (its thread runs while any environment does). The first call
//   registers the process-exit handler.
// - EnvEnded: an environment goes away (natural exit, worker.terminate(), process.exit() in a worker): its regions
//   are closed (members detached, lanes given back, the name removed by the last member), then its use of the
//   sampler is released.
// - Process exit (std::atexit: environment cleanup hooks do not run on the main thread's process.exit() or on an
//   uncaught exception): the sampler thread is stopped and joined first, so that it reaps nothing meanwhile, then
//   every region still open is closed as a clean exit would close it. Not on Windows (platform/thread.h,
//   OnProcessExit): there the other processes reap this one's members.
#pragma once
#include <cstdint>

#include "core/sampler/sampler.h"

namespace bulwark {
namespace lifecycle {

// `defaults` configure the sampler if nothing has configured it yet in this process.
void EnvStarted(const SamplerOptions& defaults);
// `usedSampler`: EnvStarted was called for this environment.
void EnvEnded(uint64_t envId, bool usedSampler);

}  // namespace lifecycle
}  // namespace bulwark
