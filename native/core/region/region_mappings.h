// The process-wide table of the regions this process has mapped (attachments and snapshots), behind the
// registry mutex. Internal to the region code: RegionRegistry owns it, the member reaper consults it.
#pragma once
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>
#include <unordered_map>

#include "core/platform/region_store.h"

namespace bulwark {
namespace region_detail {

struct Mapping {
  std::string name;   // the listed name, "<kind>.<name>"
  RegionStore store;  // open while attached: the lock is taken on it
  uint8_t* base = nullptr;
  size_t size = 0;
  uint32_t member = 0;
  uint32_t serial = 0;
  int32_t threadId = 0;
  uint64_t owner = 0;
  bool attached = false;  // member slot held
  bool snapshot = false;  // a watcher's private view, not a member
  bool released = false;  // the registry's own reference is dropped (closed); JavaScript buffers may remain
  bool lost = false;      // reaped while alive (its lease ran out) and its slot taken by another: no longer renewed
  int refs = 0;           // registry's own reference + one per JavaScript buffer
};

using MappingTable = std::unordered_map<uint64_t, Mapping>;

std::mutex& RegistryMutex();
MappingTable& Mappings();

// The functions below: caller holds the registry mutex.

// A new handle for a mapping about to be added to the table.
uint64_t NewHandleLocked();
// True while this process holds the attachment with `serial` to region `name`.
bool SerialIsOpen(uint32_t serial, const std::string& name);
// Drops one reference; the last one unmaps the region, closes its object and removes it from the table.
void DropRef(MappingTable::iterator it);

}  // namespace region_detail
}  // namespace bulwark
