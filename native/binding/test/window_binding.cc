// windowAdd (test-only native): C++ writes to a rolling window in JavaScript-visible memory. Production code writes
// windows from TypeScript; this lets tests prove that C++ and JavaScript writers agree on one layout.
#include <napi.h>

#include "binding/binding_util.h"
#include "binding/env_data.h"
#include "core/region/lane_window.h"

namespace bulwark {
namespace binding {

namespace {

// windowAdd(view: Uint8Array over the window, startMs, bucketMs, size, lane, nowMs, value, times)
Napi::Value WindowAdd(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 8 || !info[0].IsTypedArray()) {
    ThrowTypeError(env, "windowAdd(view, startMs, bucketMs, size, lane, nowMs, value, times)");
    return env.Undefined();
  }
  Napi::TypedArray view = info[0].As<Napi::TypedArray>();
  double start, bucket, size, lane, now, value, times;
  if (!GetNumber(info, 1, "startMs", &start) || !GetNumber(info, 2, "bucketMs", &bucket) ||
      !GetNumber(info, 3, "size", &size) || !GetNumber(info, 4, "lane", &lane) || !GetNumber(info, 5, "nowMs", &now) ||
      !GetNumber(info, 6, "value", &value) || !GetNumber(info, 7, "times", &times))
    return env.Undefined();
  // Bounded before any conversion to an integer type (an out-of-range conversion is undefined behaviour).
  if (!(bucket > 0) || !(size >= 1) || size > 1e6 || !(lane >= 0) || lane > 4096 || !(times >= 0) || times > 1e9) {
    ThrowTypeError(env, "windowAdd: bucketMs, size, lane or times out of range");
    return env.Undefined();
  }
  napi_typedarray_type type;
  size_t length;
  void* data;
  napi_value arraybuffer;
  size_t byteOffset;
  if (napi_get_typedarray_info(env, view, &type, &length, &data, &arraybuffer, &byteOffset) != napi_ok ||
      type != napi_uint8_array) {
    ThrowTypeError(env, "windowAdd: view must be a Uint8Array");
    return env.Undefined();
  }
  WindowShape shape{start, bucket, static_cast<uint32_t>(size), window_layout::LaneStride(static_cast<uint32_t>(size))};
  size_t needed = (static_cast<size_t>(lane) + 1) * shape.laneStride;
  if (needed > length) {
    ThrowTypeError(env, "windowAdd: the view is too small for that lane");
    return env.Undefined();
  }
  LaneWindow window(static_cast<uint8_t*>(data), shape);
  for (double i = 0; i < times; i++) window.Add(static_cast<uint32_t>(lane), now, value);
  return env.Undefined();
}

}  // namespace

void InitWindow(Napi::Env env, Napi::Object exports) {
  exports.Set("windowAdd", Napi::Function::New(env, WindowAdd, "windowAdd"));
}

}  // namespace binding
}  // namespace bulwark
