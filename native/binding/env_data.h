// Per-environment state: each JavaScript thread (main or worker) that loads the addon has one.
#pragma once
#include <napi.h>

#include <cstdint>

namespace bulwark {
namespace binding {

struct LoopMonitor;

struct EnvData {
  uint64_t id = 0;       // owner id for the regions this environment opens
  int loopSlot = -1;     // this thread's slot in the signals block, -1 if none was free
  int32_t threadId = 0;  // worker_threads threadId, 0 on the main thread
  LoopMonitor* monitor = nullptr;
  Napi::FunctionReference cpuReaderConstructor;
  Napi::FunctionReference heavyKeeperConstructor;
};

inline EnvData* GetEnvData(Napi::Env env) { return env.GetInstanceData<EnvData>(); }

// Module pieces: each adds its functions to `exports`.
void InitRegion(Napi::Env env, Napi::Object exports);
void InitSignals(Napi::Env env, Napi::Object exports);
void InitCpuReader(Napi::Env env, Napi::Object exports);
void InitWindow(Napi::Env env, Napi::Object exports);
void InitLayout(Napi::Env env, Napi::Object exports);
void InitHeavyKeeper(Napi::Env env, Napi::Object exports);

// Starts measuring this environment's event loop; stops automatically when the environment goes away.
void StartLoopMonitor(Napi::Env env, EnvData* data);

}  // namespace binding
}  // namespace bulwark
