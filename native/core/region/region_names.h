// The one place a region's object name is built: "bulwark.<uid>.<kind>.<name>" (a file in the runtime directory,
// or a named section on Windows, platform/region_store.h). The effective uid keeps users apart: each user's
// regions have their own names, and an object another user made under ours is refused. An application namespace
// joins the name here when one is set.
//
// Tools list regions (listRegions, bulwark top, bulwark gc) by "<kind>.<name>": kinds have no dots, so a listed
// name splits back into both.
#pragma once
#include <cstdint>
#include <string>

namespace bulwark {

bool IsValidRegionKind(const std::string& kind);  // [A-Za-z0-9_-]{1,31}
bool IsValidRegionName(const std::string& name);  // [A-Za-z0-9._-]{1,200}

// "bulwark.<uid>.<kind>.<name>"
std::string RegionObjectName(uint32_t uid, const std::string& kind, const std::string& name);

// "<kind>.<name>", the name tools list a region by.
std::string ListedRegionName(const std::string& kind, const std::string& name);

// Splits a listed name into its kind and name; false when it is not a valid listed name.
bool SplitListedName(const std::string& listed, std::string* kind, std::string* name);

// The listed name of one of this user's objects, or false when `objectName` is not one.
bool ListedNameOfObject(uint32_t uid, const std::string& objectName, std::string* listed);

// The prefix every object name of `uid` starts with.
std::string RegionObjectPrefix(uint32_t uid);

}  // namespace bulwark
