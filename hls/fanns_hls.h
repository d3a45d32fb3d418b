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
//
// A dataflow region is written FANNS_DATAFLOW_BEGIN; FANNS_STREAM_DEPTH(fifo, n) for each FIFO;
// FANNS_PROCESS(call) for each process; FANNS_DATAFLOW_END. Under Vitis these are the DATAFLOW
// and STREAM pragmas and plain calls. C simulation has two modes:
//  * default: the processes run one after another and FIFOs are unbounded (like Vitis csim);
//  * FANNS_CSIM_THREADS: every process is a thread and every FIFO holds at most its declared
//    depth, as in hardware. Writers block on full FIFOs (back-pressure), readers on empty ones;
//    when every process of the region is blocked the region has deadlocked, and every process
//    stops with an exception naming the FIFOs they wait on. This checks the FIFO depths.
#ifndef FANNS_HLS_H
#define FANNS_HLS_H

#include <cstddef>
#include <cstdint>

#define FANNS_STRINGIFY(x) #x
#if defined(__SYNTHESIS__) || defined(FANNS_VITIS)
#include <hls_stream.h>
#define FANNS_PRAGMA(x) _Pragma(FANNS_STRINGIFY(x))
#define FANNS_DATAFLOW_BEGIN FANNS_PRAGMA(HLS DATAFLOW)
#define FANNS_STREAM_DEPTH(v, n) FANNS_PRAGMA(HLS STREAM variable = v depth = n)
#define FANNS_PROCESS(...) __VA_ARGS__
#define FANNS_DATAFLOW_END
#else
#include <deque>
#include <stdexcept>
#include <string>
#define FANNS_PRAGMA(x)

#ifdef FANNS_CSIM_THREADS
#include <algorithm>
#include <condition_variable>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace fanns {
namespace csim {

// The state all FIFOs and processes of the running dataflow region share (one lock: simple, and
// the processes are few).
struct Monitor {
  std::mutex lock;
  std::condition_variable changed;
  std::size_t running = 0;                          // processes of the region not finished
  std::vector<const std::function<bool()>*> waiting;  // the conditions blocked processes wait for
  bool stop = false;
  std::string why;
  std::string leftover;  // FIFOs destroyed with data in them
  static Monitor& get() {
    static Monitor m;
    return m;
  }
  // Deadlock: every unfinished process waits, and no condition it waits for holds (a process
  // that was just woken but has not run yet still counts as able to proceed).
  bool deadlocked() const {
    if (running == 0 || waiting.size() != running) return false;
    for (const std::function<bool()>* ok : waiting)
      if ((*ok)()) return false;
    return true;
  }
  void halt(const std::string& reason) {
    if (!stop) {
      stop = true;
      why = reason;
    }
    changed.notify_all();
  }
};

inline thread_local bool in_process = false;

// The processes of one dataflow region: collected by FANNS_PROCESS, run together by
// FANNS_DATAFLOW_END, which returns when all have finished and rethrows the first failure.
class Dataflow {
 public:
  void add(std::function<void()> f) { procs_.push_back(std::move(f)); }
  void run() {
    Monitor& m = Monitor::get();
    {
      std::lock_guard<std::mutex> g(m.lock);
      m.running = procs_.size();
      m.waiting.clear();
      m.stop = false;
      m.why.clear();
    }
    std::vector<std::exception_ptr> errors(procs_.size());
    std::vector<std::thread> threads;
    for (size_t i = 0; i < procs_.size(); ++i) {
      threads.emplace_back([&, i] {
        in_process = true;
        try {
          procs_[i]();
        } catch (...) {
          errors[i] = std::current_exception();
        }
        std::lock_guard<std::mutex> g(m.lock);
        --m.running;
        if (errors[i]) m.halt("a process failed");
        if (m.deadlocked()) m.halt("deadlock: every remaining process waits on a FIFO");
        m.changed.notify_all();
      });
    }
    for (std::thread& t : threads) t.join();
    for (std::exception_ptr& e : errors)
      if (e) std::rethrow_exception(e);
  }

 private:
  std::vector<std::function<void()>> procs_;
};

inline std::string take_leftover() {
  Monitor& m = Monitor::get();
  std::lock_guard<std::mutex> g(m.lock);
  std::string out;
  out.swap(m.leftover);
  return out;
}

}  // namespace csim
}  // namespace fanns

namespace hls {

// A FIFO of a dataflow region (see the file comment): bounded by its declared depth inside a
// threaded region; unbounded (and a read from empty is an error) outside one.
template <typename T>
class stream {
 public:
  stream() = default;
  explicit stream(const char* name) : name_(name) {}
  stream(const stream&) = delete;
  stream& operator=(const stream&) = delete;
  ~stream() {
    if (!fifo_.empty()) {
      fanns::csim::Monitor& m = fanns::csim::Monitor::get();
      std::lock_guard<std::mutex> g(m.lock);
      m.leftover += " " + name_ + "(" + std::to_string(fifo_.size()) + ")";
    }
  }

