#include "mapping-guard.h"

#include <atomic>
#include <csignal>
#include <mutex>
#include <vector>

#include <sys/mman.h>
#include <unistd.h>

namespace mapping_guard {
namespace {

// A slot's range is written under a sequence lock (odd while it changes), so the handler, which may
// interrupt a thread registering or releasing a mapping, never takes half of an old range and half of a new one.
struct Slot {
  std::atomic<uint32_t> sequence{0};
  std::atomic<uintptr_t> start{0};
  std::atomic<uintptr_t> end{0};

  void Set(uintptr_t newStart, uintptr_t newEnd) {
    sequence.fetch_add(1, std::memory_order_acq_rel);
    start.store(newStart, std::memory_order_release);
    end.store(newEnd, std::memory_order_release);
    sequence.fetch_add(1, std::memory_order_acq_rel);
  }

  // The slot's range as one consistent pair; false while it is being changed.
  bool Read(uintptr_t* readStart, uintptr_t* readEnd) const {
    uint32_t before = sequence.load(std::memory_order_acquire);
    if (before & 1) return false;
    *readStart = start.load(std::memory_order_acquire);
    *readEnd = end.load(std::memory_order_acquire);
    return sequence.load(std::memory_order_acquire) == before;
  }
};

Slot slots[kSlots];
uint8_t faultFlags[kSlots];
// Slots below this have been handed out at some time: the handler looks no further.
std::atomic<size_t> slotsUsed{1};
std::mutex registry;  // guards freeSlots and the hand-out of new slots (never taken by the handler)
std::vector<size_t> freeSlots;
struct sigaction previous;
std::once_flag installed;
uintptr_t pageSize;

void Forward(int signal, siginfo_t* info, void* context) {
  if (previous.sa_flags & SA_SIGINFO) {
    previous.sa_sigaction(signal, info, context);
    return;
  }
  if (previous.sa_handler == SIG_DFL || previous.sa_handler == SIG_IGN) {
    // The default action (a fault cannot be ignored): pending until this handler returns, then fatal.
    struct sigaction fallback = {};
    fallback.sa_handler = SIG_DFL;
    sigemptyset(&fallback.sa_mask);
    sigaction(SIGBUS, &fallback, nullptr);
    raise(SIGBUS);
    return;
  }
  previous.sa_handler(signal);
}

// Async-signal-safe: atomics, mmap and nothing else.
void OnSigbus(int signal, siginfo_t* info, void* context) {
  uintptr_t address = reinterpret_cast<uintptr_t>(info->si_addr);
  size_t used = slotsUsed.load(std::memory_order_acquire);
  for (size_t index = 1; index < used; index++) {
    uintptr_t start;
    uintptr_t end;
    // A slot changing under us is being registered (no fault can be in it yet) or released (no longer read).
    if (!slots[index].Read(&start, &end) || address < start || address >= end) continue;
    uintptr_t page = address & ~(pageSize - 1);
    void* zeros = mmap(reinterpret_cast<void*>(page), end - page, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
    if (zeros == MAP_FAILED) break;
    faultFlags[index] = 1;
    return;
  }
  Forward(signal, info, context);
}

}  // namespace

void Install() {
  std::call_once(installed, [] {
    pageSize = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
    struct sigaction action = {};
    action.sa_sigaction = OnSigbus;
    action.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigemptyset(&action.sa_mask);
    sigaction(SIGBUS, &action, &previous);
  });
}

size_t Guard(void* address, size_t length) {
  size_t slot;
  {
    std::lock_guard<std::mutex> lock(registry);
    if (!freeSlots.empty()) {
      slot = freeSlots.back();
      freeSlots.pop_back();
    } else {
      slot = slotsUsed.load(std::memory_order_relaxed);
      if (slot == kSlots) return 0;
      slotsUsed.store(slot + 1, std::memory_order_release);
    }
  }
  faultFlags[slot] = 0;
  uintptr_t start = reinterpret_cast<uintptr_t>(address);
  slots[slot].Set(start, start + length);
  return slot;
}

void Release(size_t slot) {
  if (slot == 0) return;
  slots[slot].Set(0, 0);
  faultFlags[slot] = 0;
  std::lock_guard<std::mutex> lock(registry);
  freeSlots.push_back(slot);
}

uint8_t* FaultFlags() { return faultFlags; }

}  // namespace mapping_guard
