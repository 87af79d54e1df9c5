// The signals block (CPU, event-loop utilization and delay, coarse clock) and the sampler's settings.
#include <napi.h>

#include "binding/binding_util.h"
#include "binding/cpu_info_object.h"
#include "binding/env_data.h"
#include "core/platform/clock.h"
#include "core/sampler/sampler.h"

namespace bulwark {
namespace binding {

namespace {

// signals() -> { buffer, loopSlot }: the buffer views process memory that lives until the process exits.
Napi::Value Signals(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  napi_value buffer;
  if (napi_create_external_arraybuffer(env, Sampler::Instance().block(), signals_layout::kSize, nullptr, nullptr,
                                       &buffer) != napi_ok) {
    Napi::Error::New(env, "could not create an ArrayBuffer over the signals block").ThrowAsJavaScriptException();
    return env.Undefined();
  }
  EnvData* data = GetEnvData(env);
  Napi::Object result = Napi::Object::New(env);
  result.Set("buffer", Napi::Value(env, buffer));
  result.Set("loopSlot", Napi::Number::New(env, data != nullptr ? data->loopSlot : -1));
  return result;
}

// samplerConfigure({ cpuInterval, loopInterval, cpuDecay, loopDecay, cgroupRoot? }), all validated in TypeScript.
Napi::Value SamplerConfigure(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 1 || !info[0].IsObject()) {
    ThrowTypeError(env, "samplerConfigure expects an options object");
    return env.Undefined();
  }
  Napi::Object o = info[0].As<Napi::Object>();
  SamplerOptions current = Sampler::Instance().options();
  SamplerOptions next;
  if (!GetNumberProp(o, "cpuInterval", current.cpuIntervalMs, &next.cpuIntervalMs) ||
      !GetNumberProp(o, "loopInterval", current.loopIntervalMs, &next.loopIntervalMs) ||
      !GetNumberProp(o, "cpuDecay", current.cpuDecay, &next.cpuDecay) ||
      !GetNumberProp(o, "loopDecay", current.loopDecay, &next.loopDecay))
    return env.Undefined();
  Sampler::Instance().Configure(next);
  Napi::Value root = o.Get("cgroupRoot");
  if (root.IsString()) Sampler::Instance().SetCgroupRoot(root.As<Napi::String>().Utf8Value());
  return env.Undefined();
}

Napi::Value LoadInfo(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  CpuSourceInfo cpu = Sampler::Instance().cpuInfo();
  return CpuInfoObject(env, cpu);
}

Napi::Value MonotonicNow(const Napi::CallbackInfo& info) { return Napi::Number::New(info.Env(), MonotonicMs()); }

}  // namespace

void InitSignals(Napi::Env env, Napi::Object exports) {
  exports.Set("signals", Napi::Function::New(env, Signals, "signals"));
  exports.Set("samplerConfigure", Napi::Function::New(env, SamplerConfigure, "samplerConfigure"));
  exports.Set("loadInfo", Napi::Function::New(env, LoadInfo, "loadInfo"));
  exports.Set("monotonicNow", Napi::Function::New(env, MonotonicNow, "monotonicNow"));
}

}  // namespace binding
}  // namespace bulwark
