// Windows only: the named objects of a region (its section and its mutex) are made for this process's account alone
// and refused when another account made them (docs/readme/foundation.md, "Shared regions"). In session 0 every
// service account shares the Local\ namespace, so a name alone proves nothing. Used by region_store_windows.cc.
#pragma once
#include <windows.h>

#include <string>

#include "core/util/status.h"

namespace bulwark {

// A failed call on the object `name`, with Windows' error code (GetLastError) in the message.
Status SystemError(const char* what, const std::string& name);

// The security of a new object: this account owns it and alone may open it. nullptr when it cannot be built (the
// token unreadable); the same attributes every time.
SECURITY_ATTRIBUTES* OwnerOnlySecurity();

// Why the object behind `object` (called `name`) may not be used, or Ok: another account owns it, or its access
// list lets another account open it. A kOwner error, as another user's region file is on POSIX systems.
Status CheckOwned(HANDLE object, const std::string& name);

// Why opening or making the object `name` failed: one that exists but that this account may not open, or that is
// another kind of object, is a kOwner error; anything else a system error.
Status OpenFailed(const char* what, const std::string& name);

}  // namespace bulwark