  void set_name(const std::string& name) { name_ = name; }
  void set_depth(std::size_t depth) { depth_ = depth; }

  void write(const T& value) {
    fanns::csim::Monitor& m = fanns::csim::Monitor::get();
    std::unique_lock<std::mutex> g(m.lock);
    if (fanns::csim::in_process) wait(g, m, [&] { return fifo_.size() < depth_; }, "write to full FIFO ");
    fifo_.push_back(value);
    m.changed.notify_all();
  }
  T read() {
    fanns::csim::Monitor& m = fanns::csim::Monitor::get();
    std::unique_lock<std::mutex> g(m.lock);
    if (fanns::csim::in_process) {
      wait(g, m, [&] { return !fifo_.empty(); }, "read from empty FIFO ");
    } else if (fifo_.empty()) {
      throw std::runtime_error("read from empty hls::stream " + name_);
    }
    T value = fifo_.front();
    fifo_.pop_front();
    m.changed.notify_all();
    return value;
  }
  void read(T& value) { value = read(); }
  bool read_nb(T& value) {
    fanns::csim::Monitor& m = fanns::csim::Monitor::get();
    std::lock_guard<std::mutex> g(m.lock);
    if (fifo_.empty()) return false;
    value = fifo_.front();
    fifo_.pop_front();
    m.changed.notify_all();
    return true;
  }
  bool write_nb(const T& value) {
    fanns::csim::Monitor& m = fanns::csim::Monitor::get();
    std::lock_guard<std::mutex> g(m.lock);
    if (fanns::csim::in_process && fifo_.size() >= depth_) return false;
    fifo_.push_back(value);
    m.changed.notify_all();
    return true;
  }
  bool empty() const {
    std::lock_guard<std::mutex> g(fanns::csim::Monitor::get().lock);
    return fifo_.empty();
  }
  bool full() const {
    std::lock_guard<std::mutex> g(fanns::csim::Monitor::get().lock);
    return fanns::csim::in_process && fifo_.size() >= depth_;
  }
  std::size_t size() const {
    std::lock_guard<std::mutex> g(fanns::csim::Monitor::get().lock);
    return fifo_.size();
  }
  stream& operator<<(const T& value) {
    write(value);
    return *this;
  }
  stream& operator>>(T& value) {
    value = read();
    return *this;
  }

 private:
  template <typename OK>
  void wait(std::unique_lock<std::mutex>& g, fanns::csim::Monitor& m, OK ok, const char* what) {
    const std::function<bool()> cond = ok;
    while (!cond()) {
      if (m.stop) throw std::runtime_error("dataflow stopped (" + m.why + ") at: " + what + name_);
      m.waiting.push_back(&cond);
      if (m.deadlocked()) {
        m.halt("deadlock: every remaining process waits on a FIFO");
      } else {
        m.changed.wait(g);
      }
      m.waiting.erase(std::find(m.waiting.begin(), m.waiting.end(), &cond));
    }
  }

  std::deque<T> fifo_;
  std::size_t depth_ = ~std::size_t(0);  // unbounded until a depth is declared
  std::string name_ = "(unnamed)";
};

}  // namespace hls

namespace fanns {
namespace csim {

template <typename T>
void set_depth(hls::stream<T>& s, std::size_t depth, const char* name) {
  s.set_depth(depth);
  s.set_name(name);
}
template <typename T, std::size_t N>
void set_depth(hls::stream<T> (&s)[N], std::size_t depth, const char* name) {
  for (std::size_t i = 0; i < N; ++i) {
    s[i].set_depth(depth);
    s[i].set_name(std::string(name) + "[" + std::to_string(i) + "]");
  }
}

}  // namespace csim
}  // namespace fanns

#define FANNS_DATAFLOW_BEGIN fanns::csim::Dataflow fanns_dataflow_;
#define FANNS_STREAM_DEPTH(v, n) fanns::csim::set_depth(v, n, #v);
#define FANNS_PROCESS(...) fanns_dataflow_.add([&] { __VA_ARGS__; })
#define FANNS_DATAFLOW_END fanns_dataflow_.run();

#else  // sequential C simulation

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

#define FANNS_DATAFLOW_BEGIN
#define FANNS_STREAM_DEPTH(v, n) static_cast<void>(n);
#define FANNS_PROCESS(...) __VA_ARGS__
#define FANNS_DATAFLOW_END

#endif  // FANNS_CSIM_THREADS
#endif  // Vitis or g++

#endif  // FANNS_HLS_H
