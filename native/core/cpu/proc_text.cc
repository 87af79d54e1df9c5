#include "core/cpu/proc_text.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace bulwark::cgroup_internal {

namespace {

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

}  // namespace

bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'; }

std::string_view Trim(std::string_view s) {
  while (!s.empty() && IsSpace(s.front())) s.remove_prefix(1);
  while (!s.empty() && IsSpace(s.back())) s.remove_suffix(1);
  return s;
}

bool NextToken(std::string_view* rest, std::string_view* token) {
  std::string_view s = *rest;
  while (!s.empty() && IsSpace(s.front())) s.remove_prefix(1);
  size_t end = 0;
  while (end < s.size() && !IsSpace(s[end])) end++;
  *token = s.substr(0, end);
  *rest = s.substr(end);
  return end > 0;
}

bool ParseU64(std::string_view text, uint64_t* out) {
  text = Trim(text);
  if (text.empty() || text.size() > 20) return false;
  for (char c : text)
    if (!IsDigit(c)) return false;
  char buf[24];
  std::memcpy(buf, text.data(), text.size());
  buf[text.size()] = '\0';
  char* end = nullptr;
  errno = 0;
  unsigned long long v = std::strtoull(buf, &end, 10);
  if (errno != 0 || end != buf + text.size()) return false;
  *out = static_cast<uint64_t>(v);
  return true;
}

bool ParseI64(std::string_view text, int64_t* out) {
  text = Trim(text);
  bool negative = !text.empty() && text.front() == '-';
  if (negative && (text.size() < 2 || !IsDigit(text[1]))) return false;  // "-", "- 5"
  uint64_t magnitude = 0;
  if (!ParseU64(negative ? text.substr(1) : text, &magnitude)) return false;
  const uint64_t kMaxPositive = static_cast<uint64_t>(INT64_MAX);
  if (magnitude > kMaxPositive + (negative ? 1 : 0)) return false;
  *out = negative ? static_cast<int64_t>(0 - magnitude) : static_cast<int64_t>(magnitude);
  return true;
}

bool HasToken(std::string_view text, std::string_view wanted, char separator) {
  while (!text.empty()) {
    size_t cut = text.find(separator);
    if (Trim(text.substr(0, cut)) == wanted) return true;
    if (cut == std::string_view::npos) break;
    text.remove_prefix(cut + 1);
  }
  return false;
}

void AddNote(std::string* notes, const std::string& note) {
  if (note.empty()) return;
  if (!notes->empty()) notes->append("; ");
  notes->append(note);
}

}  // namespace bulwark::cgroup_internal
