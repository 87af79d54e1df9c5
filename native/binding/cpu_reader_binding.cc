// PLACEHOLDER being replaced by the cgroup CPU reader work (helper).
#include <napi.h>
#include "binding/env_data.h"
namespace bulwark {
namespace binding {
void InitCpuReader(Napi::Env env, Napi::Object exports) {}
}  // namespace binding
}  // namespace bulwark
