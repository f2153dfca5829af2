// A search response's bulk, made by the addon: a file's chunks laid out (line
// numbers, columns, the lines around each match) and the JSON of its content,
// ranges and chunks, byte for byte what src/search/response/chunks.ts's
// objects give through JSON.stringify.
#pragma once

#include <napi.h>

namespace trawl {

// Adds layChunks, writeJsonString, writeRangesJson and writeChunksJson to the addon's exports.
void RegisterResponse(Napi::Env env, Napi::Object exports);

}  // namespace trawl
