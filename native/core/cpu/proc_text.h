// Parsing the text of /proc and cgroup files: whitespace tokens, lines, strict decimal numbers, and the notes the
// CPU reader collects about what it ignored.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>

namespace bulwark::cgroup_internal {

bool IsSpace(char c);

std::string_view Trim(std::string_view s);

// Splits off the next whitespace-separated token; false when none is left.
bool NextToken(std::string_view* rest, std::string_view* token);

// A decimal unsigned integer and nothing else (surrounding whitespace allowed). strtoull alone would accept "-1",
// "+5", " 7x" and hex prefixes' leading zeros silently, so the digits are checked first.
bool ParseU64(std::string_view text, uint64_t* out);

// A decimal signed integer: an optional '-' and digits, within int64_t.
bool ParseI64(std::string_view text, int64_t* out);

// Walks the lines of an in-memory text.
template <typename OnLine>
void ForEachLineOf(std::string_view text, OnLine onLine) {
  while (!text.empty()) {
    size_t nl = text.find('\n');
    onLine(text.substr(0, nl));
    if (nl == std::string_view::npos) break;
    text.remove_prefix(nl + 1);
  }
}

// Whether `wanted` is one of the `separator`-separated items of `text` ("cpu" in "cpuset cpu io").
bool HasToken(std::string_view text, std::string_view wanted, char separator);

// Appends `note` to `notes` with "; " between notes; an empty note adds nothing.
void AddNote(std::string* notes, const std::string& note);

}  // namespace bulwark::cgroup_internal
