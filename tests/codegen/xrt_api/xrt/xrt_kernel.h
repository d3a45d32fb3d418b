// See xrt_device.h: declarations for a syntax check of the generated host only.
#pragma once
#include <string>

#include "xrt_bo.h"
#include "xrt_device.h"

namespace xrt {
class run {
 public:
  void wait() const;
};
class kernel {
 public:
  kernel(const device& device, const uuid& xclbin_id, const std::string& name);
  int group_id(int argno) const;
  template <typename... Args>
  run operator()(Args&&... args);
};
}  // namespace xrt
