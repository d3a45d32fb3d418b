// A Verilated model as a shared library driven from Python through ctypes (fanns.tools.vmodel):
// the clock loop, the back-door memory loads and reads run here, so Python only sets and reads
// ports between runs of many cycles. "ports.inc" (written by fanns.tools.vmodel from Vtop.h)
// lists the top-level ports as FANNS_PORT(name, member, width). A model verilated with --trace
// (VM_TRACE) can write every signal's waveform to a VCD file (`vm_trace`): time 2c + 1 is cycle
// c's rising edge, 2c + 2 its falling edge.
//
// Memory back door (`vm_mem_*`): every word array marked `/*verilator public_flat_rw*/` (the
// bench memories' `fanns_sim_ram.mem`) is found by its instance's hierarchical name in the
// model's scope table and written or read in place, with no clock cycle: loading an index's
// images costs a copy, not a clocked write per word through the whole design.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "Vtop.h"
#include "verilated.h"
#include "verilated_syms.h"
#if VM_TRACE
#include "verilated_vcd_c.h"
#endif

#define FANNS_API extern "C" __attribute__((visibility("default")))

namespace {

struct Port {
    const char* name;
    void* ptr;
    int width;
};

// A word array the back door writes: its instance's scope name, its storage (one entry of
// `entry_bytes` per word, little-endian words of 32 bits as Verilator keeps them), its words of
// `word_bytes` (the declared width in whole bytes) and its addresses low..low + depth - 1.
struct Mem {
    std::string name;
    uint8_t* data;
    uint32_t entry_bytes;
    uint32_t word_bytes;
    int64_t low;
    uint64_t depth;
};

const char* const MEM_VAR = "mem";

struct Model {
    VerilatedContext ctx;
    std::vector<Mem> mems;
    Vtop* top = nullptr;
    std::vector<Port> ports;
    CData* clock = nullptr;
    bool dirty = true;
    uint64_t cycles = 0;
#if VM_TRACE
    VerilatedVcdC* vcd = nullptr;
#endif
};

void dump(Model* m, uint64_t time) {
#if VM_TRACE
    if (m->vcd) m->vcd->dump(time);
#else
    (void)m;
    (void)time;
#endif
}

void put(const Port& p, const uint32_t* w) {
    if (p.width <= 8) {
        *static_cast<CData*>(p.ptr) = static_cast<CData>(w[0]);
    } else if (p.width <= 16) {
        *static_cast<SData*>(p.ptr) = static_cast<SData>(w[0]);
    } else if (p.width <= 32) {
        *static_cast<IData*>(p.ptr) = w[0];
    } else if (p.width <= 64) {
        *static_cast<QData*>(p.ptr) = static_cast<QData>(w[0]) | static_cast<QData>(w[1]) << 32;
    } else {
        std::memcpy(p.ptr, w, 4 * ((p.width + 31) / 32));
    }
}

void take(const Port& p, uint32_t* w) {
    if (p.width <= 8) {
        w[0] = *static_cast<CData*>(p.ptr);
    } else if (p.width <= 16) {
        w[0] = *static_cast<SData*>(p.ptr);
    } else if (p.width <= 32) {
        w[0] = *static_cast<IData*>(p.ptr);
    } else if (p.width <= 64) {
        QData q = *static_cast<QData*>(p.ptr);
        w[0] = static_cast<uint32_t>(q);
        w[1] = static_cast<uint32_t>(q >> 32);
    } else {
        std::memcpy(w, p.ptr, 4 * ((p.width + 31) / 32));
    }
}

struct Info {
    const char* name;
    int width;
};

const Info INFO[] = {
#define FANNS_PORT(name, member, width) {name, width},
#include "ports.inc"
#undef FANNS_PORT
};

void settle(Model* m) {
    if (m->dirty) {
        m->top->eval();
        m->dirty = false;
    }
}

void cycle(Model* m) {
    *m->clock = 1;
    m->top->eval();
    dump(m, 2 * m->cycles + 1);
    *m->clock = 0;
    m->top->eval();
    dump(m, 2 * m->cycles + 2);
    m->cycles++;
}

}  // namespace

