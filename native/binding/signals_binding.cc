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

// Sampler settings from an options object: fields absent from it keep their value in `out`.
bool ReadSamplerOptions(Napi::Object o, SamplerOptions* out) {
  return GetNumberProp(o, "cpuInterval", out->cpuIntervalMs, &out->cpuIntervalMs) &&
         GetNumberProp(o, "loopInterval", out->loopIntervalMs, &out->loopIntervalMs) &&
         GetNumberProp(o, "cpuDecay", out->cpuDecay, &out->cpuDecay) &&
         GetNumberProp(o, "loopDecay", out->loopDecay, &out->loopDecay) &&
         GetNumberProp(o, "idleStretch", out->idleStretch, &out->idleStretch);
}

bool GetOptionsObject(const Napi::CallbackInfo& info, const char* function, Napi::Object* out) {
  if (info.Length() < 1 || !info[0].IsObject()) {
    ThrowTypeError(info.Env(), std::string(function) + " expects an options object");
    return false;
  }
  *out = info[0].As<Napi::Object>();
  return true;
}

// samplerStart(defaults): this environment uses the sampler until it goes away (once per environment); the
// defaults, which lib/foundation/native/sampler-defaults.ts holds, apply if nothing has configured the sampler yet.
Napi::Value SamplerStart(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  Napi::Object o;
  SamplerOptions defaults;
  if (!GetOptionsObject(info, "samplerStart", &o) || !ReadSamplerOptions(o, &defaults)) return env.Undefined();
  StartSampler(GetEnvData(env), defaults);
  return env.Undefined();
}

// samplerConfigure({ cpuInterval, loopInterval, cpuDecay, loopDecay, cgroupRoot? }), all validated in TypeScript.
Napi::Value SamplerConfigure(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  Napi::Object o;
  SamplerOptions next = Sampler::Instance().options();
  if (!GetOptionsObject(info, "samplerConfigure", &o) || !ReadSamplerOptions(o, &next)) return env.Undefined();
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
  exports.Set("samplerStart", Napi::Function::New(env, SamplerStart, "samplerStart"));
  exports.Set("samplerConfigure", Napi::Function::New(env, SamplerConfigure, "samplerConfigure"));
  exports.Set("loadInfo", Napi::Function::New(env, LoadInfo, "loadInfo"));
  exports.Set("monotonicNow", Napi::Function::New(env, MonotonicNow, "monotonicNow"));
}

}  // namespace binding
}  // namespace bulwark
