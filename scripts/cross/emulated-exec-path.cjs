'use strict'
// Preloaded into emulated Node (scripts/cross/emulated-node.js): child processes started with process.execPath
// (vitest's forks, the tests' own children) go through the emulator's script instead of the foreign binary.
if (process.env.BULWARK_EMULATED_NODE) process.execPath = process.env.BULWARK_EMULATED_NODE
