// Result of a core operation. The core never throws and never aborts: every failure comes back as a Status
// that the binding turns into a typed JavaScript error.
#pragma once
#include <cstdint>
#include <string>
#include <utility>

namespace bulwark {

enum class StatusCode {
  kOk = 0,
  kInvalidArgument,  // the caller passed something the core cannot use
  kSystem,           // a system call failed (errno is in the message)
  kMismatch,         // a shared region exists with another layout, size or configuration
  kCorrupt,          // a shared region's bytes do not form a valid header
  kBusy,             // a lock could not be taken in time
  kFull,             // no free member slot
  kOwner,            // a region object belongs to another user, or others may open it
};

class Status {
 public:
  Status() = default;
  static Status Ok() { return Status(); }
  static Status Error(StatusCode code, std::string message) { return Status(code, std::move(message)); }
  // kOwner: the object's location and its owner's uid travel with the message, for the typed error.
  static Status Owner(std::string message, std::string location, int64_t owner) {
    Status s(StatusCode::kOwner, std::move(message));
    s.location_ = std::move(location);
    s.owner_ = owner;
    return s;
  }

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }
  const std::string& location() const { return location_; }  // kOwner: the object refused
  int64_t owner() const { return owner_; }                   // kOwner: its owner's uid, -1 when unknown

 private:
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
  std::string location_;
  int64_t owner_ = -1;
};

const char* StatusCodeName(StatusCode code);

}  // namespace bulwark
