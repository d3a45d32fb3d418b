// fanns portability header: the small part of the HLS environment that fanns kernels use.
//
// Under Vitis HLS (__SYNTHESIS__ defined, or FANNS_VITIS set by the generated Makefile) it
// includes the vendor headers. Under plain g++ (C simulation) it provides our own
// `hls::stream` with the same blocking semantics, so the same kernel source runs as an
// ordinary C++ program. Kernels use only standard fixed-width integer types for data, which
// both environments understand identically; that is what makes C simulation bit-exact.
//
// Pragmas are written as FANNS_PRAGMA(HLS PIPELINE II=1): they become real pragmas under Vitis
// and vanish under g++ (so -Wall -Werror stays clean).
#ifndef FANNS_HLS_H
#define FANNS_HLS_H

#include <cstddef>
#include <cstdint>

#define FANNS_STRINGIFY(x) #x
#if defined(__SYNTHESIS__) || defined(FANNS_VITIS)
#include <hls_stream.h>
#define FANNS_PRAGMA(x) _Pragma(FANNS_STRINGIFY(x))
#else
#include <deque>
#include <stdexcept>
#include <string>
#define FANNS_PRAGMA(x)

namespace hls {

// A FIFO between dataflow processes. In C simulation the processes of a dataflow region run
// one after another, so the FIFO must hold everything its producer writes (unbounded here);
// reading an empty stream is a deadlock in hardware and an exception here.
template <typename T>
class stream {
 public:
  stream() = default;
  explicit stream(const char* name) : name_(name) {}
  stream(const stream&) = delete;
  stream& operator=(const stream&) = delete;

  void write(const T& value) { fifo_.push_back(value); }
  T read() {
    if (fifo_.empty()) throw std::runtime_error("read from empty hls::stream " + name_);
    T value = fifo_.front();
    fifo_.pop_front();
    return value;
  }
  void read(T& value) { value = read(); }
  bool read_nb(T& value) {
    if (fifo_.empty()) return false;
    value = read();
    return true;
  }
  bool write_nb(const T& value) {
    write(value);
    return true;
  }
  bool empty() const { return fifo_.empty(); }
  bool full() const { return false; }
  std::size_t size() const { return fifo_.size(); }
  stream& operator<<(const T& value) {
    write(value);
    return *this;
  }
  stream& operator>>(T& value) {
    value = read();
    return *this;
  }

 private:
  std::deque<T> fifo_;
  std::string name_ = "(unnamed)";
};

}  // namespace hls
#endif

#endif  // FANNS_HLS_H
