#include <windows.h>

#include <cstdio>
#include <cstring>
#include <cwchar>
#include <string>
#include <vector>

#include "core/platform/region_owner_windows.h"
#include "core/platform/region_store.h"

namespace bulwark {

namespace {

constexpr wchar_t kNamespace[] = L"Local\\";
constexpr DWORD kSectionAccess = FILE_MAP_READ | FILE_MAP_WRITE;

// Region names are ASCII ([A-Za-z0-9._-]): widening is a copy.
std::wstring Wide(const std::string& s) { return std::wstring(s.begin(), s.end()); }

std::wstring SectionName(const std::string& fileName) { return kNamespace + Wide(fileName); }
std::wstring MutexName(const std::string& fileName) { return kNamespace + Wide(fileName) + L".lock"; }

HANDLE AsHandle(intptr_t h) { return reinterpret_cast<HANDLE>(h); }

// Keeps *object if it is this account's (CheckOwned), else closes it and clears *object.
Status KeepIfOwned(HANDLE* object, const std::string& name) {
  Status st = CheckOwned(*object, name);
  if (!st.ok()) {
    CloseHandle(*object);
    *object = nullptr;
  }
  return st;
}

// Opens the existing section of `fileName` if it is this account's; *out stays nullptr when there is none.
Status OpenSection(const std::string& fileName, DWORD access, HANDLE* out) {
  *out = OpenFileMappingW(access | READ_CONTROL, FALSE, SectionName(fileName).c_str());
  if (*out != nullptr) return KeepIfOwned(out, RegionLocation(fileName));
  return GetLastError() == ERROR_FILE_NOT_FOUND ? Status::Ok()
                                                : OpenFailed("OpenFileMapping", RegionLocation(fileName));
}

// Listing named objects goes through ntdll's object-directory calls (documented in the Windows driver kit, looked up
// at run time): the session's BaseNamedObjects directory is where Local\ names live.
struct CountedString {
  USHORT length;
  USHORT maximumLength;
  PWSTR buffer;
};
struct ObjectAttributes {
  ULONG length;
  HANDLE rootDirectory;
  CountedString* objectName;
  ULONG attributes;
  PVOID securityDescriptor;
  PVOID securityQualityOfService;
};
struct DirectoryEntry {
  CountedString name;
  CountedString typeName;
};
using OpenDirectoryFn = LONG(NTAPI*)(HANDLE*, ACCESS_MASK, ObjectAttributes*);
using QueryDirectoryFn = LONG(NTAPI*)(HANDLE, PVOID, ULONG, BOOLEAN, BOOLEAN, PULONG, PULONG);
constexpr ACCESS_MASK kDirectoryQuery = 1;
constexpr ULONG kCaseInsensitive = 0x40;

HANDLE OpenSessionDirectory() {
  HMODULE ntdll = GetModuleHandleW(L"ntdll.dll");
  auto open =
      reinterpret_cast<OpenDirectoryFn>(reinterpret_cast<void*>(GetProcAddress(ntdll, "NtOpenDirectoryObject")));
  if (open == nullptr) return nullptr;
  DWORD session = 0;
  ProcessIdToSessionId(GetCurrentProcessId(), &session);
  wchar_t path[64];
  if (session == 0) {
    wcscpy(path, L"\\BaseNamedObjects");
  } else {
    swprintf(path, 64, L"\\Sessions\\%lu\\BaseNamedObjects", static_cast<unsigned long>(session));
  }
  CountedString name{static_cast<USHORT>(wcslen(path) * 2), static_cast<USHORT>(wcslen(path) * 2 + 2), path};
  ObjectAttributes attributes{sizeof attributes, nullptr, &name, kCaseInsensitive, nullptr, nullptr};
  HANDLE dir = nullptr;
  return open(&dir, kDirectoryQuery, &attributes) == 0 ? dir : nullptr;
}

// The size of a section: a view of all of it, measured (a section's size is rounded up to whole pages).
bool SectionSize(HANDLE section, size_t* out) {
  void* view = MapViewOfFile(section, FILE_MAP_READ, 0, 0, 0);
  if (view == nullptr) return false;
  MEMORY_BASIC_INFORMATION info;
  bool ok = VirtualQuery(view, &info, sizeof info) == sizeof info;
  if (ok) *out = info.RegionSize;
  UnmapViewOfFile(view);
  return ok;
}

}  // namespace

std::string RegionLocation(const std::string& fileName) { return "Local\\" + fileName; }

Status RegionStore::Open(const std::string& fileName, bool create, RegionStore* out, bool* missing) {
  const std::string location = RegionLocation(fileName);
  *missing = false;
  HANDLE section = nullptr;
  Status st = OpenSection(fileName, kSectionAccess, &section);
  if (!st.ok() || (section == nullptr && !create)) {
    *missing = st.ok();
    return st;
  }
  // The lock: a named mutex every attacher makes or opens. Another account's would fail every attach (by holding
  // it), so it is checked like the section. The section itself is made under it, in Grow.
  const std::string lockName = location + ".lock";
  SECURITY_ATTRIBUTES* security = OwnerOnlySecurity();
  HANDLE mutex = security != nullptr ? CreateMutexW(security, FALSE, MutexName(fileName).c_str()) : nullptr;
  if (security == nullptr) {
    st = SystemError("building the owner-only security of", lockName);
  } else {
    st = mutex != nullptr ? KeepIfOwned(&mutex, lockName) : OpenFailed("CreateMutex", lockName);
  }
  if (!st.ok()) {
    if (section != nullptr) CloseHandle(section);
    return st;
  }
  out->Close();
  out->handle_ = section != nullptr ? reinterpret_cast<intptr_t>(section) : kNone;
  out->lock_ = reinterpret_cast<intptr_t>(mutex);
  out->fileName_ = fileName;
  out->location_ = location;
  return Status::Ok();
}

bool RegionStore::Lock(int timeoutMs) {
  // WAIT_ABANDONED: the holder died holding it; the region's own checks decide what its bytes are worth.
  DWORD rc = WaitForSingleObject(AsHandle(lock_), static_cast<DWORD>(timeoutMs));
  return rc == WAIT_OBJECT_0 || rc == WAIT_ABANDONED;
}

bool RegionStore::TryLock() { return Lock(0); }

void RegionStore::Unlock() { ReleaseMutex(AsHandle(lock_)); }

bool RegionStore::StillLinked() const { return true; }  // a named section keeps its name while any handle is open

Status RegionStore::Size(size_t* out) {
  *out = 0;
  if (handle_ == kNone) {  // made by someone else since Open?
    HANDLE section = nullptr;
    Status st = OpenSection(fileName_, kSectionAccess, &section);
    if (section == nullptr) return st;
    handle_ = reinterpret_cast<intptr_t>(section);
  }
  if (!SectionSize(AsHandle(handle_), out)) return SystemError("MapViewOfFile", location_);
  return Status::Ok();
}

Status RegionStore::Grow(size_t total) {
  size_t now = 0;
  Status st = Size(&now);
  if (!st.ok() || now >= total) return st;
  if (handle_ != kNone) {
    char buf[400];
    std::snprintf(buf, sizeof buf,
                  "shared region %s is still mapped by a process with %zu bytes and cannot grow to %zu: close every "
                  "use of it first",
                  location_.c_str(), now, total);
    return Status::Error(StatusCode::kBusy, buf);
  }
  uint64_t size = total;
  SECURITY_ATTRIBUTES* security = OwnerOnlySecurity();
  if (security == nullptr) return SystemError("building the owner-only security of", location_);
  HANDLE section = CreateFileMappingW(INVALID_HANDLE_VALUE, security, PAGE_READWRITE, static_cast<DWORD>(size >> 32),
                                      static_cast<DWORD>(size), SectionName(fileName_).c_str());
  if (section == nullptr) return OpenFailed("CreateFileMapping", location_);
  // One another account made since Size looked (it need not take our lock) is refused here.
  st = KeepIfOwned(&section, location_);
  if (!st.ok()) return st;
  handle_ = reinterpret_cast<intptr_t>(section);
  return Status::Ok();
}

Status RegionStore::Map(size_t size, uint8_t** out) {
  void* view = MapViewOfFile(AsHandle(handle_), FILE_MAP_ALL_ACCESS, 0, 0, size);
  if (view == nullptr) return SystemError("MapViewOfFile", location_);
  *out = static_cast<uint8_t*>(view);
  return Status::Ok();
}

Status RegionStore::Unlink() { return Status::Ok(); }

void RegionStore::Close() {
  if (handle_ != kNone) CloseHandle(AsHandle(handle_));
  if (lock_ != kNone) CloseHandle(AsHandle(lock_));
  handle_ = kNone;
  lock_ = kNone;
}

void UnmapRegion(uint8_t* base, size_t) { UnmapViewOfFile(base); }

Status SnapshotRegion(const std::string& fileName, uint8_t** base, size_t* size) {
  const std::string location = RegionLocation(fileName);
  HANDLE section = nullptr;
  Status owned = OpenSection(fileName, FILE_MAP_READ, &section);
  if (section == nullptr) return owned.ok() ? SystemError("OpenFileMapping", location) : owned;
  void* view = MapViewOfFile(section, FILE_MAP_READ, 0, 0, 0);
  MEMORY_BASIC_INFORMATION info;
  bool measured = view != nullptr && VirtualQuery(view, &info, sizeof info) == sizeof info;
  // A copy, so that the watcher holds no handle and no view: the name goes when the last member leaves.
  void* copy = measured ? VirtualAlloc(nullptr, info.RegionSize, MEM_COMMIT | MEM_RESERVE, PAGE_READWRITE) : nullptr;
  Status st = copy != nullptr ? Status::Ok() : SystemError("copying", location);
  if (copy != nullptr) {
    std::memcpy(copy, view, info.RegionSize);
    *base = static_cast<uint8_t*>(copy);
    *size = info.RegionSize;
  }
  if (view != nullptr) UnmapViewOfFile(view);
  CloseHandle(section);
  return st;
}

std::vector<std::string> ListRegionObjects(const std::string& prefix) {
  std::vector<std::string> names;
  auto query = reinterpret_cast<QueryDirectoryFn>(
      reinterpret_cast<void*>(GetProcAddress(GetModuleHandleW(L"ntdll.dll"), "NtQueryDirectoryObject")));
  HANDLE dir = query != nullptr ? OpenSessionDirectory() : nullptr;
  if (dir == nullptr) return names;
  alignas(8) char buf[4096];
  ULONG context = 0, returned = 0;
  for (BOOLEAN first = TRUE; query(dir, buf, sizeof buf, TRUE, first, &context, &returned) == 0; first = FALSE) {
    const auto* entry = reinterpret_cast<const DirectoryEntry*>(buf);
    std::wstring type(entry->typeName.buffer, entry->typeName.length / 2);
    std::wstring wide(entry->name.buffer, entry->name.length / 2);
    if (type != L"Section") continue;
    std::string name;
    bool ascii = true;
    for (wchar_t c : wide) {
      ascii = ascii && c < 128;
      name.push_back(static_cast<char>(c));
    }
    if (ascii && name.compare(0, prefix.size(), prefix) == 0) names.push_back(name);
  }
  CloseHandle(dir);
  return names;
}

void FreeSnapshot(uint8_t* base, size_t) {
  if (base != nullptr) VirtualFree(base, 0, MEM_RELEASE);
}

}  // namespace bulwark
