// Module entry point: one EnvData per JavaScript thread, then each piece adds its functions.
#include <napi.h>

#include <atomic>

#include "binding/env_data.h"

namespace bulwark {
namespace binding {

namespace {

std::atomic<uint64_t> g_nextEnvId{1};

// The TypeScript loader passes worker_threads.threadId, recorded in the member slots this thread claims.
Napi::Value SetThreadId(const Napi::CallbackInfo& info) {
  EnvData* data = GetEnvData(info.Env());
  if (data != nullptr && info.Length() > 0 && info[0].IsNumber())
    data->threadId = info[0].As<Napi::Number>().Int32Value();
  return info.Env().Undefined();
}

Napi::Object Init(Napi::Env env, Napi::Object exports) {
  auto* data = new EnvData();
  data->id = g_nextEnvId.fetch_add(1);
  env.SetInstanceData<EnvData>(data);
  StartEnvironment(env, data);
  exports.Set("setThreadId", Napi::Function::New(env, SetThreadId, "setThreadId"));
  exports.Set("napiVersion", Napi::Number::New(env, NAPI_VERSION));
  InitLayout(env, exports);
  InitRegion(env, exports);
  InitSignals(env, exports);
  InitHeavyKeeper(env, exports);
  InitKeyed(env, exports);
#ifdef BULWARK_TEST_NATIVES
  InitWindow(env, exports);
  InitCpuReader(env, exports);
  InitMemoryReader(env, exports);
  InitKeyedTest(env, exports);
#endif
  return exports;
}

}  // namespace

}  // namespace binding
}  // namespace bulwark

static Napi::Object InitBulwark(Napi::Env env, Napi::Object exports) { return bulwark::binding::Init(env, exports); }

NODE_API_MODULE(bulwark, InitBulwark)
