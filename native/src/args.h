// Reading a native function's arguments: typed arrays and integers, with a
// TypeError that names the argument when one has the wrong type.
#pragma once

#include <napi.h>

#include <cstddef>
#include <cstdint>
#include <string>

namespace trawl {

struct TypedView {
  uint8_t* data;
  size_t length;  // in elements
};

// The elements of a typed array argument of the expected type, or nullptr data on a type error (already thrown).
// One napi_get_typedarray_info call: the Napi::TypedArray accessors make one each, and
// these functions are called thousands of times per search, so the calls add up.
inline TypedView TypedArg(const Napi::CallbackInfo& info, size_t index, napi_typedarray_type type, const char* what) {
  napi_typedarray_type actual;
  size_t length;
  void* data;
  // napi_get_typedarray_info fails (napi_invalid_arg) for a value that is not a typed array.
  if (info.Length() <= index ||
      napi_get_typedarray_info(info.Env(), info[index], &actual, &length, &data, nullptr, nullptr) != napi_ok ||
      actual != type) {
    Napi::TypeError::New(info.Env(), std::string(what) + " has the wrong type").ThrowAsJavaScriptException();
    return {nullptr, 0};
  }
  return {static_cast<uint8_t*>(data), length};  // data already points at the view's first element
}

// A numeric argument as an int64, or false (with a TypeError thrown) when it is missing or not a number.
inline bool IntegerArg(const Napi::CallbackInfo& info, size_t index, const char* what, int64_t* value) {
  if (info.Length() <= index || napi_get_value_int64(info.Env(), info[index], value) != napi_ok) {
    Napi::TypeError::New(info.Env(), std::string(what) + " must be a number").ThrowAsJavaScriptException();
    return false;
  }
  return true;
}

}  // namespace trawl
