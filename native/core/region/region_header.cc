#include "core/region/region_header.h"

#include <cstdio>

#include "core/platform/clock.h"
#include "core/region/region_layout.h"
#include "core/region/region_names.h"
#include "core/util/raw_atomic.h"

namespace bulwark {
namespace region_detail {

using namespace layout;

std::string ReadString(const uint8_t* base, size_t offset, size_t size) {
  const char* p = reinterpret_cast<const char*>(base + offset);
  return std::string(p, strnlen(p, size));
}
void WriteString(uint8_t* base, size_t offset, size_t size, const std::string& s) {
  std::memset(base + offset, 0, size);
  std::memcpy(base + offset, s.data(), s.size() < size ? s.size() : size - 1);
}

Status ValidateSpec(const RegionSpec& spec, size_t* total) {
  if (!IsValidRegionName(spec.name))
    return Status::Error(StatusCode::kInvalidArgument,
                         "region name '" + spec.name + "' must be 1-200 characters of A-Z a-z 0-9 . _ -");
  if (!IsValidRegionKind(spec.kind))
    return Status::Error(StatusCode::kInvalidArgument,
                         "region kind '" + spec.kind + "' must be 1-31 characters of A-Z a-z 0-9 _ -");
  if (spec.fingerprint.size() >= kFingerprintSize)
    return Status::Error(StatusCode::kInvalidArgument, "region fingerprint must be under 160 characters");
  if (spec.memberCapacity == 0 || spec.memberCapacity > kMaxMemberCapacity)
    return Status::Error(StatusCode::kInvalidArgument, "member capacity must be 1-4096");
  if (spec.reclaim.size() > kMaxReclaim)
    return Status::Error(StatusCode::kInvalidArgument, "at most 16 reclaimable lane sets per region");
  size_t t = PayloadOffset(spec.memberCapacity) + AlignUp(spec.payloadSize, 64);
  if (spec.payloadSize == 0 || t > kMaxRegionSize)
    return Status::Error(StatusCode::kInvalidArgument, "region payload size out of range");
  for (const ReclaimEntry& r : spec.reclaim) {
    size_t last = size_t(r.offset) + size_t(r.stride) * (spec.memberCapacity - 1) + 8;
    if (r.offset % 8 != 0 || r.stride % 8 != 0 || last > spec.payloadSize)
      return Status::Error(StatusCode::kInvalidArgument, "reclaim lanes fall outside the payload");
  }
  for (const InitEntry& e : spec.init) {
    if (e.offset % 8 != 0 || size_t(e.offset) + 8 > spec.payloadSize)
      return Status::Error(StatusCode::kInvalidArgument, "init cell falls outside the payload");
  }
  *total = t;
  return Status::Ok();
}

void InitHeader(uint8_t* base, size_t total, const RegionSpec& spec, int32_t generation) {
  std::memset(base, 0, total);
  Write<uint32_t>(base, kMagicOffset, kMagic);
  Write<uint32_t>(base, kVersionOffset, kVersion);
  Write<double>(base, kTotalSizeOffset, static_cast<double>(total));
  Write<int32_t>(base, kGenerationOffset, generation);
  Write<uint32_t>(base, kMemberCapacityOffset, spec.memberCapacity);
  Write<uint32_t>(base, kPayloadOffsetOffset, static_cast<uint32_t>(PayloadOffset(spec.memberCapacity)));
  Write<int32_t>(base, kReclaimCountOffset, static_cast<int32_t>(spec.reclaim.size()));
  Write<double>(base, kCreatedAtOffset, MonotonicMs());
  WriteString(base, kKindOffset, kKindSize, spec.kind);
  WriteString(base, kFingerprintOffset, kFingerprintSize, spec.fingerprint);
  for (size_t i = 0; i < spec.reclaim.size(); i++) {
    Write<uint32_t>(base, kReclaimOffset + i * 8, spec.reclaim[i].offset);
    Write<uint32_t>(base, kReclaimOffset + i * 8 + 4, spec.reclaim[i].stride);
  }
  size_t payload = PayloadOffset(spec.memberCapacity);
  for (const InitEntry& e : spec.init) Write<double>(base, payload + e.offset, e.value);
  StoreI32(base + kStateOffset, kStateReady);
}

Status CheckFrozenHeader(const uint8_t* base, size_t fileSize, const std::string& name, const std::string& location) {
  if (Read<uint32_t>(base, kMagicOffset) != kMagic)
    return Status::Error(StatusCode::kCorrupt, "shared region '" + name +
                                                   "' does not start with the bulwark magic: the file is not a bulwark "
                                                   "region or is corrupted; remove " +
                                                   location);
  double total = Read<double>(base, kTotalSizeOffset);
  uint32_t capacity = Read<uint32_t>(base, kMemberCapacityOffset);
  if (!(total >= kHeaderSize) || total > static_cast<double>(fileSize) || capacity == 0 ||
      capacity > kMaxMemberCapacity || PayloadOffset(capacity) > fileSize) {
    char buf[640];
    std::snprintf(buf, sizeof buf,
                  "shared region '%s' is truncated or corrupted (header says %.0f bytes and %u members, the file has "
                  "%zu bytes); remove %s",
                  name.c_str(), total, capacity, fileSize, location.c_str());
    return Status::Error(StatusCode::kCorrupt, buf);
  }
  return Status::Ok();
}

Status CheckCompatible(const uint8_t* base, size_t total, const RegionSpec& spec) {
  uint32_t version = Read<uint32_t>(base, kVersionOffset);
  double theirTotal = Read<double>(base, kTotalSizeOffset);
  std::string kind = ReadString(base, kKindOffset, kKindSize);
  std::string fingerprint = ReadString(base, kFingerprintOffset, kFingerprintSize);
  uint32_t capacity = Read<uint32_t>(base, kMemberCapacityOffset);
  const std::string listed = ListedRegionName(spec.kind, spec.name);
  char buf[900];
  if (version != kVersion) {
    std::snprintf(buf, sizeof buf,
                  "shared region '%s' has layout version %u but this bulwark uses layout version %u: another version "
                  "of bulwark is running with the same name; give each version its own `shared` name during a "
                  "rolling deploy",
                  listed.c_str(), version, kVersion);
    return Status::Error(StatusCode::kMismatch, buf);
  }
  if (kind != spec.kind || fingerprint != spec.fingerprint || capacity != spec.memberCapacity ||
      theirTotal != static_cast<double>(total)) {
    std::snprintf(buf, sizeof buf,
                  "shared region '%s' holds %s [%s] (%.0f bytes, %u members) but this process asked for %s [%s] "
                  "(%zu bytes, %u members): every process sharing a name must use the same options",
                  listed.c_str(), kind.c_str(), fingerprint.c_str(), theirTotal, capacity, spec.kind.c_str(),
                  spec.fingerprint.c_str(), total, spec.memberCapacity);
    return Status::Error(StatusCode::kMismatch, buf);
  }
  if (LoadI32(base + kStateOffset) != kStateReady)
    return Status::Error(StatusCode::kCorrupt, "shared region '" + listed + "' has live members but is not ready");
  return Status::Ok();
}

}  // namespace region_detail
}  // namespace bulwark
