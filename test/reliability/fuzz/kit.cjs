// Arbitraries and checks shared by the fuzz targets. Every target runs in a child process (run-target.cjs), so a
// native abort or an endless loop fails the test that spawned it instead of killing the test runner.
'use strict'
const assert = require('node:assert/strict')
const fc = require('fast-check')
// Every entry point's names in one object: the fuzz targets reach the subpaths' guards too, and the hashes the
// root no longer exports, so they load the per-file build (one copy of each module, internals included).
const dist = '../../../dist-internal'
const b = {
  ...['index', 'entries/http', 'entries/express', 'entries/fastify', 'entries/koa', 'entries/grpc', 'entries/undici']
    .concat(['entries/redis', 'entries/top', 'components/hotkeys/murmur3', 'components/subset/fnv1a32'])
    .reduce((all, entry) => Object.assign(all, require(`${dist}/${entry}`)), {}),
}

const HUGE_STRING = 'k'.repeat(1 << 20)
const HUGE_BYTES = new Uint8Array(1 << 22).fill(7)

/** Numbers that break careless code: NaN, infinities, -0, negatives, huge, tiny, fractional, integer edges. */
const weirdNumber = fc.oneof(
  fc.constantFrom(
    Number.NaN,
    Infinity,
    -Infinity,
    -0,
    0,
    -1,
    1,
    0.5,
    2 ** 31 - 1,
    2 ** 31,
    2 ** 32,
    2 ** 53,
    -(2 ** 53),
    Number.MAX_SAFE_INTEGER,
    Number.MAX_VALUE,
    Number.MIN_VALUE,
    -Number.MAX_VALUE,
    1e-300,
    1e300,
  ),
  fc.integer({ min: -1e6, max: 1e6 }),
  fc.double(),
)

/** A key: empty, ordinary, unicode (lone surrogates included), huge; or bytes, huge ones included. */
const key = fc.oneof(
  fc.constantFrom('', HUGE_STRING, '\u0000', '\ud800', 'é'.repeat(300)),
  fc.string({ maxLength: 40 }),
  fc.string({ unit: 'binary', maxLength: 40 }),
)
const bytesKey = fc.oneof(fc.uint8Array({ maxLength: 300 }), fc.constant(HUGE_BYTES), fc.constant(new Uint8Array(0)))

/** Anything at all, weighted towards the values that break validation. */
const anyValue = fc.oneof(
  weirdNumber,
  key,
  bytesKey,
  fc.constantFrom(undefined, null, true, false, Symbol('s'), 10n, -1n, [], {}, () => 1, new Date(NaN), /x/g, new Map()),
  fc.anything({ maxDepth: 2, withBigInt: true, withNullPrototype: true, withTypedArray: true, withSparseArray: true }),
)

/** anyValue without the huge strings and byte arrays: for code that is linear in an iterable's length. */
const anySmall = fc.oneof(
  weirdNumber,
  fc.string({ maxLength: 40 }),
  fc.constantFrom(undefined, null, true, false, Symbol('s'), 10n, [], {}, () => 1, new Uint8Array(3)),
  fc.anything({ maxDepth: 2, maxKeys: 4, withBigInt: true, withNullPrototype: true, withTypedArray: false }),
)

/**
 * Options for a constructor: each known field absent, valid, or any value, plus sometimes unknown keys; sometimes
 * not an object at all. `valid` maps a field to an arbitrary of its good values.
 */
function options(valid, extra = {}) {
  const fields = {}
  for (const [name, good] of Object.entries(valid))
    fields[name] = fc.oneof({ weight: 3, arbitrary: good }, { weight: 1, arbitrary: anyValue })
  const record = fc.record({ ...fields, ...extra }, { requiredKeys: [] })
  const withUnknown = fc
    .tuple(record, fc.dictionary(fc.string({ maxLength: 12 }), anyValue, { maxKeys: 3 }))
    .map(([r, u]) => {
      const out = { ...r }
      for (const [k, v] of Object.entries(u || {})) if (!(k in valid) && !(k in extra) && k !== '__proto__') out[k] = v
      return out
    })
  return fc.oneof(
    { weight: 6, arbitrary: record },
    { weight: 2, arbitrary: withUnknown },
    { weight: 1, arbitrary: anyValue },
  )
}

