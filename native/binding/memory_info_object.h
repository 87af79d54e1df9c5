// The JavaScript shape of a memory source description, shared by loadInfo().memory and MemoryReader.info().
#pragma once
#include <napi.h>

#include "core/memory/cgroup_memory.h"

namespace bulwark {
namespace binding {

inline Napi::Object MemoryInfoObject(Napi::Env env, const MemorySourceInfo& memory) {
  Napi::Object o = Napi::Object::New(env);
  o.Set("source", Napi::String::New(env, MemorySourceName(memory.kind)));
  o.Set("cgroupPath", Napi::String::New(env, memory.cgroupPath));
  o.Set("usagePath", Napi::String::New(env, memory.usagePath));
  o.Set("note", Napi::String::New(env, memory.note));
  return o;
}

}  // namespace binding
}  // namespace bulwark
