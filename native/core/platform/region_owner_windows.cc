#include "core/platform/region_owner_windows.h"

// After windows.h, which they need.
#include <aclapi.h>
#include <sddl.h>

#include <cstdint>
#include <cstdio>
#include <vector>

namespace bulwark {

namespace {

// This process's account (its token's user SID), read once; empty when the token cannot be read.
const std::vector<unsigned char>& UserSid() {
  static const std::vector<unsigned char> sid = [] {
    std::vector<unsigned char> out;
    HANDLE token = nullptr;
    if (!OpenProcessToken(GetCurrentProcess(), TOKEN_QUERY, &token)) return out;
    alignas(8) unsigned char info[sizeof(TOKEN_USER) + SECURITY_MAX_SID_SIZE];
    DWORD size = 0;
    if (GetTokenInformation(token, TokenUser, info, sizeof info, &size)) {
      PSID user = reinterpret_cast<TOKEN_USER*>(info)->User.Sid;
      auto* bytes = static_cast<unsigned char*>(user);
      if (IsValidSid(user)) out.assign(bytes, bytes + GetLengthSid(user));
    }
    CloseHandle(token);
    return out;
  }();
  return sid;
}

PSID Self() { return const_cast<unsigned char*>(UserSid().data()); }

std::string SidText(PSID sid) {
  char* text = nullptr;
  if (!ConvertSidToStringSidA(sid, &text)) return "an unreadable SID";
  std::string out = text;
  LocalFree(text);
  return out;
}

// The last number of a SID (its relative id): what region names call the uid (process_windows.cc); -1 when none.
int64_t RelativeId(PSID sid) {
  if (sid == nullptr || !IsValidSid(sid) || *GetSidSubAuthorityCount(sid) == 0) return -1;
  return *GetSidSubAuthority(sid, *GetSidSubAuthorityCount(sid) - 1);
}

// The owner is named, not left to the token's default, which may be a group (Administrators in an elevated
// process; a Users group under wine). SYSTEM and Administrators get no entry: they can take any object anyway, and
// nothing of bulwark's runs as another account that would need one.
struct OwnerOnly {
  SECURITY_DESCRIPTOR descriptor;
  alignas(8) unsigned char acl[sizeof(ACL) + sizeof(ACCESS_ALLOWED_ACE) + SECURITY_MAX_SID_SIZE];
  SECURITY_ATTRIBUTES attributes;
  bool ready;

  OwnerOnly() {
    PACL list = reinterpret_cast<PACL>(acl);
    attributes = {sizeof attributes, &descriptor, FALSE};
    ready = !UserSid().empty() && InitializeSecurityDescriptor(&descriptor, SECURITY_DESCRIPTOR_REVISION) &&
            InitializeAcl(list, sizeof acl, ACL_REVISION) &&
            AddAccessAllowedAce(list, ACL_REVISION, GENERIC_ALL, Self()) &&
            SetSecurityDescriptorDacl(&descriptor, TRUE, list, FALSE) &&
            SetSecurityDescriptorOwner(&descriptor, Self(), FALSE);
  }
};

// Whom besides this account `dacl` lets open an object ("" when no one). SYSTEM and Administrators are let be, for
// the reason above; a deny entry restricts, so it is fine.
std::string OtherAccess(PACL dacl) {
  if (dacl == nullptr) return "every account (it has no access list)";
  for (DWORD i = 0; i < dacl->AceCount; i++) {
    ACE_HEADER* ace = nullptr;
    if (!GetAce(dacl, i, reinterpret_cast<void**>(&ace))) return "an access entry that cannot be read";
    if (ace->AceType == ACCESS_DENIED_ACE_TYPE) continue;
    if (ace->AceType != ACCESS_ALLOWED_ACE_TYPE) return "an access entry of a kind bulwark does not read";
    PSID sid = &reinterpret_cast<ACCESS_ALLOWED_ACE*>(ace)->SidStart;
    bool trusted = EqualSid(sid, Self()) || IsWellKnownSid(sid, WinLocalSystemSid) ||
                   IsWellKnownSid(sid, WinBuiltinAdministratorsSid);
    if (!trusted) return SidText(sid);
  }
  return "";
}

constexpr char kNeverMapped[] =
    "bulwark never maps a region another account owns or may open; the name is free again when the processes "
    "holding that object close it, or use another name";

}  // namespace

Status SystemError(const char* what, const std::string& name) {
  char buf[512];
  std::snprintf(buf, sizeof buf, "%s for shared region %s failed: Windows error %lu", what, name.c_str(),
                static_cast<unsigned long>(GetLastError()));
  return Status::Error(StatusCode::kSystem, buf);
}

SECURITY_ATTRIBUTES* OwnerOnlySecurity() {
  static OwnerOnly security;
  return security.ready ? &security.attributes : nullptr;
}

Status CheckOwned(HANDLE object, const std::string& name) {
  if (UserSid().empty()) return SystemError("reading this process's account, to check", name);
  PSID owner = nullptr;
  PACL dacl = nullptr;
  PSECURITY_DESCRIPTOR descriptor = nullptr;
  DWORD rc = GetSecurityInfo(object, SE_KERNEL_OBJECT, OWNER_SECURITY_INFORMATION | DACL_SECURITY_INFORMATION, &owner,
                             nullptr, &dacl, nullptr, &descriptor);
  if (rc != ERROR_SUCCESS) {
    SetLastError(rc);
    return SystemError("GetSecurityInfo", name);
  }
  Status st = Status::Ok();
  if (owner == nullptr || !IsValidSid(owner) || !EqualSid(owner, Self())) {
    std::string who = owner != nullptr && IsValidSid(owner) ? SidText(owner) : "no valid account";
    st = Status::Owner("shared region " + name + " belongs to " + who + ", not to " + SidText(Self()) +
                           " that runs this process: another account made it first. " + kNeverMapped,
                       name, RelativeId(owner));
  } else {
    std::string other = OtherAccess(dacl);
    if (!other.empty()) {
      st = Status::Owner("shared region " + name + " may be opened by " + other + ". " + kNeverMapped, name,
                         RelativeId(owner));
    }
  }
  LocalFree(descriptor);
  return st;
}

Status OpenFailed(const char* what, const std::string& name) {
  DWORD error = GetLastError();
  if (error == ERROR_ACCESS_DENIED) {
    return Status::Owner("shared region " + name + " exists and this account may not open it: another account made " +
                             "it first. " + kNeverMapped,
                         name, -1);
  }
  if (error == ERROR_INVALID_HANDLE) {
    return Status::Owner("shared region " + name + " exists as another kind of object: something else made it " +
                             "first. " + kNeverMapped,
                         name, -1);
  }
  return SystemError(what, name);
}

}  // namespace bulwark
