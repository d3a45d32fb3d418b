// Declarations of the part of the XRT native C++ API the generated host uses (signatures as
// documented in the XRT "Native Library C++ API"), for a g++ -fsyntax-only check of the
// generated host in tests where XRT is not installed. Never compiled into a program.
#pragma once
#include <string>

namespace xrt {
class uuid {
 public:
  uuid();
};
class device {
 public:
  explicit device(unsigned int index);
  uuid load_xclbin(const std::string& xclbin_file_name);
};
}  // namespace xrt
