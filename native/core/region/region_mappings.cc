#include "core/region/region_mappings.h"

namespace bulwark {
namespace region_detail {

std::mutex& RegistryMutex() {
  static std::mutex* m = new std::mutex();  // leaked on purpose: used from atexit paths
  return *m;
}
MappingTable& Mappings() {
  static auto* m = new MappingTable();
  return *m;
}

uint64_t NewHandleLocked() {
  static uint64_t next = 1;
  return next++;
}

bool SerialIsOpen(uint32_t serial, const std::string& name) {
  for (auto& kv : Mappings()) {
    const Mapping& m = kv.second;
    if (m.attached && m.serial == serial && m.name == name) return true;
  }
  return false;
}

void DropRef(MappingTable::iterator it) {
  Mapping& m = it->second;
  if (--m.refs > 0) return;
  if (m.base != nullptr && m.snapshot) FreeSnapshot(m.base, m.size);
  if (m.base != nullptr && !m.snapshot) UnmapRegion(m.base, m.size);
  m.store.Close();
  Mappings().erase(it);
}

}  // namespace region_detail
}  // namespace bulwark
