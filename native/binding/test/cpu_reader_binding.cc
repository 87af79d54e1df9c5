// CpuReader (test-only native): a cgroup CPU reader of its own, apart from the sampler's, over a fixture tree.
//   new CpuReader(root: string, affinityCpus?: number)
//   reader.info() -> { source, cores, quotaCores, cpusetCpus, affinityCpus, cgroupPath, usagePath, note }
//   reader.sample(wallNs) -> permille, or null on the priming call or a failed read
#include <napi.h>

#include <memory>

#include "binding/binding_util.h"
#include "binding/cpu_info_object.h"
#include "binding/env_data.h"
#include "core/cpu/cgroup_cpu.h"

namespace bulwark {
namespace binding {

namespace {

// Affinity overrides are CPU counts; anything past this is a mistake, not a machine.
constexpr double kMaxAffinityCpus = 1 << 20;

bool IsWholeNumberIn(double v, double min, double max) {
  return v >= min && v <= max && v == static_cast<double>(static_cast<int64_t>(v));
}

class CpuReaderWrap : public Napi::ObjectWrap<CpuReaderWrap> {
 public:
  static Napi::Function Define(Napi::Env env) {
    return DefineClass(
        env, "CpuReader",
        {InstanceMethod<&CpuReaderWrap::Info>("info"), InstanceMethod<&CpuReaderWrap::Sample>("sample")});
  }

  explicit CpuReaderWrap(const Napi::CallbackInfo& info) : Napi::ObjectWrap<CpuReaderWrap>(info) {
    std::string root;
    if (!GetString(info, 0, "root", &root)) return;
    if (root.empty()) {
      ThrowTypeError(info.Env(), "root must be a non-empty directory path");
      return;
    }
    int affinity = -1;  // read this process's own affinity mask
    if (info.Length() > 1 && !info[1].IsUndefined()) {
      double v = 0;
      if (!GetNumber(info, 1, "affinityCpus", &v)) return;
      if (!IsWholeNumberIn(v, 0, kMaxAffinityCpus)) {
        ThrowTypeError(info.Env(), "affinityCpus must be a whole number >= 0");
        return;
      }
      affinity = static_cast<int>(v);
    }
    reader_ = std::make_unique<CgroupCpuReader>(root, affinity);
  }

 private:
  Napi::Value Info(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    const CpuSourceInfo& cpu = reader_->info();
    return CpuInfoObject(env, cpu);
  }

  Napi::Value Sample(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    double wallNs = 0;
    if (!GetNumber(info, 0, "wallNs", &wallNs)) return env.Undefined();
    // 2^64: the largest wall time a uint64_t holds (NaN fails the comparison too).
    if (!(wallNs >= 0 && wallNs < 18446744073709551616.0)) {
      ThrowTypeError(env, "wallNs must be a non-negative number of nanoseconds");
      return env.Undefined();
    }
    double permille = 0;
    if (!reader_->Sample(static_cast<uint64_t>(wallNs), &permille)) return env.Null();
    return Napi::Number::New(env, permille);
  }

  // Never null once constructed: a constructor that throws is deleted before JavaScript sees the object.
  std::unique_ptr<CgroupCpuReader> reader_;
};

}  // namespace

void InitCpuReader(Napi::Env env, Napi::Object exports) {
  Napi::Function constructor = CpuReaderWrap::Define(env);
  EnvData* data = GetEnvData(env);
  if (data != nullptr) data->cpuReaderConstructor = Napi::Persistent(constructor);
  exports.Set("CpuReader", constructor);
}

}  // namespace binding
}  // namespace bulwark
