// HeavyKeeper: the native top-k behind lib/components/hotkeys. The TypeScript layer validates options and lays out the
// region; this file only converts values.
//   new HeavyKeeper({ k, width, depth, decay, minCount, seed, shared, view, controlOffset, sketchOffset,
//                     aliveOffset, aliveStride, lanesOffset, laneStride, member, laneCapacity })
//   hk.add(key, incr) -> int: bit 0 in the top-k, bit 1 expelled keys waiting; -1 bad key, -2 bad incr
//   hk.addMany(keys, incr) -> keys left in the top-k, or -1 - i when keys[i] is not a key
//   hk.count(key) -> number (-1: bad key); hk.list(lanes) -> [{ key, count, truncated? }]; hk.total(lanes)
//   hk.fading(); hk.fadeOnce(epoch) -> boolean; hk.collectExpelled(on); hk.takeExpelled() -> [{ key, count }]
//   murmur3(key, seed) -> uint32; heavyKeeperLayout: byte sizes for the TypeScript layout
// `add` is a plain N-API function bound to its instance (no unwrap, no wrapper objects): it is the hot path.
#include <napi.h>

#include <memory>
#include <string>

#include "binding/binding_util.h"
#include "binding/env_data.h"
#include "binding/key_bytes.h"
#include "core/hotkeys/heavy_keeper.h"
#include "core/hotkeys/heavy_keeper_layout.h"
#include "core/util/murmur3.h"

namespace bulwark {
namespace binding {

namespace {

using Keeper = std::shared_ptr<HeavyKeeper>;

constexpr int kBadKey = -1;
constexpr int kBadIncr = -2;
napi_value Int(napi_env env, int32_t v) {
  napi_value out;
  napi_create_int32(env, v, &out);
  return out;
}

// The two arguments of a bound function and the keeper it is bound to (through the function's data pointer).
HeavyKeeper* BoundArgs(napi_env env, napi_callback_info info, napi_value* argv) {
  size_t argc = 2;
  void* data;
  if (napi_get_cb_info(env, info, &argc, argv, nullptr, &data) != napi_ok || argc < 2) return nullptr;
  return static_cast<Keeper*>(data)->get();
}

// add(key, incr)
napi_value FastAdd(napi_env env, napi_callback_info info) {
  napi_value argv[2];
  HeavyKeeper* keeper = BoundArgs(env, info, argv);
  if (keeper == nullptr) return Int(env, kBadKey);
  KeyBytes key;
  if (!ReadKey(env, argv[0], &key)) return Int(env, kBadKey);
  uint32_t incr;
  if (!ReadIncr(env, argv[1], &incr)) return Int(env, kBadIncr);
  return Int(env, keeper->Add(key.data, key.length, incr, key.binary));
}

// addMany(keys, incr): the crossing paid once per batch.
napi_value FastAddMany(napi_env env, napi_callback_info info) {
  napi_value argv[2];
  HeavyKeeper* keeper = BoundArgs(env, info, argv);
  if (keeper == nullptr) return Int(env, kBadKey);
  uint32_t incr, length;
  if (!ReadIncr(env, argv[1], &incr)) return Int(env, kBadIncr);
  if (napi_get_array_length(env, argv[0], &length) != napi_ok) return Int(env, kBadKey);
  int32_t inTopK = 0;
  KeyBytes key;
  for (uint32_t i = 0; i < length; i++) {
    napi_value element;
    key.binary = false;
    if (napi_get_element(env, argv[0], i, &element) != napi_ok || !ReadKey(env, element, &key))
      return Int(env, -1 - static_cast<int32_t>(i));
    inTopK += keeper->Add(key.data, key.length, incr, key.binary) & HeavyKeeper::kInTopK;
  }
  return Int(env, inTopK);
}

void DeleteKeeper(napi_env, void* data, void*) { delete static_cast<Keeper*>(data); }

Napi::Value KeyValue(Napi::Env env, const std::string& key, bool binary) {
  if (binary) return Napi::Buffer<uint8_t>::Copy(env, reinterpret_cast<const uint8_t*>(key.data()), key.size());
  return Napi::String::New(env, key.data(), key.size());
}

bool GetSize(Napi::Object o, const char* name, size_t* out) {
  double v;
  if (!GetNumberProp(o, name, -1, &v)) return false;
  if (!(v >= 0 && v <= 9007199254740991.0) || v != static_cast<double>(static_cast<uint64_t>(v))) {
    ThrowTypeError(o.Env(), std::string(name) + " must be a non-negative integer");
    return false;
  }
  *out = static_cast<size_t>(v);
  return true;
}

class HeavyKeeperWrap : public Napi::ObjectWrap<HeavyKeeperWrap> {
 public:
  static Napi::Function Define(Napi::Env env) {
    return DefineClass(
        env, "HeavyKeeper",
        {InstanceMethod<&HeavyKeeperWrap::Count>("count"), InstanceMethod<&HeavyKeeperWrap::List>("list"),
         InstanceMethod<&HeavyKeeperWrap::Total>("total"), InstanceMethod<&HeavyKeeperWrap::Fading>("fading"),
         InstanceMethod<&HeavyKeeperWrap::FadeOnce>("fadeOnce"),
         InstanceMethod<&HeavyKeeperWrap::CollectExpelled>("collectExpelled"),
         InstanceMethod<&HeavyKeeperWrap::TakeExpelled>("takeExpelled"),
         InstanceMethod<&HeavyKeeperWrap::ContentionTimeouts>("contentionTimeouts")});
  }

