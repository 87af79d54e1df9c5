// The keyed table's one native call: a secret seed for a new table (its hot path runs in TypeScript on typed-array
// views of the block, lib/foundation/keyed-table/).
#include <napi.h>

#include "binding/env_data.h"
#include "core/keyed/key_fingerprint.h"

namespace bulwark {
namespace binding {

namespace {

// keyedSeed(): [k0, k1], two random 32-bit words (unsigned), never both zero.
Napi::Value KeyedSeed(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  uint32_t k0, k1;
  NewTableSeed(&k0, &k1);
  Napi::Array out = Napi::Array::New(env, 2);
  out.Set(uint32_t(0), Napi::Number::New(env, k0));
  out.Set(uint32_t(1), Napi::Number::New(env, k1));
  return out;
}

}  // namespace

void InitKeyed(Napi::Env env, Napi::Object exports) {
  exports.Set("keyedSeed", Napi::Function::New(env, KeyedSeed, "keyedSeed"));
}

}  // namespace binding
}  // namespace bulwark
