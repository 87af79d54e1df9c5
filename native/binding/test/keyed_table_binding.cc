// Test-only natives for the keyed table: the C++ fingerprint of a string, and C++ decisions on a table that
// JavaScript uses too, so that tests prove both sides agree on one layout and one protocol (the hot path itself is
// TypeScript's, lib/foundation/keyed-table/).
#include <napi.h>

#include <string>
#include <vector>

#include "binding/binding_util.h"
#include "binding/env_data.h"
#include "core/keyed/key_fingerprint.h"
#include "core/keyed/keyed_table.h"

namespace bulwark {
namespace binding {

namespace {

bool ReadUnits(const Napi::CallbackInfo& info, size_t index, std::vector<uint16_t>* units) {
  if (info.Length() <= index || !info[index].IsString()) {
    ThrowTypeError(info.Env(), "key must be a string");
    return false;
  }
  size_t length = 0;
  napi_env env = info.Env();
  napi_value value = info[index];
  if (napi_get_value_string_utf16(env, value, nullptr, 0, &length) != napi_ok) return false;
  units->resize(length + 1);
  if (napi_get_value_string_utf16(env, value, reinterpret_cast<char16_t*>(units->data()), length + 1, &length) !=
      napi_ok)
    return false;
  units->resize(length);
  return true;
}

// A number as 32 bits (wrapping), refused unless it is an integer a double holds exactly: the conversion of
// anything else would be undefined behaviour.
bool GetWord(const Napi::CallbackInfo& info, size_t index, const char* name, int32_t* out) {
  double v;
  if (!GetNumber(info, index, name, &v)) return false;
  if (!(v >= -9007199254740991.0 && v <= 9007199254740991.0) || v != static_cast<double>(static_cast<int64_t>(v))) {
    ThrowTypeError(info.Env(), std::string(name) + " must be an integer");
    return false;
  }
  *out = static_cast<int32_t>(static_cast<uint32_t>(static_cast<int64_t>(v)));
  return true;
}

bool ReadSeed(const Napi::CallbackInfo& info, size_t index, uint32_t* k0, uint32_t* k1) {
  int32_t a, b;
  if (!GetWord(info, index, "k0", &a) || !GetWord(info, index + 1, "k1", &b)) return false;
  *k0 = static_cast<uint32_t>(a);
  *k1 = static_cast<uint32_t>(b);
  return true;
}

// keyedFingerprint(key, k0, k1): [a, b] as unsigned 32-bit numbers.
Napi::Value KeyedFingerprint(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  std::vector<uint16_t> units;
  uint32_t k0, k1;
  if (!ReadUnits(info, 0, &units) || !ReadSeed(info, 1, &k0, &k1)) return env.Undefined();
  KeyFingerprint f = FingerprintUnits(k0, k1, units.data(), units.size());
  Napi::Array out = Napi::Array::New(env, 2);
  out.Set(uint32_t(0), Napi::Number::New(env, f.a));
  out.Set(uint32_t(1), Napi::Number::New(env, f.b));
  return out;
}

// keyedAcquire(slots: Int32Array, buckets, key, k0, k1, now, epoch, nowMs, inc, tau, times): the outcomes of `times`
// decisions for `key`, made by C++ on a shared table, as { admitted, refused, noSlot, contended, created, reused }.
Napi::Value KeyedAcquire(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 11 || !info[0].IsTypedArray()) {
    ThrowTypeError(env, "keyedAcquire(slots, buckets, key, k0, k1, now, epoch, nowMs, inc, tau, times)");
    return env.Undefined();
  }
  napi_typedarray_type type;
  size_t length;
  void* data;
  if (napi_get_typedarray_info(env, info[0], &type, &length, &data, nullptr, nullptr) != napi_ok ||
      type != napi_int32_array) {
    ThrowTypeError(env, "keyedAcquire: slots must be an Int32Array");
    return env.Undefined();
  }
  std::vector<uint16_t> units;
  uint32_t k0, k1;
  double buckets, inc, tau, times;
  int32_t now, epoch, nowMs;
  if (!GetNumber(info, 1, "buckets", &buckets) || !ReadUnits(info, 2, &units) || !ReadSeed(info, 3, &k0, &k1) ||
      !GetWord(info, 5, "now", &now) || !GetWord(info, 6, "epoch", &epoch) || !GetWord(info, 7, "nowMs", &nowMs) ||
      !GetNumber(info, 8, "inc", &inc) || !GetNumber(info, 9, "tau", &tau) || !GetNumber(info, 10, "times", &times))
    return env.Undefined();
  if (!(buckets >= 1) || buckets > keyed_layout::kMaxBuckets ||
      length < size_t(buckets) * keyed_layout::kBucketSlots * keyed_layout::kSlotWords || !(inc >= 1) ||
      !(tau >= inc) || tau > keyed_layout::kMaxDebt || !(times >= 0) || times > 1e9) {
    ThrowTypeError(env, "keyedAcquire: buckets, inc, tau or times out of range");
    return env.Undefined();
  }
  uint32_t n = static_cast<uint32_t>(buckets);
  KeyedTable table(static_cast<uint8_t*>(data), n, true);
  KeyPlace place = PlaceKey(FingerprintUnits(k0, k1, units.data(), units.size()), n);
  RateStep step{now, epoch, nowMs, static_cast<int32_t>(inc), static_cast<int32_t>(tau)};
  KeyedCounts counts;
  double outcomes[4] = {0, 0, 0, 0};
  for (double i = 0; i < times; i++) outcomes[static_cast<int>(table.Acquire(place, step, &counts))]++;
  Napi::Object out = Napi::Object::New(env);
  out.Set("admitted", outcomes[static_cast<int>(RateOutcome::kAdmitted)]);
  out.Set("refused", outcomes[static_cast<int>(RateOutcome::kRefused)]);
  out.Set("noSlot", outcomes[static_cast<int>(RateOutcome::kNoSlot)]);
  out.Set("contended", outcomes[static_cast<int>(RateOutcome::kContended)]);
  out.Set("created", static_cast<double>(counts.created));
  out.Set("reused", static_cast<double>(counts.reused));
  return out;
}

}  // namespace

void InitKeyedTest(Napi::Env env, Napi::Object exports) {
  exports.Set("keyedFingerprint", Napi::Function::New(env, KeyedFingerprint, "keyedFingerprint"));
  exports.Set("keyedAcquire", Napi::Function::New(env, KeyedAcquire, "keyedAcquire"));
}

}  // namespace binding
}  // namespace bulwark
