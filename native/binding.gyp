{
  "target_defaults": {
    "include_dirs": ["<!(node -p \"require('node-addon-api').include_dir\")"],
    "defines": ["NAPI_VERSION=9", "NAPI_DISABLE_CPP_EXCEPTIONS"],
    "cflags_cc": ["-std=c++17", "-O2", "-Wall", "-Wextra"]
  },
  "targets": [
    {
      "target_name": "trawl_find_avx2",
      "type": "static_library",
      "sources": ["src/find-avx2.cc"],
      "cflags_cc": ["-mavx2", "-mpopcnt", "-fPIC"]
    },
    {
      "target_name": "trawl_re2",
      "type": "static_library",
      "sources": ["<!@(node re2-vendor.cjs sources)"],
      "include_dirs": ["<!@(node re2-vendor.cjs include_dirs)"],
      "defines": ["NDEBUG", "NOMINMAX"],
      "cflags_cc": ["-O3", "-fPIC", "-pthread", "-fvisibility=hidden", "-fvisibility-inlines-hidden", "-fno-gnu-unique", "-Wno-sign-compare", "-Wno-unused-parameter", "-Wno-missing-field-initializers", "-Wno-cast-function-type", "-Wno-deprecated-declarations"]
    },
    {
      "target_name": "trawl_native",
      "sources": ["src/addon.cc", "src/response.cc", "src/mapping-guard.cc", "src/regex.cc"],
      "include_dirs": ["<!@(node re2-vendor.cjs include_dirs)"],
      "defines": ["NDEBUG"],
      "dependencies": ["trawl_find_avx2", "trawl_re2"],
      "cflags_cc": ["-fvisibility=hidden", "-fvisibility-inlines-hidden", "-fno-gnu-unique"],
      "ldflags": ["-pthread", "-Wl,--exclude-libs,ALL"]
    }
  ]
}
