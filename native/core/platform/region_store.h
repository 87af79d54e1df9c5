// Where named regions live, and the operations on one that differ by OS (docs/readme/foundation.md, "Shared
// regions"):
//
// - POSIX systems: a file in a runtime directory, mapped shared. /dev/shm (memory) on Linux; on macOS, whose POSIX
//   shared memory has 31-character names, no listing and no flock, the user's own temporary directory
//   (confstr(_CS_DARWIN_USER_TEMP_DIR), mode 0700). Locked with flock, listed with readdir. A file is created
//   exclusively and without following links (O_CREAT | O_EXCL | O_NOFOLLOW) with mode 0600; an existing one that
//   another user owns, that group or others may open, or that is not a regular file is refused (kOwner) before it
//   is mapped.
// - Windows: a named section of the paging file in the logon session's namespace (Local\, which every service
//   account shares in session 0), locked with a named mutex (a holder that dies abandons it, and the next waiter gets
//   it); listed from the session's object directory; it goes away with its last handle, so nothing is ever left
//   behind. Both objects are made owned by this account with an access list that admits it alone; an existing one
//   that another account owns or may open, or that is another kind of object, is refused (kOwner) before it is
//   mapped (region_owner_windows.h).
//
// Callers (native/core/region/) use one flow everywhere: Open, Lock, Size (0: new), Grow, Map, Unlock; Unlink when
// the last member leaves.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/util/status.h"

namespace bulwark {

class RegionStore {
 public:
  RegionStore() = default;
  ~RegionStore() { Close(); }
  RegionStore(RegionStore&& other) noexcept { *this = static_cast<RegionStore&&>(other); }
  // The same on every system: Close() is the system's own.
  RegionStore& operator=(RegionStore&& other) noexcept {
    if (this == &other) return *this;
    Close();
    handle_ = other.handle_;
    lock_ = other.lock_;
    fileName_ = static_cast<std::string&&>(other.fileName_);
    location_ = static_cast<std::string&&>(other.location_);
    other.handle_ = kNone;
    other.lock_ = kNone;
    return *this;
  }
  RegionStore(const RegionStore&) = delete;
  RegionStore& operator=(const RegionStore&) = delete;

  // Opens the region object `fileName` for reading and writing; with `create`, creates it empty when it does not
  // exist (else *missing is set and the store stays closed). Another user's object is a kOwner error.
  static Status Open(const std::string& fileName, bool create, RegionStore* out, bool* missing);

  bool is_open() const { return handle_ != kNone || lock_ != kNone; }
  // The exclusive lock every attach, detach and reap takes; waits at most timeoutMs.
  bool Lock(int timeoutMs);
  bool TryLock();
  void Unlock();
  // True when the name still designates this object (it may have been removed, and made again, meanwhile).
  bool StillLinked() const;
  // The object's size in bytes: 0 for one just created.
  Status Size(size_t* out);
  // Makes the object at least `total` bytes, with the space reserved where the system allows (a full /dev/shm is
  // then an error here rather than a SIGBUS at the first write).
  Status Grow(size_t total);
  // Maps `size` bytes shared, read-write.
  Status Map(size_t size, uint8_t** out);
  // Removes the name (POSIX systems); on Windows the object goes with its last handle.
  Status Unlink();
  void Close();
  const std::string& location() const { return location_; }

 private:
  static constexpr intptr_t kNone = -1;
  intptr_t handle_ = kNone;  // POSIX: the file descriptor. Windows: the section, kNone until it exists
  intptr_t lock_ = kNone;    // Windows: the named mutex. POSIX: unused (flock is on the file)
  std::string fileName_;
  std::string location_;
};

void UnmapRegion(uint8_t* base, size_t size);

// A watcher's read-only view of an existing region that neither joins it nor keeps it alive: a private
// copy-on-write mapping (POSIX systems) or a private copy (Windows). Refuses another user's object (kOwner).
Status SnapshotRegion(const std::string& fileName, uint8_t** base, size_t* size);
void FreeSnapshot(uint8_t* base, size_t size);

// The names of the region objects of this system whose name starts with `prefix`.
std::vector<std::string> ListRegionObjects(const std::string& prefix);

// Where the object `fileName` lives, for messages: "/dev/shm/bulwark.0.bbr.api", "Local\bulwark.1001.bbr.api".
std::string RegionLocation(const std::string& fileName);

// POSIX systems only, one definition per OS (region_store_linux.cc, region_store_darwin.cc): the directory region
// files live in, and reserving a file's space.
const std::string& RegionDirectory();
Status ReserveSpace(int fd, size_t total, const std::string& location);

}  // namespace bulwark
