// A hot-key argument's bytes, read with raw N-API calls (the hot path of HeavyKeeper.add): a string's UTF-8 into a
// stack buffer (the heap only for long keys), or a Uint8Array's own memory, hashed in place without a copy.
#pragma once
#include <node_api.h>

#include <cstddef>
#include <cstdint>
#include <string>

namespace bulwark {
namespace binding {

constexpr size_t kStackKey = 256;

// A key's bytes: a string's UTF-8 (in a stack buffer unless long) or a Uint8Array's own memory (no copy).
struct KeyBytes {
  const uint8_t* data = nullptr;
  size_t length = 0;
  bool binary = false;
  char stack[kStackKey];
  std::string heap;
};

// Tries the string read first and the typed-array read second: each fails cheaply on the other kind, which
// saves the type checks on the hot path.
inline bool ReadKey(napi_env env, napi_value value, KeyBytes* out) {
  size_t length = 0;
  if (napi_get_value_string_utf8(env, value, out->stack, kStackKey, &length) == napi_ok) {
    // Truncation stops short of a split character, so a nearly full buffer may hold only part of the key.
    if (length + 4 >= kStackKey) {
      if (napi_get_value_string_utf8(env, value, nullptr, 0, &length) != napi_ok) return false;
      out->heap.resize(length + 1);
      if (napi_get_value_string_utf8(env, value, &out->heap[0], length + 1, &length) != napi_ok) return false;
      out->data = reinterpret_cast<const uint8_t*>(out->heap.data());
    } else {
      out->data = reinterpret_cast<const uint8_t*>(out->stack);
    }
    out->length = length;
    return true;
  }
  napi_typedarray_type arrayType;
  void* data = nullptr;
  if (napi_get_typedarray_info(env, value, &arrayType, &length, &data, nullptr, nullptr) != napi_ok ||
      arrayType != napi_uint8_array)
    return false;
  out->data = static_cast<const uint8_t*>(data);
  out->length = data == nullptr ? 0 : length;  // a detached buffer reads as the empty key
  out->binary = true;
  return true;
}

inline bool ReadIncr(napi_env env, napi_value value, uint32_t* out) {
  double v;
  if (napi_get_value_double(env, value, &v) != napi_ok) return false;
  if (!(v >= 0 && v <= 4294967295.0) || v != static_cast<double>(static_cast<uint32_t>(v))) return false;
  *out = static_cast<uint32_t>(v);
  return true;
}

}  // namespace binding
}  // namespace bulwark
