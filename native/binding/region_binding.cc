// Shared regions: open (attach as a member), close, read-only snapshots for watchers, listing and removal.
#include <napi.h>

#include <cstdint>

#include "binding/binding_util.h"
#include "binding/env_data.h"
#include "core/region/shared_region.h"

namespace bulwark {
namespace binding {

namespace {

void ReleaseMapping(napi_env, void*, void* hint) {
  RegionRegistry::Instance().Release(static_cast<uint64_t>(reinterpret_cast<uintptr_t>(hint)));
}

// An ArrayBuffer over the mapping that keeps it mapped for as long as JavaScript can reach the buffer.
Napi::Value MappingBuffer(Napi::Env env, uint64_t handle, uint8_t* base, size_t size) {
  RegionRegistry::Instance().Retain(handle);
  napi_value buffer;
  napi_status s = napi_create_external_arraybuffer(env, base, size, ReleaseMapping,
                                                   reinterpret_cast<void*>(static_cast<uintptr_t>(handle)), &buffer);
  if (s != napi_ok) {
    RegionRegistry::Instance().Release(handle);
    Napi::Error::New(env, "could not create an ArrayBuffer over the shared region").ThrowAsJavaScriptException();
    return env.Undefined();
  }
  return Napi::Value(env, buffer);
}

// [{ slot, pid, threadId, alive }]
Napi::Array MembersArray(Napi::Env env, const std::vector<RegionMemberInfo>& members) {
  Napi::Array out = Napi::Array::New(env, members.size());
  for (size_t i = 0; i < members.size(); i++) {
    Napi::Object m = Napi::Object::New(env);
    m.Set("slot", Napi::Number::New(env, members[i].slot));
    m.Set("pid", Napi::Number::New(env, members[i].pid));
    m.Set("threadId", Napi::Number::New(env, members[i].threadId));
    m.Set("alive", Napi::Boolean::New(env, members[i].alive));
    out.Set(static_cast<uint32_t>(i), m);
  }
  return out;
}

bool ReadPairs(Napi::Object spec, const char* key, std::vector<std::pair<double, double>>* out) {
  Napi::Value v = spec.Get(key);
  if (v.IsUndefined()) return true;
  if (!v.IsArray()) {
    ThrowTypeError(spec.Env(), std::string(key) + " must be an array of numbers");
    return false;
  }
  Napi::Array a = v.As<Napi::Array>();
  if (a.Length() % 2 != 0) {
    ThrowTypeError(spec.Env(), std::string(key) + " must hold pairs");
    return false;
  }
  for (uint32_t i = 0; i < a.Length(); i += 2) {
    Napi::Value x = a.Get(i), y = a.Get(i + 1);
    if (!x.IsNumber() || !y.IsNumber()) {
      ThrowTypeError(spec.Env(), std::string(key) + " must be an array of numbers");
      return false;
    }
    out->emplace_back(x.As<Napi::Number>().DoubleValue(), y.As<Napi::Number>().DoubleValue());
  }
  return true;
}

bool IsU32(double v) { return v >= 0 && v <= 4294967295.0 && v == static_cast<double>(static_cast<uint64_t>(v)); }

// regionOpen({ name, kind, fingerprint, memberCapacity, payloadSize, reclaim: [off, stride, ...],
//              init: [off, value, ...] }) -> { buffer, handle, member, payloadOffset, created, rebuilt }
// The region is listed (regionList, regionSnapshot, ...) as "<kind>.<name>".
Napi::Value RegionOpen(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 1 || !info[0].IsObject()) {
    ThrowTypeError(env, "regionOpen expects an options object");
    return env.Undefined();
  }
  Napi::Object o = info[0].As<Napi::Object>();
  RegionSpec spec;
  double capacity = 0, payload = 0;
  if (!GetStringProp(o, "name", &spec.name) || !GetStringProp(o, "kind", &spec.kind) ||
      !GetStringProp(o, "fingerprint", &spec.fingerprint) || !GetNumberProp(o, "memberCapacity", 0, &capacity) ||
      !GetNumberProp(o, "payloadSize", 0, &payload))
    return env.Undefined();
  if (!IsU32(capacity) || !IsU32(payload)) {
    ThrowTypeError(env, "memberCapacity and payloadSize must be unsigned 32-bit integers");
    return env.Undefined();
  }
  spec.memberCapacity = static_cast<uint32_t>(capacity);
  spec.payloadSize = static_cast<size_t>(payload);
  std::vector<std::pair<double, double>> reclaim, init;
  if (!ReadPairs(o, "reclaim", &reclaim) || !ReadPairs(o, "init", &init)) return env.Undefined();
  for (auto& r : reclaim) {
    if (!IsU32(r.first) || !IsU32(r.second)) {
      ThrowTypeError(env, "reclaim offsets and strides must be unsigned 32-bit integers");
      return env.Undefined();
    }
    spec.reclaim.push_back(ReclaimEntry{static_cast<uint32_t>(r.first), static_cast<uint32_t>(r.second)});
  }
  for (auto& e : init) {
    if (!IsU32(e.first)) {
      ThrowTypeError(env, "init offsets must be unsigned 32-bit integers");
      return env.Undefined();
    }
    spec.init.push_back(InitEntry{static_cast<uint32_t>(e.first), e.second});
  }
  EnvData* data = GetEnvData(env);
  spec.threadId = data != nullptr ? data->threadId : 0;

