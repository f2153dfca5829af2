// Guards the read-only file mappings of shards against SIGBUS.
//
// A file truncated (or unreadable) under a MAP_SHARED mapping raises SIGBUS on
// the first read of a page past its new end, which kills the process. A
// guarded mapping instead has zero pages mapped over the faulting page and
// everything after it, and its slot's fault flag set: the read continues, and
// the reader, which checks the flag after using the mapping, discards what it
// read and counts the shard as failed (docs/operations.md, "Limits and defences").
#pragma once

#include <cstddef>
#include <cstdint>

namespace mapping_guard {

// Slots 1…kSlots-1 guard mappings; slot 0 is never faulted (unguarded or empty buffers).
constexpr size_t kSlots = 65536;

// Installs the process-wide SIGBUS handler once; later calls do nothing. A
// fault outside every guarded mapping goes to the handler that was there before.
void Install();

// Guards [address, address + length); returns its slot, or 0 when every slot is taken.
size_t Guard(void* address, size_t length);

// Stops guarding `slot` and clears its flag; before its mapping is unmapped, whose range may then be reused.
void Release(size_t slot);

// One byte per slot, 1 once a read of that slot's mapping faulted.
uint8_t* FaultFlags();

}  // namespace mapping_guard