  explicit HeavyKeeperWrap(const Napi::CallbackInfo& info) : Napi::ObjectWrap<HeavyKeeperWrap>(info) {
    Napi::Env env = info.Env();
    if (info.Length() < 1 || !info[0].IsObject()) {
      ThrowTypeError(env, "HeavyKeeper expects a configuration object");
      return;
    }
    Napi::Object o = info[0].As<Napi::Object>();
    Napi::Value view = o.Get("view");
    if (!view.IsTypedArray() || view.As<Napi::TypedArray>().TypedArrayType() != napi_uint8_array) {
      ThrowTypeError(env, "view must be a Uint8Array");
      return;
    }
    HeavyKeeperConfig c;
    Napi::Uint8Array bytes = view.As<Napi::Uint8Array>();
    c.memory = bytes.Data();
    c.memorySize = bytes.ByteLength();
    size_t k, width, depth, minCount, seed, member, lanes;
    double decay;
    if (!GetSize(o, "k", &k) || !GetSize(o, "width", &width) || !GetSize(o, "depth", &depth) ||
        !GetNumberProp(o, "decay", -1, &decay) || !GetSize(o, "minCount", &minCount) || !GetSize(o, "seed", &seed) ||
        !GetSize(o, "controlOffset", &c.controlOffset) || !GetSize(o, "sketchOffset", &c.sketchOffset) ||
        !GetSize(o, "aliveOffset", &c.aliveOffset) || !GetSize(o, "aliveStride", &c.aliveStride) ||
        !GetSize(o, "lanesOffset", &c.lanesOffset) || !GetSize(o, "laneStride", &c.laneStride) ||
        !GetSize(o, "member", &member) || !GetSize(o, "laneCapacity", &lanes))
      return;
    if (k > UINT32_MAX || width > UINT32_MAX || depth > UINT32_MAX || member > UINT32_MAX || lanes > UINT32_MAX) {
      ThrowTypeError(env, "k, width, depth, member and laneCapacity must fit 32 bits");
      return;
    }
    c.k = static_cast<uint32_t>(k);
    c.width = static_cast<uint32_t>(width);
    c.depth = static_cast<uint32_t>(depth);
    c.decay = decay;
    c.minCount = minCount;
    c.seed = seed;
    c.member = static_cast<uint32_t>(member);
    c.laneCapacity = static_cast<uint32_t>(lanes);
    c.shared = o.Get("shared").ToBoolean().Value();
    Napi::Value front = o.Get("front");
    if (!front.IsUndefined()) {
      if (!front.IsTypedArray() || front.As<Napi::TypedArray>().TypedArrayType() != napi_uint8_array ||
          front.As<Napi::Uint8Array>().ByteLength() < HeavyKeeperFront::Size(c.k, c.depth)) {
        ThrowTypeError(env, "front must be a Uint8Array of HeavyKeeperFront::Size(k, depth) bytes");
        return;
      }
      c.front = front.As<Napi::Uint8Array>().Data();
      front_ = Napi::Persistent(front.As<Napi::Uint8Array>());
    }
    std::unique_ptr<HeavyKeeper> created;
    Status status = HeavyKeeper::Create(c, &created);
    if (!status.ok()) {
      ThrowStatus(env, status);
      return;
    }
    keeper_ = Keeper(created.release());
    view_ = Napi::Persistent(bytes);  // the memory stays mapped while this object lives
    if (!BindFast(env, "add", FastAdd) || !BindFast(env, "addMany", FastAddMany)) keeper_.reset();
  }

 private:
  // A function whose data is its own reference to the keeper, so it stays valid however long it is held.
  bool BindFast(Napi::Env env, const char* name, napi_callback callback) {
    auto* data = new Keeper(keeper_);
    napi_value fn;
    if (napi_create_function(env, name, NAPI_AUTO_LENGTH, callback, data, &fn) != napi_ok ||
        napi_add_finalizer(env, fn, data, DeleteKeeper, nullptr, nullptr) != napi_ok) {
      delete data;
      Napi::Error::New(env, "could not create HeavyKeeper.add").ThrowAsJavaScriptException();
      return false;
    }
    Value().Set(name, Napi::Value(env, fn));
    return true;
  }

  Napi::Value Count(const Napi::CallbackInfo& info) {
    KeyBytes key;
    if (info.Length() < 1 || !ReadKey(info.Env(), info[0], &key)) return Napi::Number::New(info.Env(), -1);
    return Napi::Number::New(info.Env(), static_cast<double>(keeper_->Count(key.data, key.length)));
  }

