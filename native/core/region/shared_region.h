// Named shared regions and the process-wide registry of the ones this process has open. Where a region lives on each
// OS is platform/region_store.h; its name, "bulwark.<uid>.<kind>.<name>", is region_names.h.
//
// Lifetime rules:
// - Attach and detach happen under the region's exclusive lock, so creation, validation, member claims and removal
//   never interleave across processes.
// - Each attachment (one per thread and component) owns a member slot and a lane index equal to its slot.
// - Each process renews the lease of every attachment it holds every kLeaseRenewMs (the sampler thread).
// - A dead member (region_members.h: its process gone, or its lease expired when it is in another pid namespace) is
//   reaped: its reclaimable lane cells are zeroed and its slot freed. Attach and detach do this, and the sampler
//   does it within kLeaseTtlMs + kLeaseRenewMs for every region this process has open.
// - The last live member to detach removes the name. A region whose members are all dead is rebuilt on attach.
// - The mapping itself is released only when the region is closed AND no JavaScript buffer still points at it,
//   so a typed array kept after close() never touches unmapped memory.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/region/region_names.h"
#include "core/util/status.h"

namespace bulwark {

struct ReclaimEntry {
  uint32_t offset;  // payload byte offset of member 0's cell (an f64)
  uint32_t stride;  // bytes between members' cells
};

struct InitEntry {
  uint32_t offset;  // payload byte offset of an f64 cell
  double value;     // written when the payload is (re)initialised
};

struct RegionSpec {
  std::string name;         // [A-Za-z0-9._-]{1,200}: the component's `shared` name
  std::string kind;         // what the region holds, [A-Za-z0-9_-]{1,31}, e.g. "bbr"
  std::string fingerprint;  // the layout-relevant configuration; attachers must agree on it
  uint32_t memberCapacity = 0;
  size_t payloadSize = 0;
  std::vector<ReclaimEntry> reclaim;
  std::vector<InitEntry> init;
  int32_t threadId = 0;
  int lockTimeoutMs = 2000;
};

struct RegionAttachment {
  uint64_t handle = 0;
  uint8_t* base = nullptr;
  size_t size = 0;  // bytes mapped
  uint32_t member = 0;
  uint32_t payloadOffset = 0;
  bool created = false;  // this attach initialised the payload (new, or rebuilt from dead members)
  bool rebuilt = false;  // ... and it did so over a region left by processes that are gone
};

struct RegionSnapshot {  // a read-only view, for tools that watch a host without joining it
  uint64_t handle = 0;
  uint8_t* base = nullptr;
  size_t size = 0;
};

struct RegionMemberInfo {
  uint32_t slot;
  int32_t pid;
  int32_t threadId;
  bool alive;
};

class RegionRegistry {
 public:
  static RegionRegistry& Instance();

  Status Open(const RegionSpec& spec, RegionAttachment* out);
  // Detach the member (reclaiming its lanes) and drop the registry's reference to the mapping.
  Status Close(uint64_t handle);
  // Close every handle opened by this owner (a JavaScript environment that is going away).
  void CloseOwnedBy(uint64_t owner);
  // Close every handle (process exit: environment cleanup hooks do not run on the main thread's process.exit()).
  void CloseAll();
  void SetOwner(uint64_t handle, uint64_t owner);

  // References held by JavaScript buffers over a mapping.
  void Retain(uint64_t handle);
  void Release(uint64_t handle);

  // The sampler's tick: renews this process's leases on every open region, then reaps the dead members of those
  // where a lease has expired, without waiting for a lock. Returns members reaped.
  int MaintainAll();

  // Tools name regions by their listed name, "<kind>.<name>" (region_names.h).
  Status Snapshot(const std::string& listed, RegionSnapshot* out);
  Status Members(uint64_t handle, std::vector<RegionMemberInfo>* out);
  // The listed names of this user's regions.
  std::vector<std::string> List();
  Status Unlink(const std::string& listed);
  // Removes the name of a region no live process uses (left by processes that were all killed), under the region's
  // lock so that it cannot race an attach. Sets *removed. A region with live members, or whose lock is held, stays.
  Status RemoveIfStale(const std::string& listed, bool* removed);
  // Where the region lives (a file path, or an object name on Windows).
  Status Location(const std::string& listed, std::string* out);

 private:
  RegionRegistry() = default;
};

}  // namespace bulwark
