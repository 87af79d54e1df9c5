#include "core/shared_region.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <mutex>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <unordered_map>

#include "core/monotonic_clock.h"
#include "core/process_identity.h"
#include "core/raw_atomic.h"
#include "core/region_layout.h"

namespace bulwark {

namespace {

using namespace layout;

struct Mapping {
  std::string name;
  int fd = -1;            // kept open while attached; flock is taken on it
  uint8_t* base = nullptr;
  size_t size = 0;
  uint32_t member = 0;
  uint32_t serial = 0;
  uint64_t owner = 0;
  bool attached = false;  // member slot held
  bool snapshot = false;  // read-only private view, not a member
  int refs = 0;           // registry's own reference + one per JavaScript buffer
};

std::mutex& RegistryMutex() {
  static std::mutex* m = new std::mutex();  // leaked on purpose: used from atexit paths
  return *m;
}
std::unordered_map<uint64_t, Mapping>& Mappings() {
  static auto* m = new std::unordered_map<uint64_t, Mapping>();
  return *m;
}
uint64_t g_nextHandle = 1;
uint32_t g_nextSerial = 1;
bool g_atExitRegistered = false;

// A process that ends with process.exit() (no environment cleanup) still leaves its regions as a clean exit would:
// members detached, lanes given back, and the name removed if it was the last member.
void CloseAllAtExit() { RegionRegistry::Instance().CloseAll(); }

std::string Errno(const char* what, const std::string& name) {
  char buf[256];
  std::snprintf(buf, sizeof buf, "%s for region '%s' failed: %s", what, name.c_str(), std::strerror(errno));
  return buf;
}

void SleepMs(int ms) {
  timespec ts{0, static_cast<long>(ms) * 1000000L};
  nanosleep(&ts, nullptr);
}

bool LockWithTimeout(int fd, int timeoutMs) {
  double deadline = MonotonicMs() + timeoutMs;
  for (;;) {
    if (flock(fd, LOCK_EX | LOCK_NB) == 0) return true;
    if (errno != EWOULDBLOCK && errno != EINTR) return false;
    if (MonotonicMs() >= deadline) return false;
    SleepMs(1);
  }
}

void Unlock(int fd) { flock(fd, LOCK_UN); }

// True when `fd` is still the object the name points at (it may have been unlinked and re-created meanwhile).
bool StillLinked(int fd, const std::string& path) {
  int other = shm_open(path.c_str(), O_RDONLY | O_CLOEXEC, 0);
  if (other < 0) return false;
  struct stat a, b;
  bool same = fstat(fd, &a) == 0 && fstat(other, &b) == 0 && a.st_ino == b.st_ino && a.st_dev == b.st_dev;
  close(other);
  return same;
}

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

std::string ReadString(const uint8_t* base, size_t offset, size_t size) {
  const char* p = reinterpret_cast<const char*>(base + offset);
  return std::string(p, strnlen(p, size));
}
void WriteString(uint8_t* base, size_t offset, size_t size, const std::string& s) {
  std::memset(base + offset, 0, size);
  std::memcpy(base + offset, s.data(), s.size() < size ? s.size() : size - 1);
}

struct SelfIdentity {
  pid_t pid;
  uint64_t startTime;
  uint64_t pidNs;
};
const SelfIdentity& Self() {
  // Recomputed after fork(): a child must not look like its parent.
  static SelfIdentity self{0, 0, 0};
  pid_t pid = getpid();
  if (self.pid != pid) self = SelfIdentity{pid, ProcessStartTime(pid), PidNamespaceId()};
  return self;
}

// Caller holds the registry mutex.
bool SerialIsOpen(uint32_t serial, const std::string& name) {
  for (auto& kv : Mappings()) {
    const Mapping& m = kv.second;
    if (m.attached && m.serial == serial && m.name == name) return true;
  }
  return false;
}

bool MemberIsDead(const uint8_t* base, uint32_t slot, const std::string& name) {
  size_t s = MemberSlot(slot);
  int32_t pid = LoadI32(base + s + kMemberPidOffset);
  if (pid == 0) return false;  // free, not dead
  uint32_t serial = Read<uint32_t>(base, s + kMemberSerialOffset);
  uint64_t start = Read<uint64_t>(base, s + kMemberStartTimeOffset);
  uint64_t ns = Read<uint64_t>(base, s + kMemberPidNsOffset);
  const SelfIdentity& self = Self();
  if (ns != 0 && self.pidNs != 0 && ns != self.pidNs) return false;  // another pid namespace: cannot judge
  if (pid == self.pid) {
    if (start != 0 && self.startTime != 0 && start != self.startTime) return true;  // an earlier process, same pid
    return !SerialIsOpen(serial, name);
  }
  return ProcessLiveness(pid, start) == Liveness::kDead;
}

void ZeroReclaimCells(uint8_t* base, size_t mapped, uint32_t slot) {
  uint32_t payload = Read<uint32_t>(base, kPayloadOffsetOffset);
  int32_t count = Read<int32_t>(base, kReclaimCountOffset);
  if (count < 0 || count > static_cast<int32_t>(kMaxReclaim)) return;
  for (int32_t i = 0; i < count; i++) {
    uint32_t off = Read<uint32_t>(base, kReclaimOffset + i * 8);
    uint32_t stride = Read<uint32_t>(base, kReclaimOffset + i * 8 + 4);
    size_t cell = size_t(payload) + off + size_t(stride) * slot;
    if (cell % 8 != 0 || cell + 8 > mapped) continue;  // never write outside the mapping
    StoreF64(base + cell, 0.0);
  }
}

void FreeSlot(uint8_t* base, uint32_t slot) {
  size_t s = MemberSlot(slot);
  std::memset(base + s + 4, 0, kMemberSlotSize - 4);
  StoreI32(base + s + kMemberPidOffset, 0);
}

// Reaps dead members; returns the number of live members left. Caller holds the flock and the registry mutex.
int ReapLocked(uint8_t* base, size_t mapped, const std::string& name, int* reaped) {
  uint32_t capacity = Read<uint32_t>(base, kMemberCapacityOffset);
  int live = 0;
  // The capacity is re-read from shared memory, which a faulty writer may have overwritten since attach: never
  // walk past the mapping.
  for (uint32_t i = 0; i < capacity && MemberSlot(i) + kMemberSlotSize <= mapped; i++) {
    if (LoadI32(base + MemberSlot(i) + kMemberPidOffset) == 0) continue;
    if (MemberIsDead(base, i, name)) {
      ZeroReclaimCells(base, mapped, i);
      FreeSlot(base, i);
      if (reaped) (*reaped)++;
    } else {
      live++;
    }
  }
  return live;
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

Status ValidateSpec(const RegionSpec& spec, size_t* total) {
  if (!IsValidRegionName(spec.name))
    return Status::Error(StatusCode::kInvalidArgument, "region name '" + spec.name +
                                                           "' must be 1-200 characters of A-Z a-z 0-9 . _ -");
  if (spec.kind.empty() || spec.kind.size() >= kKindSize)
    return Status::Error(StatusCode::kInvalidArgument, "region kind must be 1-31 characters");
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

// Makes the file exactly `total` bytes with its pages reserved, so that a full /dev/shm is an error here
// instead of a SIGBUS at the first write.
Status Reserve(int fd, size_t total, const std::string& name) {
  if (ftruncate(fd, static_cast<off_t>(total)) != 0) return Status::Error(StatusCode::kSystem, Errno("ftruncate", name));
#ifdef __linux__
  int rc = posix_fallocate(fd, 0, static_cast<off_t>(total));
  if (rc != 0 && rc != EOPNOTSUPP && rc != EINVAL) {
    errno = rc;
    return Status::Error(StatusCode::kSystem, Errno("reserving shared memory (is /dev/shm full?)", name));
  }
#endif
  return Status::Ok();
}

Status MapShared(int fd, size_t size, const std::string& name, uint8_t** out) {
  void* p = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED) return Status::Error(StatusCode::kSystem, Errno("mmap", name));
  *out = static_cast<uint8_t*>(p);
  return Status::Ok();
}

// Checks that an existing region's bytes form a header we can trust at least for its frozen part.
Status CheckFrozenHeader(const uint8_t* base, size_t fileSize, const std::string& name) {
  if (Read<uint32_t>(base, kMagicOffset) != kMagic)
    return Status::Error(StatusCode::kCorrupt, "shared region '" + name +
                                                   "' does not start with the bulwark magic: the file is not a bulwark "
                                                   "region or is corrupted; remove /dev/shm/bulwark." + name);
  double total = Read<double>(base, kTotalSizeOffset);
  uint32_t capacity = Read<uint32_t>(base, kMemberCapacityOffset);
  if (!(total >= kHeaderSize) || total > static_cast<double>(fileSize) || capacity == 0 ||
      capacity > kMaxMemberCapacity || PayloadOffset(capacity) > fileSize) {
    char buf[320];
    std::snprintf(buf, sizeof buf,
                  "shared region '%s' is truncated or corrupted (header says %.0f bytes and %u members, the file has "
                  "%zu bytes); remove /dev/shm/bulwark.%s",
                  name.c_str(), total, capacity, fileSize, name.c_str());
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
  char buf[900];
  if (version != kVersion) {
    std::snprintf(buf, sizeof buf,
                  "shared region '%s' has layout version %u but this bulwark uses layout version %u: another version "
                  "of bulwark is running with the same name; give each version its own `shared` name during a "
                  "rolling deploy",
                  spec.name.c_str(), version, kVersion);
    return Status::Error(StatusCode::kMismatch, buf);
  }
  if (kind != spec.kind || fingerprint != spec.fingerprint || capacity != spec.memberCapacity ||
      theirTotal != static_cast<double>(total)) {
    std::snprintf(buf, sizeof buf,
                  "shared region '%s' holds %s [%s] (%.0f bytes, %u members) but this process asked for %s [%s] "
                  "(%zu bytes, %u members): every process sharing a name must use the same options",
                  spec.name.c_str(), kind.c_str(), fingerprint.c_str(), theirTotal, capacity, spec.kind.c_str(),
                  spec.fingerprint.c_str(), total, spec.memberCapacity);
    return Status::Error(StatusCode::kMismatch, buf);
  }
  if (LoadI32(base + kStateOffset) != kStateReady)
    return Status::Error(StatusCode::kCorrupt, "shared region '" + spec.name + "' has live members but is not ready");
  return Status::Ok();
}

bool ClaimSlot(uint8_t* base, uint32_t capacity, int32_t threadId, uint32_t serial, uint32_t* slotOut) {
  const SelfIdentity& self = Self();
  for (uint32_t i = 0; i < capacity; i++) {
    size_t s = MemberSlot(i);
    if (LoadI32(base + s + kMemberPidOffset) != 0) continue;
    Write<uint32_t>(base, s + kMemberSerialOffset, serial);
    Write<uint64_t>(base, s + kMemberStartTimeOffset, self.startTime);
    Write<uint64_t>(base, s + kMemberPidNsOffset, self.pidNs);
    Write<double>(base, s + kMemberAttachedAtOffset, MonotonicMs());
    Write<int32_t>(base, s + kMemberThreadOffset, threadId);
    StoreI32(base + s + kMemberPidOffset, self.pid);
    int32_t hw = LoadI32(base + kMemberHighWaterOffset);
    if (static_cast<int32_t>(i) + 1 > hw) StoreI32(base + kMemberHighWaterOffset, static_cast<int32_t>(i) + 1);
    AddI32(base + kAttachCountOffset, 1);
    *slotOut = i;
    return true;
  }
  return false;
}

}  // namespace

bool IsValidRegionName(const std::string& name) {
  if (name.empty() || name.size() > 200) return false;
  for (char c : name) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' ||
              c == '-';
    if (!ok) return false;
  }
  return true;
}

std::string RegionPath(const std::string& name) { return "/bulwark." + name; }

RegionRegistry& RegionRegistry::Instance() {
  static RegionRegistry* r = new RegionRegistry();
  return *r;
}

Status RegionRegistry::Open(const RegionSpec& spec, RegionAttachment* out) {
  size_t total = 0;
  Status st = ValidateSpec(spec, &total);
  if (!st.ok()) return st;
  const std::string path = RegionPath(spec.name);
  std::lock_guard<std::mutex> guard(RegistryMutex());
  if (!g_atExitRegistered) {
    g_atExitRegistered = true;
    std::atexit(CloseAllAtExit);
  }

  for (int attempt = 0; attempt < 8; attempt++) {
    int fd = shm_open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0) return Status::Error(StatusCode::kSystem, Errno("shm_open", spec.name));
    if (!LockWithTimeout(fd, spec.lockTimeoutMs)) {
      close(fd);
      return Status::Error(StatusCode::kBusy, "timed out waiting for the lock of shared region '" + spec.name +
                                                  "' (another process holds it)");
    }
    if (!StillLinked(fd, path)) {  // the last member removed it while we waited: start over
      Unlock(fd);
      close(fd);
      continue;
    }
    auto fail = [&](Status s, uint8_t* base, size_t mapped) {
      if (base != nullptr) munmap(base, mapped);
      Unlock(fd);
      close(fd);
      return s;
    };

    struct stat sb;
    if (fstat(fd, &sb) != 0) return fail(Status::Error(StatusCode::kSystem, Errno("fstat", spec.name)), nullptr, 0);
    size_t fileSize = static_cast<size_t>(sb.st_size);
    uint8_t* base = nullptr;
    size_t mapped = 0;
    bool initialise = false;
    bool rebuilt = false;
    int32_t generation = 1;

    if (fileSize == 0) {
      initialise = true;
    } else if (fileSize < kHeaderSize) {
      char buf[200];
      std::snprintf(buf, sizeof buf,
                    "shared region '%s' is truncated (%zu bytes, smaller than its header); remove /dev/shm/bulwark.%s",
                    spec.name.c_str(), fileSize, spec.name.c_str());
      return fail(Status::Error(StatusCode::kCorrupt, buf), nullptr, 0);
    } else {
      st = MapShared(fd, fileSize, spec.name, &base);
      if (!st.ok()) return fail(st, nullptr, 0);
      mapped = fileSize;
      st = CheckFrozenHeader(base, fileSize, spec.name);
      if (!st.ok()) return fail(st, base, mapped);
      int live = ReapLocked(base, mapped, spec.name, nullptr);
      if (live == 0) {
        // Only dead processes used it (or none finished initialising it): rebuild rather than trust it.
        generation = Read<int32_t>(base, kGenerationOffset) + 1;
        initialise = true;
        rebuilt = LoadI32(base + kStateOffset) == kStateReady;
      } else {
        st = CheckCompatible(base, total, spec);
        if (!st.ok()) return fail(st, base, mapped);
      }
    }

    if (initialise) {
      if (base != nullptr && mapped != total) {
        munmap(base, mapped);
        base = nullptr;
      }
      if (base == nullptr || fileSize < total) {
        // Grow, never shrink: a read-only watcher may still map the old size.
        st = Reserve(fd, fileSize > total ? fileSize : total, spec.name);
        if (!st.ok()) return fail(st, base, mapped);
      }
      if (base == nullptr) {
        st = MapShared(fd, total, spec.name, &base);
        if (!st.ok()) return fail(st, nullptr, 0);
        mapped = total;
      }
      InitHeader(base, total, spec, generation);
    } else if (mapped != total) {
      munmap(base, mapped);
      st = MapShared(fd, total, spec.name, &base);
      if (!st.ok()) return fail(st, nullptr, 0);
      mapped = total;
    }

    uint32_t serial = g_nextSerial++;
    uint32_t slot = 0;
    if (!ClaimSlot(base, spec.memberCapacity, spec.threadId, serial, &slot)) {
      char buf[200];
      std::snprintf(buf, sizeof buf, "shared region '%s' has no free member slot (%u live attachments)",
                    spec.name.c_str(), spec.memberCapacity);
      return fail(Status::Error(StatusCode::kFull, buf), base, mapped);
    }
    Unlock(fd);

    uint64_t handle = g_nextHandle++;
    Mapping m;
    m.name = spec.name;
    m.fd = fd;
    m.base = base;
    m.size = mapped;
    m.member = slot;
    m.serial = serial;
    m.attached = true;
    m.refs = 1;
    Mappings()[handle] = m;

    out->handle = handle;
    out->base = base;
    out->size = mapped;
    out->member = slot;
    out->payloadOffset = static_cast<uint32_t>(PayloadOffset(spec.memberCapacity));
    out->created = initialise;
    out->rebuilt = rebuilt;
    return Status::Ok();
  }
  return Status::Error(StatusCode::kBusy, "shared region '" + spec.name + "' kept being removed while attaching");
}

namespace {

// Caller holds the registry mutex.
void DropRef(std::unordered_map<uint64_t, Mapping>::iterator it) {
  Mapping& m = it->second;
  if (--m.refs > 0) return;
  if (m.base != nullptr) munmap(m.base, m.size);
  if (m.fd >= 0) close(m.fd);
  Mappings().erase(it);
}

void DetachLocked(Mapping& m) {
  if (!m.attached) return;
  m.attached = false;
  const std::string path = RegionPath(m.name);
  bool locked = LockWithTimeout(m.fd, 2000);
  size_t s = MemberSlot(m.member);
  bool stillOurs = LoadI32(m.base + s + kMemberPidOffset) == Self().pid &&
                   Read<uint32_t>(m.base, s + kMemberSerialOffset) == m.serial;
  if (stillOurs) {
    ZeroReclaimCells(m.base, m.size, m.member);
    FreeSlot(m.base, m.member);
  }
  if (locked) {
    int live = ReapLocked(m.base, m.size, m.name, nullptr);
    if (live == 0 && StillLinked(m.fd, path)) shm_unlink(path.c_str());
    Unlock(m.fd);
  }
  close(m.fd);
  m.fd = -1;
}

}  // namespace

Status RegionRegistry::Close(uint64_t handle) {
  std::lock_guard<std::mutex> guard(RegistryMutex());
  auto it = Mappings().find(handle);
  if (it == Mappings().end() || (!it->second.attached && !it->second.snapshot) || it->second.fd == -2)
    return Status::Ok();  // closing twice is harmless
  DetachLocked(it->second);
  it->second.fd = -2;  // marks "registry reference dropped"
  DropRef(it);
  return Status::Ok();
}

namespace {

// Detaches and drops the registry's reference of every open mapping `match` accepts. Caller holds the mutex.
template <typename Match>
void CloseMatchingLocked(Match match) {
  for (auto it = Mappings().begin(); it != Mappings().end();) {
    auto next = std::next(it);
    if (it->second.fd != -2 && match(it->second)) {
      DetachLocked(it->second);
      it->second.fd = -2;
      DropRef(it);
    }
    it = next;
  }
}

}  // namespace

void RegionRegistry::CloseOwnedBy(uint64_t owner) {
  std::lock_guard<std::mutex> guard(RegistryMutex());
  CloseMatchingLocked([owner](const Mapping& m) { return m.owner == owner; });
}

void RegionRegistry::CloseAll() {
  std::lock_guard<std::mutex> guard(RegistryMutex());
  CloseMatchingLocked([](const Mapping&) { return true; });
}

void RegionRegistry::SetOwner(uint64_t handle, uint64_t owner) {
  std::lock_guard<std::mutex> guard(RegistryMutex());
  auto it = Mappings().find(handle);
  if (it != Mappings().end()) it->second.owner = owner;
}

void RegionRegistry::Retain(uint64_t handle) {
  std::lock_guard<std::mutex> guard(RegistryMutex());
  auto it = Mappings().find(handle);
  if (it != Mappings().end()) it->second.refs++;
}

void RegionRegistry::Release(uint64_t handle) {
  std::lock_guard<std::mutex> guard(RegistryMutex());
  auto it = Mappings().find(handle);
  if (it != Mappings().end()) DropRef(it);
}

int RegionRegistry::ReapAll() {
  std::lock_guard<std::mutex> guard(RegistryMutex());
  int reaped = 0;
  for (auto& kv : Mappings()) {
    Mapping& m = kv.second;
    if (!m.attached || m.fd < 0) continue;
    if (flock(m.fd, LOCK_EX | LOCK_NB) != 0) continue;  // someone is attaching: try next tick
    ReapLocked(m.base, m.size, m.name, &reaped);
    Unlock(m.fd);
  }
  return reaped;
}

Status RegionRegistry::Snapshot(const std::string& name, RegionSnapshot* out) {
  if (!IsValidRegionName(name))
    return Status::Error(StatusCode::kInvalidArgument, "region name '" + name + "' is not valid");
  const std::string path = RegionPath(name);
  int fd = shm_open(path.c_str(), O_RDONLY | O_CLOEXEC, 0);
  if (fd < 0) return Status::Error(StatusCode::kSystem, Errno("shm_open", name));
  struct stat sb;
  if (fstat(fd, &sb) != 0 || static_cast<size_t>(sb.st_size) < kHeaderSize) {
    close(fd);
    return Status::Error(StatusCode::kCorrupt, "shared region '" + name + "' is empty or truncated");
  }
  size_t size = static_cast<size_t>(sb.st_size);
  // A private writable mapping: reads see the live shared pages, and a stray write could never reach them.
  void* p = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
  close(fd);
  if (p == MAP_FAILED) return Status::Error(StatusCode::kSystem, Errno("mmap", name));
  uint8_t* base = static_cast<uint8_t*>(p);
  Status st = CheckFrozenHeader(base, size, name);
  if (!st.ok()) {
    munmap(base, size);
    return st;
  }
  std::lock_guard<std::mutex> guard(RegistryMutex());
  uint64_t handle = g_nextHandle++;
  Mapping m;
  m.name = name;
  m.fd = -1;
  m.base = base;
  m.size = size;
  m.snapshot = true;
  m.refs = 1;
  Mappings()[handle] = m;
  out->handle = handle;
  out->base = base;
  out->size = size;
  return Status::Ok();
}

Status RegionRegistry::Members(uint64_t handle, std::vector<RegionMemberInfo>* out) {
  std::lock_guard<std::mutex> guard(RegistryMutex());
  auto it = Mappings().find(handle);
  if (it == Mappings().end()) return Status::Error(StatusCode::kInvalidArgument, "unknown region handle");
  const Mapping& m = it->second;
  uint32_t capacity = Read<uint32_t>(m.base, kMemberCapacityOffset);
  for (uint32_t i = 0; i < capacity && MemberSlot(i) + kMemberSlotSize <= m.size; i++) {
    int32_t pid = LoadI32(m.base + MemberSlot(i) + kMemberPidOffset);
    if (pid == 0) continue;
    RegionMemberInfo info;
    info.slot = i;
    info.pid = pid;
    info.threadId = Read<int32_t>(m.base, MemberSlot(i) + kMemberThreadOffset);
    info.alive = !MemberIsDead(m.base, i, m.name);
    out->push_back(info);
  }
  return Status::Ok();
}

std::vector<std::string> RegionRegistry::List() {
  std::vector<std::string> names;
  DIR* dir = opendir("/dev/shm");
  if (dir == nullptr) return names;
  while (dirent* e = readdir(dir)) {
    std::string n = e->d_name;
    if (n.rfind("bulwark.", 0) == 0 && IsValidRegionName(n.substr(8))) names.push_back(n.substr(8));
  }
  closedir(dir);
  return names;
}

Status RegionRegistry::RemoveIfStale(const std::string& name, bool* removed) {
  *removed = false;
  if (!IsValidRegionName(name))
    return Status::Error(StatusCode::kInvalidArgument, "region name '" + name + "' is not valid");
  const std::string path = RegionPath(name);
  std::lock_guard<std::mutex> guard(RegistryMutex());
  int fd = shm_open(path.c_str(), O_RDWR | O_CLOEXEC, 0);
  if (fd < 0) return errno == ENOENT ? Status::Ok() : Status::Error(StatusCode::kSystem, Errno("shm_open", name));
  if (flock(fd, LOCK_EX | LOCK_NB) != 0) {  // someone is attaching or detaching: not stale now
    close(fd);
    return Status::Ok();
  }
  struct stat sb;
  uint8_t* base = nullptr;
  size_t size = 0;
  Status st = Status::Ok();
  if (fstat(fd, &sb) == 0 && static_cast<size_t>(sb.st_size) >= kHeaderSize && StillLinked(fd, path)) {
    size = static_cast<size_t>(sb.st_size);
    st = MapShared(fd, size, name, &base);
    if (st.ok() && CheckFrozenHeader(base, size, name).ok() && ReapLocked(base, size, name, nullptr) == 0) {
      *removed = shm_unlink(path.c_str()) == 0;
    }
  }
  if (base != nullptr) munmap(base, size);
  Unlock(fd);
  close(fd);
  return st;
}

Status RegionRegistry::Unlink(const std::string& name) {
  if (!IsValidRegionName(name))
    return Status::Error(StatusCode::kInvalidArgument, "region name '" + name + "' is not valid");
  if (shm_unlink(RegionPath(name).c_str()) != 0 && errno != ENOENT)
    return Status::Error(StatusCode::kSystem, Errno("shm_unlink", name));
  return Status::Ok();
}

}  // namespace bulwark