FANNS_API void* vm_new(int clock) {
    auto* m = new Model;
    m->top = new Vtop(&m->ctx);
    Vtop* top = m->top;
#define FANNS_PORT(name, member, width) m->ports.push_back({name, static_cast<void*>(&top->member), width});
#include "ports.inc"
#undef FANNS_PORT
    m->clock = static_cast<CData*>(m->ports.at(clock).ptr);
    *m->clock = 0;
    if (const VerilatedScopeNameMap* scopes = m->ctx.scopeNameMap()) {
        for (const auto& it : *scopes) {
            const VerilatedVar* v = it.second->varFind(MEM_VAR);
            if (!v || !v->isPublicRW() || v->udims() != 1) continue;
            const uint32_t bits = v->entBits(), word_bytes = (bits + 7) / 8;
            if (bits % 8 || word_bytes > v->entSize()) continue;  // words of whole bytes only
            const VerilatedRange& range = v->unpackedRanges()[0];
            m->mems.push_back({it.second->name(), static_cast<uint8_t*>(v->datap()), v->entSize(), word_bytes,
                               range.low(), static_cast<uint64_t>(range.elements())});
        }
    }
    return m;
}

FANNS_API void vm_free(void* h) {
    auto* m = static_cast<Model*>(h);
    m->top->final();
#if VM_TRACE
    if (m->vcd) {
        m->vcd->close();
        delete m->vcd;
    }
#endif
    delete m->top;
    delete m;
}

// Write every signal's waveform to the VCD file `path` from now on. Returns 0, or 1 when the
// model was verilated without --trace, 2 when a trace is already open.
FANNS_API int vm_trace(void* h, const char* path) {
#if VM_TRACE
    auto* m = static_cast<Model*>(h);
    if (m->vcd) return 2;
    Verilated::traceEverOn(true);
    m->vcd = new VerilatedVcdC;
    m->top->trace(m->vcd, 99);
    m->vcd->open(path);
    settle(m);
    m->vcd->dump(2 * m->cycles);
    return 0;
#else
    (void)h;
    (void)path;
    return 1;
#endif
}

FANNS_API int vm_ports() { return static_cast<int>(sizeof(INFO) / sizeof(INFO[0])); }

FANNS_API const char* vm_port_name(int i) { return INFO[i].name; }

FANNS_API int vm_port_width(int i) { return INFO[i].width; }

FANNS_API void vm_set(void* h, int port, const uint32_t* words) {
    auto* m = static_cast<Model*>(h);
    put(m->ports[port], words);
    m->dirty = true;
}

// The port's value with the inputs set so far (combinational outputs settled).
FANNS_API void vm_get(void* h, int port, uint32_t* words) {
    auto* m = static_cast<Model*>(h);
    settle(m);
    take(m->ports[port], words);
}

FANNS_API void vm_step(void* h, uint64_t n) {
    auto* m = static_cast<Model*>(h);
    for (uint64_t i = 0; i < n; i++) cycle(m);
    m->dirty = false;
}

FANNS_API uint64_t vm_cycles(void* h) { return static_cast<Model*>(h)->cycles; }

// Clock until (port & mask) == value after a rising edge, at most `limit` cycles; the cycles run.
FANNS_API uint64_t vm_step_until(void* h, int port, uint64_t mask, uint64_t value, uint64_t limit) {
    auto* m = static_cast<Model*>(h);
    const Port& p = m->ports[port];
    uint32_t w[2] = {0, 0};
    uint64_t n = 0;
    while (n < limit) {
        cycle(m);
        n++;
        take(p, w);
        if (((static_cast<uint64_t>(w[1]) << 32 | w[0]) & mask) == value) break;
    }
    m->dirty = false;
    return n;
}

