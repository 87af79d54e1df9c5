#include "core/util/status.h"

namespace bulwark {

const char* StatusCodeName(StatusCode code) {
  switch (code) {
    case StatusCode::kOk: return "OK";
    case StatusCode::kInvalidArgument: return "ERR_BULWARK_INVALID_ARGUMENT";
    case StatusCode::kSystem: return "ERR_BULWARK_SYSTEM";
    case StatusCode::kMismatch: return "ERR_BULWARK_REGION_MISMATCH";
    case StatusCode::kCorrupt: return "ERR_BULWARK_REGION_CORRUPT";
    case StatusCode::kBusy: return "ERR_BULWARK_REGION_BUSY";
    case StatusCode::kFull: return "ERR_BULWARK_REGION_FULL";
    case StatusCode::kOwner: return "ERR_BULWARK_REGION_OWNER";
  }
  return "ERR_BULWARK_UNKNOWN";
}

}  // namespace bulwark
