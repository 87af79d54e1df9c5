#include "core/hotkeys/key_identity.h"

#include <cstring>

#include "core/hotkeys/heavy_keeper_layout.h"
#include "core/util/murmur3.h"

namespace bulwark {

namespace hl = heavy_keeper_layout;

bool IsLongKey(size_t length) { return length > hl::kInlineKey; }

std::string KeyIdentity(const uint8_t* key, size_t length) {
  if (!IsLongKey(length)) return std::string(reinterpret_cast<const char*>(key), length);
  uint32_t parts[3] = {Murmur3X86_32(key, length, 0x9747b28cu), Murmur3X86_32(key, length, 0x5bd1e995u),
                       static_cast<uint32_t>(length)};
  std::string id(reinterpret_cast<const char*>(key), hl::kPrefixBytes);
  id.append(reinterpret_cast<const char*>(parts), sizeof parts);
  return id;
}

BoundedKey::BoundedKey(const uint8_t* key, size_t length) : data_(key), length_(length), truncated_(IsLongKey(length)) {
  if (!truncated_) return;
  identity_ = KeyIdentity(key, length);
  data_ = reinterpret_cast<const uint8_t*>(identity_.data());
  length_ = identity_.size();
}

uint32_t IdentityLength(const std::string& identity) {
  if (identity.size() < sizeof(uint32_t)) return 0;
  uint32_t length;
  std::memcpy(&length, identity.data() + identity.size() - sizeof length, sizeof length);
  return length;
}

std::string ShownPrefix(const std::string& identity, bool binary) {
  size_t end = identity.size() < hl::kPrefixBytes ? identity.size() : hl::kPrefixBytes;
  if (!binary) {
    // The last character may have been cut: find its lead byte and drop it unless all its bytes are there.
    size_t lead = end;
    while (lead > 0 && (static_cast<uint8_t>(identity[lead - 1]) & 0xc0) == 0x80) lead--;
    if (lead > 0) {
      const uint8_t b = static_cast<uint8_t>(identity[lead - 1]);
      const size_t bytes = b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : b >= 0xc0 ? 2 : 1;
      if (lead - 1 + bytes > end) end = lead - 1;
    }
  }
  return identity.substr(0, end);
}

}  // namespace bulwark
