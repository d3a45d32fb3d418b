// See xrt_device.h: declarations for a syntax check of the generated host only.
#pragma once
#include <cstddef>
#include <cstdint>

#include "xrt_device.h"

enum xclBOSyncDirection { XCL_BO_SYNC_BO_TO_DEVICE = 0, XCL_BO_SYNC_BO_FROM_DEVICE };

namespace xrt {
using memory_group = uint32_t;
class bo {
 public:
  enum class flags : uint32_t { normal = 0, cacheable = 1 << 24, device_only = 1 << 28, host_only = 1 << 29, p2p = 1 << 30, svm = 1 << 27 };
  bo(const device& device, size_t size, memory_group group);
  bo(const device& device, size_t size, flags flags, memory_group group);  // e.g. flags::host_only (a buffer in host memory)
  bo(const bo& parent, size_t size, size_t offset);  // a sub-buffer (XRT's xrt::bo(parent, size, offset))
  void write(const void* src, size_t size, size_t seek);
  void read(void* dst, size_t size, size_t skip);
  void sync(xclBOSyncDirection direction, size_t size, size_t offset);
};
}  // namespace xrt
