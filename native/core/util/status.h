// Result of a core operation. The core never throws and never aborts: every failure comes back as a Status
// that the binding turns into a typed JavaScript error.
#pragma once
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
};

class Status {
 public:
  Status() = default;
  static Status Ok() { return Status(); }
  static Status Error(StatusCode code, std::string message) { return Status(code, std::move(message)); }

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }

 private:
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

const char* StatusCodeName(StatusCode code);

}  // namespace bulwark
