{
  "variables": {
    "bulwark_test_natives%": 0
  },
  "targets": [
    {
      "target_name": "bulwark",
      "sources": ["<!@(node scripts/native-sources.js --platform <(OS))"],
      "include_dirs": ["<!(node -p \"require('node-addon-api').include_dir\")", "native"],
      "defines": ["NAPI_VERSION=8", "NAPI_DISABLE_CPP_EXCEPTIONS", "NODE_ADDON_API_DISABLE_DEPRECATED"],
      "cflags!": ["-fno-exceptions"],
      "cflags_cc!": ["-fno-exceptions", "-std=gnu++17"],
      "cflags_cc": ["-std=c++17", "-fno-exceptions", "-Wall", "-Wextra", "-Wno-unused-parameter"],
      "cflags": ["-O3", "-fvisibility=hidden"],
      "libraries": ["-lpthread"],
      "conditions": [
        ["bulwark_test_natives==1", {
          "sources": ["<!@(node scripts/native-sources.js --test-natives)"],
          "defines": ["BULWARK_TEST_NATIVES"]
        }],
        ["OS=='linux'", { "libraries": ["-lrt"] }],
        ["OS=='mac'", {
          "xcode_settings": {
            "CLANG_CXX_LANGUAGE_STANDARD": "c++17",
            "GCC_ENABLE_CPP_EXCEPTIONS": "NO",
            "GCC_SYMBOLS_PRIVATE_EXTERN": "YES",
            "MACOSX_DEPLOYMENT_TARGET": "11.0"
          }
        }]
      ]
    }
  ]
}