  uint32_t Lanes(const Napi::CallbackInfo& info) {
    if (info.Length() < 1 || !info[0].IsNumber()) return 1;
    double v = info[0].As<Napi::Number>().DoubleValue();
    return v >= 1 && v <= 4096 ? static_cast<uint32_t>(v) : 1;
  }

  Napi::Value List(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    std::vector<ListedKey> items = keeper_->List(Lanes(info));
    Napi::Array out = Napi::Array::New(env, items.size());
    for (size_t i = 0; i < items.size(); i++) {
      Napi::Object item = Napi::Object::New(env);
      item.Set("key", KeyValue(env, items[i].key, items[i].binary));
      item.Set("count", Napi::Number::New(env, static_cast<double>(items[i].count)));
      if (items[i].truncated) item.Set("truncated", Napi::Boolean::New(env, true));
      out.Set(static_cast<uint32_t>(i), item);
    }
    return out;
  }

  Napi::Value Total(const Napi::CallbackInfo& info) {
    return Napi::Number::New(info.Env(), static_cast<double>(keeper_->Total(Lanes(info))));
  }

  Napi::Value ContentionTimeouts(const Napi::CallbackInfo& info) {
    return Napi::Number::New(info.Env(), static_cast<double>(keeper_->contentionTimeouts()));
  }

  Napi::Value Fading(const Napi::CallbackInfo& info) {
    keeper_->Fading();
    return info.Env().Undefined();
  }

  Napi::Value FadeOnce(const Napi::CallbackInfo& info) {
    double epoch;
    if (!GetNumber(info, 0, "epoch", &epoch)) return info.Env().Undefined();
    if (!(epoch >= 0 && epoch < 9007199254740992.0)) {
      ThrowTypeError(info.Env(), "epoch must be a non-negative integer");
      return info.Env().Undefined();
    }
    return Napi::Boolean::New(info.Env(), keeper_->FadeOnce(static_cast<int64_t>(epoch)));
  }

  Napi::Value CollectExpelled(const Napi::CallbackInfo& info) {
    keeper_->CollectExpelled(info.Length() > 0 && info[0].ToBoolean().Value());
    return info.Env().Undefined();
  }

  Napi::Value TakeExpelled(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    std::vector<ExpelledKey> taken = keeper_->TakeExpelled();
    Napi::Array out = Napi::Array::New(env, taken.size());
    for (size_t i = 0; i < taken.size(); i++) {
      Napi::Object item = Napi::Object::New(env);
      item.Set("key", KeyValue(env, taken[i].key, taken[i].binary));
      item.Set("count", Napi::Number::New(env, static_cast<double>(taken[i].count)));
      if (taken[i].truncated) item.Set("truncated", Napi::Boolean::New(env, true));
      out.Set(static_cast<uint32_t>(i), item);
    }
    return out;
  }

  // Never null once constructed: a constructor that throws is deleted before JavaScript sees the object.
  Keeper keeper_;
  Napi::Reference<Napi::Uint8Array> view_;
  Napi::Reference<Napi::Uint8Array> front_;  // the JavaScript front's memory, kept while this object lives
};

// murmur3(key, seed): the hash the sketch uses, for callers that need Go-compatible hashing.
Napi::Value Murmur3(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  KeyBytes key;
  if (info.Length() < 2 || !ReadKey(env, info[0], &key) || !info[1].IsNumber()) return Napi::Number::New(env, -1);
  uint32_t seed = info[1].As<Napi::Number>().Uint32Value();
  return Napi::Number::New(env, Murmur3X86_32(key.data, key.length, seed));
}

}  // namespace

void InitHeavyKeeper(Napi::Env env, Napi::Object exports) {
  Napi::Function constructor = HeavyKeeperWrap::Define(env);
  EnvData* data = GetEnvData(env);
  if (data != nullptr) data->heavyKeeperConstructor = Napi::Persistent(constructor);
  exports.Set("HeavyKeeper", constructor);
  exports.Set("murmur3", Napi::Function::New(env, Murmur3, "murmur3"));
  namespace hl = heavy_keeper_layout;
  Napi::Object layout = Napi::Object::New(env);
  layout.Set("controlSize", Napi::Number::New(env, hl::kControlSize));
  layout.Set("bucketSize", Napi::Number::New(env, hl::kBucketSize));
  layout.Set("laneHeaderSize", Napi::Number::New(env, hl::kLaneHeaderSize));
  layout.Set("slotSize", Napi::Number::New(env, hl::kSlotSize));
  layout.Set("inlineKey", Napi::Number::New(env, hl::kInlineKey));
  layout.Set("prefixBytes", Napi::Number::New(env, hl::kPrefixBytes));
  exports.Set("heavyKeeperLayout", layout);
}

}  // namespace binding
}  // namespace bulwark
