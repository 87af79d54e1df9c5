// The header of a shared region (layout in core/region/region_layout.h): writing it, and checking one another process
// wrote before trusting it. Internal to the region code (shared_region.cc and its helpers).
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

#include "core/region/shared_region.h"
#include "core/util/status.h"

namespace bulwark {
namespace region_detail {

// Unaligned plain loads and stores of header and member-slot fields.
template <typename T>
T Read(const uint8_t* base, size_t offset) {
  T v;
  std::memcpy(&v, base + offset, sizeof v);
  return v;
}
template <typename T>
void Write(uint8_t* base, size_t offset, T v) {
  std::memcpy(base + offset, &v, sizeof v);
}

// NUL-padded string fields of `size` bytes.
std::string ReadString(const uint8_t* base, size_t offset, size_t size);
void WriteString(uint8_t* base, size_t offset, size_t size, const std::string& s);

// Checks the spec's name, sizes and cells; sets *total to the whole region's size in bytes.
Status ValidateSpec(const RegionSpec& spec, size_t* total);

// Zeroes the whole region, writes a header for `spec`, writes the payload's initial cells, then marks it ready.
void InitHeader(uint8_t* base, size_t total, const RegionSpec& spec, int32_t generation);

// Checks that an existing region's bytes form a header we can trust at least for its frozen part. `location` (the
// file or object) is named in the message, for whoever must remove it.
Status CheckFrozenHeader(const uint8_t* base, size_t fileSize, const std::string& name, const std::string& location);

// Checks that a region with live members was made by this layout version with the same options as `spec`.
Status CheckCompatible(const uint8_t* base, size_t total, const RegionSpec& spec);

}  // namespace region_detail
}  // namespace bulwark
