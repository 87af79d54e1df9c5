// Windows only, run under wine by scripts/cross/win64-tests.sh (vitest cannot start there): a region's named
// objects are made for this account alone, and one that another account made first is refused with
// RegionOwnerError before it is mapped (docs/readme/trust.md, issue 32 item 2). The other account is played by
// test/fixtures/windows/named-object.c. wine runs every process as one user and checks access lists, but lets a new
// object name any owner: so "another account" is a made-up SID that owns the object, and what wine cannot show is
// a real second account's token (the release workflow's Windows runner runs the unit suite, not this script).
// Usage: node test/smoke/windows-named-objects.cjs <named-object.exe>
'use strict'
const { spawn, spawnSync } = require('child_process')
const fs = require('fs')
const os = require('os')
const path = require('path')

const root = path.join(__dirname, '..', '..')
const b = require(path.join(root, 'dist', 'cjs'))

const namespace = 'wine-owner'
const bucketOptions = (shared) => ({ rate: 0.001, burst: 10, shared, namespace, now: () => 0 })

if (process.argv[2] === 'attach') {
  // A second process attaching to the region the first made: exits with the number of tokens it could take.
  const bucket = new b.TokenBucket(bucketOptions(process.argv[3]))
  let taken = 0
  while (taken < 20 && bucket.tryAcquire()) taken++
  bucket.close()
  process.exit(taken)
}

const helper = path.resolve(process.argv[2] || path.join(root, 'build-win64-tests', 'named-object.exe'))
const scale = Number(process.env.BULWARK_TIME_SCALE) || 1
const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'bulwark-named-objects-'))
const squatters = []

function check(condition, what, seen) {
  if (!condition) throw new Error(`${what} (saw ${JSON.stringify(seen)})`)
}

async function waitFor(condition, what, timeoutMs) {
  const giveUp = Date.now() + timeoutMs * scale
  while (!condition()) {
    if (Date.now() > giveUp) throw new Error(`${what} not reached within ${timeoutMs * scale} ms`)
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

let outputs = 0
function runHelper(...args) {
  const out = path.join(scratch, `out-${outputs++}.json`)
  const result = spawnSync(helper, [...args, out], { stdio: 'ignore', windowsHide: true })
  check(result.status === 0, `named-object ${args.join(' ')} exits 0`, result.status ?? String(result.error))
  return JSON.parse(fs.readFileSync(out, 'utf8'))
}

const me = runHelper('whoami')
const objectName = (shared) => `bulwark.${me.uid}.token-bucket.${namespace}.${shared}`
const unique = (what) => `${what}-${process.pid}-${Date.now()}`

// Another account's object, made before bulwark looks, held until the end of the run.
async function squat(shared, how) {
  const ready = path.join(scratch, `ready-${outputs++}.json`)
  const child = spawn(helper, ['squat', objectName(shared), how, ready], { stdio: 'ignore', windowsHide: true })
  squatters.push(child)
  let exited = null
  child.on('exit', (code) => (exited = code))
  await waitFor(() => fs.existsSync(ready) || exited !== null, `the ${how} object made`, 10_000)
  check(exited === null, `named-object squat ${how} keeps running`, exited)
}

// What attaching to a squatted name gives: the error, which must be a RegionOwnerError naming the object.
function refusal(shared, object) {
  const started = Date.now()
  try {
    new b.TokenBucket(bucketOptions(shared)).close()
  } catch (error) {
    check(error instanceof b.RegionOwnerError, 'a RegionOwnerError', `${error.name}: ${error.message}`)
    check(error.code === 'ERR_BULWARK_REGION_OWNER', 'its code', error.code)
    check(error.file === `Local\\${object}`, 'error.file names the object', error.file)
    return { error, ms: Date.now() - started }
  }
  throw new Error(`attached to ${object}, which another account made`)
}

const checks = {
  ownObjects() {
    const shared = unique('own')
    const bucket = new b.TokenBucket(bucketOptions(shared))
    let taken = 0
    while (taken < 6 && bucket.tryAcquire()) taken++
    const seen = runHelper('inspect', objectName(shared))
    for (const part of ['section', 'lock']) {
      const object = seen[part]
      check(object.owner === me.sid, `the ${part} is owned by this account`, object)
      check(object.allow.length === 1 && object.allow[0] === me.sid, `only this account may open the ${part}`, object)
    }
    // Re-attach from another process: the owner check passes, and it shares the same 10 tokens.
    const other = spawnSync(process.execPath, [__filename, 'attach', shared], { stdio: 'ignore' })
    check(other.status === 4, 'a second process attaches and takes the 4 tokens left', other.status)
    bucket.close()
    return `owner and only entry ${me.sid} on both objects; a second process attached and took 4 of 10`
  },

  async foreignOwner() {
    const shared = unique('foreign-open')
    await squat(shared, 'foreign-open')
    const { error } = refusal(shared, objectName(shared))
    check(error.owner === 1002, 'error.owner is the other account', error.owner)
    check(error.message.includes('S-1-5-21-1-2-3-1002'), 'the message names its SID', error.message)
    return error.message
  },

  async foreignAccessList() {
    const shared = unique('foreign-closed')
    await squat(shared, 'foreign-closed')
    const { error } = refusal(shared, objectName(shared))
    check(/may not open/.test(error.message) && error.owner === -1, 'refused as not ours to open', error.message)
    return error.message
  },

  async openAccessList() {
    const shared = unique('open-dacl')
    await squat(shared, 'open-dacl')
    const { error } = refusal(shared, objectName(shared))
    check(error.message.includes('S-1-1-0'), 'the message names Everyone (S-1-1-0)', error.message)
    return error.message
  },

  async heldLock() {
    // Held by another account, the lock would make every attach wait its 2 s and fail as busy.
    const shared = unique('lock')
    await squat(shared, 'lock')
    const { error, ms } = refusal(shared, `${objectName(shared)}.lock`)
    return `${error.message} (${ms} ms)`
  },

  async otherType() {
    const shared = unique('other-type')
    await squat(shared, 'other-type')
    const { error } = refusal(shared, objectName(shared))
    check(/another kind of object/.test(error.message), 'refused as another kind of object', error.message)
    return error.message
  },
}

async function main() {
  console.log(`windows named objects: ${process.platform}-${process.arch}, Node ${process.version}, user ${me.sid}`)
  let failed = false
  for (const [name, run] of Object.entries(checks)) {
    try {
      console.log(`ok   ${name}: ${await run()}`)
    } catch (error) {
      console.log(`FAIL ${name}: ${error.stack || error}`)
      failed = true
    }
  }
  for (const child of squatters) child.kill()
  fs.rmSync(scratch, { recursive: true, force: true })
  console.log(`windows named objects: ${failed ? 'FAILED' : `all ${Object.keys(checks).length} passed`}`)
  process.exit(failed ? 1 : 0)
}

main()
