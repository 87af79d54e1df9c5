// Per-environment state: each JavaScript thread (main or worker) that loads the addon has one.
#pragma once
#include <napi.h>

#include <cstdint>

#include "core/sampler/sampler.h"

namespace bulwark {
namespace binding {

struct EnvLifetime;

struct EnvData {
  uint64_t id = 0;                  // owner id for the regions this environment opens
  int loopSlot = -1;                // this thread's slot in the signals block, -1 if none was free
  int32_t threadId = 0;             // worker_threads threadId, 0 on the main thread
  EnvLifetime* lifetime = nullptr;  // owned by its cleanup hook
  Napi::FunctionReference cpuReaderConstructor;
  Napi::FunctionReference memoryReaderConstructor;
  Napi::FunctionReference heavyKeeperConstructor;
};

inline EnvData* GetEnvData(Napi::Env env) { return env.GetInstanceData<EnvData>(); }

// Module pieces: each adds its functions to `exports`.
void InitRegion(Napi::Env env, Napi::Object exports);
void InitSignals(Napi::Env env, Napi::Object exports);
void InitLayout(Napi::Env env, Napi::Object exports);
void InitHeavyKeeper(Napi::Env env, Napi::Object exports);
void InitKeyed(Napi::Env env, Napi::Object exports);
#ifdef BULWARK_TEST_NATIVES
// Natives only the tests use (native/binding/test/), in development builds only: windowAdd, CpuReader, MemoryReader,
// and the keyed table's fingerprint and acquire.
void InitWindow(Napi::Env env, Napi::Object exports);
void InitCpuReader(Napi::Env env, Napi::Object exports);
void InitMemoryReader(Napi::Env env, Napi::Object exports);
void InitKeyedTest(Napi::Env env, Napi::Object exports);
#endif

// Starts measuring this environment's event loop and registers the one cleanup hook that ends its native lifetime
// (native/binding/environment.cc).
void StartEnvironment(Napi::Env env, EnvData* data);
// This environment uses the sampler from now until it goes away; `defaults` configure it if nothing has yet.
void StartSampler(EnvData* data, const SamplerOptions& defaults);

}  // namespace binding
}  // namespace bulwark
