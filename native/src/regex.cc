// compileRegex(source, caseSensitive) -> handle, findRegex(handle, haystack,
// from, out[, to]) -> count and freeRegex(handle): the matches node-re2's exec loop finds (the same RE2, the
// same Match call: the text before `from`, and after `to`, is context for ^, $ and \b), written as
// [start, end] byte pairs, without a JavaScript call or an array per match;
// testRegex(handle, haystack) -> whether it matches at all, as RegExp's test;
// regexProgramSize(handle) -> its program's instructions.
// `source` is RE2 syntax (src/query/re2-syntax.ts translates a JavaScript-style
// pattern to it, as node-re2 does), which carries the flags as (?m) and the like.
// A pattern RE2 refuses, or one naming two groups alike (node-re2 refuses those
// too), throws a SyntaxError whose message is RE2's, as node-re2's does.
//
// A handle's RE2 is freed by freeRegex, or else when the handle is collected:
// Node runs that finalizer on a later turn of the event loop, which a busy
// worker thread reaches too rarely to keep up with a search per request.

#include "regex.h"

#include <re2/re2.h>

#include <cstdint>
#include <set>
#include <string>

#include "args.h"

namespace trawl {
namespace {

struct RegexHandle {
  re2::RE2* regex;  // nullptr once freed
};

void DeleteHandle(Napi::Env /*env*/, RegexHandle* handle) {
  delete handle->regex;
  delete handle;
}

// The handle argument, or nullptr (with a TypeError thrown).
RegexHandle* HandleArg(const Napi::CallbackInfo& info, const char* message) {
  if (info.Length() < 1 || !info[0].IsExternal()) {
    Napi::TypeError::New(info.Env(), message).ThrowAsJavaScriptException();
    return nullptr;
  }
  return info[0].As<Napi::External<RegexHandle>>().Data();
}

// The RE2 of the handle argument of function `name`, or nullptr (with an error thrown) when it is not one or was freed.
const re2::RE2* LiveRegexArg(const Napi::CallbackInfo& info, const std::string& name) {
  RegexHandle* handle = HandleArg(info, (name + ": regex must come from compileRegex").c_str());
  if (handle == nullptr) return nullptr;
  if (handle->regex == nullptr) Napi::Error::New(info.Env(), name + ": the regex was freed").ThrowAsJavaScriptException();
  return handle->regex;
}

bool HasDuplicateGroupName(const re2::RE2& regex) {
  std::set<std::string> names;
  for (const auto& [index, name] : regex.CapturingGroupNames()) {
    if (!names.insert(name).second) return true;
  }
  return false;
}

Napi::Value CompileRegex(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 2 || !info[0].IsString() || !info[1].IsBoolean()) {
    Napi::TypeError::New(env, "compileRegex: (source: string, caseSensitive: boolean)").ThrowAsJavaScriptException();
    return env.Undefined();
  }
  re2::RE2::Options options;
  options.set_case_sensitive(info[1].As<Napi::Boolean>().Value());
  options.set_log_errors(false);
  auto* regex = new re2::RE2(info[0].As<Napi::String>().Utf8Value(), options);
  const char* refusal = !regex->ok() ? regex->error().c_str() : HasDuplicateGroupName(*regex) ? "duplicate capture group name" : nullptr;
  if (refusal != nullptr) {
    Napi::SyntaxError error = Napi::SyntaxError::New(env, refusal);
    delete regex;
    error.ThrowAsJavaScriptException();
    return env.Undefined();
  }
  return Napi::External<RegexHandle>::New(env, new RegexHandle{regex}, DeleteHandle);
}

Napi::Value FreeRegex(const Napi::CallbackInfo& info) {
  RegexHandle* handle = HandleArg(info, "freeRegex: regex must come from compileRegex");
  if (handle != nullptr) {
    delete handle->regex;
    handle->regex = nullptr;
  }
  return info.Env().Undefined();
}

// Past the UTF-8 sequence starting at `at`: where the search resumes after an empty match.
size_t NextCharacter(const uint8_t* text, size_t length, size_t at) {
  size_t next = at + 1;
  while (next < length && (text[next] & 0xc0) == 0x80) next++;
  return next;
}

Napi::Value FindRegex(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const re2::RE2* regex = LiveRegexArg(info, "findRegex");
  if (regex == nullptr) return env.Undefined();
  TypedView haystack = TypedArg(info, 1, napi_uint8_array, "findRegex: haystack (Uint8Array)");
  if (env.IsExceptionPending()) return env.Undefined();
  int64_t from;
  if (!IntegerArg(info, 2, "findRegex: from", &from)) return env.Undefined();
  TypedView outView = TypedArg(info, 3, napi_uint32_array, "findRegex: out (Uint32Array)");
  if (env.IsExceptionPending()) return env.Undefined();
  int64_t to = static_cast<int64_t>(haystack.length);
  if (info.Length() > 4 && !info[4].IsUndefined() && !IntegerArg(info, 4, "findRegex: to", &to)) return env.Undefined();
  if (haystack.length > 0xffffffffu || from < 0 || from > to || static_cast<uint64_t>(to) > haystack.length) {
    Napi::RangeError::New(env, "findRegex: from ≤ to must be within the haystack (at most 4 GiB)").ThrowAsJavaScriptException();
    return env.Undefined();
  }
  const size_t endpos = static_cast<size_t>(to);
  uint32_t* out = reinterpret_cast<uint32_t*>(outView.data);
  const size_t pairs = outView.length / 2;
  const re2::StringPiece text(reinterpret_cast<const char*>(haystack.data), haystack.length);
  size_t count = 0;
  size_t at = static_cast<size_t>(from);
  re2::StringPiece match;
  while (count < pairs && at <= endpos && regex->Match(text, at, endpos, re2::RE2::UNANCHORED, &match, 1)) {
    const size_t start = static_cast<size_t>(match.data() - text.data());
    const size_t end = start + match.size();
    if (end == start) {
      // An empty match marks no text: resume at the next character, not inside a UTF-8 sequence.
      at = NextCharacter(haystack.data, endpos, start);
      continue;
    }
    out[2 * count] = static_cast<uint32_t>(start);
    out[2 * count + 1] = static_cast<uint32_t>(end);
    count++;
    at = end;
  }
  return Napi::Number::New(env, static_cast<double>(count));
}

// Whether the regex matches anywhere in the haystack, an empty match included (RE2::PartialMatch).
Napi::Value TestRegex(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const re2::RE2* regex = LiveRegexArg(info, "testRegex");
  if (regex == nullptr) return env.Undefined();
  TypedView haystack = TypedArg(info, 1, napi_uint8_array, "testRegex: haystack (Uint8Array)");
  if (env.IsExceptionPending()) return env.Undefined();
  const re2::StringPiece text(reinterpret_cast<const char*>(haystack.data), haystack.length);
  return Napi::Boolean::New(env, regex->Match(text, 0, haystack.length, re2::RE2::UNANCHORED, nullptr, 0));
}

// How many instructions the regex's program has (RE2::ProgramSize): what compiling it cost, roughly.
Napi::Value RegexProgramSize(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const re2::RE2* regex = LiveRegexArg(info, "regexProgramSize");
  if (regex == nullptr) return env.Undefined();
  return Napi::Number::New(env, regex->ProgramSize());
}

}  // namespace

void RegisterRegex(Napi::Env env, Napi::Object exports) {
  exports.Set("compileRegex", Napi::Function::New(env, CompileRegex, "compileRegex"));
  exports.Set("findRegex", Napi::Function::New(env, FindRegex, "findRegex"));
  exports.Set("testRegex", Napi::Function::New(env, TestRegex, "testRegex"));
  exports.Set("regexProgramSize", Napi::Function::New(env, RegexProgramSize, "regexProgramSize"));
  exports.Set("freeRegex", Napi::Function::New(env, FreeRegex, "freeRegex"));
}

}  // namespace trawl