  RegionAttachment a;
  Status st = RegionRegistry::Instance().Open(spec, &a);
  if (!st.ok()) {
    ThrowStatus(env, st);
    return env.Undefined();
  }
  if (data != nullptr) RegionRegistry::Instance().SetOwner(a.handle, data->id);
  Napi::Value buffer = MappingBuffer(env, a.handle, a.base, a.size);
  if (env.IsExceptionPending()) {
    RegionRegistry::Instance().Close(a.handle);
    return env.Undefined();
  }
  Napi::Object result = Napi::Object::New(env);
  result.Set("buffer", buffer);
  result.Set("handle", Napi::Number::New(env, static_cast<double>(a.handle)));
  result.Set("member", Napi::Number::New(env, a.member));
  result.Set("payloadOffset", Napi::Number::New(env, a.payloadOffset));
  result.Set("created", Napi::Boolean::New(env, a.created));
  result.Set("rebuilt", Napi::Boolean::New(env, a.rebuilt));
  return result;
}

Napi::Value RegionClose(const Napi::CallbackInfo& info) {
  double handle;
  if (!GetNumber(info, 0, "handle", &handle)) return info.Env().Undefined();
  if (handle >= 1 && handle < 9007199254740992.0) RegionRegistry::Instance().Close(static_cast<uint64_t>(handle));
  return info.Env().Undefined();
}

// regionSnapshot(name) -> { buffer, members }: a private view of a region that does not join it, and its member
// table (liveness judged as regionMembers does) at the time of the view.
Napi::Value RegionSnapshot(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  std::string name;
  if (!GetString(info, 0, "name", &name)) return env.Undefined();
  bulwark::RegionSnapshot snap;
  Status st = RegionRegistry::Instance().Snapshot(name, &snap);
  if (!st.ok()) {
    ThrowStatus(env, st);
    return env.Undefined();
  }
  std::vector<RegionMemberInfo> members;
  st = RegionRegistry::Instance().Members(snap.handle, &members);
  Napi::Value buffer = MappingBuffer(env, snap.handle, snap.base, snap.size);
  RegionRegistry::Instance().Close(snap.handle);  // the buffer alone keeps the snapshot mapped now
  if (env.IsExceptionPending()) return env.Undefined();
  if (!st.ok()) {
    ThrowStatus(env, st);
    return env.Undefined();
  }
  Napi::Object result = Napi::Object::New(env);
  result.Set("buffer", buffer);
  result.Set("members", MembersArray(env, members));
  return result;
}

Napi::Value RegionMembers(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  double handle;
  if (!GetNumber(info, 0, "handle", &handle)) return env.Undefined();
  std::vector<RegionMemberInfo> members;
  // Out of range (or NaN) is an unknown handle, never a conversion with undefined behaviour.
  uint64_t id = handle >= 1 && handle < 9007199254740992.0 ? static_cast<uint64_t>(handle) : 0;
  Status st = RegionRegistry::Instance().Members(id, &members);
  if (!st.ok()) {
    ThrowStatus(env, st);
    return env.Undefined();
  }
  return MembersArray(env, members);
}

Napi::Value RegionList(const Napi::CallbackInfo& info) {
  std::vector<std::string> names = RegionRegistry::Instance().List();
  Napi::Array out = Napi::Array::New(info.Env(), names.size());
  for (size_t i = 0; i < names.size(); i++) out.Set(static_cast<uint32_t>(i), Napi::String::New(info.Env(), names[i]));
  return out;
}

Napi::Value RegionUnlink(const Napi::CallbackInfo& info) {
  std::string name;
  if (!GetString(info, 0, "name", &name)) return info.Env().Undefined();
  Status st = RegionRegistry::Instance().Unlink(name);
  if (!st.ok()) ThrowStatus(info.Env(), st);
  return info.Env().Undefined();
}

// regionRemoveIfStale(name) -> true when the name was removed because no live process used the region.
Napi::Value RegionRemoveIfStale(const Napi::CallbackInfo& info) {
  std::string name;
  if (!GetString(info, 0, "name", &name)) return info.Env().Undefined();
  bool removed = false;
  Status st = RegionRegistry::Instance().RemoveIfStale(name, &removed);
  if (!st.ok()) {
    ThrowStatus(info.Env(), st);
    return info.Env().Undefined();
  }
  return Napi::Boolean::New(info.Env(), removed);
}

// regionLocation(listed) -> where the region lives: a file path, or an object name on Windows.
Napi::Value RegionLocation(const Napi::CallbackInfo& info) {
  std::string name, location;
  if (!GetString(info, 0, "name", &name)) return info.Env().Undefined();
  Status st = RegionRegistry::Instance().Location(name, &location);
  if (!st.ok()) {
    ThrowStatus(info.Env(), st);
    return info.Env().Undefined();
  }
  return Napi::String::New(info.Env(), location);
}

}  // namespace

void InitRegion(Napi::Env env, Napi::Object exports) {
  exports.Set("regionOpen", Napi::Function::New(env, RegionOpen, "regionOpen"));
  exports.Set("regionClose", Napi::Function::New(env, RegionClose, "regionClose"));
  exports.Set("regionSnapshot", Napi::Function::New(env, RegionSnapshot, "regionSnapshot"));
  exports.Set("regionMembers", Napi::Function::New(env, RegionMembers, "regionMembers"));
  exports.Set("regionList", Napi::Function::New(env, RegionList, "regionList"));
  exports.Set("regionUnlink", Napi::Function::New(env, RegionUnlink, "regionUnlink"));
  exports.Set("regionLocation", Napi::Function::New(env, RegionLocation, "regionLocation"));
  exports.Set("regionRemoveIfStale", Napi::Function::New(env, RegionRemoveIfStale, "regionRemoveIfStale"));
}

}  // namespace binding
}  // namespace bulwark
