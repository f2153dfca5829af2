{
  "target_defaults": {
    "include_dirs": ["<!(node -p \"require('node-addon-api').include_dir\")"],
    "defines": ["NAPI_VERSION=8", "NAPI_DISABLE_CPP_EXCEPTIONS"],
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
      "target_name": "trawl_native",
      "sources": ["src/addon.cc", "src/mapping-guard.cc"],
      "dependencies": ["trawl_find_avx2"]
    }
  ]
}
