// Hooks into one event loop (libuv prepare/check handles, unreferenced so they never keep the loop alive) and
// registers it with the sampler. Torn down by an async cleanup hook, which lets the handles close properly when a
// worker thread exits.
#include <uv.h>

#include "binding/env_data.h"
#include "core/platform/clock.h"
#include "core/region/shared_region.h"
#include "core/sampler/sampler.h"

namespace bulwark {
namespace binding {

struct LoopMonitor {
  uv_loop_t* loop = nullptr;
  uv_prepare_t prepare;
  uv_check_t check;
  int slot = -1;
  int openHandles = 0;
  uint64_t envId = 0;
  napi_async_cleanup_hook_handle cleanup = nullptr;
};

namespace {

uint64_t IdleTime(void* ctx) { return uv_metrics_idle_time(static_cast<LoopMonitor*>(ctx)->loop); }

void OnPrepare(uv_prepare_t* handle) {
  auto* m = static_cast<LoopMonitor*>(handle->data);
  if (m->slot >= 0) Sampler::Instance().OnPollEnter(m->slot, MonotonicNs(), uv_metrics_idle_time(m->loop));
}

void OnCheck(uv_check_t* handle) {
  auto* m = static_cast<LoopMonitor*>(handle->data);
  if (m->slot >= 0) Sampler::Instance().OnPollExit(m->slot, MonotonicNs());
}

void OnHandleClosed(uv_handle_t* handle) {
  auto* m = static_cast<LoopMonitor*>(handle->data);
  if (--m->openHandles > 0) return;
  napi_async_cleanup_hook_handle cleanup = m->cleanup;
  delete m;
  napi_remove_async_cleanup_hook(cleanup);
}

void OnEnvCleanup(napi_async_cleanup_hook_handle handle, void* arg) {
  auto* m = static_cast<LoopMonitor*>(arg);
  m->cleanup = handle;
  Sampler::Instance().UnregisterLoop(m->slot);
  m->slot = -1;
  RegionRegistry::Instance().CloseOwnedBy(m->envId);
  Sampler::Instance().Release();
  uv_close(reinterpret_cast<uv_handle_t*>(&m->prepare), OnHandleClosed);
  uv_close(reinterpret_cast<uv_handle_t*>(&m->check), OnHandleClosed);
}

}  // namespace

void StartLoopMonitor(Napi::Env env, EnvData* data) {
  uv_loop_t* loop = nullptr;
  if (napi_get_uv_event_loop(env, &loop) != napi_ok || loop == nullptr) return;
  auto* m = new LoopMonitor();
  m->loop = loop;
  m->envId = data->id;
  // Node enables idle-time metrics on its loops already; asking again is harmless and makes sure of it.
  uv_loop_configure(loop, UV_METRICS_IDLE_TIME);
  uv_prepare_init(loop, &m->prepare);
  uv_check_init(loop, &m->check);
  m->prepare.data = m;
  m->check.data = m;
  m->openHandles = 2;
  uv_prepare_start(&m->prepare, OnPrepare);
  uv_check_start(&m->check, OnCheck);
  uv_unref(reinterpret_cast<uv_handle_t*>(&m->prepare));
  uv_unref(reinterpret_cast<uv_handle_t*>(&m->check));
  m->slot = Sampler::Instance().RegisterLoop(IdleTime, m, MonotonicNs(), uv_metrics_idle_time(loop));
  data->loopSlot = m->slot;
  data->monitor = m;
  Sampler::Instance().Acquire();
  napi_add_async_cleanup_hook(env, OnEnvCleanup, m, nullptr);
}

}  // namespace binding
}  // namespace bulwark
