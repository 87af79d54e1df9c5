// An environment's (a JavaScript thread's) native lifetime, behind one async cleanup hook: measuring its event loop
// (libuv prepare/check handles, unreferenced so they never keep the loop alive, registered with the sampler), and,
// when the environment goes away, stopping that and handing its regions and its use of the sampler to
// core/lifecycle. The hook is async so that the handles close properly when a worker thread exits. Under Bun or Deno
// nothing is measured and a plain hook ends the lifetime (docs/guide/install.md, "Bun and Deno").
#include <uv.h>

#if defined(__linux__)
// Weak on Linux, where the prebuilds bind every symbol at load: Deno's N-API lacks some of these, and the load would
// fail on them. They are called only where they all resolved and the runtime is Node (OtherRuntime).
#pragma weak uv_loop_configure
#pragma weak uv_metrics_idle_time
#pragma weak uv_prepare_init
#pragma weak uv_prepare_start
#pragma weak uv_check_init
#pragma weak uv_check_start
#pragma weak uv_unref
#pragma weak uv_close
#endif

#include "binding/env_data.h"
#include "core/lifecycle/lifecycle.h"
#include "core/platform/clock.h"
#include "core/sampler/sampler.h"

namespace bulwark {
namespace binding {

struct EnvLifetime {
  uint64_t envId = 0;
  bool usedSampler = false;
  uv_loop_t* loop = nullptr;  // null when the environment has no loop to measure
  uv_prepare_t prepare;
  uv_check_t check;
  int slot = -1;
  int openHandles = 0;
  napi_async_cleanup_hook_handle cleanup = nullptr;
};

namespace {

uint64_t IdleTime(void* ctx) { return uv_metrics_idle_time(static_cast<EnvLifetime*>(ctx)->loop); }

void OnPrepare(uv_prepare_t* handle) {
  auto* e = static_cast<EnvLifetime*>(handle->data);
  if (e->slot >= 0) Sampler::Instance().OnPollEnter(e->slot, MonotonicNs(), uv_metrics_idle_time(e->loop));
}

void OnCheck(uv_check_t* handle) {
  auto* e = static_cast<EnvLifetime*>(handle->data);
  if (e->slot >= 0) Sampler::Instance().OnPollExit(e->slot, MonotonicNs());
}

void Finish(EnvLifetime* e) {
  napi_async_cleanup_hook_handle cleanup = e->cleanup;
  delete e;
  napi_remove_async_cleanup_hook(cleanup);
}

void OnHandleClosed(uv_handle_t* handle) {
  auto* e = static_cast<EnvLifetime*>(handle->data);
  if (--e->openHandles == 0) Finish(e);
}

void OnEnvCleanup(napi_async_cleanup_hook_handle handle, void* arg) {
  auto* e = static_cast<EnvLifetime*>(arg);
  e->cleanup = handle;
  Sampler::Instance().UnregisterLoop(e->slot);
  e->slot = -1;
  lifecycle::EnvEnded(e->envId, e->usedSampler);
  if (e->openHandles == 0) return Finish(e);
  uv_close(reinterpret_cast<uv_handle_t*>(&e->prepare), OnHandleClosed);
  uv_close(reinterpret_cast<uv_handle_t*>(&e->check), OnHandleClosed);
}

// The environment's end where no loop is measured (another runtime): nothing to close, so a plain cleanup hook.
// Deno frees an async hook's handle itself after calling it, and the removal the hook must make then frees it twice.
void OnUnmeasuredEnvCleanup(void* arg) {
  auto* e = static_cast<EnvLifetime*>(arg);
  lifecycle::EnvEnded(e->envId, e->usedSampler);
  delete e;
}

void MeasureLoop(EnvLifetime* e) {
  // Node enables idle-time metrics on its loops already; asking again is harmless and makes sure of it.
  uv_loop_configure(e->loop, UV_METRICS_IDLE_TIME);
  uv_prepare_init(e->loop, &e->prepare);
  uv_check_init(e->loop, &e->check);
  e->prepare.data = e;
  e->check.data = e;
  e->openHandles = 2;
  uv_prepare_start(&e->prepare, OnPrepare);
  uv_check_start(&e->check, OnCheck);
  uv_unref(reinterpret_cast<uv_handle_t*>(&e->prepare));
  uv_unref(reinterpret_cast<uv_handle_t*>(&e->check));
  e->slot = Sampler::Instance().RegisterLoop(IdleTime, e, MonotonicNs(), uv_metrics_idle_time(e->loop));
}

// Whether a runtime other than Node runs this environment: process.versions names Bun or Deno (a global object
// would be a weaker sign: cross-runtime code defines shims named Deno). Bun hands out a loop whose libuv functions
// abort the process ("unsupported uv function"); Deno's lacks some of them, and the first call of a missing one ends
// the process ("symbol lookup error"). There the loop goes unmeasured (utilization and queueing delay read 0), and
// nothing aborts.
bool OtherRuntime(napi_env env) {
#if defined(__linux__)
  if (uv_loop_configure == nullptr || uv_metrics_idle_time == nullptr || uv_prepare_init == nullptr ||
      uv_prepare_start == nullptr || uv_check_init == nullptr || uv_check_start == nullptr || uv_unref == nullptr ||
      uv_close == nullptr)
    return true;
#endif
  napi_value global, process, versions;
  bool other = false;
  bool read = napi_get_global(env, &global) == napi_ok &&
              napi_get_named_property(env, global, "process", &process) == napi_ok &&
              napi_get_named_property(env, process, "versions", &versions) == napi_ok;
  for (const char* name : {"bun", "deno"}) {
    bool has = false;
    if (read && napi_has_named_property(env, versions, name, &has) == napi_ok && has) other = true;
  }
  napi_value ignored;
  napi_get_and_clear_last_exception(env, &ignored);  // a getter that threw, or process.versions not an object
  return other;
}

}  // namespace

void StartEnvironment(Napi::Env env, EnvData* data) {
  auto* e = new EnvLifetime();
  e->envId = data->id;
  if (OtherRuntime(env)) {
    if (napi_add_env_cleanup_hook(env, OnUnmeasuredEnvCleanup, e) != napi_ok) {
      delete e;
      return;
    }
    data->lifetime = e;
    return;
  }
  if (napi_get_uv_event_loop(env, &e->loop) == napi_ok && e->loop != nullptr) {
    MeasureLoop(e);
  } else {
    e->loop = nullptr;
  }
  data->loopSlot = e->slot;
  if (napi_add_async_cleanup_hook(env, OnEnvCleanup, e, nullptr) != napi_ok) {
    // Without a hook nothing would ever stop measuring this loop: stop now (the handles close with the loop).
    Sampler::Instance().UnregisterLoop(e->slot);
    data->loopSlot = -1;
    return;
  }
  data->lifetime = e;
}

void StartSampler(EnvData* data, const SamplerOptions& defaults) {
  if (data == nullptr || data->lifetime == nullptr || data->lifetime->usedSampler) return;
  data->lifetime->usedSampler = true;
  lifecycle::EnvStarted(defaults);
}

}  // namespace binding
}  // namespace bulwark