/** The value at a dotted / indexed path such as `queueDelay.target` or `allow[0].ttl`, or undefined. */
function valueAt(root, path) {
  let v = root
  for (const part of path.split(/\.|\[(\d+)\]/).filter((p) => p !== undefined && p !== '')) {
    if (v === null || (typeof v !== 'object' && typeof v !== 'function')) return undefined
    v = v[part]
  }
  return v
}

/**
 * The error must be a BulwarkError with a stable code and a message that renders; an InvalidOptionError must name
 * one of `fields` (or `options` itself) and, when the caller gave that field, carry the value given.
 */
function checkTypedError(error, { fields = [], argumentsNamed = [], given } = {}) {
  if (!(error instanceof b.BulwarkError)) {
    throw new Error(
      `not a typed error: ${error && error.constructor ? error.constructor.name : typeof error}: ${error && error.message}`,
    )
  }
  assert.equal(typeof error.code, 'string')
  assert.ok(error.code.startsWith('ERR_BULWARK_'), error.code)
  assert.equal(typeof error.message, 'string')
  assert.ok(error.message.length > 0 && error.message.length < 2000, 'message renders, bounded')
  assert.equal(typeof String(error), 'string')
  if (error instanceof b.InvalidOptionError) {
    const root = error.field.split(/[.[]/)[0]
    assert.ok(
      error.field === 'options' || fields.includes(root),
      `field \`${error.field}\` is not one of ${fields.join(', ')}`,
    )
    if (error.field === 'options')
      assert.ok(
        given === null || typeof given !== 'object' || Array.isArray(given) || ArrayBuffer.isView(given),
        'options blamed but was an object',
      )
    else if (given !== null && typeof given === 'object') {
      const at = valueAt(given, error.field)
      if (at !== undefined && !error.message.includes('multiple of') && !error.message.includes('fit')) {
        assert.ok(Object.is(at, error.value), `field \`${error.field}\` blamed with a value other than the one given`)
      }
    }
  } else if (error instanceof b.InvalidArgumentError) {
    const root = error.argument.split(/[.[]/)[0]
    assert.ok(
      argumentsNamed.includes(root),
      `argument \`${error.argument}\` is not one of ${argumentsNamed.join(', ')}`,
    )
  }
  return error
}

/** Calls fn: a typed error (checked) or its result. */
function typedOrValue(fn, expect) {
  try {
    return { value: fn() }
  } catch (error) {
    return { error: checkTypedError(error, expect) }
  }
}

/** Like typedOrValue for a promise-returning fn (a synchronous throw also counts). */
async function typedOrResolved(fn, expect) {
  try {
    return { value: await fn() }
  } catch (error) {
    return { error: checkTypedError(error, expect) }
  }
}

function isCount(n) {
  return typeof n === 'number' && n >= 0 && Number.isFinite(n)
}

/** Asserts fn does not throw (hot paths that promise never to throw) and returns its result. */
function neverThrows(what, fn) {
  try {
    return fn()
  } catch (error) {
    throw new Error(
      `${what} threw ${error && error.constructor ? error.constructor.name : typeof error}: ${error && error.message}`,
      { cause: error },
    )
  }
}

let unique = 0
function uniqueName(prefix) {
  return `${prefix}-${process.pid}-${++unique}`
}

module.exports = {
  b,
  fc,
  assert,
  weirdNumber,
  key,
  bytesKey,
  anyValue,
  anySmall,
  options,
  checkTypedError,
  typedOrValue,
  typedOrResolved,
  isCount,
  neverThrows,
  uniqueName,
  HUGE_STRING,
  HUGE_BYTES,
}
