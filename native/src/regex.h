// Regular expressions by RE2, matched in one native call per batch of matches
// instead of one call (and one result array) per match.
#pragma once

#include <napi.h>

namespace trawl {

// Adds compileRegex, findRegex, testRegex, regexProgramSize and freeRegex to the addon's exports.
void RegisterRegex(Napi::Env env, Napi::Object exports);

}  // namespace trawl
