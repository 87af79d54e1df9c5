// The bounded form HeavyKeeper keeps a key in (docs/rules/heavykeeper.md, "Long keys"). A key of at most
// kInlineKey bytes is kept whole; a longer one as its identity: its first kPrefixBytes, two murmur3 hashes of the
// whole key and its length, kInlineKey + 4 bytes in all (longer than any key kept whole, so the two forms never
// meet). Memory per key is then bounded whatever the key; two long keys are told apart by 64 bits of hash.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

namespace bulwark {

// Whether a key of `length` bytes is kept as an identity rather than whole.
bool IsLongKey(size_t length);
// The identity of a long key (of any key: a short one is returned whole).
std::string KeyIdentity(const uint8_t* key, size_t length);
// The length of the key an identity was made from.
uint32_t IdentityLength(const std::string& identity);
// A key as the heap keeps it: the key's own bytes when short (no copy), its identity when long.
class BoundedKey {
 public:
  BoundedKey(const uint8_t* key, size_t length);
  BoundedKey(const BoundedKey&) = delete;
  BoundedKey& operator=(const BoundedKey&) = delete;
  const uint8_t* data() const { return data_; }
  size_t length() const { return length_; }
  bool truncated() const { return truncated_; }

 private:
  std::string identity_;
  const uint8_t* data_;
  size_t length_;
  bool truncated_;
};

// What a listing shows of an identity: its prefix, cut back to a whole UTF-8 character unless the key is bytes.
std::string ShownPrefix(const std::string& identity, bool binary);

}  // namespace bulwark
