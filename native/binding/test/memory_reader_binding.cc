// MemoryReader (test-only native): a cgroup memory reader of its own, apart from the sampler's, over a fixture tree.
//   new MemoryReader(root: string)
//   reader.info() -> { source, cgroupPath, usagePath, note }
//   reader.sample() -> { used, limit, resident, limited }, or null when no source gives used and limit figures
#include <napi.h>

#include <memory>

#include "binding/binding_util.h"
#include "binding/env_data.h"
#include "binding/memory_info_object.h"
#include "core/memory/cgroup_memory.h"

namespace bulwark {
namespace binding {

namespace {

class MemoryReaderWrap : public Napi::ObjectWrap<MemoryReaderWrap> {
 public:
  static Napi::Function Define(Napi::Env env) {
    return DefineClass(
        env, "MemoryReader",
        {InstanceMethod<&MemoryReaderWrap::Info>("info"), InstanceMethod<&MemoryReaderWrap::Sample>("sample")});
  }

  explicit MemoryReaderWrap(const Napi::CallbackInfo& info) : Napi::ObjectWrap<MemoryReaderWrap>(info) {
    std::string root;
    if (!GetString(info, 0, "root", &root)) return;
    if (root.empty()) {
      ThrowTypeError(info.Env(), "root must be a non-empty directory path");
      return;
    }
    reader_ = std::make_unique<CgroupMemoryReader>(root);
  }

 private:
  Napi::Value Info(const Napi::CallbackInfo& info) { return MemoryInfoObject(info.Env(), reader_->info()); }

  Napi::Value Sample(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    MemorySample sample;
    if (!reader_->Sample(&sample)) return env.Null();
    Napi::Object o = Napi::Object::New(env);
    o.Set("used", Napi::Number::New(env, sample.used));
    o.Set("limit", Napi::Number::New(env, sample.limit));
    o.Set("resident", Napi::Number::New(env, sample.resident));
    o.Set("limited", Napi::Boolean::New(env, sample.limited));
    return o;
  }

  // Never null once constructed: a constructor that throws is deleted before JavaScript sees the object.
  std::unique_ptr<CgroupMemoryReader> reader_;
};

}  // namespace

void InitMemoryReader(Napi::Env env, Napi::Object exports) {
  Napi::Function constructor = MemoryReaderWrap::Define(env);
  EnvData* data = GetEnvData(env);
  if (data != nullptr) data->memoryReaderConstructor = Napi::Persistent(constructor);
  exports.Set("MemoryReader", constructor);
}

}  // namespace binding
}  // namespace bulwark
