#include "core/region/region_names.h"

namespace bulwark {

namespace {

bool OnlyNameCharacters(const std::string& s, bool dots) {
  for (char c : s) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-' ||
              (dots && c == '.');
    if (!ok) return false;
  }
  return true;
}

}  // namespace

bool IsValidRegionKind(const std::string& kind) {
  return !kind.empty() && kind.size() <= 31 && OnlyNameCharacters(kind, false);
}

bool IsValidRegionName(const std::string& name) {
  return !name.empty() && name.size() <= 200 && OnlyNameCharacters(name, true);
}

std::string RegionObjectPrefix(uint32_t uid) { return "bulwark." + std::to_string(uid) + "."; }

std::string ListedRegionName(const std::string& kind, const std::string& name) { return kind + "." + name; }

std::string RegionObjectName(uint32_t uid, const std::string& kind, const std::string& name) {
  return RegionObjectPrefix(uid) + ListedRegionName(kind, name);
}

bool SplitListedName(const std::string& listed, std::string* kind, std::string* name) {
  size_t dot = listed.find('.');
  if (dot == std::string::npos) return false;
  *kind = listed.substr(0, dot);
  *name = listed.substr(dot + 1);
  return IsValidRegionKind(*kind) && IsValidRegionName(*name);
}

bool ListedNameOfObject(uint32_t uid, const std::string& objectName, std::string* listed) {
  const std::string prefix = RegionObjectPrefix(uid);
  if (objectName.compare(0, prefix.size(), prefix) != 0) return false;
  std::string kind, name;
  *listed = objectName.substr(prefix.size());
  return SplitListedName(*listed, &kind, &name);
}

}  // namespace bulwark
