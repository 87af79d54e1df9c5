// The JavaScript shape of a CPU source description, shared by loadInfo() and CpuReader.info().
#pragma once
#include <napi.h>

#include "core/cpu/cgroup_cpu.h"

namespace bulwark {
namespace binding {

inline Napi::Object CpuInfoObject(Napi::Env env, const CpuSourceInfo& cpu) {
  Napi::Object o = Napi::Object::New(env);
  o.Set("source", Napi::String::New(env, CpuSourceName(cpu.kind)));
  o.Set("cores", Napi::Number::New(env, cpu.cores));
  o.Set("quotaCores", Napi::Number::New(env, cpu.quotaCores));
  o.Set("cpusetCpus", Napi::Number::New(env, cpu.cpusetCpus));
  o.Set("affinityCpus", Napi::Number::New(env, cpu.affinityCpus));
  o.Set("cgroupPath", Napi::String::New(env, cpu.cgroupPath));
  o.Set("usagePath", Napi::String::New(env, cpu.usagePath));
  o.Set("note", Napi::String::New(env, cpu.note));
  return o;
}

}  // namespace binding
}  // namespace bulwark