// Write `count` words of `word_bytes` (little-endian) from word address `first` through a
// synchronous back door (address, data, write-enable ports): one word per cycle, all-zero
// words skipped when `skip_zero` (a memory known to be zero).
FANNS_API void vm_write_words(void* h, int addr, int data, int we, const uint8_t* bytes, uint64_t count,
                              int word_bytes, uint64_t first, int skip_zero) {
    auto* m = static_cast<Model*>(h);
    const Port &a = m->ports[addr], &d = m->ports[data], &e = m->ports[we];
    std::vector<uint32_t> word((d.width + 31) / 32 + 1, 0);
    uint32_t one[2] = {1, 0}, zero[2] = {0, 0}, at[2];
    put(e, one);
    for (uint64_t i = 0; i < count; i++) {
        const uint8_t* src = bytes + i * word_bytes;
        if (skip_zero) {
            bool any = false;
            for (int b = 0; b < word_bytes && !any; b++) any = src[b] != 0;
            if (!any) continue;
        }
        std::fill(word.begin(), word.end(), 0);
        std::memcpy(word.data(), src, word_bytes);
        at[0] = static_cast<uint32_t>(first + i);
        at[1] = static_cast<uint32_t>((first + i) >> 32);
        put(a, at);
        put(d, word.data());
        cycle(m);
    }
    put(e, zero);
    m->dirty = true;
}

// Read `count` words from word address `first` through a synchronous back door (the data of the
// address set before a rising edge is on `data` after it).
FANNS_API void vm_read_words(void* h, int addr, int data, uint8_t* bytes, uint64_t count, int word_bytes,
                             uint64_t first) {
    auto* m = static_cast<Model*>(h);
    const Port &a = m->ports[addr], &d = m->ports[data];
    std::vector<uint32_t> word((d.width + 31) / 32 + 1, 0);
    uint32_t at[2];
    for (uint64_t i = 0; i < count; i++) {
        at[0] = static_cast<uint32_t>(first + i);
        at[1] = static_cast<uint32_t>((first + i) >> 32);
        put(a, at);
        cycle(m);
        take(d, word.data());
        std::memcpy(bytes + i * word_bytes, word.data(), word_bytes);
    }
    m->dirty = false;
}

FANNS_API int vm_mems(void* h) { return static_cast<int>(static_cast<Model*>(h)->mems.size()); }

// The hierarchical name of word array `i`'s instance (e.g. "TOP.fanns_ivfpq_bench.mem_io.ram").
FANNS_API const char* vm_mem_name(void* h, int i) { return static_cast<Model*>(h)->mems[i].name.c_str(); }

FANNS_API int vm_mem_word_bytes(void* h, int i) { return static_cast<int>(static_cast<Model*>(h)->mems[i].word_bytes); }

FANNS_API uint64_t vm_mem_depth(void* h, int i) { return static_cast<Model*>(h)->mems[i].depth; }

// Write `count` words of the array's `word_bytes` from word address `first` of word array `mem`, in
// place and without a clock cycle; all-zero words skipped when `skip_zero` (as `vm_write_words`).
// The model is settled first, so its initial blocks (the array's zeroing) ran before. Returns 0,
// or 1 when the words pass the end of the array.
FANNS_API int vm_mem_write(void* h, int mem, const uint8_t* bytes, uint64_t count, uint64_t first, int skip_zero) {
    auto* m = static_cast<Model*>(h);
    const Mem& a = m->mems[mem];
    if (first < static_cast<uint64_t>(a.low) || first - a.low > a.depth || count > a.depth - (first - a.low)) return 1;
    settle(m);
    uint8_t* dst = a.data + (first - a.low) * a.entry_bytes;
    for (uint64_t i = 0; i < count; i++, dst += a.entry_bytes) {
        const uint8_t* src = bytes + i * a.word_bytes;
        if (skip_zero && std::all_of(src, src + a.word_bytes, [](uint8_t b) { return b == 0; })) continue;
        std::memcpy(dst, src, a.word_bytes);
        std::memset(dst + a.word_bytes, 0, a.entry_bytes - a.word_bytes);
    }
    m->dirty = true;
    return 0;
}

// Read `count` words from word address `first` of word array `mem`, in place (no clock cycle).
// Returns 0, or 1 when the words pass the end of the array.
FANNS_API int vm_mem_read(void* h, int mem, uint8_t* bytes, uint64_t count, uint64_t first) {
    auto* m = static_cast<Model*>(h);
    const Mem& a = m->mems[mem];
    if (first < static_cast<uint64_t>(a.low) || first - a.low > a.depth || count > a.depth - (first - a.low)) return 1;
    settle(m);
    const uint8_t* src = a.data + (first - a.low) * a.entry_bytes;
    for (uint64_t i = 0; i < count; i++, src += a.entry_bytes) std::memcpy(bytes + i * a.word_bytes, src, a.word_bytes);
    return 0;
}
