// Value conversion helpers for the binding layer. The binding only converts: it checks that arguments have the
// right JavaScript types (validation of meaning lives in TypeScript), calls the core, and turns a failed Status
// into a JavaScript Error with a `code` the TypeScript layer maps to a typed error.
#pragma once
#include <napi.h>

#include <string>

#include "core/util/status.h"

namespace bulwark {
namespace binding {

inline void ThrowStatus(Napi::Env env, const Status& status) {
  Napi::Error error = Napi::Error::New(env, status.message());
  error.Set("code", Napi::String::New(env, StatusCodeName(status.code())));
  if (!status.location().empty()) error.Set("location", Napi::String::New(env, status.location()));
  if (status.owner() >= 0) error.Set("owner", Napi::Number::New(env, static_cast<double>(status.owner())));
  error.ThrowAsJavaScriptException();
}

inline void ThrowTypeError(Napi::Env env, const std::string& message) {
  Napi::TypeError error = Napi::TypeError::New(env, message);
  error.Set("code", Napi::String::New(env, "ERR_BULWARK_INVALID_ARGUMENT"));
  error.ThrowAsJavaScriptException();
}

// Reads a finite number argument; throws and returns false when it is not one.
inline bool GetNumber(const Napi::CallbackInfo& info, size_t index, const char* name, double* out) {
  if (info.Length() <= index || !info[index].IsNumber()) {
    ThrowTypeError(info.Env(), std::string(name) + " must be a number");
    return false;
  }
  *out = info[index].As<Napi::Number>().DoubleValue();
  return true;
}

inline bool GetString(const Napi::CallbackInfo& info, size_t index, const char* name, std::string* out) {
  if (info.Length() <= index || !info[index].IsString()) {
    ThrowTypeError(info.Env(), std::string(name) + " must be a string");
    return false;
  }
  *out = info[index].As<Napi::String>().Utf8Value();
  return true;
}

// A property of an options object, as a number; `fallback` when absent.
inline bool GetNumberProp(Napi::Object obj, const char* key, double fallback, double* out) {
  Napi::Value v = obj.Get(key);
  if (v.IsUndefined()) {
    *out = fallback;
    return true;
  }
  if (!v.IsNumber()) {
    ThrowTypeError(obj.Env(), std::string(key) + " must be a number");
    return false;
  }
  *out = v.As<Napi::Number>().DoubleValue();
  return true;
}

inline bool GetStringProp(Napi::Object obj, const char* key, std::string* out) {
  Napi::Value v = obj.Get(key);
  if (!v.IsString()) {
    ThrowTypeError(obj.Env(), std::string(key) + " must be a string");
    return false;
  }
  *out = v.As<Napi::String>().Utf8Value();
  return true;
}

}  // namespace binding
}  // namespace bulwark
