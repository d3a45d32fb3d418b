// File I/O of the C-simulation drivers: whole arrays of raw little-endian items, as numpy's
// tofile/fromfile write and read them. A short or failed read or write stops the driver with a
// message naming the file, so a test never compares against a half-written result.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <vector>

template <typename T>
static std::vector<T> load(const char* path, size_t n) {
  std::vector<T> v(n);
  FILE* f = std::fopen(path, "rb");
  if (!f || std::fread(v.data(), sizeof(T), n, f) != n) {
    std::fprintf(stderr, "cannot read %zu items from %s\n", n, path);
    std::exit(1);
  }
  std::fclose(f);
  return v;
}

template <typename T>
static void save(const char* path, const std::vector<T>& v) {
  FILE* f = std::fopen(path, "wb");
  if (!f || std::fwrite(v.data(), sizeof(T), v.size(), f) != v.size() || std::fclose(f) != 0) {
    std::fprintf(stderr, "cannot write %s\n", path);
    std::exit(1);
  }
}
